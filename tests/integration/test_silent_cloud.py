# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40, item 3: a cloud endpoint that accepts connections and never answers.

A stack of a native OpenStack type, its ``timeout`` 5 s, against a clouds.yaml whose
Keystone is such a listener (no cloud needed): the task ends with Heat's "Timed out"
instead of hanging in the login (it ran for minutes, and its worker kept the stack's
lock), no process of the job is left, and the next job gets the stack."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  net:
    type: OS::Neutron::Net
"""


@pytest.fixture
def silent_keystone() -> Iterator[str]:
    """The auth URL of a listener that accepts every connection and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v3"
    stop.set()
    thread.join()
    for connection in accepted:
        connection.close()
    listener.close()


def job_processes(playbook: Path) -> list[int]:
    """The processes running ``playbook`` (ansible-playbook and its workers)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and str(playbook).encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


def test_a_silent_cloud_ends_the_task_at_its_timeout_and_leaves_the_stack_free(
        tmp_path: Path, run_tasks, silent_keystone: str) -> None:
    clouds = tmp_path / "clouds.yaml"
    # An hour of api_timeout: only the stack's timeout can end the login in time.
    clouds.write_text(
        "clouds:\n  silent:\n    api_timeout: 3600\n    auth:\n"
        f"      auth_url: {silent_keystone}\n"
        "      username: demo\n      password: x\n      project_name: demo\n"
        "      user_domain_name: Default\n      project_domain_name: Default\n")
    (tmp_path / "net.yaml").write_text(TEMPLATE)
    env = {"OS_CLIENT_CONFIG_FILE": str(clouds)}
    task = {"name": "apply", "register": "applied",
            "hotplay.stacks.stack": {"name": "silent", "template": str(tmp_path / "net.yaml"),
                                     "cloud": "silent", "timeout": 5}}
    began = time.monotonic()
    run = run_tasks([task], name="apply", env=env)
    took = time.monotonic() - began
    applied = run.results["applied"]
    assert applied["failed"] and applied["stack_status"] == "CREATE_FAILED", applied
    assert applied["stack_status_reason"] == "Timed out", applied["stack_status_reason"]
    # Not the login's hour: the run ended by its own time limit (generously measured:
    # a loaded machine takes seconds to start ansible-playbook).
    assert took < 120, f"the task took {took:.0f} s"
    assert job_processes(tmp_path / "apply.yml") == []

    # The next job gets the stack (its lock was let go) and deletes it: nothing was made.
    delete = {"name": "delete", "register": "deleted",
              "hotplay.stacks.stack": {"name": "silent", "state": "absent", "cloud": "silent",
                                       "timeout": 5}}
    deleted = run_tasks([delete], name="delete", env=env).results["deleted"]
    assert not deleted.get("failed"), deleted.get("msg")
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted
