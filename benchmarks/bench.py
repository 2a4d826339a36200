#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print the engine's speed on the shapes Heat was measured with.

Runs the engine in-process on a real SQLite store file (no Ansible start-up in the
figures), each scenario in a fresh process so its peak memory is its own.
Shapes: ``wide`` = N independent TestResources, ``chain`` = each depending on the
one before, ``wait`` = 50 wide with ``wait_secs: 1``, ``group`` = one
OS::Heat::ResourceGroup of N TestResource members (a nested stack); ``update``
changes the value of every resource (in place); ``preview`` is check mode on a
wide template against a stack created from the same template with other values.
Wide, chain and preview run at each of ``--sizes`` (default 1,000 and 10,000: what
``make bench`` runs in a few minutes; ``--sizes 1000,10000,50000`` adds the large
case, minutes more), and how each time grows per 10x more resources is printed
(10x is linear, 100x quadratic; a 5x step is scaled to 10x).
``throughput`` is applies per second of small stacks (5 TestResources each, every
apply a new stack) on SQLite and on PostgreSQL (a throwaway server, as the tests start
it: tests/postgres_server.py): one process after the other, then N processes
at once on distinct stacks.
Usage: make bench  (or: PYTHONPATH=.build/collections .venv/bin/python benchmarks/bench.py)
       benchmarks/bench.py --only throughput --throughput-n 40 --parallel 4
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from postgres_server import throwaway_postgres  # noqa: E402 pylint: disable=wrong-import-position

SMALL_STACK = 5  # resources per stack in the throughput scenario

# Measured with the real Heat engine on this kind of machine (../shared/peer/heat/RESULTS.md).
HEAT_SECONDS = {
    "chain-1000 create": 239.0,
    "chain-1000 delete": 213.0,
    "chain-500 update": 247.0,
}


def template(shape: str, count: int, value: str) -> dict:
    if shape == "group":
        member = {"type": "OS::Heat::TestResource", "properties": {"value": f"{value}%index%"}}
        group = {"type": "OS::Heat::ResourceGroup", "properties": {"count": count, "resource_def": member}}
        return {"heat_template_version": "2021-04-16", "resources": {"group": group}}
    resources = {}
    for index in range(count):
        properties: dict = {"value": f"{value}{index}"}
        if shape == "wait":
            properties["wait_secs"] = 1
        entry: dict = {"type": "OS::Heat::TestResource", "properties": properties}
        if shape == "chain" and index:
            entry["depends_on"] = [f"r{index - 1}"]
        resources[f"r{index}"] = entry
    return {"heat_template_version": "2021-04-16", "resources": resources}


def _write(folder: Path, shape: str, count: int, value: str) -> str:
    path = folder / f"{shape}-{count}-{value}.yaml"
    path.write_text(yaml.safe_dump(template(shape, count, value)))
    return str(path)


def _timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def scenario(shape: str, count: int) -> dict[str, object]:
    """One scenario in this process: create, update every resource, delete."""
    folder = Path(tempfile.mkdtemp())
    store = SqliteStore(str(folder / "bench.db"))
    name = f"bench-{shape}-{count}"
    v1, v2 = _write(folder, shape, count, "v"), _write(folder, shape, count, "w")
    row: dict[str, object] = {"case": f"{shape}-{count}"}
    row["create_s"], created = _timed(lambda: apply_stack(store, ApplyRequest(name=name, template=v1), "bench"))
    row["update_s"], updated = _timed(lambda: apply_stack(store, ApplyRequest(name=name, template=v2), "bench"))
    row["delete_s"], deleted = _timed(lambda: delete_stack(store, DeleteRequest(name), "bench"))
    row["status"] = "/".join(r.stack.stack_status for r in (created, updated, deleted))
    row["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    store.close()
    return row


def preview_scenario(count: int) -> dict[str, object]:
    """Check mode on ``count`` resources: the plan of changing every one of them."""
    folder = Path(tempfile.mkdtemp())
    store = SqliteStore(str(folder / "bench.db"))
    v1, v2 = _write(folder, "wide", count, "v"), _write(folder, "wide", count, "w")
    apply_stack(store, ApplyRequest(name="big", template=v1), "bench")
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    request = ApplyRequest(name="big", template=v2, check_mode=True)
    seconds, result = _timed(lambda: apply_stack(store, request, "bench"))
    updated = len(result.plan.by_action()["updated"])
    # Memory the preview itself allocates, measured on a second (untimed) run.
    tracemalloc.start()
    apply_stack(store, request, "bench")
    preview_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    store.close()
    return {"case": f"preview-{count}", "preview_s": seconds, "updated": updated,
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "peak_before_preview_mib": baseline, "preview_alloc_peak_mib": preview_peak}


def throughput_child(url: str, prefix: str, count: int, start_at: float) -> dict[str, object]:
    """Apply ``count`` new small stacks one after the other, from ``start_at`` on
    (every process starts together, its imports done); the loop's own times."""
    folder = Path(tempfile.mkdtemp())
    path = _write(folder, "wide", SMALL_STACK, prefix)
    store = open_store(url)
    time.sleep(max(0.0, start_at - time.time()))
    started = time.time()
    statuses = {apply_stack(store, ApplyRequest(name=f"{prefix}-{index}", template=path), "bench").stack.stack_status
                for index in range(count)}
    finished = time.time()
    store.close()
    return {"started": started, "finished": finished, "applies": count, "statuses": sorted(statuses)}


def _throughput(url: str, label: str, count: int, parallel: int) -> list[dict[str, object]]:
    """Sequential, then ``parallel`` processes at once (distinct stacks)."""
    rows = []
    for processes in (1, parallel):
        start_at = time.time() + 2 + processes  # time enough for every child to import
        children = [subprocess.Popen([sys.executable, __file__, "--child", "throughput", url,
                                      f"{label}-p{processes}-{index}", str(count), str(start_at)],
                                     stdout=subprocess.PIPE, text=True, env=os.environ)
                    for index in range(processes)]
        reports = [json.loads(child.communicate()[0]) for child in children]
        if any(child.returncode for child in children):
            raise SystemExit(f"a throughput run on {label} failed")
        wall = max(r["finished"] for r in reports) - min(r["started"] for r in reports)
        applies = sum(r["applies"] for r in reports)
        statuses = sorted({s for r in reports for s in r["statuses"]})
        rows.append({"store": label, "processes": processes, "applies": applies, "seconds": wall,
                     "per_second": applies / wall, "statuses": "/".join(statuses)})
    return rows


def throughput(count: int, parallel: int) -> None:
    folder = Path(tempfile.mkdtemp())
    rows = _throughput(f"sqlite:///{folder}/bench.db", "sqlite", count, parallel)
    with throwaway_postgres() as url:
        rows += _throughput(url, "postgresql", count, parallel)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"apply throughput, new stacks of {SMALL_STACK} resources (engine in-process, no Ansible start-up;"
          f" {os.cpu_count()} cores, load average {load}):")
    print(f"{'store':<11} {'processes':>9} {'applies':>8} {'seconds':>8} {'applies/s':>10}  status")
    for row in rows:
        print(f"{row['store']:<11} {row['processes']:>9} {row['applies']:>8} {row['seconds']:>8.2f}"
              f" {row['per_second']:>10.1f}  {row['statuses']}")


def _in_child(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                          text=True, env=os.environ, check=True)
    return json.loads(done.stdout)


def _sizes(text: str) -> list[int]:
    sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError(f"sizes are positive numbers, comma-separated: {text!r}")
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=_sizes, default=[1000, 10000],
                        help="resources in the wide, chain and preview stacks, comma-separated"
                             " (default 1000,10000; add 50000 for the large case)")
    parser.add_argument("--group-n", type=int, default=5000, help="members of the ResourceGroup")
    parser.add_argument("--throughput-n", type=int, default=30, help="applies per process (throughput)")
    parser.add_argument("--parallel", type=int, default=4, help="processes at once (throughput)")
    parser.add_argument("--only", choices=["shapes", "throughput"], help="one part of the benchmark")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "throughput":
            row = throughput_child(rest[0], rest[1], int(rest[2]), float(rest[3]))
        else:
            row = preview_scenario(int(rest[0])) if kind == "preview" else scenario(kind, int(rest[0]))
        print(json.dumps(row))
        return
    if args.only != "throughput":
        shapes(args)
    if args.only != "shapes":
        throughput(args.throughput_n, args.parallel)


def shapes(args: argparse.Namespace) -> None:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"engine in-process on SQLite ({os.cpu_count()} cores, load average {load} at the start):")
    cases = [(shape, n) for shape in ("wide", "chain") for n in args.sizes]
    cases += [("group", args.group_n), ("wait", 50)]
    rows = {f"{shape}-{n}": _in_child(shape, str(n)) for shape, n in cases}
    print(f"{'case':<12} {'create s':>9} {'update s':>9} {'delete s':>9} {'peak MiB':>9}  status")
    for row in rows.values():
        print(f"{row['case']:<12} {row['create_s']:>9.3f} {row['update_s']:>9.3f} {row['delete_s']:>9.3f}"
              f" {row['peak_mib']:>9.1f}  {row['status']}")
    previews = {f"preview-{n}": _in_child("preview", str(n)) for n in args.sizes}
    for preview in previews.values():
        print(f"preview of {preview['updated']} updated resources: {preview['preview_s']:.3f} s; "
              f"the preview allocates at most {preview['preview_alloc_peak_mib']:.1f} MiB; peak RSS of "
              f"the process {preview['peak_mib']:.1f} MiB ({preview['peak_before_preview_mib']:.1f} MiB "
              "after creating the stack, before the preview)")
    _print_growth(args.sizes, {**rows, **previews})
    chain = rows.get("chain-1000")
    if chain is not None:
        print(f"vs Heat on this machine: chain-1000 create {HEAT_SECONDS['chain-1000 create'] / chain['create_s']:.0f}x, "
              f"delete {HEAT_SECONDS['chain-1000 delete'] / chain['delete_s']:.0f}x faster; "
              f"Heat updated a 500-chain in {HEAT_SECONDS['chain-500 update']:.0f} s, "
              f"we update the 1000-chain in {chain['update_s']:.2f} s")


def _print_growth(sizes: list[int], rows: dict[str, dict]) -> None:
    """How each time grows from one size to the next, scaled to a 10x step."""
    print("growth of the time per 10x more resources (10x: linear; 100x: quadratic):")
    for small, large in zip(sizes, sizes[1:]):
        steps = math.log(10) / math.log(large / small)
        for shape, keys in (("wide", ("create_s", "update_s", "delete_s")),
                            ("chain", ("create_s", "update_s", "delete_s")), ("preview", ("preview_s",))):
            before, after = rows[f"{shape}-{small}"], rows[f"{shape}-{large}"]
            ratios = ", ".join(f"{key[:-2]} {(after[key] / before[key]) ** steps:.1f}x" for key in keys)
            print(f"  {shape} {small} -> {large}: {ratios}")


if __name__ == "__main__":
    main()
