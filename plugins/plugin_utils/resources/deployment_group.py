# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``OS::Heat::SoftwareDeploymentGroup`` and ``OS::Heat::StructuredDeploymentGroup``:
one config deployed to several servers.

As in Heat, the group is a ResourceGroup whose members are deployments named by
the keys of ``servers``, each with ``server`` set to its value; so the rolling
update (``update_policy: rolling_update``: ``max_batch_size``, ``pause_time``) and
``batch_create`` are the ResourceGroup's, with Heat's batch arithmetic.  Each
member runs on its own inventory host through a connection of its own (the play's
connection variables of that host, as ``delegate_to`` uses them), so the members
of a batch run side by side.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..language.functions.hot import select_path
from .base import AttributeSchema, PropertySchema, ResourceState, register
from .group import ResourceGroup
from .properties import value_range
from .software_deployment import SoftwareDeployment, StructuredDeployment

# What each member takes over from the group unchanged.
_SHARED = ("config", "input_values", "actions", "name", "signal_transport")
# Group attribute -> the member attribute it maps (Heat's get_attribute).
_MAPPED = {"deploy_stdouts": "deploy_stdout", "deploy_stderrs": "deploy_stderr",
           "deploy_status_codes": "deploy_status_code"}


@register
class SoftwareDeploymentGroup(ResourceGroup):
    """``OS::Heat::SoftwareDeploymentGroup``: deploy a config to every server of
    ``servers`` (a map of member names to servers)."""

    type_name = "OS::Heat::SoftwareDeploymentGroup"
    member_type = SoftwareDeployment
    properties_schema = {
        "servers": PropertySchema(
            "map", "A map of names and servers (inventory hosts) to apply the configuration to. "
            "The name is used as the resource name of that server's deployment.",
            required=True, update_allowed=True),
        **{name: SoftwareDeployment.properties_schema[name] for name in _SHARED},
    }
    attributes_schema = {
        "deploy_stdouts": AttributeSchema(
            "A map of names and captured stdouts from the configuration execution to each server.", "map"),
        "deploy_stderrs": AttributeSchema(
            "A map of names and captured stderrs from the configuration execution to each server.", "map"),
        "deploy_status_codes": AttributeSchema(
            "A map of names and returned status code from the configuration execution.", "map"),
    }
    # Heat's: no min_in_service for deployment groups.
    update_policy_schema = {
        "rolling_update": PropertySchema("map", schema={
            "max_batch_size": PropertySchema(
                "integer", "The maximum number of deployments to replace at once.",
                default=1, constraints=(value_range(min=1),)),
            "pause_time": PropertySchema(
                "number", "The number of seconds to wait between batches of updates.",
                default=0, constraints=(value_range(min=0),)),
        }),
        "batch_create": ResourceGroup.update_policy_schema["batch_create"],
    }

    def validate(self, properties: Mapping[str, Any]) -> None:
        """Nothing beyond the schema (a group of no servers is allowed, as in Heat)."""

    # -- the group: one member per server ------------------------------------------------
    def group_size(self, properties: Mapping[str, Any]) -> int:
        return len(properties.get("servers") or {})

    def member_names(self, properties: Mapping[str, Any], size: int | None = None,
                     skipped: set[str] | None = None) -> list[str]:
        names = [str(name) for name in properties.get("servers") or {}]
        return names if size is None else names[:size]

    def skiplist(self, properties: Mapping[str, Any]) -> set[str]:
        return set()  # no removal policies

    def member_definition(self, properties: Mapping[str, Any], name: str) -> dict[str, Any] | None:
        servers = properties.get("servers")
        if servers is None:
            return None
        member = {key: copy.deepcopy(properties[key]) for key in self.member_properties()
                  if properties.get(key) is not None}
        member["server"] = servers.get(name)
        return {"type": self.member_type.type_name, "properties": member}

    @classmethod
    def member_properties(cls) -> tuple[str, ...]:
        return tuple(name for name in cls.properties_schema if name != "servers")

    def definition_changed(self, previous: Mapping[str, Any], properties: Mapping[str, Any]) -> bool:
        return True  # Heat's res_def_changed of deployment groups

    # -- attributes: maps of member name to the member's attribute ------------------------
    def attribute(self, state: ResourceState, name: str) -> Any:
        member_attribute = _MAPPED.get(name, name)
        return {member_name: handler.attribute(member, member_attribute)
                for member_name, member, handler in self._member_values(state)}

    def attribute_path(self, state: ResourceState, name: str, path: list[Any]) -> Any:
        return select_path(self.attribute(state, name), path)

    def reference_id(self, state: ResourceState) -> Any:
        return state.nested_stack_id or self.name


@register
class StructuredDeploymentGroup(SoftwareDeploymentGroup):
    """``OS::Heat::StructuredDeploymentGroup``: a structured config to every server."""

    type_name = "OS::Heat::StructuredDeploymentGroup"
    member_type = StructuredDeployment
    properties_schema = {
        **SoftwareDeploymentGroup.properties_schema,
        "input_key": StructuredDeployment.properties_schema["input_key"],
        "input_values_validate": StructuredDeployment.properties_schema["input_values_validate"],
    }
