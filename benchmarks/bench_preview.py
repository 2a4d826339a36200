#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print how long a check-mode ``hotplay.stacks.stack`` task of N resources takes
through a real ``ansible-playbook``, and how much memory it needs (issue 30 item 5).

A stack of N independent TestResources is created in-process (the engine on a
SQLite store file), then a template that changes every one of them is previewed:
a playbook of one ``hotplay.stacks.stack`` task run with ``--check``.  The same
playbook with an ``ansible.builtin.debug`` task instead is run too (the two
alternate, so both see the same load): ``stack - debug`` is the task's own cost,
Ansible's start-up left out.  ``engine s`` is the preview in-process, no Ansible.
``eng MiB`` is the peak RSS of
the process that ran the engine (the stack created, then the previews).  Figures
per run: wall seconds, CPU seconds (ansible-playbook and every process it waited
for: on a loaded machine the steadier figure), and peak RSS (the largest of those
processes, sampled from /proc too: the worker that runs the action).  The median
of ``--runs`` is printed, with the load average: a wall time measured under load
says little about a quiet machine.  A first run of each playbook is not counted:
it writes Python's bytecode cache, as the first run on a user's machine does.  Usage:
    PYTHONPATH=.build/collections .venv/bin/python benchmarks/bench_preview.py [--sizes 10000 50000] [--runs 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
INSTALLED = REPO / ".build" / "installed"


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float
    peak_mib: float


def write_template(folder: Path, count: int, value: str) -> Path:
    resources = {f"r{i}": {"type": "OS::Heat::TestResource", "properties": {"value": f"{value}{i}"}}
                 for i in range(count)}
    path = folder / f"wide-{count}-{value}.yaml"
    path.write_text(yaml.safe_dump({"heat_template_version": "2021-04-16", "resources": resources}))
    return path


def write_playbook(folder: Path, task: dict[str, object], kind: str) -> Path:
    path = folder / f"{kind}.yml"
    path.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [task]}],
                                   sort_keys=False))
    return path


def run_playbook(playbook: Path) -> Run:
    """One ``ansible-playbook --check``: its wall time, and from wait4 the CPU time
    and peak RSS of it and every process it waited for (its workers)."""
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), "ANSIBLE_LOCALHOST_WARNING": "false",
           "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false"}
    env.pop("PYTHONPATH", None)
    # Python caches compiled modules as it does on a user's machine (the first run
    # of each size, not counted, writes the cache).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryFile() as output:
        started = time.perf_counter()
        process = subprocess.Popen([str(BIN / "ansible-playbook"), "--check", "-i", "localhost,", "-c", "local",
                                    str(playbook)], cwd=playbook.parent, env=env, stdout=output,
                                   stderr=subprocess.STDOUT)
        sampled = _sample_peak(process.pid)
        _pid, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            output.seek(0)
            sys.exit(f"{playbook.name} failed (rc {process.returncode}):\n{output.read().decode()[-3000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, max(usage.ru_maxrss, sampled()) / 1024)


def _sample_peak(root: int) -> Callable[[], int]:
    """Sample the peak RSS (VmHWM, KiB) of ``root``'s descendants every 0.1 s while it
    runs: a worker that ansible-playbook does not wait for is missing from wait4's
    figure.  Returns the function that stops sampling and says the largest seen."""
    largest = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            for pid in _descendants(root):
                largest[0] = max(largest[0], _peak_kib(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    def stop() -> int:
        done.set()
        sampler.join()
        return largest[0]

    return stop


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending += children.get(pid, [])
    return found


def _peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def engine_previews(folder: Path, count: int, runs: int) -> tuple[list[tuple[float, float, int]], float]:
    """Create the stack of ``count`` resources, then preview the change of every one
    of them ``runs`` times, in this process: per preview its wall and CPU seconds
    and the resources it would update; and this process's peak RSS (MiB)."""
    first, second = write_template(folder, count, "v"), write_template(folder, count, "w")
    store = SqliteStore(str(folder / "store.db"))
    apply_stack(store, ApplyRequest(name="big", template=str(first)), "bench")
    request = ApplyRequest(name="big", template=str(second), check_mode=True)
    previews = []
    for _run in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = apply_stack(store, request, "bench")
        previews.append((time.perf_counter() - wall, time.process_time() - cpu,
                         len(result.plan.by_action()["updated"])))
    store.close()
    return previews, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(count: int, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix=f"bench-preview-{count}-") as name:
        folder = Path(name)
        database = folder / "store.db"
        second = folder / f"wide-{count}-w.yaml"
        # In a process of its own: a child of this one started later would carry
        # this one's peak RSS in its own (Linux keeps it across exec).
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as engine_process:
            engine, engine_peak = engine_process.submit(engine_previews, folder, count, runs).result()
        stack_task = {"name": "Preview", "hotplay.stacks.stack": {
            "name": "big", "template": str(second), "store": f"sqlite:///{database}"}}
        debug_task = {"name": "Preview", "ansible.builtin.debug": {"msg": "a debug task"}}
        playbooks = {"stack": write_playbook(folder, stack_task, "stack"),
                     "debug": write_playbook(folder, debug_task, "debug")}
        for playbook in playbooks.values():
            run_playbook(playbook)  # not counted: Python's bytecode cache written
        measured: dict[str, list[Run]] = {"stack": [], "debug": []}
        for _run in range(runs):
            for kind, playbook in playbooks.items():  # alternated: both see the same load
                measured[kind].append(run_playbook(playbook))
        _print_row(count, runs, engine, engine_peak, measured)


def _median(runs: list[Run], figure: str) -> float:
    return statistics.median(getattr(run, figure) for run in runs)


def _print_row(count: int, runs: int, engine: list[tuple[float, float, int]], engine_peak: float,
               measured: dict[str, list[Run]]) -> None:
    stack, debug = measured["stack"], measured["debug"]
    print(f"{count:>6} {runs:>4} {statistics.median(e[0] for e in engine):>9.2f}"
          f" {statistics.median(e[1] for e in engine):>8.2f}"
          f" {_median(stack, 'wall_s'):>8.2f} {_median(debug, 'wall_s'):>8.2f}"
          f" {_median(stack, 'wall_s') - _median(debug, 'wall_s'):>8.2f}"
          f" {_median(stack, 'cpu_s'):>8.2f} {_median(debug, 'cpu_s'):>8.2f}"
          f" {_median(stack, 'cpu_s') - _median(debug, 'cpu_s'):>8.2f}"
          f" {_median(stack, 'peak_mib'):>9.0f} {_median(debug, 'peak_mib'):>9.0f} {engine_peak:>7.0f}"
          f" {engine[0][2]:>8} {os.getloadavg()[0]:>5.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not (INSTALLED / "ansible_collections" / "hotplay" / "stacks").is_dir():
        sys.exit(f"the collection is not installed in {INSTALLED}: run make install first")
    print(f"check-mode stack task vs a debug task, ansible-playbook --check (median of the runs, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}); goal: stack wall < 2 s at 10,000, "
          f"peak < 1024 MiB at 50,000")
    print(f"{'N':>6} {'runs':>4} {'engine s':>9} {'eng CPU':>8} {'stack s':>8} {'debug s':>8} {'s diff':>8}"
          f" {'stk CPU':>8} {'dbg CPU':>8} {'CPU diff':>8} {'stack MiB':>9} {'debug MiB':>9} {'eng MiB':>7}"
          f" {'updated':>8} {'load':>5}")
    for count in args.sizes:
        measure(count, args.runs)


if __name__ == "__main__":
    main()
