# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Native OS::Neutron::Net and OS::Neutron::Subnet on a real OpenStack, as a member
of a project (clouds.yaml entry ``hotplay-demo``), through real ansible-playbook with
no environment: ids as physical ids, updates in place and replacements as Heat
makes them, deletes by id, check mode that writes nothing, Heat's constraint
message, drift and converge, and one password authentication per run (counted in
Keystone's access log, tests/cloud/cloud.py).  What was made is checked through
openstacksdk, not through what the stack says."""

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

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      admin_up: {type: boolean, default: true}
      cidr: {type: string, default: 10.20.0.0/24}
      dns: {type: comma_delimited_list, default: "192.0.2.53"}
      subnet_name: {type: string, default: first}
    resources:
      net:
        type: OS::Neutron::Net
        properties:
          admin_state_up: {get_param: admin_up}
      subnet:
        type: OS::Neutron::Subnet
        properties:
          network: {get_resource: net}
          name: {get_param: subnet_name}
          cidr: {get_param: cidr}
          dns_nameservers: {get_param: dns}
    outputs:
      net_id: {value: {get_resource: net}}
      subnet_id: {value: {get_resource: subnet}}
      net_status: {value: {get_attr: [net, status]}}
      net_subnets: {value: {get_attr: [net, subnets]}}
      net_show_name: {value: {get_attr: [net, show, name]}}
      subnet_cidr: {value: {get_attr: [subnet, cidr]}}
      subnet_network_id: {value: {get_attr: [subnet, network_id]}}
"""

NAMED = """\
    heat_template_version: 2018-08-31
    parameters:
      name: {type: string}
    resources:
      net:
        type: OS::Neutron::Net
        properties: {name: {get_param: name}}
      subnet:
        type: OS::Neutron::Subnet
        properties: {network_id: {get_resource: net}, cidr: 10.30.0.0/24}
    outputs:
      net_id: {value: {get_resource: net}}
"""

# Networks in a nested stack too: the run's one session serves them.
NESTED = """\
    heat_template_version: 2018-08-31
    resources:
      nets:
        type: OS::Heat::ResourceGroup
        properties:
          count: 3
          resource_def: {type: OS::Neutron::Net}
      net:
        type: OS::Neutron::Net
      subnets:
        type: OS::Heat::ResourceGroup
        properties:
          count: 3
          resource_def:
            type: OS::Neutron::Subnet
            properties: {network: {get_resource: net}, cidr: 10.40.%index%.0/24}
    outputs:
      ids: {value: {get_attr: [nets, refs]}}
"""


@pytest.fixture(scope="session")
def member(cloud_env: dict[str, str]) -> Any:
    """openstacksdk as the project member the stacks run as."""
    import openstack.config

    config = openstack.config.OpenStackConfig(config_files=[cloud_env["OS_CLIENT_CONFIG_FILE"]])
    return openstack.connection.Connection(config=config.get_one(cloud=MEMBER_CLOUD))


class Access:
    """A service's access log (tests/cloud/cloud.py): the requests made since a mark."""

    def __init__(self, service: str) -> None:
        self.path = Path(os.environ["HOTPLAY_CLOUD_DIR"]) / "log" / f"{service}.access"

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, mark: int) -> list[str]:
        time.sleep(0.5)  # gunicorn writes the line after it answered
        with open(self.path, "rb") as log:
            log.seek(mark)
            return log.read().decode().splitlines()

    def count(self, mark: int, pattern: str) -> int:
        return sum(1 for line in self.since(mark) if re.search(pattern, line))


@pytest.fixture
def stacks(tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str],
           member: Any) -> Iterator[Callable[..., Any]]:
    """``apply(name, template, **options)``: one hotplay.stacks.stack task; every
    stack applied is deleted at the end, and the cloud must then hold none of its
    networks."""
    applied: dict[str, str] = {}
    runs = [0]

    def apply(name: str, template: str, state: str = "present", check: bool = False,
              env: dict[str, str] | None = None, cloud: str | None = MEMBER_CLOUD,
              info: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        path = tmp_path / f"{name}-{runs[0]}.yaml"
        path.write_text(textwrap.dedent(template))
        arguments: dict[str, Any] = {"name": name, "state": state, **options}
        if cloud:
            arguments["cloud"] = cloud
        if state == "present" and info is None:
            arguments["template"] = str(path)
            applied[name] = ""
        task: dict[str, Any] = {"name": "t", "register": "done"}
        if info is None:
            task["hotplay.stacks.stack"] = arguments
        elif info.pop("rollback", False):
            task["hotplay.stacks.stack_rollback"] = {"name": name, "cloud": cloud, **info}
        else:  # stack_info (drift) reads the same cloud
            task["hotplay.stacks.stack_info"] = {"name": name, "cloud": cloud, **info}
        if check:
            task["check_mode"] = True
        runs[0] += 1
        done = run_tasks([task], name=f"play{runs[0]}", env={**cloud_env, **(env or {})})
        result = done.results["done"]
        assert result is not None, done.stdout
        return dict(result)

    yield apply
    for name in applied:
        gone = apply(name, "", state="absent")
        assert not gone.get("failed"), gone.get("msg")
    left = [n.name for n in member.network.networks() if n.name.startswith(tuple(applied))]
    assert not left


def ids(result: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry["physical_id"] for entry in result["resources"]}


def stack_name() -> str:
    return f"n{uuid.uuid4().hex[:8]}"


def test_a_net_and_subnet_are_made_updated_replaced_and_deleted_by_id(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = stacks(name, TEMPLATE)
    assert not made.get("failed"), made.get("msg")
    outputs, physical = made["outputs"], ids(made)
    network = member.network.get_network(outputs["net_id"])
    subnet = member.network.get_subnet(outputs["subnet_id"])
    # The physical ids are the cloud's ids; the net has Heat's default name; the
    # project is the member's, not the admin's.
    assert physical == {"net": network.id, "subnet": subnet.id}
    assert re.fullmatch(rf"{name}-net-[a-z0-9]{{12}}", network.name)
    assert network.project_id == member.current_project_id
    assert subnet.network_id == network.id and subnet.name == "first"
    # Attributes in Neutron's shapes, cached when the resource acted, as Heat caches
    # them (the network's subnets are those it had when it was made: none); show
    # is read when asked.
    assert outputs["net_status"] == "ACTIVE" and outputs["net_subnets"] == []
    assert outputs["net_show_name"] == network.name
    assert (outputs["subnet_cidr"], outputs["subnet_network_id"]) == ("10.20.0.0/24", network.id)

    # In place: the same ids, the cloud changed.
    updated = stacks(name, TEMPLATE, parameters={"admin_up": False, "dns": "192.0.2.54",
                                                 "subnet_name": "renamed"})
    assert not updated.get("failed"), updated.get("msg")
    assert ids(updated) == physical
    assert member.network.get_network(network.id).is_admin_state_up is False
    subnet_now = member.network.get_subnet(subnet.id)
    assert (subnet_now.dns_nameservers, subnet_now.name) == (["192.0.2.54"], "renamed")

    # A new cidr replaces the subnet (Heat: cidr is not update_allowed): a new id,
    # the old subnet deleted, the network kept.
    replaced = stacks(name, TEMPLATE, parameters={"admin_up": False, "dns": "192.0.2.54",
                                                  "subnet_name": "renamed", "cidr": "10.21.0.0/24"})
    assert not replaced.get("failed"), replaced.get("msg")
    new_ids = ids(replaced)
    assert new_ids["net"] == network.id and new_ids["subnet"] != subnet.id
    assert member.network.get_subnet(new_ids["subnet"]).cidr == "10.21.0.0/24"
    assert member.network.find_subnet(subnet.id) is None

    deleted = stacks(name, "", state="absent")
    assert not deleted.get("failed"), deleted.get("msg")
    assert member.network.find_network(network.id) is None
    assert member.network.find_subnet(new_ids["subnet"]) is None


def test_two_stacks_with_the_same_network_name_keep_their_own(stacks: Any, member: Any) -> None:
    shared = f"same-{uuid.uuid4().hex[:6]}"
    first, second = stack_name(), stack_name()
    one = stacks(first, NAMED, parameters={"name": shared})
    two = stacks(second, NAMED, parameters={"name": shared})
    assert not one.get("failed") and not two.get("failed"), (one.get("msg"), two.get("msg"))
    assert one["outputs"]["net_id"] != two["outputs"]["net_id"]
    assert len(list(member.network.networks(name=shared))) == 2
    # Deleting the first stack deletes its network, by id: the second's stays.
    assert not stacks(first, "", state="absent").get("failed")
    left = list(member.network.networks(name=shared))
    assert [n.id for n in left] == [two["outputs"]["net_id"]]
    assert len(list(member.network.subnets(network_id=two["outputs"]["net_id"]))) == 1


@pytest.mark.cloud_alone  # reads Neutron's access log and the member's networks
def test_check_mode_writes_nothing_to_the_cloud(stacks: Any, member: Any) -> None:
    """A preview of a create and of an update: Neutron sees reads only (the
    constraints' lookups), and the member's networks are as they were.  The cloud
    comes from OS_CLOUD here: no ``cloud`` option."""
    neutron = Access("neutron")
    name = stack_name()
    before = sorted(n.id for n in member.network.networks())
    mark = neutron.mark()
    preview = stacks(name, TEMPLATE.replace("{get_resource: net}", "private-check"), check=True,
                     cloud=None, env={"OS_CLOUD": MEMBER_CLOUD})
    # The template names a network that does not exist: validation asked Neutron.
    assert preview.get("failed") and "Unable to find network with name or id 'private-check'" in \
        preview["msg"]
    preview = stacks(name, TEMPLATE, check=True, cloud=None, env={"OS_CLOUD": MEMBER_CLOUD})
    assert not preview.get("failed") and preview["changed"], preview.get("msg")
    assert sorted(n.id for n in member.network.networks()) == before
    made = stacks(name, TEMPLATE)
    assert not made.get("failed"), made.get("msg")
    mark = neutron.mark()
    preview = stacks(name, TEMPLATE, check=True, parameters={"cidr": "10.22.0.0/24"})
    assert not preview.get("failed") and preview["changed"], preview.get("msg")
    assert [line for line in neutron.since(mark) if re.search(r" (POST|PUT|DELETE) ", line)] == []
    assert member.network.get_subnet(ids(made)["subnet"]).cidr == "10.20.0.0/24"


def test_a_bad_network_fails_validation_with_heats_message(stacks: Any, member: Any) -> None:
    name = stack_name()
    refused = stacks(name, TEMPLATE.replace("{get_resource: net}", "no-such-network"))
    assert refused.get("failed")
    assert "Property error: resources.subnet.properties.network: Error validating value " \
           "'no-such-network': Unable to find network with name or id 'no-such-network'" in refused["msg"]
    # Refused before anything was made.
    assert not [n for n in member.network.networks() if n.name.startswith(name)]


@pytest.mark.cloud_alone  # reads Keystone's access log
def test_one_password_authentication_per_run(stacks: Any, member: Any) -> None:
    """Eleven resources, nested stacks among them, made and deleted: each run
    authenticates once (POST /v3/auth/tokens in Keystone's log), however many
    threads call the cloud."""
    keystone, neutron = Access("keystone"), Access("neutron")
    name = stack_name()
    stacks(stack_name(), NAMED, parameters={"name": "warm-up"})  # the services' own tokens first
    for state in ("present", "absent"):
        mark, calls = keystone.mark(), neutron.mark()
        began = time.monotonic()
        done = stacks(name, NESTED, state=state)
        took = time.monotonic() - began
        assert not done.get("failed"), done.get("msg")
        authentications = keystone.count(mark, r" POST /v3/auth/tokens ")
        print(f"{state}: {authentications} password authentication(s), "
              f"{len(neutron.since(calls))} Neutron calls, {took:.1f} s")
        assert authentications == 1


def test_drift_is_read_from_the_cloud_and_converge_repairs_it(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = stacks(name, NAMED, parameters={"name": f"{name}-mine"})
    assert not made.get("failed"), made.get("msg")
    net_id = made["outputs"]["net_id"]
    clean = stacks(name, "", info={"drift": True})
    assert clean["drifted"] == [] and clean["drift"]["net"]["drifted"] is False
    member.network.update_network(net_id, name=f"{name}-renamed", is_admin_state_up=False)
    report = stacks(name, "", info={"drift": True})
    assert report["drifted"] == ["net"], report["drift"]
    assert report["drift"]["net"]["changed_keys"] == ["name", "admin_state_up"]
    assert report["drift"]["net"]["diff"]["after"]["name"] == f"{name}-renamed"
    repaired = stacks(name, NAMED, parameters={"name": f"{name}-mine"}, converge=True)
    assert not repaired.get("failed"), repaired.get("msg")
    network = member.network.get_network(net_id)
    assert (network.name, network.is_admin_state_up) == (f"{name}-mine", True)


PORTS = """\
    heat_template_version: 2018-08-31
    parameters:
      port_name: {type: string, default: first}
      groups: {type: comma_delimited_list, default: default}
      address: {type: string, default: 10.50.0.7}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.50.0.0/24}
      port:
        # No depends_on: a port waits for the subnets of its network (Heat).
        type: OS::Neutron::Port
        properties:
          name: {get_param: port_name}
          network_id: {get_resource: net}          # Heat's hidden spelling
          fixed_ips: [{subnet_id: {get_resource: subnet}, ip_address: {get_param: address}}]
          security_groups: {get_param: groups}
    outputs:
      port_id: {value: {get_resource: port}}
      fixed_ips: {value: {get_attr: [port, fixed_ips]}}
      subnet_cidrs: {value: {get_attr: [port, subnets, 0, cidr]}}
      network_name: {value: {get_attr: [port, network, name]}}
      status: {value: {get_attr: [port, status]}}
"""


def test_a_port_is_made_on_its_subnet_and_updated_in_place(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = stacks(name, PORTS)
    assert not made.get("failed"), made.get("msg")
    outputs, physical = made["outputs"], ids(made)
    port = member.network.get_port(outputs["port_id"])
    default = member.network.find_security_group("default", project_id=member.current_project_id)
    assert physical["port"] == port.id and port.name == "first"
    assert port.network_id == physical["net"]
    assert [(ip["subnet_id"], ip["ip_address"]) for ip in port.fixed_ips] == [(physical["subnet"], "10.50.0.7")]
    assert port.security_group_ids == [default.id]
    assert outputs["fixed_ips"] == port.fixed_ips and outputs["subnet_cidrs"] == "10.50.0.0/24"
    assert outputs["network_name"].startswith(f"{name}-net-") and outputs["status"] in ("ACTIVE", "DOWN")

    # Name, groups and address in place: the same port.
    web = member.network.create_security_group(name=f"{name}-web")
    try:
        updated = stacks(name, PORTS, parameters={"port_name": "second", "groups": f"{name}-web",
                                                  "address": "10.50.0.8"})
        assert not updated.get("failed"), updated.get("msg")
        assert ids(updated) == physical
        port = member.network.get_port(port.id)
        assert (port.name, port.security_group_ids) == ("second", [web.id])
        assert [ip["ip_address"] for ip in port.fixed_ips] == ["10.50.0.8"]
        assert not stacks(name, "", state="absent").get("failed")
        assert member.network.find_port(port.id) is None
    finally:
        member.network.delete_security_group(web)


GROUPS = """\
    heat_template_version: 2018-08-31
    parameters:
      ssh_from: {type: string, default: 198.51.100.0/24}
      http_port: {type: number, default: 80}
    resources:
      web:
        type: OS::Neutron::SecurityGroup
        properties:
          description: web servers
          rules:
            - {protocol: tcp, port_range_min: 22, port_range_max: 22,
               remote_ip_prefix: {get_param: ssh_from}}
            - {protocol: icmp, remote_mode: remote_group_id}
      http:
        type: OS::Neutron::SecurityGroupRule
        properties:
          security_group: {get_resource: web}
          port_range_min: {get_param: http_port}
          port_range_max: {get_param: http_port}
          remote_ip_prefix: 0.0.0.0/0
    outputs:
      group_id: {value: {get_resource: web}}
      rule_id: {value: {get_resource: http}}
      rules: {value: {get_attr: [web, show, security_group_rules]}}
"""


def rules_of(member: Any, group: str) -> set[tuple[Any, ...]]:
    return {(r.direction, r.protocol, r.port_range_min, r.remote_ip_prefix, r.remote_group_id)
            for r in member.network.security_group_rules(security_group_id=group)}


def test_a_security_group_keeps_its_rules_as_the_template_lists_them(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = stacks(name, GROUPS)
    assert not made.get("failed"), made.get("msg")
    group, rule = made["outputs"]["group_id"], made["outputs"]["rule_id"]
    assert re.fullmatch(rf"{name}-web-[a-z0-9]{{12}}", member.network.get_security_group(group).name)
    expected = {("ingress", "tcp", 22, "198.51.100.0/24", None), ("ingress", "icmp", None, None, group),
                ("ingress", "tcp", 80, "0.0.0.0/0", None),
                ("egress", None, None, None, None)}  # Neutron's two default egress rules
    assert rules_of(member, group) == expected
    assert member.network.get_security_group_rule(rule).security_group_id == group
    kept = {r.id for r in member.network.security_group_rules(security_group_id=group)
            if r.protocol == "icmp"}

    # One rule of the group changes: that rule alone is replaced; the standalone
    # rule is replaced (Neutron cannot change a rule), with a new id.
    changed = stacks(name, GROUPS, parameters={"ssh_from": "203.0.113.0/24", "http_port": 8080})
    assert not changed.get("failed"), changed.get("msg")
    assert changed["outputs"]["group_id"] == group and changed["outputs"]["rule_id"] != rule
    now = rules_of(member, group)
    assert ("ingress", "tcp", 22, "203.0.113.0/24", None) in now and ("ingress", "tcp", 8080, "0.0.0.0/0", None) in now
    assert ("ingress", "tcp", 22, "198.51.100.0/24", None) not in now
    assert ("ingress", "tcp", 80, "0.0.0.0/0", None) not in now
    assert kept <= {r.id for r in member.network.security_group_rules(security_group_id=group)}

    # A rule removed behind the stack's back is drift.
    member.network.delete_security_group_rule(kept.pop())
    report = stacks(name, "", info={"drift": True})
    assert report["drifted"] == ["web"], report["drift"]


def test_a_rollback_swaps_the_replaced_subnet_back(stacks: Any, member: Any) -> None:
    """stack_rollback with the cloud option: the subnet an update replaced (kept by
    keep_replaced) is healthy in the cloud, so the rollback takes it back, by id,
    and deletes the replacement."""
    name = stack_name()
    made = stacks(name, TEMPLATE)
    assert not made.get("failed"), made.get("msg")
    first = ids(made)
    replaced = stacks(name, TEMPLATE, parameters={"cidr": "10.23.0.0/24"}, keep_replaced=600)
    assert not replaced.get("failed"), replaced.get("msg")
    second = ids(replaced)["subnet"]
    assert second != first["subnet"] and member.network.find_subnet(first["subnet"]) is not None
    back = stacks(name, "", info={"rollback": True})
    assert not back.get("failed"), back.get("msg")
    assert ids(back) == first
    assert member.network.get_subnet(first["subnet"]).cidr == "10.20.0.0/24"
    assert member.network.find_subnet(second) is None


ROUTERS = """\
    heat_template_version: 2018-08-31
    parameters:
      router_name: {type: string, default: edge}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.60.0.0/24}
      other:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.61.0.0/24}
      port:
        type: OS::Neutron::Port
        properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: other}}]}
      router:
        type: OS::Neutron::Router
        properties:
          name: {get_param: router_name}
          external_gateway_info: {network: public}
      on_subnet:
        type: OS::Neutron::RouterInterface
        properties: {router: {get_resource: router}, subnet_id: {get_resource: subnet}}
      on_port:
        type: OS::Neutron::RouterInterface
        properties: {router_id: {get_resource: router}, port: {get_resource: port}}
    outputs:
      router_id: {value: {get_resource: router}}
      interface_id: {value: {get_resource: on_subnet}}
      gateway: {value: {get_attr: [router, external_gateway_info]}}
      status: {value: {get_attr: [router, status]}}
"""


SAME_INTERFACE = """\
    heat_template_version: 2018-08-31
    parameters:
      router: {type: string}
      subnet: {type: string}
    resources:
      interface:
        type: OS::Neutron::RouterInterface
        properties: {router: {get_param: router}, subnet: {get_param: subnet}}
"""


def subnets_on(member: Any, router: str) -> set[str]:
    return {ip["subnet_id"] for port in member.network.ports(device_id=router) for ip in port.fixed_ips}


def test_a_router_with_its_gateway_and_two_interfaces(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = stacks(name, ROUTERS)
    assert not made.get("failed"), made.get("msg")
    physical, outputs = ids(made), made["outputs"]
    router = member.network.get_router(outputs["router_id"])
    public = member.network.find_network("public")
    assert router.external_gateway_info["network_id"] == public.id and router.name == "edge"
    assert outputs["gateway"]["network_id"] == public.id and outputs["status"] == "ACTIVE"
    assert outputs["interface_id"] == f"{router.id}:subnet_id={physical['subnet']}"
    assert physical["on_port"] == f"{router.id}:port_id={physical['port']}"
    assert {physical["subnet"], physical["other"]} <= subnets_on(member, router.id)

    renamed = stacks(name, ROUTERS, parameters={"router_name": "edge2"})
    assert not renamed.get("failed"), renamed.get("msg")
    assert ids(renamed) == physical and member.network.get_router(router.id).name == "edge2"

    # Another stack's interface on the same subnet is refused, and not taken: that
    # stack's delete leaves this one's interface where it is.
    other = stack_name()
    refused = stacks(other, SAME_INTERFACE, parameters={"router": router.id, "subnet": physical["subnet"]})
    assert refused.get("failed") and "already has a port on subnet" in refused["msg"], refused.get("msg")
    assert not stacks(other, "", state="absent").get("failed")
    assert physical["subnet"] in subnets_on(member, router.id)

    # An interface removed behind the stack's back is drift, which converge repairs.
    member.network.remove_interface_from_router(router.id, subnet_id=physical["subnet"])
    report = stacks(name, "", info={"drift": True})
    assert report["drifted"] == ["on_subnet"], report["drift"]
    repaired = stacks(name, ROUTERS, parameters={"router_name": "edge2"}, converge=True)
    assert not repaired.get("failed"), repaired.get("msg")
    assert ids(repaired) == physical and physical["subnet"] in subnets_on(member, router.id)

    assert not stacks(name, "", state="absent").get("failed")
    assert member.network.find_router(router.id) is None and member.network.find_network(physical["net"]) is None


FLOATING = """\
    heat_template_version: 2018-08-31
    parameters:
      public: {type: string}
      on_second: {type: boolean, default: false}
    conditions:
      second: {get_param: on_second}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.70.0.0/24}
      router:
        type: OS::Neutron::Router
        properties: {external_gateway_info: {network: {get_param: public}}}
      interface:
        type: OS::Neutron::RouterInterface
        properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
      first:
        type: OS::Neutron::Port
        properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
      second:
        type: OS::Neutron::Port
        properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
      fip:
        # No depends_on: Heat makes a floating IP wait for the router interface on
        # its port's subnet.
        type: OS::Neutron::FloatingIP
        properties:
          floating_network: {get_param: public}   # by id: the provider template failed on it
          port_id: {if: [second, {get_resource: second}, {get_resource: first}]}
    outputs:
      fip_id: {value: {get_resource: fip}}
      address: {value: {get_attr: [fip, floating_ip_address]}}
      port: {value: {get_attr: [fip, port_id]}}
"""


def test_a_floating_ip_on_an_external_network_given_by_id_moves_in_place(stacks: Any, member: Any) -> None:
    name = stack_name()
    public = member.network.find_network("public").id
    made = stacks(name, FLOATING, parameters={"public": public})
    assert not made.get("failed"), made.get("msg")
    physical, outputs = ids(made), made["outputs"]
    floating = member.network.get_ip(outputs["fip_id"])
    assert floating.floating_network_id == public and floating.port_id == physical["first"]
    assert outputs["address"] == floating.floating_ip_address and outputs["port"] == physical["first"]

    moved = stacks(name, FLOATING, parameters={"public": public, "on_second": True})
    assert not moved.get("failed"), moved.get("msg")
    assert ids(moved)["fip"] == floating.id  # the same address, on the other port
    assert member.network.get_ip(floating.id).port_id == physical["second"]
    assert moved["outputs"]["port"] == physical["second"]
    assert not stacks(name, "", state="absent").get("failed")
    assert member.network.find_ip(floating.id) is None


ASSOCIATED = """\
    heat_template_version: 2018-08-31
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.71.0.0/24}
      router:
        type: OS::Neutron::Router
        properties: {external_gateway_info: {network: public}}
      interface:
        type: OS::Neutron::RouterInterface
        properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
      port:
        type: OS::Neutron::Port
        properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
      fip:
        type: OS::Neutron::FloatingIP
        properties: {floating_network: public}
      association:
        # No depends_on: Heat makes an association wait for the router interface on
        # its port's subnet (Neutron refuses the address until a router reaches it).
        type: OS::Neutron::FloatingIPAssociation
        properties: {floatingip_id: {get_resource: fip}, port_id: {get_resource: port}}
"""


def test_a_floating_ip_association_waits_for_the_router_interface(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = stacks(name, ASSOCIATED)
    assert not made.get("failed"), made.get("msg")
    physical = ids(made)
    assert member.network.get_ip(physical["fip"]).port_id == physical["port"]
    # The delete goes the other way: the association before the interface, which
    # Neutron refuses to remove while a floating IP needs it.
    gone = stacks(name, "", state="absent")
    assert not gone.get("failed"), gone.get("msg")
    assert member.network.find_ip(physical["fip"]) is None and member.network.find_port(physical["port"]) is None
