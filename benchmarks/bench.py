#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print the engine's speed on the shapes Heat was measured with.

Runs the engine in-process on a real SQLite store file (no Ansible start-up in the
figures).  Shapes: ``wide`` = N independent TestResources, ``chain`` = each
depending on the one before, ``wait`` = wide with ``wait_secs: 1``.
Usage: make bench  (or: PYTHONPATH=.build/collections .venv/bin/python benchmarks/bench.py)
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.engine import (
    ApplyRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

# Measured with the real Heat engine on this kind of machine (../shared/peer/heat/RESULTS.md).
HEAT_SECONDS = {("chain", 1000, "create"): 239.0, ("chain", 1000, "delete"): 213.0}


def template(shape: str, count: int) -> dict:
    resources = {}
    for index in range(count):
        properties: dict = {"value": f"v{index}"}
        if shape == "wait":
            properties["wait_secs"] = 1
        entry: dict = {"type": "OS::Heat::TestResource", "properties": properties}
        if shape == "chain" and index:
            entry["depends_on"] = [f"r{index - 1}"]
        resources[f"r{index}"] = entry
    return {"heat_template_version": "2021-04-16", "resources": resources}


def measure(store: SqliteStore, folder: Path, shape: str, count: int) -> dict[str, float | str]:
    path = folder / f"{shape}-{count}.yaml"
    path.write_text(yaml.safe_dump(template(shape, count)))
    name = f"bench-{shape}-{count}"
    started = time.perf_counter()
    created = apply_stack(store, ApplyRequest(name=name, template=str(path)), "bench")
    create_s = time.perf_counter() - started
    started = time.perf_counter()
    deleted = delete_stack(store, name, "bench")
    delete_s = time.perf_counter() - started
    return {
        "shape": shape, "n": count, "create_s": create_s, "delete_s": delete_s,
        "status": f"{created.stack.stack_status}/{deleted.stack.stack_status}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000, help="resources in the wide and chain stacks")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = SqliteStore(str(folder / "bench.db"))
        for shape, count in (("wide", args.n), ("chain", args.n), ("wait", 50)):
            rows.append(measure(store, folder, shape, count))
        store.close()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'shape':<6} {'N':>5} {'create s':>9} {'delete s':>9}  status        vs Heat (create/delete)")
    for row in rows:
        heat_c = HEAT_SECONDS.get((row["shape"], row["n"], "create"))
        heat_d = HEAT_SECONDS.get((row["shape"], row["n"], "delete"))
        ratio = (f"{heat_c / row['create_s']:.0f}x / {heat_d / row['delete_s']:.0f}x faster"
                 if heat_c and heat_d else "")
        print(f"{row['shape']:<6} {row['n']:>5} {row['create_s']:>9.3f} {row['delete_s']:>9.3f}"
              f"  {row['status']:<13} {ratio}")
    print(f"peak memory (max RSS of the whole run): {peak_mib:.1f} MiB")


if __name__ == "__main__":
    main()
