# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's AWS autoscaling and its InstanceGroup: ``AWS::AutoScaling::LaunchConfiguration``,
``AWS::AutoScaling::AutoScalingGroup``, ``AWS::AutoScaling::ScalingPolicy`` and
``OS::Heat::InstanceGroup``, on the machinery of ``OS::Heat::AutoScalingGroup``
(autoscaling.py).  Facts from Heat 27 (heat/engine/resources/aws/autoscaling/*.py,
openstack/heat/instance_group.py, heat/scaling/template.py):

- A launch configuration makes nothing: its reference is a unique name, and a
  change of its properties or metadata replaces it (a new name).
- A group's members are ``OS::Heat::ScaledResource`` (an ``AWS::EC2::Instance``,
  resources/openstack/ec2.py) with the launch configuration's properties as the
  template set them, its metadata, and the group's ``Tags`` with Heat's
  ``metering.groupname`` (and ``metering.AutoScalingGroupName``) tags naming the
  group; ``VPCZoneIdentifier``'s subnet is their ``SubnetId``.
- An update that changes ``LaunchConfigurationName`` replaces the members in
  batches only when the ``UpdatePolicy`` has a rolling update
  (``AutoScalingRollingUpdate``; ``RollingUpdate`` for the InstanceGroup:
  ``MinInstancesInService``, ``MaxBatchSize``, ``PauseTime`` as ``PT#H#M#S``, at
  most an hour); without one, members keep the definition they have and only new
  members get the new one.  Then the group is resized: to ``DesiredCapacity`` (or
  its size) within ``MinSize``..``MaxSize``; an InstanceGroup to its ``Size``.
- A policy's ``ScalingAdjustment`` and ``AdjustmentType`` (``ChangeInCapacity``,
  ``ExactCapacity``, ``PercentChangeInCapacity``) resize its group as
  ``OS::Heat::ScalingPolicy`` does; its reference and ``AlarmUrl`` are where
  ``hotplay.stacks.stack_signal`` sends a signal (Heat's pre-signed EC2 URL).

Not run: ``LoadBalancerNames`` (it reconfigures ``AWS::ElasticLoadBalancing::LoadBalancer``
resources) and ``InstanceId`` (a group or launch configuration copied from a server:
Heat reads the server's flavor id, which Nova no longer shows from microversion 2.47):
each is refused at validation with what to write instead.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from ..errors import HotplayError, StackValidationFailed
from .autoscaling import AutoScalingGroup, ScalingPolicy, signal_url
from .ec2_schema import BLOCK_DEVICE_MAPPINGS, NOVA_SCHEDULER_HINTS, block_device_mapping_error, not_implemented_error
from .base import AttributeSchema, Outcome, PropertySchema, Resource, ResourceState, register
from .properties import allowed_values, validate_properties, value_range

SCALED_RESOURCE_TYPE = "OS::Heat::ScaledResource"
# The type Heat's InstanceGroup and AWS group map their members' type to, in their
# nested stacks' environment (``child_params``).
GROUP_MEMBER_TYPES = {SCALED_RESOURCE_TYPE: "AWS::EC2::Instance"}
LAUNCH_CONFIGURATION = "AWS::AutoScaling::LaunchConfiguration"
# The group's data: the definition the last apply gave new members (the launch
# configuration may be gone by the next update, which keeps members on it).
MEMBER_DEFINITION = "member_definition"
MAX_PAUSE_SECONDS = 3600
_ISO_DURATION = re.compile(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$")
_CFN_ADJUSTMENTS = ("ChangeInCapacity", "ExactCapacity", "PercentChangeInCapacity")
_TAGS = PropertySchema("list", "Tags to attach to this group.", schema=PropertySchema("map", schema={
    "Key": PropertySchema("string", "Tag key.", required=True),
    "Value": PropertySchema("string", "Tag value.", required=True),
}))
ROLLING_UPDATE_SCHEMA = {
    "MinInstancesInService": PropertySchema("integer", default=0),
    "MaxBatchSize": PropertySchema("integer", default=1),
    "PauseTime": PropertySchema("string", default="PT0S"),
}


def iso_duration_seconds(text: str) -> int:
    """Heat's ``parse_isoduration``: ``PT#H#M#S`` in seconds."""
    found = _ISO_DURATION.match(text)
    if not found:
        raise ValueError("Only ISO 8601 duration format of the form PT#H#M#S is supported.")
    hours, minutes, seconds = (int(part) if part else 0 for part in found.groups())
    return 3600 * hours + 60 * minutes + seconds


def _without_nulls(value: Any) -> Any:
    """A launch configuration's property as the template set it (Heat passes on
    only what the template gave: nothing the schema left null)."""
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


@register
class LaunchConfiguration(Resource):
    """``AWS::AutoScaling::LaunchConfiguration``: what a group's members are made of."""

    type_name = LAUNCH_CONFIGURATION
    properties_schema = {
        "ImageId": PropertySchema("string", "Glance image ID or name."),
        "InstanceType": PropertySchema("string", "Nova instance type (flavor)."),
        "KeyName": PropertySchema("string", "Optional Nova keypair name."),
        "UserData": PropertySchema("string", "User data to pass to instance."),
        "SecurityGroups": PropertySchema("list", "Security group names to assign."),
        "KernelId": PropertySchema("string", "Not Implemented."),
        "RamDiskId": PropertySchema("string", "Not Implemented."),
        "BlockDeviceMappings": BLOCK_DEVICE_MAPPINGS,
        "NovaSchedulerHints": NOVA_SCHEDULER_HINTS,
        "InstanceId": PropertySchema("string", "The ID of an existing instance you want to use to "
                                     "create the launch configuration."),
    }
    attributes_schema = {}
    adoptable = True
    # Heat's ``needs_replace_with_tmpl_diff``: new metadata, a new configuration.
    replaced_when_metadata_changes = True

    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's checks, in its order and words."""
        self._validate(properties, complete=True)

    def validate_known(self, properties: Mapping[str, Any]) -> None:
        """The same, on the properties known before the stack runs (the others left out)."""
        self._validate(properties, complete=False)

    def _validate(self, properties: Mapping[str, Any], complete: bool) -> None:
        path = f"resources.{self.name}"
        unimplemented = not_implemented_error(properties, f"{path}.properties")
        if unimplemented is not None:
            raise unimplemented
        problem = block_device_mapping_error(properties.get("BlockDeviceMappings"))
        if problem:
            raise StackValidationFailed(problem, path=path)
        if properties.get("InstanceId"):
            raise StackValidationFailed(_INSTANCE_ID_REFUSED, path=f"{path}.properties.InstanceId")
        if complete and (not properties.get("ImageId") or not properties.get("InstanceType")):
            raise StackValidationFailed("If without InstanceId, ImageId and InstanceType are required.",
                                        path=path)

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        return Outcome(self.runtime.physical_name(self.name))

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        return Outcome(current.physical_id, current.data)

    def attribute(self, state: ResourceState, name: str) -> Any:
        return None


_INSTANCE_ID_REFUSED = (
    "InstanceId is not supported: Heat copies the server's image, flavor id, key pair and "
    "security groups, and Nova shows no flavor id from microversion 2.47 on; give ImageId and "
    "InstanceType (a LaunchConfiguration) instead")


@register
class AWSAutoScalingGroup(AutoScalingGroup):
    """``AWS::AutoScaling::AutoScalingGroup``: ``AWS::EC2::Instance`` members made from a
    launch configuration, resized by AWS scaling policies and by updates."""

    type_name = "AWS::AutoScaling::AutoScalingGroup"
    properties_schema = {
        "AvailabilityZones": PropertySchema("list", "Not Implemented.", required=True),
        "LaunchConfigurationName": PropertySchema("string", "The reference to a LaunchConfiguration resource.",
                                                  update_allowed=True),
        "MaxSize": PropertySchema("integer", "Maximum number of instances in the group.", required=True,
                                  update_allowed=True),
        "MinSize": PropertySchema("integer", "Minimum number of instances in the group.", required=True,
                                  update_allowed=True),
        "Cooldown": PropertySchema("integer", "Cooldown period, in seconds.", update_allowed=True),
        "DesiredCapacity": PropertySchema("integer", "Desired initial number of instances.",
                                          update_allowed=True),
        "HealthCheckGracePeriod": PropertySchema("integer", "Not Implemented."),
        "HealthCheckType": PropertySchema("string", "Not Implemented.",
                                          constraints=(allowed_values("EC2", "ELB"),)),
        "LoadBalancerNames": PropertySchema("list", "List of LoadBalancer resources."),
        "VPCZoneIdentifier": PropertySchema("list", "Use only with Neutron, to list the internal subnet to "
                                            "which the instance will be attached.",
                                            schema=PropertySchema("string")),
        "Tags": _TAGS,
        "InstanceId": PropertySchema("string", "The ID of an existing instance to use to create the "
                                     "Auto Scaling group."),
    }
    attributes_schema = {
        "InstanceList": AttributeSchema("A comma-delimited list of server ip addresses. (Heat extension).",
                                        "string"),
    }
    update_policy_name = "AutoScalingRollingUpdate"
    not_implemented: tuple[str, ...] = ("HealthCheckGracePeriod", "HealthCheckType")
    # Heat's tags naming the group on each member, besides the group's own.
    metering_tags: tuple[str, ...] = ("metering.groupname", "metering.AutoScalingGroupName")

    # -- what the AWS names mean ------------------------------------------------------
    @classmethod
    def sizes(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        return {"min_size": properties.get("MinSize"), "max_size": properties.get("MaxSize"),
                "desired_capacity": properties.get("DesiredCapacity"), "cooldown": properties.get("Cooldown")}

    @classmethod
    def validate_update_policy(cls, policy: Mapping[str, Any] | None, path: str) -> dict[str, Any]:
        """The ``UpdatePolicy``, checked with Heat's schema; ``PauseTime`` at most an hour."""
        holder = type("UpdatePolicy", (), {"properties_schema": {
            cls.update_policy_name: PropertySchema("map", schema=ROLLING_UPDATE_SCHEMA)}})
        checked = validate_properties(holder, policy or {}, path)
        rolling = checked.get(cls.update_policy_name)
        if rolling:
            where = f"{path}.{cls.update_policy_name}.PauseTime"
            try:
                seconds = iso_duration_seconds(str(rolling["PauseTime"]))
            except ValueError as error:
                raise StackValidationFailed(str(error), path=where) from None
            if seconds > MAX_PAUSE_SECONDS:
                raise StackValidationFailed("Maximum PauseTime is 1 hour.", path=where)
        return checked

    def _update_policy(self) -> dict[str, Any]:
        declared = self.runtime.declared(self.name)
        policy = declared.update_policy if declared is not None else None
        return self.validate_update_policy(policy, f"resources.{self.name}.update_policy")

    def rolling_policy(self, properties: Mapping[str, Any]) -> Mapping[str, Any]:
        rolling = self._update_policy().get(self.update_policy_name) or {}
        if not rolling:
            return {}
        return {"max_batch_size": int(rolling["MaxBatchSize"]),
                "min_in_service": int(rolling["MinInstancesInService"]),
                "pause_time": iso_duration_seconds(str(rolling["PauseTime"]))}

    def member_changed(self, previous: Mapping[str, Any], properties: Mapping[str, Any]) -> bool:
        """Heat rolls only with a rolling update policy, and only for a new launch
        configuration."""
        return bool(self.rolling_policy(properties)) and \
            previous.get("LaunchConfigurationName") != properties.get("LaunchConfigurationName")

    # -- members ----------------------------------------------------------------------
    def new_member(self, properties: Mapping[str, Any]) -> dict[str, Any] | None:
        """Heat's ``_get_resource_definition``: a ScaledResource of the launch
        configuration's properties and metadata, with the group's tags."""
        config = self._launch_configuration(str(properties.get("LaunchConfigurationName") or ""))
        launch = {key: _without_nulls(value) for key, value in config.properties.items()
                  if value is not None and key != "InstanceId"}
        launch["Tags"] = self._tags(properties)
        subnets = properties.get("VPCZoneIdentifier")
        if subnets:
            launch["SubnetId"] = subnets[0]
        member: dict[str, Any] = {"type": SCALED_RESOURCE_TYPE, "properties": launch}
        if config.metadata:
            member["metadata"] = copy.deepcopy(dict(config.metadata))
        return member

    def child_registry(self) -> Mapping[str, str]:
        """Heat's ``child_params``: the members are AWS servers, unless the
        environment maps ``AWS::EC2::Instance`` to something else."""
        return dict(GROUP_MEMBER_TYPES)

    def previous_member(self) -> dict[str, Any] | None:
        recorded = self.current.data.get(MEMBER_DEFINITION) if self.current is not None else None
        return copy.deepcopy(dict(recorded)) if isinstance(recorded, Mapping) else None

    def group_data(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return {MEMBER_DEFINITION: self.new_member(properties)}

    def _launch_configuration(self, reference: str) -> ResourceState:
        """Heat's ``resource_by_refid``: the launch configuration of the stack whose
        reference is ``reference``."""
        for stored in self.runtime.store.resources(self.runtime.stack_id):
            state = stored.state
            if (state.implementation or state.type) == LAUNCH_CONFIGURATION and state.physical_id == reference:
                return state
        raise HotplayError(f"LaunchConfigurationName ({reference}) reference can not be found.")

    def _tags(self, properties: Mapping[str, Any]) -> list[dict[str, str]]:
        """Heat's ``_tags``: the group's own, then a tag per ``metering_tags`` naming
        the group; the first is left out when the user gave a ``metering.`` tag.
        Heat's code names the group by its reference, but the members Heat 27 makes
        carry the group's name, on create and on update alike (seen beside Heat:
        tests/cloud/test_aws_beside_heat.py), and so do these."""
        tags = [dict(tag) for tag in properties.get("Tags") or []]
        first, *more = self.metering_tags
        if not any(str(tag["Key"]).startswith("metering.") for tag in tags):
            tags.append({"Key": first, "Value": self.name})
        return tags + [{"Key": key, "Value": self.name} for key in more]

    # -- validation ---------------------------------------------------------------------
    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's checks, in its order and words."""
        self._validate(properties, complete=True)

    def validate_known(self, properties: Mapping[str, Any]) -> None:
        """The same, on the properties known before the stack runs (the others left out)."""
        self._validate(properties, complete=False)

    def _validate(self, properties: Mapping[str, Any], complete: bool) -> None:
        path = f"resources.{self.name}"
        for key in self.not_implemented:
            if properties.get(key) is not None:
                raise StackValidationFailed(
                    f"Property error: {path}.properties: Property {key} not implemented yet")
        self._check_sizes(properties, path)
        subnets = properties.get("VPCZoneIdentifier")
        if subnets and len(subnets) != 1:
            raise StackValidationFailed("Anything other than one VPCZoneIdentifier is not supported",
                                        path=path)
        if properties.get("InstanceId"):
            raise StackValidationFailed(_INSTANCE_ID_REFUSED, path=f"{path}.properties.InstanceId")
        if complete and not properties.get("LaunchConfigurationName"):
            raise StackValidationFailed("Either 'InstanceId' or 'LaunchConfigurationName' must be provided.",
                                        path=path)
        self._refuse_load_balancers(properties, path)

    def _check_sizes(self, properties: Mapping[str, Any], path: str) -> None:
        low, high, desired = properties.get("MinSize"), properties.get("MaxSize"), properties.get("DesiredCapacity")
        if isinstance(low, int) and isinstance(high, int) and high < low:
            raise StackValidationFailed("MinSize can not be greater than MaxSize", path=path)
        if isinstance(low, int) and low < 0:
            raise StackValidationFailed("The size of AutoScalingGroup can not be less than zero", path=path)
        if isinstance(desired, int) and isinstance(low, int) and isinstance(high, int) \
                and not low <= desired <= high:
            raise StackValidationFailed("DesiredCapacity must be between MinSize and MaxSize", path=path)
        super().validate({"min_size": low, "max_size": high, "desired_capacity": desired})

    @staticmethod
    def _refuse_load_balancers(properties: Mapping[str, Any], path: str) -> None:
        if properties.get("LoadBalancerNames"):
            raise StackValidationFailed(
                "LoadBalancerNames is not supported: Heat reconfigures the "
                "AWS::ElasticLoadBalancing::LoadBalancer resources it names, a type this collection does "
                "not run yet; leave it out and add the members to a load balancer of the template",
                path=f"{path}.properties.LoadBalancerNames")

    # -- attributes ---------------------------------------------------------------------
    def attribute_names(self) -> frozenset[str] | None:
        return frozenset(self.attributes_schema)

    def _attribute(self, state: ResourceState, name: str) -> Any:
        if name == "InstanceList":
            return self._instance_list(state)
        return super()._attribute(state, name)

    def _instance_list(self, state: ResourceState) -> str | None:
        """Heat's ``InstanceList``: the members' ``PublicIp``, oldest first, joined
        with commas (null for no member)."""
        addresses = [str(handler.attribute(member, "PublicIp") or "0.0.0.0")
                     for _name, member, handler in self._live_handlers(state)]
        return ",".join(addresses) or None

    def reference_id(self, state: ResourceState) -> Any:
        return state.nested_stack_id or self.name


@register
class InstanceGroup(AWSAutoScalingGroup):
    """``OS::Heat::InstanceGroup``: ``Size`` members made from a launch configuration."""

    type_name = "OS::Heat::InstanceGroup"
    properties_schema = {
        "AvailabilityZones": PropertySchema("list", "Not Implemented.", required=True),
        "LaunchConfigurationName": PropertySchema("string", "The reference to a LaunchConfiguration resource.",
                                                  required=True, update_allowed=True),
        "Size": PropertySchema("integer", "Desired number of instances.", required=True, update_allowed=True),
        "LoadBalancerNames": PropertySchema("list", "List of LoadBalancer resources."),
        "Tags": _TAGS,
    }
    update_policy_name = "RollingUpdate"
    not_implemented = ()
    metering_tags = ("metering.groupname",)

    @classmethod
    def sizes(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        """Its ``Size`` exactly: no bounds, no cooldown."""
        size = properties.get("Size")
        return {"min_size": size, "max_size": size, "desired_capacity": size, "cooldown": None}

    def _validate(self, properties: Mapping[str, Any], complete: bool) -> None:
        size = properties.get("Size")
        if isinstance(size, int):
            AutoScalingGroup.validate(self, {"min_size": 0, "max_size": size, "desired_capacity": size})
        self._refuse_load_balancers(properties, f"resources.{self.name}")


@register
class AWSScalingPolicy(ScalingPolicy):
    """``AWS::AutoScaling::ScalingPolicy``: a signal to it resizes its group."""

    type_name = "AWS::AutoScaling::ScalingPolicy"
    properties_schema = {
        "AutoScalingGroupName": PropertySchema("string", "AutoScaling group name to apply policy to.",
                                               required=True),
        "ScalingAdjustment": PropertySchema("integer", "Size of adjustment.", required=True,
                                            update_allowed=True),
        "AdjustmentType": PropertySchema("string", "Type of adjustment (absolute or percentage).",
                                         required=True, update_allowed=True,
                                         constraints=(allowed_values(*_CFN_ADJUSTMENTS),)),
        "Cooldown": PropertySchema("integer", "Cooldown period, in seconds.", update_allowed=True),
        "MinAdjustmentStep": PropertySchema(
            "integer", "Minimum number of resources that are added or removed when the AutoScaling "
            "group scales up or down.", update_allowed=True, constraints=(value_range(min=0),)),
    }
    attributes_schema = {
        "AlarmUrl": AttributeSchema("A signed url to handle the alarm. (Heat extension).", "string"),
    }

    @classmethod
    def hot_properties(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        return {"auto_scaling_group_id": properties.get("AutoScalingGroupName"),
                "scaling_adjustment": properties.get("ScalingAdjustment"),
                "adjustment_type": properties.get("AdjustmentType"),
                "cooldown": properties.get("Cooldown"),
                "min_adjustment_step": properties.get("MinAdjustmentStep")}

    def validate(self, properties: Mapping[str, Any]) -> None:
        if properties.get("MinAdjustmentStep") is not None and \
                properties.get("AdjustmentType") != "PercentChangeInCapacity":
            raise StackValidationFailed(
                "MinAdjustmentStep property should only be specified for AdjustmentType with value "
                "PercentChangeInCapacity.", path=f"resources.{self.name}")

    validate_known = validate

    def attribute(self, state: ResourceState, name: str) -> Any:
        if name != "AlarmUrl":
            return Resource.attribute(self, state, name)
        return signal_url(*self.runtime.address(self.name)) if state.physical_id else None

    def reference_id(self, state: ResourceState) -> Any:
        """Heat's: the pre-signed URL of the policy; here where stack_signal sends it."""
        return signal_url(*self.runtime.address(self.name)) if state.physical_id else self.name
