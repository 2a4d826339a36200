# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Heat::Delay behaves as Heat 27's (heat/engine/resources/openstack/heat/delay.py):
it waits ``min_wait`` plus a uniform jitter up to ``max_jitter`` x ``jitter_multiplier``
during the actions it lists, has no physical id and no attributes, and its longest wait
may not exceed the stack's time limit."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_resources_heat_misc import FakeRuntime, make, props

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

DELAY = "OS::Heat::Delay"


def test_a_create_waits_the_minimum_plus_a_uniform_share_of_the_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(random, "random", lambda: 0.25)
    runtime = FakeRuntime()
    outcome = make(DELAY, runtime=runtime).handle_create(props(DELAY, {
        "min_wait": 2, "max_jitter": 4, "jitter_multiplier": 3}))
    assert runtime.slept == [2 + 4 * 3 * 0.25]
    assert outcome.physical_id == ""  # as Heat's: get_resource gives the resource's name


@pytest.mark.parametrize(("actions", "create", "delete"), [
    (None, True, False),  # Heat's default: [CREATE]
    (["DELETE"], False, True),
    (["CREATE", "DELETE"], True, True),
    ([], False, False),
])
def test_it_waits_only_during_the_actions_it_lists(actions: Any, create: bool, delete: bool) -> None:
    values = {"min_wait": 1, **({} if actions is None else {"actions": actions})}
    properties = props(DELAY, values)
    runtime = FakeRuntime()
    resource = make(DELAY, runtime=runtime)
    resource.handle_create(properties)
    assert runtime.slept == ([1] if create else [])
    runtime.slept.clear()
    resource.handle_update(ResourceState("r", DELAY, "CREATE", properties=properties), properties)
    assert runtime.slept == []  # Heat's Delay has no update handler
    resource.handle_delete(ResourceState("r", DELAY, "CREATE", properties=properties))
    assert runtime.slept == ([1] if delete else [])


@pytest.mark.parametrize(("values", "expected"), [
    ({"min_wait": 3700}, "OS::Heat::Delay maximum delay 3700.0s exceeds stack timeout."),
    ({"min_wait": 3000, "max_jitter": 10, "jitter_multiplier": 70},
     "OS::Heat::Delay maximum delay 3700s exceeds stack timeout."),
])
def test_a_longest_wait_beyond_heats_stack_timeout_is_refused_in_heats_words(values: Any, expected: str) -> None:
    with pytest.raises(StackValidationFailed, match=expected):
        make(DELAY).validate(props(DELAY, values))


@pytest.mark.parametrize(("values", "message"), [
    ({"min_wait": -1}, r"min_wait: -1 is out of range"),
    ({"actions": ["UPDATE"]}, r'actions: \["UPDATE"\] is not an allowed value \["CREATE", "DELETE", "SUSPEND", "RESUME"\]'),
])
def test_heats_constraints(values: Any, message: str) -> None:
    with pytest.raises(StackValidationFailed, match=message):
        props(DELAY, values)


def test_in_a_stack_it_orders_its_dependants_and_its_reference_is_its_name(tmp_path: Path) -> None:
    template = tmp_path / "delayed.yaml"
    template.write_text(
        "heat_template_version: 2018-08-31\n"
        "resources:\n"
        "  pause: {type: OS::Heat::Delay, properties: {min_wait: 0.2, actions: [CREATE, DELETE]}}\n"
        "  after: {type: OS::Heat::Value, depends_on: [pause], properties: {value: {get_resource: pause}}}\n"
        "outputs:\n  ref: {value: {get_attr: [after, value]}}\n")
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        made = apply_stack(store, ApplyRequest(name="web", template=str(template)), "job").as_dict()
        assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
        assert made["outputs"]["ref"] == "pause"
        again = apply_stack(store, ApplyRequest(name="web", template=str(template)), "job").as_dict()
        assert again["changed"] is False  # nothing to make again: no physical id is not "not made"
        events = [(e["resource_name"], e["action"], e["status"]) for e in made["events"]]
        assert events.index(("pause", "CREATE", "COMPLETE")) < events.index(("after", "CREATE", "IN_PROGRESS"))
        gone = delete_stack(store, DeleteRequest(name="web"), "job").as_dict()
        assert gone["stack_status"] == "DELETE_COMPLETE"
    finally:
        store.close()
