#!/usr/bin/env bash
# Build a distributable one-folder app in dist/rhetorica/ with PyInstaller (`make package`).
# Run from the repository root after `make setup`.  Takes a few minutes (see packaging/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
PYINSTALLER_VERSION="6.22.3"
if ! "$VENV/bin/python" -c "import PyInstaller, sys; sys.exit(PyInstaller.__version__ != '$PYINSTALLER_VERSION')" 2>/dev/null; then
  "$VENV/bin/pip" install --quiet "pyinstaller==$PYINSTALLER_VERSION"
fi
start=$(date +%s)
"$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/rhetorica.spec
echo "Built dist/rhetorica/ in $(( $(date +%s) - start )) s, $(du -sh dist/rhetorica | cut -f1)" \
     "(run dist/rhetorica/rhetorica; no virtualenv needed)."
echo "Desktop entry: see packaging/README.md (install-desktop-entry)."
