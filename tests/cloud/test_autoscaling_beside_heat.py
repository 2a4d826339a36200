# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An autoscaling group and its policies side by side with the real Heat engine on the
test cloud (Heat's signals need its Keystone): the same template, the same signals
(Heat's ``resource signal`` API there, ``stack_signal``'s operation here) and the same
updates give, step by step, the same statuses, sizes, members' values, members kept
(by age: Heat's names are random), SIGNAL events on the policies, and a signal in
the cooldown that changes nothing.  The members are ``OS::Heat::Value``: nothing of
the cloud's but Keystone is needed, so the test is short."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import SignalRequest, signal_resource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"value": {"type": "string"}, "desired": {"type": "number"},
                   "cooldown": {"type": "number"}},
    "resources": {
        "asg": {"type": "OS::Heat::AutoScalingGroup", "properties": {
            "min_size": 1, "max_size": 5, "desired_capacity": {"get_param": "desired"},
            "cooldown": {"get_param": "cooldown"},
            "rolling_updates": {"max_batch_size": 2, "min_in_service": 1},
            "resource": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "value"}}}}},
        "up": {"type": "OS::Heat::ScalingPolicy", "properties": {
            "auto_scaling_group_id": {"get_resource": "asg"}, "adjustment_type": "change_in_capacity",
            "scaling_adjustment": 2}},
        "down": {"type": "OS::Heat::ScalingPolicy", "properties": {
            "auto_scaling_group_id": {"get_resource": "asg"},
            "adjustment_type": "percent_change_in_capacity", "scaling_adjustment": -50}},
    },
    "outputs": {"size": {"value": {"get_attr": ["asg", "current_size"]}},
                "values": {"value": {"get_attr": ["asg", "outputs_list", "value"]}}},
}
ALARM = {"previous": "ok", "current": "alarm", "reason": "cpu above 80"}
# Each step: ("apply", parameters) or ("signal", policy, body).
STEPS: list[tuple[Any, ...]] = [
    ("apply", {"value": "one", "desired": 2, "cooldown": 0}),
    ("signal", "up", ALARM),  # 2 -> 4
    ("signal", "down", None),  # -50 % of 4: the two oldest go
    ("apply", {"value": "two", "desired": 3, "cooldown": 0}),  # rolls, then 3
    ("apply", {"value": "two", "desired": 3, "cooldown": 600}),  # the cooldown starts
    ("signal", "up", ALARM),  # within it: nothing
]


def _wait(condition: Any, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.3)


class _InHeat:
    """The stack in Heat, driven through its API."""

    def __init__(self, heat: Any, name: str) -> None:
        self.heat, self.name, self.base = heat, name, ""
        self.seen: dict[str, int] = {}  # member -> its age rank (first seen first)

    def apply(self, parameters: dict[str, Any]) -> None:
        if not self.base:
            body = {"stack_name": self.name, "template": TEMPLATE, "parameters": parameters,
                    "disable_rollback": True}
            self.base = f"/stacks/{self.name}/{self.heat.call('POST', '/stacks', body)['stack']['id']}"
        else:
            self.heat.call("PUT", self.base, {"template": TEMPLATE, "parameters": parameters})
            _wait(lambda: self._stack()["stack_status"].startswith("UPDATE_"))
        _wait(lambda: not self._stack()["stack_status"].endswith("IN_PROGRESS"))

    def signal(self, policy: str, body: Any, expected_size: int | None) -> None:
        self.heat.call("POST", f"{self.base}/resources/{policy}/signal", body)
        if expected_size is None:  # nothing should happen: give Heat time to (not) act
            time.sleep(5)
        else:
            _wait(lambda: self._settled_at(expected_size))

    def _settled_at(self, size: int) -> bool:
        group = self.heat.call("GET", f"{self.base}/resources/asg")["resource"]
        nested = self.heat.call("GET", f"/stacks/{group['physical_resource_id']}")["stack"]
        # Heat's group says it has finished scaling in its metadata (a signal that comes
        # before is dropped, "already in scaling").
        metadata = self.heat.call("GET", f"{self.base}/resources/asg/metadata")["metadata"]
        return nested["stack_status"].endswith("_COMPLETE") and len(self._members()) == size \
            and metadata.get("scaling_in_progress") is False

    def _stack(self) -> Any:
        return self.heat.call("GET", self.base)["stack"]

    def _members(self) -> list[Any]:
        nested = self.heat.call("GET", f"{self.base}/resources/asg")["resource"]["physical_resource_id"]
        name = self.heat.call("GET", f"/stacks/{nested}")["stack"]["stack_name"]
        listed = self.heat.call("GET", f"/stacks/{name}/{nested}/resources")["resources"]
        return sorted(listed, key=lambda r: (r["creation_time"], r["resource_name"]))

    def state(self) -> dict[str, Any]:
        shown = self._stack()
        members = self._members()
        for member in members:
            self.seen.setdefault(member["resource_name"], len(self.seen))
        events = self.heat.call("GET", f"{self.base}/events?resource_action=SIGNAL")["events"]
        return {"status": shown["stack_status"],
                "outputs": {o["output_key"]: o.get("output_value") for o in shown.get("outputs") or []},
                "ages": [self.seen[m["resource_name"]] for m in members],
                "signals": sorted((e["resource_name"], e["resource_status_reason"]) for e in events)}


class _Here:
    """The stack here, applied and signalled as the modules do."""

    def __init__(self, tmp_path: Path) -> None:
        self.url = f"sqlite:///{tmp_path / 's.db'}"
        self.template = tmp_path / "asg.yaml"
        self.template.write_text(yaml.safe_dump(TEMPLATE))
        self.seen: dict[str, int] = {}
        self.last: dict[str, Any] = {}

    def apply(self, parameters: dict[str, Any]) -> None:
        store = open_store(self.url)
        try:
            self.last = apply_stack(store, ApplyRequest(name="w", template=str(self.template),
                                                        parameters=parameters), "job").as_dict()
        finally:
            store.close()

    def signal(self, policy: str, body: Any, _expected_size: int | None) -> None:
        store = open_store(self.url)
        try:
            signal_resource(store, SignalRequest("w", policy, body))
        finally:
            store.close()

    def state(self) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            stack = store.find_stack("w")
            group = next(r.state for r in store.resources(stack.id) if r.state.name == "asg")
            members = list(group.data["members"])  # oldest first, as Heat's created_time
            for member in members:
                self.seen.setdefault(member, len(self.seen))
            events = [e for e in store.events(stack.id) if e.action == "SIGNAL"]
            return {"status": stack.stack_status, "outputs": dict(stack.outputs),
                    "ages": [self.seen[m] for m in members],
                    "signals": sorted((e.resource_name, e.reason) for e in events)}
        finally:
            store.close()


def _run(driver: Any) -> list[dict[str, Any]]:
    """Every step, and the state after each."""
    states = []
    sizes = {1: 4, 2: 2, 5: None}  # the size Heat's signal gives (None: none changes)
    for number, step in enumerate(STEPS):
        if step[0] == "apply":
            driver.apply(step[1])
        else:
            driver.signal(step[1], step[2], sizes[number])
        states.append(driver.state())
    return states


def test_a_group_scales_and_rolls_as_in_heat(heat_client: Any, tmp_path: Path) -> None:
    in_heat = _InHeat(heat_client, f"asg-{uuid.uuid4().hex[:8]}")
    try:
        theirs = _run(in_heat)
    finally:
        if in_heat.base:
            heat_client.call("DELETE", in_heat.base)
    ours = _run(_Here(tmp_path))
    assert [s["outputs"]["size"] for s in theirs] == [2, 4, 2, 3, 3, 3], theirs
    for step, (mine, heats) in enumerate(zip(ours, theirs)):
        assert mine == heats, f"after step {step} {STEPS[step]}"
