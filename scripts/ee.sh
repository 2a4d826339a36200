#!/usr/bin/env bash
# The AWX/AAP execution environment: its build context, or the image.
#
#   scripts/ee.sh                          build context in .build/ee (no container engine needed)
#   scripts/ee.sh build -t hotplay-ee:0.1  the image too (needs podman or docker)
#
# HOTPLAY_EE_CONTEXT names another build context directory.
# Builds the collection's tarball into .build/dist (what the EE installs), then runs
# ansible-builder (requirements-dev.txt) on extensions/awx/execution-environment.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
command=${1:-create}
[[ $# -gt 0 ]] && shift

rm -rf .build/dist
ansible-galaxy collection build --force --output-path .build/dist . > /dev/null
exec ansible-builder "$command" --file extensions/awx/execution-environment.yml \
    --context "${HOTPLAY_EE_CONTEXT:-.build/ee}" "$@"
