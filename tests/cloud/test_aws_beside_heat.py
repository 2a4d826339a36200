# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's AWS types on Nova beside the real Heat engine on the same cloud, through Heat
and through hotplay with no environment: an ``AWS::EC2::Instance`` on a subnet with an
``AWS::EC2::SecurityGroup``, tags, user data, a volume and an ``AWS::EC2::Volume``
attached by an ``AWS::EC2::VolumeAttachment``, and an ``AWS::AutoScaling::AutoScalingGroup``
of a launch configuration with a rolling update policy.  What each made (read back from
the cloud: servers, their ports and security groups, metadata, volumes) and the
outputs must be the same after the create and after an update that changes the tags,
the group's size and the launch configuration (its members replaced one batch at a
time), with no list of known differences; nothing is left after the delete.  The
helpers are test_native_side_by_side's and test_side_by_side_heat's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from test_native_side_by_side import both_sides
from test_side_by_side_heat import Labels, at_once, differences, left_behind

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TEMPLATE = """\
    heat_template_version: 2015-04-30
    parameters:
      team: {type: string, default: web}
      size: {type: number, default: 2}
      boot: {type: string, default: "#!/bin/sh\\necho one\\n"}
      port: {type: string, default: "22"}
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.11.0.0/24}
      sg:
        type: AWS::EC2::SecurityGroup
        properties:
          GroupDescription: ssh in
          SecurityGroupIngress:
            - {IpProtocol: tcp, FromPort: {get_param: port}, ToPort: {get_param: port}, CidrIp: 0.0.0.0/0}
            - {IpProtocol: icmp, FromPort: "-1", ToPort: "-1", CidrIp: 0.0.0.0/0}
      logs:
        type: AWS::EC2::Volume
        properties: {AvailabilityZone: nova, Size: 1, Tags: [{Key: role, Value: logs}]}
      logs_attached:
        type: AWS::EC2::VolumeAttachment
        properties: {InstanceId: {get_resource: server}, VolumeId: {get_resource: logs}, Device: /dev/vdc}
      data:
        type: OS::Cinder::Volume
        properties: {size: 1}
      server:
        type: AWS::EC2::Instance
        properties:
          ImageId: hotplay-tiny
          InstanceType: m1.tiny
          SubnetId: {get_resource: subnet}
          SecurityGroupIds: [{get_resource: sg}]
          Tags: [{Key: team, Value: {get_param: team}}]
          UserData: "#!/bin/sh\\necho hello\\n"
          Volumes: [{VolumeId: {get_resource: data}, Device: /dev/vdb}]
      router:
        type: OS::Neutron::Router
        properties: {external_gateway_info: {network: public}}
      router_interface:
        type: OS::Neutron::RouterInterface
        properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
      ip:
        type: AWS::EC2::EIP
        depends_on: router_interface
        properties: {Domain: vpc}
      ip_on_server:
        type: AWS::EC2::EIPAssociation
        properties: {InstanceId: {get_resource: server}, EIP: {get_resource: ip}}
      config:
        type: AWS::AutoScaling::LaunchConfiguration
        properties:
          ImageId: hotplay-tiny
          InstanceType: m1.tiny
          SecurityGroups: [{get_resource: sg}]
          UserData: {get_param: boot}
      group:
        type: AWS::AutoScaling::AutoScalingGroup
        properties:
          AvailabilityZones: [nova]
          LaunchConfigurationName: {get_resource: config}
          MinSize: 1
          MaxSize: 3
          DesiredCapacity: {get_param: size}
          VPCZoneIdentifier: [{get_resource: subnet}]
          Tags: [{Key: team, Value: {get_param: team}}]
        update_policy:
          AutoScalingRollingUpdate: {MinInstancesInService: 1, MaxBatchSize: 1, PauseTime: PT0S}
    outputs:
      ids:
        value: {net: {get_resource: net}, subnet: {get_resource: subnet}, sg: {get_resource: sg},
                data: {get_resource: data}, server: {get_resource: server}, logs: {get_resource: logs}}
      addresses:
        value: [{get_attr: [server, PublicIp]}, {get_attr: [server, PrivateIp]},
                {get_attr: [server, PublicDnsName]}, {get_attr: [server, PrivateDnsName]}]
      zone: {value: {get_attr: [server, AvailabilityZone]}}
      instances: {value: {get_attr: [group, InstanceList]}}
      group_ref: {value: {get_resource: group}}
      ip: {value: [{get_resource: ip}, {get_attr: [ip, AllocationId]}]}
      config_ref: {value: {get_resource: config}}
"""

UPDATE = {"team": "db", "size": "3", "boot": "#!/bin/sh\necho two\n", "port": "2222"}


@pytest.fixture
def aws_sides(tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str], heat_client: Any):
    yield from both_sides(tmp_path / "aws.yaml", TEMPLATE, run_tasks, cloud_env, heat_client)


def server(conn: Any, ident: str, labels: Labels) -> dict[str, Any]:
    """One server as the cloud has it, ids as labels."""
    found = conn.compute.get_server(ident)
    labels.known(found.id, found.name)
    ports = list(conn.network.ports(device_id=found.id))
    return {"status": found.status, "flavor": found.flavor.get("original_name"),
            "image": conn.image.get_image(found.image.id).name, "metadata": found.metadata,
            "key_name": found.key_name,
            "security_groups": sorted(labels.value(g) for p in ports for g in p.security_group_ids),
            "ports": sorted((labels.value(p.network_id), len(p.fixed_ips), p.name == "") for p in ports),
            "volumes": sorted(str(labels.value(v["id"])) for v in found.attached_volumes)}


def members(conn: Any, subnet: str, instances: str | None, labels: Labels) -> list[dict[str, Any]]:
    """The group's servers, oldest first, found by the addresses of its InstanceList
    on the stack's subnet (Heat's group has no attribute with their ids)."""
    found = []
    for address in (instances or "").split(","):
        ports = [p for p in conn.network.ports(fixed_ips=f"ip_address={address}")
                 if any(ip["subnet_id"] == subnet for ip in p.fixed_ips)] if address else []
        found.extend(server(conn, port.device_id, labels) for port in ports)
    return found


def described(conn: Any, side: Any, outputs: dict[str, Any]) -> dict[str, Any]:
    labels = Labels(side.name)
    ids = outputs["ids"]
    for kind, getter in (("net", conn.network.get_network), ("subnet", conn.network.get_subnet),
                         ("sg", conn.network.get_security_group), ("data", conn.block_storage.get_volume),
                         ("logs", conn.block_storage.get_volume)):
        thing = getter(ids[kind])
        labels.known(thing.id, thing.name)
    group = members(conn, ids["subnet"], outputs["instances"], labels)
    logs = conn.block_storage.get_volume(ids["logs"])
    rules = conn.network.get_security_group(ids["sg"]).security_group_rules
    # The addresses differ between any two servers: that the four are one, and its count.
    return {"server": server(conn, ids["server"], labels), "members": group,
            "logs": {"size": logs.size, "status": logs.status, "metadata": logs.metadata,
                     "availability_zone": logs.availability_zone, "name": labels.name(logs.name),
                     "attachments": [(labels.value(a["server_id"]), a["device"]) for a in logs.attachments]},
            "ip": floating_ip(conn, outputs["ip"], labels),
            "rules": sorted((r["direction"], r["ethertype"], str(r["protocol"]), str(r["port_range_min"]),
                             str(r["port_range_max"]), str(r["remote_ip_prefix"])) for r in rules),
            "outputs": {"zone": outputs["zone"], "addresses": len(set(outputs["addresses"])),
                        "group_ref": shape(outputs["group_ref"]), "config_ref": labels.name(outputs["config_ref"]),
                        "instances": len(str(outputs["instances"] or "").split(","))}}


def floating_ip(conn: Any, output: list[str], labels: Labels) -> dict[str, Any]:
    """The EIP: its reference is its address, its AllocationId the floating IP's id,
    and where the association put it."""
    address, allocation = output
    found = conn.network.get_ip(allocation)
    port = conn.network.get_port(found.port_id) if found.port_id else None
    return {"reference_is_address": address == found.floating_ip_address, "status": found.status,
            "network": labels.name(conn.network.get_network(found.floating_network_id).name),
            "on": labels.value(port.device_id) if port else None}


def shape(value: Any) -> str:
    """What a reference is: a UUID (a nested stack's id) or the text it is."""
    return "UUID" if UUID.fullmatch(str(value)) else str(value)


def ports_named(found: dict[str, Any]) -> dict[str, Any]:
    """Heat gives the port it makes on SubnetId no name; hotplay names it (to find it
    after a killed run): only whether it has one differs, and it is left out here."""
    for server_found in [found["server"], *found["members"]]:
        server_found["ports"] = [port[:2] for port in server_found["ports"]]
    return found


def test_aws_servers_and_groups_are_heats(aws_sides, conn: Any) -> None:
    heat, hotplay = aws_sides

    def compare(heat_outputs: dict[str, Any], hotplay_outputs: dict[str, Any]) -> list[str]:
        return differences(ports_named(described(conn, heat, heat_outputs)),
                           ports_named(described(conn, hotplay, hotplay_outputs)))

    heat_outputs, hotplay_outputs = at_once(heat.apply, hotplay.apply)
    found = compare(heat_outputs, hotplay_outputs)
    assert not found, "Heat and hotplay differ after the create:\n" + "\n".join(found)
    made = described(conn, hotplay, hotplay_outputs)
    assert len(made["members"]) == 2 and made["ip"]["on"] == "STACK-server-*" and made["ip"]["reference_is_address"]

    heat_updated, hotplay_updated = at_once(lambda: heat.apply(**UPDATE), lambda: hotplay.apply(**UPDATE))
    # The server is updated in place on both sides; the group's members are replaced.
    assert (heat_updated["ids"], hotplay_updated["ids"]) == (heat_outputs["ids"], hotplay_outputs["ids"])
    found = compare(heat_updated, hotplay_updated)
    assert not found, "Heat and hotplay differ after the update:\n" + "\n".join(found)
    assert len(described(conn, hotplay, hotplay_updated)["members"]) == 3

    at_once(heat.delete, hotplay.delete)
    assert (left_behind(conn, heat.name), left_behind(conn, hotplay.name)) == ([], [])
