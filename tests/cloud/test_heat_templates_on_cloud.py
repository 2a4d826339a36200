# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Templates written for Heat, run unchanged on the real cloud with only the shipped
environment: OS::Neutron::RouterInterface (hotplay.stacks.openstack_router_interface),
admin_pass, and Heat's hidden spellings (network_id, subnet_id, router_id, uuid,
floating_network_id).

heat-templates' hot/hello_world.yaml and hot/servers_in_new_neutron_net.yaml are
others' work and not shipped: they are read from a heat-templates checkout named by
$HOTPLAY_HEAT_TEMPLATES, else ../shared/heat-templates beside the clone; without
either those two tests skip with one line.  tests/cloud/templates/ holds a template
of the tests' own in the same shape, which always runs."""

from __future__ import annotations

import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


HERE = Path(__file__).resolve().parent
PUBLIC_NET = "public"
IMAGE, FLAVOR = "hotplay-tiny", "m1.tiny"
# Fits hello_world's constraints (6-8 letters and digits, an uppercase first).
ADMIN_PASS = "Hp" + uuid.uuid4().hex[:6]


class Stacks:
    """Apply and delete stacks with the shipped OpenStack environment through real
    ansible-playbook; every stack made is deleted at the end."""

    def __init__(self, run_tasks: Any, cloud_env: dict[str, str]) -> None:
        # A hidden parameter (admin_pass) is kept only encrypted: the store needs a key.
        self.run_tasks, self.made = run_tasks, []
        self.cloud_env = {**cloud_env, "HOTPLAY_STORE_KEY": "cloud tests' store key"}

    def run(self, register: str, task: dict[str, Any], failing: bool = False) -> dict[str, Any]:
        done = self.run_tasks([{"name": register, **task, "register": register}], name=register,
                              env=self.cloud_env)
        result = done.results.get(register)
        assert result is not None, done.stdout
        assert bool(result.get("failed")) == failing, result.get("msg")
        return result

    def apply(self, name: str, template: Path, register: str = "applied", converge: bool = False,
              **parameters: Any) -> dict[str, Any]:
        if name not in self.made:
            self.made.append(name)
        return self.run(register, {"hotplay.stacks.stack": {
            "name": name, "template": str(template), "environment": ["hotplay.stacks.openstack"],
            "parameters": parameters, "converge": converge}})

    def drifted(self, name: str) -> list[str]:
        info = self.run("info", {"hotplay.stacks.stack_info": {"name": name, "drift": True}})
        return sorted(info["drifted"])

    def delete(self, name: str) -> None:
        self.run(f"deleted_{name}", {"hotplay.stacks.stack": {"name": name, "state": "absent"}})
        if name in self.made:
            self.made.remove(name)


@pytest.fixture
def stacks(run_tasks: Any, cloud_env: dict[str, str]) -> Iterator[Stacks]:
    made = Stacks(run_tasks, cloud_env)
    yield made
    for name in list(made.made):
        made.delete(name)


def make_keypair(conn: Any) -> str:
    """A key pair of a fresh public key (the templates take an existing one)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public = Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    name = f"k{uuid.uuid4().hex[:8]}"
    conn.compute.create_keypair(name=name, public_key=public)
    return name


@pytest.fixture
def keypair(conn: Any) -> Iterator[str]:
    name = make_keypair(conn)
    yield name
    conn.compute.delete_keypair(name, ignore_missing=True)


@pytest.fixture
def demo_conn(cloud_env: dict[str, str]) -> Any:
    """The demo project's member (cloud.py makes it): a project without the external
    network, which the admin project owns."""
    import openstack.config

    config = openstack.config.OpenStackConfig(config_files=[cloud_env["OS_CLIENT_CONFIG_FILE"]])
    return openstack.connection.Connection(config=config.get_one(cloud="hotplay-demo"))


def interface_subnets(conn: Any, router_id: str) -> set[str]:
    ports = conn.network.ports(device_id=router_id, device_owner="network:router_interface")
    return {ip["subnet_id"] for port in ports for ip in port.fixed_ips}


def check_server_on_port(conn: Any, server_id: str, private_ip: str, public_ip: str | None) -> Any:
    """The server is ACTIVE on one port of the given address, and the floating IP
    (when given) is on that port: what a template's outputs say is what exists."""
    server = conn.compute.get_server(server_id)
    assert server.status == "ACTIVE"
    [port] = conn.network.ports(device_id=server.id)
    assert [ip["ip_address"] for ip in port.fixed_ips] == [private_ip]
    if public_ip is not None:
        [floating] = conn.network.ips(floating_ip_address=public_ip)
        assert floating.port_id == port.id
    return port


def password_was_set(conn: Any, server_id: str) -> bool:
    """Nova never shows a password: its changePassword action is what can be seen."""
    return "changePassword" in {action.action for action in conn.compute.server_actions(server_id)}


TWO_INTERFACES = """\
    heat_template_version: 2018-08-31
    parameters:
      second: {type: boolean, default: true}
    conditions:
      second: {get_param: second}
    resources:
      net_a: {type: OS::Neutron::Net}
      subnet_a: {type: OS::Neutron::Subnet, properties: {network: {get_resource: net_a}, cidr: 10.31.1.0/24}}
      net_b: {type: OS::Neutron::Net}
      subnet_b: {type: OS::Neutron::Subnet, properties: {network: {get_resource: net_b}, cidr: 10.31.2.0/24}}
      router: {type: OS::Neutron::Router}
      iface_a:
        type: OS::Neutron::RouterInterface
        properties: {router: {get_resource: router}, subnet: {get_resource: subnet_a}}
      iface_b:
        # Made side by side with iface_a on the same router; Heat's hidden spellings.
        type: OS::Neutron::RouterInterface
        condition: second
        properties: {router_id: {get_resource: router}, subnet_id: {get_resource: subnet_b}}
    outputs:
      router_id: {value: {get_resource: router}}
      subnet_a: {value: {get_resource: subnet_a}}
      subnet_b: {value: {get_resource: subnet_b}}
      iface_a: {value: {get_resource: iface_a}}
"""


@pytest.mark.slow
def test_router_interfaces_made_side_by_side_all_stay(tmp_path: Path, stacks: Stacks, conn: Any) -> None:
    """Two interfaces on one router made at once both stay (openstack.cloud.router's
    interfaces option would have each remove the other); deleting one removes only
    it; one removed behind the stack's back is drift, which converge repairs."""
    template = tmp_path / "interfaces.yaml"
    template.write_text(textwrap.dedent(TWO_INTERFACES))
    name = f"t{uuid.uuid4().hex[:8]}"
    outputs = stacks.apply(name, template)["outputs"]
    router = outputs["router_id"]
    assert interface_subnets(conn, router) == {outputs["subnet_a"], outputs["subnet_b"]}
    assert outputs["iface_a"] == f"{router}:subnet_id={outputs['subnet_a']}"  # Heat's id

    stacks.apply(name, template, register="one_less", second=False)
    assert interface_subnets(conn, router) == {outputs["subnet_a"]}
    assert stacks.drifted(name) == []

    conn.network.remove_interface_from_router(router, subnet_id=outputs["subnet_a"])
    assert stacks.drifted(name) == ["iface_a/interface"]
    repaired = stacks.apply(name, template, register="repaired", converge=True, second=False)
    assert repaired["changed"] is True
    assert interface_subnets(conn, router) == {outputs["subnet_a"]}
    assert stacks.drifted(name) == []

    stacks.delete(name)
    assert conn.network.find_router(router) is None


def check_servers_on_a_new_network(conn: Any, outputs: dict[str, Any]) -> None:
    web = check_server_on_port(conn, outputs["web_id"], outputs["web_private_ip"], outputs["web_public_ip"])
    assert web.network_id == outputs["net_id"] and outputs["web_private_ip"] == "10.20.0.5"
    db = check_server_on_port(conn, outputs["db_id"], outputs["db_private_ip"], None)
    assert db.network_id == outputs["net_id"]
    assert interface_subnets(conn, outputs["router_id"]) == {outputs["subnet_id"]}
    router = conn.network.get_router(outputs["router_id"])
    assert router.external_gateway_info["network_id"] == conn.network.find_network(PUBLIC_NET).id


@pytest.mark.slow
def test_servers_on_a_new_network_in_heats_shape(tmp_path: Path, stacks: Stacks, conn: Any,
                                                 keypair: str) -> None:
    """The tests' own template in the shape of servers_in_new_neutron_net and
    hello_world: a router interface, admin_pass and the hidden spellings, unchanged."""
    name = f"t{uuid.uuid4().hex[:8]}"
    result = stacks.apply(name, HERE / "templates" / "servers_on_a_new_network.yaml",
                          key_name=keypair, image=IMAGE, flavor=FLAVOR, public_net=PUBLIC_NET,
                          admin_pass=ADMIN_PASS)
    outputs = result["outputs"]
    check_servers_on_a_new_network(conn, outputs)
    assert password_was_set(conn, outputs["web_id"]) and not password_was_set(conn, outputs["db_id"])
    # The password is kept nowhere in plain text: not in the store, not in the result.
    assert ADMIN_PASS.encode() not in (tmp_path / "store.db").read_bytes()
    assert ADMIN_PASS not in str(result)
    # Nothing looks drifted right after the apply (Nova cannot show the password:
    # that one cannot tell), the router with its gateway and interface included.
    assert stacks.drifted(name) == []

    stacks.delete(name)
    assert conn.network.find_network(outputs["net_id"]) is None
    assert conn.compute.find_server(outputs["web_id"]) is None


def test_heat_templates_servers_in_new_neutron_net_unchanged(stacks: Stacks, conn: Any, keypair: str,
                                                             heat_templates: Path) -> None:
    template = heat_templates / "hot" / "servers_in_new_neutron_net.yaml"
    name = f"t{uuid.uuid4().hex[:8]}"
    # The template names its servers Server1 and Server2: names the modules find them by.
    assert not [s for s in conn.compute.servers() if s.name in ("Server1", "Server2")]
    outputs = stacks.apply(name, template, key_name=keypair, image=IMAGE, flavor=FLAVOR,
                           public_net=PUBLIC_NET, private_net_name=f"{name}-private",
                           private_net_cidr="10.40.0.0/24", private_net_gateway="10.40.0.1",
                           private_net_pool_start="10.40.0.10",
                           private_net_pool_end="10.40.0.50")["outputs"]
    network = conn.network.find_network(f"{name}-private")
    for number in (1, 2):
        [server] = [s for s in conn.compute.servers() if s.name == f"Server{number}"]
        port = check_server_on_port(conn, server.id, outputs[f"server{number}_private_ip"],
                                    outputs[f"server{number}_public_ip"])
        assert port.network_id == network.id
    [subnet] = conn.network.subnets(network_id=network.id)
    [router] = [r for r in conn.network.routers() if r.name.startswith(f"{name}-router-")]
    assert interface_subnets(conn, router.id) == {subnet.id}

    stacks.delete(name)
    assert conn.network.find_network(f"{name}-private") is None
    assert not [s for s in conn.compute.servers() if s.name in ("Server1", "Server2")]


def test_heat_templates_hello_world_unchanged(tmp_path: Path, stacks: Stacks, demo_conn: Any,
                                              heat_templates: Path) -> None:
    """hello_world names no network: Nova puts the server on the project's only one.
    Run in the demo project, on a network the test makes there (checked to be its only
    one: the admin project also owns the external network)."""
    template = heat_templates / "hot" / "hello_world.yaml"
    stacks.cloud_env["OS_CLOUD"] = "hotplay-demo"
    net = demo_conn.network.create_network(name=f"hello-{uuid.uuid4().hex[:8]}")
    key_name = make_keypair(demo_conn)
    try:
        demo_conn.network.create_subnet(network_id=net.id, cidr="10.50.0.0/24", ip_version=4)
        others = [n.name for n in demo_conn.network.networks()
                  if (n.project_id == net.project_id or n.is_shared) and n.id != net.id]
        assert not others, f"hello_world needs the project's only network; it also has {others}"
        name = f"t{uuid.uuid4().hex[:8]}"
        result = stacks.apply(name, template, key_name=key_name, image=IMAGE, flavor=FLAVOR,
                              admin_pass=ADMIN_PASS)
        [server] = [s for s in demo_conn.compute.servers() if s.name.startswith(f"{name}-server-")]
        assert server.status == "ACTIVE" and server.key_name == key_name
        [port] = demo_conn.network.ports(device_id=server.id)
        assert result["outputs"]["server_networks"] == {net.name: [port.fixed_ips[0]["ip_address"]]}
        assert password_was_set(demo_conn, server.id)
        assert ADMIN_PASS.encode() not in (tmp_path / "store.db").read_bytes()
        assert stacks.drifted(name) == []
        stacks.delete(name)
        assert demo_conn.compute.find_server(server.id) is None
    finally:
        demo_conn.compute.delete_keypair(key_name, ignore_missing=True)
        demo_conn.network.delete_network(net, ignore_missing=True)
