# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What Heat's AWS server (``AWS::EC2::Instance``, resources/openstack/ec2.py) and its
launch configuration (``AWS::AutoScaling::LaunchConfiguration``, aws_autoscaling.py)
share: the schemas of ``BlockDeviceMappings`` and ``NovaSchedulerHints``, and Heat's
checks of them (heat/engine/resources/aws/ec2/instance.py, aws/autoscaling/launch_config.py).
Light on purpose: the launch configuration is always registered, the server only
when a template names an OpenStack type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import StackValidationFailed
from .base import PropertySchema

KEY_VALUE = PropertySchema("map", schema={
    "Key": PropertySchema("string", required=True),
    "Value": PropertySchema("string", required=True),
})
_EBS = PropertySchema("map", "The ebs volume to attach to the instance.", schema={
    "DeleteOnTermination": PropertySchema(
        "boolean", "Indicate whether the volume should be deleted when the instance is terminated.",
        default=True),
    "Iops": PropertySchema("number", "Not Implemented."),
    "SnapshotId": PropertySchema("string", "The ID of the snapshot to create a volume from."),
    "VolumeSize": PropertySchema("string", "The size of the volume, in GB."),
    "VolumeType": PropertySchema("string", "Not Implemented."),
})
BLOCK_DEVICE_MAPPINGS = PropertySchema(
    "list", "Block device mappings to attach to instance.",
    schema=PropertySchema("map", schema={
        "DeviceName": PropertySchema("string", "A device name where the volume will be attached.",
                                     required=True),
        "Ebs": _EBS,
        "NoDevice": PropertySchema("map", "Not Implemented."),
        "VirtualName": PropertySchema("string", "Not Implemented."),
    }))
NOVA_SCHEDULER_HINTS = PropertySchema("list", "Scheduler hints to pass to Nova (Heat extension).",
                                      schema=KEY_VALUE)
# Heat's properties with ``implemented=False``: a template that sets one is refused.
NOT_IMPLEMENTED = ("DisableApiTermination", "KernelId", "Monitoring", "PlacementGroupName",
                   "PrivateIpAddress", "RamDiskId", "SourceDestCheck", "Tenancy")
_NOT_IMPLEMENTED_EBS = ("Iops", "VolumeType")
_NOT_IMPLEMENTED_MAPPING = ("NoDevice", "VirtualName")


def not_implemented_error(properties: Mapping[str, Any], path: str) -> StackValidationFailed | None:
    """Heat's refusal of a property it declares but does not implement (the first
    one set, at its place in the template)."""
    for key in NOT_IMPLEMENTED:
        if properties.get(key) is not None:
            return _not_implemented(path, key)
    for index, mapping in enumerate(properties.get("BlockDeviceMappings") or []):
        where = f"{path}.BlockDeviceMappings[{index}]"
        for key in _NOT_IMPLEMENTED_MAPPING:
            if mapping.get(key) is not None:
                return _not_implemented(where, key)
        for key in _NOT_IMPLEMENTED_EBS:
            if (mapping.get("Ebs") or {}).get(key) is not None:
                return _not_implemented(f"{where}.Ebs", key)
    return None


def _not_implemented(path: str, key: str) -> StackValidationFailed:
    return StackValidationFailed(f"Property error: {path}: Property {key} not implemented yet")


def block_device_mapping_error(mappings: Sequence[Mapping[str, Any]] | None) -> str | None:
    """Heat's check of ``BlockDeviceMappings``: each needs ``Ebs`` with a ``SnapshotId``."""
    for mapping in mappings or []:
        ebs = mapping.get("Ebs")
        if not ebs:
            return "Ebs is missing, this is required when specifying BlockDeviceMappings."
        if not ebs.get("SnapshotId"):
            return "SnapshotId is missing, this is required when specifying BlockDeviceMappings."
    return None
