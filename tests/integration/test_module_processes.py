# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where module resources run ansible-core's task machinery, and what happens to
them when the job dies.

ansible-core's action handlers, templating and plugin loading expect one thread
per process; the engine walks a stack's graph with many.  Each module call runs
in a process of its own, forked from a copy of the task's process taken while it
had one thread (adapters/forked_calls.py).  A probe action plugin beside the
playbook reports, from inside the handler, how many threads its process has.

And a module still running when the job is killed (kill -9 of ansible-playbook
and its worker, as an OOM kill leaves it) dies with it: it must not go on to
change what no row of the store knows."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import yaml

from conftest import BIN, INSTALLED, write_template
from processes import descendants, wait_until

PROBE = '''\
import contextlib
import os
import sqlite3
import threading

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    """Reports the threads and the pid of the process the handler runs in."""

    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result.update(changed=True, id="probe-" + self._task.args["label"],
                      threads=threading.active_count(), pid=os.getpid())
        return result
'''

RESOURCES = 12


def probe_template() -> str:
    resources = {f"probe{i}": {"type": "Hotplay::Ansible::Module",
                               "properties": {"module": "ansible.legacy.thread_probe",
                                              "args": {"label": f"p{i}"}, "delete_args": None}}
                 for i in range(RESOURCES)}
    outputs = {key: {"value": {"list_join": [",", [{"get_attr": [f"probe{i}", key]}
                                                   for i in range(RESOURCES)]]}}
               for key in ("threads", "pid")}
    # list_join of numbers needs strings: str_replace makes them text.
    for output in outputs.values():
        output["value"]["list_join"][1] = [{"str_replace": {"template": "X", "params": {"X": item}}}
                                           for item in output["value"]["list_join"][1]]
    return yaml.safe_dump({"heat_template_version": "2021-04-16", "resources": resources,
                           "outputs": outputs})


def test_each_module_call_runs_alone_in_a_process_of_its_own(tmp_path: Path, run_tasks) -> None:
    (tmp_path / "action_plugins").mkdir()
    (tmp_path / "action_plugins" / "thread_probe.py").write_text(PROBE)
    template = write_template(tmp_path, "probes.yaml", probe_template())
    run = run_tasks([{"name": "Probes", "register": "probes",
                      "hotplay.stacks.stack": {"name": "probes", "template": str(template)}}],
                    env={"PYTHONWARNINGS": "error::DeprecationWarning", "PYTHONDEVMODE": "1"})
    result = run.results["probes"]
    assert result["stack_status"] == "CREATE_COMPLETE", run.stdout
    threads = [int(n) for n in result["outputs"]["threads"].split(",")]
    pids = result["outputs"]["pid"].split(",")
    # Before: the walk's threads ran every handler in the task's own process.
    assert threads == [1] * RESOURCES
    assert len(set(pids)) == RESOURCES
    for text in (run.stdout, run.stderr):
        assert "multi-threaded" not in text and "errantly sent data" not in text


SLOW_SHELL = """\
    heat_template_version: 2021-04-16
    parameters:
      target: {type: string}
      marker: {type: string}
    resources:
      slow:
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.builtin.shell
          args:
            cmd:
              str_replace:
                template: "sleep 6; echo 2 > TARGET # MARKER"
                params: {TARGET: {get_param: target}, MARKER: {get_param: marker}}
          delete_args: null
    """


def start_job(tmp_path: Path, target: Path, marker: str) -> subprocess.Popen[str]:
    template = write_template(tmp_path, "slow.yaml", SLOW_SHELL)
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [{
        "hotplay.stacks.stack": {"name": "slow", "template": str(template),
                                 "store": f"sqlite:///{tmp_path / 'store.db'}",
                                 "parameters": {"target": str(target), "marker": marker}}}]}]
    playbook = tmp_path / "slow.yml"
    playbook.write_text(yaml.safe_dump(play))
    environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
                   "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"),
                   "ANSIBLE_LOCALHOST_WARNING": "false", "PATH": f"{BIN}:{os.environ['PATH']}"}
    environment.pop("PYTHONPATH", None)
    return subprocess.Popen([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                             str(playbook)], cwd=tmp_path, env=environment, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def with_marker(marker: str) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.add(int(entry))
        except OSError:
            continue
    return found


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in descendants(pid):
        try:
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid:
            found.add(entry)
    return found


@pytest.mark.parametrize("victims", ["job-and-worker", "worker-alone"])
def test_a_killed_job_leaves_no_module_running(tmp_path: Path, victims: str) -> None:
    target = tmp_path / "c-2"
    marker = f"hotplay-marker-{uuid.uuid4().hex}"
    job = start_job(tmp_path, target, marker)
    try:
        wait_until(lambda: with_marker(marker), 120, "the shell module to start")
        workers = children_of(job.pid)
        assert workers, "ansible-playbook has no worker"
        killed = workers | ({job.pid} if victims == "job-and-worker" else set())
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        # Before: the module went on, and wrote c-2 six seconds later.
        wait_until(lambda: not with_marker(marker), 10, "the module to die with its job")
        time.sleep(7)
        assert not target.exists()
    finally:
        if job.poll() is None:
            job.kill()
        job.wait(30)
        for pid in with_marker(marker):
            os.kill(pid, signal.SIGKILL)


WAITING = """\
    heat_template_version: 2021-04-16
    resources:
      waits:
        type: OS::Heat::ResourceGroup
        properties:
          count: 150
          resource_def:
            type: OS::Heat::TestResource
            properties: {value: "%index%", wait_secs: 90}
    """


def test_a_task_whose_ansible_playbook_is_gone_stops_and_records_it(tmp_path: Path) -> None:
    """kill -9 of ansible-playbook alone (an OOM kill): its worker, in a session of
    its own, used to go on, until blocked for good writing to the dead controller."""
    template = write_template(tmp_path, "waits.yaml", WAITING)
    store = tmp_path / "store.db"
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [{
        "hotplay.stacks.stack": {"name": "waits", "template": str(template),
                                 "store": f"sqlite:///{store}"}}]}]
    playbook = tmp_path / "waits.yml"
    playbook.write_text(yaml.safe_dump(play))
    environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
                   "ANSIBLE_LOCALHOST_WARNING": "false", "PATH": f"{BIN}:{os.environ['PATH']}"}
    environment.pop("PYTHONPATH", None)
    job = subprocess.Popen([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                            str(playbook)], cwd=tmp_path, env=environment,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        wait_until(lambda: store.exists() and stack_row(store) is not None, 120, "the run to start")
        workers = children_of(job.pid)
        assert workers
        os.kill(job.pid, signal.SIGKILL)
        # Before: the worker waited out its 90 s resources (or blocked for good).
        wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in workers), 40,
                   "the worker to end")
        action, status, reason = stack_row(store)
        assert (action, status) == ("CREATE", "FAILED")
        assert "ansible-playbook process that ran this task is gone" in reason
    finally:
        job.kill()
        for pid in workers | {p for w in workers for p in descendants(w)}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        job.communicate(timeout=30)  # waits, and closes its pipe (the workers held it too)


def stack_row(store: Path) -> tuple[str, str, str] | None:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT action, status, status_reason FROM stacks "
                             "WHERE parent_id IS NULL").fetchone()
    except sqlite3.OperationalError:
        return None  # not made yet
    return None if row is None else tuple(row)
