# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure parts of ``AWS::EC2::Instance`` (resources/openstack/ec2.py) against the
fake Nova, Neutron and Cinder of test_openstack_nova: Heat 27's schema and validation
words, the create request Heat's Instance sends (security groups, tags, hints, block
devices, the port made on ``SubnetId``), volumes attached after the server, the
attributes, and the replacement rules.  On a real cloud beside Heat:
tests/cloud/test_aws_instance_beside_heat.py."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from test_openstack_nova import FLAVOR_ID, IMAGE_ID, NET_ID, FakeRuntime, InterfacesCloud

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState, resource_class
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack import ec2
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.properties import validate_properties

SUBNET = "50000000-0000-0000-0000-000000000001"
GROUP = "60000000-0000-0000-0000-000000000001"
PORT = "30000000-0000-0000-0000-000000000001"
VOLUME = "70000000-0000-0000-0000-000000000001"


class AwsCloud(InterfacesCloud):
    """Besides Nova's and Neutron's answers: a security group ``web``, and Cinder,
    whose volumes are in use once attached."""

    def __init__(self) -> None:
        super().__init__()
        self.attached: set[str] = set()

    def _answer(self, service: str, method: str, path: str, params: Any) -> Any:
        if path == "/security-groups":
            return {"security_groups": [{"id": GROUP}] if dict(params).get("name") == "web" else []}
        if service == "block_storage" and path == "/":
            return {"versions": [{"version": "3.60"}]}
        if service == "block_storage" and path == "/volumes/detail":
            return {"volumes": [{"id": v, "status": "in-use"} for v in self.attached]}
        if method == "POST" and path.endswith("/os-volume_attachments"):
            volume = self.sent[-1][2]["volumeAttachment"]["volumeId"]
            self.attached.add(volume)
            return {"volumeAttachment": {"id": volume}}
        return super()._answer(service, method, path, params)


def instance_properties(**values: Any) -> dict[str, Any]:
    return validate_properties(ec2.Instance, {"ImageId": "cirros", "InstanceType": "m1.tiny", **values},
                               "resources.web.properties")


def created(cloud: AwsCloud, **values: Any) -> tuple[dict[str, Any], Any]:
    instance = ec2.Instance("web", FakeRuntime(cloud))
    outcome = instance.handle_create(instance_properties(**values))
    (request, _microversion), = cloud.creates
    return request, outcome


def test_the_type_is_heats_instance() -> None:
    cls = resource_class("AWS::EC2::Instance")
    assert cls is ec2.Instance
    assert {n for n, p in cls.properties_schema.items() if p.update_allowed} == {
        "InstanceType", "NetworkInterfaces", "SubnetId", "Tags"}
    assert {n for n, p in cls.properties_schema.items() if p.required} == {"ImageId", "InstanceType"}
    assert set(cls.attributes_schema) == {"AvailabilityZone", "PrivateDnsName", "PublicDnsName",
                                          "PrivateIp", "PublicIp"}


def test_the_create_request_is_heats() -> None:
    cloud = AwsCloud()
    request, outcome = created(
        cloud, KeyName="mine", SecurityGroups=["web"], Tags=[{"Key": "team", "Value": "web"}],
        NovaSchedulerHints=[{"Key": "group", "Value": "a"}, {"Key": "group", "Value": "b"},
                            {"Key": "near", "Value": "c"}],
        UserData="#!/bin/sh\necho hi\n",
        BlockDeviceMappings=[{"DeviceName": "vdb", "Ebs": {"SnapshotId": "snap-1", "VolumeSize": "2"}}])
    body = request["server"]
    assert (body["imageRef"], body["flavorRef"], body["key_name"]) == (IMAGE_ID, FLAVOR_ID, "mine")
    assert body["name"] == "st-web-abcdefghijkl" and outcome.physical_id == "s1"
    assert body["security_groups"] == [{"name": "web"}]
    assert body["metadata"] == {"team": "web"}
    # A hint given twice is a list, as novaclient's shell and Heat make it.
    assert request["os:scheduler_hints"] == {"group": ["a", "b"], "near": "c"}
    # Heat's default format: the user data runs once at first boot (a MIME part).
    assert "echo hi" in base64.b64decode(body["user_data"]).decode() and \
        "multipart" in base64.b64decode(body["user_data"]).decode()
    # snapshot-1:snap:2:True, as novaclient reads Heat's string.
    assert body["block_device_mapping"] == [{"device_name": "vdb", "snapshot_id": "snap-1",
                                             "volume_size": "2", "delete_on_termination": "True"}]


def test_a_subnet_gets_a_port_with_the_security_groups_deleted_with_the_server() -> None:
    cloud = AwsCloud()
    request, outcome = created(cloud, SubnetId=SUBNET, SecurityGroupIds=[GROUP])
    made = [call for call in cloud.sent if call[:2] == ("POST", "/ports")]
    assert made[0][2]["port"]["fixed_ips"] == [{"subnet_id": SUBNET}]
    assert made[0][2]["port"]["network_id"] == NET_ID and made[0][2]["port"]["security_groups"] == [GROUP]
    assert request["server"]["networks"] == [{"port": "made-1"}]
    assert outcome.data["internal_ports"] == ["made-1"]
    # Heat's abandon data names that port ``port_id``; adopted back, it is ours again.
    state = ResourceState("web", "AWS::EC2::Instance", "CREATE", physical_id="s1", data=dict(outcome.data))
    assert ec2.Instance.abandon_data(state)["port_id"] == "made-1"


def test_network_interfaces_are_sent_in_device_order() -> None:
    cloud = AwsCloud()
    first, second = PORT.replace("1", "8"), PORT.replace("1", "9")
    request, _outcome = created(cloud, NetworkInterfaces=[
        {"NetworkInterfaceId": second, "DeviceIndex": "1"}, {"NetworkInterfaceId": first, "DeviceIndex": "0"}])
    assert request["server"]["networks"] == [{"port": first}, {"port": second}]


def test_volumes_are_attached_once_the_server_is_active_and_waited_for() -> None:
    cloud = AwsCloud()
    created(cloud, Volumes=[{"VolumeId": VOLUME, "Device": "/dev/vdc"}])
    writes = cloud.writes()
    assert writes[0][:2] == ("POST", "/servers")
    assert writes[1] == ("POST", "/servers/s1/os-volume_attachments",
                         {"volumeAttachment": {"volumeId": VOLUME, "device": "/dev/vdc"}})
    assert ("GET", "/volumes/detail", None) in cloud.sent


@pytest.mark.parametrize("values, message", [
    ({"SecurityGroups": ["web"], "NetworkInterfaces": ["p1"]},
     "Cannot define the following properties at the same time: SecurityGroups/SecurityGroupIds, "
     "NetworkInterfaces."),
    ({"BlockDeviceMappings": [{"DeviceName": "vdb"}]},
     "Ebs is missing, this is required when specifying BlockDeviceMappings."),
    ({"BlockDeviceMappings": [{"DeviceName": "vdb", "Ebs": {"VolumeSize": "1"}}]},
     "SnapshotId is missing, this is required when specifying BlockDeviceMappings."),
    ({"Monitoring": True}, "Property error: resources.web.properties: Property Monitoring not implemented yet"),
    ({"BlockDeviceMappings": [{"DeviceName": "vdb", "Ebs": {"SnapshotId": "s", "Iops": 5}}]},
     "Property error: resources.web.properties.BlockDeviceMappings[0].Ebs: Property Iops not implemented yet"),
])
def test_an_instance_is_validated_as_heat_validates_it(values: dict[str, Any], message: str) -> None:
    with pytest.raises(StackValidationFailed, match=message.replace("[", r"\[").replace(".", r"\.")):
        ec2.Instance("web", FakeRuntime(AwsCloud())).validate(instance_properties(**values))


def test_only_heats_update_allowed_changes_stay_in_place() -> None:
    instance = ec2.Instance("web", FakeRuntime(AwsCloud()))
    old = instance_properties(Tags=[{"Key": "a", "Value": "1"}])
    for change, replaced in (({"Tags": []}, False), ({"InstanceType": "m1.small"}, False),
                             ({"SubnetId": SUBNET}, False), ({"ImageId": "fedora"}, True),
                             ({"KeyName": "other"}, True), ({"UserData": "x"}, True)):
        assert (instance.replacement_reason(old, {**old, **change}) is not None) is replaced, change


def test_the_addresses_are_the_first_of_the_last_network_or_heats_zero_address() -> None:
    cloud = AwsCloud()
    cloud.servers["s1"] = {"id": "s1", "OS-EXT-AZ:availability_zone": "nova", "addresses": {
        "a-net": [{"addr": "10.0.0.5"}], "b-net": [{"addr": "10.1.0.7"}, {"addr": "10.1.0.8"}]}}
    instance = ec2.Instance("web", FakeRuntime(cloud))
    state = ResourceState("web", "AWS::EC2::Instance", "CREATE", physical_id="s1")
    assert [instance.attribute(state, n) for n in ("PublicIp", "PrivateIp", "PublicDnsName",
                                                   "AvailabilityZone")] == ["10.1.0.7", "10.1.0.7", "10.1.0.7",
                                                                            "nova"]
    cloud.servers["s1"]["addresses"] = {}
    assert instance.attribute(state, "PrivateIp") == "0.0.0.0"


def test_tags_change_with_one_metadata_call() -> None:
    cloud = AwsCloud()
    cloud.servers["s1"] = {"id": "s1", "status": "ACTIVE", "metadata": {"a": "1"}}
    instance = ec2.Instance("web", FakeRuntime(cloud))
    old = instance_properties(Tags=[{"Key": "a", "Value": "1"}])
    current = ResourceState("web", "AWS::EC2::Instance", "CREATE", physical_id="s1", properties=old)
    instance.handle_update(current, {**old, "Tags": [{"Key": "b", "Value": "2"}]})
    assert cloud.writes() == [("PUT", "/servers/s1/metadata", {"metadata": {"b": "2"}})]


class GroupCloud(AwsCloud):
    """Neutron's security groups: one made with Neutron's two default egress rules."""

    def __init__(self) -> None:
        super().__init__()
        self.rules = [{"id": "e4", "direction": "egress", "ethertype": "IPv4", "protocol": None,
                       "port_range_min": None, "port_range_max": None, "remote_ip_prefix": None,
                       "remote_group_id": None},
                      {"id": "e6", "direction": "egress", "ethertype": "IPv6", "protocol": None,
                       "port_range_min": None, "port_range_max": None, "remote_ip_prefix": None,
                       "remote_group_id": None}]

    def _answer(self, service: str, method: str, path: str, params: Any) -> Any:
        group = {"id": GROUP, "security_group_rules": self.rules}
        if (method, path) == ("POST", "/security-groups"):
            return {"security_group": group}
        if (method, path) == ("GET", f"/security-groups/{GROUP}"):
            return {"security_group": group}
        if method == "DELETE" and path.startswith("/security-group-rules/"):
            self.rules = [r for r in self.rules if r["id"] != path.rsplit("/", 1)[1]]
            return None
        if (method, path) == ("POST", "/security-group-rules"):
            return {"security_group_rule": {"id": "new"}}
        return super()._answer(service, method, path, params)


def group_properties(**values: Any) -> dict[str, Any]:
    return validate_properties(ec2.AWSSecurityGroup, {"GroupDescription": "web", **values},
                               "resources.sg.properties")


def test_an_aws_security_group_makes_heats_rules() -> None:
    cloud = GroupCloud()
    runtime = FakeRuntime(cloud)
    outcome = ec2.AWSSecurityGroup("sg", runtime).handle_create(group_properties(
        SecurityGroupIngress=[{"IpProtocol": "tcp", "FromPort": "22", "ToPort": "22", "CidrIp": "0.0.0.0/0"},
                              {"IpProtocol": "icmp", "FromPort": "-1", "ToPort": "-1", "CidrIp": "0.0.0.0/0"},
                              {"IpProtocol": "tcp", "CidrIp": "10.0.0.0/8"}],
        SecurityGroupEgress=[{"IpProtocol": "tcp", "FromPort": "80", "ToPort": "80", "CidrIp": "0.0.0.0/0"}]))
    assert outcome.physical_id == GROUP and runtime.claimed == [GROUP]
    writes = cloud.writes()
    assert writes[0] == ("POST", "/security-groups", {"security_group": {
        "name": "st-sg-abcdefghijkl", "description": "web"}})
    # Egress given: Neutron's default egress rules go first, as in Heat.
    assert writes[1:3] == [("DELETE", "/security-group-rules/e4", None), ("DELETE", "/security-group-rules/e6", None)]
    rules = [call[2]["security_group_rule"] for call in writes[3:]]
    assert [(r["direction"], r["protocol"], r["port_range_min"], r["port_range_max"], r["remote_ip_prefix"])
            for r in rules] == [("ingress", "tcp", 22, 22, "0.0.0.0/0"),
                                ("ingress", "icmp", None, None, "0.0.0.0/0"),  # negative ports: none
                                ("ingress", "tcp", None, None, None),  # no ports: no CIDR, as Heat
                                ("egress", "tcp", 80, 80, "0.0.0.0/0")]


def test_an_update_of_the_rules_deletes_what_the_template_does_not_list_defaults_included() -> None:
    cloud = GroupCloud()
    old = group_properties()
    current = ResourceState("sg", "AWS::EC2::SecurityGroup", "CREATE", physical_id=GROUP, properties=old)
    new = group_properties(SecurityGroupIngress=[{"IpProtocol": "tcp", "FromPort": "22", "ToPort": "22",
                                                  "CidrIp": "0.0.0.0/0"}])
    ec2.AWSSecurityGroup("sg", FakeRuntime(cloud)).handle_update(current, new)
    writes = cloud.writes()
    # Heat's AWS group compares Neutron's rules with the template's: the default
    # egress rules are not listed there, so an update deletes them.
    assert writes[:2] == [("DELETE", "/security-group-rules/e4", None), ("DELETE", "/security-group-rules/e6", None)]
    assert writes[2][2]["security_group_rule"]["port_range_min"] == 22 and len(writes) == 3


def test_aws_volumes_and_attachments_refuse_any_change_in_heats_words() -> None:
    volume = ec2.AWSVolume("vol", FakeRuntime(AwsCloud()))
    old = validate_properties(ec2.AWSVolume, {"AvailabilityZone": "nova", "Size": 1}, "p")
    current = ResourceState("vol", "AWS::EC2::Volume", "CREATE", physical_id=VOLUME, properties=old)
    assert volume.replacement_reason(old, {**old, "Size": 2}) is None  # not replaced: refused
    with pytest.raises(Exception, match=r"Update to properties Size of vol \(AWS::EC2::Volume\) is not supported\."):
        volume.handle_update(current, {**old, "Size": 2})
    assert ec2.AWSVolume.as_cinder({**old, "Tags": [{"Key": "a", "Value": "b"}]}) == {
        "size": 1, "availability_zone": "nova", "backup_id": None, "metadata": {"a": "b"}}
    with pytest.raises(StackValidationFailed, match=r"/dev/vd\[b-z\]"):
        validate_properties(ec2.AWSVolumeAttachment, {"InstanceId": "s1", "VolumeId": VOLUME, "Device": "/dev/sdb"},
                            "resources.attach.properties")


class AddressCloud(AwsCloud):
    """Neutron's one external network and floating IPs; Nova's interfaces of s1."""

    def _answer(self, service: str, method: str, path: str, params: Any) -> Any:
        if (method, path) == ("GET", "/networks"):
            return {"networks": [{"id": "public-net"}]}
        if (method, path) == ("POST", "/floatingips"):
            return {"floatingip": {"id": "fip-1", "floating_ip_address": "172.24.4.9"}}
        if (method, path) == ("GET", "/floatingips"):
            return {"floatingips": [{"id": "fip-1"}]}
        if (method, path) == ("GET", "/servers/s1/os-interface"):
            return {"interfaceAttachments": [{"port_id": "port-1", "fixed_ips": [
                {"ip_address": "fd00::5"}, {"ip_address": "10.0.0.5"}]}]}
        if method == "PUT" and path.startswith("/floatingips/"):
            return {"floatingip": {}}
        return super()._answer(service, method, path, params)


def test_an_eip_is_a_floating_ip_of_the_external_network_referenced_by_its_address() -> None:
    cloud = AddressCloud()
    eip = ec2.ElasticIp("ip", FakeRuntime(cloud))
    outcome = eip.handle_create(validate_properties(ec2.ElasticIp, {"Domain": "vpc", "InstanceId": "s1"}, "p"))
    assert cloud.writes() == [
        ("POST", "/floatingips", {"floatingip": {"floating_network_id": "public-net"}}),
        # Heat's associate_floatingip: the first interface, its first IPv4 address.
        ("PUT", "/floatingips/fip-1", {"floatingip": {"port_id": "port-1", "fixed_ip_address": "10.0.0.5"}})]
    state = ResourceState("ip", "AWS::EC2::EIP", "CREATE", physical_id=outcome.physical_id, data=dict(outcome.data))
    assert eip.reference_id(state) == "172.24.4.9" and eip.attribute(state, "AllocationId") == "fip-1"


def test_an_eip_association_puts_the_address_on_the_instance() -> None:
    cloud = AddressCloud()
    association = ec2.ElasticIpAssociation("on", FakeRuntime(cloud))
    properties = validate_properties(ec2.ElasticIpAssociation, {"InstanceId": "s1", "EIP": "172.24.4.9"}, "p")
    association.validate(properties)
    assert association.handle_create(properties).physical_id == "172.24.4.9"
    assert cloud.writes() == [("PUT", "/floatingips/fip-1", {"floatingip": {
        "port_id": "port-1", "fixed_ip_address": "10.0.0.5"}})]


@pytest.mark.parametrize("values, message", [
    ({"InstanceId": "s1"}, "Either 'EIP' or 'AllocationId' must be provided."),
    ({"EIP": "172.24.4.9"}, "Must specify 'InstanceId' if you specify 'EIP'."),
    ({"AllocationId": "fip-1"}, "At least one of the following properties must be specified: InstanceId, "
                                "NetworkInterfaceId."),
])
def test_an_eip_association_is_validated_in_heats_words(values: dict[str, Any], message: str) -> None:
    association = ec2.ElasticIpAssociation("on", FakeRuntime(AddressCloud()))
    with pytest.raises(StackValidationFailed, match=message):
        association.validate(validate_properties(ec2.ElasticIpAssociation, values, "p"))
