#!/usr/bin/env bash
# The full stress campaign of module resources: RUNS runs (default 50, the last one
# deleting) of a stack of 100 Hotplay::Ansible::Module resources on localhost and two
# SSH test hosts (network namespaces: run as root), yaql arguments and allowed_pattern
# parameters, with CPU hogs beside it, on SQLite and PostgreSQL.  Prints a line per
# run and the totals: failed runs, runs with thread/fork warnings, inconsistent stores.
#   bash scripts/stress_campaign.sh [RUNS] [extra stress_campaign.py arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
make install test-deps > /dev/null
mkdir -p .build/collections/ansible_collections/hotplay
ln -sfn "$PWD" .build/collections/ansible_collections/hotplay/stacks
export HOTPLAY_REPO=$PWD PYTHONPATH="$PWD/.build/collections"
exec .venv/bin/python tests/integration/stress_campaign.py --runs "${1:-50}" "${@:2}"
