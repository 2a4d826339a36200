#!/usr/bin/env bash
# Make the project's virtual environment (.venv) with a Python >= 3.12 and install
# requirements-dev.txt into it.  `make venv` (and so `make demo` and `make test`) runs this.
# Debian's Python makes virtual environments only with its python3-venv package: as root
# it is installed when missing; otherwise the command to run is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(bash scripts/find_python.sh "${1:-python3.12}")
if ! "$python" -c 'import ensurepip, venv' 2> /dev/null; then
  version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  packages=(python3-venv "python$version-venv")
  if [[ $(id -u) != 0 ]] || ! command -v apt-get > /dev/null; then
    echo "venv: $python cannot make virtual environments; as root run: apt-get install ${packages[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  install=(apt-get install -y -qq --no-install-recommends --no-upgrade "${packages[@]}")
  "${install[@]}" > /dev/null 2>&1 || { apt-get update -qq && "${install[@]}"; }
fi
"$python" -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -r requirements-dev.txt
# For the tests' speed only: tests/startup/hotplay_bytecode_cache.py, a bytecode cache for
# ansible-core's collection loader, imported at every start of the venv's Python and
# active only where scripts/test.sh sets HOTPLAY_TEST_BYTECODE_CACHE.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
printf '%s\nimport hotplay_bytecode_cache\n' "$PWD/tests/startup" > "$site/hotplay_tests.pth"
touch .venv/bin/.installed
