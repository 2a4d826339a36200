# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The native types beside the real Heat engine on the same cloud, through Heat and
through hotplay with no environment: one template of a network, a subnet, a
security group, a rule, a port, a router and its interface; and test_side_by_side_heat's
template of a server on a port with a volume attached.  What each made (read back
from the cloud) and every output (attributes read live: ``show``, ``addresses``, a
volume's ``status`` and attachments) must be the same, with no list of known
differences.  The helpers are test_side_by_side_heat's."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import test_side_by_side_heat as provider_side_by_side
from test_side_by_side_heat import HeatSide, HotplaySide, Labels, at_once, differences, left_behind

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      ssh_from: {type: string, default: 198.51.100.0/24}
      dns: {type: comma_delimited_list, default: 192.0.2.53}
      port_name: {type: string, default: front}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties:
          network: {get_resource: net}
          cidr: 10.8.0.0/24
          dns_nameservers: {get_param: dns}
          allocation_pools: [{start: 10.8.0.10, end: 10.8.0.200}]
      sg:
        type: OS::Neutron::SecurityGroup
        properties:
          description: ssh in
          rules:
            - {protocol: tcp, port_range_min: 22, port_range_max: 22,
               remote_ip_prefix: {get_param: ssh_from}}
      http:
        type: OS::Neutron::SecurityGroupRule
        properties: {security_group: {get_resource: sg}, port_range_min: 80, port_range_max: 80}
      port:
        type: OS::Neutron::Port
        properties:
          name: {get_param: port_name}
          network: {get_resource: net}
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.8.0.5}]
          security_groups: [{get_resource: sg}]
      router:
        type: OS::Neutron::Router
        properties:
          external_gateway_info: {network: public}
      interface:
        type: OS::Neutron::RouterInterface
        properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
    outputs:
      ids:
        value: {net: {get_resource: net}, subnet: {get_resource: subnet}, sg: {get_resource: sg},
                port: {get_resource: port}, router: {get_resource: router}}
      net: {value: {get_attr: [net, show]}}
      net_attributes:
        value: [{get_attr: [net, status]}, {get_attr: [net, name]}, {get_attr: [net, subnets]},
                {get_attr: [net, admin_state_up]}, {get_attr: [net, mtu]},
                {get_attr: [net, port_security_enabled]}, {get_attr: [net, tenant_id]}]
      subnet: {value: {get_attr: [subnet, show]}}
      subnet_attributes:
        value: [{get_attr: [subnet, cidr]}, {get_attr: [subnet, ip_version]},
                {get_attr: [subnet, gateway_ip]}, {get_attr: [subnet, allocation_pools]},
                {get_attr: [subnet, dns_nameservers]}, {get_attr: [subnet, enable_dhcp]},
                {get_attr: [subnet, network_id]}, {get_attr: [subnet, name]}]
      port: {value: {get_attr: [port, show]}}
      port_attributes:
        value: [{get_attr: [port, fixed_ips]}, {get_attr: [port, status]},
                {get_attr: [port, security_groups]}, {get_attr: [port, network_id]},
                {get_attr: [port, name]}, {get_attr: [port, device_owner]},
                {get_attr: [port, admin_state_up]}, {get_attr: [port, subnets, 0, cidr]},
                {get_attr: [port, network, name]}]
      sg: {value: {get_attr: [sg, show]}}
      router: {value: {get_attr: [router, show]}}
      router_attributes:
        value: [{get_attr: [router, status]}, {get_attr: [router, name]},
                {get_attr: [router, admin_state_up]}, {get_attr: [router, external_gateway_info]}]
"""

UPDATE = {"ssh_from": "203.0.113.0/24", "dns": "192.0.2.54", "port_name": "back"}

# What differs between any two things Neutron makes, whoever asks: when, in which
# revision, a port's MAC address, a network's segment.
VOLATILE = frozenset({"created_at", "updated_at", "revision_number", "mac_address", "id",
                      "standard_attr_id", "provider:segmentation_id"})


def comparable(value: Any, labels: Labels, volatile: frozenset[str] = VOLATILE) -> Any:
    """An output without what differs between any two things, ids and names as labels."""
    if isinstance(value, dict):
        shown = {labels.value(key): comparable(item, labels, volatile)  # networks by id and by name
                 for key, item in value.items() if key not in volatile}
        if "external_fixed_ips" in shown:  # two routers' gateways have two addresses
            shown["external_fixed_ips"] = [{k: v for k, v in ip.items() if k != "ip_address"}
                                           for ip in shown["external_fixed_ips"]]
        return shown
    if isinstance(value, list):
        items = [comparable(item, labels, volatile) for item in value]
        return sorted(items, key=repr) if all(isinstance(i, dict) for i in items) else items
    return labels.value(value)


def both_sides(template: Path, text: str, run_tasks: Any, cloud_env: dict[str, str],
               heat_client: Any) -> Iterator[tuple[HeatSide, NativeSide]]:
    """``text`` through Heat and through hotplay's native types; both deleted after."""
    template.write_text(textwrap.dedent(text))
    heat = HeatSide(heat_client, template.read_text())
    hotplay = NativeSide(run_tasks, {**cloud_env, "OS_CLOUD": "hotplay"}, template)
    yield heat, hotplay
    for side in (heat, hotplay):
        try:
            side.delete()
        except AssertionError:
            pass  # the test says what failed; this only tidies the cloud


@pytest.fixture
def sides(tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str], heat_client: Any):
    yield from both_sides(tmp_path / "native.yaml", TEMPLATE, run_tasks, cloud_env, heat_client)


class NativeSide(HotplaySide):
    """hotplay with no environment: the native types (the cloud from OS_CLOUD, the
    admin project Heat's stacks are in)."""

    def task(self, state: str, **parameters: str) -> dict[str, Any]:
        self.runs += 1
        arguments: dict[str, Any] = {"name": self.name, "state": state}
        if state == "present":
            arguments.update(template=str(self.template), parameters=parameters)
        done = self.run_tasks([{"name": "apply", "hotplay.stacks.stack": arguments, "register": "applied"}],
                              name=f"{self.name}-{self.runs}", env=self.env)
        result = done.results["applied"]
        assert result and not result.get("failed"), result.get("msg") if result else done.stdout
        return dict(result)


def described(conn: Any, side: Any, outputs: dict[str, Any]) -> dict[str, Any]:
    labels = Labels(side.name)
    ids = outputs["ids"]
    for kind, getter in (("net", conn.network.get_network), ("subnet", conn.network.get_subnet),
                         ("sg", conn.network.get_security_group), ("port", conn.network.get_port),
                         ("router", conn.network.get_router)):
        thing = getter(ids[kind])
        labels.known(thing.id, thing.name)
    group = conn.network.get_security_group(ids["sg"])
    for rule in group.security_group_rules:
        labels.by_id[rule["id"]] = "RULE"
    return {"outputs": {key: comparable(value, labels) for key, value in outputs.items() if key != "ids"},
            "rules": sorted((r["direction"], r["ethertype"], str(r["protocol"]), str(r["port_range_min"]),
                             str(r["remote_ip_prefix"]), str(labels.value(r["remote_group_id"])))
                            for r in group.security_group_rules),
            "left": [labels.name(n.split(" ", 1)[1]) for n in left_behind(conn, side.name)]}


def test_native_neutron_types_make_and_show_what_heat_does(sides, conn: Any) -> None:
    heat, hotplay = sides
    heat_outputs, hotplay_outputs = at_once(heat.apply, hotplay.apply)
    found = differences(described(conn, heat, heat_outputs), described(conn, hotplay, hotplay_outputs))
    assert not found, "Heat and hotplay differ after the create:\n" + "\n".join(found)

    heat_updated, hotplay_updated = at_once(lambda: heat.apply(**UPDATE), lambda: hotplay.apply(**UPDATE))
    assert (heat_updated["ids"], hotplay_updated["ids"]) == (heat_outputs["ids"], hotplay_outputs["ids"])
    found = differences(described(conn, heat, heat_updated), described(conn, hotplay, hotplay_updated))
    assert not found, "Heat and hotplay differ after the update:\n" + "\n".join(found)

    at_once(heat.delete, hotplay.delete)
    assert (left_behind(conn, heat.name), left_behind(conn, hotplay.name)) == ([], [])


# And between any two servers' addresses and volume attachments: the port's MAC
# address, when and by which attachment record the volume was attached.
SERVER_VOLATILE = VOLATILE | {"OS-EXT-IPS-MAC:mac_addr", "attachment_id", "attached_at"}


def described_servers(conn: Any, side: Any, outputs: dict[str, Any]) -> dict[str, Any]:
    """What one side made, read back from the cloud, and its outputs, ids as labels."""
    labels = Labels(side.name)
    cloud = provider_side_by_side.describe(conn, outputs["ids"], labels)  # labels every id first
    return {"cloud": cloud,
            "outputs": {key: comparable(value, labels, SERVER_VOLATILE)
                        for key, value in outputs.items() if key != "ids"},
            "left": [labels.name(n.split(" ", 1)[1]) for n in left_behind(conn, side.name)]}


@pytest.fixture
def server_sides(tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str], heat_client: Any):
    yield from both_sides(tmp_path / "server.yaml", provider_side_by_side.TEMPLATE, run_tasks, cloud_env,
                          heat_client)


def test_a_server_on_a_port_with_a_volume_is_heats_with_no_known_differences(server_sides, conn: Any) -> None:
    """The provider environment's side-by-side test lists its known differences;
    the native types have none: servers, ports, volumes and attachments, their
    attributes and outputs, after the create and after the update in place."""
    heat, hotplay = server_sides

    def compare(heat_outputs: dict[str, Any], hotplay_outputs: dict[str, Any]) -> list[str]:
        return differences(described_servers(conn, heat, heat_outputs),
                           described_servers(conn, hotplay, hotplay_outputs))

    heat_outputs, hotplay_outputs = at_once(heat.apply, hotplay.apply)
    found = compare(heat_outputs, hotplay_outputs)
    assert not found, "Heat and hotplay differ after the create:\n" + "\n".join(found)

    update = provider_side_by_side.UPDATE
    heat_updated, hotplay_updated = at_once(lambda: heat.apply(**update), lambda: hotplay.apply(**update))
    assert (heat_updated["ids"], hotplay_updated["ids"]) == (heat_outputs["ids"], hotplay_outputs["ids"])
    found = compare(heat_updated, hotplay_updated)
    assert not found, "Heat and hotplay differ after the update:\n" + "\n".join(found)

    at_once(heat.delete, hotplay.delete)
    assert (left_behind(conn, heat.name), left_behind(conn, hotplay.name)) == ([], [])
