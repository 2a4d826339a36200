# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's AWS types of EC2 on Nova, Neutron and Cinder, as Heat 27 makes them
(``heat/engine/resources/aws/ec2/``): ``AWS::EC2::SecurityGroup`` (a Neutron group
with Heat's AWS rules), ``AWS::EC2::Volume`` and ``AWS::EC2::VolumeAttachment`` (on
the Cinder types, every property immutable: an update that changes one fails, as
Heat's), ``AWS::EC2::EIP`` and ``AWS::EC2::EIPAssociation`` (a floating IP of the
external network, referenced by its address, and where it points), and
``AWS::EC2::Instance``.

``AWS::EC2::Instance``: a Nova server with Heat's AWS properties, as Heat 27's
``heat/engine/resources/aws/ec2/instance.py`` makes it, on the machinery of
``OS::Nova::Server`` (nova.py): the same create request, shared polls, deletes
and kill-safe records.  The members of Heat's InstanceGroup and AWS
AutoScalingGroup (``OS::Heat::ScaledResource``) are this type: their nested
stacks' environment maps them to it, as Heat's does.

- **Create**: the server (``ImageId``, ``InstanceType``, ``KeyName``,
  ``SecurityGroups`` and ``SecurityGroupIds`` by name, ``Tags`` as its metadata,
  ``NovaSchedulerHints`` with repeated keys as lists, ``UserData`` with Heat's
  default format, ``BlockDeviceMappings`` as Heat's ``snapshot:snap:size:delete``
  strings); its network: the ports of ``NetworkInterfaces`` in ``DeviceIndex``
  order, or a port made on ``SubnetId`` with the security groups (deleted with the
  server), or none; then each of ``Volumes`` attached and waited for.
- **Update in place**: ``Tags`` (the server's metadata), ``InstanceType`` (resize
  and confirm), ``NetworkInterfaces`` (ports detached and attached) and
  ``SubnetId`` (every interface detached, a port made on the new subnet); any
  other change replaces the server.
- **Attributes**: ``AvailabilityZone`` (Nova's), ``PrivateIp``, ``PublicIp``,
  ``PrivateDnsName`` and ``PublicDnsName`` (each the first address of the last
  network by name, ``0.0.0.0`` when it has none, as Heat).

Where this differs from Heat: the port made on ``SubnetId`` is named
``<resource>-port-0`` (Heat gives it no name): a run killed while Neutron makes it
finds it by that name, so no port is left untracked.  A replacement gives the
``NetworkInterfaces`` ports to the new server (Heat's Instance keeps them on the
old one, and its replacement fails with the port in use).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NoReturn

from ..base import AttributeSchema, Outcome, PropertySchema, Resource, ResourceState, register
from ..ec2_schema import (BLOCK_DEVICE_MAPPINGS, KEY_VALUE, NOVA_SCHEDULER_HINTS, block_device_mapping_error,
                          not_implemented_error)
from ...errors import StackValidationFailed
from ..properties import allowed_pattern, allowed_values, value_range
from . import cinder, neutron, nova
from .base import UNANSWERED_NAME, OpenStackResource
from .nova import Server, first_address, serialized_metadata
from .session import CloudFailure

# Data key Heat keeps the port it made on SubnetId under (here: ``internal_ports``).
HEAT_PORT_DATA = "port_id"
NO_ADDRESS = "0.0.0.0"


def scheduler_hints(hints: Sequence[Mapping[str, Any]] | None) -> dict[str, Any] | None:
    """Heat's ``NovaSchedulerHints``: a key given twice becomes a list of its values."""
    if not hints:
        return None
    merged: dict[str, Any] = {}
    for hint in hints:
        key, value = hint["Key"], hint["Value"]
        if key not in merged:
            merged[key] = value
        elif isinstance(merged[key], list):
            merged[key].append(value)
        else:
            merged[key] = [merged[key], value]
    return merged


def tags_metadata(tags: Sequence[Mapping[str, Any]] | None) -> dict[str, Any] | None:
    """Heat's ``_get_nova_metadata``: the ``Tags`` as the server's metadata."""
    if tags is None:
        return None
    return {tag["Key"]: tag["Value"] for tag in tags}


def block_devices(mappings: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Heat's ``_build_block_device_mapping`` (``<snapshot>:snap:<size>:<delete>`` per
    device), as the server's ``block_device_mapping`` entries that send it."""
    entries = []
    for mapping in mappings or []:
        ebs = mapping.get("Ebs")
        if ebs:
            entries.append({"device_name": mapping["DeviceName"], "snapshot_id": ebs.get("SnapshotId"),
                            "volume_size": ebs.get("VolumeSize") or None,
                            "delete_on_termination": ebs.get("DeleteOnTermination")})
    return entries


def interface_ports(interfaces: Sequence[Any] | None) -> list[str]:
    """The ports of ``NetworkInterfaces`` (ids, or ``NetworkInterfaceId`` with its
    ``DeviceIndex``) in device order, as Heat's ``_build_nics``."""
    entries: list[Any] = []
    for entry in interfaces or []:
        if isinstance(entry, str):
            entry = {"NetworkInterfaceId": entry, "DeviceIndex": len(entries)}
        entries.append(entry)
    return [str(entry["NetworkInterfaceId"]) for entry in sorted(entries, key=lambda e: int(e["DeviceIndex"]))]


def security_groups(properties: Mapping[str, Any]) -> list[str]:
    """``SecurityGroups`` then ``SecurityGroupIds`` (Heat's ``_get_security_groups``)."""
    return [*(properties.get("SecurityGroups") or []), *(properties.get("SecurityGroupIds") or [])]


def networks_of_instance(properties: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The server's ``networks`` for an instance's properties: its ports, or a port
    made on its subnet (NetworkInterfaces win, as in Heat), or none."""
    if properties.get("NetworkInterfaces"):
        return [{"port": port} for port in interface_ports(properties["NetworkInterfaces"])]
    if properties.get("SubnetId"):
        return [{"subnet": properties["SubnetId"]}]
    return []


def server_properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The ``OS::Nova::Server`` properties that make the server Heat's Instance makes."""
    return {
        "image": properties["ImageId"], "flavor": properties["InstanceType"],
        "key_name": properties.get("KeyName"), "availability_zone": properties.get("AvailabilityZone"),
        "security_groups": security_groups(properties),
        "user_data": properties.get("UserData") or "", "user_data_format": "HEAT_CFNTOOLS",
        "metadata": tags_metadata(properties.get("Tags")),
        "scheduler_hints": scheduler_hints(properties.get("NovaSchedulerHints")),
        "networks": networks_of_instance(properties),
        "block_device_mapping": block_devices(properties.get("BlockDeviceMappings")),
    }


@register
class Instance(Server):
    """``AWS::EC2::Instance``: a Nova server with Heat's AWS properties."""

    type_name = "AWS::EC2::Instance"
    properties_schema = {
        "ImageId": PropertySchema("string", "Glance image ID or name.", required=True),
        "InstanceType": PropertySchema("string", "Nova instance type (flavor).", required=True,
                                       update_allowed=True),
        "KeyName": PropertySchema("string", "Optional Nova keypair name."),
        "AvailabilityZone": PropertySchema("string", "Availability zone to launch the instance in."),
        "DisableApiTermination": PropertySchema("string", "Not Implemented."),
        "KernelId": PropertySchema("string", "Not Implemented."),
        "Monitoring": PropertySchema("boolean", "Not Implemented."),
        "PlacementGroupName": PropertySchema("string", "Not Implemented."),
        "PrivateIpAddress": PropertySchema("string", "Not Implemented."),
        "RamDiskId": PropertySchema("string", "Not Implemented."),
        "SecurityGroups": PropertySchema("list", "Security group names to assign."),
        "SecurityGroupIds": PropertySchema("list", "Security group IDs to assign."),
        "NetworkInterfaces": PropertySchema("list", "Network interfaces to associate with instance.",
                                            update_allowed=True),
        "SourceDestCheck": PropertySchema("boolean", "Not Implemented."),
        "SubnetId": PropertySchema("string", "Subnet ID to launch instance in.", update_allowed=True),
        "Tags": PropertySchema("list", "Tags to attach to instance.", update_allowed=True, schema=KEY_VALUE),
        "NovaSchedulerHints": NOVA_SCHEDULER_HINTS,
        "Tenancy": PropertySchema("string", "Not Implemented.",
                                  constraints=(allowed_values("dedicated", "default"),)),
        "UserData": PropertySchema("string", "User data to pass to instance."),
        "Volumes": PropertySchema("list", "Volumes to attach to instance.", default=[], schema=PropertySchema(
            "map", schema={
                "Device": PropertySchema("string", "The device where the volume is exposed on the instance.",
                                         required=True),
                "VolumeId": PropertySchema("string", "The ID of the volume to be attached.", required=True),
            })),
        "BlockDeviceMappings": BLOCK_DEVICE_MAPPINGS,
    }
    attributes_schema = {
        "AvailabilityZone": AttributeSchema("The Availability Zone where the specified instance is launched.",
                                            "string"),
        "PrivateDnsName": AttributeSchema("Private DNS name of the specified instance.", "string"),
        "PublicDnsName": AttributeSchema("Public DNS name of the specified instance.", "string"),
        "PrivateIp": AttributeSchema("Private IP address of the specified instance.", "string"),
        "PublicIp": AttributeSchema("Public IP address of the specified instance.", "string"),
    }
    custom_constraints = {"ImageId": "glance.image", "InstanceType": "nova.flavor",
                          "KeyName": "nova.keypair", "Volumes.VolumeId": "cinder.volume",
                          "SubnetId": "neutron.subnet"}
    port_list_data = frozenset()

    # -- validation ---------------------------------------------------------------------------------
    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's ``Instance.validate``, in its order and words."""
        path = f"resources.{self.name}"
        unimplemented = not_implemented_error(properties, f"{path}.properties")
        if unimplemented is not None:
            raise unimplemented
        if security_groups(properties) and properties.get("NetworkInterfaces"):
            raise self.refuse("Cannot define the following properties at the same time: "
                              "SecurityGroups/SecurityGroupIds, NetworkInterfaces.", path)
        problem = block_device_mapping_error(properties.get("BlockDeviceMappings"))
        if problem:
            raise self.refuse(problem, path)

    def validate_with_cloud(self, properties: Mapping[str, Any], path: str) -> None:
        for name, constraint in self.custom_constraints.items():
            if constraint.startswith("cinder."):
                list_name, key = name.split(".")
                for index, item in enumerate(properties.get(list_name) or []):
                    cinder.check_cinder_constraint(self.cloud, constraint, item.get(key),
                                                   f"{path}.{list_name}[{index}].{key}")
        super().validate_with_cloud({k: v for k, v in properties.items() if k != "Volumes"}, path)

    def secret_paths(self, properties: Mapping[str, Any]) -> list[tuple[str, ...]]:
        return []

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        return Resource.replacement_reason(self, old, new)

    # -- create ------------------------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        made = super().handle_create(self._as_server(properties))
        volumes = [(str(v["VolumeId"]), str(v["Device"])) for v in properties.get("Volumes") or []]
        for volume, device in volumes:
            cinder.attach(self.cloud, made.physical_id, volume, device)
        for volume, _device in volumes:
            cinder.wait_attached(self.cloud, volume, self.runtime.sleep)
        return made

    def _as_server(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return server_properties(properties)

    # -- update ------------------------------------------------------------------------------------
    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Heat's order: the Tags, the flavor, then the interfaces."""
        current = self._without_creation_notes(current)
        ident = current.physical_id
        old, new = current.properties, properties
        if self._show(ident) is None:
            raise self.fail(f"The Instance ({self.name}) could not be found.", "EntityNotFound")
        if old.get("Tags") != new.get("Tags"):
            self._replace_metadata(ident, serialized_metadata(tags_metadata(new.get("Tags"))))
        if old.get("InstanceType") != new.get("InstanceType"):
            self._resize(ident, str(new["InstanceType"]))
        internal = list(current.data.get("internal_ports") or [])
        if old.get("NetworkInterfaces") != new.get("NetworkInterfaces") or old.get("SubnetId") != new.get("SubnetId"):
            internal = self._update_interfaces(ident, old, new, internal)
        return Outcome(ident, {**current.data, "internal_ports": internal})

    def _update_interfaces(self, ident: str, old: Mapping[str, Any], new: Mapping[str, Any],
                           internal: list[str]) -> list[str]:
        """Heat's ``_update_network_interfaces``: with ports on both sides, those that
        go are detached and those that come attached; otherwise every interface is
        detached, the port made on the old subnet deleted, and the new ports (or one
        on the new subnet, or one Nova chooses) attached.  The ports made on the way."""
        old_ports, new_ports = interface_ports(old.get("NetworkInterfaces")), interface_ports(
            new.get("NetworkInterfaces"))
        if old_ports and new_ports:
            for port in [p for p in old_ports if p not in new_ports]:
                self._detach(ident, port)
            for port in [p for p in new_ports if p not in old_ports]:
                self._attach(ident, port)
            return internal
        if old_ports and "NetworkInterfaces" not in self._changed(old, new):
            return internal  # Heat: the interfaces stay as they were created
        listed = self._nova("GET", f"/servers/{ident}/os-interface")["interfaceAttachments"]
        for interface in listed:
            self._detach(ident, str(interface["port_id"]))
        self._delete_ports(internal)
        made: list[str] = []
        if new_ports:
            for port in new_ports:
                self._attach(ident, port)
        elif new.get("SubnetId"):
            port = self._internal_port({"subnet": new["SubnetId"]}, 0, security_groups(new))
            made.append(port)
            self.runtime.note_data(self.name, "internal_ports", list(made))
            self._attach(ident, port)
        else:
            self._nova("POST", f"/servers/{ident}/os-interface", {"interfaceAttachment": {}})
        return made

    @staticmethod
    def _changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> set[str]:
        return {key for key in set(old) | set(new) if old.get(key) != new.get(key)}

    def _premade_ports(self, properties: Mapping[str, Any]) -> list[str]:
        return interface_ports(properties.get("NetworkInterfaces"))

    # -- adoption: Heat's data names the port it made ``port_id`` --------------------------------
    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        outcome = super().handle_adopt(properties, adopted)
        data = dict(outcome.data)
        port = data.pop(HEAT_PORT_DATA, None)
        if port:
            data["internal_ports"] = [str(port)]
        return Outcome(outcome.physical_id, data)

    @classmethod
    def abandon_data(cls, state: ResourceState) -> dict[str, Any]:
        data = {k: v for k, v in Resource.abandon_data(state).items() if k != "internal_ports"}
        ports = list(state.data.get("internal_ports") or [])
        if ports:
            data[HEAT_PORT_DATA] = ports[0]
        return data

    # -- reading ------------------------------------------------------------------------------------
    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's ``_resolve_attribute``: read live; text, or null."""
        if not state.physical_id:
            return None
        live = self._show(state.physical_id)
        if name == "show":
            return live
        if name == "AvailabilityZone":
            value = (live or {}).get("OS-EXT-AZ:availability_zone")
        else:
            value = (first_address(live) if live else "") or NO_ADDRESS
        return str(value) if value else None

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        if not state.physical_id:
            return {"drifted": None, "msg": "nothing was created yet"}
        live = self._show(state.physical_id)
        if live is None:
            return {"drifted": True, "changed_keys": [], "diff": {},
                    "msg": f"the server {state.physical_id} is gone"}
        wanted = serialized_metadata(tags_metadata(state.properties.get("Tags")))
        drifted = wanted != (live.get("metadata") or {})
        return {"drifted": drifted, "changed_keys": ["Tags"] if drifted else [],
                "diff": {"before": {"Tags": wanted}, "after": {"Tags": live.get("metadata")}} if drifted else {}}


# -- AWS::EC2::SecurityGroup ----------------------------------------------------------------

_AWS_RULE = PropertySchema("map", schema={
    "CidrIp": PropertySchema("string"),
    "FromPort": PropertySchema("string"),
    "ToPort": PropertySchema("string"),
    "IpProtocol": PropertySchema("string"),
    "SourceSecurityGroupId": PropertySchema("string"),
    "SourceSecurityGroupName": PropertySchema("string"),
    "SourceSecurityGroupOwnerId": PropertySchema("string", "Not Implemented."),
})
_DIRECTIONS = (("ingress", "SecurityGroupIngress"), ("egress", "SecurityGroupEgress"))


def _port(value: Any) -> int | None:
    """Neutron takes positive ports only: Heat sends a negative one as none."""
    if value is None:
        return None
    number = int(value)
    return number if number >= 0 else None


def wanted_rules(properties: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Heat's ``_prop_rules_to_common`` of both lists, each rule with its direction."""
    rules = []
    for direction, key in _DIRECTIONS:
        for given in properties.get(key) or []:
            ports = (_port(given.get("FromPort")), _port(given.get("ToPort")))
            open_range = given.get("FromPort") is None and given.get("ToPort") is None
            rules.append({
                "CidrIp": None if open_range else given.get("CidrIp"),
                "FromPort": ports[0], "ToPort": ports[1], "IpProtocol": given.get("IpProtocol"),
                "SourceSecurityGroupId": given.get("SourceSecurityGroupId") or given.get("SourceSecurityGroupName"),
                "direction": direction})
    return rules


def live_rule(rule: Mapping[str, Any]) -> dict[str, Any]:
    """Heat's ``_res_rules_to_common``: a rule Neutron has, in the template's terms."""
    return {"FromPort": rule.get("port_range_min"), "ToPort": rule.get("port_range_max"),
            "IpProtocol": rule.get("protocol"), "direction": rule.get("direction"),
            "CidrIp": rule.get("remote_ip_prefix"), "SourceSecurityGroupId": rule.get("remote_group_id")}


@register
class AWSSecurityGroup(neutron.SecurityGroup):
    """``AWS::EC2::SecurityGroup``: a Neutron security group with Heat's AWS rules."""

    type_name = "AWS::EC2::SecurityGroup"
    properties_schema = {
        "GroupDescription": PropertySchema("string", "Description of the security group.", required=True),
        "VpcId": PropertySchema("string", "Physical ID of the VPC. Not implemented."),
        "SecurityGroupIngress": PropertySchema("list", "List of security group ingress rules.",
                                               update_allowed=True, schema=_AWS_RULE),
        "SecurityGroupEgress": PropertySchema("list", "List of security group egress rules.",
                                              update_allowed=True, schema=_AWS_RULE),
    }
    attributes_schema = {}
    custom_constraints = {}

    def validate(self, properties: Mapping[str, Any]) -> None:
        for _direction, key in _DIRECTIONS:
            for index, rule in enumerate(properties.get(key) or []):
                if rule.get("SourceSecurityGroupOwnerId") is not None:
                    raise StackValidationFailed(
                        f"Property error: resources.{self.name}.properties.{key}[{index}]: "
                        "Property SourceSecurityGroupOwnerId not implemented yet")

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        """Heat's: the group (its unique name recorded first), Neutron's default
        egress rules deleted when the template gives egress rules, then each rule."""
        name = self.runtime.physical_name(self.name)
        self.runtime.note_data(self.name, UNANSWERED_NAME, name)
        created = self._call("POST", "", {"security_group": {
            "name": name, "description": properties["GroupDescription"]}})["security_group"]
        ident = str(created["id"])
        self.runtime.claim_physical_id(self.name, ident)
        if properties.get("SecurityGroupEgress"):
            for rule in created.get("security_group_rules") or []:
                if rule.get("direction") == "egress":
                    self._delete_rule(str(rule["id"]))
        for rule in wanted_rules(properties):
            self._add_rule(ident, rule)
        return Outcome(ident)

    def _add_rule(self, group: str, rule: Mapping[str, Any]) -> None:
        """Heat's ``create_rule``: one call; a rule the group has already is fine."""
        body = {"direction": rule["direction"], "ethertype": "IPv4", "remote_ip_prefix": rule["CidrIp"],
                "port_range_min": rule["FromPort"], "port_range_max": rule["ToPort"],
                "protocol": rule["IpProtocol"], "remote_group_id": rule["SourceSecurityGroupId"],
                "security_group_id": group}
        try:
            self.cloud.request(neutron.NEUTRON, "POST", "/security-group-rules", {"security_group_rule": body})
        except CloudFailure as error:
            if error.status != 409:
                raise

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Heat's ``update``: the rules Neutron has that the template does not list
        are deleted (Neutron's default egress rules too), the missing ones added."""
        ident = current.physical_id
        live = self._show(ident)
        if live is None:
            raise self.fail(f"The security group {ident} could not be found", "NotFound")
        wanted = wanted_rules(properties)
        have = {str(rule["id"]): live_rule(rule) for rule in live.get("security_group_rules") or []}
        for rule_id, rule in have.items():
            if rule not in wanted:
                self._delete_rule(rule_id)
        for rule in wanted:
            if rule not in have.values():
                self._add_rule(ident, rule)
        return Outcome(ident, dict(current.data))

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        live = self._show(state.physical_id) if state.physical_id else None
        if live is None:
            return {"drifted": True, "changed_keys": [], "diff": {},
                    "msg": f"the security group {state.physical_id} is gone"}
        wanted = wanted_rules(state.properties)
        have = [live_rule(rule) for rule in live.get("security_group_rules") or []]
        if not state.properties.get("SecurityGroupEgress"):
            have = [rule for rule in have if rule["direction"] != "egress"]
        drifted = sorted(map(repr, wanted)) != sorted(map(repr, have))
        return {"drifted": drifted, "changed_keys": ["rules"] if drifted else [], "diff": {}}

    def attribute(self, state: ResourceState, name: str) -> Any:
        return self._show(state.physical_id) if name == "show" and state.physical_id else None


# -- AWS::EC2::Volume and AWS::EC2::VolumeAttachment -------------------------------------------

def _immutable_change(resource: OpenStackResource, old: Mapping[str, Any],
                      new: Mapping[str, Any]) -> NoReturn:
    """Heat's refusal of an update that changes an immutable property."""
    changed = sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
    raise resource.fail(f"Update to properties {', '.join(changed)} of {resource.name} "
                        f"({resource.type_name}) is not supported.", "NotSupported")


@register
class AWSVolume(cinder.Volume):
    """``AWS::EC2::Volume``: a Cinder volume of ``Size`` (or restored from the backup
    ``SnapshotId`` names, as Heat does), its ``Tags`` as metadata; no property may
    change (Heat's immutable properties: an update that changes one fails)."""

    type_name = "AWS::EC2::Volume"
    properties_schema = {
        "AvailabilityZone": PropertySchema("string", "The availability zone in which the volume will be "
                                           "created.", required=True, immutable=True),
        "Size": PropertySchema("integer", "The size of the volume in GB.", immutable=True,
                               constraints=(value_range(min=1),)),
        "SnapshotId": PropertySchema("string", "If specified, the backup used as the source to create "
                                     "the volume.", immutable=True),
        "Tags": PropertySchema("list", "The list of tags to associate with the volume.", immutable=True,
                               schema=KEY_VALUE),
    }
    attributes_schema = {}
    custom_constraints = {"SnapshotId": "cinder.backup"}
    live_attributes = frozenset()

    @staticmethod
    def as_cinder(properties: Mapping[str, Any]) -> dict[str, Any]:
        """The ``OS::Cinder::Volume`` properties that make the volume Heat's makes."""
        return {"size": properties.get("Size"), "availability_zone": properties.get("AvailabilityZone") or None,
                "backup_id": properties.get("SnapshotId"), "metadata": tags_metadata(properties.get("Tags"))}

    def validate(self, properties: Mapping[str, Any]) -> None:
        return None

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        return None  # every property is immutable: an update fails instead

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        return super().handle_create(self.as_cinder(properties))

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        if dict(current.properties) != dict(properties):
            _immutable_change(self, current.properties, properties)
        return Outcome(current.physical_id, dict(current.data))

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        return super().check_drift(replace(state, properties=self.as_cinder(state.properties)))

    def attribute(self, state: ResourceState, name: str) -> Any:
        return self._live(state.physical_id) if name == "show" and state.physical_id else None


@register
class AWSVolumeAttachment(cinder.VolumeAttachment):
    """``AWS::EC2::VolumeAttachment``: Nova attaches ``VolumeId`` to ``InstanceId`` at
    ``Device``; no property may change (an update that changes one fails, as Heat's)."""

    type_name = "AWS::EC2::VolumeAttachment"
    properties_schema = {
        "InstanceId": PropertySchema("string", "The ID of the instance to which the volume attaches.",
                                     required=True, immutable=True),
        "VolumeId": PropertySchema("string", "The ID of the volume to be attached.", required=True,
                                   immutable=True),
        "Device": PropertySchema("string", "The device where the volume is exposed on the instance.",
                                 required=True, immutable=True,
                                 constraints=(allowed_pattern("/dev/vd[b-z]"),)),
    }
    attributes_schema = {}
    custom_constraints = {"VolumeId": "cinder.volume"}

    @staticmethod
    def as_cinder(properties: Mapping[str, Any]) -> dict[str, Any]:
        return {"instance_uuid": properties.get("InstanceId"), "volume_id": properties.get("VolumeId"),
                "mountpoint": properties.get("Device")}

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        return None

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        return super().handle_create(self.as_cinder(properties))

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        if dict(current.properties) != dict(properties):
            _immutable_change(self, current.properties, properties)
        return Outcome(current.physical_id, dict(current.data))

    def handle_delete(self, current: ResourceState) -> None:
        super().handle_delete(replace(current, properties=self.as_cinder(current.properties)))

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return super().adopted_thing(ident, self.as_cinder(properties))

    def check_healthy(self, state: ResourceState) -> bool:
        return super().check_healthy(replace(state, properties=self.as_cinder(state.properties)))


# -- AWS::EC2::EIP and AWS::EC2::EIPAssociation ----------------------------------------------

def external_network(cloud: Any) -> str:
    """Heat's ``get_external_network_id``: the cloud's one external network."""
    listed = cloud.request(neutron.NEUTRON, "GET", "/networks", params={"router:external": "True"})["networks"]
    if len(listed) != 1:
        raise CloudFailure(f"Expected 1 external network, found {len(listed)}", 400)
    return str(listed[0]["id"])


def server_interface(cloud: Any, server: str) -> tuple[str, str | None]:
    """The port and IPv4 address Heat's ``associate_floatingip`` picks: the server's
    first interface (Nova's list) and its first IPv4 address."""
    listed = cloud.request(nova.COMPUTE, "GET", f"/servers/{server}/os-interface")["interfaceAttachments"]
    if not listed:
        raise CloudFailure(f"No network interface found for server {server}.", 404)
    first = listed[0]
    address = next((ip["ip_address"] for ip in first.get("fixed_ips") or []
                    if ":" not in str(ip.get("ip_address"))), None)
    return str(first["port_id"]), address


def floating_ip_by_address(cloud: Any, address: str) -> str:
    """The id of the floating IP with ``address`` (Heat's EntityMatchNotFound otherwise)."""
    listed = cloud.request(neutron.NEUTRON, "GET", "/floatingips",
                           params={"floating_ip_address": address})["floatingips"]
    if not listed:
        raise CloudFailure(f"No floatingip matching {{'floating_ip_address': '{address}'}}.", 404)
    return str(listed[0]["id"])


def point_floating_ip(cloud: Any, floating_ip: str, port: str | None, address: str | None = None) -> None:
    body = {"port_id": port, "fixed_ip_address": address} if port else {"port_id": None, "fixed_ip_address": None}
    cloud.request(neutron.NEUTRON, "PUT", f"/floatingips/{floating_ip}", {"floatingip": body})


def associate(cloud: Any, server: str, floating_ip: str) -> None:
    """Heat's ``associate_floatingip``: the address onto the server's first interface."""
    port, address = server_interface(cloud, server)
    point_floating_ip(cloud, floating_ip, port, address)


@register
class ElasticIp(nova.NovaResource):
    """``AWS::EC2::EIP``: a floating IP of the cloud's external network, on
    ``InstanceId``'s first interface when given; its reference is the address."""

    type_name = "AWS::EC2::EIP"
    properties_schema = {
        "Domain": PropertySchema("string", 'Set to "vpc" to have IP address allocation associated to your VPC.',
                                 constraints=(allowed_values("vpc"),)),
        "InstanceId": PropertySchema("string", "Instance ID to associate with EIP.", update_allowed=True),
    }
    attributes_schema = {"AllocationId": AttributeSchema(
        "ID that AWS assigns to represent the allocation of the address for use with Amazon VPC.", "string")}
    custom_constraints = {"InstanceId": "nova.server"}

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        made = self.cloud.request(neutron.NEUTRON, "POST", "/floatingips", {
            "floatingip": {"floating_network_id": external_network(self.cloud)}})["floatingip"]
        ident = str(made["id"])
        self.runtime.claim_physical_id(self.name, ident)
        if properties.get("InstanceId"):
            associate(self.cloud, str(properties["InstanceId"]), ident)
        return Outcome(ident, {"address": made.get("floating_ip_address")})

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        if current.properties.get("InstanceId") != properties.get("InstanceId"):
            if properties.get("InstanceId"):
                associate(self.cloud, str(properties["InstanceId"]), current.physical_id)
            else:
                point_floating_ip(self.cloud, current.physical_id, None)
        return Outcome(current.physical_id, dict(current.data))

    def handle_delete(self, current: ResourceState) -> None:
        if not current.physical_id:
            return
        for call in (functools.partial(point_floating_ip, self.cloud, current.physical_id, None),
                     functools.partial(self.cloud.request, neutron.NEUTRON, "DELETE",
                                       f"/floatingips/{current.physical_id}")):
            try:
                call()
            except CloudFailure as error:
                if not error.not_found:
                    raise

    def reference_id(self, state: ResourceState) -> Any:
        return state.data.get("address") or self.name

    def attribute(self, state: ResourceState, name: str) -> Any:
        if name == "AllocationId":
            return str(state.physical_id) if state.physical_id else None
        return self._show(state.physical_id) if name == "show" and state.physical_id else None

    def _show(self, ident: str) -> Mapping[str, Any] | None:
        try:
            shown: Mapping[str, Any] = self.cloud.request(neutron.NEUTRON, "GET", f"/floatingips/{ident}")["floatingip"]
            return shown
        except CloudFailure as error:
            if error.not_found:
                return None
            raise

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self._show(ident)

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        outcome = super().handle_adopt(properties, adopted)
        shown = self._show(outcome.physical_id) or {}
        return Outcome(outcome.physical_id, {**outcome.data, "address": shown.get("floating_ip_address")})

    def check_healthy(self, state: ResourceState) -> bool:
        return bool(state.physical_id) and self._show(state.physical_id) is not None


@register
class ElasticIpAssociation(nova.NovaResource):
    """``AWS::EC2::EIPAssociation``: the floating IP ``EIP`` (an address) onto
    ``InstanceId``, or the one ``AllocationId`` names onto ``NetworkInterfaceId`` (or
    the instance's first port), as Heat's."""

    type_name = "AWS::EC2::EIPAssociation"
    properties_schema = {
        "InstanceId": PropertySchema("string", "Instance ID to associate with EIP specified by EIP property.",
                                     update_allowed=True),
        "EIP": PropertySchema("string", "EIP address to associate with instance.", update_allowed=True),
        "AllocationId": PropertySchema("string", "Allocation ID for VPC EIP address.", update_allowed=True),
        "NetworkInterfaceId": PropertySchema("string", "Network interface ID to associate with EIP.",
                                             update_allowed=True),
    }
    attributes_schema = {}
    custom_constraints = {"InstanceId": "nova.server"}

    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's checks, in its order and words."""
        path = f"resources.{self.name}"
        if bool(properties.get("EIP")) == bool(properties.get("AllocationId")):
            raise self.refuse("Either 'EIP' or 'AllocationId' must be provided.", path)
        if properties.get("EIP") and not properties.get("InstanceId"):
            raise self.refuse("Must specify 'InstanceId' if you specify 'EIP'.", path)
        if not properties.get("InstanceId") and not properties.get("NetworkInterfaceId"):
            raise self.refuse("At least one of the following properties must be specified: InstanceId, "
                              "NetworkInterfaceId.", path)

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        """Heat's ``needs_replace_with_prop_diff``: another address and another target."""
        changed = {key for key in set(old) | set(new) if old.get(key) != new.get(key)}
        if changed & {"AllocationId", "EIP"} and changed & {"InstanceId", "NetworkInterfaceId"} and (
                new.get("InstanceId") or new.get("NetworkInterfaceId")):
            return "its address and what it is on changed"
        return super().replacement_reason(old, new)

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        if properties.get("EIP"):
            address = str(properties["EIP"])
            associate(self.cloud, str(properties["InstanceId"]), floating_ip_by_address(self.cloud, address))
            return Outcome(address)
        floating_ip = str(properties["AllocationId"])
        port = self._port(properties)
        if port is None:
            return Outcome("")  # Heat: "Skipping association, resource not specified"
        self._add_gateway_router(floating_ip, str(port["network_id"]))
        point_floating_ip(self.cloud, floating_ip, str(port["id"]))
        return Outcome(floating_ip)

    def _port(self, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Heat's ``_get_port_info``: the interface named, or the instance's first port."""
        if properties.get("NetworkInterfaceId"):
            params: dict[str, Any] = {"id": properties["NetworkInterfaceId"]}
        elif properties.get("InstanceId"):
            params = {"device_id": properties["InstanceId"]}
        else:
            return None
        ports = self.cloud.request(neutron.NEUTRON, "GET", "/ports", params=params)["ports"]
        return ports[0] if ports else None

    def _add_gateway_router(self, floating_ip: str, network: str) -> None:
        """Heat's ``_neutron_add_gateway_router``: the router named as the port's
        network (an AWS VPC's) gets the floating IP's network as its gateway."""
        shown = self.cloud.request(neutron.NEUTRON, "GET", f"/networks/{network}")["network"]
        routers = self.cloud.request(neutron.NEUTRON, "GET", "/routers", params={"name": shown["name"]})["routers"]
        if len(routers) != 1:
            return
        fip = self.cloud.request(neutron.NEUTRON, "GET", f"/floatingips/{floating_ip}")["floatingip"]
        self.cloud.request(neutron.NEUTRON, "PUT", f"/routers/{routers[0]['id']}", {"router": {
            "external_gateway_info": {"network_id": fip["floating_network_id"]}}})

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Heat's ``handle_update`` ends where this does: the address off what it
        was on, then onto what the new properties say."""
        self.handle_delete(current)
        outcome = self.handle_create(properties)
        return Outcome(outcome.physical_id or current.physical_id, dict(current.data))

    def handle_delete(self, current: ResourceState) -> None:
        if not current.physical_id:
            return
        try:
            if current.properties.get("EIP"):
                point_floating_ip(self.cloud, floating_ip_by_address(self.cloud, str(current.properties["EIP"])), None)
            elif current.properties.get("AllocationId"):
                point_floating_ip(self.cloud, str(current.properties["AllocationId"]), None)
        except CloudFailure as error:
            if not error.not_found:
                raise

    def reference_id(self, state: ResourceState) -> Any:
        return state.physical_id or self.name

    def attribute(self, state: ResourceState, name: str) -> Any:
        return None

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        listed = self.cloud.request(neutron.NEUTRON, "GET", "/floatingips", params={"floating_ip_address": ident}) \
            if "." in ident else {"floatingips": [self.cloud.request(neutron.NEUTRON, "GET", f"/floatingips/{ident}")
                                                  ["floatingip"]]}
        found = listed.get("floatingips") or []
        return found[0] if found else None

    id_shape = (re.compile(r"[0-9a-fA-F.:-]+"), "an address or a UUID")
