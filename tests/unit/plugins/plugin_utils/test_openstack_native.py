# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure parts of the native OpenStack types (resources/openstack): schemas from
Heat 27's facade data, hidden spellings, Heat's validation words, the request
bodies (only what changed), drift, shared polls, lookups by name or id.  What
they do on a real cloud is tested in tests/cloud/test_native_neutron.py."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from silent_endpoint import silent_endpoint

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    ResourceFailure,
    StackValidationFailed,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.environment import parse_environment
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.loader import (
    TemplateSource,
    load_template_yaml,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.definition import (
    StackDefinition,
    StackIdentity,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import (
    ResourceState,
    resource_class,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.facades import (
    OPENSTACK_FACADES,
    facade_of,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack import neutron
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.constraints import (
    check_custom_constraint,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack import session as session_module
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.poller import Poller
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.session import (
    CloudFailure,
    CloudSession,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.properties import (
    validate_properties,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.runtime import Cancelled
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.executor import Cancel

NATIVE = ("OS::Neutron::Net", "OS::Neutron::Subnet", "OS::Neutron::Port",
          "OS::Neutron::SecurityGroup", "OS::Neutron::SecurityGroupRule", "OS::Neutron::Router",
          "OS::Neutron::RouterInterface", "OS::Neutron::FloatingIP")
# Heat 27's update_allowed properties (heat/engine/resources/openstack/neutron/*.py).
UPDATE_ALLOWED = {
    "OS::Neutron::Net": {"name", "value_specs", "admin_state_up", "shared", "dhcp_agent_ids",
                         "port_security_enabled", "qos_policy", "dns_domain", "tags"},
    "OS::Neutron::Subnet": {"value_specs", "name", "dns_nameservers", "gateway_ip", "enable_dhcp",
                            "allocation_pools", "host_routes", "segment", "tags"},
    "OS::Neutron::Port": {"name", "device_id", "device_owner", "fixed_ips", "security_groups",
                          "replacement_policy", "dns_name", "tags", "value_specs", "admin_state_up",
                          "allowed_address_pairs", "binding:vnic_type", "port_security_enabled",
                          "qos_policy", "propagate_uplink_status", "no_fixed_ips"},
    "OS::Neutron::SecurityGroup": {"name", "description", "rules", "stateful"},
    "OS::Neutron::SecurityGroupRule": set(),
    "OS::Neutron::Router": {"name", "external_gateway_info", "value_specs", "admin_state_up",
                            "l3_agent_id", "l3_agent_ids", "availability_zone_hints", "tags"},
    "OS::Neutron::RouterInterface": set(),
    "OS::Neutron::FloatingIP": {"port_id", "fixed_ip_address", "dns_name", "dns_domain"},
}


# -- schemas --------------------------------------------------------------------------------

@pytest.mark.parametrize("type_name", NATIVE)
def test_a_native_type_has_heats_schema_from_the_facade_data(type_name: str) -> None:
    cls = resource_class(type_name)
    assert cls is not None
    facade = OPENSTACK_FACADES[type_name]
    assert {name: schema.type.capitalize() for name, schema in cls.properties_schema.items()} == \
        dict(facade.properties)
    assert list(cls.properties_schema) == list(facade.properties)  # Heat's order
    assert tuple(cls.attributes_schema) == facade.attributes
    assert {n for n, s in cls.properties_schema.items() if s.required} == set(facade.required)
    assert {n for n, s in cls.properties_schema.items() if s.update_allowed} == UPDATE_ALLOWED[type_name]
    # A provider template mapped over the type is held to the same interface.
    assert facade_of(type_name) == facade


def test_heats_defaults_fill_what_a_template_leaves_out() -> None:
    checked = validate_properties(neutron.Subnet, {"network": "n", "cidr": "10.0.0.0/24"},
                                  "resources.s.properties")
    assert (checked["ip_version"], checked["enable_dhcp"], checked["dns_nameservers"],
            checked["value_specs"], checked["gateway_ip"]) == (4, True, [], {}, None)
    with pytest.raises(StackValidationFailed, match=r"resources.s.properties.ip_version: "
                                                    r"5 is not an allowed value \[4, 6\]"):
        validate_properties(neutron.Subnet, {"network": "n", "cidr": "c", "ip_version": 5},
                            "resources.s.properties")


# -- hidden spellings -----------------------------------------------------------------------

def definition(template: str) -> StackDefinition:
    data = load_template_yaml(template, "t.yaml")
    return StackDefinition(TemplateSource("t.yaml", data, {}), parse_environment({}, "env.yaml"), {},
                           StackIdentity("s", "s-id"))


def test_the_hidden_network_id_of_a_native_subnet_becomes_network() -> None:
    made = definition("""
heat_template_version: 2018-08-31
resources:
  subnet:
    type: OS::Neutron::Subnet
    properties: {network_id: private, cidr: 10.0.0.0/24}
""")
    known = made.resources["subnet"].known_properties
    assert known is not None and known["network"] == "private" and known["network_id"] is None


def test_both_spellings_fail_with_heats_words() -> None:
    with pytest.raises(StackValidationFailed, match="Cannot define the following properties at "
                                                    "the same time: network, network_id"):
        definition("""
heat_template_version: 2018-08-31
resources:
  subnet:
    type: OS::Neutron::Subnet
    properties: {network_id: a, network: b, cidr: 10.0.0.0/24}
""")


# -- Heat's validation ----------------------------------------------------------------------

@pytest.mark.parametrize("values, message", [
    ({"cidr": "10.0.0.0/24", "subnetpool": "p"},
     "Cannot define the following properties at the same time: subnetpool, cidr."),
    ({}, "At least one of the following properties must be specified: subnetpool, cidr."),
    ({"cidr": "10.0.0.0/24", "prefixlen": 24},
     "Cannot define the following properties at the same time: prefixlen, cidr."),
    ({"cidr": "10.0.0.0/24", "ipv6_ra_mode": "slaac"},
     "ipv6_ra_mode and ipv6_address_mode are not supported for ipv4."),
    ({"cidr": "fd00::/64", "ip_version": 6, "ipv6_ra_mode": "slaac",
      "ipv6_address_mode": "dhcpv6-stateful"},
     "When both ipv6_ra_mode and ipv6_address_mode are set, they must be equal."),
    ({"cidr": "10.0.0.0/24", "value_specs": {"tenant_id": "x"}}, "tenant_id not allowed in value_specs"),
])
def test_a_subnet_is_validated_as_heat_validates_it(values: dict[str, Any], message: str) -> None:
    checked = validate_properties(neutron.Subnet, {"network": "n", **values}, "resources.s.properties")
    with pytest.raises(StackValidationFailed) as raised:
        neutron.Subnet("s", FakeRuntime(FakeCloud())).validate(checked)
    assert raised.value.message == message and raised.value.path == "resources.s"


# -- what is sent ---------------------------------------------------------------------------

class FakeCloud:
    """Records calls; answers Neutron's shapes from ``items`` (id -> item)."""

    def __init__(self, items: dict[str, dict[str, Any]] | None = None) -> None:
        self.items = items or {}
        self.sent: list[tuple[str, str, Any]] = []
        self.remembered: dict[tuple[str, ...], Any] = {}
        self.pollers: dict[str, Poller] = {}
        self.project_id = "project"

    def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                params: Any = None) -> Any:
        self.sent.append((method, path, body))
        parts = path.strip("/").split("/")
        if method == "GET" and parts == ["security-groups"]:
            return {"security_groups": [i for i in self.items.values() if i.get("group")]}
        if method == "GET" and len(parts) == 1:
            wanted = dict(params or {})
            ids = [v for k, v in params if k == "id"] if isinstance(params, list) else [wanted.get("id")]
            matches = [i for i in self.items.values()
                       if i["id"] in ids or i.get("name") == wanted.get("name")]
            return {parts[0].replace("-", "_"): matches}
        if method == "GET":
            if parts[1] not in self.items:
                raise CloudFailure("not found", 404)
            return {parts[0].replace("-", "_")[:-1]: self.items[parts[1]]}
        if method == "POST" and isinstance(next(iter(body.values())), list):
            return None  # a bulk create (security group rules)
        if method == "POST":
            item = {"id": f"id-{len(self.items)}", "status": "ACTIVE", **next(iter(body.values()))}
            self.items[item["id"]] = item
            return {parts[0][:-1]: item}
        if method == "DELETE" and len(parts) == 2:
            if self.items.pop(parts[1], None) is None:
                raise CloudFailure("not found", 404)
            return None
        if method == "PUT" and len(parts) == 2:
            entity = parts[0].replace("-", "_")[:-1]
            self.items[parts[1]].update(body[entity])
            return {entity: self.items[parts[1]]}
        return None

    def remember(self, key: tuple[str, ...], compute: Any) -> Any:
        if key not in self.remembered:
            self.remembered[key] = compute()
        return self.remembered[key]

    def poller(self, kind: str, lister: Any, ids_per_call: int | None = 40) -> Poller:
        return self.pollers.setdefault(kind, Poller(lister, ids_per_call=ids_per_call))

    def writes(self) -> list[tuple[str, str, Any]]:
        return [call for call in self.sent if call[0] != "GET"]


class FakeRuntime:
    stack_name = "st"
    stack_id = "stack-id"

    def __init__(self, cloud: FakeCloud) -> None:
        self.cloud = cloud
        self.claimed: list[str] = []

    def physical_name(self, resource_name: str) -> str:
        return f"st-{resource_name}-abcdefghijkl"

    def note_data(self, resource_name: str, key: str, value: Any) -> None:
        # What was noted, and how many calls the cloud had been sent then.
        self.noted = [*getattr(self, "noted", []), (key, value, len(self.cloud.sent))]

    def claim_physical_id(self, resource_name: str, physical_id: str) -> None:
        self.claimed.append(physical_id)

    def withdraw_physical_id(self, resource_name: str, physical_id: str) -> None:
        self.claimed.remove(physical_id)

    def sleep(self, seconds: float) -> None:
        pass


def net_properties(**values: Any) -> dict[str, Any]:
    return validate_properties(neutron.Net, values, "resources.net.properties")


def test_a_create_sends_heats_body_and_claims_the_id_it_got() -> None:
    cloud = FakeCloud()
    runtime = FakeRuntime(cloud)
    outcome = neutron.Net("net", runtime).handle_create(net_properties(value_specs={"mtu": 1400}))
    assert outcome.physical_id == "id-0" and runtime.claimed == ["id-0"]
    method, path, body = cloud.sent[0]
    # Not null, value_specs merged, the name Heat's default; nothing else.
    assert (method, path, body) == ("POST", "/networks", {"network": {
        "name": "st-net-abcdefghijkl", "admin_state_up": True, "shared": False, "mtu": 1400}})


def test_a_subnet_sends_network_id_found_by_name_and_no_gateway_for_null() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "private"}})
    checked = validate_properties(neutron.Subnet, {"network": "private", "cidr": "10.0.0.0/24",
                                                   "gateway_ip": None}, "resources.s.properties")
    neutron.Subnet("s", FakeRuntime(cloud)).handle_create(checked)
    body = cloud.writes()[0][2]["subnet"]
    assert body["network_id"] == "n1" and "network" not in body and body["gateway_ip"] is None


def test_an_update_sends_only_what_changed() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "a", "admin_state_up": True, "shared": False,
                              "status": "ACTIVE", "tags": []}})
    old = net_properties(name="a")
    state = ResourceState("net", "OS::Neutron::Net", "CREATE", physical_id="n1", properties=old)
    neutron.Net("net", FakeRuntime(cloud)).handle_update(state, net_properties(name="b"))
    assert cloud.writes() == [("PUT", "/networks/n1", {"network": {"name": "b"}})]


def test_an_update_puts_back_what_drifted_converge() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "a", "admin_state_up": False, "shared": False,
                              "status": "ACTIVE", "tags": []}})
    props = net_properties(name="a")
    state = ResourceState("net", "OS::Neutron::Net", "CREATE", physical_id="n1", properties=props)
    neutron.Net("net", FakeRuntime(cloud)).handle_update(state, props)
    assert cloud.writes() == [("PUT", "/networks/n1", {"network": {"admin_state_up": True}})]


def port_properties(**values: Any) -> dict[str, Any]:
    return validate_properties(neutron.Port, {"network": "n1", **values}, "resources.port.properties")


def test_a_port_sends_ids_for_its_subnets_and_groups_named() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "n1"}, "s1": {"id": "s1", "name": "sub"},
                       "g1": {"id": "g1", "name": "web", "group": True},
                       "g2": {"id": "g2", "name": "default", "group": True}})
    group_id = "0f4ab1c2-0000-4000-8000-000000000001"
    neutron.Port("port", FakeRuntime(cloud)).handle_create(port_properties(
        fixed_ips=[{"subnet": "sub", "ip_address": "10.0.0.5"}, {"subnet": "sub"}],
        security_groups=["web", group_id], allowed_address_pairs=[{"ip_address": "10.0.0.9"}]))
    body = cloud.writes()[0][2]["port"]
    assert body["network_id"] == "n1" and "network" not in body
    assert body["fixed_ips"] == [{"subnet_id": "s1", "ip_address": "10.0.0.5"}, {"subnet_id": "s1"}]
    assert body["security_groups"] == ["g1", group_id]
    assert body["allowed_address_pairs"] == [{"ip_address": "10.0.0.9"}]
    assert "replacement_policy" not in body and "no_fixed_ips" not in body
    # Groups taken out of the template are the project's default again (Heat).
    cloud.items["id-4"] = {**cloud.items.pop(next(k for k in cloud.items if k.startswith("id-"))),
                           "status": "DOWN"}
    state = ResourceState("port", "OS::Neutron::Port", "CREATE", physical_id="id-4",
                          properties=port_properties(security_groups=["web"]))
    cloud.sent.clear()
    neutron.Port("port", FakeRuntime(cloud)).handle_update(state, port_properties())
    assert cloud.writes() == [("PUT", "/ports/id-4", {"port": {"security_groups": ["g2"]}})]


def test_a_group_name_not_found_fails_with_heats_words() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "n1"}})
    with pytest.raises(ResourceFailure) as raised:
        neutron.Port("port", FakeRuntime(cloud)).handle_create(port_properties(security_groups=["x"]))
    assert (raised.value.error_type, raised.value.message) == (
        "EntityNotFound", "The Resource (x) could not be found.")


def test_replace_always_replaces_a_port_on_any_change() -> None:
    port = neutron.Port("port", FakeRuntime(FakeCloud()))
    old = port_properties(name="a", replacement_policy="REPLACE_ALWAYS")
    assert port.replacement_reason(old, {**old, "name": "b"}) is not None
    assert port.replacement_reason(port_properties(name="a"), port_properties(name="b")) is None
    assert port.replacement_reason(old, old) is None


def test_a_subnet_of_each_fixed_ip_is_checked_with_its_place() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "n1"}})
    port = neutron.Port("port", FakeRuntime(cloud))
    with pytest.raises(StackValidationFailed, match=r"resources.port.properties.fixed_ips\[1\].subnet: "
                                                    r"Error validating value 'nope'"):
        port.validate_with_cloud({"network": "n1", "fixed_ips": [{"subnet": None}, {"subnet": "nope"}]},
                                 "resources.port.properties")


def group_rules(*rules: dict[str, Any]) -> list[dict[str, Any]]:
    checked = validate_properties(neutron.SecurityGroup, {"rules": list(rules)}, "resources.g.properties")
    return list(checked["rules"])


def test_a_groups_rules_are_reconciled_as_heat_does() -> None:
    """Rules that stay are not touched; Neutron's default egress rules stay while
    the template gives no egress rule."""
    ssh = {"protocol": "tcp", "port_range_min": 22, "port_range_max": 22,
           "remote_ip_prefix": "198.51.100.0/24"}
    live_rules = [
        {"id": "r-ssh", "direction": "ingress", "ethertype": "IPv4", "protocol": "tcp",
         "port_range_min": 22, "port_range_max": 22, "remote_ip_prefix": "198.51.100.0/24",
         "remote_group_id": None, "security_group_id": "g1"},
        {"id": "r-e4", "direction": "egress", "ethertype": "IPv4", "security_group_id": "g1"},
        {"id": "r-e6", "direction": "egress", "ethertype": "IPv6", "security_group_id": "g1"},
    ]
    cloud = FakeCloud({"g1": {"id": "g1", "name": "web", "security_group_rules": live_rules}})
    state = ResourceState("g", "OS::Neutron::SecurityGroup", "CREATE", physical_id="g1",
                          properties={"name": "web", "rules": group_rules(ssh)})
    group = neutron.SecurityGroup("g", FakeRuntime(cloud))
    assert group.check_drift(state)["drifted"] is False
    http = {"protocol": "tcp", "port_range_min": 80, "port_range_max": 80, "remote_mode": "remote_group_id"}
    group.handle_update(state, {**state.properties, "rules": group_rules(http)})
    writes = cloud.writes()
    assert writes[0] == ("DELETE", "/security-group-rules/r-ssh", None)
    assert writes[1][:2] == ("POST", "/security-group-rules") and len(writes) == 2
    [added] = writes[1][2]["security_group_rules"]
    # A group rule without a group refers to its own group; ports go as text.
    assert (added["remote_group_id"], added["remote_ip_prefix"], added["port_range_min"]) == ("g1", None, "80")


def test_attributes_are_cached_when_the_resource_acts_as_heat_caches_them() -> None:
    """Heat answers get_attr from the values cached when the resource completed
    (a network's subnets stay those it had then), except ``show``."""
    cloud = FakeCloud()
    net = neutron.Net("net", FakeRuntime(cloud))
    outcome = net.handle_create(net_properties())
    assert outcome.data["attributes"]["subnets"] is None and outcome.data["attributes"]["status"] == "ACTIVE"
    cloud.items[outcome.physical_id]["subnets"] = ["s1"]
    state = ResourceState("net", "OS::Neutron::Net", "CREATE", physical_id=outcome.physical_id,
                          data=outcome.data)
    assert net.attribute(state, "status") == "ACTIVE" and net.attribute(state, "subnets") is None
    assert net.attribute(state, "show")["subnets"] == ["s1"]


def test_a_router_sends_its_gateway_by_id_and_an_interface_has_heats_id() -> None:
    cloud = FakeCloud({"pub": {"id": "pub", "name": "public"}, "s1": {"id": "s1", "name": "sub"}})
    checked = validate_properties(neutron.Router, {"external_gateway_info": {"network": "public"}},
                                  "resources.r.properties")
    neutron.Router("r", FakeRuntime(cloud)).handle_create(checked)
    assert cloud.writes()[0][2]["router"]["external_gateway_info"] == {"network_id": "pub"}
    interface = validate_properties(neutron.RouterInterface, {"router": "id-2", "subnet": "sub"},
                                    "resources.i.properties")
    cloud.items["id-2"]["name"] = "id-2"
    outcome = neutron.RouterInterface("i", FakeRuntime(cloud)).handle_create(interface)
    assert outcome.physical_id == "id-2:subnet_id=s1"
    assert cloud.writes()[-1] == ("PUT", "/routers/id-2/add_router_interface", {"subnet_id": "s1"})
    assert neutron._interface("r1:s1") == ("r1", "subnet_id", "s1")  # Heat's old ids


class RefusingCloud(FakeCloud):
    """Neutron refusing the writes (``status``: its answer's HTTP status)."""

    def __init__(self, items: dict[str, dict[str, Any]], status: int) -> None:
        super().__init__(items)
        self.status = status

    def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                params: Any = None) -> Any:
        if method != "GET":
            self.sent.append((method, path, body))
            raise CloudFailure("Router already has a port on subnet s1", self.status)
        return super().request(service, method, path, body, params)


@pytest.mark.parametrize("status, kept", [(400, []), (409, []), (500, ["r1:subnet_id=s1"]),
                                          (0, ["r1:subnet_id=s1"])])
def test_an_interface_the_router_already_has_is_not_claimed(status: int, kept: list[str]) -> None:
    """Refused (4xx: another stack's interface on that subnet), the create lets go of the
    id it recorded first, so that its rollback or delete leaves the interface alone; a
    server error or no answer keeps it (the interface may have been made)."""
    cloud = RefusingCloud({"r1": {"id": "r1", "name": "r1"}, "s1": {"id": "s1", "name": "s1"}}, status)
    runtime = FakeRuntime(cloud)
    interface = validate_properties(neutron.RouterInterface, {"router": "r1", "subnet": "s1"},
                                    "resources.i.properties")
    with pytest.raises(CloudFailure):
        neutron.RouterInterface("i", runtime).handle_create(interface)
    assert runtime.claimed == kept


def test_converge_adds_a_router_interface_removed_behind_the_stacks_back() -> None:
    cloud = FakeCloud({"r1": {"id": "r1", "name": "r1"}})
    state = ResourceState("i", "OS::Neutron::RouterInterface", "CREATE", physical_id="r1:subnet_id=s1",
                          properties={"router": "r1", "subnet": "s1"})
    interface = neutron.RouterInterface("i", FakeRuntime(cloud))
    cloud.items["p1"] = {"id": "p1", "device_id": "r1", "fixed_ips": [{"subnet_id": "s1"}]}
    assert interface.handle_update(state, state.properties).physical_id == "r1:subnet_id=s1"
    assert cloud.writes() == []  # still there: nothing to do
    del cloud.items["p1"]
    assert interface.handle_update(state, state.properties).physical_id == "r1:subnet_id=s1"
    assert cloud.writes() == [("PUT", "/routers/r1/add_router_interface", {"subnet_id": "s1"})]


@pytest.mark.parametrize("values, message", [
    ({"router": "r", "subnet": "s", "port": "p"},
     "Cannot define the following properties at the same time: subnet, port."),
    ({"router": "r"}, "At least one of the following properties must be specified: subnet, port."),
])
def test_a_router_interface_is_validated_as_heat_validates_it(values: dict[str, Any], message: str) -> None:
    checked = validate_properties(neutron.RouterInterface, values, "resources.i.properties")
    with pytest.raises(StackValidationFailed) as raised:
        neutron.RouterInterface("i", FakeRuntime(FakeCloud())).validate(checked)
    assert raised.value.message == message


def test_a_floating_ip_takes_its_network_by_id_and_sends_its_association_whole() -> None:
    network = "0f4ab1c2-0000-4000-8000-00000000000a"
    cloud = FakeCloud()
    checked = validate_properties(neutron.FloatingIP, {"floating_network": network},
                                  "resources.f.properties")
    outcome = neutron.FloatingIP("f", FakeRuntime(cloud)).handle_create(checked)
    assert cloud.writes() == [("POST", "/floatingips", {"floatingip": {"floating_network_id": network}})]
    cloud.items[outcome.physical_id].update(port_id=None, fixed_ip_address=None)
    state = ResourceState("f", "OS::Neutron::FloatingIP", "CREATE", physical_id=outcome.physical_id,
                          properties=checked)
    neutron.FloatingIP("f", FakeRuntime(cloud)).handle_update(state, {**checked, "port_id": "p1"})
    assert cloud.writes()[-1] == ("PUT", f"/floatingips/{outcome.physical_id}",
                                  {"floatingip": {"port_id": "p1", "fixed_ip_address": None}})


def test_tags_are_set_with_their_own_call() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "a", "status": "ACTIVE", "tags": ["x"]}})
    state = ResourceState("net", "OS::Neutron::Net", "CREATE", physical_id="n1",
                          properties=net_properties(name="a", tags=["x"]))
    neutron.Net("net", FakeRuntime(cloud)).handle_update(state, net_properties(name="a", tags=["y"]))
    assert cloud.writes() == [("PUT", "/networks/n1/tags", {"tags": ["y"]})]


def test_drift_names_what_the_cloud_holds_otherwise() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "renamed", "admin_state_up": True,
                              "shared": False, "status": "ACTIVE", "tags": []}})
    state = ResourceState("net", "OS::Neutron::Net", "CREATE", physical_id="n1",
                          properties=net_properties(name="a"))
    answer = neutron.Net("net", FakeRuntime(cloud)).check_drift(state)
    assert answer["drifted"] is True and answer["changed_keys"] == ["name"]
    assert answer["diff"] == {"before": {"name": "a"}, "after": {"name": "renamed"}}
    del cloud.items["n1"]
    assert neutron.Net("net", FakeRuntime(cloud)).check_drift(state)["drifted"] is True


def test_lists_are_compared_as_sets_and_no_gateway_as_null() -> None:
    assert neutron.drifted_keys({"dns_nameservers": ["b", "a"], "gateway_ip": ""},
                                {"dns_nameservers": ["a", "b"], "gateway_ip": None},
                                ("dns_nameservers", "gateway_ip")) == []
    # A property the template leaves out is Neutron's to choose: not drift.
    assert neutron.drifted_keys({"name": None}, {"name": "x"}, ("name",)) == []


def test_a_delete_of_what_is_gone_is_done() -> None:
    cloud = FakeCloud()
    state = ResourceState("net", "OS::Neutron::Net", "CREATE", physical_id="gone")

    def refuse(*args: Any, **kwargs: Any) -> Any:
        cloud.sent.append(("DELETE", "/networks/gone", None))
        raise CloudFailure("Network gone could not be found.", 404)

    cloud.request = refuse  # type: ignore[method-assign]
    neutron.Net("net", FakeRuntime(cloud)).handle_delete(state)
    assert cloud.sent == [("DELETE", "/networks/gone", None)]


# -- lookups and constraints -----------------------------------------------------------------

def test_a_constraint_fails_with_heats_property_error() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "twin"}, "n2": {"id": "n2", "name": "twin"}})
    with pytest.raises(StackValidationFailed) as raised:
        check_custom_constraint(cloud, "neutron.network", "nope",  # type: ignore[arg-type]
                                "resources.s.properties.network")
    assert str(raised.value) == ("Property error: resources.s.properties.network: Error validating "
                                 "value 'nope': Unable to find network with name or id 'nope'")
    with pytest.raises(StackValidationFailed, match="Multiple network matches found for name "
                                                    "'twin', use an ID to be more specific."):
        check_custom_constraint(cloud, "neutron.network", "twin",  # type: ignore[arg-type]
                                "resources.s.properties.network")


def test_a_value_is_looked_up_once_per_run() -> None:
    cloud = FakeCloud({"n1": {"id": "n1", "name": "private"}})
    for _ask in range(3):
        check_custom_constraint(cloud, "neutron.network", "private",  # type: ignore[arg-type]
                                "resources.s.properties.network")
    assert len(cloud.sent) == 1


def test_a_session_computes_a_lookup_once_for_many_askers_at_once() -> None:
    session = CloudSession("unused")  # never connects: remember needs no cloud
    computed: list[int] = []

    def compute() -> str:
        computed.append(1)
        time.sleep(0.05)
        return "id"

    threads = [threading.Thread(target=session.remember, args=(("k",), compute)) for _asker in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert computed == [1] and session.remember(("k",), compute) == "id"


def test_a_call_sends_the_content_type_it_is_given_and_json_otherwise() -> None:
    """Glance's image update takes its JSON patch only with its own content type;
    keystoneauth sends application/json for a JSON body unless told otherwise."""
    class Answer:
        status_code, content = 200, b'{"id": "i1"}'

        def json(self) -> Any:
            return {"id": "i1"}

    sent: list[dict[str, Any]] = []

    class Proxy:
        def request(self, path: str, method: str, **kwargs: Any) -> Answer:
            sent.append({"path": path, "method": method, **kwargs})
            return Answer()

    session = CloudSession("unused")
    session._proxies["image"] = Proxy()  # never connects
    patch = [{"op": "replace", "path": "/visibility", "value": "public"}]
    assert session.request("image", "PATCH", "/images/i1", patch,
                           content_type="application/openstack-images-v2.1-json-patch") == {"id": "i1"}
    session.request("image", "GET", "/images/i1")
    assert sent[0]["json"] == patch
    assert sent[0]["headers"] == {"Content-Type": "application/openstack-images-v2.1-json-patch"}
    assert "headers" not in sent[1]


def test_a_refusal_keeps_the_services_request_id_for_heats_texts() -> None:
    """Heat's messages that quote a client's error carry novaclient's text:
    ``<message> (HTTP <status>) (Request-ID: <id>)``."""
    class Refusal:
        status_code, content, reason = 400, b"{}", "Bad Request"
        headers = {"x-openstack-request-id": "req-0a1b"}

        def json(self) -> Any:
            return {"badRequest": {"message": "Unavailable console type novnc.", "code": 400}}

    class Proxy:
        def request(self, path: str, method: str, **kwargs: Any) -> Refusal:
            return Refusal()

    session = CloudSession("unused")
    session._proxies["compute"] = Proxy()  # never connects
    with pytest.raises(CloudFailure) as refused:
        session.request("compute", "POST", "/servers/s1/remote-consoles", {})
    assert (refused.value.status, refused.value.request_id) == (400, "req-0a1b")
    assert refused.value.client_text() == "Unavailable console type novnc. (HTTP 400) (Request-ID: req-0a1b)"
    assert CloudFailure("GET /: connection refused").client_text() == "GET /: connection refused"


def test_calls_in_flight_are_bounded_per_service() -> None:
    """At most ``max_in_flight`` calls to one service at once, and a service whose
    slots are all taken by slow calls does not hold up another's: Nova's volume
    attachments took 4.7 s each while servers booted, and with one bound for the
    cloud they held up every status poll.  (Proxies stand in for the cloud: what is
    checked is the client's own bookkeeping.)"""
    class Answer:
        status_code, content = 200, b""

    release = threading.Event()
    lock = threading.Lock()
    in_flight: dict[str, int] = {"compute": 0, "volume": 0}
    most: dict[str, int] = {"compute": 0, "volume": 0}

    class Proxy:
        def __init__(self, service: str, slow: bool) -> None:
            self.service, self.slow = service, slow

        def get_endpoint(self) -> None:
            """No version discovery to make."""

        def request(self, path: str, method: str, **kwargs: Any) -> Answer:
            with lock:
                in_flight[self.service] += 1
                most[self.service] = max(most[self.service], in_flight[self.service])
            if self.slow:
                release.wait(10)
            with lock:
                in_flight[self.service] -= 1
            return Answer()

    session = CloudSession("unused", max_in_flight=3)
    session._connection = type("Connection", (), {"compute": Proxy("compute", slow=True),  # never connects
                                                  "volume": Proxy("volume", slow=False)})()
    slow = [threading.Thread(target=session.request, args=("compute", "POST", "/servers/s/attach"))
            for _call in range(6)]
    for thread in slow:
        thread.start()
    deadline = time.monotonic() + 5
    while most["compute"] < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    fast = threading.Thread(target=session.request, args=("volume", "GET", "/volumes/detail"))
    fast.start()
    fast.join(5)
    volume_answered = not fast.is_alive()
    release.set()
    for thread in slow:
        thread.join()
    assert volume_answered, "a call to Cinder waited for Nova's slots"
    assert most == {"compute": 3, "volume": 1}
    assert session.calls == {"POST compute": 6, "GET volume": 1}


# -- shared polls ----------------------------------------------------------------------------

def test_waiters_share_their_polls() -> None:
    """Twenty waits for one collection: each poll answers every waiter, so the
    calls are about those one wait needs, not twenty times as many."""
    calls: list[Sequence[str]] = []
    ready_at = time.monotonic() + 0.6

    def lister(ids: Sequence[str]) -> list[Mapping[str, Any]]:
        calls.append(list(ids))
        time.sleep(0.02)
        status = "ACTIVE" if time.monotonic() > ready_at else "BUILD"
        return [{"id": i, "status": status} for i in ids]

    poller = Poller(lister)
    answers: dict[str, Any] = {}

    def wait(ident: str) -> None:
        answers[ident] = poller.wait(ident, lambda item: item is not None and item["status"] == "ACTIVE",
                                     time.sleep)

    threads = [threading.Thread(target=wait, args=(f"s{i}",)) for i in range(20)]
    for thread in threads:
        thread.start()
        time.sleep(0.002)  # the waits of a wave begin a moment apart
    for thread in threads:
        thread.join()
    assert all(answer["status"] == "ACTIVE" for answer in answers.values()) and len(answers) == 20
    assert len(calls) <= 12, len(calls)  # one waiter alone needs about 5
    assert max(len(ids) for ids in calls) > 1  # polls were shared


def test_a_waiter_reads_the_poll_another_waiter_made_after_its_last_look() -> None:
    """Two waits out of step: the second's poll, made while the first waits out
    its delay, asks about both and answers both; the first makes no call of its
    own (each used to make its own poll when its delay was up)."""
    calls: list[list[str]] = []
    ready: set[str] = set()

    def lister(ids: Sequence[str]) -> list[Mapping[str, Any]]:
        calls.append(list(ids))
        return [{"id": i, "status": "ACTIVE" if i in ready else "BUILD"} for i in ids]

    poller = Poller(lister, first_delay=3600)  # alone, the first wait would not look again
    looked = threading.Event()
    answers: dict[str, Any] = {}

    def active(item: Any) -> bool:
        looked.set()
        return item is not None and item["status"] == "ACTIVE"

    first = threading.Thread(target=lambda: answers.update(a=poller.wait("a", active, lambda _: None)))
    first.start()
    assert looked.wait(60)
    ready.update({"a", "b"})
    answers["b"] = poller.wait("b", active, lambda _: None)
    first.join(60)
    assert not first.is_alive()
    assert answers["a"]["status"] == answers["b"]["status"] == "ACTIVE"
    assert calls == [["a"], ["a", "b"]]


def test_a_cancelled_run_stops_a_wait_that_waits_for_a_poll() -> None:
    """Between polls a wait waits on the poller, not in the run's sleep; it asks
    the run's sleep (with 0) whether the run was cancelled."""
    poller = Poller(lambda ids: [{"id": i, "status": "BUILD"} for i in ids], first_delay=3600)

    def cancelled(seconds: float) -> None:
        raise RuntimeError(f"cancelled ({seconds})")

    with pytest.raises(RuntimeError, match=r"cancelled \(0\)"):
        poller.wait("a", lambda item: False, cancelled)
    assert poller.polls == 1


@pytest.mark.parametrize("status", [500, 503, 413])
def test_a_poll_the_cloud_fails_for_now_is_made_again(status: int) -> None:
    """A list call answered 500 (Nova's when Neutron failed it), 503 or 413 is no
    answer, not "gone": the wait polls again, as Heat's ``fetch_server`` does."""
    answers: list[Any] = [CloudFailure("Unexpected API Error.", status), [{"id": "a", "status": "ACTIVE"}]]

    def lister(ids: Sequence[str]) -> list[Mapping[str, Any]]:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return list(answer)

    poller = Poller(lister, first_delay=0.01, max_delay=0.01)
    item = poller.wait("a", lambda found: found is not None and found["status"] == "ACTIVE", lambda _: None)
    assert item == {"id": "a", "status": "ACTIVE"} and poller.polls == 2


def test_a_poll_refused_otherwise_fails_the_wait() -> None:
    def refused(ids: Any) -> list[Any]:
        raise CloudFailure("Forbidden", 403)

    poller = Poller(refused)
    with pytest.raises(CloudFailure, match="Forbidden"):
        poller.wait("a", lambda found: True, lambda _: None)


def test_a_lister_of_the_whole_collection_is_one_call_for_all_ids() -> None:
    """Nova's and Cinder's polls list the project's servers or volumes, whatever
    the ids: a hundred waits are one call per poll, not one per 40 ids."""
    calls: list[int] = []

    def lister(ids: Sequence[str]) -> list[Mapping[str, Any]]:
        calls.append(len(ids))
        return [{"id": i} for i in ids]

    whole, by_ids = Poller(lister, ids_per_call=None), Poller(lister)
    for poller in (whole, by_ids):
        # Waits already registered, as when a hundred servers wait at once.
        poller._waiting.update(f"s{i}" for i in range(100))  # pylint: disable=protected-access
        poller.wait("s0", lambda item: item is not None, lambda _: None)
    assert calls == [100, 40, 40, 20]


def test_a_thing_that_is_gone_ends_a_wait_for_its_deletion() -> None:
    poller = Poller(lambda ids: [])
    assert poller.wait("x", lambda item: item is None, time.sleep) is None


# -- openstacksdk only when used -------------------------------------------------------------

def test_the_engine_does_not_import_openstacksdk_until_a_cloud_is_used() -> None:
    code = ("import sys; import ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine; "
            "print(any(m == 'openstack' or m.startswith(('openstack.', 'keystoneauth1')) "
            "for m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "False"


# openstacksdk's own warning as it reads its configuration: not the collection's.
@pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK60Warning")
def test_a_password_in_the_auth_url_and_escapes_in_the_cloud_name_are_never_shown(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40, item 7: keystoneauth's error names the auth URL, where a clouds.yaml
    may carry a password; a cloud's name is printed with its ANSI escapes escaped."""
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(
        "clouds:\n"
        "  \"\\e[31mred\":\n"
        "    auth:\n"
        "      auth_url: http://admin:Auth-Url-Pw-3@127.0.0.1:9/v3\n"
        "      username: admin\n      password: x\n      project_name: admin\n"
        "      user_domain_name: Default\n      project_domain_name: Default\n")
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))
    with pytest.raises(CloudFailure) as raised:
        CloudSession("\x1b[31mred").project_id  # pylint: disable=expression-not-assigned
    message = str(raised.value)
    assert message.startswith("cloud \\x1b[31mred: "), message
    assert "Auth-Url-Pw-3" not in message and "\x1b" not in message
    assert "http://******@127.0.0.1:9/v3" in message, message


def silent_cloud(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, auth_url: str, api_timeout: str = "") -> None:
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(
        "clouds:\n  silent:\n    auth:\n"
        f"      auth_url: {auth_url}\n"
        "      username: admin\n      password: x\n      project_name: admin\n"
        "      user_domain_name: Default\n      project_domain_name: Default\n"
        + (f"    api_timeout: {api_timeout}\n" if api_timeout else ""))
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(clouds))


@pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK60Warning")
def test_a_cloud_that_never_answers_fails_the_call_after_the_default_api_timeout(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40, item 3: a clouds.yaml entry with no api_timeout gets the collection's
    (a second here instead of a minute): each call, the login too, ends by it."""
    monkeypatch.setattr(session_module, "DEFAULT_API_TIMEOUT", 1.0)
    with silent_endpoint() as url:
        silent_cloud(tmp_path, monkeypatch, url)
        with pytest.raises(CloudFailure) as raised:
            CloudSession("silent").request("network", "GET", "/networks")
    assert "timed out" in str(raised.value).lower(), raised.value


@pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK60Warning")
def test_a_run_whose_time_is_up_ends_its_call_to_a_silent_cloud_as_timed_out(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stack's timeout (1 s here) ends a call that the api_timeout (an hour here)
    would let wait; a cancelled run sends no call at all."""
    with silent_endpoint() as url:
        silent_cloud(tmp_path, monkeypatch, url, "3600")
        cancel = Cancel()
        session = CloudSession("silent")
        session.limit(1, cancel)
        with pytest.raises(Cancelled, match="Timed out"):
            session.request("network", "GET", "/networks")
    assert cancel.reason == "Timed out"  # the run is cancelled at once, its timer or not
    cancel.reset()
    cancel.trigger("Interrupted by SIGTERM")
    session.limit(0, cancel)
    with pytest.raises(Cancelled, match="Interrupted by SIGTERM"):
        session.request("network", "GET", "/networks")


def test_a_killed_create_leaves_its_unique_name_and_the_next_delete_finds_the_item() -> None:
    """Issue 40: Heat's unique name is recorded before Neutron is asked; an item made
    by a run killed before it recorded the id (no id, that name noted) is found by
    the name and deleted; one the user named is never looked for by its name."""
    cloud = FakeCloud()
    runtime = FakeRuntime(cloud)
    port = neutron.Port("port0", runtime)  # type: ignore[arg-type]
    made = port.handle_create(validate_properties(neutron.Port, {"network": "11111111-2222-4333-8444-555555555555"},
                                                  "resources.port0.properties"))
    assert runtime.noted == [("creating_name", "st-port0-abcdefghijkl", 0)]  # before any call
    cloud.items["other"] = {"id": "other", "name": "st-port0-abcdefghijk2"}
    left = ResourceState(name="port0", type="OS::Neutron::Port", action="CREATE", status="FAILED",
                         data={"creating_name": "st-port0-abcdefghijkl"})
    port.handle_delete(left)
    assert made.physical_id not in cloud.items and "other" in cloud.items
    assert ("DELETE", f"/ports/{made.physical_id}", None) in cloud.sent

    named = neutron.Port("named", runtime)  # type: ignore[arg-type]
    runtime.noted = []
    given = {"network": "11111111-2222-4333-8444-555555555555", "name": "mine"}
    named.handle_create(validate_properties(neutron.Port, given, "resources.named.properties"))
    assert runtime.noted == []
