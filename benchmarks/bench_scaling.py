#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print how long an OS::Heat::AutoScalingGroup of N ``OS::Heat::None`` members takes
to be made, scaled to 2N by a signal to its policy, and back to N (issue 41): the
engine in-process on a SQLite store file, no Ansible, so the figures are the
engine's own.  Each size runs ``--runs`` times; the median is printed with the CPU
seconds of the process, and the seconds per member, which stay level when the time
is linear in the group's size.  Usage:
    PYTHONPATH=.build/collections .venv/bin/python benchmarks/bench_scaling.py [--sizes 250 500 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import SignalRequest, signal_resource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store


def template(size: int) -> dict[str, Any]:
    policy = {"type": "OS::Heat::ScalingPolicy", "properties": {
        "auto_scaling_group_id": {"get_resource": "group"}, "adjustment_type": "exact_capacity",
        "scaling_adjustment": 0}}
    return {"heat_template_version": "2018-08-31", "resources": {
        "group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
            "min_size": 1, "max_size": 2 * size, "desired_capacity": size,
            "resource": {"type": "OS::Heat::None"}}},
        "out": {**policy, "properties": {**policy["properties"], "scaling_adjustment": 2 * size}},
        "back": {**policy, "properties": {**policy["properties"], "scaling_adjustment": size}}}}


def timed(step: Callable[[], dict[str, Any]]) -> tuple[float, float]:
    """Wall and CPU seconds of one step, which must succeed."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = step()
    assert not result.get("failed") and result.get("changed"), result.get("msg")
    return time.perf_counter() - wall, time.process_time() - cpu


def one_run(size: int, folder: Path) -> dict[str, tuple[float, float]]:
    path = folder / f"group-{size}.yaml"
    path.write_text(yaml.safe_dump(template(size)))
    url = f"sqlite:///{folder / f'store-{size}-{time.monotonic_ns()}.db'}"
    store = open_store(url)
    try:
        return {
            "create": timed(lambda: apply_stack(store, ApplyRequest(name="g", template=str(path)),
                                                "bench").as_dict()),
            "out": timed(lambda: signal_resource(store, SignalRequest("g", "out", holder="bench"))),
            "back": timed(lambda: signal_resource(store, SignalRequest("g", "back", holder="bench"))),
        }
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; median of {args.runs} runs; wall s / CPU s "
          "(ms of wall per member)")
    print(f"{'members':>8} {'create N':>20} {'scale N->2N':>20} {'scale 2N->N':>20}")
    with tempfile.TemporaryDirectory() as scratch:
        for size in args.sizes:
            runs = [one_run(size, Path(scratch)) for _run in range(args.runs)]
            cells = []
            for step, members in (("create", size), ("out", size), ("back", size)):
                wall = statistics.median(run[step][0] for run in runs)
                cpu = statistics.median(run[step][1] for run in runs)
                cells.append(f"{wall:6.1f} / {cpu:5.1f} ({1000 * wall / members:4.1f})")
            print(f"{size:>8} " + " ".join(f"{cell:>20}" for cell in cells))


if __name__ == "__main__":
    main()
