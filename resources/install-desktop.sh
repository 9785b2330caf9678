#!/bin/sh
# Register popview with the desktop for the current user: menu entry, icon,
# and the file types .prv, .prv.gz, .otf2, .cubex and .popview.
# Run from anywhere after `pip install popview` (or with the bundle's
# folder on PATH). Needs xdg-utils (xdg-mime, xdg-desktop-menu, xdg-icon-resource).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
icon="$here/../popview/resources/icons/popview.svg"
[ -f "$icon" ] || icon="$here/icons/popview.svg"
xdg-mime install --novendor "$here/popview-mime.xml"
xdg-desktop-menu install --novendor "$here/popview.desktop"
mkdir -p "${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/scalable/apps"
cp "$icon" "${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/scalable/apps/popview.svg"
for t in application/x-paraver-trace application/x-otf2-anchor application/x-cube-profile application/x-popview-session; do
    xdg-mime default popview.desktop "$t"
done
echo "popview registered: menu entry, icon and file types"
