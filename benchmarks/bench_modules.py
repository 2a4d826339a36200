#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print how long a stack of N independent Hotplay::Ansible::Module resources takes
on one host, against the same N tasks in a plain playbook.

Both are real ``ansible-playbook`` runs on localhost (``ansible_connection:
local``) against the installed collection (``make install``); the two kinds
alternate, so both see the same machine load.  Two workloads: ``copy`` writes N
files with ``ansible.builtin.copy`` (its action plugin sends the content first)
into an empty directory, work that keeps the controller's CPUs busy;  ``wait``
runs N ``ansible.builtin.wait_for`` calls that each wait 1 s, as a module calling
a remote API (a cloud, a service) waits for it.
Each figure is the median wall-clock time of ``--runs`` runs, ansible-playbook's
start-up included, and the median CPU time the run used (all its processes: on
a loaded machine the steadier figure of the work done).  The ratio is playbook time / stack time: above 1, the stack
is faster (its resources run side by side; the playbook's tasks one after the
other).  N is 20, 100 and 500 by default; a count of ``--few-runs-from`` or more is run
once (500 wait-bound playbook tasks alone take over ten minutes).  Usage: make
bench  (or: .venv/bin/python benchmarks/bench_modules.py --counts 20 100 --runs 3).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
INSTALLED = REPO / ".build" / "installed"


def content(index: int) -> str:
    return f"line of file {index}\n" * 20


def copy_args(root: Path, index: int) -> dict[str, Any]:
    return {"dest": str(root / f"file{index}.txt"), "content": content(index), "mode": "0644"}


def wait_args(root: Path, index: int) -> dict[str, Any]:
    return {"timeout": 1}


WORKLOADS = {"copy": ("ansible.builtin.copy", copy_args), "wait": ("ansible.builtin.wait_for", wait_args)}


def stack_playbook(folder: Path, count: int, root: Path, workload: str) -> Path:
    module, arguments = WORKLOADS[workload]
    resources = {f"r{i}": {"type": "Hotplay::Ansible::Module",
                           "properties": {"module": module, "args": arguments(root, i), "delete_args": {}}}
                 for i in range(count)}
    template = folder / "stack.yaml"
    template.write_text(yaml.safe_dump({"heat_template_version": "2021-04-16", "resources": resources}))
    task = {"name": "Apply the stack", "hotplay.stacks.stack": {
        "name": "bench", "template": str(template), "store": f"sqlite:///{folder / 'store.db'}"}}
    return _play(folder / "stack.yml", [task])


def tasks_playbook(folder: Path, count: int, root: Path, workload: str) -> Path:
    module, arguments = WORKLOADS[workload]
    tasks = [{"name": f"r{i}", module: arguments(root, i)} for i in range(count)]
    return _play(folder / "tasks.yml", tasks)


def _play(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}],
                                   sort_keys=False))
    return path


def run_once(kind: str, count: int, workload: str) -> tuple[float, float]:
    """One fresh run: an empty directory, a new store; the seconds it took, and
    the CPU seconds it used (ansible-playbook and every process it started)."""
    with tempfile.TemporaryDirectory(prefix=f"bench-modules-{kind}-") as name:
        folder = Path(name)
        root = folder / "files"
        root.mkdir()
        make = stack_playbook if kind == "stack" else tasks_playbook
        playbook = make(folder, count, root, workload)
        env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
               "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), "ANSIBLE_LOCALHOST_WARNING": "false",
               "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false"}
        env.pop("PYTHONPATH", None)
        used = _children_cpu()
        started = time.perf_counter()
        done = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                               str(playbook)], cwd=folder, env=env, capture_output=True, text=True,
                              check=False)
        seconds = time.perf_counter() - started
        used = _children_cpu() - used
        written = len(list(root.iterdir()))
    if done.returncode != 0 or written != (count if workload == "copy" else 0):
        sys.exit(f"{kind} run of {count} failed (rc {done.returncode}, {written} files):\n"
                 f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return seconds, used


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", type=int, nargs="+", default=[20, 100, 500])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--few-runs-from", type=int, default=500,
                        help="counts from this one up are run once")
    parser.add_argument("--workloads", nargs="+", choices=list(WORKLOADS), default=list(WORKLOADS))
    args = parser.parse_args()
    if not (INSTALLED / "ansible_collections" / "hotplay" / "stacks").is_dir():
        sys.exit(f"the collection is not installed in {INSTALLED}: run make install first")
    print(f"module resources on one host vs the same tasks in a playbook "
          f"(median of the runs, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")
    print(f"{'workload':<9} {'N':>5} {'runs':>4} {'stack s':>9} {'playbook s':>11} {'playbook/stack':>15}"
          f" {'stack CPU s':>12} {'playbook CPU s':>15} {'load':>5}")
    for workload in args.workloads:
        for count in args.counts:
            runs = args.runs if count < args.few_runs_from else 1
            times: dict[str, list[float]] = {"stack": [], "playbook": []}
            cpu: dict[str, list[float]] = {"stack": [], "playbook": []}
            for _run in range(runs):
                for kind in ("stack", "playbook"):  # alternated: both see the same load
                    seconds, used = run_once(kind, count, workload)
                    times[kind].append(seconds)
                    cpu[kind].append(used)
            stack, playbook = statistics.median(times["stack"]), statistics.median(times["playbook"])
            print(f"{workload:<9} {count:>5} {runs:>4} {stack:>9.2f} {playbook:>11.2f} "
                  f"{playbook / stack:>14.2f}x {statistics.median(cpu['stack']):>12.1f} "
                  f"{statistics.median(cpu['playbook']):>15.1f} {os.getloadavg()[0]:>5.1f}", flush=True)


if __name__ == "__main__":
    main()
