# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped OpenStack environment against a real OpenStack: Heat's OS:: types
through the real openstack.cloud collection and openstacksdk, on the throwaway cloud
of tests/cloud/cloud.py (Nova's fake virt driver, Neutron without agents, Cinder's
fake back end).  What each stack made is checked through openstacksdk, not through
what the stack says it made."""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      flavor: {type: string, default: m1.tiny}
      role: {type: string, default: app}
      ssh_from: {type: string, default: 198.51.100.0/24}
      fip_port: {type: string, default: port}
    conditions:
      fip_on_second: {equals: [{get_param: fip_port}, second_port]}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties:
          network: {get_resource: net}
          cidr: 10.0.0.0/24
          dns_nameservers: [192.0.2.53]
          allocation_pools: [{start: 10.0.0.10, end: 10.0.0.200}]
      web_sg:
        type: OS::Neutron::SecurityGroup
        properties:
          rules:
            - {protocol: tcp, port_range_min: 22, port_range_max: 22,
               remote_mode: remote_ip_prefix, remote_ip_prefix: {get_param: ssh_from}}
      router:
        type: OS::Neutron::Router
        properties:
          external_gateway_info: {network: public}
          interfaces: [{get_resource: subnet}]
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          # Outside the allocation pool: the server, made alongside, cannot take it.
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.0.0.5}]
          security_groups: [{get_resource: web_sg}]
      second_port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          # An address of its own: openstack.cloud.port sees a fixed_ips entry without
          # one as changed every time (docs/openstack.md, "Not yet right").
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.0.0.6}]
      server:
        type: OS::Nova::Server
        properties:
          image: hotplay-tiny
          flavor: {get_param: flavor}
          # Nova makes the server's port and picks its address: a server on a port
          # or a fixed_ip cannot be replaced while the old one holds it (Heat resizes
          # on a flavor change; see docs/openstack.md).
          networks: [{network: {get_resource: net}}]
          security_groups: [{get_resource: web_sg}]
          metadata: {role: {get_param: role}}
      fip:
        # No depends_on: Heat makes a floating IP wait for the router whose
        # gateway is on its network.
        type: OS::Neutron::FloatingIP
        properties:
          floating_network: public
          port_id: {if: [fip_on_second, {get_resource: second_port}, {get_resource: port}]}
      data:
        type: OS::Cinder::Volume
        properties: {size: 1}
      attach:
        type: OS::Cinder::VolumeAttachment
        properties:
          instance_uuid: {get_resource: server}
          volume_id: {get_resource: data}
    outputs:
      server_id: {value: {get_resource: server}}
      first_address: {value: {get_attr: [server, first_address]}}
      networks: {value: {get_attr: [server, networks]}}
      addresses: {value: {get_attr: [server, addresses]}}
      server_show_status: {value: {get_attr: [server, show, status]}}
      server_show: {value: {get_attr: [server, show]}}
      port_id: {value: {get_resource: port}}
      second_port_id: {value: {get_resource: second_port}}
      fixed_ips: {value: {get_attr: [port, fixed_ips]}}
      floating_ip_address: {value: {get_attr: [fip, floating_ip_address]}}
      fip_id: {value: {get_resource: fip}}
      net_id: {value: {get_resource: net}}
      net_status: {value: {get_attr: [net, status]}}
      subnet_cidr: {value: {get_attr: [subnet, cidr]}}
      sg_id: {value: {get_resource: web_sg}}
      router_id: {value: {get_resource: router}}
      volume_id: {value: {get_resource: data}}
      volume_size: {value: {get_attr: [data, size]}}
"""


@pytest.fixture
def stack(tmp_path: Path, run_tasks, cloud_env: dict[str, str], conn: Any):
    """Apply, preview and delete the test stack (a name of its own per test); the
    stack is deleted at the end, and the cloud must then hold nothing of it."""
    template = tmp_path / "app.yaml"
    template.write_text(textwrap.dedent(TEMPLATE))
    name = f"t{uuid.uuid4().hex[:8]}"  # unique: what one run leaves must not match the next

    def task(register: str, state: str = "present", check: bool = False, converge: bool = False,
             **parameters: str) -> dict[str, Any]:
        arguments: dict[str, Any] = {"name": name, "state": state}
        if state == "present":
            arguments.update(template=str(template), environment=["hotplay.stacks.openstack"],
                             parameters=parameters, converge=converge)
        entry: dict[str, Any] = {"name": register, "hotplay.stacks.stack": arguments,
                                 "register": register}
        if check:
            entry["check_mode"] = True
        return entry

    def run(*tasks: dict[str, Any]) -> dict[str, Any]:
        done = run_tasks(list(tasks), name=f"play{len(runs)}", env=cloud_env)
        runs.append(done)
        for result in done.results.values():
            assert result and not result.get("failed"), result.get("msg") if result else done.stdout
        return done.results

    runs: list[Any] = []
    yield name, task, run
    deleted = run_tasks([task("deleted", state="absent")], name="teardown", env=cloud_env)
    assert not deleted.results["deleted"].get("failed"), deleted.results["deleted"].get("msg")
    assert not [s for s in conn.compute.servers() if s.name.startswith(name)]
    assert not [n for n in conn.network.networks() if n.name.startswith(name)]


def test_a_stack_of_every_mapped_type_is_made_for_real(stack, conn: Any) -> None:
    name, task, run = stack
    outputs = run(task("created"))["created"]["outputs"]

    server = conn.compute.get_server(outputs["server_id"])
    assert server.status == "ACTIVE" and server.name.startswith(f"{name}-server-")
    assert server.metadata == {"role": "app"}
    network = conn.network.get_network(outputs["net_id"])
    [server_port] = conn.network.ports(device_id=server.id)
    address = server_port.fixed_ips[0]["ip_address"]
    assert address.startswith("10.0.0.") and server_port.network_id == network.id
    assert server_port.security_group_ids == [outputs["sg_id"]]
    port = conn.network.get_port(outputs["port_id"])
    assert port.security_group_ids == [outputs["sg_id"]]
    assert [ip["ip_address"] for ip in port.fixed_ips] == ["10.0.0.5"]
    # Attributes come from the real API, as templates read them.
    assert outputs["first_address"] == address
    assert outputs["networks"] == {network.name: [address]}
    assert outputs["addresses"][network.name][0]["addr"] == address
    assert outputs["server_show_status"] == "ACTIVE"
    # The password Nova generated for the server is kept nowhere (dropped_returns).
    assert outputs["server_show"]["id"] == server.id and "admin_password" not in outputs["server_show"]
    assert outputs["fixed_ips"] == port.fixed_ips
    assert outputs["net_status"] == network.status == "ACTIVE"
    assert outputs["subnet_cidr"] == "10.0.0.0/24"
    rules = [r for r in conn.network.security_group_rules(security_group_id=outputs["sg_id"])
             if r.direction == "ingress"]
    assert [(r.protocol, r.port_range_min, r.remote_ip_prefix) for r in rules] == \
        [("tcp", 22, "198.51.100.0/24")]
    floating = conn.network.get_ip(outputs["fip_id"])
    assert floating.port_id == port.id and floating.floating_ip_address == outputs["floating_ip_address"]
    router = conn.network.get_router(outputs["router_id"])
    assert router.external_gateway_info["network_id"] == conn.network.find_network("public").id
    interfaces = conn.network.ports(device_id=router.id, device_owner="network:router_interface")
    assert {p.fixed_ips[0]["subnet_id"] for p in interfaces} == {port.fixed_ips[0]["subnet_id"]}
    volume = conn.block_storage.get_volume(outputs["volume_id"])
    assert volume.size == outputs["volume_size"] == 1
    assert volume.status == "in-use" and volume.attachments[0]["server_id"] == server.id


@pytest.mark.cloud_alone  # reads every floating IP of the external network
def test_updates_in_place_change_the_real_things_and_keep_their_ids(stack, conn: Any) -> None:
    task, run = stack[1:]
    before = run(task("created"))["created"]["outputs"]
    after = run(task("updated", role="db", ssh_from="203.0.113.0/24",
                     fip_port="second_port"))["updated"]["outputs"]

    assert after["server_id"] == before["server_id"]
    assert conn.compute.get_server(after["server_id"]).metadata == {"role": "db"}
    assert after["sg_id"] == before["sg_id"]
    rules = [r for r in conn.network.security_group_rules(security_group_id=after["sg_id"])
             if r.direction == "ingress"]
    assert [r.remote_ip_prefix for r in rules] == ["203.0.113.0/24"]
    # The floating IP moves to the other port: the same address, not a second one.
    assert after["fip_id"] == before["fip_id"]
    floating = conn.network.get_ip(after["fip_id"])
    assert floating.port_id == after["second_port_id"]
    assert len(list(conn.network.ips(floating_network_id=floating.floating_network_id))) == 1


@pytest.mark.slow
def test_a_replacement_is_previewed_then_made_before_the_old_one_goes(stack, conn: Any) -> None:
    name, task, run = stack
    before = run(task("created"))["created"]["outputs"]
    preview = run(task("preview", check=True, flavor="m1.small"))["preview"]
    # The server of the provider template is replaced: the preview names it.
    assert "server/server" in preview["plan"]["replaced"], preview["plan"]
    assert conn.compute.get_server(before["server_id"]).flavor.name == "m1.tiny"

    after = run(task("replaced", flavor="m1.small"))["replaced"]["outputs"]
    assert after["server_id"] != before["server_id"]
    server = conn.compute.get_server(after["server_id"])
    assert server.flavor.name == "m1.small" and server.status == "ACTIVE"
    assert conn.compute.find_server(before["server_id"]) is None
    assert [s.id for s in conn.compute.servers() if s.name.startswith(name)] == [server.id]
    # The volume follows the new server; the old server's port went with it.
    volume = conn.block_storage.get_volume(after["volume_id"])
    assert [a["server_id"] for a in volume.attachments] == [server.id]
    assert after["first_address"] == next(conn.network.ports(device_id=server.id)).fixed_ips[0]["ip_address"]
    assert not list(conn.network.ports(device_id=before["server_id"]))


@pytest.mark.slow(120)
def test_drift_behind_the_stacks_back_is_reported_then_repaired(stack, conn: Any) -> None:
    """A port deleted and a security group rule added behind the stack's back: drift,
    which an apply with ``converge: true`` (Heat's ``stack update --converge``) repairs."""
    name, task, run = stack
    before = run(task("created"))["created"]["outputs"]
    port_name = conn.network.get_port(before["second_port_id"]).name
    conn.network.delete_port(before["second_port_id"])
    conn.network.create_security_group_rule(security_group_id=before["sg_id"], direction="ingress",
                                            protocol="tcp", port_range_min=80, port_range_max=80,
                                            remote_ip_prefix="0.0.0.0/0")

    info = run({"name": "info", "hotplay.stacks.stack_info": {"name": name, "drift": True},
                "register": "info"})["info"]
    assert {"second_port/port", "web_sg/security_group"} <= set(info["drifted"]), info["drift"]
    assert "port/port" not in info["drifted"] and "net/network" not in info["drifted"]

    repaired = run(task("repaired", converge=True))["repaired"]
    assert repaired["changed"] is True
    # The port is made again (a new id, the same name), and the stack reads its id.
    port = conn.network.get_port(repaired["outputs"]["second_port_id"])
    assert port.id != before["second_port_id"]
    assert (port.name, port.network_id) == (port_name, before["net_id"])
    rules = [r for r in conn.network.security_group_rules(security_group_id=before["sg_id"])
             if r.direction == "ingress"]
    assert [(r.protocol, r.port_range_min, r.remote_ip_prefix) for r in rules] == \
        [("tcp", 22, "198.51.100.0/24")]
    assert repaired["outputs"]["server_id"] == before["server_id"]
    info = run({"name": "info", "hotplay.stacks.stack_info": {"name": name, "drift": True},
                "register": "info"})["info"]
    assert info["drifted"] == [], info["drift"]


KEYS_AND_VOLUMES = """\
    heat_template_version: 2018-08-31
    parameters:
      volume_name: {type: string}
      tier: {type: string, default: gold}
    resources:
      key:
        type: OS::Nova::KeyPair
        properties:
          name: {list_join: ["-", [{get_param: OS::stack_name}, ops]]}
          public_key: "%s"
      data:
        type: OS::Cinder::Volume
        properties:
          name: {get_param: volume_name}
          description: {list_join: [" ", [{get_param: volume_name}, volume]]}
          size: 1
          metadata: {tier: {get_param: tier}}
    outputs:
      key_name: {value: {get_resource: key}}
      public_key: {value: {get_attr: [key, public_key]}}
      volume_id: {value: {get_resource: data}}
      volume_name: {value: {get_attr: [data, display_name]}}
      volume_metadata: {value: {get_attr: [data, metadata]}}
"""
# A real ed25519 public key (Nova checks it); its private half was thrown away.
PUBLIC_KEY = ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHvDpbMYdQ2oOE3nZGgSjDN741xve41iPOlotfg49dbz "
              "hotplay@test")


def test_a_key_pair_and_a_volume_renamed_in_place(tmp_path: Path, run_tasks, cloud_env: dict[str, str],
                                                  conn: Any) -> None:
    """OS::Nova::KeyPair imports the public key; OS::Cinder::Volume's name, description
    and metadata change on the same volume (openstack.cloud.volume alone made a second)."""
    template = tmp_path / "keys.yaml"
    template.write_text(textwrap.dedent(KEYS_AND_VOLUMES % PUBLIC_KEY))
    name = f"t{uuid.uuid4().hex[:8]}"

    def apply(register: str, state: str = "present", **parameters: str) -> dict[str, Any]:
        arguments: dict[str, Any] = {"name": name, "state": state}
        if state == "present":
            arguments.update(template=str(template), environment=["hotplay.stacks.openstack"],
                             parameters=parameters)
        done = run_tasks([{"name": register, "hotplay.stacks.stack": arguments,
                           "register": register}], name=register, env=cloud_env)
        result = done.results[register]
        assert result and not result.get("failed"), result.get("msg") if result else done.stdout
        return result

    before = apply("created", volume_name=f"{name}-data")["outputs"]
    keypair = conn.compute.find_keypair(f"{name}-ops")
    assert before["key_name"] == keypair.name and keypair.public_key == PUBLIC_KEY.strip()
    assert before["public_key"] == keypair.public_key
    volume = conn.block_storage.get_volume(before["volume_id"])
    assert (volume.name, volume.description, volume.metadata) == (
        f"{name}-data", f"{name}-data volume", {"tier": "gold"})

    after = apply("renamed", volume_name=f"{name}-logs", tier="silver")["outputs"]
    assert after["volume_id"] == before["volume_id"]
    volume = conn.block_storage.get_volume(after["volume_id"])
    assert (volume.name, volume.description, volume.metadata) == (
        f"{name}-logs", f"{name}-logs volume", {"tier": "silver"})
    assert (after["volume_name"], after["volume_metadata"]) == (f"{name}-logs", {"tier": "silver"})
    assert [v.id for v in conn.block_storage.volumes() if v.name.startswith(name)] == [volume.id]

    apply("deleted", state="absent")
    assert conn.compute.find_keypair(f"{name}-ops") is None
    assert conn.block_storage.find_volume(after["volume_id"]) is None
