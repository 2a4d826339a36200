# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait conditions as Heat 27's (heat/engine/resources/wait_condition.py and its OS and
CFN forms): a handle's signals merged by id with Heat's defaults and format check, a
wait condition that completes on ``count`` SUCCESS signals, fails on a FAILURE or after
``timeout`` in Heat's words; signals sent by ``stack_signal`` (operations/signal.py)
from another connection while the run that holds the stack waits, kept in the store
on both backends."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pg_backends import backend_store, pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import (
    SignalRequest,
    signal_resource,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

OS_TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  count: {type: number, default: 1}
  timeout: {type: number, default: 30}
  transport: {type: string, default: TOKEN_SIGNAL}
resources:
  handle: {type: OS::Heat::WaitConditionHandle, properties: {signal_transport: {get_param: transport}}}
  wait:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, timeout: {get_param: timeout}, count: {get_param: count}}
  after: {type: OS::Heat::Value, depends_on: [wait], properties: {value: done}}
outputs:
  data: {value: {get_attr: [wait, data]}}
  curl_cli: {value: {get_attr: [handle, curl_cli]}}
  signal: {value: {get_attr: [handle, signal]}}
"""

# Heat's CFN types in a HOT template (Heat takes them there as in a CFN one).
CFN_TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  nonce: {type: string, default: a}
resources:
  Handle: {type: %s}
  Wait:
    type: AWS::CloudFormation::WaitCondition
    properties: {Handle: {get_resource: Handle}, Timeout: '30'}
  Marker: {type: OS::Heat::Value, properties: {value: {get_param: nonce}}}
outputs:
  Data: {value: {get_attr: [Wait, Data]}}
"""


def _template(tmp_path: Path, text: str, name: str = "t.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _apply(url: str, template: str, **parameters: Any) -> dict[str, Any]:
    store = open_store(url)
    try:
        return apply_stack(store, ApplyRequest(name="w", template=template, parameters=parameters),
                           "job").as_dict()
    finally:
        store.close()


def _signal(url: str, resource: str, data: Any = None, check_mode: bool = False) -> dict[str, Any]:
    store = open_store(url)
    try:
        return signal_resource(store, SignalRequest("w", resource, data, check_mode))
    finally:
        store.close()


def _signal_when_waiting(url: str, signals: list[tuple[str, Any]]) -> threading.Thread:
    """Another connection signals once the wait condition is waiting: what a second
    job's stack_signal does while the first job's apply holds the stack."""

    def send() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            store = open_store(url)
            try:
                stack = store.find_stack("w")
                rows = {r.state.name: r.state for r in store.resources(stack.id)} if stack else {}
            finally:
                store.close()
            waiting = rows.get("wait") or rows.get("Wait")
            if waiting is not None and waiting.status == "IN_PROGRESS":
                break
            time.sleep(0.05)
        else:
            return  # the run failed before it waited: nothing to signal
        for resource, data in signals:
            _signal(url, resource, data)

    thread = threading.Thread(target=send)
    thread.start()
    return thread


def _events(url: str, name: str) -> list[tuple[str, str, str]]:
    store = open_store(url)
    try:
        stack = store.find_stack("w")
        return [(e.action, e.status, e.reason) for e in store.events(stack.id) if e.resource_name == name]
    finally:
        store.close()


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
def test_signals_from_another_job_release_the_wait_and_give_heats_data(store_url: str, tmp_path: Path) -> None:
    template = _template(tmp_path, OS_TEMPLATE)
    sender = _signal_when_waiting(store_url, [("handle", None), ("handle", {"data": "db ready", "id": "db"})])
    made = _apply(store_url, template, count=2)
    sender.join()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    # Heat's data attribute: each signal's data by its id, the first one's id its number.
    assert json.loads(made["outputs"]["data"]) == {"1": None, "db": "db ready"}
    # No Heat API here: nothing to curl, no credentials (Heat's null for such transports).
    assert made["outputs"]["curl_cli"] is None and made["outputs"]["signal"] == "null"
    assert _events(store_url, "handle")[-2:] == [
        ("SIGNAL", "COMPLETE", "Signal: status:SUCCESS reason:Signal 1 received"),
        ("SIGNAL", "COMPLETE", "Signal: status:SUCCESS reason:Signal 2 received")]


def test_a_failure_signal_fails_the_wait_with_its_reasons(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    sender = _signal_when_waiting(url, [("handle", {"status": "FAILURE", "reason": "disk full"})])
    made = _apply(url, _template(tmp_path, OS_TEMPLATE), count=3)
    sender.join()
    assert made["stack_status"] == "CREATE_FAILED"
    assert made["stack_status_reason"] == "Resource CREATE failed: WaitConditionFailure: resources.wait: disk full"


def test_too_few_signals_time_out_in_heats_words(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    sender = _signal_when_waiting(url, [("handle", {"reason": "web1 up"})])
    made = _apply(url, _template(tmp_path, OS_TEMPLATE), count=2, timeout=2)
    sender.join()
    assert made["stack_status_reason"] == ("Resource CREATE failed: WaitConditionTimeout: resources.wait: "
                                           "1 of 2 received - web1 up")
    assert "after" not in {r["name"] for r in made["resources"] if r["status"] != "INIT_COMPLETE"}


def test_no_signal_signals_itself_at_each_look(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    made = _apply(url, _template(tmp_path, OS_TEMPLATE), count=2, transport="NO_SIGNAL")
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert json.loads(made["outputs"]["data"]) == {"1": None, "2": None}
    assert made["outputs"]["signal"] == "{}"
    assert [e[0] for e in _events(url, "handle")].count("SIGNAL") == 2


def test_signal_bodies_merge_by_id_with_heats_defaults_and_checks(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    sender = _signal_when_waiting(url, [("handle", {"id": "a", "data": 1}), ("handle", {"id": "a", "data": 2}),
                                        ("handle", {"data": 3})])
    made = _apply(url, _template(tmp_path, OS_TEMPLATE), count=2)
    sender.join()
    # The same id twice is one signal, overwritten; the next default id counts the ids held.
    assert json.loads(made["outputs"]["data"]) == {"a": 2, "2": 3}
    for wrong in ({"status": "DONE"}, {"extra": 1}, "just text"):
        with pytest.raises(HotplayError, match=r"^ValueError: resources.handle: Metadata format invalid$"):
            _signal(url, "handle", wrong)
    assert len(_events(url, "handle")) == 5  # create in progress, complete, three signals: none refused


def test_heat_templates_native_waitcondition_signals_count_as_in_heat(tmp_path: Path) -> None:
    """The six signals of openstack/heat-templates' hot/native_waitcondition.yaml, whose
    count of 5 (not 6) is "due to duplicate signal ID 5"."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    sent = [{"status": "SUCCESS"}, {"status": "SUCCESS", "reason": "signal2"},
            {"status": "SUCCESS", "reason": "signal3", "data": "data3"},
            {"status": "SUCCESS", "reason": "signal4", "data": "data4"},
            {"status": "SUCCESS", "id": "5"}, {"status": "SUCCESS", "id": "5"}]
    sender = _signal_when_waiting(url, [("handle", body) for body in sent])
    made = _apply(url, _template(tmp_path, OS_TEMPLATE), count=5)
    sender.join()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert json.loads(made["outputs"]["data"]) == {"1": None, "2": None, "3": "data3", "4": "data4", "5": None}


def test_the_cfn_form_takes_its_four_keys_and_a_handle_of_its_own_kind(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    template = _template(tmp_path, CFN_TEMPLATE % "AWS::CloudFormation::WaitConditionHandle")
    signal = {"Status": "SUCCESS", "Reason": "configured", "UniqueId": "web1", "Data": "ok"}
    sender = _signal_when_waiting(url, [("Handle", None), ("Handle", signal)])
    made = _apply(url, template)
    sender.join()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert json.loads(made["outputs"]["Data"]) == {"web1": "ok"}
    assert [e[2] for e in _events(url, "Handle") if e[0] == "SIGNAL"] == [
        "No signal details provided", "Signal: status:SUCCESS reason:configured"]
    with pytest.raises(HotplayError, match="Metadata format invalid"):
        _signal(url, "Handle", {"Status": "SUCCESS"})

    wrong = _template(tmp_path, CFN_TEMPLATE % "OS::Heat::WaitConditionHandle", "wrong.yaml")
    failed = _apply(f"sqlite:///{tmp_path / 'other.db'}", wrong)
    assert failed["stack_status_reason"] == ("Resource CREATE failed: ValueError: resources.Wait: "
                                             "WaitCondition invalid Handle Handle")


def test_an_update_handle_is_new_at_each_update_and_the_wait_waits_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    template = _template(tmp_path, CFN_TEMPLATE % "OS::Heat::UpdateWaitConditionHandle")
    first_signal = {"Status": "SUCCESS", "Reason": "v1", "UniqueId": "web1", "Data": "v1"}
    sender = _signal_when_waiting(url, [("Handle", first_signal)])
    made = _apply(url, template)
    sender.join()
    first_handle = next(r["physical_id"] for r in made["resources"] if r["name"] == "Handle")

    sender = _signal_when_waiting(url, [("Handle", {**first_signal, "Reason": "v2", "Data": "v2"})])
    updated = _apply(url, template, nonce="b")
    sender.join()
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated["stack_status_reason"]
    assert "Handle" in updated["plan"]["replaced"]
    assert next(r["physical_id"] for r in updated["resources"] if r["name"] == "Handle") != first_handle
    assert json.loads(updated["outputs"]["Data"]) == {"web1": "v2"}  # the old handle's signals are gone


def test_signals_heat_refuses_and_check_mode(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    with pytest.raises(HotplayError, match=r"The Stack \(w\) could not be found"):
        _signal(url, "handle")
    sender = _signal_when_waiting(url, [("handle", None)])
    _apply(url, _template(tmp_path, OS_TEMPLATE))
    sender.join()
    with pytest.raises(HotplayError, match=r"The Resource \(nothing\) could not be found"):
        _signal(url, "nothing")
    with pytest.raises(HotplayError, match=r"^ResourceActionNotSupported: resources.after: signal is not "
                                           r"supported for resource\."):
        _signal(url, "after")
    checked = _signal(url, "handle", {"reason": "dry"}, check_mode=True)
    assert checked["changed"] and checked["reason"] == "Signal: status:SUCCESS reason:dry"
    assert [e[2] for e in _events(url, "handle")].count("Signal: status:SUCCESS reason:dry") == 0
    assert _signal(url, "handle", {"reason": "wet"})["reason"] == "Signal: status:SUCCESS reason:wet"


def test_a_stack_delete_takes_the_signals_with_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    sender = _signal_when_waiting(url, [("handle", {"data": "x"})])
    made = _apply(url, _template(tmp_path, OS_TEMPLATE))
    sender.join()
    handle = next(r["physical_id"] for r in made["resources"] if r["name"] == "handle")
    store = open_store(url)
    try:
        assert len(store.signals(made["stack_id"], "handle", handle)) == 1
        gone = delete_stack(store, DeleteRequest(name="w"), "job").as_dict()
        assert gone["stack_status"] == "DELETE_COMPLETE"
        assert store.signals(made["stack_id"], "handle", handle) == []
    finally:
        store.close()


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
def test_signals_sent_at_once_are_all_kept_in_one_order(backend_store: Any, store_url: str) -> None:
    stack = backend_store.create_stack("w")

    def send(number: int) -> None:
        store = open_store(store_url)
        try:
            store.add_signal(stack.id, "handle", "p1", {"id": number})
        finally:
            store.close()

    senders = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join()
    kept = backend_store.signals(stack.id, "handle", "p1")
    assert [r.seq for r in kept] == list(range(1, 9))
    assert sorted(r.body["id"] for r in kept) == list(range(8))
    assert backend_store.signals(stack.id, "handle", "p2") == []
    backend_store.delete_signals(stack.id, "handle", "p1")
    assert backend_store.signals(stack.id, "handle", "p1") == []


def _abandoned(resources: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """Heat's abandon data of a stack (heat/engine/stack.py and resource.py prepare_abandon)."""
    return {"name": "w", "id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "action": "CREATE",
            "status": "COMPLETE", "template": template, "environment": {"parameters": {}}, "files": {},
            "resources": resources, "project_id": "admin", "stack_user_project_id": "p", "tags": []}


def test_a_heat_stack_with_a_wait_condition_is_adopted_with_its_signals_and_exported_back(tmp_path: Path) -> None:
    import yaml  # pylint: disable=import-outside-toplevel

    from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon  # pylint: disable=import-outside-toplevel
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (  # pylint: disable=import-outside-toplevel
        AdoptRequest,
        adopt_stack,
    )
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.export import heat_abandon  # pylint: disable=import-outside-toplevel

    template = {**yaml.safe_load(OS_TEMPLATE), "heat_template_version": "2018-08-31"}
    # Heat's handle keeps its signals as its metadata; its wait condition has no id.
    signals = {"1": {"data": None, "reason": "Signal 1 received", "status": "SUCCESS"},
               "db": {"data": "ready", "reason": "loaded", "status": "SUCCESS"}}
    data = _abandoned({
        "handle": {"name": "handle", "resource_id": "6c3e1b1c7a4d4a0f9e1b2c3d4e5f6a7b",
                   "type": "OS::Heat::WaitConditionHandle", "action": "CREATE", "status": "COMPLETE",
                   "metadata": signals, "resource_data": {"password": "x", "user_id": "u"}},
        "wait": {"name": "wait", "resource_id": None, "type": "OS::Heat::WaitCondition",
                 "action": "CREATE", "status": "COMPLETE", "metadata": {}, "resource_data": {}},
        "after": {"name": "after", "resource_id": "w-after-abc", "type": "OS::Heat::Value",
                  "action": "CREATE", "status": "COMPLETE", "metadata": {}, "resource_data": {}},
    }, template)
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        adopted = adopt_stack(store, AdoptRequest("w", read_abandon(data, "w.json"), "w.json",
                                                  parameters={"count": 2}), "test").as_dict()
        assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted["stack_status_reason"]
        assert json.loads(adopted["outputs"]["data"]) == {"1": None, "db": "ready"}
        exported = heat_abandon(store, "w")["resources"]
        assert exported["handle"]["metadata"] == signals
        assert exported["handle"]["resource_id"] == "6c3e1b1c7a4d4a0f9e1b2c3d4e5f6a7b"
        assert exported["wait"]["resource_id"] == ""
        # Managed here from then on: the next signal counts on from what Heat had.
        again = apply_stack(store, ApplyRequest(name="w", template=_template(tmp_path, OS_TEMPLATE),
                                                parameters={"count": 2}), "job").as_dict()
        assert again["changed"] is False, again["plan"]
    finally:
        store.close()
    assert _signal(f"sqlite:///{tmp_path / 's.db'}", "handle")["reason"] == \
        "Signal: status:SUCCESS reason:Signal 3 received"
