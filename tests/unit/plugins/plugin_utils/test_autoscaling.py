# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Heat::AutoScalingGroup and OS::Heat::ScalingPolicy, through the engine on a real
SQLite store: sizes, attributes, rolling updates, signals with their cooldown, check
mode, revisions and rollback.

The arithmetic tables were computed by Heat 27's own functions
(heat/scaling/scalingutil.py ``calculate_new_capacity``, InstanceGroup._get_batches):
``rolling.scaling_group_batches``, ``autoscaling.new_capacity`` and
``rolling.scaled_members`` agreed with them on every case of a grid of 13,700.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.rollback import (
    RollbackRequest,
    rollback_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import (
    SignalRequest,
    signal_resource,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources import rolling
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.autoscaling import new_capacity
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  value: {type: string, default: one}
  desired: {type: number, default: 2}
  cooldown: {type: number, default: 0}
  batch: {type: number, default: 1}
resources:
  asg:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 4
      desired_capacity: {get_param: desired}
      cooldown: {get_param: cooldown}
      rolling_updates: {max_batch_size: {get_param: batch}}
      resource:
        type: OS::Heat::Value
        properties: {value: {get_param: value}}
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: asg}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
  down:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: asg}
      adjustment_type: percent_change_in_capacity
      scaling_adjustment: -50
      cooldown: 0
outputs:
  size: {value: {get_attr: [asg, current_size]}}
  values: {value: {get_attr: [asg, outputs_list, value]}}
  by_name: {value: {get_attr: [asg, outputs, value]}}
  refs: {value: {get_attr: [asg, refs]}}
  refs_map: {value: {get_attr: [asg, refs_map]}}
  first: {value: {get_attr: [asg, resource.0]}}
  first_value: {value: {get_attr: [asg, resource.0.value]}}
  url: {value: {get_attr: [up, signal_url]}}
"""


@pytest.mark.parametrize(("current", "adjustment", "kind", "step", "expected"), [
    (2, 1, "change_in_capacity", None, 3),
    (2, 10, "change_in_capacity", None, 5),  # max_size
    (2, -10, "change_in_capacity", None, 1),  # min_size
    (3, 4, "exact_capacity", None, 4),
    (3, 10, "percent_change_in_capacity", None, 4),  # 0.3 rounds away from zero: one
    (4, -33, "percent_change_in_capacity", None, 3),  # -1.32 rounds towards zero
    (2, 10, "percent_change_in_capacity", 2, 4),  # at least min_adjustment_step
])
def test_new_sizes_are_heats(current: int, adjustment: float, kind: str, step: int | None,
                             expected: int) -> None:
    assert new_capacity(current, adjustment, kind, step, 1, 5) == expected


@pytest.mark.parametrize(("target", "current", "batch", "min_in_service", "expected"), [
    (2, 3, 1, 0, [(2, 1), (2, 1)]),  # shrinking while rolling
    (2, 2, 1, 2, [(3, 1), (3, 1), (2, 0)]),  # one temporary member keeps two in service
    (4, 4, 2, 0, [(4, 2), (4, 2)]),
    (0, 0, 1, 0, []),
])
def test_rolling_batches_are_heats(target: int, current: int, batch: int, min_in_service: int,
                                   expected: list[tuple[int, int]]) -> None:
    assert rolling.scaling_group_batches(target, current, batch, min_in_service) == expected


class Stack:
    """One stack ``w`` of TEMPLATE in a SQLite store, applied and signalled as the
    modules do."""

    def __init__(self, tmp_path: Path) -> None:
        self.url = f"sqlite:///{tmp_path / 's.db'}"
        self.template = tmp_path / "asg.yaml"
        self.template.write_text(TEMPLATE)

    def apply(self, check_mode: bool = False, lock_timeout: float = 0, **parameters: Any) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            return apply_stack(store, ApplyRequest(name="w", template=str(self.template), parameters=parameters,
                                                   existing=True, check_mode=check_mode,
                                                   lock_timeout=lock_timeout), "job").as_dict()
        finally:
            store.close()

    def signal(self, policy: str = "up", check_mode: bool = False, data: Any = None,
               lock_timeout: float = 0) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            return signal_resource(store, SignalRequest("w", policy, data, check_mode, holder=f"signal {policy}",
                                                        lock_timeout=lock_timeout))
        finally:
            store.close()

    def members(self) -> list[tuple[str, str]]:
        """(name, value) of each member, oldest first (the group's record of their age)."""
        store = open_store(self.url)
        try:
            stack = store.find_stack("w")
            group = next(r.state for r in store.resources(stack.id) if r.state.name == "asg")
            values = {r.state.name: r.state.properties["value"] for r in store.resources(group.nested_stack_id)}
            assert sorted(group.data["members"]) == sorted(values)
            return [(name, values[name]) for name in group.data["members"]]
        finally:
            store.close()

    def events(self, resource: str) -> list[tuple[str, str, str]]:
        store = open_store(self.url)
        try:
            stack = store.find_stack("w")
            return [(e.action, e.status, e.reason) for e in store.events(stack.id) if e.resource_name == resource]
        finally:
            store.close()

    def revisions(self) -> list[Any]:
        store = open_store(self.url)
        try:
            return store.revisions(store.find_stack("w").id)
        finally:
            store.close()


@pytest.fixture
def stack(tmp_path: Path) -> Stack:
    return Stack(tmp_path)


def test_a_group_is_made_at_its_desired_size_and_read_as_heat_reads_it(stack: Stack) -> None:
    made = stack.apply()
    assert made["stack_status"] == "CREATE_COMPLETE", made.get("msg")
    outputs, members = made["outputs"], stack.members()
    assert outputs["size"] == 2 and len(members) == 2
    # Heat's member names: 12 characters of base32, lower case.
    assert all(len(name) == 12 and name.isalnum() and name.islower() for name, _value in members)
    assert outputs["values"] == ["one", "one"]
    assert outputs["by_name"] == {name: "one" for name, _value in members}
    assert list(outputs["refs_map"]) == [name for name, _value in members]
    assert outputs["refs"] == list(outputs["refs_map"].values())
    assert outputs["first"] == outputs["refs"][0] and outputs["first_value"] == "one"
    assert outputs["url"] == "hotplay://stacks/w/resources/up/signal"


def test_without_desired_capacity_the_group_starts_at_min_size(stack: Stack) -> None:
    stack.template.write_text(TEMPLATE.replace("      desired_capacity: {get_param: desired}\n", ""))
    assert stack.apply()["outputs"]["size"] == 1


def test_signals_scale_out_and_in_within_the_bounds_as_runs_of_the_stack(stack: Stack) -> None:
    stack.apply()
    first = stack.members()
    grown = stack.signal("up", data={"previous": "ok", "current": "alarm", "reason": "cpu high"})
    assert grown["changed"] is True and grown["scaled"] == {"asg": {"from": 2, "to": 3}}
    assert grown["outputs"]["size"] == 3 and stack.members()[:2] == first  # the new one last
    # As in Heat, the stack and the group keep their status; the group's nested stack
    # (and the revision, and the events) say it was updated.
    assert grown["stack"]["status"] == "CREATE_COMPLETE"
    assert {r["name"]: r["status"] for r in grown["resources"]}["asg"] == "CREATE_COMPLETE"
    assert stack.events("up")[-1] == ("SIGNAL", "COMPLETE",
                                      "alarm state changed from ok to alarm (cpu high)")
    assert stack.revisions()[-1].definition["scaled"] == {"asg": 3}
    assert stack.signal("up")["outputs"]["size"] == 4
    # At max_size: Heat does nothing, records nothing.
    events, revisions = stack.events("up"), len(stack.revisions())
    at_most = stack.signal("up")
    assert at_most["changed"] is False and "stays at 4 members" in at_most["msg"]
    assert stack.events("up") == events and len(stack.revisions()) == revisions
    # -50 % of 4: the two oldest go.
    four = stack.members()
    shrunk = stack.signal("down")
    assert shrunk["scaled"] == {"asg": {"from": 4, "to": 2}}
    assert stack.members() == four[2:] and four[:2] == first


def test_a_signal_within_the_cooldown_changes_nothing(stack: Stack) -> None:
    stack.apply(cooldown=600)  # the create starts the group's cooldown, as in Heat
    events = stack.events("asg")
    refused = stack.signal("up")
    assert refused["changed"] is False
    assert refused["msg"].startswith("The resource asg could not perform scaling action: due to cooldown, "
                                     "cooldown 600")
    assert stack.events("asg") == events and stack.events("up")[-1][0] != "SIGNAL"
    # The policy's own cooldown (0) decides for it, but the group's running one still holds.
    assert stack.signal("down")["changed"] is False


def test_twenty_signals_and_an_apply_at_once_take_turns_and_the_cooldown_lets_one_signal_through(
        stack: Stack) -> None:
    # The policy's cooldown (600 s) starts with the signal that resizes the group.
    stack.template.write_text(TEMPLATE.replace("scaling_adjustment: 1\n", "scaling_adjustment: 1\n      cooldown: 600\n"))
    stack.apply(cooldown=0)
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def send() -> None:
        outcome = stack.signal("up", lock_timeout=60)
        with lock:
            results.append(outcome)

    def update() -> None:
        outcome = stack.apply(value="two", lock_timeout=60)
        with lock:
            results.append({**outcome, "apply": True})

    jobs = [threading.Thread(target=send) for _sender in range(20)] + [threading.Thread(target=update)]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join()
    applied = [r for r in results if r.get("apply")]
    signals = [r for r in results if not r.get("apply")]
    assert len(applied) == 1 and applied[0]["stack_status"] == "UPDATE_COMPLETE", applied
    # Every signal got its answer: one resized the group, the others met its cooldown.
    assert len(signals) == 20 and sorted(r["changed"] for r in signals) == [False] * 19 + [True], signals
    assert all("due to cooldown" in r["msg"] for r in signals if not r["changed"])
    # Heat's rules in the order the lock gave: an update after the signal puts the group
    # back to desired_capacity (2); a signal after the update grows it to 3.
    signal_last = "scaled" in stack.revisions()[-1].definition
    assert stack.members() and {value for _name, value in stack.members()} == {"two"}
    assert len(stack.members()) == (3 if signal_last else 2)


def test_check_mode_previews_the_new_member_and_writes_nothing(stack: Stack) -> None:
    stack.apply()
    before, revisions = stack.members(), len(stack.revisions())
    preview = stack.signal("up", check_mode=True)
    assert preview["changed"] is True and preview["scaled"] == {"asg": {"from": 2, "to": 3}}
    added = preview["plan"]["added"]
    assert len(added) == 1 and added[0].startswith("asg/")
    assert preview["plan"]["reasons"]["asg"] == "scaled from 2 to 3 members by a signal (change_in_capacity : 1)"
    assert stack.members() == before and len(stack.revisions()) == revisions


def test_an_update_rolls_the_oldest_first_in_batches_then_resizes_to_desired_capacity(stack: Stack) -> None:
    stack.apply(desired=4, batch=2)
    oldest_first = [name for name, _value in stack.members()]
    rolled = stack.apply(value="two", desired=3, batch=2)
    assert rolled["stack_status"] == "UPDATE_COMPLETE", rolled.get("msg")
    # Heat's _replace: the target is min(desired, size) = 3, so the first batch
    # already drops the oldest member; batches of 2, the oldest first.
    assert stack.members() == [(name, "two") for name in oldest_first[1:]]
    store = open_store(stack.url)
    try:
        group = next(r.state for r in store.resources(store.find_stack("w").id) if r.state.name == "asg")
        events = [(e.resource_name, e.status) for e in store.events(group.nested_stack_id)
                  if e.action == "UPDATE" and e.resource_name in oldest_first]
    finally:
        store.close()
    started = [name for name, status in events if status == "IN_PROGRESS"]
    assert set(started[:2]) == set(oldest_first[1:3]) and started[2:] == [oldest_first[3]]
    done_first = {name for name, status in events[:events.index((oldest_first[3], "IN_PROGRESS"))]
                  if status == "COMPLETE"}
    assert done_first == set(oldest_first[1:3])  # the second batch waited for the first


def test_an_update_puts_a_scaled_group_back_to_desired_capacity(stack: Stack) -> None:
    stack.apply()
    stack.signal("up")
    assert stack.apply(value="two")["outputs"]["size"] == 2  # Heat: desired_capacity wins


def test_a_rollback_gives_the_group_the_size_it_had(stack: Stack) -> None:
    stack.apply()
    stack.signal("up")
    stack.signal("up")
    store = open_store(stack.url)
    try:
        preview = rollback_stack(store, RollbackRequest(name="w", check_mode=True), "job").as_dict()
        assert preview["plan"]["reasons"]["asg"] == "back from 4 to 3 members, its size in revision 2"
        back = rollback_stack(store, RollbackRequest(name="w"), "job").as_dict()
    finally:
        store.close()
    assert back["stack_status"] == "ROLLBACK_COMPLETE", back.get("msg")
    assert back["outputs"]["size"] == 3 and len(stack.members()) == 3


@pytest.mark.parametrize(("change", "message"), [
    ("min_size: 1", "resources.asg: MinSize can not be greater than MaxSize"),
    ("max_size: 4", "resources.asg: DesiredCapacity must be between MinSize and MaxSize"),
    ("adjustment_type: change_in_capacity",
     "resources.up: min_adjustment_step property should only be specified for adjustment_type "
     "with value percent_change_in_capacity."),
])
def test_bad_sizes_are_refused_before_anything_is_written(stack: Stack, change: str, message: str) -> None:
    wrong = {"min_size: 1": "min_size: 5",
             "max_size: 4": "max_size: 1",
             "adjustment_type: change_in_capacity":
                 "adjustment_type: change_in_capacity\n      min_adjustment_step: 1"}[change]
    stack.template.write_text(TEMPLATE.replace(change, wrong, 1))
    with pytest.raises(HotplayError) as refused:
        stack.apply()
    assert str(refused.value).endswith(message)
    store = open_store(stack.url)
    try:
        assert store.find_stack("w") is None
    finally:
        store.close()


def test_a_signal_to_a_type_that_takes_none_names_the_ones_that_do(stack: Stack) -> None:
    stack.apply()
    with pytest.raises(HotplayError, match="the wait condition handles and the scaling policies do"):
        stack.signal("asg")


def test_a_heat_stack_with_a_group_and_a_policy_is_adopted_with_heats_members_and_given_back(
        stack: Stack) -> None:
    import yaml  # pylint: disable=import-outside-toplevel

    from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon  # pylint: disable=import-outside-toplevel
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (  # pylint: disable=import-outside-toplevel
        AdoptRequest,
        adopt_stack,
    )
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.export import heat_abandon  # pylint: disable=import-outside-toplevel

    def member(name: str) -> dict[str, Any]:
        return {"name": name, "resource_id": f"w-asg-x-{name}-y", "type": "OS::Heat::Value",
                "action": "CREATE", "status": "COMPLETE", "metadata": {}, "resource_data": {}}

    definition = {"type": "OS::Heat::Value", "properties": {"value": "one"}}
    # Heat's abandon data (heat/engine/stack.py prepare_abandon): a nested stack's
    # entry is the nested stack's own data; the members in its template's order.
    data = {"name": "w", "id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "action": "CREATE",
            "status": "COMPLETE", "files": {},
            "template": {**yaml.safe_load(TEMPLATE), "heat_template_version": "2018-08-31"},
            "environment": {"parameters": {}}, "project_id": "p", "tags": [],
            "resources": {
                "asg": {"name": "w-asg-hmzyanypc5ih", "id": "bbbbbbbb-bbbb-cccc-dddd-eeeeeeeeeeee",
                        "action": "CREATE", "status": "COMPLETE", "environment": {}, "files": {},
                        "template": {"heat_template_version": "2015-04-30",
                                     "resources": {"zzold1abcdef": definition, "aanew2abcdef": definition}},
                        "resources": {"aanew2abcdef": member("aanew2abcdef"),
                                      "zzold1abcdef": member("zzold1abcdef")}},
                "up": {"name": "up", "resource_id": "3f2a", "type": "OS::Heat::ScalingPolicy",
                       "action": "CREATE", "status": "COMPLETE", "metadata": {}, "resource_data": {}},
                "down": {"name": "down", "resource_id": "4f2a", "type": "OS::Heat::ScalingPolicy",
                         "action": "CREATE", "status": "COMPLETE", "metadata": {}, "resource_data": {}}}}
    store = open_store(stack.url)
    try:
        adopted = adopt_stack(store, AdoptRequest("w", read_abandon(data, "w.json"), "w.json"), "t").as_dict()
        assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted["stack_status_reason"]
        assert adopted["outputs"]["refs"] == ["w-asg-x-zzold1abcdef-y", "w-asg-x-aanew2abcdef-y"]
        given_back = heat_abandon(store, "w")["resources"]
        assert set(given_back["asg"]["resources"]) == {"zzold1abcdef", "aanew2abcdef"}
        assert given_back["up"]["resource_id"] == "3f2a"
    finally:
        store.close()
    # Managed here from then on: a signal adds a third, Heat's two are the oldest.
    assert stack.signal("up")["outputs"]["size"] == 3
    assert [name for name, _value in stack.members()][:2] == ["zzold1abcdef", "aanew2abcdef"]


def test_a_signal_changes_the_group_only_and_not_a_stack_that_did_not_complete(stack: Stack) -> None:
    # A nested stack beside the group: an update of the stack updates it (Heat
    # updates every nested stack), a signal leaves it alone (Heat's resizes the
    # group's nested stack only).
    stack.template.write_text(TEMPLATE.replace("  up:\n", "  side:\n    type: OS::Heat::Stack\n"
                                               "    properties: {template: \"heat_template_version: 2018-08-31\"}\n"
                                               "  up:\n", 1))
    stack.apply()
    preview = stack.signal("up", check_mode=True)
    assert preview["plan"]["reasons"]["side"] == "left as it is: a scaling signal changes only its group"
    assert "side" in preview["plan"]["unchanged"]
    stack.signal("up")
    assert [e for e in stack.events("side") if e[0] == "UPDATE"] == []
    # A stack whose last run failed is not run again by a signal.
    store = open_store(stack.url)
    try:
        store.set_stack_status(store.find_stack("w").id, "UPDATE", "FAILED", "something broke")
    finally:
        store.close()
    with pytest.raises(HotplayError, match="stack w is UPDATE_FAILED: a scaling signal runs the stack"):
        stack.signal("up")
