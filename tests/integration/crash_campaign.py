# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Crash campaign: kill ``ansible-playbook`` (SIGKILL to the whole job: the main
process and every process under it, as a container or AWX node dying kills it;
Ansible's workers run in sessions of their own, so a process-group kill would miss
them) at a random moment of a create, update, delete or rollback, then check what
an operator relies on:

1. the store opens and is consistent (SQLite integrity, every reference resolves);
2. nothing is untracked: every file the stack made is recorded in the store, and
   every resource the store says is complete exists;
3. the same task run again converges to the intended state (or, for some update
   trials, ``stack_rollback`` brings back the previous revision instead);
4. after that, the store and the files agree exactly: no orphan, no ghost.

The ``takeover`` and ``frozen`` operations stop a run at a random moment of an update,
then a second job takes the lock over and applies another version.  ``takeover`` runs
are killed where the next job cannot see them die (their own PID namespace, as root):
the lock is taken over once the lease runs out.  ``frozen`` runs are frozen (SIGSTOP to
the whole job: a paused VM) until their lease runs out, then woken (and killed at a
random moment in half of those): the woken run must stop and record nothing more
(a **double apply** when it records anything, or ends without saying it lost the
lock).  The job that takes over kills the frozen one first (fencing: they run on
this host), so a module it had started before it froze cannot finish when woken:
a **late effect** (a file of its version that appeared, or was written over, after
the takeover) is then a failure like the others; counted apart.  The store and files must agree as above.

The ``worker`` operation kills only the Ansible worker of an update (the direct
children of ``ansible-playbook``: an OOM kill), in half the trials just after a module
process appears under it, while module resources run (its stack adds a shell module
that writes its file after a second).  ansible-playbook must notice and end; after
a grace longer than any module takes, no process of the worker's tree (recorded,
with start times, right before the kill, and its session right after) may still
run (a **survivor**), and no file may have changed since the kill (a **late
effect**: a module that outlived its worker); then as above.

The ``oldschema`` operation makes a store of schema version 2 in which a job of that
version (a process of its own, taking the lock with version 2's protocol:
tests/unit/plugins/plugin_utils/old_store.py) holds the stack while this version
applies: the apply must refuse, changing nothing (store dump, files, scratch
files), unless it saw the old job gone already.  The old job then releases its
lock, or is SIGKILLed at a random moment (during the apply in half of those): its
row stays, stale, and docs/store.md says such a row does not hold the upgrade up, so
the next apply must upgrade the store and converge.  Both acting is a **double apply**.

The stacks mix ``Hotplay::Local::File`` (real files), ``Hotplay::Ansible::Module``
resources (ansible.builtin.copy writing real files, deleted with ansible.builtin.file),
``OS::Heat::TestResource`` (with waits, so kills land mid-run), a provider-template
nested stack and a ``ResourceGroup``.  Every trial prints its seed; ``--only OP:SEED`` replays one.

Full campaign: ``bash scripts/crash_campaign.sh`` (50 trials per operation).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from processes import descendants, kill_tree

# The store of schema version 2 and its old job (issue 28, item 4).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "plugins" / "plugin_utils"))

REPO = Path(os.environ.get("HOTPLAY_REPO", Path(__file__).resolve().parents[2]))
BIN = REPO / ".venv" / "bin"
INSTALLED = REPO / ".build" / "installed"
# Runs killed: what every trial of these must leave is checked in CI.
KILLED_OPERATIONS = ("create", "update", "delete", "rollback", "takeover")
# Runs frozen past their lease and woken: the job that takes over fences them (kills
# their processes) first; slower than the others, so run by the full campaign rather
# than by CI's reduced run.
OPERATIONS = KILLED_OPERATIONS + ("frozen", "worker", "oldschema")
# CI's reduced run: ``oldschema`` trials are short (about 10 s); a ``worker`` trial
# takes about 40 s (its grace, a slower stack, a rollback), so it is left to the full
# campaign, as ``frozen`` is.
CI_OPERATIONS = KILLED_OPERATIONS + ("oldschema",)
# ``worker``: only the Ansible worker of an update is killed (its direct children
# aside, ansible-playbook lives on), while module resources run; ``oldschema``: a
# store of schema version 2 whose stack an old job holds while this version applies.
# How long after a worker's kill nothing of it may run or write any more: longer
# than any module of the campaign's stacks takes (the slowest, ``slow_module``, 1 s).
WORKER_GRACE = 4.0
# Writes that land this soon after the kill are the kill's own reach (the kernel's
# death signals travel worker -> fork server -> call -> module in a few ms; a busy
# machine may take longer): a write later than this is a module that outlived it.
KILL_REACH = 0.5
# Leases of the takeover trials: short, so a frozen run's lease runs out quickly.
SHORT_LEASE = "lock_lease=2&lock_renew=0.5"
LOST_LOCK = "lost the lock on stack crash"
STACK = "crash"
# Resource types whose physical id is the path of a file they made.
MANAGES_FILES = ("Hotplay::Local::File", "Hotplay::Ansible::Module")
# A module killed inside Ansible's atomic_move leaves its temporary file beside the
# destination (ansible.module_utils.basic); not ours to track, counted apart.
ANSIBLE_TEMPORARY = re.compile(r"^\.ansible_tmp")
ANYWHERE = 0.15  # share of kills placed anywhere in the job's life, start-up included
RANDOM_NAME = re.compile(rf"^{STACK}-random_file-[a-z0-9]{{12}}$")

MAIN = """\
heat_template_version: 2018-08-31
parameters:
  dir: {type: string}
  version: {type: string}
  fail: {type: boolean, default: false}
resources:
  config_file:   # updated in place on a new version
    type: Hotplay::Local::File
    properties:
      directory: {get_param: dir}
      name: config
      content: {list_join: [" ", [config, {get_param: version}]]}
  release_file:  # replaced on a new version (its name changes)
    type: Hotplay::Local::File
    properties:
      directory: {get_param: dir}
      name: {list_join: ["-", [release, {get_param: version}]]}
      content: {get_param: version}
  random_file:   # named by the engine (a random physical name)
    type: Hotplay::Local::File
    properties:
      directory: {get_param: dir}
      content: {get_param: version}
  slow:
    type: OS::Heat::TestResource
    properties: {value: {get_param: version}, wait_secs: 0.3}
  nested:
    type: nested.yaml
    depends_on: slow
    properties:
      dir: {get_param: dir}
      version: {get_param: version}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 3
      resource_def:
        type: Hotplay::Local::File
        properties:
          directory: {get_param: dir}
          name: {list_join: ["-", [member, "%index%", {get_param: version}]]}
          content: {get_param: version}
  copied:        # a real module resource: ansible.builtin.copy, replaced on a new version
    type: Hotplay::Ansible::Module
    properties:
      module: ansible.builtin.copy
      args:
        dest: {list_join: ["/", [{get_param: dir}, {list_join: ["-", [copied, {get_param: version}]]}]]}
        content: {get_param: version}
        mode: "0600"
      delete_module: ansible.builtin.file
      delete_args:
        path: {list_join: ["/", [{get_param: dir}, {list_join: ["-", [copied, {get_param: version}]]}]]}
        state: absent
  breaker:
    type: OS::Heat::TestResource
    depends_on: [config_file, nested, group, copied]
    properties:
      value: {get_param: version}
      fail: {get_param: fail}
outputs:
  release: {value: {get_attr: [release_file, path]}}
"""

# The ``worker`` operation's stack adds a slow module: a shell that writes its file
# only after a second (the attack of issue 28, item 2, made short).  One that outlived
# its killed worker would write late, after the kill; it is replaced on a new version.
SLOW_MODULE = """\
  slow_module:
    type: Hotplay::Ansible::Module
    properties:
      module: ansible.builtin.shell
      args:
        cmd: {list_join: ["", ["sleep 1 && printf %s ", {get_param: version}, " > ", {get_param: dir},
                               "/slow-", {get_param: version}, " && echo ", {get_param: dir},
                               "/slow-", {get_param: version}]]}
      update_in_place: []
      physical_id: stdout
      delete_module: ansible.builtin.file
      delete_args:
        path: {list_join: ["", [{get_param: dir}, "/slow-", {get_param: version}]]}
        state: absent
"""

NESTED = """\
heat_template_version: 2018-08-31
parameters:
  dir: {type: string}
  version: {type: string}
resources:
  inner_file:
    type: Hotplay::Local::File
    properties:
      directory: {get_param: dir}
      name: {list_join: ["-", [inner, {get_param: version}]]}
      content: {get_param: version}
  inner_wait:
    type: OS::Heat::TestResource
    properties: {value: {get_param: version}, wait_secs: 0.2}
  inner_copied:  # a module resource updated in place
    type: Hotplay::Ansible::Module
    properties:
      module: ansible.builtin.copy
      args:
        dest: {list_join: ["/", [{get_param: dir}, inner-copied]]}
        content: {get_param: version}
        mode: "0600"
      delete_module: ansible.builtin.file
      delete_args: {path: {list_join: ["/", [{get_param: dir}, inner-copied]]}, state: absent}
  inner_config:
    type: Hotplay::Local::File
    depends_on: inner_wait
    properties:
      directory: {get_param: dir}
      name: inner-config
      content: {get_param: version}
"""


def expected_files(version: str, slow: bool = False) -> dict[str, str]:
    """File name -> content of a stack at ``version`` (the random name apart);
    ``slow``: the ``worker`` operation's stack, with its slow module."""
    files = {"config": f"config {version}", f"release-{version}": version,
             f"inner-{version}": version, "inner-config": version,
             f"copied-{version}": version, "inner-copied": version}
    files.update({f"member-{i}-{version}": version for i in range(3)})
    if slow:
        files[f"slow-{version}"] = version
    return files


@dataclass
class Trial:
    operation: str
    seed: int
    delay: float = 0.0
    landed: str = ""  # where the kill landed: before the engine wrote, mid-run, after the end
    recovery: str = ""
    problems: list[str] = field(default_factory=list)
    inconsistencies: int = 0
    orphans: int = 0
    ghosts: int = 0
    double_applies: int = 0
    late_effects: int = 0
    fenced: bool = False  # the job that took over killed the frozen one's processes
    ansible_temporaries: int = 0
    # ``worker``: a module process ran under the killed worker at the kill; processes
    # of the killed worker's tree still running after the grace.
    module_running: bool = False
    survivors: int = 0
    # ``oldschema``: the apply refused while the old job held the lock (or ran
    # once it had seen the old job gone), and how the old job ended.
    refused: bool = False
    old_job: str = ""

    def line(self) -> str:
        verdict = "ok" if not self.problems else "FAILED: " + "; ".join(self.problems)
        if self.operation == "oldschema":
            return (f"{self.operation}:{self.seed} old job {self.old_job}"
                    f"{f' after {self.delay:.2f}s' if self.old_job.startswith('killed') else ''}, the apply under it "
                    f"{'refused' if self.refused else 'ran'}, recovery {self.recovery or '-'}: {verdict}")
        module = "" if self.operation != "worker" else (", a module running" if self.module_running else "")
        return (f"{self.operation}:{self.seed} kill after {self.delay:.2f}s ({self.landed}{module}), "
                f"recovery {self.recovery or '-'}: {verdict}")


class Workspace:
    """One trial's directory: templates, the files the stack manages, a store."""

    def __init__(self, root: Path, lease: str = "", slow: bool = False) -> None:
        self.root = root
        self.slow = slow
        self.files = root / "files"
        self.files.mkdir(parents=True)
        (root / "main.yaml").write_text(MAIN.replace("outputs:\n", SLOW_MODULE + "outputs:\n") if slow else MAIN)
        (root / "nested.yaml").write_text(NESTED)
        self.store = root / "store.db"
        self.url = f"sqlite:///{self.store}" + (f"?{lease}" if lease else "")

    def playbook(self, operation: str, version: str, fail: bool = False, revision: int = 0,
                 lock_timeout: int = 0) -> Path:
        if operation == "delete":
            task: dict[str, Any] = {"hotplay.stacks.stack": {"name": STACK, "state": "absent",
                                                             "store": self.url}}
        elif operation == "rollback":
            arguments: dict[str, Any] = {"name": STACK, "store": self.url}
            if revision:
                arguments["revision"] = revision
            task = {"hotplay.stacks.stack_rollback": arguments}
        else:
            task = {"hotplay.stacks.stack": {
                "name": STACK, "template": str(self.root / "main.yaml"), "store": self.url,
                "parameters": {"dir": str(self.files), "version": version, "fail": fail},
                "lock_timeout": lock_timeout}}
        play = [{"name": f"Crash campaign: {operation}", "hosts": "localhost", "gather_facts": False,
                 "tasks": [{"name": operation, **task}]}]
        path = self.root / f"{operation}-{version}-{int(fail)}-{revision}-{lock_timeout}.yml"
        path.write_text(yaml.safe_dump(play, sort_keys=False))
        return path


@contextlib.contextmanager
def closing_db(*args: Any, **kwargs: Any) -> Iterator[sqlite3.Connection]:
    """A connection closed on leaving (sqlite3's own context manager only commits:
    a connection left to the garbage collector, closed while another of this
    process is open, drops SQLite's POSIX locks under it)."""
    db = sqlite3.connect(*args, **kwargs)
    try:
        with db:
            yield db
    finally:
        db.close()


def environment() -> dict[str, str]:
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
           "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python")}
    env.pop("PYTHONPATH", None)
    return env


def run(playbook: Path, kill_after: float | None = None) -> subprocess.CompletedProcess[str] | None:
    """Run a playbook; with ``kill_after``, SIGKILL its whole process group then
    (None when it was killed, the result when it finished first)."""
    command = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)]
    process = subprocess.Popen(command, cwd=playbook.parent, env=environment(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = process.communicate(timeout=kill_after if kill_after is not None else 600)
        return subprocess.CompletedProcess(command, process.returncode, out, err)
    except subprocess.TimeoutExpired:
        kill_tree(process.pid)
        process.communicate()
        return None


def run_watched(playbook: Path, store: Path, events_before: int, kill_after: float | None = None,
                after_first_write: bool = False) -> tuple[subprocess.CompletedProcess[str] | None, float | None]:
    """Run a playbook watching the store for its first write (an event); with
    ``kill_after``, kill the job that long after its start, or after its first
    write.  (the result, None when killed; when the first write was seen)."""
    command = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)]
    process = subprocess.Popen(command, cwd=playbook.parent, env=environment(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first_write = None
    if kill_after is None or after_first_write:
        while process.poll() is None and first_write is None:
            if _event_count(store) > events_before:
                first_write = time.monotonic()
            else:
                time.sleep(0.005)
    if kill_after is None:
        out, err = process.communicate(timeout=600)
        return subprocess.CompletedProcess(command, process.returncode, out, err), first_write
    try:
        out, err = process.communicate(timeout=kill_after)
        return subprocess.CompletedProcess(command, process.returncode, out, err), first_write
    except subprocess.TimeoutExpired:
        kill_tree(process.pid)
        process.communicate()
        return None, first_write


# -- checks ---------------------------------------------------------------------------
def store_problems(path: Path) -> list[str]:
    """What is inconsistent in the store (empty: consistent)."""
    if not path.exists():
        return []
    problems = []
    with closing_db(path) as db:
        if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            problems.append("sqlite integrity_check failed")
        stacks = {row[0]: row for row in db.execute("SELECT id, parent_id, deleted, revision FROM stacks")}
        for stack_id, parent_id, _deleted, _revision in stacks.values():
            if parent_id and parent_id not in stacks:
                problems.append(f"stack {stack_id} has a missing parent {parent_id}")
        for stack_id, name, nested in db.execute(
                "SELECT stack_id, name, nested_stack_id FROM resources"):
            if stack_id not in stacks:
                problems.append(f"resource {name} belongs to a missing stack {stack_id}")
            if nested and nested not in stacks:
                problems.append(f"resource {name} points at a missing nested stack {nested}")
        for stack_id, _parent, deleted, revision in stacks.values():
            if deleted or not revision or _parent:
                continue
            found = db.execute("SELECT 1 FROM revisions WHERE stack_id = ? AND revision = ?",
                               (stack_id, revision)).fetchone()
            if found is None:
                problems.append(f"stack {stack_id} is at revision {revision}, which is not recorded")
    problems += _opens(path)
    return problems


def _opens(path: Path) -> list[str]:
    """The store opens through the project's own code and every stack reads."""
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.views import describe_stack

    try:
        store = open_store(f"sqlite:///{path}")
        try:
            for stack in store.list_stacks():
                describe_stack(store, stack.name, nested_depth=5)
        finally:
            store.close()
    except Exception as error:  # noqa: BLE001 - any failure to read is the finding
        return [f"the store does not open: {type(error).__name__}: {error}"]
    return []


def recorded_paths(path: Path) -> tuple[set[str], set[str]]:
    """(every path any resource row names, paths of rows that claim a complete file)."""
    every: set[str] = set()
    complete: set[str] = set()
    if not path.exists():
        return every, complete
    with closing_db(path) as db:
        rows = db.execute("SELECT r.type, r.action, r.status, r.physical_id, r.retired_in, s.deleted"
                          " FROM resources r JOIN stacks s ON s.id = r.stack_id").fetchall()
    for type_name, action, status, physical_id, retired_in, deleted in rows:
        if type_name not in MANAGES_FILES or not physical_id:
            continue
        every.add(physical_id)
        # A retired or deleted stack's row may be mid-delete: its file may be gone.
        if status == "COMPLETE" and action != "DELETE" and not retired_in and not deleted:
            complete.add(physical_id)
    return every, complete


def tracking_problems(workspace: Workspace, trial: Trial) -> list[str]:
    """Orphans (files the store does not know) and ghosts (complete records of
    files that do not exist)."""
    every, complete = recorded_paths(workspace.store)
    problems = []
    for file in sorted(workspace.files.iterdir()):
        if ANSIBLE_TEMPORARY.match(file.name):
            trial.ansible_temporaries += 1
            continue
        path = str(file)
        temporary = re.match(r"^\.(.+)\.hotplay-tmp$", file.name)
        owner = str(file.with_name(temporary.group(1))) if temporary else path
        if owner not in every:
            trial.orphans += 1
            problems.append(f"orphan file {file.name} (not recorded)")
    for path in sorted(complete):
        if not os.path.exists(path):
            trial.ghosts += 1
            problems.append(f"recorded complete but missing: {os.path.basename(path)}")
    return problems


def state_problems(workspace: Workspace, version: str | None) -> list[str]:
    """The files are exactly those of ``version`` (None: no stack, no files)."""
    present = {f.name: f.read_text() for f in workspace.files.iterdir()
               if not ANSIBLE_TEMPORARY.match(f.name)}
    if version is None:
        return [f"left behind after delete: {sorted(present)}"] if present else []
    wanted = expected_files(version, workspace.slow)
    problems = []
    randoms = [name for name in present if RANDOM_NAME.match(name)]
    if len(randoms) != 1 or present[randoms[0]] != version:
        problems.append(f"want one random-named file holding {version}, found {randoms}")
    others = {name: text for name, text in present.items() if name not in randoms}
    if others != wanted:
        problems.append(f"files differ from version {version}: "
                        f"extra {sorted(set(others) - set(wanted))}, missing {sorted(set(wanted) - set(others))}, "
                        f"wrong {sorted(n for n in wanted if n in others and others[n] != wanted[n])}")
    return problems


def live_status(workspace: Workspace) -> tuple[str, str] | None:
    with closing_db(workspace.store) as db:
        row = db.execute("SELECT action, status FROM stacks WHERE name = ? AND parent_id IS NULL"
                         " AND deleted = 0", (STACK,)).fetchone()
        unsettled = db.execute("SELECT count(*) FROM resources r JOIN stacks s ON s.id = r.stack_id"
                               " WHERE s.deleted = 0 AND r.status = 'IN_PROGRESS'").fetchone()[0]
    if row is not None and unsettled:
        return row[0], f"{row[1]} with {unsettled} resources IN_PROGRESS"
    return row


# -- the campaign -------------------------------------------------------------------------
class Campaign:
    def __init__(self, workdir: Path, report: Any = print) -> None:
        self.workdir = workdir
        self.report = report
        self.durations: dict[str, float] = {}
        self.windows: dict[str, float] = {}
        self.startup = 0.0

    def calibrate(self, operations: tuple[str, ...] = OPERATIONS) -> None:
        """How long ansible-playbook takes to start, and each operation unkilled:
        kills are spread over the time the operation is working."""
        root = Path(tempfile.mkdtemp(dir=self.workdir, prefix="calibrate-"))
        workspace = Workspace(root)
        noop = root / "noop.yml"
        noop.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False,
                                         "tasks": [{"ansible.builtin.meta": "noop"}]}]))
        started = time.monotonic()
        run(noop)
        self.startup = time.monotonic() - started
        steps: list[tuple[str, Path]] = [
            ("create", workspace.playbook("create", "1")),
            ("update", workspace.playbook("update", "2")),
            ("failing", workspace.playbook("update", "3", fail=True)),
            ("rollback", workspace.playbook("rollback", "", revision=2)),
            ("delete", workspace.playbook("delete", "")),
        ]
        if not set(operations) - {"worker", "oldschema"}:
            steps = []  # those time their own runs (below)
        for name, playbook in steps:
            started = time.monotonic()
            done, first_write = run_watched(playbook, workspace.store, _event_count(workspace.store))
            ended = time.monotonic()
            self.durations[name] = ended - started
            self.windows[name] = ended - (first_write or started)
            if done is None or (done.returncode != 0 and name != "failing"):
                raise RuntimeError(f"calibration {name} failed:\n{done.stdout if done else ''}")
        if "worker" in operations:
            # The worker operation's stack (with its slow module): its update.
            slow = Workspace(Path(tempfile.mkdtemp(dir=self.workdir, prefix="calibrate-worker-")), slow=True)
            for name, playbook in (("worker-create", slow.playbook("create", "1")),
                                   ("worker", slow.playbook("update", "2"))):
                started = time.monotonic()
                done, first_write = run_watched(playbook, slow.store, _event_count(slow.store))
                ended = time.monotonic()
                self.durations[name] = ended - started
                self.windows[name] = ended - (first_write or started)
                if done is None or done.returncode != 0:
                    raise RuntimeError(f"calibration {name} failed:\n{done.stdout if done else ''}")
        if "oldschema" in operations:
            # An apply refused under a job of schema version 2: the old job's kill is
            # placed in it (or after it).
            from old_store import OldJob, make_schema_2_store  # pylint: disable=import-outside-toplevel

            old_root = Path(tempfile.mkdtemp(dir=self.workdir, prefix="calibrate-oldschema-"))
            old_workspace = Workspace(old_root)
            make_schema_2_store(f"sqlite:///{old_workspace.store}")
            old = OldJob(f"sqlite:///{old_workspace.store}", STACK)
            try:
                started = time.monotonic()
                refused = run(old_workspace.playbook("create", "1"))
                self.durations["oldschema"] = self.windows["oldschema"] = time.monotonic() - started
            finally:
                old.end()
            if refused is None or refused.returncode == 0:
                raise RuntimeError("calibration oldschema: the apply was not refused")
        self.report(self.calibration_line())

    def calibration_line(self) -> str:
        return (f"calibration: start-up {self.startup:.2f}s; whole run / from the first write: "
                + ", ".join(f"{k} {self.durations[k]:.2f}/{self.windows[k]:.2f}s" for k in self.durations))

    def take_calibration(self, other: Campaign) -> None:
        """Another campaign's figures (the same stacks on the same machine), so that
        CI's run of each operation does not run the same seven playbooks again."""
        self.startup, self.durations, self.windows = other.startup, dict(other.durations), dict(other.windows)
        self.report(self.calibration_line() + " (calibrated once for the session)")

    def trial(self, operation: str, seed: int) -> Trial:
        rng = random.Random(f"{operation}:{seed}")
        trial = Trial(operation, seed)
        root = Path(tempfile.mkdtemp(dir=self.workdir, prefix=f"{operation}-{seed}-"))
        if operation in ("takeover", "frozen"):
            self._takeover(Workspace(root, SHORT_LEASE), trial, rng, frozen=operation == "frozen")
            return trial
        if operation == "worker":
            self._worker(Workspace(root, slow=True), trial, rng)
            return trial
        if operation == "oldschema":
            self._old_schema(Workspace(root), trial, rng)
            return trial
        workspace = Workspace(root)
        killed_playbook, target = self._prepare(workspace, operation)
        # Most kills land while the engine works (counted from its first write);
        # some anywhere in the job's life, start-up included.
        anywhere = rng.random() < ANYWHERE
        window = self.durations[operation] if anywhere else self.windows[operation]
        trial.delay = rng.uniform(0, window * 1.05)
        before = _event_count(workspace.store)
        finished, _first = run_watched(killed_playbook, workspace.store, before, trial.delay,
                                       after_first_write=not anywhere)
        trial.landed = _landed(workspace, finished, before)
        store = store_problems(workspace.store)
        trial.inconsistencies += len(store)
        trial.problems += store + tracking_problems(workspace, trial)
        if finished is not None and finished.returncode != 0:
            trial.problems.append("the run failed before it was killed: " + _tail(finished))
        self._recover(workspace, trial, rng, killed_playbook, target)
        return trial

    def _takeover(self, workspace: Workspace, trial: Trial, rng: random.Random, frozen: bool) -> None:
        """Stop an update of version 2 at a random moment (killed where this host
        cannot see it die, or frozen past its lease), let a second job take the lock
        over and apply version 3, then wake the frozen one (killing it at a random
        moment in half the trials)."""
        created = run(workspace.playbook("create", "1"))
        if created is None or created.returncode != 0:
            raise RuntimeError(f"setup: the create failed: {_tail(created)}")
        killed = not frozen
        trial.delay = rng.uniform(0, self.windows["update"] * 1.05)
        before = _event_count(workspace.store)
        first = Stopped(workspace.playbook("update", "2"), workspace.store, before, trial.delay, killed)
        if first.finished is not None:
            trial.landed = "after the end"
        else:
            trial.landed = "mid-run" if _event_count(workspace.store) > before else "before any write"
            taker = run(workspace.playbook("update", "3", lock_timeout=60))
            if taker is None or taker.returncode != 0:
                trial.problems.append("the second job did not take the lock over: " + _tail(taker))
            recorded, files = _snapshot(workspace), _file_texts(workspace)
            if killed:
                trial.recovery = "killed (own PID namespace), taken over"
            else:
                kill_after = rng.uniform(0, 1.5) if rng.random() < 0.5 else None
                trial.recovery = "frozen, taken over, woken" + (", killed" if kill_after is not None else "")
                trial.problems += _acted_after_takeover(trial, workspace, first.wake(kill_after),
                                                        recorded, files)
        store = store_problems(workspace.store)
        trial.inconsistencies += len(store)
        trial.problems += store + tracking_problems(workspace, trial)
        done = run(workspace.playbook("update", "3", lock_timeout=60))
        if done is None or done.returncode != 0:
            trial.problems.append("re-run failed: " + _tail(done))
        trial.problems += self._settled(workspace, "3")

    def _worker(self, workspace: Workspace, trial: Trial, rng: random.Random) -> None:
        """Kill only the Ansible worker of an update of version 2 (the direct
        children of ansible-playbook), in half the trials a moment after a module
        process is seen under it, else at a random moment of the update; then
        ansible-playbook must end by itself, and after ``WORKER_GRACE`` no process
        of the worker's tree may run (a **survivor**) and no file may have changed
        since the kill (a **late effect**: a module that outlived its worker)."""
        created = run(workspace.playbook("create", "1"))
        if created is None or created.returncode != 0:
            raise RuntimeError(f"setup: the create failed: {_tail(created)}")
        playbook = workspace.playbook("update", "2")
        at_module = rng.random() < 0.5
        pause = rng.uniform(0, 0.9) if at_module else rng.uniform(0, self.windows["worker"] * 1.05)
        before = _event_count(workspace.store)
        output = workspace.root / "killed-worker.log"
        command = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)]
        # Output to a file: a process that outlived the worker would hold a pipe open.
        with output.open("w") as log:
            process = subprocess.Popen(command, cwd=playbook.parent, env=environment(), stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._kill_worker(workspace, trial, process, before, at_module, pause)
        finally:
            if process.poll() is None:
                kill_tree(process.pid)
            process.wait()
        if trial.landed == "after the end" and process.returncode != 0:
            trial.problems.append("the run failed before it was killed: " + output.read_text()[-300:])
        store = store_problems(workspace.store)
        trial.inconsistencies += len(store)
        trial.problems += store + tracking_problems(workspace, trial)
        self._recover(workspace, trial, rng, playbook, "2")

    def _kill_worker(self, workspace: Workspace, trial: Trial, process: subprocess.Popen[bytes],
                     before: int, at_module: bool, pause: float) -> None:
        started = time.monotonic()
        while process.poll() is None and _event_count(workspace.store) <= before:
            time.sleep(0.005)
        first_write = time.monotonic()
        if at_module:
            deadline = first_write + self.windows["worker"] * 2 + 5
            while process.poll() is None and time.monotonic() < deadline:
                if any(_is_module(pid, process.pid) for pid in _tree_of(_children(process.pid))):
                    break
                time.sleep(0.005)
        time.sleep(max(0.0, pause))
        trial.delay = time.monotonic() - first_write
        workers = _children(process.pid) if process.poll() is None else set()
        if not workers:
            # The task was over (or the job was): nothing to kill.
            trial.landed = "after the end"
            process.wait(timeout=600)
            return
        tree = {pid: start for pid in _tree_of(workers) if (start := _start_time(pid)) is not None}
        trial.module_running = any(_is_module(pid, process.pid) for pid in tree)
        killed_at = time.time()
        for worker in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)
        # What the worker started between the look and the kill: its session (Ansible
        # runs each worker in a session of its own; a served call leads only a group).
        tree.update({pid: start for pid in _in_sessions(workers)
                     if (start := _start_time(pid)) is not None})
        trial.landed = _landed(workspace, None, before)
        if trial.landed == "before any write":
            trial.landed = "mid-run"  # the worker had written (its first write was awaited)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            trial.problems.append("ansible-playbook did not end within 60 s after its worker was killed")
        else:
            if process.returncode == 0:
                trial.problems.append("ansible-playbook reported success after its worker was killed")
        time.sleep(max(0.0, killed_at + KILL_REACH - time.time()))
        present = _file_names_all(workspace)
        time.sleep(max(0.0, killed_at + WORKER_GRACE - time.time()))
        left = {pid: _describe(pid) for pid, start in tree.items() if _start_time(pid) == start}
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # so that they do not spoil the checks that follow
        if left:
            trial.survivors += len(left)
            trial.problems.append(f"{len(left)} processes of the killed worker still ran {WORKER_GRACE:.0f} s "
                                  f"after the kill: {sorted(left.items())}"[:600])
        late = sorted(name for name in _file_names_all(workspace)
                      if _changed_at(workspace.files / name) > killed_at + KILL_REACH)
        gone = sorted(present - _file_names_all(workspace))
        if late or gone:
            trial.late_effects += 1
            trial.problems.append(f"files changed more than {KILL_REACH} s after the worker was killed "
                                  f"({time.monotonic() - started:.1f} s into the run): written {late}, removed {gone}")

    def _old_schema(self, workspace: Workspace, trial: Trial, rng: random.Random) -> None:
        """A store at schema version 2 whose stack a job of that version holds (a real
        process taking the lock with version 2's protocol: old_store.py) while this
        version applies: the apply must refuse and change nothing (store, files),
        unless the old job was seen gone by then.  The old job then releases its lock,
        or is SIGKILLed at a random moment (in half the trials, while the apply runs):
        its lock row stays, stale, and a holder on this host that is gone is seen to
        be gone (store/sqlite.py), so the next apply upgrades the store, as docs/store.md
        says, with no operator step.  Both acting is a **double apply**."""
        from old_store import OldJob, make_schema_2_store, schema_version, tables  # pylint: disable=import-outside-toplevel
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sql import SCHEMA_VERSION  # pylint: disable=import-outside-toplevel

        url = f"sqlite:///{workspace.store}"
        make_schema_2_store(url)
        playbook = workspace.playbook("create", "1")
        old = OldJob(url, STACK, "ansible-playbook (crash campaign, old job)")
        try:
            fate = rng.choice(("released", "killed", "killed"))
            window = self.durations["oldschema"] * 1.05  # the refused apply
            killer = None
            killed_at = [0.0]
            if fate == "killed":
                trial.delay = rng.uniform(0, window) if rng.random() < 0.5 else rng.uniform(window, window * 1.5)

                def kill_old() -> None:
                    killed_at[0] = time.monotonic()
                    old.process.kill()
                    old.process.wait()  # reaped: its pid is free (a zombie is seen gone all the same)

                killer = threading.Timer(trial.delay, kill_old)
            dump, listing = _dump(workspace.store), _root_listing(workspace)
            started = time.monotonic()
            if killer is not None:
                killer.start()
            during = run(playbook)
            ended = time.monotonic()
            if killer is not None:
                killer.join()
            held_throughout = fate == "released" or killed_at[0] >= ended
            trial.old_job = (fate if fate == "released" else
                             f"killed {'while the apply ran' if not held_throughout else 'after the apply'}")
            trial.landed = "mid-run" if not held_throughout else "after the end"
            output = (during.stdout + during.stderr) if during is not None else ""
            acted = during is not None and during.returncode == 0
            trial.refused = "is in use by an older hotplay.stacks (schema version 2)" in output
            changed = _dump(workspace.store) != dump or _root_listing(workspace) != listing
            if held_throughout or not acted:
                if acted or not trial.refused:
                    trial.problems.append("the apply did not refuse while a job of schema version 2 held "
                                          "the stack's lock: " + _tail(during))
                if changed or list(workspace.files.iterdir()):
                    trial.problems.append(f"the refused apply changed the store or wrote files: "
                                          f"{sorted(f.name for f in workspace.files.iterdir())}")
                if acted or changed:
                    trial.double_applies += 1
            if fate == "released":
                old.release()
        finally:
            old.end()
        trial.recovery = "re-run"
        done = run(playbook)
        if done is None or done.returncode != 0:
            trial.problems.append("the apply after the old job ended failed: " + _tail(done))
        if schema_version(url) != SCHEMA_VERSION or "locks" in tables(url):
            trial.problems.append(f"the store was not upgraded: schema version {schema_version(url)}, "
                                  f"tables {sorted(tables(url))}")
        store = store_problems(workspace.store)
        trial.inconsistencies += len(store)
        trial.problems += store + tracking_problems(workspace, trial)
        trial.problems += self._settled(workspace, "1")

    def _prepare(self, workspace: Workspace, operation: str) -> tuple[Path, str | None]:
        """Bring the stack to where the operation starts; (playbook to kill,
        version it aims at: None for no stack)."""
        if operation == "create":
            return workspace.playbook("create", "1"), "1"
        created = run(workspace.playbook("create", "1"))
        if created is None or created.returncode != 0:
            raise RuntimeError(f"setup: the create failed: {_tail(created)}")
        if operation == "update":
            return workspace.playbook("update", "2"), "2"
        if operation == "delete":
            return workspace.playbook("delete", ""), None
        failed = run(workspace.playbook("update", "2", fail=True))
        if failed is None or failed.returncode == 0:
            raise RuntimeError("setup: the failing update did not fail")
        return workspace.playbook("rollback", "", revision=1), "1"

    def _recover(self, workspace: Workspace, trial: Trial, rng: random.Random, playbook: Path,
                 target: str | None) -> None:
        if trial.operation in ("update", "worker") and rng.random() < 0.5:
            trial.recovery = "stack_rollback to revision 1"
            self._roll_back_to_first(workspace, trial)
            target = "1"
        else:
            trial.recovery = "re-run"
            done = run(playbook)
            if done is None or done.returncode != 0:
                trial.problems.append("re-run failed: " + _tail(done))
        trial.problems += self._settled(workspace, target)
        if trial.operation in ("update", "worker") and trial.recovery == "re-run":
            # stack_rollback works from there too.
            trial.recovery += " + stack_rollback"
            done = run(workspace.playbook("rollback", "", revision=1))
            if done is None or done.returncode != 0:
                trial.problems.append("stack_rollback after recovery failed: " + _tail(done))
            trial.problems += self._settled(workspace, "1")

    def _roll_back_to_first(self, workspace: Workspace, trial: Trial) -> None:
        with closing_db(workspace.store) as db:
            (revision,) = db.execute("SELECT revision FROM stacks WHERE name = ? AND parent_id IS NULL"
                                     " AND deleted = 0", (STACK,)).fetchone()
        if revision <= 1:
            # Killed before the update recorded its revision: there is nothing to
            # roll back, and the stack must still be revision 1, complete.
            trial.recovery += " (not needed: the update never started)"
            return
        done = run(workspace.playbook("rollback", "", revision=1))
        if done is None or done.returncode != 0:
            trial.problems.append("stack_rollback from the killed state failed: " + _tail(done))

    def _settled(self, workspace: Workspace, version: str | None) -> list[str]:
        problems = store_problems(workspace.store)
        scratch = Trial("", 0)
        problems += tracking_problems(workspace, scratch)
        if version is None:
            if live_status(workspace) is not None:
                problems.append(f"stack still there after delete: {live_status(workspace)}")
        else:
            status = live_status(workspace)
            if status is None or status[1] != "COMPLETE":
                problems.append(f"stack not settled: {status}")
        problems += state_problems(workspace, version)
        return problems


class Stopped:
    """A job stopped ``delay`` seconds after its first write: killed (in a PID
    namespace of its own when run as root, so that the next job cannot see it die
    and must wait for its lease to run out), or frozen whole (SIGSTOP to every
    process of it: a paused VM) until woken."""

    def __init__(self, playbook: Path, store: Path, events_before: int, delay: float,
                 killed: bool) -> None:
        command = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)]
        if killed and os.geteuid() == 0:
            command = ["unshare", "--pid", "--fork", "--mount-proc", *command]
        self.process = subprocess.Popen(command, cwd=playbook.parent, env=environment(), text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.finished: subprocess.CompletedProcess[str] | None = None
        self.frozen: set[int] = set()
        while self.process.poll() is None and _event_count(store) <= events_before:
            time.sleep(0.005)
        time.sleep(delay)
        if self.process.poll() is not None:
            self.finished = subprocess.CompletedProcess(command, self.process.returncode,
                                                        self.process.communicate()[0], "")
        elif killed:
            kill_tree(self.process.pid)
            self.process.communicate()
        else:
            self.frozen = self._freeze()

    def _freeze(self) -> set[int]:
        """SIGSTOP the whole job, again until no process of it is left running (a
        worker may be starting a module's process meanwhile)."""
        stopped: set[int] = set()
        while fresh := ({self.process.pid} | descendants(self.process.pid)) - stopped:
            for pid in fresh:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
            stopped |= fresh
        return stopped

    def wake(self, kill_after: float | None) -> str | None:
        """SIGCONT; the job's output when it ended by itself, None when killed."""
        for pid in self.frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        try:
            return self.process.communicate(timeout=kill_after if kill_after is not None else 600)[0]
        except subprocess.TimeoutExpired:
            kill_tree(self.process.pid)
            self.process.communicate()
            return None


def _children(pid: int) -> set[int]:
    """The direct children of ``pid`` (of ansible-playbook: its workers)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None and int(stat[1]) == pid:
            found.add(int(entry))
    return found


def _tree_of(roots: set[int]) -> set[int]:
    tree = set(roots)
    for root in roots:
        tree |= descendants(root)
    return tree


def _in_sessions(sessions: set[int]) -> set[int]:
    """Processes whose session is one of ``sessions``."""
    return {int(entry) for entry in os.listdir("/proc")
            if entry.isdigit() and (stat := _stat(int(entry))) is not None and int(stat[3]) in sessions}


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command (state first), None when gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _start_time(pid: int) -> str | None:
    """When ``pid`` started (None: gone, or a zombie: it runs nothing any more)."""
    stat = _stat(pid)
    return None if stat is None or len(stat) < 20 or stat[0] in ("Z", "X") else stat[19]


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _is_module(pid: int, playbook_pid: int) -> bool:
    """A process that runs something else than ansible-playbook's own code (forks
    of it keep its command line): a module, the shell that starts one."""
    command = _cmdline(pid)
    return bool(command) and command != _cmdline(playbook_pid)


def _describe(pid: int) -> str:
    return _cmdline(pid)[:120] or "?"


def _file_names_all(workspace: Workspace) -> set[str]:
    """Every name in the files directory, temporaries included."""
    return {f.name for f in workspace.files.iterdir()}


def _changed_at(path: Path) -> float:
    try:
        status = path.lstat()
    except FileNotFoundError:
        return 0.0
    return max(status.st_mtime, status.st_ctime)


def _dump(store: Path) -> list[str]:
    """The whole store as SQL (read only)."""
    with closing_db(f"file:{store}?mode=ro", uri=True, timeout=30) as db:
        return list(db.iterdump())


def _root_listing(workspace: Workspace) -> set[str]:
    """Names in the trial's directory (the store's scratch files, ``*.db.new-*``)
    but for SQLite's own journal files and the playbooks."""
    return {f.name for f in workspace.root.iterdir()
            if not f.name.endswith(("-wal", "-shm", "-journal", ".yml", ".log"))}


def _file_names(workspace: Workspace) -> set[str]:
    return {f.name for f in workspace.files.iterdir() if not ANSIBLE_TEMPORARY.match(f.name)}


def _file_texts(workspace: Workspace) -> dict[str, str]:
    return {name: (workspace.files / name).read_text() for name in _file_names(workspace)
            if (workspace.files / name).is_file()}


def _snapshot(workspace: Workspace) -> list[Any]:
    """Everything the store records of the stack (events, resources, stacks, revisions)."""
    with closing_db(workspace.store) as db:
        return [db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()  # noqa: S608
                for table in ("events", "resources", "stacks", "revisions", "hooks")]


def _takeover_note(workspace: Workspace) -> str | None:
    """The note of the stack's last lock when it was taken over from a run that had
    not released it (None otherwise)."""
    with closing_db(workspace.store) as db:
        notes = [row[0] for row in db.execute("SELECT note FROM leases WHERE stack_name = ?", (STACK,))]
    return notes[0] if notes and notes[0].startswith("took over from ") else None


def _acted_after_takeover(trial: Trial, workspace: Workspace, woken: str | None,
                          recorded: list[Any], files: dict[str, str]) -> list[str]:
    """A **double apply**: the woken job recorded anything after the takeover, or
    ended without saying it lost the lock (unless the job that took over killed
    it: fenced, as the takeover note says).  A **late effect**: a file of its
    version that appeared, or was written over, after the takeover (a module it
    had started before it froze)."""
    problems: list[str] = []
    note = _takeover_note(workspace)
    if note is None:
        return problems  # the frozen job had released the lock already: no takeover
    trial.fenced = "; fenced: " in note
    if _snapshot(workspace) != recorded:
        problems.append("the job whose lease was taken over wrote to the store after the takeover")
    if woken is not None and LOST_LOCK not in woken and not trial.fenced:
        problems.append("the job whose lease was taken over did not stop: " + woken[-300:])
    if problems:
        trial.double_applies += 1
    now = _file_texts(workspace)
    appeared = sorted(n for n in set(now) - set(files) if n.endswith("-2") or n.startswith("."))
    rewritten = sorted(n for n in set(now) & set(files) if now[n] != files[n])
    if appeared or rewritten:
        trial.late_effects += 1
        problems.append(f"files of the frozen job's version appeared after the takeover: {appeared},"
                        f" written over: {rewritten}")
    return problems


def _event_count(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with closing_db(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT count(*) FROM events").fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # the first run is still creating the store


def _landed(workspace: Workspace, finished: Any, events_before: int) -> str:
    if finished is not None:
        return "after the end"
    if _event_count(workspace.store) == events_before:
        return "before any write"
    with closing_db(workspace.store) as db:
        unsettled = db.execute("SELECT count(*) FROM stacks WHERE status = 'IN_PROGRESS'").fetchone()[0]
        unsettled += db.execute("SELECT count(*) FROM resources WHERE status = 'IN_PROGRESS'").fetchone()[0]
    return "mid-run" if unsettled else "after the engine finished"


def _tail(done: Any) -> str:
    if done is None:
        return "(killed)"
    text = done.stdout + done.stderr
    failed = [line for line in text.splitlines() if "FAILED" in line or "ERROR" in line]
    return (failed[-1] if failed else text[-300:]).strip()[:400]


def run_campaign(trials: int, operations: tuple[str, ...], first_seed: int, workdir: Path,
                 report: Any = print, only: list[tuple[str, int]] | None = None,
                 jobs: int = 1, calibrated: Campaign | None = None) -> list[Trial]:
    """Every trial (``jobs`` at a time: each is its own store and directory);
    ``calibrated``: a campaign calibrated for these operations already."""
    campaign = Campaign(workdir, report)
    plan = only or [(op, first_seed + n) for op in operations for n in range(trials)]
    if calibrated is None:
        campaign.calibrate(tuple({op for op, _seed in plan}))
    else:
        campaign.take_calibration(calibrated)
    results = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for trial in pool.map(lambda step: campaign.trial(*step), plan):
            results.append(trial)
            report(trial.line())
    summarise(results, report)
    return results


def summarise(results: list[Trial], report: Any = print) -> None:
    for operation in sorted({t.operation for t in results}):
        mine = [t for t in results if t.operation == operation]
        landed = {where: sum(1 for t in mine if t.landed == where)
                  for where in ("before any write", "mid-run", "after the engine finished", "after the end")}
        report(f"{operation}: {len(mine)} trials ({landed['mid-run']} killed mid-run, "
               f"{landed['before any write']} before any write, "
               f"{landed['after the engine finished'] + landed['after the end']} after the engine finished), "
               f"{sum(1 for t in mine if t.problems)} failed, "
               f"store inconsistencies {sum(t.inconsistencies for t in mine)}, "
               f"orphans {sum(t.orphans for t in mine)}, ghosts {sum(t.ghosts for t in mine)}, "
               f"double applies {sum(t.double_applies for t in mine)}, "
               f"late effects {sum(t.late_effects for t in mine)} "
               f"({sum(1 for t in mine if t.fenced)} frozen jobs fenced), "
               f"Ansible temporaries left by killed modules {sum(t.ansible_temporaries for t in mine)}"
               + _particulars(operation, mine))


def _particulars(operation: str, mine: list[Trial]) -> str:
    """What only some operations count."""
    if operation == "worker":
        return (f"; workers killed while a module process ran {sum(1 for t in mine if t.module_running)}, "
                f"processes of a killed worker left running {sum(t.survivors for t in mine)}")
    if operation == "oldschema":
        fates = {fate: sum(1 for t in mine if t.old_job == fate)
                 for fate in ("released", "killed while the apply ran", "killed after the apply")}
        return (f"; applies refused under the old job's lock {sum(1 for t in mine if t.refused)}, "
                f"old jobs released {fates['released']}, killed while the apply ran "
                f"{fates['killed while the apply ran']}, killed after it {fates['killed after the apply']}")
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=50, help="trials per operation")
    parser.add_argument("--operations", default=",".join(OPERATIONS))
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000,
                        help="first seed (trial n of each operation uses seed + n)")
    parser.add_argument("--only", action="append", default=[], help="replay one trial: OP:SEED")
    parser.add_argument("--workdir", default=None, help="keep the trials' directories here")
    parser.add_argument("--jobs", type=int, default=1, help="trials run at once")
    arguments = parser.parse_args()
    workdir = Path(arguments.workdir or tempfile.mkdtemp(prefix="hotplay-crash-"))
    workdir.mkdir(parents=True, exist_ok=True)
    only = [(op, int(seed)) for op, seed in (item.split(":") for item in arguments.only)] or None
    print(f"crash campaign: first seed {arguments.seed}, work directory {workdir}", flush=True)
    results = run_campaign(arguments.trials, tuple(arguments.operations.split(",")), arguments.seed,
                           workdir, lambda line: print(line, flush=True), only, arguments.jobs)
    print(json.dumps({"trials": len(results), "failed": sum(1 for t in results if t.problems),
                      "inconsistencies": sum(t.inconsistencies for t in results),
                      "orphans": sum(t.orphans for t in results),
                      "ghosts": sum(t.ghosts for t in results),
                      "double_applies": sum(t.double_applies for t in results),
                      "late_effects": sum(t.late_effects for t in results),
                      "survivors": sum(t.survivors for t in results),
                      "fenced": sum(1 for t in results if t.fenced)}))
    return 1 if any(t.problems for t in results) else 0


if __name__ == "__main__":
    sys.exit(main())
