#!/usr/bin/env bash
# `make test`: every test, its slow set-ups overlapped with the tests that do not need
# them, and at the end one line per phase (tests, seconds) and the totals.
#
#   1. the machine's packages (apt-get: the tests', the test cloud's; one at a time,
#      so that no two apt-get runs meet at dpkg's lock)
#   2. in the background, each in a log of its own in .build/test-results/:
#        heat-peer   the real Heat engine's venv (scripts/heat_peer.sh install)
#        cloud-up    the test cloud's venv, then the cloud started (scripts/cloud.sh up)
#   3. the project's venv and the collection, built and installed (make install)
#   4. engine: the unit and integration tests
#   5. in the background, after heat-peer: heat, the tests against the real Heat engine,
#      then compare, the short differential tests (hotplay.stacks and the Heat engine on
#      the same cases): both wait on Heat most of their time, and the engine phase no
#      longer waits for the Heat engine's venv
#   6. cloud: the real-OpenStack tests (after cloud-up), then the cloud stopped; then
#      the heat and compare phases' output
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

# background NAME COMMAND...: the same, in the background, its output in NAME.log;
# its process id in $started (not echoed: a job started in $(...) is not this shell's).
background() {
  local name=$1
  shift
  phase "$name" "$@" > "$results/$name.log" 2>&1 &
  started=$!
}

# join NAME PID: waits for a background phase; on failure shows its log's end.
join() {
  local name=$1 pid=$2
  if ! wait "$pid"; then
    echo "test: $name failed; the end of $results/$name.log:" >&2
    tail -n 40 "$results/$name.log" >&2
    return 1
  fi
}

failed=0
stop_cloud() { bash scripts/cloud.sh stop > /dev/null 2>&1 || true; }
trap stop_cloud EXIT

phase packages bash -c 'bash scripts/test_deps.sh && bash scripts/cloud.sh packages' || failed=1
background heat-peer bash scripts/heat_peer.sh install
heat_peer=$started
background cloud-up bash scripts/cloud.sh up
cloud_up=$started
phase install make --no-print-directory install || failed=1

phase engine bash scripts/test.sh engine || failed=1
# The tests of the Heat engine wait on Heat most of their time: beside the cloud's, one
# phase after the other (each starts a Heat of its own).
join heat-peer "$heat_peer" || failed=1  # long done by now: a minute or two
peer_phases() {
  local status=0
  phase heat bash scripts/test.sh heat || status=1
  phase compare bash scripts/test.sh compare || status=1
  return "$status"
}
peer_phases > "$results/heat.log" 2>&1 &
heat=$!
if join cloud-up "$cloud_up"; then
  grep -h '^cloud up' "$results/cloud-up.log"
  export HOTPLAY_CLOUD_DIR=${HOTPLAY_CLOUD_DIR:-$root/.build/cloud}
  export HOTPLAY_OPENSTACK_COLLECTIONS=$root/.build/openstack-collections
  phase cloud bash scripts/test.sh cloud || failed=1
else
  failed=1
fi
stop_cloud
join heat "$heat" || failed=1
printf '\n=== %s\n' "the Heat engine's tests and the differential tests (they ran beside the cloud's)"
cat "$results/heat.log"

.venv/bin/python scripts/test_summary.py "$results" "$began" | tee "$results/summary.txt"
((PIPESTATUS[0] == 0)) || failed=1
exit "$failed"
