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
              **options: Any) -> dict[str, Any]:
        runs[0] += 1
        path = tmp_path / f"{name}-{runs[0]}.yaml"
        path.write_text(textwrap.dedent(template))
        arguments: dict[str, Any] = {"name": name, "state": state, "cloud": MEMBER_CLOUD, **options}
        if state == "present":
            arguments["template"] = str(path)
            if name not in applied:
                applied.append(name)
        task: dict[str, Any] = {"name": "t", "register": "done", "hotplay.stacks.stack": arguments}
        if check:
            task["check_mode"] = True
        done = run_tasks([task], name=f"play{runs[0]}", env=cloud_env)
        result = done.results["done"]
        assert result is not None, done.stdout
        return dict(result)

    yield apply
    for name in applied:
        gone = apply(name, "", state="absent")
        assert not gone.get("failed"), gone.get("msg")
    assert left_behind(member, applied) == []


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


def test_a_server_naming_no_network_is_put_on_the_projects_network(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = stacks(name, NO_NETWORKS)
    ok(made)
    server = member.compute.get_server(ids(made)["server"])
    assert server.status == "ACTIVE"
    visible = [n.name for n in member.network.networks()]
    assert list(made["outputs"]["addresses"])[:1] == [visible[0]] if len(visible) == 1 else True


def test_external_id_adopts_a_server_and_leaves_it_on_delete(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, NO_NETWORKS))
    server_id = ids(made)["server"]
    other = stack_name()
    adopted = ok(stacks(other, EXTERNAL, parameters={"server_id": server_id}))
    assert ids(adopted) == {"server": server_id}
    assert adopted["outputs"]["status"] == "ACTIVE"
    assert adopted["outputs"]["name"] == member.compute.get_server(server_id).name
    gone = ok(stacks(other, "", state="absent"))
    assert gone["stack_status"] == "DELETE_COMPLETE"
    assert member.compute.get_server(server_id).status == "ACTIVE"


def test_a_bad_flavor_fails_validation_with_heats_message(stacks: Any) -> None:
    name = stack_name()
    refused = stacks(name, BAD_FLAVOR)
    assert refused["failed"] and "stack_status" not in refused
    assert refused["msg"] == ("Property error: resources.server.properties.flavor: Error validating "
                              "value 'm1.nope': No Flavor matching {'name': 'm1.nope'}. (HTTP 404)")
