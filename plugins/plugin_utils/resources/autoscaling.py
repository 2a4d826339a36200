# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's autoscaling: ``OS::Heat::AutoScalingGroup`` and ``OS::Heat::ScalingPolicy``.

A group is a nested stack of ``resource`` copies named by random short ids, the
oldest first (failed members before them: the first to go when it shrinks).  Facts
from Heat 27 (heat/engine/resources/openstack/heat/autoscaling_group.py, its base
classes aws/autoscaling/autoscaling_group.py and openstack/heat/instance_group.py,
heat/scaling/{cooldown,scalingutil,template,rolling_update}.py):

- create: ``desired_capacity`` members, else ``min_size``;
- update: a changed ``resource`` rolls first (``rolling_updates``: batches as
  ``InstanceGroup._replace``), then the group is resized to ``desired_capacity``
  or, without one, kept at its current size, within ``min_size``..``max_size``;
- a signal to a policy resizes it by the policy's adjustment (``adjust``), unless
  the group is not COMPLETE, the size would not change, or the cooldown since the
  last scaling has not passed (Heat's NoActionRequired: no event, nothing done);
- every create, update and scaling sets the end of the cooldown (the group's
  ``cooldown_end``, kept in its data as Heat keeps it in its metadata).

Here a signal is a run of the stack (operations/scale.py): the group is updated
with the size the policy gives (``RuntimeContext.scaled_size``), under the stack's
lease, with a revision, events, hooks and check mode.
"""

from __future__ import annotations

import base64
import copy
import datetime
import functools
import math
import secrets
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import HotplayError, InvalidAttribute, StackValidationFailed
from ..language.functions.hot import select_path
from ..language.template.loader import TemplateSource
from ..limits import MAX_RESOURCES_PER_STACK
from .base import (AttributeSchema, Outcome, PropertySchema, Resource, ResourceState, handler_for, register,
                   resource_class)
from .group import (ROLLING_UPDATE_SCHEMA, GroupResource, _has_definition, _loadable, _member_attribute_path,
                    _no_member)
from .nested import child_runtime
from .properties import allowed_values, value_range
from .rolling import NEW, scaled_members, scaling_group_batches
from .runtime import ScaleStep

ADJUSTMENT_TYPES = (EXACT_CAPACITY, CHANGE_IN_CAPACITY, PERCENT_CHANGE_IN_CAPACITY) = (
    "exact_capacity", "change_in_capacity", "percent_change_in_capacity")
# The CloudFormation names, as Heat writes them in the cooldown's reason.
CFN_EXACT_CAPACITY = "ExactCapacity"
# What a group keeps in its data (Heat's resource metadata of the group).
COOLDOWN_END, SCALING_IN_PROGRESS = "cooldown_end", "scaling_in_progress"
# Its members' names, oldest first (Heat orders them by their created_time): noted
# before each pass makes them, so that a run killed midway leaves the order known.
MEMBER_ORDER = "members"


class NoScaling(HotplayError):
    """Heat's NoActionRequired: a signal that changes nothing (no event either)."""


def new_capacity(current: int, adjustment: float, adjustment_type: str, min_step: int | None,
                 minimum: int, maximum: int) -> int:
    """Heat's ``calculate_new_capacity``: the size after an adjustment, kept within
    the bounds; a percentage rounds towards zero, but to at least one member and to
    at least ``min_step`` members."""
    if adjustment_type in (CHANGE_IN_CAPACITY, "ChangeInCapacity"):
        wanted = current + adjustment
    elif adjustment_type in (EXACT_CAPACITY, CFN_EXACT_CAPACITY):
        wanted = adjustment
    else:
        delta = current * adjustment / 100.0
        if math.fabs(delta) < 1.0:
            rounded = int(math.ceil(delta) if delta > 0.0 else math.floor(delta))
        else:
            rounded = int(math.floor(delta) if delta > 0.0 else math.ceil(delta))
        if min_step and min_step > abs(rounded):
            rounded = min_step if rounded > 0 else -min_step
        wanted = current + rounded
    return int(max(min(wanted, maximum), minimum))


def cooldown_ends(data: Mapping[str, Any]) -> str | None:
    """When the group's last cooldown ends (ISO 8601, UTC), if it has one."""
    ends = data.get(COOLDOWN_END)
    return next(iter(ends)) if isinstance(ends, Mapping) and ends else None


def finished_scaling(data: Mapping[str, Any], cooldown: float | None, reason: str) -> dict[str, Any]:
    """Heat's ``_finished_scaling``: the group's cooldown starts now (the later end
    wins when one is running)."""
    seconds = max(0.0, float(cooldown or 0))
    end = (datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
           + datetime.timedelta(seconds=seconds)).isoformat()
    running = cooldown_ends(data)
    if running is not None:
        end = max(running, end)
    return {COOLDOWN_END: {end: reason}, SCALING_IN_PROGRESS: False}


def short_id() -> str:
    """A member's name: 12 characters of base32, lower case, as Heat's short_id."""
    return base64.b32encode(secrets.token_bytes(8)).decode()[:12].lower()


def _in_age_order(order: Sequence[str], chosen: list[tuple[str, str]]) -> list[str]:
    """The members of a pass, oldest first: those already in ``order`` as they are
    there, then the others (the pass's new members) in the pass's order."""
    names = [name for name, _what in chosen]
    present = set(names)
    kept = [name for name in order if name in present]
    seen = set(kept)
    return kept + [name for name in names if name not in seen]


def _played(state: list[tuple[str, bool]], chosen: list[tuple[str, str]]) -> list[tuple[str, bool]]:
    """The members after a pass: each chosen one, with whether it has the new
    definition (it had it, or the pass gives it)."""
    had = dict(state)
    return [(name, what == NEW or had.get(name, False)) for name, what in chosen]


@dataclass(frozen=True)
class GroupSize:
    """A group's bounds and sizes as a scaling reads them."""

    current: int  # members not FAILED
    minimum: int
    maximum: int


def ordered_members(store: Any, child_id: str | None, order: Sequence[str] = ()) -> list[ResourceState]:
    """A group's members, the first to go first: failed ones, then the oldest (by
    ``order``, the group's MEMBER_ORDER; any it does not name after them)."""
    if not child_id:
        return []
    members = {stored.state.name: stored.state for stored in store.resources(child_id)}
    known = [members[name] for name in order if name in members]
    named = set(order)
    rest = [state for name, state in members.items() if name not in named]
    return sorted(known + rest, key=lambda state: state.status != "FAILED")


def live_members(store: Any, group: ResourceState) -> list[ResourceState]:
    """A group's members not FAILED, oldest first (Heat's member_names(False))."""
    return [m for m in ordered_members(store, group.nested_stack_id, group.data.get(MEMBER_ORDER) or ())
            if m.status != "FAILED"]


def group_size(store: Any, group: ResourceState) -> GroupSize:
    """A group's size and bounds, as its record has them."""
    sizes = group_sizes(group)
    return GroupSize(len(live_members(store, group)), int(sizes["min_size"]), int(sizes["max_size"]))


def group_sizes(group: ResourceState) -> dict[str, Any]:
    """A group's ``min_size``, ``max_size``, ``desired_capacity`` and ``cooldown``,
    whatever its type names them."""
    cls = resource_class(group.implementation or group.type)
    sizes: dict[str, Any] = (cls if isinstance(cls, type) and issubclass(cls, AutoScalingGroup)
                             else AutoScalingGroup).sizes(group.properties)
    return sizes


@register
class AutoScalingGroup(GroupResource):
    """``OS::Heat::AutoScalingGroup``: ``resource`` copies, resized by scaling
    policies and by updates."""

    type_name = "OS::Heat::AutoScalingGroup"
    properties_schema = {
        "resource": PropertySchema(
            "map", "Resource definition for the resources in the group, in HOT format.",
            required=True, update_allowed=True),
        "max_size": PropertySchema("integer", "Maximum number of resources in the group.",
                                   required=True, update_allowed=True,
                                   constraints=(value_range(min=0),)),
        "min_size": PropertySchema("integer", "Minimum number of resources in the group.",
                                   required=True, update_allowed=True,
                                   constraints=(value_range(min=0),)),
        "cooldown": PropertySchema("integer", "Cooldown period, in seconds.", update_allowed=True),
        "desired_capacity": PropertySchema("integer", "Desired initial number of resources.",
                                           update_allowed=True),
        "rolling_updates": PropertySchema(
            "map", "Policy for rolling updates for this scaling group.", update_allowed=True,
            default={"min_in_service": 0, "max_batch_size": 1, "pause_time": 0},
            schema=ROLLING_UPDATE_SCHEMA),
    }
    attributes_schema = {
        "outputs": AttributeSchema("A map of resource names to the specified attribute of each "
                                   "individual resource that is part of the AutoScalingGroup.", "map"),
        "outputs_list": AttributeSchema("A list of the specified attribute of each individual "
                                        "resource that is part of the AutoScalingGroup.", "list"),
        "current_size": AttributeSchema("The current size of AutoscalingResourceGroup.", "integer"),
        "refs": AttributeSchema("A list of resource IDs for the resources in the group.", "list"),
        "refs_map": AttributeSchema("A map of resource names to IDs for the resources in the group.",
                                    "map"),
    }

    def __init__(self, name: str, runtime: Any) -> None:
        super().__init__(name, runtime)
        self._noted: list[str] | None = None  # the members' order this run noted

    def bind_current(self, state: ResourceState | None) -> None:
        super().bind_current(state)
        self._noted = None

    # -- what the AWS groups name otherwise (aws_autoscaling.py) -------------------------
    @classmethod
    def sizes(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        """``min_size``, ``max_size``, ``desired_capacity`` and ``cooldown``."""
        return {key: properties.get(key) for key in ("min_size", "max_size", "desired_capacity", "cooldown")}

    def rolling_policy(self, properties: Mapping[str, Any]) -> Mapping[str, Any]:
        """``max_batch_size``, ``min_in_service`` and ``pause_time`` (seconds) of a
        rolling update."""
        return properties.get("rolling_updates") or {}

    def new_member(self, properties: Mapping[str, Any]) -> dict[str, Any] | None:
        """The definition members get from these properties."""
        return self.member_definition(properties)

    def previous_member(self) -> dict[str, Any] | None:
        """The definition the last apply gave members (None: not known)."""
        return self.member_definition(self.current.properties if self.current else None)

    def member_changed(self, previous: Mapping[str, Any], properties: Mapping[str, Any]) -> bool:
        """Whether an update rolls the new definition across the members."""
        return previous.get("resource") != properties.get("resource")

    def group_data(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        """What the group keeps in its data besides its members and cooldown."""
        return {}

    # -- validation ---------------------------------------------------------------------
    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's checks of the sizes, in its words and order."""
        low, high = properties.get("min_size"), properties.get("max_size")
        desired = properties.get("desired_capacity")
        path = f"resources.{self.name}"
        if isinstance(low, int) and isinstance(high, int) and high < low:
            raise StackValidationFailed("MinSize can not be greater than MaxSize", path=path)
        if isinstance(desired, int) and isinstance(low, int) and isinstance(high, int) \
                and not low <= desired <= high:
            raise StackValidationFailed("DesiredCapacity must be between MinSize and MaxSize", path=path)
        for key in ("desired_capacity", "max_size"):
            value = properties.get(key)
            if isinstance(value, int) and value > MAX_RESOURCES_PER_STACK:
                raise StackValidationFailed(
                    f"{value} is more than the maximum of {MAX_RESOURCES_PER_STACK} resources "
                    "per stack", path=f"{path}.properties.{key}")

    # The sizes are checked before the members' properties are known (they may read
    # other resources): the same checks, on what is known.
    validate_known = validate

    # -- members ------------------------------------------------------------------------
    def ordered_members(self, child_id: str | None) -> list[ResourceState]:
        return ordered_members(self.runtime.store, child_id, self._order())

    def _order(self) -> list[str]:
        """The members' names, oldest first, as this run has noted them last."""
        if self._noted is None:
            self._noted = list((self.current.data.get(MEMBER_ORDER) if self.current else None) or ())
        return self._noted

    def _note_order(self, names: list[str]) -> None:
        """Before a pass makes them: the members' order, in the group's record."""
        self._noted = list(names)
        self.runtime.note_data(self.name, MEMBER_ORDER, self._noted)

    def live_members(self, state: ResourceState) -> list[ResourceState]:
        return live_members(self.runtime.store, state)

    @staticmethod
    def member_definition(properties: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """A member's definition: the ``resource`` property as written (None when
        there is none to read)."""
        resource = (properties or {}).get("resource")
        return copy.deepcopy(dict(resource)) if isinstance(resource, Mapping) else None

    def child_template(self, properties: Mapping[str, Any]) -> TemplateSource:
        """The group as the update will leave it (what a preview shows): the
        rolling update's passes and the resize played on the members' names, as
        ``_converge`` runs them."""
        child_id = self.current.nested_stack_id if self.current is not None else None
        new = self.new_member(properties) or {}
        members = {m.name: m for m in self.ordered_members(child_id)}
        state = [(name, _has_definition(member, new)) for name, member in members.items()]
        names = self._fresh_names(set(members))
        step = self.runtime.scaled_size(self.name)
        if step is None and self._rolls(properties):
            for size, updates in self._roll_plan(len(state), properties):
                state = _played(state, scaled_members(state, size, updates, names))
        live = len([name for name, _new in state if name not in members or members[name].status != "FAILED"])
        chosen = scaled_members(state, self._target_size(live, properties), 0, names)
        template, _hold = self._template_of(_played(state, chosen), members, properties)
        return template

    def _target_size(self, live: int, properties: Mapping[str, Any]) -> int:
        """The size an apply gives the group of ``live`` members (not FAILED): a
        scaling signal's; on create ``desired_capacity`` or ``min_size``; on update
        ``desired_capacity`` or its current size, within the bounds."""
        step = self.runtime.scaled_size(self.name)
        if step is not None:
            return step.capacity
        sizes = self.sizes(properties)
        if self.current is None or not self.current.nested_stack_id:
            return int(sizes["desired_capacity"] or sizes["min_size"])
        wanted = sizes["desired_capacity"] or live
        return new_capacity(live, wanted, EXACT_CAPACITY, None, int(sizes["min_size"]), int(sizes["max_size"]))

    def _pass_template(self, child_id: str | None, properties: Mapping[str, Any], size: int,
                       updates: int) -> tuple[TemplateSource, frozenset[str]]:
        """One pass (Heat's ``_create_template(size, updates)``): the last ``size``
        members kept, new ones added, ``updates`` of them given the new definition."""
        new = self.new_member(properties) or {}
        members = {m.name: m for m in self.ordered_members(child_id)}
        state = [(name, _has_definition(member, new)) for name, member in members.items()]
        chosen = scaled_members(state, size, updates, self._fresh_names(set(members)))
        self._note_order(_in_age_order(self._order(), chosen))
        return self._template_of(_played(state, chosen), members, properties)

    def _template_of(self, planned: list[tuple[str, bool]], members: Mapping[str, ResourceState],
                     properties: Mapping[str, Any]) -> tuple[TemplateSource, frozenset[str]]:
        """The child template of ``planned`` members (name, whether it gets the new
        definition); a member whose definition is known neither way is held as it is."""
        new = self.new_member(properties) or {}
        previous = self.previous_member()
        resources: dict[str, Any] = {}
        hold: set[str] = set()
        for name, gets_new in planned:
            if gets_new or name not in members:
                resources[name] = copy.deepcopy(new)
            elif previous is not None and _has_definition(members[name], previous) \
                    and _loadable(str(previous.get("type", "")), self.runtime.files):
                resources[name] = copy.deepcopy(previous)
            else:  # left by an update that failed midway: kept exactly as it is
                resources[name] = copy.deepcopy(new)
                hold.add(name)
        return self._generated(resources), frozenset(hold)

    def _generated(self, resources: dict[str, Any]) -> TemplateSource:
        data = {"heat_template_version": "2015-04-30", "resources": resources}
        return TemplateSource(f"resources.{self.name}", data, dict(self.runtime.files))

    @staticmethod
    def _fresh_names(taken: set[str]) -> Iterator[str]:
        while True:
            name = short_id()
            if name not in taken:
                taken.add(name)
                yield name

    # -- converging -------------------------------------------------------------------------
    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        """Heat's group: its members keep Heat's names, in the order of its nested
        template (oldest first), and its cooldown (Heat's metadata) is kept."""
        nested = adopted.stack
        if nested is None:
            return super().handle_adopt(properties, adopted)
        # Heat writes an InstanceGroup's (and an AWS group's) nested template in CFN form.
        template = nested.template or {}
        written = list(template.get("resources") or template.get("Resources") or {})
        names = [name for name in written if name in nested.resources] + \
            [name for name in nested.resources if name not in written]
        child = self.runtime.store.create_stack(
            nested.name, parent_id=self.runtime.stack_id, parent_resource=self.name,
            stack_id=nested.id)
        self.runtime.note_nested_stack(self.name, child.id)
        member = self.new_member(properties) or {}
        self._converge_pass(child.id, properties,
                            lambda: (self._generated({n: copy.deepcopy(member) for n in names}),
                                     frozenset()), "ADOPT")
        kept = {key: adopted.metadata[key] for key in (COOLDOWN_END, SCALING_IN_PROGRESS)
                if key in adopted.metadata}
        return Outcome(child.id, {"nested_stack_id": child.id, MEMBER_ORDER: names, **kept,
                                  **self.group_data(properties)})

    def _converge(self, child_id: str, properties: Mapping[str, Any], action: str) -> Outcome:
        step = self.runtime.scaled_size(self.name)
        if step is None and self._rolls(properties):
            self._roll(child_id, properties)
        live = len([m for m in self.ordered_members(child_id) if m.status != "FAILED"])
        # Heat's resize: members keep the definition they have, new ones get the new.
        size = self._target_size(live, properties)
        self._converge_pass(child_id, properties,
                            lambda: self._pass_template(child_id, properties, size, 0), action)
        kept = self.current.data if self.current is not None else {}
        if step is not None:
            cooldown, reason = step.cooldown, step.reason
        else:
            live = len([m for m in self.ordered_members(child_id) if m.status != "FAILED"])
            cooldown, reason = self.sizes(properties)["cooldown"], f"{CFN_EXACT_CAPACITY} : {live}"
        return Outcome(child_id, {"nested_stack_id": child_id, MEMBER_ORDER: self._order(),
                                  **finished_scaling(kept, cooldown, reason), **self.group_data(properties)})

    def _rolls(self, properties: Mapping[str, Any]) -> bool:
        """An update that changes ``resource`` rolls it across the members first."""
        previous = self.current.properties if self.current is not None else None
        return bool(previous and self.current and self.current.nested_stack_id
                    and self.member_changed(previous, properties))

    def _roll(self, child_id: str, properties: Mapping[str, Any]) -> None:
        """Heat's ``_replace``: the members get the new definition in batches of
        ``max_batch_size``, at least ``min_in_service`` kept in service, a pause of
        ``pause_time`` seconds between batches."""
        pause = float(self.rolling_policy(properties).get("pause_time", 0))
        passes = self._roll_plan(len(self.ordered_members(child_id)), properties)
        for number, (size, updates) in enumerate(passes):
            if number and pause > 0:
                self.runtime.sleep(pause)  # a cancel or time-out ends the wait
            self._converge_pass(child_id, properties,
                                functools.partial(self._pass_template, child_id, properties, size, updates),
                                "UPDATE", batch_pass=True)

    def _roll_plan(self, capacity: int, properties: Mapping[str, Any]) -> list[tuple[int, int]]:
        """The rolling update's passes for a group of ``capacity`` members (failed
        ones too): Heat's target is ``desired_capacity``, at most that many."""
        policy = self.rolling_policy(properties)
        target = min(int(self.sizes(properties)["desired_capacity"] or capacity), capacity)
        return scaling_group_batches(target, capacity, int(policy.get("max_batch_size", 1)),
                                     int(policy.get("min_in_service", 0)))

    # -- attributes ---------------------------------------------------------------------------
    def attribute_names(self) -> frozenset[str] | None:
        return None  # resource.N[.attr] besides the schema's

    def _attribute(self, state: ResourceState, name: str) -> Any:
        return self._attribute_path(state, name, [])

    def _attribute_path(self, state: ResourceState, name: str, path: list[Any]) -> Any:
        members = self._live_handlers(state)
        if name == "current_size":
            return select_path(len(members), path)
        if name in ("refs", "refs_map"):
            refs = {n: handler.reference_id(member) for n, member, handler in members}
            return select_path(list(refs.values()) if name == "refs" else refs, path)
        if name in ("outputs", "outputs_list") and path:
            values = {n: _member_attribute_path(m, h, str(path[0]), list(path[1:]))
                      for n, m, h in members}
            return values if name == "outputs" else list(values.values())
        if name.startswith("resource."):
            return self._member_by_index(members, name, path)
        raise InvalidAttribute(f"The Referenced Attribute ({self.name} {name}) is incorrect.")

    def _live_handlers(self, state: ResourceState) -> list[tuple[str, ResourceState, Resource]]:
        runtime = child_runtime(self, state) if state.nested_stack_id else self.runtime
        return [(m.name, m, handler_for(m.name, m.implementation or m.type, runtime))
                for m in self.live_members(state)]

    def _member_by_index(self, members: list[tuple[str, ResourceState, Resource]], name: str,
                         path: list[Any]) -> Any:
        """``resource.N`` (the N-th member, oldest first) and ``resource.N.attr``."""
        parts = name.split(".", 2)
        index = parts[1]
        position = int(index) if index.lstrip("-").isdigit() else None
        if position is None or not -len(members) <= position < len(members):
            raise _no_member(index, self.name)
        _name, member, handler = members[position]
        steps = parts[2:] + list(path)
        if not steps:
            return handler.reference_id(member)
        return _member_attribute_path(member, handler, str(steps[0]), steps[1:])

    @classmethod
    def exported_metadata(cls, store: Any, stack_id: str, state: ResourceState) -> dict[str, Any]:
        """Heat keeps the cooldown in the group's metadata."""
        kept = {key: state.data[key] for key in (COOLDOWN_END, SCALING_IN_PROGRESS) if key in state.data}
        return {**dict(state.metadata), **kept}


# -- scaling policies ---------------------------------------------------------------------

# Heat's SignalResponder: the signal's reason in the policy's SIGNAL event.
def signal_details(details: Any) -> str:
    """The SIGNAL event's reason for a signal's body, as Heat's _handle_signal says it."""
    if details is None:
        return "No signal details provided"
    if isinstance(details, str):
        return details
    if isinstance(details, Mapping) and all(k in details for k in ("previous", "current", "reason")):
        return ("alarm state changed from "
                f"{details['previous']} to {details['current']} ({details['reason']})")
    return "Unknown"


@register
class ScalingPolicy(Resource):
    """``OS::Heat::ScalingPolicy``: a signal to it resizes its group
    (hotplay.stacks.stack_signal; operations/scale.py)."""

    type_name = "OS::Heat::ScalingPolicy"
    scales_a_group = True
    properties_schema = {
        "auto_scaling_group_id": PropertySchema("string", "AutoScaling group ID to apply policy to.",
                                                required=True),
        "scaling_adjustment": PropertySchema("number", "Size of adjustment.", required=True,
                                             update_allowed=True),
        "adjustment_type": PropertySchema(
            "string", "Type of adjustment (absolute or percentage).", required=True,
            update_allowed=True, constraints=(allowed_values(CHANGE_IN_CAPACITY, EXACT_CAPACITY,
                                                             PERCENT_CHANGE_IN_CAPACITY),)),
        "cooldown": PropertySchema("number", "Cooldown period, in seconds.", update_allowed=True),
        "min_adjustment_step": PropertySchema(
            "integer", "Minimum number of resources that are added or removed when the "
            "AutoScaling group scales up or down.", update_allowed=True,
            constraints=(value_range(min=0),)),
    }
    attributes_schema = {
        "alarm_url": AttributeSchema("A signed url to handle the alarm."),
        "signal_url": AttributeSchema("A url to handle the alarm using native API."),
    }

    @classmethod
    def hot_properties(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        """The policy's properties by these names (the AWS policy names them otherwise)."""
        return dict(properties)

    def validate(self, properties: Mapping[str, Any]) -> None:
        if properties.get("min_adjustment_step") is not None and \
                properties.get("adjustment_type") != PERCENT_CHANGE_IN_CAPACITY:
            raise StackValidationFailed(
                "min_adjustment_step property should only be specified for adjustment_type "
                f"with value {PERCENT_CHANGE_IN_CAPACITY}.", path=f"resources.{self.name}")

    validate_known = validate  # auto_scaling_group_id reads the group: known later

    adoptable = True  # Heat's user id is kept as the id; no user is needed here

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        # Heat's id is the Keystone user it makes for pre-signed URLs: here, an id.
        return Outcome(uuid.uuid4().hex)

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        return Outcome(current.physical_id, current.data)

    def attribute(self, state: ResourceState, name: str) -> Any:
        """``alarm_url`` and ``signal_url``: where hotplay.stacks.stack_signal sends a
        signal to this policy (its ``url`` option); null before it exists, as Heat."""
        if name not in ("alarm_url", "signal_url"):
            return super().attribute(state, name)
        if not state.physical_id:
            return None
        return signal_url(*self.runtime.address(self.name))

    @staticmethod
    def adjustment(group: GroupSize, properties: Mapping[str, Any], group_cooldown: Any,
                   group_data: Mapping[str, Any], group_name: str) -> ScaleStep:
        """Heat's ``adjust``: the group's new size, or NoScaling (the size would not
        change, or the cooldown has not passed)."""
        amount = properties["scaling_adjustment"]
        kind = properties["adjustment_type"]
        capacity = new_capacity(group.current, amount, kind, properties.get("min_adjustment_step"),
                                group.minimum, group.maximum)
        if capacity == group.current:
            raise NoScaling(f"{group_name} stays at {capacity} members: {kind} {amount} within "
                            f"min_size {group.minimum} and max_size {group.maximum} changes nothing")
        cooldown = properties.get("cooldown")
        if cooldown is None:
            cooldown = group_cooldown
        ends = cooldown_ends(group_data)
        now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None).isoformat()
        if ends is not None and now < ends:
            raise NoScaling(f"The resource {group_name} could not perform scaling action: "
                            f"due to cooldown, cooldown {cooldown} (it ends at {ends} UTC)")
        return ScaleStep(capacity, cooldown, f"{kind} : {amount}", group.current)


def signal_url(stack: str, path: str) -> str:
    """A policy's ``signal_url`` and ``alarm_url`` here: the stack and resource that
    hotplay.stacks.stack_signal takes (its ``url`` option)."""
    return f"hotplay://stacks/{stack}/resources/{path}/signal"
