# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One template through the real Heat engine and through hotplay (real
ansible-playbook, the shipped provider templates mapped by the shipped environment)
on the same cloud: both must make the same servers, ports, networks, subnets,
security groups, volumes and attachments, and give the same outputs.

What each side made is read back from the cloud's APIs (openstacksdk) and described
without ids: a thing is named by its name with the stack's name and the random part
Heat adds cut off (``STACK-server-*``), an id inside a value by the label of what it
names, so the two descriptions compare as they are."""

from __future__ import annotations

import concurrent.futures
import re
import textwrap
import uuid
from pathlib import Path
from collections.abc import Callable
from typing import Any

import pytest

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      flavor: {type: string, default: m1.tiny}
      role: {type: string, default: app}
      ssh_from: {type: string, default: 198.51.100.0/24}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties:
          network: {get_resource: net}
          cidr: 10.7.0.0/24
          dns_nameservers: [192.0.2.53]
          allocation_pools: [{start: 10.7.0.10, end: 10.7.0.200}]
      sg:
        type: OS::Neutron::SecurityGroup
        properties:
          description: ssh in
          rules:
            - {protocol: tcp, port_range_min: 22, port_range_max: 22,
               remote_mode: remote_ip_prefix, remote_ip_prefix: {get_param: ssh_from}}
      port:
        type: OS::Neutron::Port
        properties:
          network: {get_resource: net}
          fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.7.0.5}]
          security_groups: [{get_resource: sg}]
      server:
        type: OS::Nova::Server
        properties:
          image: hotplay-tiny
          flavor: {get_param: flavor}
          networks: [{port: {get_resource: port}}]
          metadata: {role: {get_param: role}}
      data:
        type: OS::Cinder::Volume
        properties: {size: 1}
      attach:
        type: OS::Cinder::VolumeAttachment
        properties:
          instance_uuid: {get_resource: server}
          volume_id: {get_resource: data}
    outputs:
      ids:
        value:
          net: {get_resource: net}
          subnet: {get_resource: subnet}
          sg: {get_resource: sg}
          port: {get_resource: port}
          server: {get_resource: server}
          data: {get_resource: data}
      first_address: {value: {get_attr: [server, first_address]}}
      networks: {value: {get_attr: [server, networks]}}
      addresses: {value: {get_attr: [server, addresses]}}
      server_name: {value: {get_attr: [server, name]}}
      server_status: {value: {get_attr: [server, show, status]}}
      server_metadata: {value: {get_attr: [server, show, metadata]}}
      port_fixed_ips: {value: {get_attr: [port, fixed_ips]}}
      port_network: {value: {get_attr: [port, network_id]}}
      port_device: {value: {get_attr: [port, device_id]}}
      net_name: {value: {get_attr: [net, name]}}
      net_status: {value: {get_attr: [net, status]}}
      net_subnets: {value: {get_attr: [net, subnets]}}
      subnet_cidr: {value: {get_attr: [subnet, cidr]}}
      subnet_gateway: {value: {get_attr: [subnet, gateway_ip]}}
      subnet_pools: {value: {get_attr: [subnet, allocation_pools]}}
      sg_name: {value: {get_attr: [sg, show, name]}}
      volume_size: {value: {get_attr: [data, size]}}
      volume_status: {value: {get_attr: [data, status]}}
      volume_attachments: {value: {get_attr: [data, attachments_list]}}
"""

UPDATE = {"role": "db", "ssh_from": "203.0.113.0/24"}

# Where hotplay still differs from Heat, each said in docs/openstack.md ("Not yet
# right"): the comparison reports them and the test fails on any other difference.
KNOWN = {
    "outputs.addresses.": "Heat adds each address's port id and its subnets' and network's details",
    "outputs.volume_status: ": "a volume's attributes are those its module returned when it was made "
                               "(before the attachment), where Heat reads them when asked",
    "outputs.volume_attachments: ": "the same",
    "outputs.volume_size: ": "Heat gives a volume's attributes as text (str() of each value)",
    # After the update only:
    "outputs.server_metadata.": "the server's show is openstack.cloud.server's return, from before "
                                "server_metadata set the changed key again",
    "cloud.port.security_groups: ": "openstack.cloud.server, updating a server that lists no "
                                    "security_groups, removes the groups its port gave it",
    "cloud.server.security_groups: ": "the same",
}


class Labels:
    """Names and ids of what one stack made, as labels that do not depend on the run."""

    def __init__(self, stack: str) -> None:
        # Heat names a thing <stack>-<resource>-<12 random characters>.
        self.pattern = re.compile(rf"^{re.escape(stack)}-(.+)-[A-Za-z0-9]+$")
        self.by_id: dict[str, str] = {}

    def name(self, name: str | None) -> str | None:
        if name is None:
            return None
        found = self.pattern.match(name)
        return f"STACK-{found.group(1)}-*" if found else name

    def known(self, thing_id: str, name: str | None) -> str:
        label = self.name(name) or f"<unnamed {thing_id}>"
        self.by_id[thing_id] = label
        return label

    def value(self, value: Any) -> Any:
        """Ids and names inside an output value replaced by their labels."""
        if isinstance(value, dict):
            return {self.value(key): self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, str):
            return self.by_id.get(value) or self.name(value)
        return value


def describe(conn: Any, ids: dict[str, str], labels: Labels) -> dict[str, Any]:
    """What the cloud holds for one stack's resources (``ids``: resource → id)."""
    net = conn.network.get_network(ids["net"])
    subnet = conn.network.get_subnet(ids["subnet"])
    group = conn.network.get_security_group(ids["sg"])
    port = conn.network.get_port(ids["port"])
    server = conn.compute.get_server(ids["server"])
    volume = conn.block_storage.get_volume(ids["data"])
    for thing in (net, subnet, group, port, server, volume):
        labels.known(thing.id, thing.name)
    label = labels.by_id.get
    return {
        "net": {"name": label(net.id), "status": net.status, "admin_state_up": net.is_admin_state_up,
                "shared": net.is_shared, "port_security_enabled": net.is_port_security_enabled,
                "subnets": sorted(map(str, map(label, net.subnet_ids)))},
        "subnet": {"name": label(subnet.id), "network": label(subnet.network_id), "cidr": subnet.cidr,
                   "ip_version": subnet.ip_version, "gateway_ip": subnet.gateway_ip,
                   "enable_dhcp": subnet.is_dhcp_enabled, "dns_nameservers": subnet.dns_nameservers,
                   "allocation_pools": subnet.allocation_pools, "host_routes": subnet.host_routes},
        "sg": {"name": label(group.id), "description": group.description,
               "rules": sorted((r["direction"], r["ethertype"], str(r["protocol"]), str(r["port_range_min"]),
                                str(r["port_range_max"]), str(r["remote_ip_prefix"]),
                                str(label(r["remote_group_id"] or "")))
                               for r in group.security_group_rules)},
        "port": {"name": label(port.id), "network": label(port.network_id), "status": port.status,
                 "admin_state_up": port.is_admin_state_up, "device": label(port.device_id),
                 "device_owner": port.device_owner,
                 "fixed_ips": [(ip["ip_address"], label(ip["subnet_id"])) for ip in port.fixed_ips],
                 "security_groups": sorted(map(str, map(label, port.security_group_ids))),
                 "port_security_enabled": port.is_port_security_enabled},
        "server": {"name": label(server.id), "status": server.status,
                   "flavor": server.flavor.get("original_name") or server.flavor.get("name"),
                   "image": conn.image.get_image(server.image.id).name, "metadata": server.metadata,
                   "key_name": server.key_name,
                   "addresses": {labels.name(network): sorted((a["addr"], a["version"]) for a in found)
                                 for network, found in server.addresses.items()},
                   "security_groups": sorted(labels.name(g["name"]) or "" for g in server.security_groups or []),
                   "volumes": sorted(map(str, map(label, (v["id"] for v in server.attached_volumes))))},
        "volume": {"name": label(volume.id), "size": volume.size, "status": volume.status,
                   "bootable": volume.is_bootable, "volume_type": volume.volume_type,
                   "description": volume.description, "metadata": volume.metadata,
                   "attachments": [(label(a["server_id"]), a["device"]) for a in volume.attachments]},
    }


def left_behind(conn: Any, stack: str) -> list[str]:
    """Whatever in the cloud still carries the stack's name."""
    found = [*conn.compute.servers(), *conn.network.ports(), *conn.network.networks(),
             *conn.network.subnets(), *conn.network.security_groups(), *conn.block_storage.volumes()]
    return sorted(f"{type(thing).__name__} {thing.name}" for thing in found
                  if (thing.name or "").startswith(f"{stack}-"))


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Each call's result, the calls made side by side (Heat's side and hotplay's
    are independent stacks: each waits on the cloud for most of its time)."""
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
        return [future.result() for future in futures]


def differences(heat: Any, hotplay: Any, path: str = "") -> list[str]:
    """Each place where the two descriptions differ, as ``path: heat … hotplay …``."""
    if isinstance(heat, dict) and isinstance(hotplay, dict):
        return [line for key in sorted(set(heat) | set(hotplay), key=str)
                for line in differences(heat.get(key), hotplay.get(key), f"{path}.{key}")]
    return [] if heat == hotplay else [f"{path.lstrip('.')}: Heat {heat!r}, hotplay {hotplay!r}"]


class HeatSide:
    """The template through the real Heat engine's API, as the openstack client sends it."""

    def __init__(self, client: Any, template: str) -> None:
        self.client, self.template = client, template
        self.name = f"h{uuid.uuid4().hex[:8]}"
        self.stack_id = ""

    def apply(self, **parameters: str) -> dict[str, Any]:
        fields = {"template": self.template, "parameters": parameters}
        if self.stack_id:
            self.client.update(self.name, self.stack_id, fields)
            action = "UPDATE"
        else:
            self.stack_id = self.client.create(self.name, fields)
            action = "CREATE"
        stack = self.client.wait(self.name, self.stack_id, action)
        assert stack["stack_status"] == f"{action}_COMPLETE", stack.get("stack_status_reason")
        return {o["output_key"]: o.get("output_value") for o in stack.get("outputs") or []}

    def delete(self) -> None:
        if self.stack_id:
            self.client.delete(self.name, self.stack_id)
            stack = self.client.wait(self.name, self.stack_id, "DELETE")
            assert stack["stack_status"] == "DELETE_COMPLETE", stack.get("stack_status_reason")
            self.stack_id = ""  # deleted: a second delete (the fixture's tidying) does nothing


class HotplaySide:
    """The template through hotplay.stacks.stack in a real ansible-playbook run."""

    def __init__(self, run_tasks: Any, env: dict[str, str], template: Path) -> None:
        self.run_tasks, self.env, self.template = run_tasks, env, template
        self.name = f"p{uuid.uuid4().hex[:8]}"
        self.runs = 0
        self.deleted = False

    def task(self, state: str, **parameters: str) -> dict[str, Any]:
        self.runs += 1
        arguments: dict[str, Any] = {"name": self.name, "state": state}
        if state == "present":
            arguments.update(template=str(self.template), parameters=parameters,
                             environment=["hotplay.stacks.openstack"])
        done = self.run_tasks([{"name": "apply", "hotplay.stacks.stack": arguments, "register": "applied"}],
                              name=f"{self.name}-{self.runs}", env=self.env)
        result = done.results["applied"]
        assert result and not result.get("failed"), result.get("msg") if result else done.stdout
        return dict(result)

    def apply(self, **parameters: str) -> dict[str, Any]:
        return dict(self.task("present", **parameters)["outputs"])

    def delete(self) -> None:
        if not self.deleted:
            self.task("absent")
            self.deleted = True  # a second delete (the fixture's tidying) does nothing


@pytest.fixture
def sides(tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str], heat_client: Any, conn: Any):
    template = tmp_path / "side_by_side.yaml"
    template.write_text(textwrap.dedent(TEMPLATE))
    heat = HeatSide(heat_client, template.read_text())  # as the openstack client: the text
    hotplay = HotplaySide(run_tasks, cloud_env, template)
    yield heat, hotplay
    for side in (heat, hotplay):
        try:
            side.delete()
        except AssertionError:
            pass  # the test itself says what failed; this only tidies the cloud


def compare(conn: Any, heat: HeatSide, heat_outputs: dict[str, Any], hotplay: HotplaySide,
            hotplay_outputs: dict[str, Any]) -> list[str]:
    described = []
    for side, outputs in ((heat, heat_outputs), (hotplay, hotplay_outputs)):
        labels = Labels(side.name)
        cloud = describe(conn, outputs["ids"], labels)
        shown = {key: labels.value(value) for key, value in outputs.items() if key != "ids"}
        described.append({"cloud": cloud, "outputs": shown,
                          "things named after the stack": [labels.name(n.split(" ", 1)[1]) for n in
                                                           left_behind(conn, side.name)]})
    return differences(*described)


def unknown(found: list[str]) -> list[str]:
    return [line for line in found if not line.startswith(tuple(KNOWN))]


@pytest.mark.slow
def test_heat_and_hotplay_make_the_same_things_on_the_same_cloud(sides, conn: Any) -> None:
    heat, hotplay = sides
    heat_outputs, hotplay_outputs = at_once(heat.apply, hotplay.apply)
    found = unknown(compare(conn, heat, heat_outputs, hotplay, hotplay_outputs))
    assert not found, "Heat and hotplay differ after the create:\n" + "\n".join(found)

    # In place on both sides: the same server, port and group, changed the same way.
    heat_updated, hotplay_updated = at_once(lambda: heat.apply(**UPDATE), lambda: hotplay.apply(**UPDATE))
    assert heat_updated["ids"] == heat_outputs["ids"]
    assert hotplay_updated["ids"] == hotplay_outputs["ids"]
    found = unknown(compare(conn, heat, heat_updated, hotplay, hotplay_updated))
    assert not found, "Heat and hotplay differ after the update:\n" + "\n".join(found)

    at_once(heat.delete, hotplay.delete)
    assert (left_behind(conn, heat.name), left_behind(conn, hotplay.name)) == ([], [])
