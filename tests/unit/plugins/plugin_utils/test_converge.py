# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's converge: what drifted is updated although its definition did not change,
and the nested stacks that hold it are updated to reach it. (Through real
ansible-playbook: tests/integration/test_openstack_provider_templates.py on a mock
cloud, tests/cloud on a real one.)"""

from __future__ import annotations

from types import SimpleNamespace

from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.update_rules import (
    UNCHANGED,
    UPDATED,
    decide,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import Resource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.drift import repairs
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.base import ResourceState

RECORD = ResourceState("port", "OS::Heat::None", action="CREATE", status="COMPLETE",
                       physical_id="p1", properties={"value": "a"}, implementation="OS::Heat::None")
DECLARED = SimpleNamespace(name="port", type="OS::Heat::None", implementation="OS::Heat::None",
                           metadata={}, update_policy={}, deletion_policy="Delete")


def test_repairs_name_the_drifted_and_the_stacks_above_them():
    report = {
        "second_port/port": {"drifted": True, "changed_keys": ["state"]},
        "web_sg/security_group": {"drifted": True},
        "net/network": {"drifted": False},
        "server/server": {"drifted": None, "msg": "does not support check mode"},
    }
    assert repairs(report) == {
        "second_port/port": "converge: the real resource drifted (state changed)",
        "second_port": "converge: second_port/port drifted",
        "web_sg/security_group": "converge: the real resource drifted",
        "web_sg": "converge: web_sg/security_group drifted",
    }


def test_a_repair_updates_what_would_be_unchanged():
    handler = Resource("port", None)  # type: ignore[arg-type]
    same = {"value": "a"}
    assert decide(None, DECLARED, handler, RECORD, same).action == UNCHANGED  # type: ignore[arg-type]
    repaired = decide(None, DECLARED, handler, RECORD, same,  # type: ignore[arg-type]
                      repair="converge: the real resource drifted")
    assert (repaired.action, repaired.reason) == (UPDATED, "converge: the real resource drifted")
    # A change of its own is decided as always: the repair does not hide it.
    changed = decide(None, DECLARED, handler, RECORD, {"value": "b"},  # type: ignore[arg-type]
                     repair="converge: the real resource drifted")
    assert changed.action == "replaced"
