#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print the engine's speed on the shapes Heat was measured with.

Runs the engine in-process on a real SQLite store file (no Ansible start-up in the
figures), each scenario in a fresh process so its peak memory is its own.
Shapes: ``wide`` = N independent TestResources, ``chain`` = each depending on the
one before, ``wait`` = 50 wide with ``wait_secs: 1``; ``update`` changes the value
of every resource (in place); ``preview`` is check mode on a 10,000-resource
template against a stack created from the same template with other values.
Usage: make bench  (or: PYTHONPATH=.build/collections .venv/bin/python benchmarks/bench.py)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

# Measured with the real Heat engine on this kind of machine (../shared/peer/heat/RESULTS.md).
HEAT_SECONDS = {
    "chain-1000 create": 239.0,
    "chain-1000 delete": 213.0,
    "chain-500 update": 247.0,
}


def template(shape: str, count: int, value: str) -> dict:
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


def _in_child(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                          text=True, env=os.environ, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="resources in the wide and chain stacks")
    parser.add_argument("--preview-n", type=int, default=10000)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        row = preview_scenario(int(rest[0])) if kind == "preview" else scenario(kind, int(rest[0]))
        print(json.dumps(row))
        return
    rows = [_in_child(shape, str(n)) for shape, n in (("wide", args.n), ("chain", args.n), ("wait", 50))]
    print(f"{'case':<11} {'create s':>9} {'update s':>9} {'delete s':>9} {'peak MiB':>9}  status")
    for row in rows:
        print(f"{row['case']:<11} {row['create_s']:>9.3f} {row['update_s']:>9.3f} {row['delete_s']:>9.3f}"
              f" {row['peak_mib']:>9.1f}  {row['status']}")
    chain = next(r for r in rows if r["case"] == f"chain-{args.n}")
    if args.n == 1000:
        print(f"vs Heat on this machine: chain-1000 create {HEAT_SECONDS['chain-1000 create'] / chain['create_s']:.0f}x, "
              f"delete {HEAT_SECONDS['chain-1000 delete'] / chain['delete_s']:.0f}x faster; "
              f"Heat updated a 500-chain in {HEAT_SECONDS['chain-500 update']:.0f} s, "
              f"we update the 1000-chain in {chain['update_s']:.2f} s")
    preview = _in_child("preview", str(args.preview_n))
    print(f"preview of {preview['updated']} updated resources: {preview['preview_s']:.3f} s; "
          f"the preview allocates at most {preview['preview_alloc_peak_mib']:.1f} MiB; peak RSS of "
          f"the process {preview['peak_mib']:.1f} MiB ({preview['peak_before_preview_mib']:.1f} MiB "
          "after creating the stack, before the preview)")


if __name__ == "__main__":
    main()
