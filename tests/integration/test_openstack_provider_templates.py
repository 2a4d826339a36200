# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped OpenStack environment (``hotplay.stacks.openstack``): a Heat
template with Heat's OS:: types runs unchanged, each resource becoming the
openstack.cloud module call it maps to.

``openstack.cloud`` here is a MOCK, for speed (tests/integration/mock_openstack):
each module records the call it got and keeps a pretend cloud in a JSON file.  The
tests check the exact module arguments, that return values flow back as Heat's
attributes, and the life cycle against that pretend cloud.  tests/cloud runs the
same types through the real openstack.cloud against a real OpenStack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typing import Any

import yaml

from conftest import INSTALLED, run_playbook, write_template

MOCK = Path(__file__).resolve().parent / "mock_openstack"
# The id of the mock cloud's own "public" network (mock_cloud.EXTERNAL_NETWORKS).
MOCK_PUBLIC_ID = "5f1d6a3e-0000-4000-8000-00000000beef"

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      flavor: {type: string, default: m1.small}
      role: {type: string, default: app}
      volume_name: {type: string, default: data}
    resources:
      key:
        type: OS::Nova::KeyPair
        properties: {name: ops, public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB ops@example"}
      net:
        type: OS::Neutron::Net
        properties: {name: app-net}
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
               remote_mode: remote_ip_prefix, remote_ip_prefix: 198.51.100.0/24}
      router:
        type: OS::Neutron::Router
        properties:
          external_gateway_info: {network: public}
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.0.0.10}]
          security_groups: [{get_resource: web_sg}]
      server:
        type: OS::Nova::Server
        properties:
          image: cirros
          flavor: {get_param: flavor}
          key_name: {get_resource: key}
          networks: [{port: {get_resource: port}}]
          metadata: {role: {get_param: role}}
          user_data: "#!/bin/sh\\necho hello\\n"
      fip:
        type: OS::Neutron::FloatingIP
        properties:
          floating_network: public
          port_id: {get_resource: port}
      data:
        type: OS::Cinder::Volume
        properties: {name: {get_param: volume_name}, size: 10, metadata: {tier: gold}}
      attach:
        type: OS::Cinder::VolumeAttachment
        properties:
          instance_uuid: {get_resource: server}
          volume_id: {get_resource: data}
          mountpoint: /dev/vdb
    outputs:
      address: {value: {get_attr: [server, first_address]}}
      networks: {value: {get_attr: [server, networks]}}
      server_id: {value: {get_resource: server}}
      floating: {value: {get_attr: [fip, floating_ip_address]}}
      net_status: {value: {get_attr: [net, status]}}
"""


def apply(tmp_path: Path, state: str = "present", **parameters: str):
    template = write_template(tmp_path, "cloud.yaml", TEMPLATE)
    task: dict = {"name": "app", "state": state, "store": f"sqlite:///{tmp_path / 'store.db'}"}
    if state == "present":
        task.update(template=str(template), environment=["hotplay.stacks.openstack"],
                    parameters=parameters)
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Apply", "hotplay.stacks.stack": task, "register": "applied"},
        {"name": "Show", "ansible.builtin.debug": {"msg": "OUTPUTS {{ applied.outputs | default({}) | to_json }}"}},
    ]}]
    playbook = tmp_path / "cloud.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    run = run_playbook(playbook, tmp_path, env={
        "ANSIBLE_COLLECTIONS_PATH": f"{INSTALLED}:{MOCK}",
        "MOCK_OPENSTACK_LOG": str(tmp_path / "calls.jsonl"),
        "MOCK_OPENSTACK_STATE": str(tmp_path / "cloud.json")})
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def calls(tmp_path: Path) -> list[dict]:
    path = tmp_path / "calls.jsonl"
    found = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    path.write_text("")
    return [c for c in found if not c["check_mode"]]


def cloud(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "cloud.json").read_text())


def outputs(run) -> dict:
    line = next(line for line in run.stdout.splitlines() if '"msg": "OUTPUTS ' in line)
    return json.loads(json.loads("{" + line.strip().rstrip(",") + "}")["msg"][len("OUTPUTS "):])


def one(made: list[dict], module: str) -> dict:
    found = [c["args"] for c in made if c["module"] == f"openstack.cloud.{module}"]
    assert len(found) == 1, (module, found)
    return found[0]


def test_heat_types_become_openstack_cloud_calls(tmp_path):
    created = apply(tmp_path)
    made = calls(tmp_path)
    pretend = cloud(tmp_path)
    net_id = next(iter(pretend["network"]))
    subnet_id = next(iter(pretend["subnet"]))
    port_id = next(iter(pretend["port"]))
    server_id = next(iter(pretend["server"]))
    volume_id = next(iter(pretend["volume"]))
    sg_id = next(iter(pretend["security_group"]))

    assert one(made, "network")["name"] == "app-net"
    subnet = one(made, "subnet")
    assert (subnet["network_name"], subnet["cidr"], subnet["ip_version"]) == (net_id, "10.0.0.0/24", 4)
    assert (subnet["allocation_pool_start"], subnet["allocation_pool_end"]) == ("10.0.0.10", "10.0.0.200")
    assert subnet["dns_nameservers"] == ["192.0.2.53"]
    rules = one(made, "security_group")["security_group_rules"]
    # No egress rule given: Neutron's default egress rules stay, as in Heat.
    assert rules == [{"protocol": "tcp", "port_range_min": 22, "port_range_max": 22,
                      "remote_ip_prefix": "198.51.100.0/24"},
                     {"direction": "egress", "ether_type": "IPv4"}, {"direction": "egress", "ether_type": "IPv6"}]
    port = one(made, "port")
    assert port["network"] == net_id
    assert port["fixed_ips"] == [{"subnet_id": subnet_id, "ip_address": "10.0.0.10"}]
    assert port["security_groups"] == [sg_id]
    server = one(made, "server")
    assert server["nics"] == [{"port-id": port_id}]
    assert (server["image"], server["flavor"], server["key_name"]) == ("cirros", "m1.small", "ops")
    assert server["meta"] == {"role": "app"} and server["userdata"] == "#!/bin/sh\necho hello\n"
    assert server["name"].startswith("app-server-")  # Heat-like physical name
    by_type = {c["args"]["type"]: c["args"] for c in made if c["module"] == "openstack.cloud.resource"}
    assert sorted(by_type) == ["ip", "router", "volume"]
    fip, settings, router = by_type["ip"], by_type["volume"], by_type["router"]
    assert (fip["service"], router["service"]) == ("network", "network")
    # A router without the interfaces property is managed by id, so a rerun leaves
    # the interfaces of OS::Neutron::RouterInterface alone; its gateway network by id.
    assert router["attributes"]["external_gateway_info"] == {"network_id": MOCK_PUBLIC_ID}
    assert router["attributes"]["name"].startswith("app-router-")
    # A volume's name, description and metadata are set by id (updated in place later).
    assert (settings["service"], settings["type"]) == ("block_storage", "volume")
    assert settings["attributes"] == {"id": volume_id, "name": "data", "description": None,
                                      "metadata": {"tier": "gold"}}
    # Heat takes the floating network by name; Neutron's API by id: the template looks it up.
    assert [c["args"]["name"] for c in made if c["module"] == "openstack.cloud.networks_info"] == \
        ["public", "public"]
    assert fip["attributes"] == {"floating_network_id": MOCK_PUBLIC_ID, "port_id": port_id}
    assert one(made, "volume")["size"] == 10
    assert one(made, "keypair") == {"state": "present", "name": "ops",
                                    "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB ops@example"}
    attach = one(made, "server_volume")
    assert (attach["server"], attach["volume"], attach["device"]) == (server_id, volume_id, "/dev/vdb")

    # Return values flow back as Heat's attributes.
    assert outputs(created) == {"address": "10.0.0.10", "networks": {"private": ["10.0.0.10"]},
                                "server_id": server_id, "floating": "203.0.113.10",
                                "net_status": "ACTIVE"}


@pytest.mark.slow
def test_update_in_place_replace_and_delete(tmp_path):
    apply(tmp_path)
    first = next(iter(cloud(tmp_path)["server"]))
    calls(tmp_path)

    # metadata is updated in place: the same server, called again.
    apply(tmp_path, role="db")
    servers = cloud(tmp_path)["server"]
    assert list(servers) == [first] and servers[first]["meta"] == {"role": "db"}

    # A volume's name is updated in place (openstack.cloud.resource, by id): the same volume.
    (volume_id,) = cloud(tmp_path)["volume"]
    apply(tmp_path, role="db", volume_name="data2")
    volumes = cloud(tmp_path)["volume"]
    assert list(volumes) == [volume_id] and volumes[volume_id]["name"] == "data2"
    assert volumes[volume_id]["metadata"] == {"tier": "gold"}

    # flavor replaces: a new server (new name) first, then the old one deleted by id.
    calls(tmp_path)
    replaced = apply(tmp_path, role="db", flavor="m1.large", volume_name="data2")
    servers = cloud(tmp_path)["server"]
    (second,) = servers
    assert second != first and servers[second]["flavor"] == "m1.large"
    made = [c for c in calls(tmp_path) if c["module"] == "openstack.cloud.server"]
    assert [c["args"]["state"] for c in made] == ["present", "absent"]
    assert made[1]["args"]["name"] == first
    assert outputs(replaced)["server_id"] == second
    # The attachment follows the new server.
    (attachment,) = cloud(tmp_path)["server_volume"].values()
    assert attachment["server"] == second

    apply(tmp_path, state="absent")
    assert {kind: objects for kind, objects in cloud(tmp_path).items() if objects} == {}


DRIFTING = """\
    heat_template_version: 2018-08-31
    resources:
      net: {type: OS::Neutron::Net, properties: {name: app-net}}
      web_sg:
        type: OS::Neutron::SecurityGroup
        properties:
          rules: [{protocol: tcp, port_range_min: 22, port_range_max: 22,
                   remote_ip_prefix: 198.51.100.0/24}]
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          security_groups: [{get_resource: web_sg}]
    outputs:
      port_id: {value: {get_resource: port}}
"""


def test_converge_repairs_what_drifted(tmp_path, run_tasks):
    """Heat's ``stack update --converge``: a port deleted and a security group's rules
    changed behind the stack's back are reported by stack_info drift; an apply
    without converge trusts the store; with converge the preview names both and the
    apply makes the port again and sets the rules back."""
    template = write_template(tmp_path, "drifting.yaml", DRIFTING)
    env = {"ANSIBLE_COLLECTIONS_PATH": f"{INSTALLED}:{MOCK}",
           "MOCK_OPENSTACK_LOG": str(tmp_path / "calls.jsonl"),
           "MOCK_OPENSTACK_STATE": str(tmp_path / "cloud.json")}
    apply_task = {"name": "app", "template": str(template),
                  "environment": ["hotplay.stacks.openstack"]}

    def task(register: str, check: bool = False, **options: Any) -> dict[str, Any]:
        entry = {"hotplay.stacks.stack": {**apply_task, **options}, "register": register}
        return {**entry, "check_mode": True} if check else entry

    drift = {"hotplay.stacks.stack_info": {"name": "app", "drift": True}, "register": "drift"}
    created = run_tasks([task("created")], name="create", env=env).results["created"]
    pretend = cloud(tmp_path)
    (sg,) = pretend["security_group"].values()
    wanted_rules = sg["security_group_rules"]
    del pretend["port"][created["outputs"]["port_id"]]
    sg["security_group_rules"] = [{"protocol": "tcp", "port_range_min": 80, "port_range_max": 80,
                                   "remote_ip_prefix": "0.0.0.0/0"}]
    (tmp_path / "cloud.json").write_text(json.dumps(pretend))

    results = run_tasks([drift, task("trusting"), task("preview", check=True, converge=True)],
                        name="drifted", env=env).results
    assert set(results["drift"]["drifted"]) == {"port/port", "web_sg/security_group"}
    assert results["trusting"]["changed"] is False and not cloud(tmp_path)["port"]
    plan = results["preview"]["plan"]
    assert {"port", "port/port", "web_sg", "web_sg/security_group"} <= set(plan["updated"]), plan
    assert plan["reasons"]["port/port"].startswith("converge: the real resource drifted")
    assert plan["reasons"]["port"] == "converge: port/port drifted"
    assert "net/network" in plan["unchanged"]

    results = run_tasks([task("repaired", converge=True), drift], name="repair", env=env).results
    assert results["repaired"]["changed"] is True, results["repaired"].get("msg")
    ports = cloud(tmp_path)["port"]
    assert list(ports) == [results["repaired"]["outputs"]["port_id"]]
    (sg,) = cloud(tmp_path)["security_group"].values()
    assert sg["security_group_rules"] == wanted_rules
    assert results["drift"]["drifted"] == []
