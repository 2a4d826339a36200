#!/usr/bin/env bash
# Print the path of a Python >= 3.12 interpreter (the one asked for first).
set -euo pipefail
for candidate in "${1:-python3.12}" python3.12 python3.13 python3 \
    /root/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12; do
  path=$(command -v "$candidate" 2>/dev/null) || continue
  if "$path" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    echo "$path"; exit 0
  fi
done
echo "no Python >= 3.12 found: install python3.12" >&2
exit 1
