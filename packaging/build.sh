#!/usr/bin/env bash
# Build a distributable one-folder app in dist/rhetorica/ with PyInstaller.
# Run from the repository root after `make setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/pip install --quiet "pyinstaller==6.22.3"
.venv/bin/pyinstaller --noconfirm --clean packaging/rhetorica.spec
echo "Built dist/rhetorica/ (run dist/rhetorica/rhetorica)."
echo "Desktop entry: install packaging/rhetorica.desktop into ~/.local/share/applications/"
echo "and resources/icons/rhetorica.svg as the 'rhetorica' icon."
