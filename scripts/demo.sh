#!/usr/bin/env bash
# Run the demo playbook against the collection installed by `make install`.
set -euo pipefail
cd "$(dirname "$0")/.."
export ANSIBLE_COLLECTIONS_PATH="$PWD/.build/installed"
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false
exec .venv/bin/ansible-playbook -i localhost, -c local hotplay.stacks.demo "$@"
