# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The summary at the end of `make test` (scripts/test_all.sh): one line per phase, with
when it started, how long it took, how busy the machine was meanwhile and, for a phase
of tests, what pytest counted in its JUnit file; then the totals as one line.

    python scripts/test_summary.py RESULTS_DIR STARTED_EPOCH

RESULTS_DIR holds phases.tsv (one line a phase: name, start, end, exit status, the
machine's busy and total CPU jiffies at the start, the same at the end) and a JUnit
file per test phase.  Exits non-zero when a phase failed or a test phase has no file."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

# The test phases and the JUnit file scripts/test.sh writes for each.
JUNIT_FILES = {"engine": "engine.xml", "heat": "heat.xml", "compare": "compare.xml", "cloud": "cloud.xml"}
# The set-up phases that log to a file of their own (scripts/test_all.sh).
SETUP_LOGS = {"cloud-up": "cloud-up.log", "heat-peer": "heat-peer.log"}
# How much of a failure the summary repeats: CI keeps only the end of a run's output.
LOG_TAIL_LINES = 15
MESSAGE_CHARS = 300


@dataclass(frozen=True)
class Counts:
    tests: int
    failed: int
    skipped: int

    @property
    def passed(self) -> int:
        return self.tests - self.failed - self.skipped


@dataclass(frozen=True)
class Phase:
    name: str
    start: float
    end: float
    status: int
    busy: float  # the share of every core's time the machine was busy, 0 to 1
    counts: Counts | None


def read_counts(junit: Path) -> Counts | None:
    if not junit.is_file():
        return None
    root = ElementTree.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")

    def total(key: str) -> int:
        return sum(int(suite.get(key, 0)) for suite in suites)

    return Counts(total("tests"), total("failures") + total("errors"), total("skipped"))


def read_phases(results: Path) -> list[Phase]:
    phases = []
    for line in (results / "phases.tsv").read_text(encoding="utf-8").splitlines():
        name, start, end, status, cpu_before, cpu_after = line.split("\t")
        busy_before, all_before = (int(n) for n in cpu_before.split())
        busy_after, all_after = (int(n) for n in cpu_after.split())
        busy = (busy_after - busy_before) / max(all_after - all_before, 1)
        junit = JUNIT_FILES.get(name)
        counts = read_counts(results / junit) if junit else None
        phases.append(Phase(name, float(start), float(end), int(status), busy, counts))
    return sorted(phases, key=lambda phase: phase.start)


def phase_line(phase: Phase, began: float) -> str:
    counts = phase.counts
    tests = (f"{counts.tests:6d} {counts.passed:7d} {counts.failed:6d} {counts.skipped:7d}"
             if counts else f"{'-':>6} {'-':>7} {'-':>6} {'-':>7}")
    outcome = "ok" if phase.status == 0 else f"FAILED (exit {phase.status})"
    return (f"{phase.name:<10} {phase.start - began:7.0f} {phase.end - phase.start:8.0f} "
            f"{phase.busy * 100:5.0f}% {tests}  {outcome}")


def failed_tests(junit: Path) -> list[str]:
    """Each failed or erroring test of a JUnit file, with its message's first line."""
    if not junit.is_file():
        return []
    lines = []
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        for problem in (*case.findall("failure"), *case.findall("error")):
            message = (problem.get("message") or "").strip().splitlines() or [""]
            lines.append(f"  {case.get('classname')}::{case.get('name')}: {message[0][:MESSAGE_CHARS]}")
    return lines


def why_failed(phase: Phase, results: Path) -> list[str]:
    """What a failed phase left to read: its failed tests, or its log's last lines."""
    if phase.name in JUNIT_FILES:
        tests = failed_tests(results / JUNIT_FILES[phase.name])
        if tests:
            return [f"{phase.name}: failed tests", *tests]
    log = results / SETUP_LOGS.get(phase.name, f"{phase.name}.log")
    if log.is_file():
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_TAIL_LINES:]
        return [f"{phase.name}: the end of {log}", *(f"  {line}" for line in tail)]
    return [f"{phase.name}: exit {phase.status}, no log of its own (see the output above)"]


def main(results: Path, began: float) -> int:
    phases = read_phases(results)
    print("\n=== make test: the phases (background ones overlap the rest)")
    print(f"{'phase':<10} {'start s':>7} {'seconds':>8} {'busy':>6} {'tests':>6} {'passed':>7} "
          f"{'failed':>6} {'skipped':>7}")
    for phase in phases:
        print(phase_line(phase, began))
    ended = max((phase.end for phase in phases), default=began)
    counted = [phase.counts for phase in phases if phase.counts]
    missing = [name for name in JUNIT_FILES
               if not any(phase.name == name and phase.counts for phase in phases)]
    print(f"{'all':<10} {0:7.0f} {ended - began:8.0f}")
    if missing:
        print(f"test: no results from the phase(s) {', '.join(missing)}")
    failed_phases = [phase.name for phase in phases if phase.status != 0]
    for phase in phases:
        if phase.status != 0:
            print("\n".join(why_failed(phase, results)))
    # The plain closing line CI reads: "N passed, N failed, N skipped".
    print(f"total: {sum(c.passed for c in counted)} passed, "
          f"{sum(c.failed for c in counted)} failed, {sum(c.skipped for c in counted)} skipped")
    return 1 if failed_phases or missing else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), float(sys.argv[2])))
