# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's AWS autoscaling (``AWS::AutoScaling::LaunchConfiguration``, ``AutoScalingGroup``,
``ScalingPolicy``) and ``OS::Heat::InstanceGroup``, through the engine on a real SQLite
store.  Their members are ``OS::Heat::ScaledResource``, which the groups' nested stacks
map to ``AWS::EC2::Instance`` as Heat's do; the environment here maps that to
``Test::AWSInstance``, a fake of this module with the server's schema that makes
nothing (as Heat's own functional tests map it to a provider template), so the
members' definitions, names, order, tags and sizes are read from the store with no
cloud, fast.  The same groups on the test cloud, beside Heat: tests/cloud/test_aws_autoscaling_beside_heat.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import AdoptRequest, adopt_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import SignalRequest, signal_resource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.aws_autoscaling import iso_duration_seconds
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import (
    Outcome,
    Resource,
    ResourceState,
    register,
    resource_class,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

TEMPLATE = """\
heat_template_version: 2013-05-23
parameters:
  Image: {type: string, default: cirros}
  Size: {type: number, default: 2}
resources:
  Config:
    type: AWS::AutoScaling::LaunchConfiguration
    metadata: {role: web}
    properties: {ImageId: {get_param: Image}, InstanceType: m1.tiny, KeyName: mine}
  Group:
    type: AWS::AutoScaling::AutoScalingGroup
    properties:
      AvailabilityZones: {'Fn::GetAZs': ''}
      LaunchConfigurationName: {Ref: Config}
      MinSize: 1
      MaxSize: 4
      DesiredCapacity: {get_param: Size}
      Tags: [{Key: team, Value: web}]
POLICY
  Up:
    type: AWS::AutoScaling::ScalingPolicy
    properties: {AutoScalingGroupName: {Ref: Group}, AdjustmentType: ChangeInCapacity, ScalingAdjustment: 1}
  Half:
    type: AWS::AutoScaling::ScalingPolicy
    properties:
      AutoScalingGroupName: {get_resource: Group}
      AdjustmentType: PercentChangeInCapacity
      ScalingAdjustment: -50
outputs:
  List: {value: {get_attr: [Group, InstanceList]}}
  Url: {value: {get_resource: Up}}
  AlarmUrl: {value: {get_attr: [Up, AlarmUrl]}}
"""
ROLLING = """\
    update_policy:
      AutoScalingRollingUpdate: {MinInstancesInService: 1, MaxBatchSize: 1, PauseTime: PT0S}
"""
ENVIRONMENT = "resource_registry:\n  AWS::EC2::Instance: Test::AWSInstance\n"


@register
class FakeInstance(Resource):
    """``AWS::EC2::Instance``'s schema, making nothing: each member gets an address
    of its own, from the order it was made in."""

    type_name = "Test::AWSInstance"
    adoptable = True  # Heat's id is kept as it is
    properties_schema = resource_class("AWS::EC2::Instance").properties_schema
    attributes_schema = resource_class("AWS::EC2::Instance").attributes_schema
    made = 0

    def handle_create(self, properties: Any) -> Outcome:
        FakeInstance.made += 1
        return Outcome(f"server-{FakeInstance.made}", {"address": f"10.0.0.{FakeInstance.made}"})

    def handle_update(self, current: ResourceState, properties: Any) -> Outcome:
        return Outcome(current.physical_id, current.data)

    def attribute(self, state: ResourceState, name: str) -> Any:
        return state.data.get("address") if name == "PublicIp" else None


class Stack:
    """One stack ``w`` in a SQLite store, applied and signalled as the modules do."""

    def __init__(self, tmp_path: Path, template: str) -> None:
        self.url = f"sqlite:///{tmp_path / 's.db'}"
        self.template = tmp_path / "aws.yaml"
        self.template.write_text(template)
        self.environment = tmp_path / "env.yaml"
        self.environment.write_text(ENVIRONMENT)

    def apply(self, check_mode: bool = False, **parameters: Any) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            return apply_stack(store, ApplyRequest(
                name="w", template=str(self.template), environment=[str(self.environment)],
                parameters=parameters, existing=True, check_mode=check_mode), "job").as_dict()
        finally:
            store.close()

    def signal(self, policy: str) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            return signal_resource(store, SignalRequest("w", policy, None, False, holder=f"signal {policy}"))
        finally:
            store.close()

    def group(self, name: str = "Group") -> tuple[Any, list[Any]]:
        """The group's record and its members' records, oldest first."""
        store = open_store(self.url)
        try:
            group = next(r.state for r in store.resources(store.find_stack("w").id) if r.state.name == name)
            members = {r.state.name: r.state for r in store.resources(group.nested_stack_id)}
            return group, [members[n] for n in group.data["members"] if n in members]
        finally:
            store.close()

    def resources(self) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            return {r.state.name: r.state for r in store.resources(store.find_stack("w").id)}
        finally:
            store.close()


def given(member: ResourceState) -> dict[str, Any]:
    """A member's properties the group set (the schema's defaults left out)."""
    return {key: value for key, value in member.properties.items() if value is not None and key != "Volumes"}


def test_members_are_scaled_aws_servers_of_the_launch_configuration_tagged_with_the_group(tmp_path: Path) -> None:
    stack = Stack(tmp_path, TEMPLATE.replace("POLICY\n", ""))
    made = stack.apply()
    assert made["stack_status"] == "CREATE_COMPLETE", made.get("msg")
    group, members = stack.group()
    assert len(members) == 2
    config = stack.resources()["Config"]
    # A launch configuration makes nothing: its reference is a unique name.
    assert config.physical_id.startswith("w-Config-")
    for member in members:
        assert (member.type, member.implementation) == ("OS::Heat::ScaledResource", "Test::AWSInstance")
        assert given(member) == {
            "ImageId": "cirros", "InstanceType": "m1.tiny", "KeyName": "mine",
            # Heat's tags: the group's, then the group's name for Ceilometer.
            "Tags": [{"Key": "team", "Value": "web"}, {"Key": "metering.groupname", "Value": "Group"},
                     {"Key": "metering.AutoScalingGroupName", "Value": "Group"}]}
        assert dict(member.metadata) == {"role": "web"}
    # Heat's InstanceList: the members' PublicIp, oldest first.
    assert made["outputs"]["List"] == ",".join(m.data["address"] for m in members)
    assert made["outputs"]["Url"] == made["outputs"]["AlarmUrl"] == "hotplay://stacks/w/resources/Up/signal"
    # The group's reference is its nested stack.
    assert group.nested_stack_id and stack.resources()["Up"].properties["AutoScalingGroupName"] == \
        group.nested_stack_id


def test_aws_policies_scale_the_group_within_its_bounds(tmp_path: Path) -> None:
    stack = Stack(tmp_path, TEMPLATE.replace("POLICY\n", ""))
    stack.apply()
    _group, first = stack.group()
    grown = stack.signal("Up")
    assert grown["scaled"] == {"Group": {"from": 2, "to": 3}}, grown.get("msg")
    group, members = stack.group()
    assert [m.name for m in members[:2]] == [m.name for m in first]
    # The new member names the group as the first ones do (Heat 27's members do).
    assert {"Key": "metering.groupname", "Value": "Group"} in members[2].properties["Tags"]
    assert stack.signal("Up")["scaled"] == {"Group": {"from": 3, "to": 4}}
    assert stack.signal("Up")["changed"] is False  # MaxSize 4
    assert stack.signal("Half")["scaled"] == {"Group": {"from": 4, "to": 2}}
    assert [m.name for m in stack.group()[1]] == [m.name for m in members[2:]] + [stack.group()[1][1].name]


def test_without_a_rolling_update_a_new_configuration_reaches_only_new_members(tmp_path: Path) -> None:
    stack = Stack(tmp_path, TEMPLATE.replace("POLICY\n", ""))
    stack.apply()
    old_config = stack.resources()["Config"].physical_id
    changed = stack.apply(Image="fedora", Size=3)
    assert changed["stack_status"] == "UPDATE_COMPLETE", changed.get("msg")
    assert stack.resources()["Config"].physical_id != old_config  # replaced: a new name
    images = [m.properties["ImageId"] for m in stack.group()[1]]
    assert images == ["cirros", "cirros", "fedora"]


def test_a_rolling_update_replaces_the_members_one_batch_at_a_time(tmp_path: Path) -> None:
    stack = Stack(tmp_path, TEMPLATE.replace("POLICY\n", ROLLING))
    stack.apply(Size=3)
    before = [m.name for m in stack.group()[1]]
    rolled = stack.apply(Image="fedora", Size=3)
    assert rolled["stack_status"] == "UPDATE_COMPLETE", rolled.get("msg")
    _group, members = stack.group()
    assert [m.properties["ImageId"] for m in members] == ["fedora"] * 3
    assert [m.name for m in members] == before  # updated in place (the fake's update)
    # A change of the launch configuration's metadata replaces it too, and rolls.
    stack.template.write_text(stack.template.read_text().replace("{role: web}", "{role: api}"))
    assert stack.apply(Image="fedora", Size=3)["stack_status"] == "UPDATE_COMPLETE"
    assert [dict(m.metadata) for m in stack.group()[1]] == [{"role": "api"}] * 3


def test_an_instance_group_has_its_size_and_rolls_with_its_update_policy(tmp_path: Path) -> None:
    template = """\
heat_template_version: 2013-05-23
parameters:
  image: {type: string, default: cirros}
  size: {type: number, default: 2}
resources:
  config:
    type: AWS::AutoScaling::LaunchConfiguration
    properties: {ImageId: {get_param: image}, InstanceType: m1.tiny}
  group:
    type: OS::Heat::InstanceGroup
    properties:
      AvailabilityZones: [nova]
      LaunchConfigurationName: {get_resource: config}
      Size: {get_param: size}
    update_policy:
      RollingUpdate: {MaxBatchSize: 2, PauseTime: PT0S}
outputs:
  list: {value: {get_attr: [group, InstanceList]}}
"""
    stack = Stack(tmp_path, template)
    made = stack.apply(size=3)
    _group, members = stack.group("group")
    assert made["outputs"]["list"] == ",".join(m.data["address"] for m in members)
    assert members[0].properties["Tags"] == [{"Key": "metering.groupname", "Value": "group"}]
    rolled = stack.apply(image="fedora", size=1)
    assert rolled["stack_status"] == "UPDATE_COMPLETE", rolled.get("msg")
    assert [m.properties["ImageId"] for m in stack.group("group")[1]] == ["fedora"]


@pytest.mark.parametrize("change, message", [
    ("MinSize: 1", "MinSize: 5"),
    ("MaxSize: 4", "MaxSize: 4\n      LoadBalancerNames: [lb]"),
    ("LaunchConfigurationName: {Ref: Config}", "InstanceId: abc"),
    ("ScalingAdjustment: -50", "ScalingAdjustment: -50\n      MinAdjustmentStep: 1"),
    ("MaxSize: 4", "MaxSize: 4\n      HealthCheckType: EC2"),
    ("POLICY", "    update_policy:\n      AutoScalingRollingUpdate: {PauseTime: PT2H}"),
    ("POLICY", "    update_policy:\n      AutoScalingRollingUpdate: {PauseTime: '10'}"),
])
def test_bad_groups_and_policies_are_refused_in_heats_words_before_anything_is_written(
        tmp_path: Path, change: str, message: str) -> None:
    template = TEMPLATE.replace(change, message).replace("POLICY\n", "")
    if change == "ScalingAdjustment: -50":
        template = template.replace("AdjustmentType: PercentChangeInCapacity", "AdjustmentType: ChangeInCapacity")
    stack = Stack(tmp_path, template)
    expected = {
        "MinSize: 5": "MinSize can not be greater than MaxSize",
        "LoadBalancerNames": "LoadBalancerNames is not supported",
        "InstanceId": "InstanceId is not supported",
        "MinAdjustmentStep": "MinAdjustmentStep property should only be specified for AdjustmentType "
                             "with value PercentChangeInCapacity.",
        "HealthCheckType": "Property HealthCheckType not implemented yet",
        "PT2H": "Maximum PauseTime is 1 hour.",
        "PauseTime: '10'": "Only ISO 8601 duration format of the form PT#H#M#S is supported.",
    }
    wanted = next(text for key, text in expected.items() if key in message)
    with pytest.raises(HotplayError, match=re.escape(wanted)):
        stack.apply()
    store = open_store(stack.url)
    try:
        assert store.find_stack("w") is None
    finally:
        store.close()


@pytest.mark.parametrize("text, seconds", [("PT0S", 0), ("PT1H", 3600), ("PT1M30S", 90), ("PT2H3M4S", 7384)])
def test_pause_times_are_read_as_heat_reads_them(text: str, seconds: int) -> None:
    assert iso_duration_seconds(text) == seconds


def test_a_heat_stack_with_an_aws_group_is_adopted_with_heats_members_and_managed_here(tmp_path: Path) -> None:
    """Heat's abandon data of an AWS group: its members are ``OS::Heat::ScaledResource``
    (Heat's nested stacks map the type), adopted as the environment's AWS servers,
    and the group scales from there, Heat's members the oldest."""
    stack = Stack(tmp_path, TEMPLATE.replace("POLICY\n", ""))
    member_type = {"type": "OS::Heat::ScaledResource", "properties": {"ImageId": "cirros",
                                                                      "InstanceType": "m1.tiny"}}

    def member(name: str) -> dict[str, Any]:
        return {"name": name, "resource_id": f"server-of-{name}", "type": "OS::Heat::ScaledResource",
                "action": "CREATE", "status": "COMPLETE", "metadata": {}, "resource_data": {}}

    def resource(name: str, kind: str, ident: str) -> dict[str, Any]:
        return {"name": name, "resource_id": ident, "type": kind, "action": "CREATE", "status": "COMPLETE",
                "metadata": {}, "resource_data": {}}

    data = {"name": "w", "id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "action": "CREATE",
            "status": "COMPLETE", "files": {},
            "template": {**yaml.safe_load(stack.template.read_text()), "heat_template_version": "2013-05-23"},
            "environment": {"parameters": {}}, "project_id": "p", "tags": [],
            "resources": {
                "Config": resource("Config", "AWS::AutoScaling::LaunchConfiguration", "w-Config-abcdefghijkl"),
                "Group": {"name": "w-Group-hmzyanypc5ih", "id": "bbbbbbbb-bbbb-cccc-dddd-eeeeeeeeeeee",
                          "action": "CREATE", "status": "COMPLETE", "environment": {}, "files": {},
                          "template": {"HeatTemplateFormatVersion": "2012-12-12",
                                       "Resources": {"zzold1abcdef": member_type, "aanew2abcdef": member_type}},
                          "resources": {"aanew2abcdef": member("aanew2abcdef"),
                                        "zzold1abcdef": member("zzold1abcdef")}},
                "Up": resource("Up", "AWS::AutoScaling::ScalingPolicy", "3f2a"),
                "Half": resource("Half", "AWS::AutoScaling::ScalingPolicy", "4f2a")}}
    store = open_store(stack.url)
    try:
        adopted = adopt_stack(store, AdoptRequest("w", read_abandon(data, "w.json"), "w.json",
                                                  template=str(stack.template),
                                                  environment=[str(stack.environment)]), "t").as_dict()
    finally:
        store.close()
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted["stack_status_reason"]
    _group, members = stack.group()
    assert [(m.name, m.physical_id) for m in members] == [("zzold1abcdef", "server-of-zzold1abcdef"),
                                                          ("aanew2abcdef", "server-of-aanew2abcdef")]
    assert stack.signal("Up")["scaled"] == {"Group": {"from": 2, "to": 3}}
    assert [m.name for m in stack.group()[1]][:2] == ["zzold1abcdef", "aanew2abcdef"]
