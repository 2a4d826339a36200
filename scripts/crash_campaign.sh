#!/usr/bin/env bash
# The full crash campaign: SIGKILL ansible-playbook at random moments of create,
# update, delete and rollback runs, take over killed and frozen runs, kill the Ansible
# worker alone while modules run (worker), apply under a job of schema version 2
# (oldschema), TRIALS times each (default 50), and check the store and the files after
# each kill and after recovery (`--operations worker,oldschema`: only those).  Prints a
# line per trial (with its seed: `--only OP:SEED` replays one) and the totals.
#   bash scripts/crash_campaign.sh [TRIALS] [extra crash_campaign.py arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
make install > /dev/null
mkdir -p .build/collections/ansible_collections/hotplay
ln -sfn "$PWD" .build/collections/ansible_collections/hotplay/stacks
export HOTPLAY_REPO=$PWD PYTHONPATH="$PWD/.build/collections"
exec .venv/bin/python tests/integration/crash_campaign.py --trials "${1:-50}" "${@:2}"
