# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stack locks are leases with fencing, through real ansible-playbook jobs:

1. PostgreSQL: a job whose database session ends while it lives
   (``idle_session_timeout``, ``pg_terminate_backend``) keeps its lock; a second job
   is refused instead of converging the stack under it.
2. SQLite: a job killed on another host (another hostname and PID namespace, as an
   AWX container) does not keep the lock for ever: the next job takes it over once
   the lease has run out.
3. SQLite: a job on the same hostname but in another PID namespace cannot steal a
   live job's lock.
4. A job whose lease was taken over while it was frozen stops before acting again
   (on another host), or is killed with its modules by the job that takes over
   (on this host: fenced), so a module it had started cannot write over the new
   job's work; what a cloud was making for it, finished after the takeover, is
   recorded (retired) by the run that took over, and deleted by the next run.
5. ``hotplay.stacks.stack_lock`` shows the lock and breaks it, with an event.

"Another host" is made with ``unshare`` (root): its own UTS and PID namespaces,
the same files.  Leases are short (``lock_lease`` in the store URL) to keep the
tests quick."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import BIN, HARNESS_ENV, INSTALLED, REPO, dump_task, write_template
from processes import descendants, kill_tree, wait_until

sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "plugin_utils"))
from pg_backends import pg_server, pg_url  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position

PARAMETERS = """\
    heat_template_version: 2018-08-31
    parameters:
      dir: {type: string}
      version: {type: string}
      wait: {type: number, default: 0}
"""
TEMPLATE = PARAMETERS + """\
    resources:
      slow:
        type: OS::Heat::TestResource
        properties: {value: {get_param: version}, wait_secs: {get_param: wait}}
      marker:   # made after slow; replaced by another version (its name changes)
        type: Hotplay::Local::File
        depends_on: slow
        properties:
          directory: {get_param: dir}
          name: {list_join: ["-", [marker, {get_param: version}]]}
          content: {get_param: version}
    """
SHORT_LEASE = "lock_lease=3&lock_renew=0.5"
STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
# The takeover note of a holder on this host: it and its processes were killed first.
FENCED = r"fenced: stopped and killed its processes \d+(?:, \d+)+ before this run acted"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="other hosts are made with unshare, as root")


class Job:
    """One ansible-playbook job applying the stack ``web`` (in namespaces of its
    own when ``host`` is given), its result read back from a dump file."""

    def __init__(self, folder: Path, name: str, store: str, version: str, wait: float = 0,
                 lock_timeout: int = 0, host: str | None = None, own_pids: bool = False,
                 library: Path | None = None) -> None:
        self.folder, self.name = folder, name
        self.dump = folder / f"{name}.json"
        play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
            {"name": f"Apply web as {name}", "register": "applied", "ignore_errors": True,
             "hotplay.stacks.stack": {
                 "name": "web", "template": str(folder / "web.yaml"), "store": store,
                 "lock_timeout": lock_timeout,
                 "parameters": {"dir": str(folder / "files"), "version": version, "wait": wait}}},
            dump_task(self.dump, "applied")]}]
        playbook = folder / f"{name}.yml"
        playbook.write_text(yaml.safe_dump(play, sort_keys=False))
        command = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)]
        if host is not None:  # another machine: its own hostname and PID namespace
            command = ["unshare", "--uts", "--pid", "--fork", "--mount-proc", "sh", "-c",
                       'hostname "$0" && exec "$@"', host, *command]
        elif own_pids:  # a container sharing the host's hostname (UTS namespace)
            command = ["unshare", "--pid", "--fork", "--mount-proc", *command]
        environment = _environment()
        if library is not None:
            environment["ANSIBLE_LIBRARY"] = str(library)
        self.process = subprocess.Popen(command, cwd=folder, env=environment, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        start_new_session=True)

    def result(self, timeout: float = 300) -> dict[str, Any]:
        output, _none = self.process.communicate(timeout=timeout)
        assert self.process.returncode == 0, output  # failures are ignored so results are kept
        return json.loads(self.dump.read_text())

    def signal(self, number: int) -> None:
        for pid in {self.process.pid} | descendants(self.process.pid):
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        kill_tree(self.process.pid)
        self.process.communicate(timeout=60)


def _environment() -> dict[str, str]:
    environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
                   "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_NOCOLOR": "1",
                   "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"),
                   "PATH": f"{BIN}:{os.environ.get('PATH', '')}", **HARNESS_ENV}
    environment.pop("PYTHONPATH", None)
    return environment


def _sqlite(folder: Path, sql: str) -> list[tuple]:
    path = folder / "store.db"
    if not path.exists():
        return []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10) as db:
        try:
            return db.execute(sql).fetchall()
        except sqlite3.OperationalError:
            return []  # being created


def _slow_in_progress(rows) -> bool:
    return rows == [("IN_PROGRESS",)]


SLOW_STATUS = ("SELECT r.status FROM resources r JOIN stacks s ON s.id = r.stack_id"
               " WHERE s.name = 'web' AND r.name = 'slow'")


def _files(folder: Path) -> dict[str, str]:
    return {f.name: f.read_text() for f in (folder / "files").iterdir()}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_template(tmp_path, "web.yaml", TEMPLATE)
    (tmp_path / "files").mkdir()
    return tmp_path


@pytest.mark.slow
def test_a_job_killed_on_another_host_loses_its_lock_when_its_lease_runs_out(folder):
    store = f"sqlite:///{folder / 'store.db'}"  # the default lease: 30 s

    victim = Job(folder, "victim", store, "a", wait=600, host="job-a")
    try:
        wait_until(lambda: _slow_in_progress(_sqlite(folder, SLOW_STATUS)), 120, "job-a to be working")
    finally:
        victim.kill()  # its container is gone: nothing on this host can see whether it lives
    [(holder_host, expires)] = _sqlite(folder, "SELECT host, expires FROM leases WHERE stack_name = 'web'")
    assert holder_host == "job-a"
    at_once = Job(folder, "at-once", store, "b").result()
    assert at_once["failed"] and not at_once["changed"]
    assert re.match(rf"^Stack \"web\" is locked by ansible-playbook \(\S+, task 'Apply web as victim'\)"
                    rf" \(pid \d+ on job-a, since {STAMP}\); its lease runs until {STAMP} unless renewed$",
                    at_once["msg"]), at_once["msg"]
    # Waiting as long as a lease lasts is enough: no operator needed.
    waited = Job(folder, "waited", store, "b", lock_timeout=60).result()
    assert not waited["failed"], waited["msg"]
    assert waited["stack_status"] == "UPDATE_COMPLETE"  # over the killed create
    assert _files(folder) == {"marker-b": "b"}
    assert time.time() >= expires  # taken over only once the victim's lease had run out
    [(note,)] = _sqlite(folder, "SELECT note FROM leases WHERE stack_name = 'web'")
    assert re.match(r"^took over from ansible-playbook .*'Apply web as victim'\) \(pid \d+ on job-a, "
                    rf"since {STAMP}\), token 1: its lease ran out at {STAMP}; not fenced: its processes are "
                    r"on another host or in another PID namespace, out of this run's reach$", note), note


@pytest.mark.slow
def test_a_live_job_in_another_pid_namespace_with_the_same_hostname_keeps_its_lock(folder):
    store = f"sqlite:///{folder / 'store.db'}?lock_lease=2&lock_renew=0.5"
    holder = Job(folder, "holder", store, "a", wait=20, own_pids=True)
    try:
        wait_until(lambda: _slow_in_progress(_sqlite(folder, SLOW_STATUS)), 120, "the holder to be working")
        time.sleep(3)  # longer than a lease: only its heartbeat keeps the lock
        [(host, pid)] = _sqlite(folder, "SELECT host, pid FROM leases WHERE stack_name = 'web'")
        assert host == os.uname().nodename and pid != holder.process.pid  # its pid in its namespace
        _refused_while_held(folder, holder, store)
    finally:
        if holder.process.poll() is None:
            holder.kill()


def _refused_while_held(folder: Path, holder: Job, store: str) -> None:
    """While ``holder`` works, a second job is refused naming it and changes
    nothing; the holder completes; then the stack is free for the second job."""
    intruder = Job(folder, "intruder", store, "b").result()
    assert intruder["failed"] and not intruder["changed"], intruder
    assert "is locked by ansible-playbook" in intruder["msg"] and "'Apply web as holder'" in intruder["msg"]
    held = holder.result()
    assert not held["failed"], held["msg"]
    assert held["stack_status"] == "CREATE_COMPLETE" and _files(folder) == {"marker-a": "a"}
    after = Job(folder, "after", store, "b").result()
    assert after["stack_status"] == "UPDATE_COMPLETE", after
    assert _files(folder) == {"marker-b": "b"}  # nothing untracked left by either job


def test_a_frozen_job_whose_lease_was_taken_over_stops_before_acting(folder):
    store = f"sqlite:///{folder / 'store.db'}?lock_lease=2&lock_renew=0.5"
    frozen = Job(folder, "frozen", store, "a", wait=3, host="job-a")
    try:
        wait_until(lambda: _slow_in_progress(_sqlite(folder, SLOW_STATUS)), 120, "job-a to be working")
        frozen.signal(signal.SIGSTOP)  # a VM paused, a partition: the job lives, silent
        taker = Job(folder, "taker", store, "b", lock_timeout=30).result()
        assert not taker["failed"], taker["msg"]
        assert _files(folder) == {"marker-b": "b"}
        frozen.signal(signal.SIGCONT)
        woken = frozen.result()
    finally:
        if frozen.process.poll() is None:
            frozen.kill()
    assert woken["failed"]
    assert re.match(rf"^lost the lock on stack web: taken over by ansible-playbook \(\S+, task 'Apply web "
                    rf"as taker'\) \(pid \d+ on \S+, token 2\) at {STAMP}$", woken["msg"]), woken["msg"]
    # It made nothing after it woke, and wrote nothing over what the taker recorded.
    assert _files(folder) == {"marker-b": "b"}
    rows = _sqlite(folder, "SELECT r.name, r.status, r.properties FROM resources r"
                           " JOIN stacks s ON s.id = r.stack_id WHERE s.name = 'web' ORDER BY r.name")
    assert [(name, status, json.loads(properties).get("value", json.loads(properties).get("name")))
            for name, status, properties in rows] == [("marker", "COMPLETE", "marker-b"),
                                                      ("slow", "COMPLETE", "b")]
    assert _sqlite(folder, "SELECT status FROM stacks WHERE name = 'web'") == [("COMPLETE",)]


# A module that asks "a cloud" to make a file and waits for it: the cloud (a process
# of its own, outside the job, as a real cloud is) makes it once the test lets it
# (the file ``go-NAME`` beside the files).  So the thing is finished after the job that
# asked for it lost its lock, whatever the job's own processes do meanwhile.
CLOUD_FILE_MODULE = """\
import os
import time

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={
        'path': {'type': 'str', 'required': True}, 'content': {'type': 'str', 'default': ''},
        'state': {'type': 'str', 'default': 'present', 'choices': ['present', 'absent']}})
    path = module.params['path']
    if module.params['state'] == 'absent':
        if os.path.exists(path):
            os.unlink(path)
        module.exit_json(changed=True)
    go = os.path.join(os.path.dirname(os.path.dirname(path)), 'go-' + os.path.basename(path))
    child = os.fork()
    if child == 0:  # the cloud: detached twice, so it is no process of the job
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for descriptor in (0, 1, 2):
                os.dup2(null, descriptor)
            while not os.path.exists(go):
                time.sleep(0.1)
            with open(path, 'w') as made:
                made.write(module.params['content'])
        os._exit(0)
    # Say "asked" only once the cloud is no descendant of the job (its parent has
    # exited): a test that then freezes the job and its descendants (SIGSTOP) must
    # not freeze the cloud too, as it did when the machine was busy.
    os.waitpid(child, 0)
    os.close(os.open(go.replace('go-', 'asked-'), os.O_CREAT | os.O_WRONLY, 0o600))
    while not os.path.exists(path):
        time.sleep(0.1)
    module.exit_json(changed=True, path=path)


if __name__ == '__main__':
    main()
"""

CLOUD_TEMPLATE = PARAMETERS + """\
    resources:
      made:     # made by "the cloud"; replaced by another version (its name changes)
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.legacy.cloud_file
          args:
            path: &made_path {list_join: ["/", [{get_param: dir}, {list_join: ["-", [made, {get_param: version}]]}]]}
            content: {get_param: version}
          delete_module: ansible.legacy.cloud_file
          delete_args: {path: *made_path, state: absent}
    """

MADE_ROWS = ("SELECT r.action, r.status, r.physical_id, r.retired_in FROM resources r"
             " JOIN stacks s ON s.id = r.stack_id WHERE s.name = 'web' ORDER BY r.retired_in")


@pytest.mark.slow
def test_what_a_frozen_job_was_making_when_taken_over_is_kept_and_deleted(folder):
    library = folder / "library"
    library.mkdir()
    (library / "cloud_file.py").write_text(CLOUD_FILE_MODULE)
    write_template(folder, "web.yaml", CLOUD_TEMPLATE)
    for name in ("made-a", "made-c"):  # made at once; made-b only when the test says
        (folder / f"go-{name}").touch()
    store = f"sqlite:///{folder / 'store.db'}?lock_lease=2&lock_renew=0.5"
    assert Job(folder, "first", store, "a", library=library).result()["stack_status"] == "CREATE_COMPLETE"
    late = str(folder / "files" / "made-b")
    frozen = Job(folder, "frozen", store, "b", library=library)
    try:
        # Frozen once its module has asked the cloud for made-b and waits for it.
        wait_until((folder / "asked-made-b").exists, 120, "the frozen job to ask for made-b")
        assert ("CREATE", "IN_PROGRESS", late, 0) in _sqlite(folder, MADE_ROWS)  # claimed first
        frozen.signal(signal.SIGSTOP)
        taker = Job(folder, "taker", store, "c", lock_timeout=30, library=library).result()
        assert not taker["failed"], taker["msg"]
        assert _files(folder) == {"made-c": "c"}
        # The cloud finishes what the frozen job asked for: after the takeover.
        (folder / "go-made-b").touch()
        wait_until(lambda: os.path.exists(late), 30, "the cloud to make made-b")
        # Not untracked: the taker kept the frozen job's claim, retired and deleted once.
        rows = _sqlite(folder, MADE_ROWS)
        assert ("CREATE", "COMPLETE", str(folder / "files" / "made-c"), 0) in rows, rows
        assert [r for r in rows if r[2] == late and r[3] > 0] == [("DELETE", "COMPLETE", late, 3)], rows
        frozen.signal(signal.SIGCONT)
        output, _none = frozen.process.communicate(timeout=120)
    finally:
        if frozen.process.poll() is None:
            frozen.kill()
    # Its own processes were killed by the taker (this host); the cloud's were not.
    assert frozen.process.returncode != 0 and not frozen.dump.exists(), output
    [event] = [e for e in taker["events"] if e["action"] == "LOCK"]
    assert event["status"] == "TAKEN_OVER" and event["resource_name"] == "web"
    assert re.match(r"^Lock taken over by ansible-playbook \(\S+, task 'Apply web as taker'\) \(pid \d+ "
                    r"on \S+, token 3\) from ansible-playbook \(\S+, task 'Apply web as frozen'\) "
                    rf"\(pid \d+ on \S+, since {STAMP}\), token 2: its lease ran out at {STAMP}; {FENCED}$",
                    event["reason"]), event["reason"]
    # The next run deletes the late thing, and only then forgets it.
    again = Job(folder, "again", store, "c", library=library).result()
    assert again["changed"] and not again["failed"], again
    assert _files(folder) == {"made-c": "c"}
    assert [r[:3] for r in _sqlite(folder, MADE_ROWS)] == [("CREATE", "COMPLETE", str(folder / "files" / "made-c"))]
    settled = Job(folder, "settled", store, "c", library=library).result()
    assert not settled["changed"], settled


# A module that changes a file in place slowly: it says it started, waits, then
# writes the content and logs the write (so a late write cannot hide behind an
# equal content).
SLOW_WRITE_MODULE = """\
import os
import time

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={
        'path': {'type': 'str', 'required': True}, 'content': {'type': 'str', 'default': ''},
        'seconds': {'type': 'float', 'default': 0},
        'state': {'type': 'str', 'default': 'present', 'choices': ['present', 'absent']}})
    path = module.params['path']
    if module.params['state'] == 'absent':
        if os.path.exists(path):
            os.unlink(path)
        module.exit_json(changed=True)
    folder = os.path.dirname(os.path.dirname(path))
    open(os.path.join(folder, 'started-' + module.params['content']), 'w').close()
    time.sleep(module.params['seconds'])
    with open(path, 'w') as written:
        written.write(module.params['content'])
    with open(os.path.join(folder, 'writes.log'), 'a') as log:
        log.write(module.params['content'] + '\\n')
    module.exit_json(changed=True, path=path)


if __name__ == '__main__':
    main()
"""

SLOW_WRITE_TEMPLATE = PARAMETERS + """\
    resources:
      settings:  # one file, changed in place by each version
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.legacy.slow_write
          args:
            path: &settings_path {list_join: ["/", [{get_param: dir}, settings]]}
            content: {get_param: version}
            seconds: {get_param: wait}
          update_in_place: [content, seconds]
          delete_module: ansible.legacy.slow_write
          delete_args: {path: *settings_path, state: absent}
    """


@pytest.mark.parametrize("version", ["c", "b"])
def test_a_frozen_job_on_this_host_is_fenced_so_its_module_cannot_write_over_the_taker(folder, version):
    """Frozen while its module changes a file in place, a job's lease is taken over;
    the job that takes over kills it and its module first (they run on this host,
    in this PID namespace), then applies its own version (another, or the same:
    what the frozen job left UPDATE IN_PROGRESS is applied again all the same).
    Woken, the frozen job is dead: the file keeps the taker's content, written
    once by the taker, and the frozen job's write never lands."""
    library = folder / "library"
    library.mkdir()
    (library / "slow_write.py").write_text(SLOW_WRITE_MODULE)
    write_template(folder, "web.yaml", SLOW_WRITE_TEMPLATE)
    store = f"sqlite:///{folder / 'store.db'}?lock_lease=2&lock_renew=0.5"
    assert Job(folder, "first", store, "a", library=library).result()["stack_status"] == "CREATE_COMPLETE"
    frozen = Job(folder, "frozen", store, "b", wait=4, library=library)
    try:
        wait_until((folder / "started-b").exists, 120, "the frozen job's module to start")
        frozen.signal(signal.SIGSTOP)  # mid-module: its write of "b" is 4 s away
        taker = Job(folder, "taker", store, version, lock_timeout=30, library=library).result()
        assert not taker["failed"], taker["msg"]
        assert _files(folder) == {"settings": version}
        frozen.signal(signal.SIGCONT)
        output, _none = frozen.process.communicate(timeout=120)
        time.sleep(5)  # longer than what was left of the frozen module's wait
    finally:
        if frozen.process.poll() is None:
            frozen.kill()
    assert frozen.process.returncode != 0 and not frozen.dump.exists(), output  # its worker was killed
    assert _files(folder) == {"settings": version}
    assert (folder / "writes.log").read_text() == f"a\n{version}\n"  # the frozen "b" never written
    [event] = [e for e in taker["events"] if e["action"] == "LOCK"]
    assert event["status"] == "TAKEN_OVER"
    assert re.match(r"^Lock taken over by ansible-playbook \(\S+, task 'Apply web as taker'\) \(pid \d+ "
                    r"on \S+, token 3\) from ansible-playbook \(\S+, task 'Apply web as frozen'\) "
                    rf"\(pid \d+ on \S+, since {STAMP}\), token 2: its lease ran out at {STAMP}; {FENCED}$",
                    event["reason"]), event["reason"]
    rows = _sqlite(folder, "SELECT r.status, r.properties FROM resources r JOIN stacks s"
                           " ON s.id = r.stack_id WHERE s.name = 'web' AND r.retired_in = 0")
    assert [(st, json.loads(p)["args"]["content"]) for st, p in rows] == [("COMPLETE", version)]
    again = Job(folder, "again", store, version, library=library).result()
    assert not again["changed"], again  # settled: nothing left for the next run


HOLD_THE_WRITE_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute('BEGIN IMMEDIATE')
db.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
print('inside', flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_a_job_stopped_inside_a_sqlite_write_is_named_not_a_raw_database_is_locked(folder):
    """A job frozen inside a write keeps SQLite's lock on the whole store file, which
    no lease takes over: the store still opens and is read (the operator can look),
    and a run that must write fails, after SQLite's busy timeout (30 s), naming the
    store and the process, and saying what to do.  Once it is gone, runs go on."""
    store = f"sqlite:///{folder / 'store.db'}?{SHORT_LEASE}"
    assert Job(folder, "first", store, "a").result()["stack_status"] == "CREATE_COMPLETE"
    frozen = subprocess.Popen([sys.executable, "-c", HOLD_THE_WRITE_LOCK, str(folder / "store.db")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert frozen.stdout.readline() == "inside\n"
        os.kill(frozen.pid, signal.SIGSTOP)
        looked, blocked = folder / "looked.json", Job(folder, "blocked", store, "b")
        done = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", "/dev/stdin"],
                              input=yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
                                  {"hotplay.stacks.stack_lock": {"name": "web", "store": store},
                                   "register": "lock"},
                                  dump_task(looked, "lock")]}]),
                              cwd=folder, env=_environment(), capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stdout
        assert json.loads(looked.read_text())["lock"]["token"] == 1  # read while the write is held
        refused = blocked.result()
    finally:
        frozen.kill()
        frozen.communicate()  # waits, and closes its pipes
    assert refused["failed"] and not refused["changed"]
    assert re.match(rf"^the store {re.escape(str(folder / 'store.db'))} is locked: process {frozen.pid} on "
                    r"this host has held the store's write lock for over 30 s without finishing its write: "
                    r"a job stopped or hung inside a write \(a paused VM, SIGSTOP, a hung file system\)\. "
                    r"This is SQLite's lock on the whole store file, not a stack's lock: "
                    r"hotplay\.stacks\.stack_lock cannot break it\. Stop that process, or let it go on; its "
                    r"unfinished write is rolled back, and then the store is free$", refused["msg"]), refused["msg"]
    assert _files(folder) == {"marker-a": "a"}
    assert Job(folder, "after", store, "b").result()["stack_status"] == "UPDATE_COMPLETE"
    assert _files(folder) == {"marker-b": "b"}


def test_stack_lock_shows_the_holder_and_breaks_the_lock_with_an_event(folder):
    store = f"sqlite:///{folder / 'store.db'}?{SHORT_LEASE}"
    hung = Job(folder, "hung", store, "a", wait=600, host="job-a")
    try:
        wait_until(lambda: _slow_in_progress(_sqlite(folder, SLOW_STATUS)), 120, "job-a to be working")
        operator = folder / "operator.yml"
        dump = folder / "operator.json"
        operator.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
            {"name": "Who holds it", "register": "query",
             "hotplay.stacks.stack_lock": {"name": "web", "store": store}},
            {"name": "No reason", "register": "unreasoned", "ignore_errors": True,
             "hotplay.stacks.stack_lock": {"name": "web", "store": store, "state": "broken"}},
            {"name": "Break it", "register": "broken",
             "hotplay.stacks.stack_lock": {"name": "web", "store": store, "state": "broken",
                                           "reason": "job-a hangs on a dead NFS mount (INC-7)"}},
            {"name": "Break it again", "register": "again",
             "hotplay.stacks.stack_lock": {"name": "web", "store": store, "state": "broken",
                                           "reason": "twice"}},
            {"name": "Apply at once", "register": "applied",
             "hotplay.stacks.stack": {"name": "web", "template": str(folder / "web.yaml"), "store": store,
                                      "parameters": {"dir": str(folder / "files"), "version": "b"}}},
            {"name": "Events", "register": "info",
             "hotplay.stacks.stack_info": {"name": "web", "store": store}},
            dump_task(dump, "{'query': query, 'unreasoned': unreasoned, 'broken': broken, "
                            "'again': again, 'applied': applied, 'info': info}")]}]))
        done = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                               str(operator)], cwd=folder, env=_environment(), capture_output=True,
                              text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout
        hung_result = hung.result()  # told at its next renewal: it stops
    finally:
        if hung.process.poll() is None:
            hung.kill()
    found = json.loads(dump.read_text())
    lock = found["query"]["lock"]
    assert not found["query"]["changed"] and lock["held"] and lock["host"] == "job-a"
    assert lock["holder"].endswith("task 'Apply web as hung')") and lock["token"] == 1
    assert re.match(STAMP, lock["since"]) and re.match(STAMP, lock["expires"])
    assert found["unreasoned"]["failed"] and "state=broken needs a reason" in found["unreasoned"]["msg"]
    broken = found["broken"]
    assert broken["changed"] and broken["broken"]["holder"] == lock["holder"]
    assert broken["lock"]["token"] == 2 and not broken["lock"]["held"]
    assert broken["lock"]["holder"].endswith("task 'Break it')")
    assert broken["lock"]["note"] == "broken: job-a hangs on a dead NFS mount (INC-7)"
    [event] = broken["events"]
    assert (event["resource_name"], event["action"], event["status"]) == ("web", "LOCK", "BROKEN")
    assert event["reason"].startswith("Lock broken by ansible-playbook (") and \
        "task 'Break it'): job-a hangs on a dead NFS mount (INC-7) (it was held by " in event["reason"]
    assert not found["again"]["changed"] and found["again"]["broken"] is None
    assert found["applied"]["stack_status"] == "UPDATE_COMPLETE", found["applied"]  # at once
    assert any(e["action"] == "LOCK" and e["status"] == "BROKEN" for e in found["info"]["stack"]["events"])
    assert hung_result["failed"]
    # The hung job names whoever holds the lease when it looks: the break, or (when
    # the next apply took the lock first, as it may on a loaded machine) that apply.
    broken_by = (rf"broken by ansible-playbook \(\S+, task 'Break it'\) at {STAMP}: "
                 r"job-a hangs on a dead NFS mount \(INC-7\)")
    taken_by = rf"taken over by ansible-playbook \(\S+, task 'Apply at once'\) \(pid \d+ on \S+, token 3\) at {STAMP}"
    assert re.match(rf"^lost the lock on stack web: (?:{broken_by}|{taken_by})$", hung_result["msg"]), hung_result
    assert _files(folder) == {"marker-b": "b"}


def _pg_rows(url: str, sql: str, args: tuple = ()) -> list[tuple]:
    import psycopg  # pylint: disable=import-outside-toplevel

    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(sql, args)
        return cursor.fetchall() if cursor.description else []


@pytest.mark.slow
def test_postgres_a_job_whose_session_ends_keeps_its_lock(folder, pg_url, pg_server):
    admin = pg_server["DATABASE_URL"]
    database = pg_url.rsplit("/", 1)[1]
    # Sessions idle for 2 s are ended by the server, as a cautious DBA sets it.
    _pg_rows(admin, f'ALTER DATABASE "{database}" SET idle_session_timeout = \'2s\'')
    holder = Job(folder, "holder", pg_url, "a", wait=20)
    try:
        slow = ("SELECT r.status FROM resources r JOIN stacks s ON s.id = r.stack_id"
                " WHERE s.name = 'web' AND r.name = 'slow'")
        wait_until(lambda: _pg_tables(pg_url) and _slow_in_progress(_pg_rows(pg_url, slow)), 120,
                   "the holder to be working")
        # And its session, if still there, is ended by hand too.
        _pg_rows(admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE application_name LIKE 'hotplay.stacks%%' AND datname = %s", (database,))
        time.sleep(3)  # past the idle timeout of any session it opened since
        _refused_while_held(folder, holder, pg_url)
    finally:
        if holder.process.poll() is None:
            holder.kill()
    assert _pg_rows(pg_url, "SELECT token, expires FROM leases WHERE stack_name = 'web'") == [(2, 0.0)]


def _pg_tables(url: str) -> bool:
    return bool(_pg_rows(url, "SELECT 1 FROM pg_tables WHERE tablename = 'leases'"))
