# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stack made by the real Heat engine on the test cloud, as a member of a project
(clouds.yaml entry ``hotplay-demo``), abandoned by Heat and adopted by
hotplay.stacks.stack_adopt with the NATIVE OpenStack types (no environment; real
ansible-playbook): every physical id and resource data is Heat's, nothing is made;
the same template applied changes nothing; an update changes the same server and
volume in place; the export (stack_info format heat_abandon) is taken back by Heat
with the same ids; and hotplay's delete leaves nothing on the cloud.  What is on the
cloud is checked through openstacksdk, not through what the stack says.

The provider-template way (environment hotplay.stacks.openstack) is
test_adopt_openstack.py."""

from __future__ import annotations

import json
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from heat_peer import HeatClient

from test_adopt_openstack import PUBLIC_KEY, HeatStack, heat_ids

MEMBER_CLOUD = "hotplay-demo"

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      role: {type: string, default: app}
      size: {type: number, default: 1}
      public_key: {type: string}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.93.0.0/24}
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.93.0.7}]
      key:
        type: OS::Nova::KeyPair
        properties:
          name: {list_join: ["-", [{get_param: OS::stack_name}, key]]}
          public_key: {get_param: public_key}
      group:
        type: OS::Nova::ServerGroup
        properties: {policies: [anti-affinity]}
      server:
        type: OS::Nova::Server
        properties:
          image: hotplay-tiny
          flavor: m1.tiny
          key_name: {get_resource: key}
          networks: [{port: {get_resource: port}}]
          scheduler_hints: {group: {get_resource: group}}
          metadata: {role: {get_param: role}}
      data:
        type: OS::Cinder::Volume
        properties: {size: {get_param: size}}
      attach:
        type: OS::Cinder::VolumeAttachment
        properties: {instance_uuid: {get_resource: server}, volume_id: {get_resource: data}}
    outputs:
      ids:
        value:
          net: {get_resource: net}
          subnet: {get_resource: subnet}
          port: {get_resource: port}
          key: {get_resource: key}
          group: {get_resource: group}
          server: {get_resource: server}
          data: {get_resource: data}
          attach: {get_resource: attach}
      server_name: {value: {get_attr: [server, name]}}
      first_address: {value: {get_attr: [server, first_address]}}
      server_metadata: {value: {get_attr: [server, show, metadata]}}
      net_name: {value: {get_attr: [net, name]}}
      port_ips: {value: {get_attr: [port, fixed_ips]}}
      volume_size: {value: {get_attr: [data, size]}}
      volume_name: {value: {get_attr: [data, display_name]}}
"""
RESOURCES = ("net", "subnet", "port", "key", "group", "server", "data", "attach")


@pytest.fixture(scope="session")
def member(cloud_env: dict[str, str]) -> Any:
    """openstacksdk as the project member the stacks run as."""
    import openstack.config

    config = openstack.config.OpenStackConfig(config_files=[cloud_env["OS_CLIENT_CONFIG_FILE"]])
    return openstack.connection.Connection(config=config.get_one(cloud=MEMBER_CLOUD))


@pytest.fixture
def member_heat(heat_on_the_cloud: Any, member: Any) -> Iterator[Callable[[str], HeatStack]]:
    """``make(name)``: a stack of the real Heat, in the member's project, with the
    member's token (Heat's API for that project, as the catalog gives it)."""
    client = HeatClient(f"{heat_on_the_cloud.url}/{member.current_project_id}", poll=1, timeout=900,
                        token=member.auth_token)
    made: list[HeatStack] = []

    def make(name: str) -> HeatStack:
        made.append(HeatStack(client, name))
        return made[-1]

    yield make
    for stack in reversed(made):
        try:
            stack.delete()
        except AssertionError:
            pass  # the test says what failed; this only tidies the cloud


@pytest.fixture
def leftovers(member: Any) -> Iterator[dict[str, str]]:
    """The ids of what the test's stack has on the cloud; whatever is still there at
    the end (a failed test) is deleted, the server first."""
    ids: dict[str, str] = {}
    yield ids
    if ids.get("server"):
        member.compute.delete_server(ids["server"], ignore_missing=True)
        server = member.compute.find_server(ids["server"])
        if server is not None:
            member.compute.wait_for_delete(server, wait=300)
    cleanups = [("data", member.block_storage.delete_volume), ("port", member.network.delete_port),
                ("subnet", member.network.delete_subnet), ("net", member.network.delete_network),
                ("key", member.compute.delete_keypair), ("group", member.compute.delete_server_group)]
    for name, delete in cleanups:
        if ids.get(name):
            wait_until(lambda: _deleted(delete, ids[name]), timeout=240)


def _deleted(delete: Callable[..., Any], ident: str) -> bool:
    try:
        delete(ident, ignore_missing=True)
    except Exception:  # noqa: BLE001 - still in use (a port Nova has not let go of yet)
        return False
    return True


def wait_until(done: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(2)


def ids_of(result: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry["physical_id"] for entry in result["resources"]}


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert result is not None and not result.get("failed"), (result or {}).get("msg")
    return result


def gone(member: Any, ids: dict[str, str]) -> list[str]:
    """What of the stack's is still on the cloud."""
    found = {
        "server": member.compute.find_server(ids["server"]),
        "data": member.block_storage.find_volume(ids["data"]),
        "port": member.network.find_port(ids["port"]),
        "subnet": member.network.find_subnet(ids["subnet"]),
        "net": member.network.find_network(ids["net"]),
        "key": member.compute.find_keypair(ids["key"]),
        "group": member.compute.find_server_group(ids["group"]),
    }
    return sorted(name for name, thing in found.items() if thing is not None)


def test_a_heat_stack_adopted_natively_is_managed_in_place_given_back_and_deleted(
        tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str], member: Any, member_heat: Any,
        leftovers: dict[str, str]) -> None:
    name = f"n{uuid.uuid4().hex[:8]}"
    template = tmp_path / "app.yaml"
    template.write_text(textwrap.dedent(TEMPLATE))
    parameters = {"public_key": PUBLIC_KEY}
    heat = member_heat(name)
    heat.create(template.read_text(), parameters)
    heat_stack_id = heat.stack_id
    # Heat forgets the stack (its resources stay) and hands over its abandon data.
    data = heat.client.call("DELETE", f"/stacks/{name}/{heat_stack_id}/abandon")
    heat.stack_id = ""
    ids = heat_ids(data)
    leftovers.update(ids)
    assert set(ids) == set(RESOURCES)
    abandon_file = tmp_path / f"{name}.json"
    abandon_file.write_text(json.dumps(data))

    adopt = {"abandon_file": str(abandon_file), "cloud": MEMBER_CLOUD, "template": str(template),
             "parameters": parameters}
    apply = {"name": name, "template": str(template), "cloud": MEMBER_CLOUD}
    first = run_tasks([
        {"hotplay.stacks.stack_adopt": adopt, "check_mode": True, "register": "preview"},
        {"hotplay.stacks.stack_info": {}, "register": "before"},
        {"hotplay.stacks.stack_adopt": adopt, "register": "adopted"},
        {"hotplay.stacks.stack": {**apply, "parameters": parameters}, "register": "same"},
    ], name="adopt", env=cloud_env).results

    preview = ok(first["preview"])
    assert ids_of(preview) == ids
    assert first["before"]["stacks"] == []  # check mode wrote nothing

    adopted = ok(first["adopted"])
    assert adopted["stack_status"] == "ADOPT_COMPLETE" and adopted["stack_id"] == heat_stack_id
    assert ids_of(adopted) == ids and adopted["outputs"]["ids"] == ids
    # Attributes (and names Heat gave, which its abandon data lacks) read from the cloud.
    outputs = adopted["outputs"]
    server = member.compute.get_server(ids["server"])
    assert outputs["server_name"] == server.name and server.name.startswith(f"{name}-server-")
    assert outputs["server_metadata"] == {"role": "app"} and outputs["first_address"] == "10.93.0.7"
    assert outputs["net_name"] == member.network.get_network(ids["net"]).name
    assert [ip["ip_address"] for ip in outputs["port_ips"]] == ["10.93.0.7"]
    volume = member.block_storage.get_volume(ids["data"])
    assert (outputs["volume_size"], outputs["volume_name"]) == ("1", volume.name)

    same = ok(first["same"])
    assert same["changed"] is False and same["revision"] == 1

    later = run_tasks([
        {"hotplay.stacks.stack": {**apply, "parameters": {**parameters, "role": "db", "size": 2}},
         "register": "updated"},
        {"hotplay.stacks.stack_info": {"name": name, "cloud": MEMBER_CLOUD, "drift": True},
         "register": "drift"},
        {"hotplay.stacks.stack_info": {"name": name, "format": "heat_abandon",
                                       "dest": str(tmp_path / "back.json")}, "register": "exported"},
    ], name="update", env=cloud_env).results
    updated = ok(later["updated"])
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    assert ids_of(updated) == ids  # in place: the same server, volume, everything
    assert member.compute.get_server(ids["server"]).metadata == {"role": "db"}
    volume = member.block_storage.get_volume(ids["data"])
    assert (volume.size, volume.status) == (2, "in-use")
    assert member.compute.get_server(ids["server"]).name == server.name  # Heat's name kept
    assert updated["outputs"]["volume_size"] == "2"
    assert ok(later["drift"])["drifted"] == [], later["drift"].get("drift")

    # Back to Heat: the export has Heat's ids, types and resource data, and Heat adopts it.
    exported = json.loads((tmp_path / "back.json").read_text())
    assert heat_ids(exported) == ids
    for resource in RESOURCES:
        heats, ours = data["resources"][resource], exported["resources"][resource]
        assert ours["type"] == heats["type"]
        assert ours["resource_data"] == heats["resource_data"], resource
    back = member_heat(f"{name}-back")
    back.adopt(exported)
    assert heat_ids(back.export()) == ids
    back.abandon()  # Heat forgets it again: hotplay deletes what it manages

    deleted = run_tasks([{"hotplay.stacks.stack": {"name": name, "state": "absent", "cloud": MEMBER_CLOUD},
                          "register": "deleted"}], name="delete", env=cloud_env).results
    assert ok(deleted["deleted"])["changed"] is True
    wait_until(lambda: gone(member, ids) == [], timeout=300)
    leftovers.clear()
