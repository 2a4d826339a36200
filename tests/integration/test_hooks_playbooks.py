# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Breakpoints through real ansible-playbook runs, cleared from other tasks and
from another ansible-playbook process."""

from __future__ import annotations

import json
import sqlite3
import os
import subprocess
import time
from pathlib import Path

import yaml

from conftest import BIN, HARNESS_ENV, INSTALLED, dump_task, store_rows, write_template
from processes import kill_tree

CHAIN = """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string, default: v1}
    resources:
      a:
        type: OS::Heat::TestResource
        properties: {value: {get_param: value}}
      b:
        type: OS::Heat::TestResource
        depends_on: a
        properties: {value: {get_param: value}}
      c:
        type: OS::Heat::TestResource
        depends_on: b
      free:
        type: OS::Heat::TestResource
    """


def stack(register: str, template: str, **options) -> dict:
    return {"hotplay.stacks.stack": {"name": "hooked", "template": template, **options},
            "register": register}


def hook(register: str, action: str = "list", **options) -> dict:
    return {"hotplay.stacks.stack_hook": {"name": "hooked", "action": action, **options},
            "register": register}


def statuses(result: dict) -> dict[str, str]:
    return {r["name"]: r["status"] for r in result["resources"]}


def test_pause_list_clear_resume_and_refuse(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "chain.yaml", CHAIN))
    env = str(write_template(tmp_path, "env.yaml", """\
        resource_registry:
          resources:
            b: {hooks: pre-create}
        """))
    run = run_tasks([
        stack("paused", template, environment=[env]),
        hook("listed"),
        stack("refused", template, environment=[env], parameters={"value": "other"}),
        hook("cleared", action="clear", resource="b", hook=["pre-create"]),
        stack("resumed", template, environment=[env]),
        stack("updating", template, environment=[env], parameters={"value": "v2"},
              breakpoints=[{"resource": "b", "hook": ["pre-update"]}, {"resource": "free", "hook": ["post-update"]}]),
        hook("cleared_all", action="clear"),
        stack("updated", template, environment=[env], parameters={"value": "v2"},
              breakpoints=[{"resource": "b", "hook": ["pre-update"]}]),
    ])
    r = run.results
    assert r["paused"]["failed"] is False and r["paused"]["stack_status"] == "CREATE_IN_PROGRESS"
    assert r["paused"]["hooks_pending"] == [{"resource": "b", "hook": "pre-create"}]
    assert statuses(r["paused"])["free"] == "CREATE_COMPLETE"
    assert statuses(r["paused"])["c"] == "INIT_COMPLETE"
    assert "[hooked] b: INIT_COMPLETE CREATE paused until Hook pre-create is cleared" in run.stdout
    assert r["listed"]["hooks_pending"] == r["paused"]["hooks_pending"]
    assert r["refused"]["failed"] and "is paused at hooks" in r["refused"]["msg"]
    assert r["cleared"]["hooks"] == [{"resource": "b", "hook": "pre-create"}] and r["cleared"]["changed"]
    assert r["resumed"]["stack_status"] == "CREATE_COMPLETE" and r["resumed"]["revision"] == 1
    updating = r["updating"]
    assert updating["stack_status"] == "UPDATE_IN_PROGRESS"
    assert sorted(h["resource"] for h in updating["hooks_pending"]) == ["b"]
    assert statuses(updating)["a"] == "UPDATE_COMPLETE"
    assert r["updated"]["stack_status"] == "UPDATE_COMPLETE"


def test_hooks_in_nested_stack_and_group_member_and_on_delete(run_tasks, tmp_path):
    write_template(tmp_path, "member.yaml", """\
        heat_template_version: 2016-10-14
        resources:
          inner: {type: OS::Heat::TestResource}
        """)
    env = str(write_template(tmp_path, "env.yaml", """\
        resource_registry:
          resources:
            single:
              inner: {hooks: [pre-create, post-create]}
            group:
              "1": {hooks: pre-create}
        """))
    template = str(write_template(tmp_path, "top.yaml", """\
        heat_template_version: 2016-10-14
        resources:
          single: {type: member.yaml}
          group:
            type: OS::Heat::ResourceGroup
            properties:
              count: 2
              resource_def: {type: OS::Heat::TestResource}
        """))
    run = run_tasks([
        stack("paused", template, environment=[env], nested_depth=1),
        hook("group_cleared", action="clear", resource="group/*"),
        hook("inner_cleared", action="clear", resource="single/inner", hook=["pre-create"]),
        stack("post", template, environment=[env], nested_depth=1),
        hook("post_cleared", action="clear", resource="single/inner", hook=["post-create"]),
        stack("done", template, environment=[env], nested_depth=1),
        {"hotplay.stacks.stack": {"name": "hooked", "state": "absent",
                                  "breakpoints": [{"resource": "group", "hook": ["pre-delete"]}]},
         "register": "delete_paused"},
        hook("delete_cleared", action="clear"),
        {"hotplay.stacks.stack": {"name": "hooked", "state": "absent",
                                  "breakpoints": [{"resource": "group", "hook": ["pre-delete"]}]},
         "register": "deleted"},
    ])
    r = run.results
    assert sorted(h["resource"] for h in r["paused"]["hooks_pending"]) == ["group/1", "single/inner"]
    assert r["post"]["hooks_pending"] == [{"resource": "single/inner", "hook": "post-create"}]
    assert statuses(r["post"])["single/inner"] == "CREATE_COMPLETE"
    assert r["done"]["stack_status"] == "CREATE_COMPLETE"
    assert r["delete_paused"]["stack_status"] == "DELETE_IN_PROGRESS"
    assert r["delete_paused"]["hooks_pending"] == [{"resource": "group", "hook": "pre-delete"}]
    assert r["deleted"]["stack_status"] == "DELETE_COMPLETE"


def test_stepping_through_a_three_resource_chain(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "chain.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          first: {type: OS::Heat::TestResource}
          second: {type: OS::Heat::TestResource, depends_on: first}
          third: {type: OS::Heat::TestResource, depends_on: second}
        """))
    breakpoint_ = [{"resource": "first", "hook": ["pre-create"]}]
    tasks = [stack("start", template, breakpoints=breakpoint_)]
    for number in range(3):
        tasks += [hook(f"step{number}", action="step"),
                  stack(f"after{number}", template, breakpoints=breakpoint_)]
    run = run_tasks(tasks)
    r = run.results
    walked = [h["resource"] for key in ("start", "after0", "after1") for h in r[key]["hooks_pending"]]
    assert walked == ["first", "second", "third"]
    assert statuses(r["after1"]) == {"first": "CREATE_COMPLETE", "second": "CREATE_COMPLETE",
                                     "third": "INIT_COMPLETE"}
    assert r["after2"]["stack_status"] == "CREATE_COMPLETE"


def test_wait_for_hooks_cleared_by_another_ansible_playbook(run_tasks, tmp_path, store_url):
    template = str(write_template(tmp_path, "chain.yaml", CHAIN))
    dump = tmp_path / "waiting.json"
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"hotplay.stacks.stack": {"name": "hooked", "template": template, "store": store_url,
                                  "breakpoints": [{"resource": "b", "hook": ["pre-create"]}],
                                  "wait_for_hooks": 120}, "register": "waited"},
        dump_task(dump, "waited"),
    ]}]
    playbook = tmp_path / "waiting.yml"
    playbook.write_text(yaml.safe_dump(play))
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
           "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), **HARNESS_ENV}
    env.pop("PYTHONPATH", None)
    waiting = subprocess.Popen([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                                str(playbook)], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        db = Path(store_url[len("sqlite:///"):])
        if db.exists() and store_rows(store_url, "SELECT count(*) FROM hooks WHERE status = 'PENDING'")[0][0]:
            break
        time.sleep(0.2)
    clearing = run_tasks([hook("cleared", action="clear")], name="clearing")
    output = waiting.communicate(timeout=180)[0]
    assert waiting.returncode == 0, output
    assert clearing.results["cleared"]["hooks"] == [{"resource": "b", "hook": "pre-create"}]
    waited = json.loads(dump.read_text())
    assert waited["stack_status"] == "CREATE_COMPLETE" and waited["hooks_pending"] == []


def killed_at_its_breakpoint(template: str, store_url: str, tmp_path: Path, breakpoints: list) -> None:
    """An ansible-playbook waiting at a breakpoint (``wait_for_hooks``), SIGKILLed
    with all its processes once its hook is pending."""
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"hotplay.stacks.stack": {"name": "hooked", "template": template, "store": store_url,
                                  "breakpoints": breakpoints, "wait_for_hooks": 300}},
    ]}]
    playbook = tmp_path / "waiting.yml"
    playbook.write_text(yaml.safe_dump(play))
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
           "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python")}
    env.pop("PYTHONPATH", None)
    waiting = subprocess.Popen([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                                str(playbook)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        db = Path(store_url[len("sqlite:///"):])
        while not (db.exists() and store_rows(
                store_url, "SELECT count(*) FROM hooks WHERE status = 'PENDING'")[0][0]):
            assert time.monotonic() < deadline, "the run never reached its breakpoint"
            time.sleep(0.2)
    finally:
        kill_tree(waiting.pid)
        waiting.wait(timeout=30)


def test_an_approval_given_after_the_waiting_run_was_killed_is_kept(run_tasks, tmp_path, store_url):
    """A job killed while it waits at a breakpoint: the hook cleared afterwards (the
    approval) holds for the rerun of the same task; the killed job's revision,
    which no run will finish, is recorded FAILED, not left IN_PROGRESS for ever."""
    template = str(write_template(tmp_path, "chain.yaml", CHAIN))
    breakpoints = [{"resource": "b", "hook": ["pre-create"]}]
    killed_at_its_breakpoint(template, store_url, tmp_path, breakpoints)
    approved = run_tasks([hook("cleared", action="clear")], name="approval")
    assert approved.results["cleared"]["hooks"] == [{"resource": "b", "hook": "pre-create"}]
    rerun = run_tasks([stack("again", template, breakpoints=breakpoints),
                       {"hotplay.stacks.stack_info": {"name": "hooked"}, "register": "info"}],
                      name="rerun")
    again = rerun.results["again"]
    assert again["stack_status"] == "UPDATE_COMPLETE" and again["hooks_pending"] == [], again
    revisions = rerun.results["info"]["stack"]["revisions"]
    assert [(r["revision"], r["status"]) for r in revisions] == [(1, "FAILED"), (2, "COMPLETE")]


def test_the_hook_of_a_killed_run_is_not_pending_after_the_next_run_goes_past_it(run_tasks, tmp_path, store_url):
    """Issue 40, item 9: a job killed while it waits at a breakpoint, then the same
    stack applied with no breakpoint: the resource is made, and the hook list (the
    run's ``hooks_pending``, stack_hook's list, the store) no longer shows the killed
    run's hook as pending; the same breakpoint asked again pauses once, not twice."""
    template = str(write_template(tmp_path, "chain.yaml", CHAIN))
    breakpoints = [{"resource": "b", "hook": ["pre-create"]}]
    killed_at_its_breakpoint(template, store_url, tmp_path, breakpoints)
    assert run_tasks([hook("listed")], name="listed").results["listed"]["hooks"] == [
        {"resource": "b", "hook": "pre-create"}]  # pending while no run has gone past it

    after = run_tasks([stack("past", template), hook("listed")], name="past").results
    assert after["past"]["stack_status"] == "UPDATE_COMPLETE", after["past"].get("msg")
    assert statuses(after["past"])["b"] == "CREATE_COMPLETE" and after["past"]["hooks_pending"] == []
    assert after["listed"]["hooks"] == []
    assert store_rows(store_url, "SELECT count(*) FROM hooks WHERE status = 'PENDING'")[0][0] == 0

    # A breakpoint on a resource that is made already: a create hook never fires again.
    again = run_tasks([stack("again", template, parameters={"value": "v2"},
                             breakpoints=[{"resource": "b", "hook": ["pre-update"]}]),
                       hook("listed")], name="again").results
    assert again["again"]["hooks_pending"] == [{"resource": "b", "hook": "pre-update"}], again["again"]
    assert again["listed"]["hooks"] == [{"resource": "b", "hook": "pre-update"}]


def test_a_killed_runs_revision_is_recorded_failed_when_another_definition_follows(
        run_tasks, tmp_path, store_url):
    template = str(write_template(tmp_path, "chain.yaml", CHAIN))
    first = run_tasks([stack("paused", template, breakpoints=[{"resource": "b", "hook": ["pre-create"]}])],
                      name="first")
    assert first.results["paused"]["hooks_pending"]
    # What a kill -9 between two writes leaves: the revision still IN_PROGRESS.
    with sqlite3.connect(store_url[len("sqlite:///"):]) as db:
        db.execute("UPDATE revisions SET status = 'IN_PROGRESS'")
    second = run_tasks([stack("other", template, parameters={"value": "v2"}, rollback_on_failure=False),
                        {"hotplay.stacks.stack_info": {"name": "hooked"}, "register": "info"}],
                       name="second")
    revisions = second.results["info"]["stack"]["revisions"]
    assert revisions[0]["revision"] == 1 and revisions[0]["status"] == "FAILED"
    assert "stopped before it finished" in revisions[0]["status_reason"]
    assert all(r["status"] != "IN_PROGRESS" for r in revisions)
