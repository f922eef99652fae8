#!/usr/bin/env bash
# Install the Rhetorica desktop entry and icon for the current user (no root needed).
#   packaging/install-desktop-entry.sh [APP]      APP: the built executable (default dist/rhetorica/rhetorica)
# Also shipped inside the app as dist/rhetorica/_internal/install-desktop-entry.sh (APP found beside it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ -f "$here/resources/icons/rhetorica.svg" ]; then      # inside the built app (_internal/)
  app="${1:-$here/../rhetorica}"; icon="$here/resources/icons/rhetorica.svg"; entry="$here/rhetorica.desktop"
else                                                        # from the repository
  app="${1:-$here/../dist/rhetorica/rhetorica}"; icon="$here/../resources/icons/rhetorica.svg"; entry="$here/rhetorica.desktop"
fi
app="$(cd "$(dirname "$app")" && pwd)/$(basename "$app")"
[ -x "$app" ] || { echo "no executable at $app (run 'make package' first)" >&2; exit 1; }
data="${XDG_DATA_HOME:-$HOME/.local/share}"
mkdir -p "$data/applications" "$data/icons/hicolor/scalable/apps"
cp "$icon" "$data/icons/hicolor/scalable/apps/rhetorica.svg"
sed "s|^Exec=rhetorica |Exec=\"$app\" |" "$entry" > "$data/applications/rhetorica.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database "$data/applications" || true
echo "Installed $data/applications/rhetorica.desktop (Exec=$app)"
