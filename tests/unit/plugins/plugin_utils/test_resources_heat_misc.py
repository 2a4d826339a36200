# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Heat::None, Value, RandomString and TestResource behave as Heat 27's."""

from __future__ import annotations

import string
import threading
import uuid
from collections.abc import Mapping
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    ResourceFailure,
    StackValidationFailed,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources import base
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.runtime import Cancelled
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.properties import (
    UNKNOWN,
    validate_properties,
)


class FakeRuntime:
    """Records the waits instead of sleeping; raises Cancelled once cancelled."""

    stack_name = "st"
    stack_id = "stack-id"

    def __init__(self, real_sleep: bool = False) -> None:
        self.cancel_event = threading.Event()
        self.slept: list[float] = []
        self.real_sleep = real_sleep

    def physical_name(self, resource_name: str) -> str:
        return f"{self.stack_name}-{resource_name}-abcdefghijkl"

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        if self.cancel_event.wait(seconds if self.real_sleep else 0):
            raise Cancelled("cancelled")


def make(type_name: str, name: str = "r", runtime: FakeRuntime | None = None) -> base.Resource:
    cls = base.resource_class(type_name)
    assert cls is not None, type_name
    return cls(name, runtime or FakeRuntime())


def props(type_name: str, values: Mapping[str, Any], partial: bool = False) -> dict:
    cls = base.resource_class(type_name)
    return validate_properties(cls, values, "resources.r.properties", partial=partial)


def created(resource: base.Resource, properties: Mapping[str, Any]) -> ResourceState:
    outcome = resource.handle_create(properties)
    return ResourceState(resource.name, resource.type_name, "CREATE", "COMPLETE",
                         physical_id=outcome.physical_id, properties=properties,
                         data=outcome.data)


# -- OS::Heat::None ------------------------------------------------------------------
def test_none_accepts_any_property_and_keeps_none() -> None:
    # Heat re-parses None's properties with an empty schema.
    assert props("OS::Heat::None", {"anything": "goes", "x": [1]}) == {}


def test_none_physical_id_is_a_uuid_and_attributes_are_null() -> None:
    none = make("OS::Heat::None")
    state = created(none, {})
    uuid.UUID(state.physical_id)
    assert none.reference_id(state) == state.physical_id
    assert none.attribute(state, "whatever") is None
    assert none.attribute_names() is None  # any get_attr is allowed


def test_none_is_never_replaced() -> None:
    none = make("OS::Heat::None")
    assert none.replacement_reason({"a": 1}, {"a": 2, "image": "x"}) is None


# -- OS::Heat::Value -------------------------------------------------------------------
def test_value_attribute_is_the_value_property() -> None:
    value = make("OS::Heat::Value")
    state = created(value, props("OS::Heat::Value", {"value": {"a": [1, 2]}}))
    assert value.attribute(state, "value") == {"a": [1, 2]}
    assert state.physical_id == "st-r-abcdefghijkl"


@pytest.mark.parametrize("value_type, given", [
    ("number", "5"),
    ("boolean", "true"),
    ("string", 7),
    ("json", {"a": 1}),
    ("comma_delimited_list", ["a"]),
])
def test_value_type_checks_the_value_and_keeps_it_as_written(value_type: str, given: Any) -> None:
    # Heat 27.0.1: outputs of get_attr [v, value] are "5", "true", 7 (not converted).
    assert props("OS::Heat::Value", {"value": given, "type": value_type})["value"] == given


def test_value_type_rejects_a_mismatch_and_unknown_types() -> None:
    with pytest.raises(StackValidationFailed, match=r'value: "\[1\]" is not a map'):
        props("OS::Heat::Value", {"value": [1], "type": "json"})
    with pytest.raises(StackValidationFailed, match=r'type: "text" is not an allowed value'):
        props("OS::Heat::Value", {"value": 1, "type": "text"})


def test_value_updates_in_place() -> None:
    value = make("OS::Heat::Value")
    old = created(value, props("OS::Heat::Value", {"value": "a"}))
    new = props("OS::Heat::Value", {"value": "b", "type": "string"})
    assert value.replacement_reason(old.properties, new) is None
    outcome = value.handle_update(old, new)
    assert outcome.physical_id == old.physical_id
    assert outcome.data["attributes"]["value"] == "b"


# -- OS::Heat::RandomString ------------------------------------------------------------
def test_random_string_defaults_to_32_letters_and_digits() -> None:
    rnd = make("OS::Heat::RandomString")
    state = created(rnd, props("OS::Heat::RandomString", {}))
    value = rnd.attribute(state, "value")
    assert len(value) == 32
    assert set(value) <= set(string.ascii_letters + string.digits)
    # get_resource of a RandomString is the string itself (Heat's get_reference_id).
    assert rnd.reference_id(state) == value


def test_random_string_reference_before_creation_is_its_name() -> None:
    rnd = make("OS::Heat::RandomString", "pw")
    assert rnd.reference_id(ResourceState("pw", "OS::Heat::RandomString")) == "pw"


def test_random_string_honours_class_and_sequence_minimums() -> None:
    rnd = make("OS::Heat::RandomString")
    properties = props("OS::Heat::RandomString", {
        "length": 12,
        "character_classes": [{"class": "digits", "min": 5}],
        "character_sequences": [{"sequence": "!@", "min": 4}],
    })
    value = created(rnd, properties).data["value"]
    assert len(value) == 12
    assert sum(c.isdigit() for c in value) >= 5
    assert sum(c in "!@" for c in value) >= 4
    assert set(value) <= set(string.digits + "!@")


def test_random_string_deprecated_sequence_still_works() -> None:
    rnd = make("OS::Heat::RandomString")
    value = created(rnd, props("OS::Heat::RandomString",
                               {"length": 20, "sequence": "octdigits"})).data["value"]
    assert set(value) <= set(string.octdigits)


def test_random_string_length_limits() -> None:
    with pytest.raises(StackValidationFailed) as caught:
        props("OS::Heat::RandomString", {"length": 0})
    assert caught.value.message == (
        "Property error: resources.r.properties.length: 0 is out of range (min: 1, max: 512)")
    rnd = make("OS::Heat::RandomString")
    too_short = props("OS::Heat::RandomString",
                      {"length": 3, "character_classes": [{"class": "digits", "min": 4}]})
    with pytest.raises(StackValidationFailed) as caught:
        rnd.validate(too_short)
    assert caught.value.message == ("Length property cannot be smaller than combined "
                                    "character class and character sequence minimums")


def test_random_string_is_replaced_on_any_change() -> None:
    rnd = make("OS::Heat::RandomString")
    old = props("OS::Heat::RandomString", {"length": 8})
    assert rnd.replacement_reason(old, props("OS::Heat::RandomString",
                                             {"length": 8, "salt": "1"})) is not None
    assert rnd.replacement_reason(old, dict(old)) is None


# -- OS::Heat::TestResource ------------------------------------------------------------
TR = "OS::Heat::TestResource"


def test_test_resource_defaults_as_heat() -> None:
    assert props(TR, {}) == {
        "constraint_prop_secs": 0, "attr_wait_secs": 0, "value": "test_string",
        "update_replace_value": None, "fail": False, "update_replace": False,
        "wait_secs": 0, "action_wait_secs": None, "client_name": "", "entity_name": "",
    }


def test_test_resource_stores_value_as_output() -> None:
    res = make(TR, "ok")
    state = created(res, props(TR, {"value": "fine"}))
    assert state.physical_id == "st-ok-abcdefghijkl"
    assert res.attribute(state, "output") == "fine"
    assert res.reference_id(state) == state.physical_id


def test_test_resource_fail_gives_heat_reason() -> None:
    res = make(TR, "bad")
    with pytest.raises(ResourceFailure) as caught:
        res.handle_create(props(TR, {"value": "doomed", "fail": True}))
    # The executor prints "ValueError: resources.bad: Test Resource failed bad"
    # (examples/failing_no_rollback.json) from these two parts.
    assert caught.value.error_type == "ValueError"
    assert caught.value.message == "Test Resource failed bad"


def test_test_resource_waits_per_action() -> None:
    runtime = FakeRuntime()
    res = make(TR, runtime=runtime)
    values = props(TR, {"wait_secs": 2, "action_wait_secs": {"delete": 0.5}})
    state = created(res, values)
    res.handle_delete(state)
    # create falls back to wait_secs; delete has its own time.
    assert runtime.slept == [2.0, 0.5]


def test_test_resource_negative_wait_lasts_until_cancelled() -> None:
    runtime = FakeRuntime(real_sleep=True)
    res = make(TR, runtime=runtime)
    errors: list[BaseException] = []

    def create() -> None:
        try:
            res.handle_create(props(TR, {"wait_secs": -1}))
        except BaseException as error:  # noqa: BLE001 - recorded for the assert
            errors.append(error)

    worker = threading.Thread(target=create)
    worker.start()
    worker.join(0.2)
    assert worker.is_alive()
    runtime.cancel_event.set()
    worker.join(5)
    assert not worker.is_alive()
    assert isinstance(errors[0], Cancelled)


def test_test_resource_update_in_place_keeps_new_value() -> None:
    runtime = FakeRuntime()
    res = make(TR, runtime=runtime)
    old = created(res, props(TR, {"value": "a", "action_wait_secs": {"update": 3}}))
    new = props(TR, {"value": "b", "action_wait_secs": {"update": 3}})
    assert res.replacement_reason(old.properties, new) is None
    outcome = res.handle_update(old, new)
    assert outcome.physical_id == old.physical_id
    assert outcome.data["value"] == "b"
    assert runtime.slept == [3.0]


def test_test_resource_update_fails_when_fail_is_set() -> None:
    res = make(TR, "bad")
    old = created(res, props(TR, {"value": "a"}))
    with pytest.raises(ResourceFailure, match="Test Resource failed bad"):
        res.handle_update(old, props(TR, {"value": "b", "fail": True}))


def test_test_resource_delete_never_fails() -> None:
    res = make(TR)
    state = created(res, props(TR, {"value": "a"}))
    res.handle_delete(ResourceState("r", TR, physical_id=state.physical_id,
                                    properties=props(TR, {"fail": True})))


@pytest.mark.parametrize("change, replaced", [
    ({"value": "b"}, False),
    ({"value": "b", "update_replace": True}, True),
    # Heat: update_replace only matters together with a new value.
    ({"update_replace": True}, False),
    ({"update_replace_value": "x"}, True),  # not update_allowed
    ({"wait_secs": 5, "fail": True}, False),
])
def test_test_resource_replacement_rules(change: dict, replaced: bool) -> None:
    res = make(TR)
    old = props(TR, {"value": "a"})
    new = props(TR, {"value": "a", **change})
    assert (res.replacement_reason(old, new) is not None) is replaced


def test_test_resource_attr_wait_secs_delays_attributes() -> None:
    runtime = FakeRuntime()
    res = make(TR, runtime=runtime)
    state = created(res, props(TR, {"attr_wait_secs": 1.5}))
    assert res.attribute(state, "output") == "test_string"
    assert runtime.slept == [1.5]


def test_test_resource_partial_validation_keeps_unknown_value() -> None:
    assert props(TR, {"value": UNKNOWN}, partial=True)["value"] is UNKNOWN
