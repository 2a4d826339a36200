#!/usr/bin/env bash
# `make test`: every test, its slow set-ups overlapped with the tests that do not need
# them, and at the end one line per phase (tests, seconds) and the totals.
#
#   1. the machine's packages (apt-get: the tests', the test cloud's; one at a time,
#      so that no two apt-get runs meet at dpkg's lock)
#   2. the project's venv and the collection, built and installed (make install)
#   3. three chains side by side: on a 2-core machine each takes the cores the others
#      leave (the cloud's tests wait on its services, the Heat engine's on Heat, much of
#      their time; run one after another, the cloud's left a fifth of the machine idle)
#        engine      the unit and integration tests, in the foreground
#        cloud-up    the test cloud's venv, then the cloud started (scripts/cloud.sh up),
#        cloud       then the real-OpenStack tests, then the cloud stopped
#        heat-peer   the real Heat engine's venv (scripts/heat_peer.sh install),
#        heat        then the tests against the real Heat engine,
#        compare     then the short differential tests (hotplay.stacks and the Heat
#                    engine on the same cases)
#      the two in the background each into a log of its own in .build/test-results/,
#      shown after the engine's tests
#
# Every phase runs even when one before it failed (the cloud is stopped in any case);
# the exit status is non-zero when any phase failed.  The summary is read from the
# phases' JUnit files (scripts/test_summary.py), so it counts what pytest ran.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
results=$root/.build/test-results
rm -rf "$results" && mkdir -p "$results"
export HOTPLAY_RESULTS=$results
began=$(date +%s.%N)

# The machine's CPU time so far, busy and all (jiffies, every core): the summary tells
# how busy the machine was during each phase.
cpu_times() {
  local _cpu user nice system idle iowait irq softirq steal
  read -r _cpu user nice system idle iowait irq softirq steal _ < /proc/stat
  echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}

# phase NAME COMMAND...: runs it, appends "NAME START END STATUS CPU..." to phases.tsv.
phase() {
  local name=$1 start status cpu
  shift
  start=$(date +%s.%N)
  cpu=$(cpu_times)
  "$@"
  status=$?
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$start" "$(date +%s.%N)" "$status" "$cpu" "$(cpu_times)" \
    >> "$results/phases.tsv"
  return "$status"
}

failed=0
stop_cloud() { bash scripts/cloud.sh stop > /dev/null 2>&1 || true; }
trap stop_cloud EXIT

phase packages bash -c 'bash scripts/test_deps.sh && bash scripts/cloud.sh packages' || failed=1
phase install make --no-print-directory install || failed=1

# The real-OpenStack tests, after the cloud is up (its start-up's line first, for the
# log), then the cloud stopped.
cloud_chain() {
  local status
  if ! phase cloud-up bash scripts/cloud.sh up > "$results/cloud-up.log" 2>&1; then
    echo "test: cloud-up failed; the end of $results/cloud-up.log:"
    tail -n 40 "$results/cloud-up.log"
    return 1
  fi
  grep -h '^cloud up' "$results/cloud-up.log"
  export HOTPLAY_CLOUD_DIR=${HOTPLAY_CLOUD_DIR:-$root/.build/cloud}
  export HOTPLAY_OPENSTACK_COLLECTIONS=$root/.build/openstack-collections
  phase cloud bash scripts/test.sh cloud
  status=$?
  stop_cloud
  # Where the cloud's share of the machine went: each service's CPU, from its start.
  if [[ -f $HOTPLAY_CLOUD_DIR/cpu-by-service.txt ]]; then
    echo "the test cloud's services, CPU from their start to their stop:"
    cat "$HOTPLAY_CLOUD_DIR/cpu-by-service.txt"
  fi
  return "$status"
}

# The tests against the real Heat engine, then the short differential tests (both
# against the Heat engine of heat_peer.sh), after its venv is made.
peer_chain() {
  if ! phase heat-peer bash scripts/heat_peer.sh install > "$results/heat-peer.log" 2>&1; then
    echo "test: heat-peer failed; the end of $results/heat-peer.log:"
    tail -n 40 "$results/heat-peer.log"
    return 1
  fi
  local status=0
  phase heat bash scripts/test.sh heat || status=1
  phase compare bash scripts/test.sh compare || status=1
  return "$status"
}

# The three run side by side (each takes the cores the others leave: the cloud's tests
# wait on its services, the Heat engine's on Heat, much of their time), the engine's in
# the foreground, the other two into their logs, shown once they are done.
cloud_chain > "$results/cloud.log" 2>&1 &
cloud=$!
peer_chain > "$results/heat.log" 2>&1 &
peer=$!
phase engine bash scripts/test.sh engine || failed=1
wait "$cloud" || failed=1
printf '\n=== %s\n' "the real-OpenStack tests (they ran beside the engine's)"
cat "$results/cloud.log"
wait "$peer" || failed=1
printf '\n=== %s\n' "the Heat engine's tests and the differential tests (they ran beside the engine's)"
cat "$results/heat.log"

.venv/bin/python scripts/test_summary.py "$results" "$began" | tee "$results/summary.txt"
((PIPESTATUS[0] == 0)) || failed=1
exit "$failed"
