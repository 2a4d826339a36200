# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40, items 3 and 7: a cloud endpoint that accepts connections and never
answers, and one that refuses the login.

A stack of a native OpenStack type, its ``timeout`` 5 s, against a clouds.yaml whose
Keystone is such a listener (no cloud needed): the task ends when its timeout is
reached, with one message, instead of hanging in the login (it ran for minutes, and
its worker kept the stack's lock); no process of the job is left, and the next job
gets the stack.  The login comes before anything of the stack is recorded: a
refused one, like a silent one, records no stack."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from silent_endpoint import silent_endpoint

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  net:
    type: OS::Neutron::Net
"""
# Heat's abandon data of a stack of TEMPLATE.
ABANDONED = {
    "name": "web", "id": "dddddddd-0000-4000-8000-000000000005", "action": "CREATE",
    "status": "COMPLETE", "environment": {"parameters": {}},
    "template": {"heat_template_version": "2018-08-31", "resources": {"net": {"type": "OS::Neutron::Net"}}},
    "files": {}, "project_id": "demo", "stack_user_project_id": "x", "tags": [],
    "resources": {"net": {"name": "net", "resource_id": "6a1c1a52-51d5-4b3a-9a4f-2b8e0c7d0e11",
                          "type": "OS::Neutron::Net", "action": "CREATE", "status": "COMPLETE",
                          "metadata": {}, "resource_data": {}}}}


@pytest.fixture
def silent_keystone() -> Iterator[str]:
    """The auth URL of a listener that accepts every connection and never answers."""
    with silent_endpoint() as url:
        yield url


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


def silent_clouds(tmp_path: Path, auth_url: str) -> Path:
    """A clouds.yaml of the cloud ``silent`` whose Keystone is at ``auth_url``; its
    api_timeout an hour: only the task's timeout can end a call in time."""
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(
        "clouds:\n  silent:\n    api_timeout: 3600\n    auth:\n"
        f"      auth_url: {auth_url}\n"
        "      username: demo\n      password: x\n      project_name: demo\n"
        "      user_domain_name: Default\n      project_domain_name: Default\n")
    return clouds


def test_a_silent_cloud_ends_the_task_at_its_timeout_and_records_no_stack(
        tmp_path: Path, run_tasks, silent_keystone: str) -> None:
    (tmp_path / "net.yaml").write_text(TEMPLATE)
    env = {"OS_CLIENT_CONFIG_FILE": str(silent_clouds(tmp_path, silent_keystone))}
    task = {"name": "apply", "register": "applied",
            "hotplay.stacks.stack": {"name": "silent", "template": str(tmp_path / "net.yaml"),
                                     "cloud": "silent", "timeout": 5}}
    began = time.monotonic()
    run = run_tasks([task], name="apply", env=env)
    took = time.monotonic() - began
    applied = run.results["applied"]
    assert applied["failed"] and "stack_status" not in applied, applied
    assert applied["msg"] == "cloud silent: no answer within the task's timeout", applied["msg"]
    # Not the login's hour: the task ended by its own time limit (generously measured:
    # a loaded machine takes seconds to start ansible-playbook).
    assert took < 120, f"the task took {took:.0f} s"
    assert job_processes(tmp_path / "apply.yml") == []
    assert run_tasks([{"name": "info", "register": "info", "hotplay.stacks.stack_info": {"name": "silent"}}],
                     name="info").results["info"]["exists"] is False


class NetworkLookups:
    """The adoption's cloud session in ``adopted_in_this_process``: Neutron shows the
    adopted network, in the session's project."""

    project_id = "demo-project"

    def request(self, service: str, method: str, path: str, *args: Any, **options: Any) -> Any:
        assert (service, method) == ("network", "GET"), (service, method, path)
        return {"network": {"id": path.rsplit("/", 1)[1], "project_id": self.project_id}}

    def remember(self, key: Any, compute: Any) -> Any:
        return compute()


def adopted_in_this_process(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The set-up of a test about a delete: ABANDONED adopted into the test's store by
    the engine in this process, the adoption's lookup of the network answered by a
    fake (the test's cloud answers nothing, and an adoption looks each id up first)."""
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations import adopt
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

    @contextlib.contextmanager
    def session(_cloud: str | None) -> Iterator[NetworkLookups]:
        yield NetworkLookups()

    monkeypatch.setattr(adopt, "cloud_session", session)
    store = open_store(store_url)
    try:
        request = adopt.AdoptRequest("web", read_abandon(ABANDONED, "web.json"), "web.json")
        assert adopt.adopt_stack(store, request, "set-up").as_dict()["stack_status"] == "ADOPT_COMPLETE"
    finally:
        store.close()


def test_a_silent_cloud_ends_a_delete_at_its_timeout_and_the_next_job_gets_the_stack(
        tmp_path: Path, run_tasks, store_url: str, silent_keystone: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cloud goes silent during the run (a delete of a stack adopted from Heat's
    abandon data: the first call of the run is the delete's): Heat's "Timed out", and
    the stack's lock is let go with the job (the next delete is not refused as locked)."""
    env = {"OS_CLIENT_CONFIG_FILE": str(silent_clouds(tmp_path, silent_keystone))}
    adopted_in_this_process(store_url, monkeypatch)
    delete = {"name": "delete", "register": "deleted",
              "hotplay.stacks.stack": {"name": "web", "state": "absent", "cloud": "silent", "timeout": 5}}
    began = time.monotonic()
    deleted = run_tasks([delete], name="delete", env=env).results["deleted"]
    took = time.monotonic() - began
    assert deleted["failed"] and deleted["stack_status"] == "DELETE_FAILED", deleted
    assert deleted["stack_status_reason"] == "Resource DELETE failed: DELETE aborted (Timed out)", \
        deleted["stack_status_reason"]
    assert took < 120, f"the task took {took:.0f} s"
    assert job_processes(tmp_path / "delete.yml") == []
    again = run_tasks([delete], name="again", env=env).results["deleted"]
    assert again["stack_status"] == "DELETE_FAILED", again.get("msg")  # not refused as locked


def test_a_refused_login_records_no_stack(tmp_path: Path, run_tasks) -> None:
    """Issue 40, item 7: a cloud whose login fails (nothing listens at its auth URL)
    fails the task as a validation error does, and records no stack (it recorded a
    CREATE_FAILED stack where nothing was made)."""
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(
        "clouds:\n  closed:\n    auth:\n      auth_url: http://127.0.0.1:9/v3\n"
        "      username: demo\n      password: x\n      project_name: demo\n"
        "      user_domain_name: Default\n      project_domain_name: Default\n")
    (tmp_path / "net.yaml").write_text(TEMPLATE)
    tasks = [{"name": "apply", "register": "applied",
              "hotplay.stacks.stack": {"name": "closed", "template": str(tmp_path / "net.yaml"),
                                       "cloud": "closed"}},
             {"name": "info", "register": "info", "hotplay.stacks.stack_info": {"name": "closed"}}]
    run = run_tasks(tasks, env={"OS_CLIENT_CONFIG_FILE": str(clouds)})
    applied, info = run.results["applied"], run.results["info"]
    assert applied["failed"] and applied["msg"].startswith("cloud closed: "), applied["msg"]
    assert "stack_status" not in applied, applied
    assert info["exists"] is False, info
