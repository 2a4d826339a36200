#!/usr/bin/env bash
# The full bad-input run (`make fuzz`): every case of the bad-input corpus with its
# time and memory, then property-based fuzzing with many examples per property.
# The unit tests run both in a reduced form; this is the long run.
#
#   HOTPLAY_FUZZ_EXAMPLES  examples per fuzzed property (default 5000)
#   PYTEST_WORKERS         pytest-xdist workers for the fuzzing (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

mkdir -p .build/collections/ansible_collections/hotplay
ln -sfn "$root" .build/collections/ansible_collections/hotplay/stacks
export PYTHONPATH="$root/.build/collections"

echo "== the bad-input corpus (tests/corpus/bad_input)"
.venv/bin/python tests/corpus/bad_input_corpus.py

examples=${HOTPLAY_FUZZ_EXAMPLES:-5000}
echo "== fuzzing: $examples examples per property"
HOTPLAY_FUZZ_EXAMPLES=$examples exec .venv/bin/python -m pytest -q -n "${PYTEST_WORKERS:-2}" \
  tests/unit/plugins/plugin_utils/test_fuzz_templates.py
