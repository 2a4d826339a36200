# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Groups: ``OS::Heat::ResourceGroup`` and ``OS::Heat::ResourceChain``, nested stacks
whose template the group generates from its properties.

A ResourceGroup's ``update_policy`` (``batch_create``, ``rolling_update``) converges
the child stack in batches, one pass per batch: members outside the current
batch keep their old definition, held exactly as they are, while the current
batch's members have the new definition (Heat's _assemble_for_rolling_update);
the batch arithmetic is in ``rolling.py``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..errors import HotplayError, InvalidAttribute, StackValidationFailed

from ..language.functions.hot import select_path
from ..limits import MAX_RESOURCES_PER_STACK
from .rolling import NEW, batch_members, batches
from ..language.template.loader import TemplateSource
from .base import (
    handler_for,
    AttributeSchema,
    Outcome,
    PropertySchema,
    Resource,
    ResourceState,
    register,
    resource_class,
)
from .properties import length, validate_properties, value_range


from .nested import NestedStackResource, child_runtime


class GroupResource(NestedStackResource):
    """Shared reading of members for ResourceGroup and ResourceChain."""

    common_attributes = {
        "refs": AttributeSchema("A list of resource IDs for the resources in the group.", "list"),
        "refs_map": AttributeSchema("A map of resource names to IDs for the resources in the group.", "map"),
        "attributes": AttributeSchema("A map of resource names to the specified attribute of each individual resource.", "map"),
    }

    def attribute_names(self) -> frozenset[str] | None:
        return None  # any member attribute name, and resource.N[.attr]

    def _member_values(self, state: ResourceState) -> list[tuple[str, ResourceState, Resource]]:
        runtime = child_runtime(self, state) if state.nested_stack_id else self.runtime
        return [(name, member, handler_for(name, member.implementation or member.type, runtime))
                for name, member in self.members(state)]

    def attribute(self, state: ResourceState, name: str) -> Any:
        try:
            return self._attribute(state, name)
        except InvalidAttribute:
            raise self._unknown_attribute(name) from None

    def _unknown_attribute(self, key: str, path: list[Any] | None = None) -> InvalidAttribute:
        """A member has no such attribute: Heat stores nothing for the group's read
        and then names the group, with the read's key (a tuple when it has a path)."""
        shown = repr(tuple([key, *path])) if path else key
        return InvalidAttribute(f"The Referenced Attribute ({self.name} {shown}) is incorrect.")

    def _attribute(self, state: ResourceState, name: str) -> Any:
        members = self._member_values(state)
        if name == "refs":
            return [handler.reference_id(member) for _name, member, handler in members]
        if name == "refs_map":
            return {n: handler.reference_id(member) for n, member, handler in members}
        if name == "attributes":
            return _attributes_by_name(members)
        if name.startswith("resource."):
            return _member_attribute(members, name[len("resource."):], self.name)
        return [handler.attribute(member, name) for _name, member, handler in members]

    def attribute_path(self, state: ResourceState, name: str, path: list[Any]) -> Any:
        """``get_attr`` with a path, as Heat's groups read it (get_nested_attrs):
        ``resource.N`` and the path name a member's attribute; ``attributes`` maps
        each member to the attribute the path names; any other name is a list of
        each member's attribute, the path applied to each."""
        try:
            return self._attribute_path(state, name, path)
        except InvalidAttribute:
            raise self._unknown_attribute(name, path) from None

    def _attribute_path(self, state: ResourceState, name: str, path: list[Any]) -> Any:
        members = self._member_values(state)
        if name.startswith("resource."):
            steps = name.split(".", 2)[1:] + list(path)
            for member_name, member, handler in members:
                if member_name == str(steps[0]):
                    if len(steps) == 1:
                        return handler.reference_id(member)
                    return _member_attribute_path(member, handler, steps[1], steps[2:])
            if len(steps) == 1:
                raise _no_member(str(steps[0]), self.name)
            return None
        if name == "attributes":
            return {n: _member_attribute_path(m, h, path[0], path[1:]) for n, m, h in members}
        if name in ("refs", "refs_map"):
            return select_path(self._attribute(state, name), path)
        return [_member_attribute_path(m, h, name, path) for _n, m, h in members]

    def reference_id(self, state: ResourceState) -> Any:
        return state.nested_stack_id or self.name


def _member_attribute_path(member: ResourceState, handler: Resource, name: str, path: list[Any]) -> Any:
    by_type = getattr(handler, "attribute_path", None)
    if by_type is not None and path:
        return by_type(member, name, path)
    return select_path(handler.attribute(member, name), path)


def _attributes_by_name(members: list[tuple[str, ResourceState, Resource]]) -> dict[str, dict[str, Any]]:
    """``get_attr: [group, attributes, NAME]`` -> ``{member: value}`` for NAME."""
    names: set[str] = set()
    for _name, member, handler in members:
        known = handler.attribute_names()
        if known is None and member.nested_stack_id:
            known = frozenset(handler.runtime.store.get_stack(member.nested_stack_id).outputs)
        names |= set(known or ())
    return {attr: {n: h.attribute(m, attr) for n, m, h in members} for attr in sorted(names)}


def _member_attribute(members: list[tuple[str, ResourceState, Resource]], spec: str, group: str) -> Any:
    index, _dot, attribute = spec.partition(".")
    for name, member, handler in members:
        if name == index:
            return handler.attribute(member, attribute) if attribute else handler.reference_id(member)
    if not attribute:
        raise _no_member(index, group)
    return None  # Heat: a missing member's attribute is null


def _no_member(index: str, group: str) -> HotplayError:
    """Heat's NotFound for ``resource.N`` of a group that has no member N."""
    return HotplayError(f"Member '{index}' not found in group resource '{group}'.")


# Heat's rolling update settings, the same for ResourceGroup's update_policy and
# AutoScalingGroup's rolling_updates property.
ROLLING_UPDATE_SCHEMA = {
    "min_in_service": PropertySchema(
        "integer", "The minimum number of resources in service while rolling "
        "updates are being executed.", default=0, constraints=(value_range(min=0),)),
    "max_batch_size": PropertySchema(
        "integer", "The maximum number of resources to replace at once.",
        default=1, constraints=(value_range(min=1),)),
    "pause_time": PropertySchema(
        "number", "The number of seconds to wait between batches of updates.",
        default=0, constraints=(value_range(min=0),)),
}


@register
class ResourceGroup(GroupResource):
    """``OS::Heat::ResourceGroup``: ``count`` copies of ``resource_def``."""

    type_name = "OS::Heat::ResourceGroup"
    properties_schema = {
        # Heat: Range(min=0), checked in the schema's order (before index_var).
        "count": PropertySchema("integer", "The number of resources to create.", default=1,
                                update_allowed=True, constraints=(value_range(min=0),)),
        # Heat: Length(min=3), and not update_allowed: a new index_var replaces the group.
        "index_var": PropertySchema("string", "A variable replaced with the member's index.",
                                    default="%index%", constraints=(length(min=3),)),
        "resource_def": PropertySchema("map", "Resource definition for the resources in the group.",
                                       required=True, update_allowed=True),
        "removal_policies": PropertySchema("list", "Policies for removal of resources on update.",
                                           default=[], update_allowed=True),
        "removal_policies_mode": PropertySchema("string", "How to handle changes to removal_policies.",
                                                default="append", update_allowed=True),
    }
    attributes_schema = GroupResource.common_attributes
    # Heat's update_policy_schema of OS::Heat::ResourceGroup.
    update_policy_schema = {
        "rolling_update": PropertySchema("map", schema=ROLLING_UPDATE_SCHEMA),
        "batch_create": PropertySchema("map", schema={
            "max_batch_size": PropertySchema(
                "integer", "The maximum number of resources to create at once.",
                default=1, constraints=(value_range(min=1),)),
            "pause_time": PropertySchema(
                "number", "The number of seconds to wait between batches.",
                default=0, constraints=(value_range(min=0),)),
        }),
    }

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        # Heat's update_template_diff_properties holds for groups too: a changed
        # property that is not update_allowed (index_var) replaces the group.
        return Resource.replacement_reason(self, old, new)

    @classmethod
    def validate_update_policy(cls, policy: Mapping[str, Any] | None, path: str) -> dict[str, Any]:
        """The resolved ``update_policy`` checked with Heat's schema and words
        (``Property error: resources.g.update_policy: Unknown Property x``), its
        defaults filled; an absent policy is None (off), as in Heat."""
        holder = type("UpdatePolicy", (), {"properties_schema": cls.update_policy_schema})
        return validate_properties(holder, policy or {}, path)

    def validate(self, properties: Mapping[str, Any]) -> None:
        count = properties.get("count")
        if isinstance(count, int) and count > MAX_RESOURCES_PER_STACK:
            # The group's stack would be built, and walked, before its own check.
            raise StackValidationFailed(
                f"{count} is more than the maximum of {MAX_RESOURCES_PER_STACK} resources "
                "per stack", path=f"resources.{self.name}.properties.count")

    def skiplist(self, properties: Mapping[str, Any]) -> set[str]:
        """Member names never to use (Heat's ``name_blacklist``): names and refs the
        removal policies list, kept across updates unless the mode is ``update``."""
        current = self.current
        kept = set((current.data.get("name_skiplist") if current else None) or [])
        members = self._member_refs(current)
        found = set() if properties.get("removal_policies_mode") == "update" else set(kept)
        for policy in properties.get("removal_policies") or []:
            for entry in (policy or {}).get("resource_list", []):
                name = str(entry)
                if current is None or name in kept or name in members:
                    found.add(name)
                else:  # a reference (get_resource of a member, as in ``refs``)
                    found.update(n for n, ref in members.items() if ref == name)
        return found

    def _member_refs(self, current: ResourceState | None) -> dict[str, Any]:
        if current is None or not current.nested_stack_id:
            return {}
        return dict(self.attribute(current, "refs_map") or {})

    def member_names(self, properties: Mapping[str, Any], size: int | None = None,
                     skipped: set[str] | None = None) -> list[str]:
        """Heat's naming: indexes from 0, skipping names on the skip list."""
        if skipped is None:
            skipped = self.skiplist(properties)
        if size is None:
            size = self.group_size(properties)
        names: list[str] = []
        index = 0
        while len(names) < size:
            if str(index) not in skipped:
                names.append(str(index))
            index += 1
        return names

    def extra_data(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return {"name_skiplist": sorted(self.skiplist(properties))}

    # -- what a group type decides (OS::Heat::SoftwareDeploymentGroup overrides) ------
    def group_size(self, properties: Mapping[str, Any]) -> int:
        return int(properties.get("count", 1))

    def member_definition(self, properties: Mapping[str, Any], name: str) -> dict[str, Any] | None:
        """The generated definition of member ``name`` (None: not known from these
        properties, e.g. recorded before an upgrade)."""
        if not properties.get("resource_def"):
            return None
        return _member_definition(properties["resource_def"], properties.get("index_var") or "%index%",
                                  name)

    def definition_changed(self, previous: Mapping[str, Any], properties: Mapping[str, Any]) -> bool:
        """Whether an update rolls (Heat's ``res_def_changed``)."""
        return previous.get("resource_def") != properties.get("resource_def")

    def child_template(self, properties: Mapping[str, Any]) -> TemplateSource:
        resources = {name: self.member_definition(properties, name)
                     for name in self.member_names(properties)}
        return self._generated(resources)

    def _generated(self, resources: dict[str, Any]) -> TemplateSource:
        data = {"heat_template_version": "2015-04-30", "resources": resources}
        return TemplateSource(f"resources.{self.name}", data, dict(self.runtime.files))

    # -- update_policy: batched create, rolling update --------------------------------
    def _update_policy(self) -> dict[str, Any]:
        declared = self.runtime.declared(self.name)
        policy = declared.update_policy if declared is not None else None
        return self.validate_update_policy(policy, f"resources.{self.name}.update_policy")

    def _converge(self, child_id: str, properties: Mapping[str, Any], action: str) -> Outcome:
        """Heat's ResourceGroup: the child converged in batches when the policy asks
        (``batch_create`` on create; ``rolling_update`` on an update that changes
        ``resource_def``), one pass per batch, a pause between batches; else once."""
        try:
            policy = self._update_policy()
        except HotplayError as error:
            self.runtime.store.set_stack_status(child_id, action, "FAILED", str(error))
            raise self.fail(str(error), type(error).__name__) from error
        rolling = self._rolling_settings(properties, action, policy)
        if rolling is None:
            return super()._converge(child_id, properties, action)
        batch_size, min_in_service, pause = rolling
        extra = self.extra_data(properties)
        # Fixed for the whole update, as Heat sets name_blacklist once first.
        skipped = self.skiplist(properties)
        size = self.group_size(properties)
        plan = batches(size, self._capacity(child_id, skipped), batch_size, min_in_service)
        if not plan:  # nothing to roll (Heat: no batch task, one plain pass)
            return super()._converge(child_id, properties, action)
        for number, (capacity, updates) in enumerate(plan):
            if number and pause > 0:
                self.runtime.sleep(pause)  # a cancel or time-out ends the wait
            self._converge_pass(
                child_id, properties,
                lambda: self._batch_template(child_id, properties, skipped, capacity, updates),
                action if number == 0 else "UPDATE", batch_pass=True)
        return Outcome(child_id, {"nested_stack_id": child_id, **extra})

    def _rolling_settings(self, properties: Mapping[str, Any], action: str,
                          policy: Mapping[str, Any]) -> tuple[int, int, float] | None:
        """(max_batch_size, min_in_service, pause_time), or None for one pass."""
        if action == "CREATE":
            spec = policy.get("batch_create")
            if not spec or not self.group_size(properties):
                return None
            return int(spec["max_batch_size"]), 0, float(spec["pause_time"])
        spec = policy.get("rolling_update")
        previous = self.current.properties if self.current is not None else None
        if not spec or previous is None or not self.definition_changed(previous, properties):
            return None
        return (int(spec["max_batch_size"]), int(spec.get("min_in_service", 0)),
                float(spec["pause_time"]))

    def _capacity(self, child_id: str, skipped: set[str]) -> int:
        """Heat's current capacity: every member, failed ones included, less the
        members (not failed) a removal policy lists."""
        members = [stored.state for stored in self.runtime.store.resources(child_id)]
        listed = [m for m in members if m.status != "FAILED" and m.name in skipped]
        return len(members) - len(listed)

    def _batch_template(self, child_id: str, properties: Mapping[str, Any], skipped: set[str],
                        capacity: int, updates: int) -> tuple[TemplateSource, frozenset[str]]:
        """One pass of a batched update (Heat's _assemble_for_rolling_update): the
        batch's members get the new definition, the others keep theirs."""
        previous = (self.current.properties if self.current is not None else None) or {}
        files = self.runtime.files
        members = {stored.state.name: stored.state for stored in self.runtime.store.resources(child_id)}
        # Heat: members not failed and not skipped, oldest first (by index here).
        existing = [(name, _has_definition(state, self.member_definition(properties, name) or {}))
                    for name, state in sorted(members.items(), key=lambda item: _index_key(item[0]))
                    if state.status != "FAILED" and name not in skipped]
        up_to_date = dict(existing)
        names = self.member_names(properties, capacity, skipped)
        chosen = batch_members(names, self.group_size(properties), capacity, updates, existing)
        rank = {name: position for position, name in enumerate(names)}
        resources: dict[str, Any] = {}
        hold: set[str] = set()
        for name, what in sorted(chosen, key=lambda item: rank.get(item[0], len(rank))):
            new = self.member_definition(properties, name)
            if what == NEW or up_to_date.get(name):
                resources[name] = new
                continue
            old = self.member_definition(previous, name)
            if old is not None and _has_definition(members[name], old) and _loadable(old["type"], files):
                resources[name] = old
            else:  # its definition is not known (an earlier update failed midway)
                resources[name] = new
                hold.add(name)
        return self._generated(resources), frozenset(hold)


def _member_definition(definition: Mapping[str, Any], index_var: str, index: str) -> dict[str, Any]:
    member: dict[str, Any] = {"type": definition["type"]}
    for key in ("properties", "metadata"):
        if definition.get(key) is not None:
            member[key] = _replace_index(copy.deepcopy(definition[key]), index_var, index)
    return member


def _index_key(name: str) -> tuple[int, str]:
    return (int(name), name) if name.isdigit() else (1 << 62, name)


def _has_definition(state: ResourceState, member: Mapping[str, Any]) -> bool:
    """Whether a member's record is what ``member`` (a generated definition)
    makes: the comparison a converge makes to leave a resource alone."""
    if state.action == "INIT" or state.type != member.get("type"):
        return False
    values = member.get("properties") or {}
    cls = resource_class(state.implementation or state.type)
    try:
        expected = dict(values) if cls is None else validate_properties(cls, values, "")
    except HotplayError:
        return False
    return dict(state.properties) == expected and dict(state.metadata) == dict(member.get("metadata") or {})


def _loadable(type_name: str, files: Mapping[str, str]) -> bool:
    """A provider template of an old definition must still be among the files."""
    return not type_name.endswith((".yaml", ".yml", ".template", ".json")) or type_name in files


def _replace_index(value: Any, index_var: str, index: str) -> Any:
    if isinstance(value, str):
        return value.replace(index_var, index)
    if isinstance(value, list):
        return [_replace_index(v, index_var, index) for v in value]
    if isinstance(value, Mapping):
        return {k: _replace_index(v, index_var, index) for k, v in value.items()}
    return value


@register
class ResourceChain(GroupResource):
    """``OS::Heat::ResourceChain``: resources of the listed types, each depending on
    the one before unless ``concurrent``."""

    type_name = "OS::Heat::ResourceChain"
    properties_schema = {
        "resources": PropertySchema("list", "The list of resource types to create.",
                                    required=True, update_allowed=True),
        "concurrent": PropertySchema("boolean", "If true, the resources are created concurrently.",
                                     default=False),
        "resource_properties": PropertySchema("map", "Properties passed to each resource.",
                                              default={}, update_allowed=True),
    }
    attributes_schema = GroupResource.common_attributes

    def child_template(self, properties: Mapping[str, Any]) -> TemplateSource:
        resources: dict[str, Any] = {}
        for index, type_name in enumerate(properties["resources"]):
            member: dict[str, Any] = {"type": type_name,
                                      "properties": dict(properties.get("resource_properties") or {})}
            if index and not properties.get("concurrent"):
                member["depends_on"] = [str(index - 1)]
            resources[str(index)] = member
        data = {"heat_template_version": "2015-04-30", "resources": resources}
        return TemplateSource(f"resources.{self.name}", data, dict(self.runtime.files))
