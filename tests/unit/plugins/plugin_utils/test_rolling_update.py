# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Heat::ResourceGroup's update_policy: rolling_update and batch_create, as Heat.

The expected batches below were settled from Heat 27's source
(heat/scaling/rolling_update.py ``next_batch``/``needs_update``,
heat/engine/resources/openstack/heat/resource_group.py ``_get_batches`` and
``_assemble_for_rolling_update``, heat/scaling/template.py ``member_definitions``)
and checked by running those functions against ``rolling.py`` for every
(count, current size, max_batch_size, min_in_service) up to 8/8/5/8.
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources import rolling
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run import executor as stack_run
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import TemplateError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


# -- the batch planner (pure) -----------------------------------------------------------
@pytest.mark.parametrize(("count", "current", "batch", "min_in_service", "expected"), [
    # Plain rolling update: capacity stays, batches of max_batch_size.
    (5, 5, 2, 0, [(5, 2), (5, 2), (5, 1)]),
    (5, 5, 1, 0, [(5, 1)] * 5),
    # Heat's functional test "huge batch size": one batch of everything.
    (10, 10, 20, 0, [(10, 10)]),
    # Heat's functional test: max_batch_size 3, min_in_service 1 -> no extra capacity.
    (10, 10, 3, 1, [(10, 3), (10, 3), (10, 3), (10, 1)]),
    # min_in_service leaves too few in service: one temporary extra member
    # (capacity 6), removed by a last pass that updates nothing.
    (5, 5, 2, 4, [(6, 2), (6, 2), (6, 2), (5, 0)]),
    # min_in_service equal to the size: capacity grows by a whole batch, and the
    # batch of the 2 temporary members does not count as progress (Heat's
    # _get_batches subtracts members beyond max(current, target)): 3 update passes.
    (4, 4, 2, 4, [(6, 2), (6, 2), (6, 2), (4, 0)]),
    # Growing while rolling: new members count as updated ones.
    (5, 3, 2, 0, [(5, 2), (5, 2), (5, 1)]),
    # Shrinking while rolling: the first pass already drops to the target size.
    (3, 5, 1, 0, [(3, 1), (3, 1), (3, 1)]),
    # A batched create (Heat's handle_create: _replace(0, max_batch_size, pause)).
    (5, 0, 2, 0, [(2, 2), (4, 2), (5, 1)]),
    (0, 0, 1, 0, []),
])
def test_batches_are_heats(count, current, batch, min_in_service, expected):
    assert rolling.batches(count, current, batch, min_in_service) == expected


def test_next_batch_refuses_more_up_to_date_than_members():
    with pytest.raises(ValueError):
        rolling.next_batch(5, 2, 3, 1, 0)


def _roll(count: int, current: int, batch: int, min_in_service: int) -> list[list[str]]:
    """The members that get the new definition, pass by pass."""
    state = {str(i): False for i in range(current)}
    passes = []
    for capacity, updates in rolling.batches(count, current, batch, min_in_service):
        names = [str(i) for i in range(capacity)]
        existing = sorted(state.items(), key=lambda item: int(item[0]))
        chosen = rolling.batch_members(names, count, capacity, updates, existing)
        passes.append([name for name, what in chosen if what == rolling.NEW and not state.get(name)])
        state = {name: what == rolling.NEW or state.get(name, False) for name, what in chosen}
    assert sorted(state, key=int) == [str(i) for i in range(count)] and all(state.values())
    return passes


def test_highest_index_is_updated_first():
    # Heat's replace_priority: "Update higher indices first" (targ_cap - index).
    assert _roll(5, 5, 2, 0) == [["4", "3"], ["2", "1"], ["0"]]


def test_extra_capacity_is_created_first_and_removed_last():
    # Heat's member_definitions: created members use the batch first (num_create),
    # then the highest index; the temporary member "5" sorts last (priority
    # total_capacity) and goes in the final pass, which updates nothing.
    assert _roll(5, 5, 2, 4) == [["4", "5"], ["3", "2"], ["1", "0"], []]


def test_members_already_up_to_date_do_not_use_the_batch():
    names = [str(i) for i in range(5)]
    existing = [("0", False), ("1", False), ("2", False), ("3", True), ("4", True)]
    chosen = rolling.batch_members(names, 5, 5, 2, existing)
    # 4 and 3 keep the (new) definition they have; the batch goes to 2 and 1.
    assert chosen == [("4", rolling.KEEP), ("3", rolling.KEEP), ("2", rolling.NEW),
                      ("1", rolling.NEW), ("0", rolling.KEEP)]


def test_unwanted_members_go_first_when_shrinking():
    names = ["0", "1", "2"]
    existing = [(str(i), False) for i in range(5)]
    chosen = rolling.batch_members(names, 3, 3, 1, existing)
    assert chosen == [("2", rolling.NEW), ("1", rolling.KEEP), ("0", rolling.KEEP)]


# -- end to end -------------------------------------------------------------------------
@pytest.fixture
def store(tmp_path: Path):
    opened = SqliteStore(str(tmp_path / "store.db"))
    yield opened
    opened.close()


class Stack:
    def __init__(self, store: SqliteStore, folder: Path) -> None:
        self.store, self.folder, self.count = store, folder, 0

    def apply(self, text: str, **request: Any) -> dict[str, Any]:
        self.count += 1
        path = self.folder / f"s-{self.count}.yaml"
        path.write_text(textwrap.dedent(text))
        request.setdefault("nested_depth", 2)
        return apply_stack(self.store, ApplyRequest(name="s", template=str(path), **request),
                           "test").as_dict()


@pytest.fixture
def stack(store, tmp_path) -> Stack:
    return Stack(store, tmp_path)


def group(value: str, count: int = 5, policy: str = "rolling_update: {max_batch_size: 2}",
          member: str = "OS::Heat::TestResource") -> str:
    return f"""\
        heat_template_version: 2018-08-31
        resources:
          group:
            type: OS::Heat::ResourceGroup
            update_policy:
              {policy}
            properties:
              count: {count}
              resource_def:
                type: {member}
                properties: {{value: "{value}-%index%"}}
        outputs:
          values: {{value: {{get_attr: [group, output]}}}}
        """


def member_events(result: dict[str, Any], action: str) -> list[tuple[str, str]]:
    return [(e["resource_name"].split("/")[1], e["status"]) for e in result["events"]
            if e["resource_name"].startswith("group/") and e["resource_name"].count("/") == 1
            and e["action"] == action]


def child_id(store: SqliteStore) -> str:
    (child,) = store.child_stacks(store.find_stack("s").id)
    return child.id


def last_event(store: SqliteStore) -> int:
    events = store.events(child_id(store))
    return events[-1].id if events else 0


def passes(store: SqliteStore, after: int, action: str) -> list[set[str]]:
    """The members that started ``action`` in each converge of the group's child
    stack (a pass starts with the child's own IN_PROGRESS event)."""
    child = store.get_stack(child_id(store))
    found: list[set[str]] = []
    for event in store.events(child.id, after_id=after):
        if event.resource_name == child.name:
            if event.status == "IN_PROGRESS":
                found.append(set())
        elif event.action == action and event.status == "IN_PROGRESS":
            found[-1].add(event.resource_name)
    return found


def test_rolling_update_goes_two_at_a_time_from_the_highest_index(stack, store):
    first = stack.apply(group("v1"))
    ids = {r["name"]: r["physical_id"] for r in first["resources"]}
    mark = last_event(store)
    second = stack.apply(group("v2"))
    assert second["stack_status"] == "UPDATE_COMPLETE", second["stack_status_reason"]
    assert second["outputs"]["values"] == [f"v2-{i}" for i in range(5)]
    # One converge of the child per batch; Heat's order: highest index first.
    assert passes(store, mark, "UPDATE") == [{"4", "3"}, {"2", "1"}, {"0"}]
    # Batches follow one another: a batch's members finish before the next start.
    updates = member_events(second, "UPDATE")
    assert {n for n, _s in updates[:4]} == {"4", "3"} and {n for n, _s in updates[4:8]} == {"2", "1"}
    assert {r["name"]: r["physical_id"] for r in second["resources"]} == ids  # in place
    # Only the members: the group itself is updated once, around all the batches.
    assert [(e["resource_name"], e["status"]) for e in second["events"]
            if e["resource_name"] == "group"] == [("group", "IN_PROGRESS"), ("group", "COMPLETE")]


def test_pause_time_waits_between_batches_interruptibly(stack, monkeypatch):
    stack.apply(group("v1", policy="rolling_update: {max_batch_size: 2, pause_time: 7}"))
    slept: list[float] = []
    monkeypatch.setattr(stack_run.RunRuntime, "sleep", lambda self, seconds: slept.append(seconds))
    second = stack.apply(group("v2", policy="rolling_update: {max_batch_size: 2, pause_time: 7}"))
    assert second["stack_status"] == "UPDATE_COMPLETE"
    assert slept == [7.0, 7.0]  # between the 3 batches, not after the last (Heat)


def test_a_time_out_ends_the_pause_and_the_remaining_batches(stack, store):
    policy = "rolling_update: {max_batch_size: 3, pause_time: 3600}"
    stack.apply(group("v1", policy=policy))
    mark = last_event(store)
    started = time.monotonic()
    second = stack.apply(group("v2", policy=policy), timeout=1)
    assert time.monotonic() - started < 60
    assert second["stack_status"] == "UPDATE_FAILED"
    assert passes(store, mark, "UPDATE") == [{"4", "3", "2"}]
    assert second["outputs"]["values"] == ["v1-0", "v1-1", "v2-2", "v2-3", "v2-4"]


def test_min_in_service_adds_a_temporary_member(stack):
    policy = "rolling_update: {max_batch_size: 2, min_in_service: 4}"
    stack.apply(group("v1", policy=policy))
    second = stack.apply(group("v2", policy=policy))
    assert second["stack_status"] == "UPDATE_COMPLETE", second["stack_status_reason"]
    events = [(e["resource_name"].split("/")[1], e["action"], e["status"]) for e in second["events"]
              if e["resource_name"].startswith("group/")]
    # Pass 1: a 6th member is created with the new definition and 4 is updated,
    # so 4 of the old ones stay in service; the last pass removes member 5.
    first_pass = {(n, a) for n, a, s in events[:4]}
    assert first_pass == {("5", "CREATE"), ("4", "UPDATE")}
    assert events[-2:] == [("5", "DELETE", "IN_PROGRESS"), ("5", "DELETE", "COMPLETE")]
    in_service, lowest = 5, 5
    for _name, action, status in events:
        if action == "CREATE" and status == "COMPLETE":
            in_service += 1
        if status == "IN_PROGRESS" and action in ("UPDATE", "DELETE"):
            in_service -= 1
            lowest = min(lowest, in_service)
        if action == "UPDATE" and status == "COMPLETE":
            in_service += 1
    assert lowest >= 4
    assert second["outputs"]["values"] == [f"v2-{i}" for i in range(5)]
    assert sorted(r["name"] for r in second["resources"] if r.get("parent") == "group") == [
        f"group/{i}" for i in range(5)]


MEMBER = """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string}
    conditions:
      broken: {equals: [{get_param: value}, v2-2]}
    resources:
      r:
        type: OS::Heat::TestResource
        properties:
          value: {get_param: value}
          fail: {if: [broken, true, false]}
    outputs:
      output: {value: {get_attr: [r, output]}}
    """


def test_a_failed_batch_stops_the_update(stack, store, tmp_path):
    (tmp_path / "member.yaml").write_text(textwrap.dedent(MEMBER))
    member = str(tmp_path / "member.yaml")
    stack.apply(group("v1", member=member))
    mark = last_event(store)
    failed = stack.apply(group("v2", member=member))
    assert failed["stack_status"] == "UPDATE_FAILED"
    assert "resources.group" in failed["stack_status_reason"]
    assert "Test Resource failed" in failed["stack_status_reason"]
    # Batch 1 (4, 3) done, batch 2 (2, 1) failed on member 2, batch 3 (member 0)
    # never started.
    done = passes(store, mark, "UPDATE")
    assert len(done) == 2 and done[0] == {"4", "3"}
    assert "2" in done[1] and done[1] <= {"2", "1"}
    assert ("2", "FAILED") in member_events(failed, "UPDATE")
    values = failed["outputs"]["values"]
    assert (values[0], values[2], values[3:]) == ("v1-0", "v1-2", ["v2-3", "v2-4"])
    # Fixed, the update carries on.  Members with a definition of neither the
    # last good update nor this one (3, 4 and perhaps 1 have v2) are left as they
    # are until their batch.  Heat leaves failed members out of the group's
    # members (grouputils: include_failed=False) and gives them the new
    # definition as new ones, first: member 2 goes with the first batch.
    mark = last_event(store)
    fixed = stack.apply(group("v3", member=member))
    assert fixed["stack_status"] == "UPDATE_COMPLETE", fixed["stack_status_reason"]
    assert fixed["outputs"]["values"] == [f"v3-{i}" for i in range(5)]
    rolled = passes(store, mark, "UPDATE")
    assert rolled[0] == {"4", "2"} and rolled[-1] == {"0"}
    updated = [n for n, s in member_events(fixed, "UPDATE") if s == "IN_PROGRESS"]
    assert sorted(updated) == ["0", "1", "2", "3", "4"]  # each once: nothing went back to v1


def test_batch_create_creates_in_batches(stack, store, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(stack_run.RunRuntime, "sleep", lambda self, seconds: slept.append(seconds))
    result = stack.apply(group("v1", policy="batch_create: {max_batch_size: 2, pause_time: 5}"))
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert passes(store, 0, "CREATE") == [{"0", "1"}, {"2", "3"}, {"4"}]
    assert slept == [5.0, 5.0]
    assert result["outputs"]["values"] == [f"v1-{i}" for i in range(5)]


def test_without_a_policy_or_a_new_resource_def_everything_goes_at_once(stack, store):
    stack.apply(group("v1", policy="{}"))
    mark = last_event(store)
    stack.apply(group("v2", policy="{}"))
    assert passes(store, mark, "UPDATE") == [{"0", "1", "2", "3", "4"}]
    # Heat rolls only when resource_def changes (res_def_changed): a new count
    # with the same definition is one pass, even with a rolling_update policy.
    stack.apply(group("v2"))
    mark = last_event(store)
    grown = stack.apply(group("v2", count=7))
    assert member_events(grown, "UPDATE") == []
    assert passes(store, mark, "CREATE") == [{"5", "6"}]


@pytest.mark.parametrize(("policy", "message"), [
    ("rolling_update: {max_batch_size: 0}",
     "Property error: resources.group.update_policy.rolling_update.max_batch_size: "
     "0 is out of range (min: 1, max: None)"),
    ("rolling_update: {pause_time: -1}",
     "Property error: resources.group.update_policy.rolling_update.pause_time: "
     "-1 is out of range (min: 0, max: None)"),
    ("rolling_update: {min_in_service: -2}",
     "Property error: resources.group.update_policy.rolling_update.min_in_service: "
     "-2 is out of range (min: 0, max: None)"),
    ("rolling_update: {batch_size: 2}",
     "Property error: resources.group.update_policy.rolling_update: Unknown Property batch_size"),
    ("batch_create: {min_in_service: 1}",
     "Property error: resources.group.update_policy.batch_create: Unknown Property min_in_service"),
    ("rolling: {}", "Property error: resources.group.update_policy: Unknown Property rolling"),
])
def test_update_policy_is_checked_with_heats_schema(stack, policy, message):
    # Checked with the definition: the task fails before the store is written.
    with pytest.raises(TemplateError) as caught:
        stack.apply(group("v1", policy=policy))
    assert message in str(caught.value)
    assert stack.store.list_stacks() == []
