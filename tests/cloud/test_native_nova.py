# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Native OS::Nova::Server and OS::Nova::KeyPair on a real OpenStack, as a member of
a project (clouds.yaml entry ``hotplay-demo``), through real ansible-playbook with
no environment: Nova's ids as physical ids, the updates Heat makes in place (name,
metadata, flavor resize) made in place, replacements where Heat replaces (a
pre-made port handed over), deletes that leave nothing, check mode that names the
replacement the apply makes, ``external_id``, and a server naming no network.
What was made is read back through openstacksdk, not from what the stack says;
Heat beside it (test_native_nova_beside_heat) gives the reference."""

from __future__ import annotations

import os
import re
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

MEMBER_CLOUD = "hotplay-demo"

# A network of the stack's own, a pre-made port on it, a server on that port and
# one on the network (Nova makes its port).
ON_A_PORT = """\
    heat_template_version: 2018-08-31
    parameters:
      server_name: {type: string, default: ""}
      meta: {type: json, default: {role: web}}
      flavor: {type: string, default: m1.tiny}
      flavor_update_policy: {type: string, default: RESIZE}
      key: {type: string}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.60.0.0/24}
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.60.0.10}]
      keypair:
        type: OS::Nova::KeyPair
        properties: {name: {get_param: key}, public_key: {get_file: key.pub}}
      on_port:
        type: OS::Nova::Server
        properties:
          name: {get_param: server_name}
          image: hotplay-tiny
          flavor: {get_param: flavor}
          flavor_update_policy: {get_param: flavor_update_policy}
          key_name: {get_resource: keypair}
          metadata: {get_param: meta}
          user_data_format: RAW
          user_data: "#!/bin/sh\\necho hello\\n"
          networks: [{port: {get_resource: port}}]
      on_net:
        type: OS::Nova::Server
        depends_on: subnet
        properties:
          image: hotplay-tiny
          flavor: m1.tiny
          networks: [{network: {get_resource: net}}]
    outputs:
      on_port: {value: {get_resource: on_port}}
      port: {value: {get_resource: port}}
      first_address: {value: {get_attr: [on_port, first_address]}}
      addresses: {value: {get_attr: [on_port, addresses]}}
      networks: {value: {get_attr: [on_net, networks]}}
      name: {value: {get_attr: [on_port, name]}}
      show_flavor: {value: {get_attr: [on_port, show, flavor, original_name]}}
      show_metadata: {value: {get_attr: [on_port, show, metadata]}}
      public_key: {value: {get_attr: [keypair, public_key]}}
"""

NO_NETWORKS = """\
    heat_template_version: 2018-08-31
    resources:
      server:
        type: OS::Nova::Server
        properties: {image: hotplay-tiny, flavor: m1.tiny}
    outputs:
      addresses: {value: {get_attr: [server, networks]}}
"""

# A server on no network at all (Nova 2.37's ``none``): what the project's networks
# are does not matter.
OFF_NETWORK = """\
    heat_template_version: 2018-08-31
    resources:
      server:
        type: OS::Nova::Server
        properties: {image: hotplay-tiny, flavor: m1.tiny, networks: [{allocate_network: none}]}
"""

EXTERNAL = """\
    heat_template_version: 2018-08-31
    parameters:
      server_id: {type: string}
    resources:
      server:
        type: OS::Nova::Server
        external_id: {get_param: server_id}
    outputs:
      name: {value: {get_attr: [server, name]}}
      status: {value: {get_attr: [server, show, status]}}
"""

BAD_FLAVOR = """\
    heat_template_version: 2018-08-31
    resources:
      server:
        type: OS::Nova::Server
        properties: {image: hotplay-tiny, flavor: m1.nope, networks: [{network: public}]}
"""

GROUP_AND_FLAVOR = """\
    heat_template_version: 2018-08-31
    parameters:
      specs: {type: json, default: {"hw:cpu_policy": shared}}
    resources:
      group:
        type: OS::Nova::ServerGroup
        properties: {policies: [soft-anti-affinity]}
      flavor:
        type: OS::Nova::Flavor
        properties: {ram: 128, vcpus: 1, disk: 1, is_public: false, extra_specs: {get_param: specs}}
    outputs:
      group: {value: {get_attr: [group, show]}}
      specs: {value: {get_attr: [flavor, extra_specs]}}
      public: {value: {get_attr: [flavor, is_public]}}
"""

# A public key only (its private half was thrown away).
PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIPcE2XbENz1QD9f47FgX3Y2y6s+ELNOQqZfTs+R7kwM hotplay-test"


@pytest.fixture(scope="session")
def member(cloud_env: dict[str, str]) -> Any:
    """openstacksdk as the project member the stacks run as."""
    import openstack.config

    config = openstack.config.OpenStackConfig(config_files=[cloud_env["OS_CLIENT_CONFIG_FILE"]])
    return openstack.connection.Connection(config=config.get_one(cloud=MEMBER_CLOUD))


@pytest.fixture
def stacks(tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str],
           member: Any) -> Iterator[Callable[..., dict[str, Any]]]:
    """``apply(name, template, **options)``: one hotplay.stacks.stack task as the
    member; every stack applied is deleted at the end, and the cloud must then hold
    none of its servers, ports, networks or key pairs."""
    applied: list[str] = []
    runs = [0]
    (tmp_path / "key.pub").write_text(PUBLIC_KEY)

    def apply(name: str, template: str, state: str = "present", check: bool = False,
              cloud: str = MEMBER_CLOUD, rollback: bool = False, **options: Any) -> dict[str, Any]:
        runs[0] += 1
        path = tmp_path / f"{name}-{runs[0]}.yaml"
        path.write_text(textwrap.dedent(template))
        arguments: dict[str, Any] = {"name": name, "state": state, "cloud": cloud, **options}
        if state == "present":
            arguments["template"] = str(path)
            if name not in [n for n, _cloud in applied]:
                applied.append((name, cloud))
        task: dict[str, Any] = {"name": "t", "register": "done", "hotplay.stacks.stack": arguments}
        if rollback:
            task = {"name": "t", "register": "done",
                    "hotplay.stacks.stack_rollback": {"name": name, "cloud": cloud}}
        if check:
            task["check_mode"] = True
        done = run_tasks([task], name=f"play{runs[0]}", env=cloud_env)
        result = done.results["done"]
        assert result is not None, done.stdout
        return dict(result)

    yield apply
    for name, cloud in applied:
        gone = apply(name, "", state="absent", cloud=cloud)
        assert not gone.get("failed"), gone.get("msg")
    assert left_behind(member, [name for name, _cloud in applied]) == []


def left_behind(member: Any, prefixes: list[str]) -> list[str]:
    """The servers, ports, networks and key pairs of these stacks still in the cloud."""
    prefixes_tuple = tuple(prefixes)
    found = [f"server {s.name}" for s in member.compute.servers() if s.name.startswith(prefixes_tuple)]
    found += [f"port {p.name}" for p in member.network.ports() if p.name.startswith(prefixes_tuple)]
    found += [f"network {n.name}" for n in member.network.networks() if n.name.startswith(prefixes_tuple)]
    found += [f"keypair {k.name}" for k in member.compute.keypairs() if k.name.startswith(prefixes_tuple)]
    return found


def ids(result: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry["physical_id"] for entry in result["resources"]}


def stack_name() -> str:
    return f"v{uuid.uuid4().hex[:8]}"


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("failed"), result.get("msg") or result.get("stack_status_reason")
    return result


def test_servers_on_a_port_and_on_a_network_are_made_renamed_and_deleted_by_id(
        stacks: Any, member: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, ON_A_PORT, parameters={"key": name}))
    physical, outputs = ids(made), made["outputs"]
    server = member.compute.get_server(physical["on_port"])
    # Nova's id; Heat's default name; ACTIVE when the create returned; on the port.
    assert server.status == "ACTIVE" and server.key_name == name
    assert re.fullmatch(rf"{name}-on_port-[a-z0-9]{{12}}", server.name)
    assert member.network.get_port(physical["port"]).device_id == server.id
    assert server.metadata == {"role": "web"}
    assert outputs["first_address"] == "10.60.0.10" and outputs["name"] == server.name
    # Heat's addresses: by network name and by network id, each with its port.
    net = member.network.get_network(physical["net"])
    assert outputs["addresses"][net.name][0]["port"] == physical["port"]
    assert outputs["addresses"][net.id] == outputs["addresses"][net.name]
    assert list(outputs["networks"]) == [net.name, net.id]
    assert outputs["public_key"] == PUBLIC_KEY and outputs["show_flavor"] == "m1.tiny"

    # A name and new metadata: the same server, changed in place.
    renamed = ok(stacks(name, ON_A_PORT, parameters={"key": name, "server_name": f"{name}-web",
                                                     "meta": {"role": "db", "tier": 2}}))
    assert ids(renamed) == physical
    server = member.compute.get_server(physical["on_port"])
    assert server.name == f"{name}-web" and server.metadata == {"role": "db", "tier": "2"}
    # No second server: the stack's servers are the two it made.
    assert {s.id for s in member.compute.servers() if s.name.startswith(name)} \
        == {physical["on_port"], physical["on_net"]}
    # A key taken out of the metadata goes from Nova's too.
    ok(stacks(name, ON_A_PORT, parameters={"key": name, "server_name": f"{name}-web",
                                           "meta": {"tier": 2}}))
    assert member.compute.get_server(physical["on_port"]).metadata == {"tier": "2"}
    # Metadata set behind the stack: a re-run that changes nothing reads the
    # outputs again, as Heat's update does (``show`` is never cached).
    member.compute.set_server_metadata(physical["on_port"], owner="ops")
    again = ok(stacks(name, ON_A_PORT, parameters={"key": name, "server_name": f"{name}-web",
                                                   "meta": {"tier": 2}}))
    assert not again["changed"] and again["outputs"]["show_metadata"] == {"tier": "2", "owner": "ops"}
    # The stack's delete (the fixture's) leaves no server, port or network.


def test_a_flavor_change_with_replace_makes_a_new_server_on_the_same_port(
        stacks: Any, member: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, ON_A_PORT, parameters={"key": name, "flavor_update_policy": "REPLACE"}))
    before = ids(made)
    change = {"key": name, "flavor_update_policy": "REPLACE", "flavor": "m1.small"}
    # The preview names the replacement the apply then makes.
    preview = ok(stacks(name, ON_A_PORT, check=True, parameters=change))
    assert preview["plan"]["replaced"] == ["on_port"], preview["plan"]
    assert ids(preview) == before
    after = ids(ok(stacks(name, ON_A_PORT, parameters=change)))
    assert after["on_port"] != before["on_port"] and after["port"] == before["port"]
    # The pre-made port went from the old server to the new one; the old is gone.
    assert member.network.get_port(before["port"]).device_id == after["on_port"]
    assert member.compute.find_server(before["on_port"]) is None
    assert member.compute.get_server(after["on_port"]).flavor["original_name"] == "m1.small"


def test_a_rollback_gives_the_pre_made_port_back_to_the_old_server(stacks: Any, member: Any) -> None:
    """Heat's restore_prev_rsrc: the replaced server (kept by keep_replaced) is
    swapped back, and the port its replacement took goes back to it."""
    name = stack_name()
    first = ids(ok(stacks(name, ON_A_PORT, parameters={"key": name, "flavor_update_policy": "REPLACE"})))
    change = {"key": name, "flavor_update_policy": "REPLACE", "flavor": "m1.small"}
    second = ids(ok(stacks(name, ON_A_PORT, parameters=change, keep_replaced=600)))["on_port"]
    assert second != first["on_port"]
    assert member.network.get_port(first["port"]).device_id == second
    back = ok(stacks(name, "", rollback=True))
    assert ids(back) == first
    assert member.network.get_port(first["port"]).device_id == first["on_port"]
    assert member.compute.find_server(second) is None


def test_a_flavor_change_with_resize_keeps_the_server(stacks: Any, member: Any) -> None:
    name = stack_name()
    before = ids(ok(stacks(name, ON_A_PORT, parameters={"key": name})))
    change = {"key": name, "flavor": "m1.small"}
    preview = ok(stacks(name, ON_A_PORT, check=True, parameters=change))
    assert preview["plan"]["updated"] == ["on_port"] and preview["plan"]["replaced"] == []
    resized = stacks(name, ON_A_PORT, parameters=change)
    if not allows_resize_to_same_host():
        # One compute host: Nova's scheduler finds no other host, the server stays
        # as it was and the update says so (Heat waits for its time-out).
        assert resized["failed"] and "Resizing to 'm1.small' failed" in resized["stack_status_reason"]
        assert member.compute.get_server(before["on_port"]).flavor["original_name"] == "m1.tiny"
        return
    assert ids(ok(resized)) == before
    assert member.compute.get_server(before["on_port"]).flavor["original_name"] == "m1.small"


def allows_resize_to_same_host() -> bool:
    conf = Path(os.environ["HOTPLAY_CLOUD_DIR"]) / "etc" / "nova" / "nova.conf"
    return conf.exists() and re.search(r"allow_resize_to_same_host\s*=\s*[Tt]rue", conf.read_text()) is not None


KEY_ONLY = """\
    heat_template_version: 2018-08-31
    parameters:
      key: {type: string}
    resources:
      keypair:
        type: OS::Nova::KeyPair
        properties: {name: {get_param: key}, public_key: {get_file: key.pub}}
"""


def test_a_key_pair_made_by_hand_is_not_taken_by_a_stack_whose_create_it_refused(
        stacks: Any, member: Any) -> None:
    """Heat records a key pair once the stack made it: a create that Nova refuses
    because the name is taken leaves the stack nothing to delete."""
    name = stack_name()
    manual = member.compute.create_keypair(name=f"{name}-manual", public_key=PUBLIC_KEY)
    try:
        refused = stacks(name, KEY_ONLY, parameters={"key": manual.name})
        assert refused.get("failed") and "already exists" in refused["msg"], refused.get("msg")
        ok(stacks(name, "", state="absent"))
        assert member.compute.find_keypair(manual.name) is not None
    finally:
        member.compute.delete_keypair(manual.name, ignore_missing=True)


def test_a_server_naming_no_network_is_put_on_the_projects_network(stacks: Any, member: Any) -> None:
    # Nova 2.104 refuses a server without networks from 2.37 on: the create is made
    # at 2.36, where Nova chooses: the project's own network, none when it has none,
    # and Nova's refusal when it has several (other tests' networks, at times).
    name = stack_name()
    made = stacks(name, NO_NETWORKS)
    if made.get("failed"):
        assert "Multiple possible networks found, use a Network ID to be more specific." \
            in made["msg"], made["msg"]
        return
    server = member.compute.get_server(ids(made)["server"])
    assert server.status == "ACTIVE"
    own = {n.name for n in member.network.networks(project_id=member.current_project_id)}
    assert set(server.addresses) <= own


def test_external_id_adopts_a_server_and_leaves_it_on_delete(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, OFF_NETWORK))
    server_id = ids(made)["server"]
    other = stack_name()
    adopted = ok(stacks(other, EXTERNAL, parameters={"server_id": server_id}))
    assert ids(adopted) == {"server": server_id}
    assert adopted["outputs"]["status"] == "ACTIVE"
    assert adopted["outputs"]["name"] == member.compute.get_server(server_id).name
    gone = ok(stacks(other, "", state="absent"))
    assert gone["stack_status"] == "DELETE_COMPLETE"
    assert member.compute.get_server(server_id).status == "ACTIVE"


def test_a_server_group_and_a_private_flavor_as_the_admin(stacks: Any, conn: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, GROUP_AND_FLAVOR, cloud="hotplay"))
    physical, outputs = ids(made), made["outputs"]
    assert outputs["group"]["policy"] == "soft-anti-affinity"
    assert re.fullmatch(rf"{name}-group-[a-z0-9]{{12}}", outputs["group"]["name"])
    flavor = conn.compute.get_flavor(physical["flavor"])
    assert re.fullmatch(rf"{name}-flavor-[a-z0-9]{{12}}", flavor.name) and flavor.is_public is False
    assert (outputs["specs"], outputs["public"]) == ({"hw:cpu_policy": "shared"}, False)
    # Extra specs change in place: the same flavor, the old keys gone.
    changed = ok(stacks(name, GROUP_AND_FLAVOR, cloud="hotplay", parameters={"specs": {"quota:cpu_shares": "512"}}))
    assert ids(changed) == physical and changed["outputs"]["specs"] == {"quota:cpu_shares": "512"}
    ok(stacks(name, "", state="absent", cloud="hotplay"))
    assert conn.compute.find_flavor(physical["flavor"]) is None
    assert conn.compute.find_server_group(physical["group"]) is None


# Two servers kept apart by the group's policy on a cloud of one host: Nova puts the
# second one in ERROR (no valid host).
KEPT_APART = """\
    heat_template_version: 2018-08-31
    resources:
      group:
        type: OS::Nova::ServerGroup
        properties: {policies: [anti-affinity]}
      first:
        type: OS::Nova::Server
        properties: {image: hotplay-tiny, flavor: m1.tiny, networks: [{allocate_network: none}],
                     scheduler_hints: {group: {get_resource: group}}}
      second:
        type: OS::Nova::Server
        depends_on: first
        properties: {image: hotplay-tiny, flavor: m1.tiny, networks: [{allocate_network: none}],
                     scheduler_hints: {group: {get_resource: group}}}
"""


def test_a_server_in_error_fails_with_its_fault_and_its_delete_leaves_nothing(stacks: Any, conn: Any) -> None:
    """Nova puts the server in ERROR: the create fails with Nova's fault, as Heat's
    does, and the stack still holds the server's id, so its delete deletes the server
    (before, the id was lost and the server left in the cloud)."""
    name = stack_name()
    failed = stacks(name, KEPT_APART)
    assert failed["failed"] and failed["stack_status"] == "CREATE_FAILED"
    server = next(r for r in failed["resources"] if r["name"] == "second")
    assert server["status_reason"].startswith('ResourceInError: resources.second: Went to status ERROR '
                                              'due to "Message: No valid host was found.')
    assert server["physical_id"] and conn.compute.get_server(server["physical_id"]).status == "ERROR"
    ok(stacks(name, "", state="absent"))
    assert conn.compute.find_server(server["physical_id"]) is None


def test_a_bad_flavor_fails_validation_with_heats_message(stacks: Any) -> None:
    name = stack_name()
    refused = stacks(name, BAD_FLAVOR)
    assert refused["failed"] and "stack_status" not in refused
    assert refused["msg"] == ("Property error: resources.server.properties.flavor: Error validating "
                              "value 'm1.nope': No Flavor matching {'name': 'm1.nope'}. (HTTP 404)")


# A server whose networks change in place: a pre-made port, then also a network
# (Nova makes the port) and a subnet (the server makes the port), then the network
# alone.
NETWORKS_IN_PLACE = """\
    heat_template_version: 2018-08-31
    parameters:
      layout: {type: string, default: port}
    conditions:
      more: {equals: [{get_param: layout}, more]}
      less: {equals: [{get_param: layout}, less]}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.62.0.0/24}
      net2:
        type: OS::Neutron::Net
      subnet2:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net2}, cidr: 10.63.0.0/24}
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.62.0.10}]
      server:
        type: OS::Nova::Server
        depends_on: [subnet, subnet2]
        properties:
          image: hotplay-tiny
          flavor: m1.tiny
          networks:
            if:
              - more
              - [{port: {get_resource: port}}, {network: {get_resource: net2}},
                 {subnet: {get_resource: subnet}, fixed_ip: 10.62.0.20}]
              - if:
                  - less
                  - [{network: {get_resource: net2}}]
                  - [{port: {get_resource: port}}]
    outputs:
      ids: {value: {net: {get_resource: net}, net2: {get_resource: net2}, port: {get_resource: port},
                    server: {get_resource: server}}}
      networks: {value: {get_attr: [server, networks]}}
      first_address: {value: {get_attr: [server, first_address]}}
"""


def interfaces_of(member: Any, ids: dict[str, str]) -> list[tuple[str, str, str | None]]:
    """The server's interfaces as Nova lists them: (its network in the template, whose
    port -- the pre-made one, Nova's, or the server's by name --, the address of a
    fixed one), and their port ids by network."""
    nets = {ids["net"]: "net", ids["net2"]: "net2"}
    found = []
    for interface in member.compute.server_interfaces(ids["server"]):
        port = member.network.get_port(interface.port_id)
        whose = "pre-made" if port.id == ids["port"] else (port.name or "nova")
        address = interface.fixed_ips[0]["ip_address"] if nets.get(interface.net_id) == "net" else None
        found.append((nets.get(interface.net_id, "?"), whose, address))
    return sorted(found, key=repr)


def port_ids_by_network(member: Any, server: str) -> dict[str, list[str]]:
    ports: dict[str, list[str]] = {}
    for interface in member.compute.server_interfaces(server):
        ports.setdefault(interface.net_id, []).append(interface.port_id)
    return ports


def test_a_networks_change_attaches_and_detaches_in_place(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, NETWORKS_IN_PLACE))
    physical = ids(made)
    assert interfaces_of(member, physical) == [("net", "pre-made", "10.62.0.10")]
    # Check mode: an update, no replacement.
    preview = ok(stacks(name, NETWORKS_IN_PLACE, check=True, parameters={"layout": "more"}))
    assert preview["plan"]["updated"] == ["server"] and preview["plan"]["replaced"] == []
    more = ok(stacks(name, NETWORKS_IN_PLACE, parameters={"layout": "more"}))
    assert ids(more) == physical
    assert interfaces_of(member, physical) == sorted([
        ("net", "pre-made", "10.62.0.10"), ("net2", "nova", None), ("net", "server-port-1", "10.62.0.20")],
        key=repr)
    # The attributes read after the update show every new interface.
    net, net2 = member.network.get_network(physical["net"]), member.network.get_network(physical["net2"])
    shown = more["outputs"]["networks"]
    assert sorted(shown[net.name]) == ["10.62.0.10", "10.62.0.20"] and len(shown[net2.name]) == 1
    internal = [p for p in member.network.ports(device_id=physical["server"]) if p.name == "server-port-1"]
    kept = port_ids_by_network(member, physical["server"])[net2.id]

    # The network alone: its interface kept (same port), the pre-made port let go,
    # the server's own port detached and deleted.
    less = ok(stacks(name, NETWORKS_IN_PLACE, parameters={"layout": "less"}))
    assert ids(less) == physical
    assert interfaces_of(member, physical) == [("net2", "nova", None)]
    assert port_ids_by_network(member, physical["server"]) == {net2.id: kept}
    assert member.network.get_port(physical["port"]).device_id == ""
    assert member.network.find_port(internal[0].id) is None
    assert list(less["outputs"]["networks"]) == [net2.name, net2.id]

    # Back to the pre-made port: the same server again.
    back = ok(stacks(name, NETWORKS_IN_PLACE))
    assert ids(back) == physical and interfaces_of(member, physical) == [("net", "pre-made", "10.62.0.10")]
    assert back["outputs"]["first_address"] == "10.62.0.10"


# -- beside Heat ----------------------------------------------------------------------------------------
# The same templates through the real Heat engine (heat_on_cloud.py), as the same
# member of the same project: what each made, read back from Nova and Neutron, and
# every output must be the same.

BESIDE = """\
    heat_template_version: 2018-08-31
    parameters:
      server_name: {type: string, default: ""}
      role: {type: string, default: app}
      flavor: {type: string, default: m1.tiny}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.61.0.0/24}
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.61.0.10}]
      server:
        type: OS::Nova::Server
        properties:
          name: {get_param: server_name}
          image: hotplay-tiny
          flavor: {get_param: flavor}
          flavor_update_policy: REPLACE
          metadata: {role: {get_param: role}}
          networks: [{port: {get_resource: port}}]
    outputs:
      ids: {value: {net: {get_resource: net}, subnet: {get_resource: subnet},
                    port: {get_resource: port}, server: {get_resource: server}}}
      first_address: {value: {get_attr: [server, first_address]}}
      networks: {value: {get_attr: [server, networks]}}
      addresses: {value: {get_attr: [server, addresses]}}
      name: {value: {get_attr: [server, name]}}
      show: {value: {get_attr: [server, show]}}
"""

# What differs between any two things the cloud makes, whoever asks.
VOLATILE = {"created_at", "updated_at", "created", "updated", "revision_number", "mac_address",
            "OS-EXT-IPS-MAC:mac_addr", "id", "standard_attr_id", "hostId", "links",
            "OS-SRV-USG:launched_at", "progress", "provider:segmentation_id"}
# A server's ``flavor`` in ``show`` is an id below microversion 2.47 and the flavor's
# details from it on: Heat beside runs at 2.36 (heat_on_cloud.MAX_NOVA_MICROVERSION).
MICROVERSION_SHAPED = {"flavor"}


@pytest.fixture
def member_heat(heat_on_the_cloud: Any, member: Any) -> Any:
    """Heat's API for the member's project, with the member's token."""
    from heat_peer import HeatClient

    return HeatClient(f"{heat_on_the_cloud.url}/{member.current_project_id}", poll=0.5,
                      timeout=300, token=member.auth_token)


class Beside:
    """One template on both sides; ``apply``, ``preview`` and ``delete`` each side."""

    def __init__(self, heat_client: Any, stacks: Callable[..., dict[str, Any]], template: str) -> None:
        from test_side_by_side_heat import HeatSide

        self.heat = HeatSide(heat_client, textwrap.dedent(template))
        self.stacks, self.template = stacks, template
        self.name = f"p{uuid.uuid4().hex[:8]}"

    def apply(self, **parameters: str) -> tuple[dict[str, Any], dict[str, Any]]:
        heat = self.heat.apply(**parameters)
        hotplay = ok(self.stacks(self.name, self.template, parameters=parameters))["outputs"]
        return heat, hotplay

    def preview(self, **parameters: str) -> tuple[list[str], list[str]]:
        """The resources each side's preview would replace."""
        heat = self.heat.client.preview_update(self.heat.name, self.heat.stack_id, {
            "template": self.heat.template, "parameters": parameters})
        hotplay = ok(self.stacks(self.name, self.template, check=True, parameters=parameters))
        return sorted(r["resource_name"] for r in heat["replaced"]), sorted(hotplay["plan"]["replaced"])

    def delete(self) -> None:
        delete_on_heat(self.heat)
        ok(self.stacks(self.name, "", state="absent"))


def delete_on_heat(side: Any) -> None:
    """Delete one side's Heat stack and wait until it is gone: Heat's API shows a
    member's deleted stack as NotFound (an admin's, as DELETE_COMPLETE)."""
    from heat_peer import HeatError

    if not side.stack_id:
        return
    side.client.delete(side.name, side.stack_id)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            status = side.client.show(side.name, side.stack_id)["stack_status"]
        except HeatError as error:
            if error.code == 404:
                return
            raise
        assert status != "DELETE_FAILED", side.client.show(side.name, side.stack_id)
        if status == "DELETE_COMPLETE":
            return
        time.sleep(0.5)
    raise AssertionError(f"Heat's stack {side.name} was not deleted in 300 s")


def comparable(value: Any, labels: Any, shaped: frozenset[str] = frozenset()) -> Any:
    """An output without what differs between any two things, ids and names as labels."""
    if isinstance(value, dict):
        return {labels.value(key): comparable(item, labels) for key, item in value.items()
                if key not in VOLATILE and key not in shaped}
    if isinstance(value, list):
        items = [comparable(item, labels) for item in value]
        return sorted(items, key=repr) if all(isinstance(i, dict) for i in items) else items
    return labels.value(value)


def same_shape(heat: dict[str, Any], hotplay: dict[str, Any]) -> list[str]:
    """Where the two sides differ; a server's ``show`` on the keys both microversions
    have (Heat beside runs at 2.36: later ones add keys, and shape ``flavor``)."""
    from test_side_by_side_heat import differences

    common = set(heat["outputs"]["show"]) & set(hotplay["outputs"]["show"])
    for side in (heat, hotplay):
        side["outputs"]["show"] = {k: v for k, v in side["outputs"]["show"].items() if k in common}
    found: list[str] = differences(heat, hotplay)
    return found


def described(member: Any, stack: str, outputs: dict[str, Any]) -> dict[str, Any]:
    """The server and port as Nova and Neutron have them, and the outputs, labelled."""
    from test_side_by_side_heat import Labels

    labels = Labels(stack)
    ids = outputs["ids"]
    server, port = member.compute.get_server(ids["server"]), member.network.get_port(ids["port"])
    network, subnet = member.network.get_network(ids["net"]), member.network.get_subnet(ids["subnet"])
    for thing in (server, port, network, subnet):
        labels.known(thing.id, thing.name)
    shown = {key: comparable(value, labels) for key, value in outputs.items() if key not in ("ids", "show")}
    shown["show"] = comparable(outputs["show"], labels, frozenset(MICROVERSION_SHAPED))
    return {"outputs": shown,
            "server": {"name": labels.value(server.id), "status": server.status,
                       "flavor": server.flavor.get("original_name"), "metadata": server.metadata,
                       "port": labels.value(port.device_id)}}


def test_a_server_on_a_port_beside_heat(member_heat: Any, stacks: Any, member: Any) -> None:
    sides = Beside(member_heat, stacks, BESIDE)
    try:
        heat, hotplay = sides.apply()
        found = same_shape(described(member, sides.heat.name, heat), described(member, sides.name, hotplay))
        assert not found, "Heat and hotplay differ after the create:\n" + "\n".join(found)

        # A name and metadata: in place on both sides, no second server.
        heat_renamed, hotplay_renamed = sides.apply(server_name="web", role="db")
        assert (heat_renamed["ids"], hotplay_renamed["ids"]) == (heat["ids"], hotplay["ids"])
        found = same_shape(described(member, sides.heat.name, heat_renamed),
                           described(member, sides.name, hotplay_renamed))
        assert not found, "Heat and hotplay differ after the rename:\n" + "\n".join(found)

        # A flavor change with flavor_update_policy REPLACE: both applies replace the
        # server alone, on the same pre-made port, and hotplay's preview names exactly
        # that.  (Heat's preview names the server, and also the port and subnet,
        # whose properties read resources it cannot resolve in a preview; its apply
        # keeps them.)
        change = {"server_name": "web", "role": "db", "flavor": "m1.small"}
        heat_preview, hotplay_preview = sides.preview(**change)
        assert "server" in heat_preview and hotplay_preview == ["server"]
        heat_replaced, hotplay_replaced = sides.apply(**change)
        for before, after in ((heat, heat_replaced), (hotplay, hotplay_replaced)):
            assert after["ids"]["server"] != before["ids"]["server"]
            assert {k: v for k, v in after["ids"].items() if k != "server"} == \
                {k: v for k, v in before["ids"].items() if k != "server"}
        found = same_shape(described(member, sides.heat.name, heat_replaced),
                           described(member, sides.name, hotplay_replaced))
        assert not found, "Heat and hotplay differ after the replacement:\n" + "\n".join(found)
    finally:
        sides.delete()
    # Nothing of either stack is left: no server, no port, no network.
    assert (left_behind(member, [sides.heat.name]), left_behind(member, [sides.name])) == ([], [])


@pytest.mark.slow
def test_a_networks_change_beside_heat(member_heat: Any, stacks: Any, member: Any) -> None:
    """Heat and hotplay attach and detach the same interfaces in place: the same
    server, the kept interface on the same port, the same ports afterwards."""
    sides = Beside(member_heat, stacks, NETWORKS_IN_PLACE)
    try:
        heat, hotplay = sides.apply()
        for layout in ("more", "less", "port"):
            kept = {side: port_ids_by_network(member, outputs["ids"]["server"])
                    for side, outputs in (("heat", heat), ("hotplay", hotplay))}
            heat_after, hotplay_after = sides.apply(layout=layout)
            assert (heat_after["ids"], hotplay_after["ids"]) == (heat["ids"], hotplay["ids"])
            assert interfaces_of(member, heat_after["ids"]) == interfaces_of(member, hotplay_after["ids"]), layout
            for side, outputs in (("heat", heat_after), ("hotplay", hotplay_after)):
                now = port_ids_by_network(member, outputs["ids"]["server"])
                # An interface on a network both layouts name keeps its port.
                if layout == "less":
                    net2 = outputs["ids"]["net2"]
                    assert now[net2] == kept[side][net2], side
    finally:
        sides.delete()
    # Heat's API says a member's stack is gone while Nova may still list its server
    # as being deleted, for a moment.
    assert eventually(lambda: left_behind(member, [sides.heat.name]) == []), left_behind(member, [sides.heat.name])
    assert left_behind(member, [sides.name]) == []


def eventually(condition: Callable[[], bool], seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(2)
    return True


@pytest.mark.cloud_alone  # the project's networks decide Nova's answer
def test_a_server_naming_no_network_and_its_external_id_beside_heat(
        member_heat: Any, stacks: Any, member: Any) -> None:
    from test_side_by_side_heat import HeatSide

    def still_there(server_id: str) -> bool:
        return member.compute.get_server(server_id).status == "ACTIVE"

    # A server naming no network: the same answer (one after the other: the
    # project's networks decide, and other tests make networks there at times).
    answers = []
    for side in ("heat", "hotplay"):
        if side == "heat":
            made = HeatSide(member_heat, textwrap.dedent(NO_NETWORKS))
            made.stack_id = member_heat.create(made.name, {"template": made.template})
            stack = member_heat.wait(made.name, made.stack_id, "CREATE")
            answer = (stack["stack_status"], "Multiple possible networks" in str(stack["stack_status_reason"]))
            delete_on_heat(made)
        else:
            name = stack_name()
            done = stacks(name, NO_NETWORKS)
            answer = (done.get("stack_status"), "Multiple possible networks" in str(done.get("msg")))
            ok(stacks(name, "", state="absent"))
        answers.append(answer)
    assert answers[0] == answers[1]

    # external_id, of one server (on no network): both accept it and leave the
    # server alone when the adopting stack is deleted.  (Heat's [server, name] of an
    # adopted server is the name Heat would have given it; here it is the server's.)
    name = stack_name()
    server_id = ids(ok(stacks(name, OFF_NETWORK)))["server"]
    adopter = HeatSide(member_heat, textwrap.dedent(EXTERNAL))
    adopter.apply(server_id=server_id)
    delete_on_heat(adopter)
    kept = [still_there(server_id)]
    other = stack_name()
    adopted = ok(stacks(other, EXTERNAL, parameters={"server_id": server_id}))
    assert adopted["outputs"]["status"] == "ACTIVE" and ids(adopted) == {"server": server_id}
    ok(stacks(other, "", state="absent"))
    kept.append(still_there(server_id))
    ok(stacks(name, "", state="absent"))
    assert kept == [True, True]
