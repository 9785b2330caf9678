#!/bin/sh
# Build the one-folder Linux bundle dist/popview/ (and dist/popview-<version>-linux-x86_64.tar.gz).
# Needs the packaging extra: python -m pip install -e '.[packaging]'
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
$PYTHON -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/popview.spec
version=$($PYTHON -c "import popview; print(popview.__version__)")
tar -C dist -czf "dist/popview-$version-linux-x86_64.tar.gz" popview
du -sh dist/popview "dist/popview-$version-linux-x86_64.tar.gz"
