# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait conditions side by side with the real Heat: the same template, the same signals
(Heat's ``resource signal`` API there, ``stack_signal``'s operation here, each sent once
the wait condition waits) give the same statuses, the same ``data`` attribute, the same
SIGNAL events on the handle and the same failure when too few come in time."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import SignalRequest, signal_resource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"count": {"type": "number"}, "timeout": {"type": "number"}},
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {"type": "OS::Heat::WaitCondition", "properties": {
            "handle": {"get_resource": "handle"}, "timeout": {"get_param": "timeout"},
            "count": {"get_param": "count"}}},
    },
    "outputs": {"data": {"value": {"get_attr": ["wait", "data"]}}},
}
# Both count (no later signal races the end of the run: outputs here are resolved then).
SIGNALS: list[Any] = [None, {"reason": "db loaded", "data": "v42", "id": "db"}]


def _in_heat(heat: Any, name: str, parameters: dict[str, Any], signals: list[Any]) -> dict[str, Any]:
    """Create the stack in Heat, signal it once the wait condition waits, and read it back."""
    body = {"stack_name": name, "template": TEMPLATE, "parameters": parameters, "disable_rollback": True}
    stack_id = heat.call("POST", "/stacks", body)["stack"]["id"]
    base = f"/stacks/{name}/{stack_id}"

    def waiting() -> bool:
        shown = heat.call("GET", base)["stack"]
        assert shown["stack_status"] == "CREATE_IN_PROGRESS", shown["stack_status_reason"]
        return bool(heat.call("GET", f"{base}/resources/wait")["resource"]["resource_status"] == "CREATE_IN_PROGRESS")

    _until(waiting)
    for body in signals:
        heat.call("POST", f"{base}/resources/handle/signal", body)
    _until(lambda: not heat.call("GET", base)["stack"]["stack_status"].endswith("IN_PROGRESS"))
    shown = heat.call("GET", base)["stack"]
    events = heat.call("GET", f"{base}/resources/handle/events")["events"]
    return {"status": shown["stack_status"], "reason": shown["stack_status_reason"],
            "outputs": {o["output_key"]: o.get("output_value") for o in shown.get("outputs") or []},
            "signals": [e["resource_status_reason"] for e in events if e["resource_status"].startswith("SIGNAL_")]}


def _here(tmp_path: Path, parameters: dict[str, Any], signals: list[Any]) -> dict[str, Any]:
    url = f"sqlite:///{tmp_path / 's.db'}"
    template = tmp_path / "wait.yaml"
    template.write_text(yaml.safe_dump(TEMPLATE))

    def send() -> None:
        _until(lambda: _waiting(url))
        for body in signals:
            with _opened(url) as store:
                signal_resource(store, SignalRequest("w", "handle", body))

    sender = threading.Thread(target=send)
    sender.start()
    with _opened(url) as store:
        made = apply_stack(store, ApplyRequest(name="w", template=str(template), parameters=parameters),
                           "job").as_dict()
        sender.join()
        events = store.events(made["stack_id"])
    return {"status": made["stack_status"], "reason": made["stack_status_reason"], "outputs": made["outputs"],
            "signals": [e.reason for e in events if e.resource_name == "handle" and e.action == "SIGNAL"]}


class _opened:  # pylint: disable=invalid-name
    """A store for a ``with`` block."""

    def __init__(self, url: str) -> None:
        self.store = open_store(url)

    def __enter__(self) -> Any:
        return self.store

    def __exit__(self, *_exc: object) -> None:
        self.store.close()


def _waiting(url: str) -> bool:
    with _opened(url) as store:
        stack = store.find_stack("w")
        return stack is not None and any(r.state.name == "wait" and r.state.status == "IN_PROGRESS"
                                         for r in store.resources(stack.id))


def _until(condition: Any, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.2)


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    """Outputs as JSON; the SIGNAL events as a sorted list: Heat's events of one second
    come back in no set order (their reasons say the order: "Signal 1 received")."""
    data = result["outputs"].get("data")
    return {**result, "outputs": {"data": json.loads(data) if data else data},
            "signals": sorted(result["signals"])}


def test_signals_complete_the_wait_as_in_heat(heat: Any, tmp_path: Path) -> None:
    parameters = {"count": 2, "timeout": 120}
    theirs = _in_heat(heat, "wait-ok", parameters, SIGNALS)
    ours = _here(tmp_path, parameters, SIGNALS)
    assert theirs["status"] == "CREATE_COMPLETE", theirs
    assert _comparable(ours) == _comparable(theirs)


def test_too_few_signals_fail_as_in_heat(heat: Any, tmp_path: Path) -> None:
    parameters = {"count": 3, "timeout": 5}
    theirs = _in_heat(heat, "wait-short", parameters, SIGNALS[:1])
    ours = _here(tmp_path, parameters, SIGNALS[:1])
    assert theirs["status"] == "CREATE_FAILED", theirs
    assert _comparable(ours) == _comparable(theirs)
