# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A signal to a scaling policy (``OS::Heat::ScalingPolicy``): its group resized.

Heat resizes the group's nested stack inside the signal.  Here the signal is a run
of the stack, as an apply of its stored definition (``existing``) is: it takes the
stack's lease, writes a revision and events, stops at hooks and previews in check
mode.  The new size is worked out (``scale_step``) from the store as it is once the
lease is held, so signals that race are applied one after the other, each one
against the size and cooldown the one before left (Heat's rules: a signal during a
cooldown changes nothing).  The policy gets Heat's SIGNAL event when the group has
its new size."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import HotplayError
from ..model.plan import Plan
from ..resources.autoscaling import (CFN_EXACT_CAPACITY, AutoScalingGroup, NoScaling, ScalingPolicy,
                                     group_size, group_sizes, live_members, signal_details)
from ..resources.base import resource_class
from ..resources.runtime import ScaleStep
from ..store.base import StackRecord, Store, StoredResource
from .health import find_resource


@dataclass(frozen=True)
class ScaleSignal:
    """A signal to the scaling policy at ``policy`` (a path from the top stack)."""

    policy: str
    data: Any = None


def is_scaling_policy(state: Any) -> bool:
    cls = resource_class(state.implementation or state.type)
    return cls is not None and getattr(cls, "scales_a_group", False)


def is_scaling_group(state: Any) -> bool:
    cls = resource_class(state.implementation or state.type)
    return cls is not None and issubclass(cls, AutoScalingGroup)


def scale_step(store: Store, stack: StackRecord, signal: ScaleSignal) -> tuple[str, ScaleStep]:
    """The group the policy scales (its path) and the size it gets; NoScaling when
    Heat's ``adjust`` would do nothing."""
    if stack.status != "COMPLETE":
        raise HotplayError(f"stack {stack.name} is {stack.stack_status}: a scaling signal runs the "
                           "stack and would repeat what did not finish; apply the stack (or roll it "
                           "back) first")
    found = find_resource(store, stack, signal.policy)
    policy = found.stored.state
    path = signal.policy.strip("/")
    parent = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    policy_cls = resource_class(policy.implementation or policy.type)
    wanted = (policy_cls if isinstance(policy_cls, type) and issubclass(policy_cls, ScalingPolicy)
              else ScalingPolicy).hot_properties(policy.properties)
    reference = str(wanted.get("auto_scaling_group_id"))
    group = _group_by_reference(store.resources(found.stack_id), reference)
    if group is None:
        raise HotplayError(f"Alarm {policy.name} could not find scaling group named \"{reference}\"")
    state = group.state
    if state.status != "COMPLETE":
        raise NoScaling(f"{parent}{state.name} is {state.action}_{state.status}: a group scales only "
                        "when its last action completed")
    step = ScalingPolicy.adjustment(group_size(store, state), wanted, group_sizes(state)["cooldown"],
                                    state.data, f"{parent}{state.name}")
    return f"{parent}{state.name}", step


def _group_by_reference(rows: list[StoredResource], reference: str) -> StoredResource | None:
    """Heat's ``resource_by_refid``: the group whose get_resource is ``reference``."""
    for row in rows:
        if is_scaling_group(row.state) and reference in (row.state.nested_stack_id, row.state.physical_id):
            return row
    return None


def plan_reason(step: ScaleStep) -> str:
    """Why the group is updated, as the plan and its events say it."""
    return f"scaled from {step.previous} to {step.capacity} members by a signal ({step.reason})"


def record_signal_event(store: Store, stack: StackRecord, signal: ScaleSignal) -> None:
    """The policy's SIGNAL event, once its group has the new size (Heat's); written
    by the run that resized it, under the stack's lease."""
    found = find_resource(store, stack, signal.policy)
    state = found.stored.state
    store.add_event(found.stack_id, state.name, "SIGNAL", state.status,
                    signal_details(signal.data), state.physical_id)


def sizes_to_restore(store: Store, stack: StackRecord, outcome: Mapping[str, Any]) -> dict[str, ScaleStep]:
    """A rollback's sizes: each group of the stack (top level) at the size it had
    when the target revision ended (``outcome``: resource path -> its state), where
    that differs from its size now.  A scaling signal changes no definition, so
    without this a rollback would leave the group at the size the signals gave it."""
    steps = {}
    for row in store.resources(stack.id):
        state = row.state
        if not is_scaling_group(state) or state.name not in outcome:
            continue
        prefix = f"{state.name}/"
        then = sum(1 for path, entry in outcome.items()
                   if path.startswith(prefix) and "/" not in path[len(prefix):]
                   and not str(entry.get("status", "")).endswith("FAILED"))
        now = len(live_members(store, state))
        if then != now:
            steps[state.name] = ScaleStep(then, group_sizes(state)["cooldown"],
                                          f"{CFN_EXACT_CAPACITY} : {then}", now)
    return steps


def rollback_reason(step: ScaleStep, revision: int) -> str:
    return f"back from {step.previous} to {step.capacity} members, its size in revision {revision}"


@dataclass(frozen=True)
class StatusesBefore:
    """The stack's and its resources' actions before a scaling run."""

    stack: StackRecord
    resources: Mapping[str, StoredResource]


def statuses_before(store: Store, stack: StackRecord) -> StatusesBefore:
    return StatusesBefore(stack, {r.state.name: r for r in store.resources(stack.id)})


def keep_heats_statuses(store: Store, before: StatusesBefore) -> None:
    """After a scaling run that completed: the stack and its resources show the
    action they showed before, as in Heat, where a signal resizes the group's nested
    stack (``UPDATE_COMPLETE``) and leaves the stack and the group as they were
    (``CREATE_COMPLETE`` after a create).  The run's revision and events stay."""
    stack = store.get_stack(before.stack.id)
    if stack.status != "COMPLETE" or before.stack.status != "COMPLETE":
        return
    for row in store.resources(stack.id):
        was = before.resources.get(row.state.name)
        if was is not None and was.state.status == "COMPLETE" and row.state.status == "COMPLETE" \
                and row.state.action != was.state.action:
            store.save_resource(stack.id, replace(row.state, action=was.state.action,
                                                  status_reason=was.state.status_reason),
                                row.requires, row.position)
    store.set_stack_status(stack.id, before.stack.action, "COMPLETE", before.stack.status_reason)


# The reason of what a scaling run leaves alone.
LEFT_ALONE = "left as it is: a scaling signal changes only its group"


def confined_to_groups(plan: Plan, scale: Mapping[str, ScaleStep]) -> None:
    """A scaling run changes its group and nothing else, as Heat's signal resizes
    the group's nested stack only: every other change of the plan (a nested stack's
    routine update, an update handle Heat replaces on every update) is left alone."""
    def concerns_a_group(path: str) -> bool:
        return any(path == group or path.startswith(f"{group}/") or group.startswith(f"{path}/")
                   for group in scale)

    plan.changes = [change if change.action == "unchanged" or concerns_a_group(change.path)
                    else replace(change, action="unchanged", reason=LEFT_ALONE, skipped=True)
                    for change in plan.changes]
