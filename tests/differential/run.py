# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The differential tester: generated cases through hotplay and through the real Heat.

    .venv/bin/python tests/differential/run.py --cases 2000 [--seed N] [--playbook-every 40]
        [--report .build/differential/report.jsonl] [--endpoint URL]

Without ``--endpoint`` it starts the Heat peer (``../shared/peer/heat`` or
``$HOTPLAY_HEAT_PEER``) with its own state and port, and stops it at the end.  Every
case runs in-process through the engine; every ``--playbook-every``-th case also
through real ``ansible-playbook`` and the installed collection (``make install``).
It prints the figures (cases, cases/hour, verdicts, divergences by field) and writes
each divergent case, with both sides' observations, to the report.  Exit status 1
when a divergence is not one of docs/heat-differences.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from compare import differences, documented_keys, verdict  # noqa: E402
from cases import generate  # noqa: E402
from clean_stop import stop_cleanly_on_signals  # noqa: E402
from heat_peer import HeatPeer, peer_folder, peer_venv  # noqa: E402
from reading import references  # noqa: E402
from sides import HeatSide, HotplaySide, run_playbook  # noqa: E402

REPO = HERE.parents[1]


def run_cases(cases: list[dict[str, Any]], endpoint: str, playbook_every: int = 0,
              workers: int = 3, progress: bool = False) -> list[dict[str, Any]]:
    """Each case's outcome: its verdict, the differences and both sides' observations."""
    keys = documented_keys()
    hotplay, heat = HotplaySide(), HeatSide(endpoint)
    scratch = Path(tempfile.mkdtemp(prefix="hotplay-differential-play-"))
    outcomes = []
    with ThreadPoolExecutor(workers) as pool:
        # Heat works on a few cases at once while the engine runs them here.
        theirs = [pool.submit(heat.run, case) for case in cases]
        for index, (case, future) in enumerate(zip(cases, theirs)):
            mine = first = hotplay.run(case)
            reference = future.result()
            found, diffs = verdict(case, mine, reference, keys)
            if found == "diverged":
                found, diffs, mine = recheck_order(hotplay, case, mine, reference, keys, (found, diffs))
            outcome = {"index": index, "verdict": found, "differences": diffs, "case": case,
                       "hotplay": mine, "heat": reference, "side": "engine"}
            outcomes.append(outcome)
            if progress and (index + 1) % 100 == 0:
                print(f"{index + 1} cases, {sum(o['verdict'] == 'diverged' for o in outcomes)} "
                      "divergent", file=sys.stderr, flush=True)
            if playbook_every and index % playbook_every == 0:
                played = run_playbook(case, scratch / str(index), REPO / ".venv" / "bin",
                                      REPO / ".build" / "installed")
                found, diffs = verdict(case, played, reference, keys)
                if found == "diverged" and outcome["verdict"] != "diverged" and not differences(played, first):
                    # What the engine answered in-process, and the same verdict (its
                    # resource-order recheck ran there).
                    found = outcome["verdict"]
                outcomes.append(dict(outcome, verdict=found, differences=diffs, hotplay=played,
                                     side="ansible-playbook"))
    return outcomes


def recheck_order(hotplay: HotplaySide, case: dict[str, Any], mine: list[dict[str, Any]],
                  reference: list[dict[str, Any]], keys: frozenset[str],
                  first: tuple[str, list[Any]]) -> tuple[str, list[Any], list[dict[str, Any]]]:
    """Both refused, each naming another problem: Heat validates independent
    resources, then outputs, in the order of a Python set (stack_defn's
    enabled_rsrc_names and enabled_output_names: random per Heat process), hotplay
    in template order.  Put first the resource Heat named (after what it needs), or,
    when its error names none, each resource and each output in turn, and ask hotplay
    again: the same error then is no divergence."""
    index = len(reference) - 1
    if index < 0 or "resource-order" not in keys or len(mine) != len(reference) or not all(
            s["verdict"] == "refused" for s in (mine[index], reference[index])):
        return first[0], first[1], mine
    step = case if index == 0 else case["update"]
    for section, front in _fronts(step["template"], reference[index]["error"]):
        reordered = copy.deepcopy(case)
        target = reordered if index == 0 else reordered["update"]
        entries = step["template"][section]
        target["template"][section] = {**{n: entries[n] for n in front}, **{
            n: e for n, e in entries.items() if n not in front}}
        again = hotplay.run(reordered)
        found, diffs = verdict(reordered, again, reference, keys)
        if found == "same":
            return "documented:resource-order", first[1], again
        if found.startswith("documented:"):  # in that order, a documented difference
            return found, first[1], again
    return first[0], first[1], mine


def _fronts(template: dict[str, Any], error: str) -> list[tuple[str, list[str]]]:
    """The orders to try: (section, names to put first)."""
    if not isinstance(template, dict):
        return []
    resources, outputs = template.get("resources"), template.get("outputs")
    resources = resources if isinstance(resources, dict) else {}
    outputs = outputs if isinstance(outputs, dict) else {}
    # Heat names the resource in the place ("resources.r1.properties") or, for a
    # reference to a resource that does not exist, in brackets ("(in r1)"; "(in
    # r3.Properties.x)": the resource is the first part).  A reference from an
    # output is "(in unknown)": no resource to put first.
    blamed = re.search(r"resources\.([^.: \[<]+)|\(in ([^)\s]+)\) is incorrect", error)
    name = (blamed.group(1) or blamed.group(2)).split(".")[0] if blamed else None
    named = [name] if name in resources else list(resources)
    fronts = []
    conditions = template.get("conditions")
    for place, each in enumerate(named):
        if place or each == name:  # the first one is first already
            fronts.append(("resources", [each]))
        if needed := needed_by(resources, each, conditions):
            fronts.append(("resources", [*needed, each]))
    if name not in resources and len(outputs) > 1:
        fronts += [("outputs", [output]) for output in list(outputs)[1:]]
    return fronts


def needed_by(resources: dict[str, Any], name: str, conditions: Any = None) -> list[str]:
    """The resources ``name`` needs (depends_on, get_resource, get_attr), at any
    depth, each after what it needs itself."""
    found: list[str] = []

    def visit(current: str, path: tuple[str, ...]) -> None:
        for needed in references(resources.get(current), conditions):
            if needed in resources and needed not in found and needed not in path and needed != name:
                visit(needed, path + (needed,))
                found.append(needed)

    visit(name, (name,))
    return found


def summary(outcomes: list[dict[str, Any]], seconds: float) -> str:
    engine = [o for o in outcomes if o["side"] == "engine"]
    played = [o for o in outcomes if o["side"] == "ansible-playbook"]
    verdicts = Counter(o["verdict"] for o in outcomes)
    fields = Counter(o["differences"][0][0] for o in outcomes if o["verdict"] == "diverged")
    mutations = Counter(str(o["case"]["mutation"]) for o in outcomes if o["verdict"] == "diverged")
    lines = [
        f"cases: {len(engine)} (also through ansible-playbook: {len(played)}) in {seconds:.0f} s: "
        f"{len(engine) * 3600 / max(seconds, 1e-9):.0f} cases/hour",
        "verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())),
    ]
    if fields:
        lines.append("divergences by first field: " + ", ".join(f"{k} {v}" for k, v in fields.most_common()))
        lines.append("divergences by update: " + ", ".join(f"{k} {v}" for k, v in mutations.most_common()))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--playbook-every", type=int, default=40)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--report", default=str(REPO / ".build" / "differential" / "report.jsonl"))
    parser.add_argument("--endpoint", help="a running Heat's API (default: start the peer)")
    args = parser.parse_args()
    stop_cleanly_on_signals()  # the Heat peer and its MariaDB stop with the tester
    peer = None
    if not args.endpoint:
        folder, venv = peer_folder(), peer_venv()
        if folder is None or venv is None:
            print("no Heat peer: put the team's shared/ folder beside the clone (or set "
                  "HOTPLAY_HEAT_PEER) and run scripts/heat_peer.sh install", file=sys.stderr)
            return 2
        peer = HeatPeer.start(folder, venv)
    try:
        endpoint = args.endpoint or peer.endpoint  # type: ignore[union-attr]
        started = time.monotonic()
        cases = generate(args.cases, args.seed)
        print(f"{len(cases)} cases drawn in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        outcomes = run_cases(cases, endpoint, args.playbook_every, args.workers, progress=True)
        seconds = time.monotonic() - started
    finally:
        if peer is not None:
            peer.stop()
    report = Path(args.report)
    report.parent.mkdir(parents=True, exist_ok=True)
    with report.open("w") as out:
        for outcome in outcomes:
            if not outcome["verdict"].startswith("same"):
                out.write(json.dumps(outcome, default=str) + "\n")
    print(f"seed {args.seed}")
    print(summary(outcomes, seconds))
    print(f"report: {report}")
    return 1 if any(o["verdict"] == "diverged" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
