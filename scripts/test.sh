#!/usr/bin/env bash
# Run the tests: unit (the engine, in-process), integration (real ansible-playbook
# against the installed collection), cloud (the same against a real OpenStack, which
# scripts/cloud.sh test starts first).  `make test` installs first.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
what=${1:-all}

# Unit tests import the collection from the source tree through this link.
mkdir -p .build/collections/ansible_collections/hotplay
ln -sfn "$root" .build/collections/ansible_collections/hotplay/stacks
export PYTHONPATH="$root/.build/collections${PYTHONPATH:+:$PYTHONPATH}"
export HOTPLAY_REPO="$root"
export PATH="$root/.venv/bin:$PATH"
# Every ansible-playbook the tests start keeps the collection's compiled modules there
# (tests/startup/hotplay_bytecode_cache.py: ansible-core's collection loader keeps none).
export HOTPLAY_TEST_BYTECODE_CACHE="$root/.build/bytecode-cache"

# HOTPLAY_RESULTS (scripts/test_all.sh sets it): each phase's JUnit file goes there,
# for the summary at the end of `make test`.
junit=()
[[ -z ${HOTPLAY_RESULTS:-} ]] || junit=("--junitxml=$HOTPLAY_RESULTS/$what.xml")

workers=${PYTEST_WORKERS:-2}
case "$what" in
  unit) paths=(tests/unit) ;;
  integration) paths=(tests/integration) ;;
  engine) paths=(tests/unit tests/integration) ;;
  all) paths=(tests/unit tests/integration tests/differential) ;;
  # The short differential tests, beside the cloud's in `make test` (one worker: they
  # wait on the Heat engine most of their time).
  compare) paths=(tests/differential) workers=${PYTEST_WORKERS:-1} ;;
  # One worker: one real Heat engine for the session (tests/heat/conftest.py).
  heat) exec .venv/bin/python -m pytest -q -rs -p no:warnings -n 0 "${junit[@]}" tests/heat ;;
  # Two tests side by side (CLOUD_WORKERS=0: one process): the whole-cloud readers run
  # alone, the users of the Heat engine on the cloud in one worker (tests/cloud/conftest.py;
  # tests/xdist_order.py fails a test whose group pytest-xdist ignored).
  cloud) exec .venv/bin/python -m pytest -q -rs -p no:warnings -p xdist_order -n "${CLOUD_WORKERS:-2}" \
           --dist loadgroup "${junit[@]}" tests/cloud ;;
  differential) exec .venv/bin/python tests/differential/run.py \
                  --cases "${HOTPLAY_DIFFERENTIAL_CASES:-2000}" "${@:2}" ;;
  bench) .venv/bin/python benchmarks/bench.py "${@:2}"
         exec .venv/bin/python benchmarks/bench_modules.py ;;
  *) echo "usage: $0 [unit|integration|engine|all|heat|compare|cloud|bench|differential]" >&2; exit 2 ;;
esac
# Python's dev mode (-X dev, as PYTHONDEVMODE so that the xdist workers and every
# ansible-playbook a test starts have it too): with pytest.ini, a DeprecationWarning
# raised by the engine's own modules (forking a multi-threaded process) fails the
# test, and so does anything an Ansible worker writes behind Ansible's back
# (tests/integration/conftest.py); with tests/leak_check.py, so does a resource the
# test leaked (a ResourceWarning: an unclosed file, pipe, socket or connection).
# Each worker takes the next test as it finishes one, the slow ones first, a module
# marked xdist_group whole (tests/xdist_order.py).  PYTHONMALLOC=default: dev mode
# without its debug hooks on the memory allocators (they check C extensions' buffers,
# which no test here is about, and cost a tenth of every Python's CPU).
PYTHONDEVMODE=1 PYTHONMALLOC=default exec .venv/bin/python -X dev -m pytest -q -rs -p leak_check -p xdist_order \
  -n "$workers" --dist loadgroup "${junit[@]}" "${paths[@]}"
