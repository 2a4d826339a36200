# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stress campaign for module resources: many ``Hotplay::Ansible::Module``
resources side by side, on localhost and on the SSH test hosts, their arguments
computed with yaql and their parameters checked with ``allowed_pattern``, applied
run after run (each run updates every resource in place) while CPU hogs keep the
load well above the core count (at least as many runnable tasks beside the campaign's
own as there are hogs: see LoadKeeper), on SQLite and on PostgreSQL.

After each run it checks what an operator relies on:

1. the run succeeded (rc 0, ``*_COMPLETE``);
2. nothing warned about threads or forking (``multi-threaded``, ``fork()``), and no
   worker wrote to stdout/stderr behind Ansible's back (``errantly sent data``);
3. the store is consistent: every resource COMPLETE with its physical id, and each
   file holds exactly the content of this run's version.

The last run deletes the stack: nothing may be left.  Prints a line per run and the
totals.  Full campaign: ``bash scripts/stress_campaign.sh`` (50 runs of 100
resources); ``tests/integration/test_stress_campaign.py`` runs a short one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(os.environ.get("HOTPLAY_REPO", Path(__file__).resolve().parents[2]))
BIN = REPO / ".venv" / "bin"
INSTALLED = REPO / ".build" / "installed"
COMPLAINTS = ("multi-threaded", "fork()", "errantly sent data", "Traceback", "deadlock")
# ansible-playbook's own process starts its workers with multiprocessing while it
# has threads of its own: Python's dev mode shows that warning, which is
# ansible-core's, not the collection's (a warning inside a worker, where the
# collection runs, comes wrapped in "errantly sent data").
ANSIBLE_CORE_OWN = ("multiprocessing/popen_fork.py", "self.pid = os.fork()")
CASE = "stress"  # the directory under each SSH host's /srv
# The test hosts' inventory gives up on a host after 3 s without an answer (for the
# tests that cut a host off); at a load of 60 on two cores sshd answers slower than
# that, so the campaign gives the hosts the time a loaded controller needs.
LOADED_SSH_ARGS = ("-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                   "-o ConnectTimeout=30 -o ServerAliveInterval=15 -o ServerAliveCountMax=4")


@dataclass
class RunResult:
    backend: str
    number: int
    seconds: float
    failure: str = ""  # the run itself failed
    warnings: list[str] = field(default_factory=list)  # about threads, forks, stray output
    inconsistencies: list[str] = field(default_factory=list)  # the store against the files
    competition: float = 0.0  # the median of the runnable tasks beside the run's own
    wanted_competition: int = 0  # what the hogs keep at least (less a task of noise)

    @property
    def problems(self) -> list[str]:
        unloaded = ([f"{self.competition:g} runnable tasks (median) beside the run's own, not the "
                     f"{self.wanted_competition} the campaign is about"]
                    if self.competition < self.wanted_competition else [])
        return ([self.failure] if self.failure else []) + self.warnings + self.inconsistencies + unloaded


def content(version: int, index: int) -> str:
    """What file ``index`` holds after the run of ``version`` (yaql upper-cases it)."""
    return f"VERSION {version} OF RESOURCE {index}\n".upper()


def template(count: int, hosts: list[str]) -> dict[str, Any]:
    """``count`` copy resources, one in three on an SSH host (round robin), each
    file's content made by yaql from parameters checked by allowed_pattern."""
    resources: dict[str, Any] = {}
    for index in range(count):
        # As Campaign.host_number: one in three on an SSH host, round robin.
        host = hosts[index % len(hosts)] if hosts and index % 3 == 0 else None
        root = f"/srv/{CASE}" if host else {"get_param": "root"}
        properties: dict[str, Any] = {
            "module": "ansible.builtin.copy",
            "args": {
                "dest": {"list_join": ["/", [root, f"file{index}.txt"]]},
                "content": {"yaql": {
                    "expression": "concat('VERSION ', str($.data.version), ' OF RESOURCE ', "
                                  "str($.data.index), '\n').toUpper()",
                    "data": {"version": {"get_param": "version"}, "index": index}}},
                "mode": "0644"},
            "delete_module": "ansible.builtin.file",
            "delete_args": {"path": {"list_join": ["/", [root, f"file{index}.txt"]]},
                            "state": "absent"},
        }
        if host:
            properties["host"] = host
        resources[f"file{index}"] = {"type": "Hotplay::Ansible::Module", "properties": properties}
    parameters = {
        "root": {"type": "string", "constraints": [{"allowed_pattern": "/[^\\n]*"}]},
        "version": {"type": "string", "constraints": [{"allowed_pattern": "[0-9]+"}]},
    }
    for index in range(10):  # patterns a regular-expression engine must bound
        parameters[f"label{index}"] = {"type": "string", "default": "a" * 20,
                                       "constraints": [{"allowed_pattern": "(a+)+"}]}
    return {"heat_template_version": "2021-04-16", "parameters": parameters,
            "resources": resources}


# A hog spins while the control file's number is above its own index, and sleeps otherwise.
HOG = """\
import os, sys, time
campaign, index, control = os.getppid(), int(sys.argv[1]), os.open(sys.argv[2], os.O_RDONLY)
while os.getppid() == campaign:
    if int(os.pread(control, 16, 0) or b"0") > index:
        until = time.monotonic() + 0.05
        while time.monotonic() < until:
            pass
    else:
        time.sleep(0.05)
"""


def task_states(pid: int | str) -> list[bytes]:
    """The scheduler states (R, S, D, ...) of a process's threads; none once it is gone."""
    states = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as stat:
                states.append(stat.read().rsplit(b")", 1)[1].split()[0])
        except OSError:
            continue
    return states


def parents() -> dict[int, int]:
    """Each process's parent, from /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    found[int(entry)] = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except OSError:
                continue
    return found


class LoadKeeper:
    """``count`` CPU hogs that keep at least ``count`` runnable tasks beside the campaign's
    own (the load well above the cores), each stopping once the campaign is gone (a
    campaign killed before its cleanup left its hogs spinning for good).

    Every ``interval`` a thread counts the machine's runnable tasks (/proc/loadavg) less
    the campaign's (its descendants' threads in state R, read from /proc): the
    competition the campaign meets. The hogs spin only for what the other work on the
    machine leaves short: alone every hog spins, as in a campaign with plain spinners;
    beside other tests that load the machine already, fewer or none do (four plain
    spinners for a 5-minute campaign in CI took ~300 CPU-s from the other tests to make
    a load those tests made anyway). ``samples``: the competition at each count."""

    def __init__(self, count: int, folder: Path, interval: float = 0.25) -> None:
        self.count = count
        self.interval = interval
        self.samples: list[int] = []
        self._control_path = folder / "hogs-spinning"
        self._control_path.write_text(str(count))
        self._control = os.open(self._control_path, os.O_WRONLY)
        self._hogs: list[subprocess.Popen[bytes]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._keep, daemon=True)

    def __enter__(self) -> LoadKeeper:
        self._hogs = [subprocess.Popen([sys.executable, "-c", HOG, str(index), str(self._control_path)])
                      for index in range(self.count)]
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for hog in self._hogs:
            hog.kill()
            hog.wait()
        os.close(self._control)

    def competition(self) -> int:
        """Runnable tasks on the machine that are not the campaign's (hogs included)."""
        with open("/proc/loadavg", encoding="ascii") as loadavg:
            runnable = int(loadavg.read().split()[3].split("/")[0])
        hogs = {hog.pid for hog in self._hogs}
        children: dict[int, list[int]] = {}
        for pid, parent in parents().items():
            children.setdefault(parent, []).append(pid)
        own, pending = 0, list(children.get(os.getpid(), []))
        while pending:
            pid = pending.pop()
            pending.extend(children.get(pid, []))
            if pid not in hogs:
                own += task_states(pid).count(b"R")
        return runnable - own - 1  # this thread, reading, is one of the runnable

    def _keep(self) -> None:
        spinning = self.count
        while not self._stop.wait(self.interval):
            competition = self.competition()
            self.samples.append(competition)
            others = competition - sum(task_states(hog.pid).count(b"R") for hog in self._hogs)
            wanted = max(0, min(self.count, self.count - others))
            if wanted != spinning:
                os.pwrite(self._control, f"{wanted:<16}".encode(), 0)
                spinning = wanted


def run_play(folder: Path, inventory: Path | None, store: str, task: dict[str, Any],
             name: str) -> subprocess.CompletedProcess[str]:
    play = [{"hosts": "localhost", "gather_facts": False,
             "vars": {"ansible_ssh_common_args": LOADED_SSH_ARGS},
             "tasks": [{"hotplay.stacks.stack": {**task, "store": store}, "register": "applied"},
                       {"ansible.builtin.copy": {"dest": str(folder / f"{name}.yml"), "mode": "0600",
                                                 "content": "{{ applied | to_nice_yaml }}"}}]}]
    playbook = folder / f"{name}-play.yml"
    playbook.write_text(yaml.safe_dump(play))
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_HOST_KEY_CHECKING": "false", "ANSIBLE_LOCALHOST_WARNING": "false",
           "ANSIBLE_PYTHON_INTERPRETER": "auto_silent", "PYTHONDEVMODE": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    # No SSH hosts: no inventory, so that the play's localhost is the implicit one, which
    # runs modules with the controller's own Python ("-i localhost," would reach it by SSH).
    command = [str(BIN / "ansible-playbook"), *(["-i", str(inventory)] if inventory else []),
               str(playbook)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=1800, check=False)


def complaints(done: subprocess.CompletedProcess[str]) -> list[str]:
    lines = [line for line in (done.stdout + done.stderr).splitlines()
             if not any(own in line for own in ANSIBLE_CORE_OWN)]
    return [f"output mentions {word!r}: {next(line for line in lines if word in line)[:300]}"
            for word in COMPLAINTS if any(word in line for line in lines)]


def store_problems(store_url: str, version: int, read: Callable[[str], str | None]) -> list[str]:
    """Every resource COMPLETE with the physical id of its file, holding this run's
    content (``read(physical_id)``: what the file holds, None when it is missing)."""
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

    store = open_store(store_url)
    try:
        stack = store.find_stack("stress")
        if stack is None:
            return ["the store has no stack 'stress'"]
        problems = []
        for row in store.resources(stack.id):
            state = row.state
            if row.retired_in:
                problems.append(f"{state.name}: a retired row is left")
            elif state.status != "COMPLETE" or not state.physical_id:
                problems.append(f"{state.name}: {state.action}_{state.status} {state.physical_id!r}")
            else:
                index = int(state.name.removeprefix("file"))
                found = read(state.physical_id)
                if found != content(version, index):
                    problems.append(f"{state.name}: {state.physical_id} holds {found!r}")
        return problems
    finally:
        store.close()


class Campaign:
    """One stack per backend, applied ``runs`` times, then deleted."""

    def __init__(self, folder: Path, count: int, hosts: Any | None) -> None:
        self.folder = folder
        self.count = count
        self.hosts = hosts
        self.local_root = folder / "files"
        self.local_root.mkdir(parents=True, exist_ok=True)
        names = hosts.names if hosts else []
        (folder / "stress.yaml").write_text(yaml.safe_dump(template(count, names)))
        if hosts:
            for number in range(1, len(names) + 1):
                (hosts.srv(number) / CASE).mkdir(exist_ok=True)

    def host_number(self, index: int) -> int:
        """The SSH host (1-based) of resource ``index``, 0 for localhost."""
        if not self.hosts or index % 3:
            return 0
        return index % len(self.hosts.names) + 1

    def read_file(self, path: str) -> str | None:
        index = int(Path(path).stem.removeprefix("file"))
        number = self.host_number(index)
        local = self.hosts.srv(number) / CASE / Path(path).name if number else Path(path)
        return local.read_text() if local.exists() else None

    def apply(self, backend: str, store: str, number: int, version: int, load: LoadKeeper,
              state: str = "present") -> RunResult:
        started = time.monotonic()
        task = {"name": "stress", "template": str(self.folder / "stress.yaml"), "state": state,
                "parameters": {"root": str(self.local_root), "version": str(version)}}
        inventory = self.hosts.inventory if self.hosts else None
        first_sample = len(load.samples)
        done = run_play(self.folder, inventory, store, task, f"{backend}-{number}")
        met = load.samples[first_sample:]
        # The counts are instants a quarter-second apart, the hogs follow a count late:
        # the median may fall a task short of the hogs' number, not more.
        result = RunResult(backend, number, time.monotonic() - started,
                           competition=statistics.median(met) if met else 0.0,
                           wanted_competition=load.count - 1)
        if done.returncode != 0:
            result.failure = f"rc {done.returncode}: {done.stdout[-2000:]}{done.stderr[-1000:]}"
        result.warnings = complaints(done)
        if state == "present":
            result.inconsistencies = store_problems(store, version, self.read_file)
        else:
            left = [str(p) for p in self.local_root.iterdir()]
            if self.hosts:
                left += [str(p) for n in range(1, len(self.hosts.names) + 1)
                         for p in (self.hosts.srv(n) / CASE).glob("file*")]
            if left:
                result.inconsistencies.append(f"left behind after delete: {left[:5]}")
        return result


def run_campaign(runs: int, count: int, backends: dict[str, str], folder: Path, hosts: Any | None,
                 hogs: int, report: Callable[[str], None]) -> list[RunResult]:
    results: list[RunResult] = []
    with LoadKeeper(hogs, folder) as load:
        for backend, store in backends.items():
            campaign = Campaign(folder / backend, count, hosts)
            for number in range(1, runs + 1):
                last = number == runs
                result = campaign.apply(backend, store, number, number, load,
                                        "absent" if last else "present")
                results.append(result)
                report(f"{backend:10} run {number:3}/{runs} {'delete' if last else 'apply':6} "
                       f"{result.seconds:6.1f} s load {os.getloadavg()[0]:5.1f} "
                       f"beside it {result.competition:4.1f} runnable "
                       f"{'ok' if not result.problems else 'FAILED: ' + '; '.join(result.problems)}")
    return results


def summary(results: list[RunResult]) -> str:
    failed = [r for r in results if r.failure]
    warned = [r for r in results if r.warnings]
    inconsistent = [r for r in results if r.inconsistencies]
    return (f"{len(results)} runs: {len(failed)} failed, {len(warned)} with thread/fork warnings, "
            f"{len(inconsistent)} with an inconsistent store")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="runs per backend, the last deletes")
    parser.add_argument("--resources", type=int, default=100)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"],
                        choices=["sqlite", "postgresql"])
    parser.add_argument("--ssh-hosts", type=int, default=2, help="0: localhost only")
    parser.add_argument("--hogs", type=int, default=3 * (os.cpu_count() or 2))
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.path.insert(0, str(REPO / "tests"))
    from clean_stop import stop_cleanly_on_signals
    stop_cleanly_on_signals()
    from postgres_server import throwaway_postgres
    from ssh_hosts import start_hosts

    import tempfile
    folder = args.folder or Path(tempfile.mkdtemp(prefix="hotplay-stress-"))
    with contextlib.ExitStack() as scope:
        backends = {}
        if "sqlite" in args.backends:
            backends["sqlite"] = f"sqlite:///{folder / 'store.db'}"
        if "postgresql" in args.backends:
            backends["postgresql"] = scope.enter_context(throwaway_postgres())
        hosts = None
        if args.ssh_hosts:
            hosts = start_hosts(args.ssh_hosts)
            scope.callback(hosts.down)
        print(f"stress campaign: {args.runs} runs per backend of {args.resources} module resources "
              f"({'localhost and ' + str(args.ssh_hosts) + ' SSH hosts' if hosts else 'localhost'}), "
              f"{args.hogs} CPU hogs on {os.cpu_count()} cores, in {folder}", flush=True)
        results = run_campaign(args.runs, args.resources, backends, folder, hosts, args.hogs,
                               lambda line: print(line, flush=True))
    print(summary(results))
    return 1 if any(r.problems for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
