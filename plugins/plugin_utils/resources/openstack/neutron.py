# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Neutron::* on Neutron's API (v2.0), as Heat 27's resource plugins use it
(heat/engine/resources/openstack/neutron/): the physical id is Neutron's id, the
request bodies are Heat's (``prepare_properties``: properties that are not null,
``value_specs`` merged in, the name defaulting to ``<stack>-<resource>-<random>``),
attributes are read live and shown as Neutron answers them.

- create: POST, then (networks) wait until Neutron says it is built (Heat's
  ``is_built``: ACTIVE or DOWN; ERROR fails);
- update in place: only the properties whose value changed, against the record
  and against what Neutron holds now (so Heat's ``converge`` repairs drift), in one
  PUT; tags with their own call, as Heat does;
- delete: DELETE, NotFound counts as done, then wait until Neutron no longer
  lists it;
- drift: what the template set, compared with what Neutron shows.
"""

from __future__ import annotations

import ipaddress
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..base import Outcome, PropertySchema, ResourceState, register
from ..properties import allowed_values, value_range
from .base import UNANSWERED_NAME, UUID_SHAPE, OpenStackResource, attributes_from_facade, properties_from_facade
from .constraints import NEUTRON_KINDS, NeutronKind, find_neutron_id
from .session import CloudFailure

NEUTRON = "network"
# oslo's is_uuid_like, as Heat's get_secgroup_uuids uses it.
_UUID_LIKE = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")


class NeutronResource(OpenStackResource):
    """Heat's ``NeutronResource``: what every OS::Neutron type shares."""

    kind: ClassVar[NeutronKind]
    # Neutron's name of one item in a request or answer (``network``).
    entity: ClassVar[str]
    # Properties sent under another key, their value looked up by name or id
    # first when a kind is given (Heat's RESOLVE rules): property -> (key, kind).
    sent_as: ClassVar[Mapping[str, tuple[str, str | None]]] = {}
    # Properties never sent in the item's body (set with calls of their own).
    not_sent: ClassVar[frozenset[str]] = frozenset({"tags", "value_specs"})
    # Properties drift compares with what Neutron shows (under the same key).
    compared: ClassVar[tuple[str, ...]] = ()
    # Whether the item has a status to wait for (Heat's check_create_complete).
    has_status: ClassVar[bool] = False
    # Attributes read when asked, not cached when the resource acts (Heat's
    # CACHE_NONE, and those that cost calls of their own).
    live_attributes: ClassVar[frozenset[str]] = frozenset()

    # -- validation ---------------------------------------------------------------------
    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's ``validate_properties``: value_specs may not hide a property."""
        specs = properties.get("value_specs") or {}
        banned = {"shared", "tenant_id"} | set(properties)
        found = [key for key in specs if key in banned]
        if found:
            raise self.refuse(f"{', '.join(found)} not allowed in value_specs",
                              f"resources.{self.name}")

    # -- create ---------------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        body = self._body({k: v for k, v in properties.items() if v is not None}, properties)
        if "name" in self.properties_schema and "name" not in body:
            # Heat's unique name, recorded before Neutron is asked: a run killed while
            # Neutron makes the item (its id not yet answered) leaves an item that the
            # next run finds by this name, and deletes (handle_delete).
            body["name"] = self.runtime.physical_name(self.name)
            self.runtime.note_data(self.name, UNANSWERED_NAME, body["name"])
        created = self._call("POST", "", {self.entity: body})[self.entity]
        ident = str(created["id"])
        # Recorded before the waits: a run killed now still knows what it made.
        self.runtime.claim_physical_id(self.name, ident)
        if properties.get("tags"):
            self._set_tags(ident, properties["tags"])
        if self.has_status and not _is_built(created):
            # Neutron's answer is as fresh as a show: no poll when it says built.
            created = self._wait(ident, _is_built) or created
        return Outcome(ident, self._cached(created))

    def _body(self, values: Mapping[str, Any], properties: Mapping[str, Any],
              update: bool = False) -> dict[str, Any]:
        """The request body of these (changed) values: Heat's prepare_properties
        (``update``: of an update, which sends only what changed)."""
        body = {k: v for k, v in values.items() if k not in self.not_sent and k in self.properties_schema}
        for name, (key, kind) in self.sent_as.items():
            if name in body:
                value = body.pop(name)
                body[key] = self._resolve(kind, value) if kind and value else value
        if values.get("value_specs"):
            body.update(values["value_specs"])
        return body

    def _resolve(self, kind: str, value: Any) -> str:
        """Heat's RESOLVE rule: the id of the thing named or identified by ``value``.
        An id is sent as it is: values known before the run were checked when the
        stack was validated (the custom constraints), and one computed in the run
        is another resource's id (``get_resource``); Neutron refuses one that
        names nothing, with its words.  Heat looks it up again, one call each."""
        if _UUID_LIKE.match(str(value)):
            return str(value)
        return find_neutron_id(self.cloud, NEUTRON_KINDS[kind], str(value))

    # -- update ---------------------------------------------------------------------------
    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        live = self._show(current.physical_id)
        if live is None:
            raise self.fail(f"The {self.kind.name} {current.physical_id} could not be found",
                            "NotFound")
        changed = changed_properties(current.properties, properties, live, self.compared)
        if "tags" in changed:
            self._set_tags(current.physical_id, changed.pop("tags") or [])
        body = self._update_body(changed, current.properties)
        if body:
            live = self._call("PUT", f"/{current.physical_id}", {self.entity: body})[self.entity]
            if self.has_status and not _is_built(live):
                live = self._wait(current.physical_id, _is_built) or live
        return Outcome(current.physical_id, self._cached(live))

    def _update_body(self, changed: dict[str, Any], old: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's prepare_update_properties: value_specs that changed, a name set
        back to null is the physical name again."""
        specs = changed.pop("value_specs", None)
        body = self._body(changed, changed, update=True)
        if "name" in changed and changed["name"] is None:
            body["name"] = self.runtime.physical_name(self.name)
        if specs:
            before = old.get("value_specs") or {}
            body.update({k: v for k, v in specs.items() if before.get(k) != v})
        return body

    # -- delete ---------------------------------------------------------------------------
    def handle_delete(self, current: ResourceState) -> None:
        """The item; with no id, those a killed run may have made under the unique
        name it recorded before it asked Neutron."""
        for ident in [current.physical_id] if current.physical_id else self._unanswered(current):
            try:
                self._call("DELETE", f"/{ident}")
            except CloudFailure as error:
                if not error.not_found:
                    raise
                continue
            self._wait(ident, lambda item: item is None)

    def _unanswered(self, current: ResourceState) -> list[str]:
        name = current.data.get(UNANSWERED_NAME)
        if not name:
            return []
        listed = self.cloud.request(NEUTRON, "GET", self.kind.path, params=[("name", str(name))])
        return [str(item["id"]) for item in listed[self.kind.key] if item.get("name") == name]

    # -- reading --------------------------------------------------------------------------
    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self._show(ident)

    def _cached(self, item: Mapping[str, Any]) -> dict[str, Any]:
        """The resource data kept when an action completes: Heat caches the values
        of its attributes then (attr_data) and answers ``get_attr`` from that cache
        until the resource acts again, except those it marks CACHE_NONE and
        ``show``.  Neutron's answer to the action holds them all: no extra call."""
        names = [name for name in self.attributes_schema if name not in self.live_attributes]
        return {"attributes": {name: item.get(name) for name in names}} if names else {}

    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's ``get_attr``: the value cached when the resource last acted; read
        live (Heat's ``_resolve_attribute``) for ``show`` (the whole item), for the
        type's ``live_attributes``, and for a resource recorded without the cache."""
        cached = state.data.get("attributes") or {}
        if name != "show" and name in cached:
            return cached[name]
        if not state.physical_id:
            return None
        live = self._show(state.physical_id)
        if live is None:
            return None
        return dict(live) if name == "show" else live.get(name)

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        if not state.physical_id:
            return {"drifted": None, "msg": "nothing was created yet"}
        live = self._show(state.physical_id)
        if live is None:
            return {"drifted": True, "changed_keys": [], "diff": {},
                    "msg": f"the {self.kind.name} {state.physical_id} is gone"}
        keys = drifted_keys(state.properties, live, self.compared)
        before = {key: state.properties.get(key) for key in keys}
        after = {key: live.get(key) for key in keys}
        return {"drifted": bool(keys), "changed_keys": keys,
                "diff": {"before": before, "after": after}}

    def check_healthy(self, state: ResourceState) -> bool:
        live = self._show(state.physical_id) if state.physical_id else None
        return live is not None and live.get("status") not in ("ERROR", "DEGRADED")

    def needs_replace_failed(self, current: ResourceState) -> bool:
        """Heat's: replaced when it has no id, is gone, or is in ERROR."""
        if not current.physical_id:
            return True
        live = self._show(current.physical_id)
        return live is None or live.get("status") == "ERROR"

    # -- the API ---------------------------------------------------------------------------
    def _call(self, method: str, suffix: str = "", body: Mapping[str, Any] | None = None) -> Any:
        return self.cloud.request(NEUTRON, method, f"{self.kind.path}{suffix}", body)

    def _show(self, ident: str) -> Mapping[str, Any] | None:
        """The item as Neutron shows it; None when it is gone."""
        try:
            item: Mapping[str, Any] = self._call("GET", f"/{ident}")[self.entity]
            return item
        except CloudFailure as error:
            if error.not_found:
                return None
            raise

    def _list(self, ids: Sequence[str]) -> list[Mapping[str, Any]]:
        listed = self.cloud.request(NEUTRON, "GET", self.kind.path, params=[("id", i) for i in ids])
        items: list[Mapping[str, Any]] = listed[self.kind.key]
        return items

    def _wait(self, ident: str, done: Any) -> Mapping[str, Any] | None:
        poller = self.cloud.poller(f"{NEUTRON}:{self.kind.key}", self._list)
        return poller.wait(ident, done, self.runtime.sleep)

    def _set_tags(self, ident: str, tags: Sequence[str]) -> None:
        """Heat's ``set_tags``: the whole list, replaced."""
        self._call("PUT", f"/{ident}/tags", {"tags": list(tags)})


def _is_built(item: Mapping[str, Any] | None) -> bool:
    """Heat's ``NeutronResource.is_built``."""
    if item is None:
        raise CloudFailure("the resource went away while it was being built", 404)
    status = item.get("status")
    if status == "BUILD":
        return False
    if status in ("ACTIVE", "DOWN"):
        return True
    if status in ("ERROR", "DEGRADED"):
        raise _failure(f'Went to status {status} due to "Unknown"', "ResourceInError")
    raise _failure(f'Resource is not built - Unknown status {status} due to "Unknown"',
                   "ResourceUnknownStatus")


def _failure(message: str, error_type: str) -> CloudFailure:
    failure = CloudFailure(message)
    failure.error_type = error_type
    return failure


def changed_properties(old: Mapping[str, Any], new: Mapping[str, Any], live: Mapping[str, Any],
                       compared: Sequence[str]) -> dict[str, Any]:
    """The properties an update sends: those whose new value differs from the
    recorded one, and those the template sets that Neutron no longer holds (drift:
    Heat's ``converge`` puts them back)."""
    changed = {key: value for key, value in new.items() if old.get(key) != value}
    for key in drifted_keys(new, live, compared):
        changed.setdefault(key, new[key])
    return changed


def drifted_keys(properties: Mapping[str, Any], live: Mapping[str, Any],
                 compared: Sequence[str]) -> list[str]:
    """The compared properties the template set (not null) that Neutron shows
    otherwise (lists compared as sets: Neutron does not keep their order)."""
    keys = []
    for key in compared:
        wanted = properties.get(key)
        if wanted is None or key not in live:
            continue
        if not _same(wanted, live[key]):
            keys.append(key)
    return keys


def _same(wanted: Any, shown: Any) -> bool:
    if isinstance(wanted, list) and isinstance(shown, list):
        return sorted(map(_canonical, wanted)) == sorted(map(_canonical, shown))
    if wanted == "" and shown is None:
        return True  # '' is how a template says "none" (a subnet without gateway)
    return bool(wanted == shown)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


# -- OS::Neutron::Net -------------------------------------------------------------------------

@register
class Net(NeutronResource):
    """OS::Neutron::Net: a Neutron network."""

    type_name = "OS::Neutron::Net"
    kind = NEUTRON_KINDS["network"]
    entity = "network"
    has_status = True
    properties_schema = properties_from_facade(type_name, {
        "name": {"update_allowed": True},
        "value_specs": {"default": {}, "update_allowed": True},
        "admin_state_up": {"default": True, "update_allowed": True},
        "shared": {"default": False, "update_allowed": True},
        "dhcp_agent_ids": {"update_allowed": True},
        "port_security_enabled": {"update_allowed": True},
        "qos_policy": {"update_allowed": True},
        "dns_domain": {"update_allowed": True},
        "tags": {"update_allowed": True, "schema": PropertySchema("string")},
    })
    attributes_schema = attributes_from_facade(type_name, {
        "subnets": "list", "port_security_enabled": "boolean", "mtu": "integer",
        "l2_adjacency": "boolean", "segments": "list"})
    custom_constraints = {"qos_policy": "neutron.qos_policy"}
    sent_as = {"qos_policy": ("qos_policy_id", "policy")}
    not_sent = frozenset({"tags", "value_specs", "dhcp_agent_ids"})
    compared = ("name", "admin_state_up", "shared", "port_security_enabled", "dns_domain", "tags")

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        outcome = super().handle_create(properties)
        if properties.get("dhcp_agent_ids"):
            self._replace_dhcp_agents(outcome.physical_id, properties["dhcp_agent_ids"])
        return outcome

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        if current.properties.get("dhcp_agent_ids") != properties.get("dhcp_agent_ids"):
            self._replace_dhcp_agents(current.physical_id, properties.get("dhcp_agent_ids") or [])
        return super().handle_update(current, properties)

    def _replace_dhcp_agents(self, ident: str, wanted: Sequence[str]) -> None:
        """Heat's ``_replace_dhcp_agents``: schedule the network on exactly these
        DHCP agents (409: already there; 404 or 409 on removal: already gone)."""
        hosting = self.cloud.request(NEUTRON, "GET", f"/networks/{ident}/dhcp-agents")
        old = {agent["id"] for agent in hosting.get("agents") or []}
        for agent in sorted(set(wanted) - old):
            self._agent_call("POST", f"/agents/{agent}/dhcp-networks", {"network_id": ident}, (409,))
        for agent in sorted(old - set(wanted)):
            self._agent_call("DELETE", f"/agents/{agent}/dhcp-networks/{ident}", None, (404, 409))

    def _agent_call(self, method: str, path: str, body: Mapping[str, Any] | None,
                    fine: tuple[int, ...]) -> None:
        try:
            self.cloud.request(NEUTRON, method, path, body)
        except CloudFailure as error:
            if error.status not in fine:
                raise


# -- OS::Neutron::Subnet ----------------------------------------------------------------------

_IPV6_MODES = ("dhcpv6-stateful", "dhcpv6-stateless", "slaac")


def _pairs(first: str, second: str) -> PropertySchema:
    """A list item of two required strings (an allocation pool, a host route)."""
    return PropertySchema("map", schema={first: PropertySchema("string", required=True),
                                         second: PropertySchema("string", required=True)})


@register
class Subnet(NeutronResource):
    """OS::Neutron::Subnet: a Neutron subnet."""

    type_name = "OS::Neutron::Subnet"
    kind = NEUTRON_KINDS["subnet"]
    entity = "subnet"
    properties_schema = properties_from_facade(type_name, {
        "prefixlen": {"constraints": (value_range(min=0),)},
        "value_specs": {"default": {}, "update_allowed": True},
        "name": {"update_allowed": True},
        "ip_version": {"default": 4, "constraints": (allowed_values(4, 6),)},
        "dns_nameservers": {"default": [], "update_allowed": True},
        "gateway_ip": {"update_allowed": True},
        "enable_dhcp": {"default": True, "update_allowed": True},
        "allocation_pools": {"update_allowed": True, "schema": _pairs("start", "end")},
        "host_routes": {"update_allowed": True, "schema": _pairs("destination", "nexthop")},
        "ipv6_ra_mode": {"constraints": (allowed_values(*_IPV6_MODES),)},
        "ipv6_address_mode": {"constraints": (allowed_values(*_IPV6_MODES),)},
        "segment": {"update_allowed": True},
        "tags": {"update_allowed": True, "schema": PropertySchema("string")},
    })
    attributes_schema = attributes_from_facade(type_name, {
        "allocation_pools": "list", "host_routes": "list", "dns_nameservers": "list"})
    custom_constraints = {"network": "neutron.network", "subnetpool": "neutron.subnetpool"}
    sent_as = {"network": ("network_id", "network"), "subnetpool": ("subnetpool_id", "subnetpool"),
               "segment": ("segment_id", None)}
    compared = ("name", "gateway_ip", "enable_dhcp", "dns_nameservers", "allocation_pools",
                "host_routes", "tags")

    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's ``Subnet.validate``, in its order."""
        super().validate(properties)
        where = f"resources.{self.name}"
        pool, prefixlen, cidr = (properties.get(k) for k in ("subnetpool", "prefixlen", "cidr"))
        if pool is not None and cidr:
            raise self.refuse("Cannot define the following properties at the same time: "
                              "subnetpool, cidr.", where)
        if pool is None and not cidr:
            raise self.refuse("At least one of the following properties must be specified: "
                              "subnetpool, cidr.", where)
        if prefixlen and cidr:
            raise self.refuse("Cannot define the following properties at the same time: "
                              "prefixlen, cidr.", where)
        ra_mode, address_mode = properties.get("ipv6_ra_mode"), properties.get("ipv6_address_mode")
        if properties.get("ip_version") == 4 and (ra_mode or address_mode):
            raise self.refuse("ipv6_ra_mode and ipv6_address_mode are not supported for ipv4.", where)
        if ra_mode and address_mode and ra_mode != address_mode:
            raise self.refuse("When both ipv6_ra_mode and ipv6_address_mode are set, they must "
                              "be equal.", where)

    def _body(self, values: Mapping[str, Any], properties: Mapping[str, Any],
              update: bool = False) -> dict[str, Any]:
        return _gateway_normalized(super()._body(values, properties, update))

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        if properties.get("gateway_ip") == "auto" and current.properties.get("gateway_ip") != "auto":
            raise self.fail('The value "auto" for gateway_ip cannot be used to update an existing '
                            "subnet. It is only supported during subnet creation. is not "
                            "supported for resource.", "ResourceActionNotSupported")
        if properties.get("allocation_pools") is None and current.properties.get("allocation_pools"):
            # Heat: pools removed from the template are emptied (Neutron then
            # allocates from the whole CIDR).
            properties = {**properties, "allocation_pools": []}
        return super().handle_update(current, properties)


def _gateway_normalized(body: dict[str, Any]) -> dict[str, Any]:
    """Heat's ``_normalize_gateway_ip``: '' (or null) is "no gateway" (JSON null);
    'auto' lets Neutron choose (the key is left out)."""
    if "gateway_ip" in body:
        if body["gateway_ip"] == "":
            body["gateway_ip"] = None
        elif body["gateway_ip"] == "auto":
            del body["gateway_ip"]
    return body


# -- OS::Neutron::Port ------------------------------------------------------------------------

_VNIC_TYPES = ("normal", "direct", "macvtap", "direct-physical", "baremetal", "virtio-forwarder",
               "smart-nic")


@register
class Port(NeutronResource):
    """OS::Neutron::Port: a Neutron port."""

    type_name = "OS::Neutron::Port"
    kind = NEUTRON_KINDS["port"]
    entity = "port"
    has_status = True
    properties_schema = properties_from_facade(type_name, {
        "name": {"update_allowed": True},
        "device_id": {"default": "", "update_allowed": True},
        "device_owner": {"default": "", "update_allowed": True},
        "fixed_ips": {"update_allowed": True, "schema": PropertySchema("map", schema={
            "subnet_id": PropertySchema("string"), "subnet": PropertySchema("string"),
            "ip_address": PropertySchema("string")})},
        "security_groups": {"update_allowed": True},
        "replacement_policy": {"default": "AUTO", "update_allowed": True,
                               "constraints": (allowed_values("REPLACE_ALWAYS", "AUTO"),)},
        "dns_name": {"update_allowed": True},
        "tags": {"update_allowed": True, "schema": PropertySchema("string")},
        "value_specs": {"default": {}, "update_allowed": True},
        "admin_state_up": {"default": True, "update_allowed": True},
        "allowed_address_pairs": {"update_allowed": True, "schema": PropertySchema("map", schema={
            "mac_address": PropertySchema("string"),
            "ip_address": PropertySchema("string", required=True)})},
        "binding:vnic_type": {"default": "normal", "update_allowed": True,
                              "constraints": (allowed_values(*_VNIC_TYPES),)},
        "port_security_enabled": {"update_allowed": True},
        "qos_policy": {"update_allowed": True},
        "propagate_uplink_status": {"update_allowed": True},
        "no_fixed_ips": {"default": False, "update_allowed": True},
    })
    attributes_schema = attributes_from_facade(type_name, {
        "fixed_ips": "list", "security_groups": "list", "allowed_address_pairs": "list",
        "subnets": "list", "port_security_enabled": "boolean", "dns_assignment": "map",
        "network": "map", "propagate_uplink_status": "boolean"})
    custom_constraints = {"network": "neutron.network", "fixed_ips.subnet": "neutron.subnet",
                          "qos_policy": "neutron.qos_policy"}
    sent_as = {"network": ("network_id", "network"), "qos_policy": ("qos_policy_id", "policy")}
    not_sent = frozenset({"tags", "value_specs", "replacement_policy", "no_fixed_ips"})
    # Not device_id/device_owner: Nova sets them when it plugs the port in.
    compared = ("name", "admin_state_up", "port_security_enabled", "dns_name", "tags")
    # Whole subnets and network: calls of their own, made only when asked (Heat
    # caches them once asked).
    live_attributes = frozenset({"subnets", "network"})

    def validate(self, properties: Mapping[str, Any]) -> None:
        super().validate(properties)
        if properties.get("fixed_ips") and properties.get("no_fixed_ips"):
            raise self.refuse("Cannot define the following properties at the same time: "
                              "fixed_ips, no_fixed_ips.", f"resources.{self.name}")

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        """Heat's ``needs_replace``: REPLACE_ALWAYS replaces on any change."""
        if old != new and new.get("replacement_policy") == "REPLACE_ALWAYS":
            return "replacement_policy is REPLACE_ALWAYS"
        return super().replacement_reason(old, new)

    def _body(self, values: Mapping[str, Any], properties: Mapping[str, Any],
              update: bool = False) -> dict[str, Any]:
        """Heat's ``_prepare_port_properties``."""
        body = super()._body(values, properties, update)
        if values.get("no_fixed_ips"):
            body["fixed_ips"] = []
        elif "fixed_ips" in body:
            if body["fixed_ips"]:
                body["fixed_ips"] = [self._fixed_ip(item) for item in body["fixed_ips"]]
            else:
                # Heat leaves an empty list out: Neutron chooses on create, and an
                # update keeps the addresses the port has.
                del body["fixed_ips"]
        if "allowed_address_pairs" in body:
            body["allowed_address_pairs"] = [
                {k: v for k, v in pair.items() if v is not None}
                for pair in body["allowed_address_pairs"] or []]
        if "security_groups" in values:
            groups = values["security_groups"]
            if groups is not None:
                body["security_groups"] = self._security_group_ids(groups)
            elif update:
                # Heat: groups removed from the template are the project's default.
                body["security_groups"] = self._security_group_ids(["default"])
        return body

    def _fixed_ip(self, item: Mapping[str, Any]) -> dict[str, Any]:
        entry = {k: v for k, v in item.items() if v is not None}
        if "subnet" in entry:
            entry["subnet_id"] = self._resolve("subnet", entry.pop("subnet"))
        return entry

    def _security_group_ids(self, groups: Sequence[str]) -> list[str]:
        """Heat's ``get_secgroup_uuids``: ids as they are; names among the groups
        of the session's project, exactly one each."""
        ids: list[str] = []
        for group in map(str, groups):
            if _UUID_LIKE.match(group):
                ids.append(group)
                continue
            project_groups = self.cloud.remember(("neutron", "project security groups"),
                                                 self._project_groups)
            same = [g["id"] for g in project_groups if g.get("name") == group]
            if not same:
                raise self.fail(f"The Resource ({group}) could not be found.", "EntityNotFound")
            if len(same) > 1:
                raise self.fail(f"Multiple physical resources were found with name ({group}).",
                                "PhysicalResourceNameAmbiguity")
            ids.append(str(same[0]))
        return ids

    def _project_groups(self) -> list[Mapping[str, Any]]:
        listed = self.cloud.request(NEUTRON, "GET", "/security-groups",
                                    params={"project_id": self.cloud.project_id})
        groups: list[Mapping[str, Any]] = listed.get("security_groups") or []
        return groups

    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's: ``subnets`` are the subnets of the port's addresses, whole;
        ``network`` is its network, whole."""
        if name not in ("subnets", "network") or not state.physical_id:
            return super().attribute(state, name)
        live = self._show(state.physical_id)
        if live is None:
            return None
        if name == "network":
            return self.cloud.request(NEUTRON, "GET", f"/networks/{live['network_id']}")["network"]
        return [self.cloud.request(NEUTRON, "GET", f"/subnets/{ip['subnet_id']}")["subnet"]
                for ip in live.get("fixed_ips") or [] if ip.get("subnet_id")]


# -- OS::Neutron::SecurityGroup and SecurityGroupRule ---------------------------------------

_PROTOCOL_NAMES = ("ah", "dccp", "egp", "esp", "gre", "icmp", "icmpv6", "igmp", "ipv6-encap",
                   "ipv6-frag", "ipv6-icmp", "ipv6-nonxt", "ipv6-opts", "ipv6-route", "ospf",
                   "pgm", "rsvp", "sctp", "tcp", "udp", "udplite", "vrrp")
# Heat's ALLOWED_SECURITY_GROUP_PROTOCOLS, as a string property compares them.
_PROTOCOLS = tuple(str(number) for number in range(256)) + _PROTOCOL_NAMES
_PORT = (value_range(0, 65535),)
_RULE = PropertySchema("map", schema={
    "direction": PropertySchema("string", default="ingress",
                                constraints=(allowed_values("ingress", "egress"),)),
    "ethertype": PropertySchema("string", default="IPv4", constraints=(allowed_values("IPv4", "IPv6"),)),
    "port_range_min": PropertySchema("integer", constraints=_PORT),
    "port_range_max": PropertySchema("integer", constraints=_PORT),
    "protocol": PropertySchema("string", constraints=(allowed_values(*_PROTOCOLS),)),
    "remote_mode": PropertySchema("string", default="remote_ip_prefix", constraints=(
        allowed_values("remote_ip_prefix", "remote_group_id"),)),
    "remote_group_id": PropertySchema("string"),
    "remote_ip_prefix": PropertySchema("string"),
    "description": PropertySchema("string"),
})
# The keys by which Heat tells a rule it wants from one Neutron has.
_RULE_KEYS = ("direction", "ethertype", "protocol", "port_range_min", "port_range_max",
              "remote_group_id", "remote_ip_prefix", "security_group_id")
_DEFAULT_EGRESS = ({"direction": "egress", "ethertype": "IPv4"},
                   {"direction": "egress", "ethertype": "IPv6"})


@register
class SecurityGroup(NeutronResource):
    """OS::Neutron::SecurityGroup: a group with its rules, which Heat keeps as the
    template lists them (Neutron's default egress rules unless egress is given)."""

    type_name = "OS::Neutron::SecurityGroup"
    kind = NEUTRON_KINDS["security_group"]
    entity = "security_group"
    properties_schema = properties_from_facade(type_name, {
        "name": {"update_allowed": True},
        "description": {"update_allowed": True},
        "rules": {"default": [], "update_allowed": True, "schema": _RULE},
        "stateful": {"update_allowed": True},
    })
    attributes_schema = attributes_from_facade(type_name, {})
    custom_constraints = {"rules.remote_group_id": "neutron.security_group"}
    not_sent = frozenset({"tags", "value_specs", "rules"})
    compared = ("name", "description", "stateful")

    def validate(self, properties: Mapping[str, Any]) -> None:
        super().validate(properties)
        if properties.get("name") == "default":
            raise self.refuse('Security groups cannot be assigned the name "default".',
                              f"resources.{self.name}")

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        outcome = super().handle_create(properties)
        rules = list(properties.get("rules") or [])
        if rules:
            if any(rule["direction"] == "egress" for rule in rules):
                self._delete_rules(outcome.physical_id, lambda rule: rule["direction"] == "egress")
            self._create_rules(outcome.physical_id, rules)
        return outcome

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        outcome = super().handle_update(current, properties)
        if current.properties.get("rules") != properties.get("rules"):
            self._update_rules(current.physical_id, list(properties.get("rules") or []))
        return outcome

    def handle_delete(self, current: ResourceState) -> None:
        if current.physical_id:
            self._delete_rules(current.physical_id, lambda rule: True)
        super().handle_delete(current)

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        answer = super().check_drift(state)
        if answer.get("drifted") is False:
            wanted = self._wanted(state.physical_id, list(state.properties.get("rules") or []))
            live = self._show(state.physical_id) or {}
            if {_rule_key(r) for r in wanted} != {_rule_key(r) for r in live.get("security_group_rules") or []}:
                answer.update(drifted=True, changed_keys=["rules"])
        return answer

    # -- rules, as Heat's SecurityGroup keeps them -----------------------------------------------
    def _format(self, group: str, rule: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's ``_format_rule``: the remote mode decides which remote is sent (a
        group rule without a group refers to its own group)."""
        formatted = {k: v for k, v in rule.items() if k != "remote_mode"}
        formatted["security_group_id"] = group
        if rule.get("remote_mode") == "remote_group_id":
            formatted["remote_ip_prefix"] = None
            if not formatted.get("remote_group_id"):
                formatted["remote_group_id"] = group
            else:
                formatted["remote_group_id"] = self._resolve("security_group",
                                                             formatted["remote_group_id"])
        else:
            formatted["remote_group_id"] = None
        for key in ("port_range_min", "port_range_max"):
            if formatted.get(key) is not None:
                formatted[key] = str(formatted[key])
        if formatted.get("description") is None:
            formatted.pop("description", None)
        return formatted

    def _wanted(self, group: str, rules: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        if not any(rule.get("direction") == "egress" for rule in rules):
            rules = rules + [dict(r, remote_mode="remote_ip_prefix") for r in _DEFAULT_EGRESS]
        return [self._format(group, rule) for rule in rules]

    def _create_rules(self, group: str, rules: list[Mapping[str, Any]]) -> None:
        formatted = [self._format(group, rule) for rule in rules]
        self.cloud.request(NEUTRON, "POST", "/security-group-rules",
                           {"security_group_rules": formatted})

    def _delete_rules(self, group: str, chosen: Any) -> None:
        live = self._show(group)
        for rule in (live or {}).get("security_group_rules") or []:
            if chosen(rule):
                self._delete_rule(rule["id"])

    def _delete_rule(self, ident: str) -> None:
        try:
            self.cloud.request(NEUTRON, "DELETE", f"/security-group-rules/{ident}")
        except CloudFailure as error:
            if not error.not_found:
                raise

    def _update_rules(self, group: str, rules: list[Mapping[str, Any]]) -> None:
        """Heat's ``_update_rules``: delete the rules no longer wanted, add the
        missing ones; rules that stay are not touched."""
        wanted = {_rule_key(rule): rule for rule in self._wanted(group, rules)}
        live = (self._show(group) or {}).get("security_group_rules") or []
        have = {_rule_key(rule): rule for rule in live}
        for key, rule in have.items():
            if key not in wanted:
                self._delete_rule(rule["id"])
        missing = [rule for key, rule in wanted.items() if key not in have]
        if missing:
            self.cloud.request(NEUTRON, "POST", "/security-group-rules",
                               {"security_group_rules": missing})


def _rule_key(rule: Mapping[str, Any]) -> tuple[str | None, ...]:
    return tuple(str(rule[k]) if rule.get(k) is not None else None for k in _RULE_KEYS)


@register
class SecurityGroupRule(NeutronResource):
    """OS::Neutron::SecurityGroupRule: one rule of a group (any change replaces it:
    Neutron cannot change a rule)."""

    type_name = "OS::Neutron::SecurityGroupRule"
    kind = NeutronKind("security_group_rule", "/security-group-rules", "security_group_rules")
    entity = "security_group_rule"
    properties_schema = properties_from_facade(type_name, {
        "direction": {"default": "ingress", "constraints": (allowed_values("ingress", "egress"),)},
        "ethertype": {"default": "IPv4", "constraints": (allowed_values("IPv4", "IPv6"),)},
        "port_range_min": {"constraints": _PORT},
        "port_range_max": {"constraints": _PORT},
        "protocol": {"default": "tcp", "constraints": (allowed_values(*_PROTOCOLS),)},
    })
    attributes_schema = attributes_from_facade(type_name, {})
    custom_constraints = {"security_group": "neutron.security_group",
                          "remote_group": "neutron.security_group"}
    sent_as = {"security_group": ("security_group_id", "security_group"),
               "remote_group": ("remote_group_id", "security_group")}

    def validate(self, properties: Mapping[str, Any]) -> None:
        super().validate(properties)
        where = f"resources.{self.name}"
        if properties.get("remote_group") is not None and properties.get("remote_ip_prefix") is not None:
            raise self.refuse("Cannot define the following properties at the same time: "
                              "remote_group, remote_ip_prefix.", where)
        low, high = properties.get("port_range_min"), properties.get("port_range_max")
        if low is not None and high is not None and high < low and \
                properties.get("protocol") not in ("icmp", "icmpv6", "ipv6-icmp"):
            raise self.refuse("The minimum port number must be less than or equal to the "
                              "maximum port number.", where)

    def _body(self, values: Mapping[str, Any], properties: Mapping[str, Any],
              update: bool = False) -> dict[str, Any]:
        body = super()._body(values, properties, update)
        for key in ("port_range_min", "port_range_max"):
            if body.get(key) is not None:
                body[key] = str(body[key])
        return body


# -- OS::Neutron::Router and RouterInterface --------------------------------------------------

# The keys of a router's external_gateway_info.
_GATEWAY = {
    "network": PropertySchema("string", required=True, update_allowed=True),
    "enable_snat": PropertySchema("boolean", update_allowed=True),
    "external_fixed_ips": PropertySchema("list", update_allowed=True, schema=PropertySchema(
        "map", schema={"ip_address": PropertySchema("string"), "subnet": PropertySchema("string")})),
}


@register
class Router(NeutronResource):
    """OS::Neutron::Router: a router, with its gateway on an external network."""

    type_name = "OS::Neutron::Router"
    kind = NEUTRON_KINDS["router"]
    entity = "router"
    has_status = True
    properties_schema = properties_from_facade(type_name, {
        "name": {"update_allowed": True},
        "external_gateway_info": {"update_allowed": True, "schema": _GATEWAY},
        "value_specs": {"default": {}, "update_allowed": True},
        "admin_state_up": {"default": True, "update_allowed": True},
        "l3_agent_id": {"update_allowed": True},
        "l3_agent_ids": {"update_allowed": True},
        "availability_zone_hints": {"update_allowed": True},
        "tags": {"update_allowed": True, "schema": PropertySchema("string")},
    })
    attributes_schema = attributes_from_facade(type_name, {"external_gateway_info": "map"})
    not_sent = frozenset({"tags", "value_specs", "l3_agent_id", "l3_agent_ids"})
    compared = ("name", "admin_state_up", "tags")

    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's ``Router.validate``, in its order."""
        super().validate(properties)
        where = f"resources.{self.name}"
        agent, agents = properties.get("l3_agent_id"), properties.get("l3_agent_ids")
        distributed, ha = properties.get("distributed"), properties.get("ha")
        if agent and agents:
            raise self.refuse("Cannot define the following properties at the same time: "
                              "l3_agent_id, l3_agent_ids.", where)
        if distributed and (agent or agents):
            raise self.refuse("Cannot define the following properties at the same time: "
                              "distributed, l3_agent_id/l3_agent_ids.", where)
        if ha and distributed:
            raise self.refuse("Cannot define the following properties at the same time: "
                              "distributed, ha.", where)
        if not ha and agents and len(agents) > 1:
            raise self.refuse("Non HA routers can only have one L3 agent.", where)

    def _body(self, values: Mapping[str, Any], properties: Mapping[str, Any],
              update: bool = False) -> dict[str, Any]:
        """Heat's ``_resolve_gateway``: the gateway's network and subnets as ids."""
        body = super()._body(values, properties, update)
        gateway = body.get("external_gateway_info")
        if gateway:
            resolved: dict[str, Any] = {"network_id": self._resolve("network", gateway["network"])}
            if gateway.get("enable_snat") is not None:
                resolved["enable_snat"] = gateway["enable_snat"]
            if gateway.get("external_fixed_ips") is not None:
                resolved["external_fixed_ips"] = [self._fixed_ip(item)
                                                  for item in gateway["external_fixed_ips"]]
            body["external_gateway_info"] = resolved
        return body

    def _fixed_ip(self, item: Mapping[str, Any]) -> dict[str, Any]:
        entry = {k: v for k, v in item.items() if v is not None}
        if "subnet" in entry:
            entry["subnet_id"] = self._resolve("subnet", entry.pop("subnet"))
        return entry

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        outcome = super().handle_create(properties)
        agents = _agents(properties)
        if agents:
            self._replace_agents(outcome.physical_id, agents)
        return outcome

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        if _agents(current.properties) != _agents(properties):
            self._replace_agents(current.physical_id, _agents(properties))
        return super().handle_update(current, properties)

    def _replace_agents(self, router: str, agents: Sequence[str]) -> None:
        """Heat's ``_replace_agent``: off every L3 agent hosting it, onto these."""
        hosting = self.cloud.request(NEUTRON, "GET", f"/routers/{router}/l3-agents")
        for agent in hosting.get("agents") or []:
            self.cloud.request(NEUTRON, "DELETE", f"/agents/{agent['id']}/l3-routers/{router}")
        for agent_id in agents:
            self.cloud.request(NEUTRON, "POST", f"/agents/{agent_id}/l3-routers", {"router_id": router})


def _agents(properties: Mapping[str, Any]) -> list[str]:
    """Heat's ADD rule: the hidden ``l3_agent_id`` is one of ``l3_agent_ids``."""
    agents = list(properties.get("l3_agent_ids") or [])
    return agents or ([properties["l3_agent_id"]] if properties.get("l3_agent_id") else [])


@register
class RouterInterface(NeutronResource):
    """OS::Neutron::RouterInterface: a router's interface on a subnet or a port; its
    id is Heat's ``<router id>:subnet_id=<subnet id>`` (or ``port_id=``).  Any change
    replaces it."""

    type_name = "OS::Neutron::RouterInterface"
    kind = NEUTRON_KINDS["router"]
    entity = "router"
    properties_schema = properties_from_facade(type_name, {})
    attributes_schema = attributes_from_facade(type_name, {})
    custom_constraints = {"router": "neutron.router", "subnet": "neutron.subnet",
                          "port": "neutron.port"}

    def validate(self, properties: Mapping[str, Any]) -> None:
        super().validate(properties)
        where = f"resources.{self.name}"
        subnet, port = properties.get("subnet") is not None, properties.get("port") is not None
        if subnet and port:
            raise self.refuse("Cannot define the following properties at the same time: "
                              "subnet, port.", where)
        if not subnet and not port:
            raise self.refuse("At least one of the following properties must be specified: "
                              "subnet, port.", where)

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        router = self._resolve("router", properties["router"])
        key, kind = ("subnet_id", "subnet") if properties.get("subnet") else ("port_id", "port")
        value = self._resolve(kind, properties[kind])
        ident = f"{router}:{key}={value}"
        with self.making(ident):
            self.cloud.request(NEUTRON, "PUT", f"/routers/{router}/add_router_interface", {key: value})
        return Outcome(ident)

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Reached only by Heat's converge (any change of a property replaces the
        interface): one removed behind the stack's back is added again."""
        if not self._present(current.physical_id):
            router, key, value = _interface(current.physical_id)
            self.cloud.request(NEUTRON, "PUT", f"/routers/{router}/add_router_interface", {key: value})
        return Outcome(current.physical_id)

    def handle_delete(self, current: ResourceState) -> None:
        if not current.physical_id:
            return
        router, key, value = _interface(current.physical_id)
        try:
            self.cloud.request(NEUTRON, "PUT", f"/routers/{router}/remove_router_interface",
                               {key: value})
        except CloudFailure as error:
            if not error.not_found:
                raise

    def attribute(self, state: ResourceState, name: str) -> Any:
        return None  # Heat's RouterInterface has nothing to show

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        if not state.physical_id:
            return {"drifted": None, "msg": "nothing was created yet"}
        present = self._present(state.physical_id)
        return {"drifted": not present, "changed_keys": [],
                **({} if present else {"msg": "the router no longer has this interface"})}

    def check_healthy(self, state: ResourceState) -> bool:
        return bool(state.physical_id) and self._present(state.physical_id)

    def needs_replace_failed(self, current: ResourceState) -> bool:
        return True

    id_shape = (re.compile(rf"{UUID_SHAPE.pattern}:((subnet_id|port_id)=)?{UUID_SHAPE.pattern}"),
                "<router id>:subnet_id=<subnet id> or <router id>:port_id=<port id>")

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The router, when it has this interface."""
        router = self._show(_interface(ident)[0])
        return router if router is not None and self._present(ident) else None

    def _present(self, ident: str) -> bool:
        router, key, value = _interface(ident)
        ports = self.cloud.request(NEUTRON, "GET", "/ports", params={"device_id": router})
        for port in ports.get("ports") or []:
            if key == "port_id" and port["id"] == value:
                return True
            if key == "subnet_id" and any(ip.get("subnet_id") == value for ip in port.get("fixed_ips") or []):
                return True
        return False


def _interface(ident: str) -> tuple[str, str, str]:
    """Heat's id of an interface, ``<router>:subnet_id=<subnet>`` (an old
    ``<router>:<subnet>`` too), as its parts."""
    tokens = ident.replace("=", ":").split(":")
    if len(tokens) == 2:
        tokens.insert(1, "subnet_id")
    router, key, value = tokens
    return router, key, value


# -- OS::Neutron::FloatingIP ------------------------------------------------------------------

@register
class FloatingIP(NeutronResource):
    """OS::Neutron::FloatingIP: an address of an external network (given by name or
    id), on a port or not."""

    type_name = "OS::Neutron::FloatingIP"
    kind = NeutronKind("floatingip", "/floatingips", "floatingips")
    entity = "floatingip"
    properties_schema = properties_from_facade(type_name, {
        "value_specs": {"default": {}},
        "port_id": {"update_allowed": True},
        "fixed_ip_address": {"update_allowed": True},
        "dns_name": {"update_allowed": True},
        "dns_domain": {"update_allowed": True},
    })
    attributes_schema = attributes_from_facade(type_name, {})
    # Heat's CACHE_NONE: where the address points now.
    live_attributes = frozenset({"port_id", "fixed_ip_address"})
    custom_constraints = {"floating_network": "neutron.network", "floating_subnet": "neutron.subnet",
                          "port_id": "neutron.port"}
    sent_as = {"floating_network": ("floating_network_id", "network"),
               "floating_subnet": ("subnet_id", "subnet")}
    compared = ("port_id", "fixed_ip_address")

    def validate(self, properties: Mapping[str, Any]) -> None:
        super().validate(properties)
        if properties.get("port_id") is None and properties.get("fixed_ip_address") is not None:
            raise self.refuse("fixed_ip_address cannot be specified without port_id.",
                              f"resources.{self.name}")

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Heat's: the association (port and fixed address) is sent whole; the DNS
        properties, update_allowed in Heat's schema, are not sent (as in Heat)."""
        live = self._show(current.physical_id)
        if live is None:
            raise self.fail(f"The floatingip {current.physical_id} could not be found", "NotFound")
        changed = changed_properties(current.properties, properties, live, self.compared)
        if "port_id" in changed or "fixed_ip_address" in changed:
            association = {"port_id": properties.get("port_id"),
                           "fixed_ip_address": properties.get("fixed_ip_address")}
            live = self._call("PUT", f"/{current.physical_id}", {self.entity: association})[self.entity]
        return Outcome(current.physical_id, self._cached(live))


# -- OS::Neutron::FloatingIPAssociation -------------------------------------------------------

@register
class FloatingIPAssociation(NeutronResource):
    """OS::Neutron::FloatingIPAssociation: a floating IP (made elsewhere) put on a
    port.  Its physical id is, as Heat's, a number of the engine's own (Heat's
    resource id in its database), not Neutron's: the association is a state of the
    floating IP, whose id belongs to the floating IP's resource.  Every property
    changes in place: the address moves."""

    type_name = "OS::Neutron::FloatingIPAssociation"
    kind = NeutronKind("floatingip", "/floatingips", "floatingips")
    entity = "floatingip"
    properties_schema = {
        "floatingip_id": PropertySchema("string", required=True, update_allowed=True,
                                        description="ID of the floating IP to associate."),
        "port_id": PropertySchema("string", required=True, update_allowed=True,
                                  description="ID of an existing port with at least one IP address "
                                              "to associate with this floating IP."),
        "fixed_ip_address": PropertySchema("string", update_allowed=True,
                                           description="IP address to use if the port has multiple "
                                                       "addresses."),
    }
    attributes_schema: ClassVar[Mapping[str, Any]] = {}
    custom_constraints = {"port_id": "neutron.port"}

    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's ``ip_addr`` constraint on the fixed address."""
        address = properties.get("fixed_ip_address")
        if address is not None and not _is_ip(str(address)):
            raise self.refuse(f"Property error: resources.{self.name}.properties.fixed_ip_address: "
                              f"Error validating value '{address}': Invalid IP address")

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        ident = _association_id()
        body = {k: v for k, v in properties.items() if k != "floatingip_id" and v is not None}
        with self.making(ident):
            self._put(str(properties["floatingip_id"]), body)
        return Outcome(ident)

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Heat's: off the old floating IP when that changes, then the (new or
        unchanged) port and address on the (new or unchanged) floating IP."""
        old = current.properties
        changed = {k: v for k, v in properties.items() if old.get(k) != v}
        if not changed:
            return Outcome(current.physical_id, current.data)
        if "floatingip_id" in changed:
            self._disassociate(str(old["floatingip_id"]))
        self._put(str(changed.get("floatingip_id") or old["floatingip_id"]),
                  {"port_id": changed.get("port_id") or old.get("port_id"),
                   "fixed_ip_address": changed.get("fixed_ip_address") or old.get("fixed_ip_address")})
        return Outcome(current.physical_id, current.data)

    def handle_delete(self, current: ResourceState) -> None:
        if current.physical_id and current.properties.get("floatingip_id"):
            self._disassociate(str(current.properties["floatingip_id"]))

    def _put(self, floating_ip: str, body: Mapping[str, Any]) -> None:
        self._call("PUT", f"/{floating_ip}", {self.entity: body})

    def _disassociate(self, floating_ip: str) -> None:
        try:
            self._put(floating_ip, {"port_id": None})
        except CloudFailure as error:
            if not error.not_found:
                raise

    def attribute(self, state: ResourceState, name: str) -> Any:
        return None  # Heat's association shows nothing

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        """Whether the floating IP is still on the template's port."""
        if not state.physical_id:
            return {"drifted": None, "msg": "nothing was created yet"}
        live = self._show(str(state.properties.get("floatingip_id"))) or {}
        keys = [key for key in ("port_id", "fixed_ip_address")
                if state.properties.get(key) is not None and live.get(key) != state.properties.get(key)]
        return {"drifted": bool(keys), "changed_keys": keys,
                "diff": {"before": {k: state.properties.get(k) for k in keys},
                         "after": {k: live.get(k) for k in keys}}}

    def check_healthy(self, state: ResourceState) -> bool:
        live = self._show(str(state.properties.get("floatingip_id"))) if state.physical_id else None
        return live is not None and live.get("port_id") == state.properties.get("port_id")

    def needs_replace_failed(self, current: ResourceState) -> bool:
        return not current.physical_id

    id_shape = (re.compile(r"[0-9]{1,20}"), "a number (Heat's id of the association)")

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The floating IP of the association (its id is Heat's own number)."""
        floating_ip = str(properties.get("floatingip_id") or "")
        return self._show(floating_ip) if UUID_SHAPE.fullmatch(floating_ip) else None


def _association_id() -> str:
    """A number, as Heat's id of an association is (its database's resource id):
    no two associations of any stack share one."""
    return str(uuid.uuid4().int % 10**12)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
