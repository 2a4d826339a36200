# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Breakpoints (Heat's hooks), in-process: pause, clear, step, resume."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.hooks import clear_hooks
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

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


@pytest.fixture
def store(tmp_path: Path):
    opened = SqliteStore(str(tmp_path / "store.db"))
    yield opened
    opened.close()


class Stack:
    def __init__(self, store: SqliteStore, folder: Path) -> None:
        self.store, self.folder = store, folder
        self.count = 0

    def write(self, name: str, text: str) -> str:
        path = self.folder / name
        path.write_text(textwrap.dedent(text))
        return str(path)

    def apply(self, text: str = CHAIN, **request: Any) -> dict[str, Any]:
        self.count += 1
        template = self.write(f"t{self.count}.yaml", text)
        request.setdefault("nested_depth", 2)
        return apply_stack(self.store, ApplyRequest(name="s", template=template, **request),
                           "test").as_dict()

    def env(self, text: str) -> list[str]:
        return [self.write("env.yaml", text)]


@pytest.fixture
def stack(store, tmp_path) -> Stack:
    return Stack(store, tmp_path)


def statuses(result: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["status"] for r in result["resources"]}


def test_pre_create_pauses_the_branch_while_independent_ones_finish(stack, store):
    env = stack.env("resource_registry:\n  resources:\n    b:\n      hooks: pre-create\n")
    paused = stack.apply(environment=env)
    assert paused["failed"] is False and paused["changed"] is True
    assert paused["stack_status"] == "CREATE_IN_PROGRESS"
    assert paused["hooks_pending"] == [{"resource": "b", "hook": "pre-create"}]
    assert statuses(paused) == {"a": "CREATE_COMPLETE", "b": "INIT_COMPLETE",
                                "c": "INIT_COMPLETE", "free": "CREATE_COMPLETE"}
    # Heat's event: the resource keeps its state, the reason says why it waits.
    assert {"resource_name": "b", "action": "INIT", "status": "COMPLETE",
            "reason": "CREATE paused until Hook pre-create is cleared"}.items() <= next(
        e for e in paused["events"] if e["resource_name"] == "b").items()
    again = stack.apply(environment=env)  # not cleared: still paused, nothing redone
    assert again["hooks_pending"] == paused["hooks_pending"]
    assert {e["resource_name"] for e in again["events"]} <= {"s"}
    cleared = clear_hooks(store, "s", "b")
    assert [c.as_dict() for c in cleared] == [{"resource": "b", "hook": "pre-create"}]
    done = stack.apply(environment=env)
    assert done["stack_status"] == "CREATE_COMPLETE" and done["hooks_pending"] == []
    touched = [e["resource_name"] for e in done["events"]]
    assert "a" not in touched and "free" not in touched and "c" in touched
    reasons = [e.reason for e in store.events(store.find_stack("s").id) if e.resource_name == "b"]
    assert "Hook pre-create is cleared" in reasons
    assert done["revision"] == 1  # the paused run went on in its own revision


def test_breakpoints_from_the_task_pre_update_and_post_create(stack, store):
    created = stack.apply(breakpoints=[("a", "post-create")])
    assert created["hooks_pending"] == [{"resource": "a", "hook": "post-create"}]
    assert statuses(created)["a"] == "CREATE_COMPLETE" and statuses(created)["b"] == "INIT_COMPLETE"
    clear_hooks(store, "s")
    assert stack.apply(breakpoints=[("a", "post-create")])["stack_status"] == "CREATE_COMPLETE"
    paused = stack.apply(parameters={"value": "v2"}, breakpoints=[("b", "pre-update")])
    assert paused["stack_status"] == "UPDATE_IN_PROGRESS"
    assert paused["hooks_pending"] == [{"resource": "b", "hook": "pre-update"}]
    assert statuses(paused)["a"] == "UPDATE_COMPLETE" and statuses(paused)["b"] == "CREATE_COMPLETE"
    event = next(e for e in paused["events"] if e["resource_name"] == "b")
    assert event["reason"] == "UPDATE paused until Hook pre-update is cleared"


def test_a_different_definition_is_refused_while_paused(stack):
    stack.apply(breakpoints=[("b", "pre-create")])
    refused = stack.apply(parameters={"value": "other"})
    assert refused["failed"] and refused["changed"] is False
    assert "is paused at hooks" in refused["msg"] and "stack_hook" in refused["msg"]
    assert "stack_rollback" in refused["msg"]


def test_hooks_inside_a_nested_stack_and_a_group_member(stack, store):
    stack.write("member.yaml", """\
        heat_template_version: 2016-10-14
        resources:
          inner: {type: OS::Heat::TestResource}
        """)
    env = stack.env("""\
        resource_registry:
          resources:
            single:
              inner:
                hooks: pre-create
            group:
              "1":
                hooks: pre-create
        """)
    text = """\
        heat_template_version: 2016-10-14
        resources:
          single: {type: member.yaml}
          group:
            type: OS::Heat::ResourceGroup
            properties:
              count: 2
              resource_def: {type: OS::Heat::TestResource}
        """
    paused = stack.apply(text, environment=env)
    assert sorted(h["resource"] for h in paused["hooks_pending"]) == ["group/1", "single/inner"]
    assert statuses(paused)["group/0"] == "CREATE_COMPLETE"
    assert statuses(paused)["single"] == "CREATE_IN_PROGRESS"
    clear_hooks(store, "s", "group/*")
    partly = stack.apply(text, environment=env)
    assert partly["hooks_pending"] == [{"resource": "single/inner", "hook": "pre-create"}]
    assert statuses(partly)["group"] == "CREATE_COMPLETE"
    clear_hooks(store, "s", "single/inner", ["pre-create"])
    done = stack.apply(text, environment=env)
    assert done["stack_status"] == "CREATE_COMPLETE"
    assert statuses(done)["single"] == "CREATE_COMPLETE"


def test_stepping_through_a_chain(stack, store):
    paused = stack.apply(breakpoints=[("a", "pre-create")])
    walked = [h["resource"] for h in paused["hooks_pending"]]
    for _step in range(3):
        clear_hooks(store, "s", step=True)
        result = stack.apply(breakpoints=[("a", "pre-create")])
        walked.extend(h["resource"] for h in result["hooks_pending"])
    assert walked == ["a", "b", "c"]
    clear_hooks(store, "s")  # run to completion
    assert stack.apply(breakpoints=[("a", "pre-create")])["stack_status"] == "CREATE_COMPLETE"


def test_resume_after_a_hook_on_delete(stack, store):
    stack.apply()
    paused = delete_stack(store, DeleteRequest("s", breakpoints=(("b", "pre-delete"),)), "t").as_dict()
    assert paused["stack_status"] == "DELETE_IN_PROGRESS" and not paused["failed"]
    assert paused["hooks_pending"] == [{"resource": "b", "hook": "pre-delete"}]
    left = {r["name"] for r in paused["resources"]}
    assert left == {"a", "b"}  # c (depends on b) and free are gone; a waits for b
    clear_hooks(store, "s")
    done = delete_stack(store, DeleteRequest("s", breakpoints=(("b", "pre-delete"),)), "t").as_dict()
    assert done["stack_status"] == "DELETE_COMPLETE" and store.find_stack("s") is None


def test_a_breakpoint_taken_away_leaves_no_pending_hook(stack, store):
    paused = stack.apply(breakpoints=[("b", "pre-create")])
    assert paused["hooks_pending"] and paused["changed"]
    held = stack.apply(breakpoints=[("b", "pre-create")])
    assert held["changed"] is False  # nothing cleared: nothing happened
    done = stack.apply()  # the same definition, without the breakpoint
    assert done["stack_status"] == "CREATE_COMPLETE" and done["hooks_pending"] == []
