#!/usr/bin/env bash
# A new user's first minutes, checked for real: build a minimal Debian 12 root
# (debootstrap --variant=minbase bookworm), copy this repository into it, run
# the README's command 1 there verbatim as root (in a chroot: no display, no
# Python, PyPI through pip's normal index), and check that the demo window
# painted: the picture popview writes when POPVIEW_SCREENSHOT is set must hold
# many colours. Then run `popview --version` in the venv the README names.
#
#   sudo tests/fresh_machine/run.sh [WORKDIR]      (default /var/tmp/popview-fresh)
#
# Needs root, network (deb.debian.org, pypi.org) and about 2 GB; takes
# 5-15 minutes (the minimal root is built once and kept in WORKDIR/base).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/var/tmp/popview-fresh}
base=$work/base
root=$work/root
mkdir -p "$work"

if [ ! -x "$base/usr/bin/apt-get" ]; then
    command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
    rm -rf "$base.tmp"
    debootstrap --variant=minbase bookworm "$base.tmp" http://deb.debian.org/debian
    mv "$base.tmp" "$base"
fi

cleanup() {
    for m in dev/pts dev proc sys; do umount -l "$root/$m" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup
rm -rf "$root"
cp -a "$base" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# This machine's network, not the new user's: a TLS-inspecting egress proxy signs with local CAs.
# Trusted inside the root as on the host (update-ca-certificates picks them up when command 1
# installs ca-certificates); pip is pointed at the system bundle, as on the host.
net_env=()
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    net_env=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
fi
mkdir -p "$root/root/popview"
git -C "$repo" archive HEAD | tar -x -C "$root/root/popview"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

# Command 1 as the README writes it: the first code block under "## Two commands".
command1=$(awk '/^## Two commands/{s=1} s&&/^ *```/{n++; next} s&&n==1{print; exit}' "$repo/README.md" | sed 's/^ *//')
echo "README command 1: $command1"
shot=/root/popview-window.png
start=$(date +%s)
set +e
timeout 1800 chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    "${net_env[@]}" POPVIEW_SCREENSHOT=$shot /bin/bash -c "cd /root/popview && $command1" </dev/null 2>&1 | tee "$work/command1.log"
status=${PIPESTATUS[0]}
set -e
echo "command 1 exited with $status after $(( $(date +%s) - start )) s"
[ "$status" -eq 0 ] || { echo "FAIL: command 1 failed"; exit 1; }
[ -s "$root$shot" ] || { echo "FAIL: no picture of the window at $root$shot"; exit 1; }
cp "$root$shot" "$work/popview-window.png"
venv=$(grep -o '[^ ]*/bin/popview' <<<"$command1" | head -1)
chroot "$root" /usr/bin/env -i HOME=/root /bin/bash -c "${venv:-popview} --version"
# The colours of the picture, counted by the Python of the chroot's venv (numpy is there).
chroot "$root" /usr/bin/env -i HOME=/root QT_QPA_PLATFORM=offscreen POPVIEW_SHOT="$shot" /bin/bash -c \
    "$(dirname "${venv:-/usr/bin/python3}")/python -" <<'PY'
import os, sys
import numpy as np
from PySide6.QtGui import QImage
img = QImage(os.environ["POPVIEW_SHOT"]).convertToFormat(QImage.Format.Format_RGB32)
a = np.frombuffer(img.constBits(), np.uint32, img.sizeInBytes() // 4)
colours = len(np.unique(a))
print(f"window picture {img.width()}x{img.height()}, {colours} colours")
sys.exit(0 if colours >= 64 and img.width() >= 600 else 1)
PY
echo "PASS: README command 1 works on a minimal Debian 12; the window painted ($work/popview-window.png)"
