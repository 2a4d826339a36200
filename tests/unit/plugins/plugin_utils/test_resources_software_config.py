# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SoftwareConfig, StructuredConfig, CloudConfig and MultipartMime as Heat 27's."""

from __future__ import annotations

import email
import threading
import uuid
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources import base
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.properties import (
    validate_properties,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.software_config import (
    software_config_record,
)


class FakeRuntime:
    stack_name = "st"
    stack_id = "stack-id"

    def __init__(self) -> None:
        self.cancel_event = threading.Event()

    def physical_name(self, resource_name: str) -> str:
        return f"{self.stack_name}-{resource_name}-abcdefghijkl"

    def sleep(self, seconds: float) -> None:
        """Never used by config types."""


class LookupRuntime(FakeRuntime):
    """A runtime that offers the optional ``config_by_id`` capability."""

    def __init__(self, configs: Mapping[str, str]) -> None:
        super().__init__()
        self.configs = configs

    def config_by_id(self, physical_id: str) -> str | None:
        return self.configs.get(physical_id)


def create(type_name: str, values: Mapping[str, Any],
           runtime: FakeRuntime | None = None) -> tuple[base.Resource, ResourceState]:
    cls = base.resource_class(type_name)
    assert cls is not None
    properties = validate_properties(cls, values, "resources.cfg.properties")
    resource = cls("cfg", runtime or FakeRuntime())
    outcome = resource.handle_create(properties)
    return resource, ResourceState("cfg", type_name, "CREATE", "COMPLETE",
                                   physical_id=outcome.physical_id,
                                   properties=properties, data=outcome.data)


# -- SoftwareConfig ------------------------------------------------------------------------
def test_software_config_is_stored_under_a_uuid() -> None:
    resource, state = create("OS::Heat::SoftwareConfig", {"config": "#!/bin/sh\necho hi\n"})
    uuid.UUID(state.physical_id)
    assert resource.reference_id(state) == state.physical_id
    assert resource.attribute(state, "config") == "#!/bin/sh\necho hi\n"


def test_software_config_record_is_what_heat_api_shows() -> None:
    state = create("OS::Heat::SoftwareConfig", {
        "group": "script",
        "config": "run",
        "inputs": [{"name": "a"}, {"name": "b", "type": "Number", "default": 3,
                                   "replace_on_change": True}],
        "outputs": [{"name": "out", "error_output": True}],
    })[1]
    assert software_config_record(state) == {
        "id": state.physical_id,
        "name": "st-cfg-abcdefghijkl",
        "group": "script",
        "config": "run",
        # Heat's IOConfig.as_dict: unset keys dropped, replace_on_change only if true.
        "inputs": [{"name": "a", "type": "String"},
                   {"name": "b", "type": "Number", "default": 3, "replace_on_change": True}],
        "outputs": [{"name": "out", "type": "String", "error_output": True}],
        "options": {},
    }


def test_software_config_group_defaults_to_ungrouped() -> None:
    state = create("OS::Heat::SoftwareConfig", {})[1]
    assert software_config_record(state)["group"] == "Heat::Ungrouped"


def test_software_config_input_errors_name_the_input() -> None:
    with pytest.raises(StackValidationFailed) as caught:
        create("OS::Heat::SoftwareConfig", {"inputs": [{"name": "a"}, {"type": "Text"}]})
    assert caught.value.message == (
        "Property error: resources.cfg.properties.inputs[1]: Property name not assigned")


@pytest.mark.parametrize("type_name, change", [
    ("OS::Heat::SoftwareConfig", {"config": "new"}),
    ("OS::Heat::SoftwareConfig", {"group": "ansible"}),
    ("OS::Heat::StructuredConfig", {"config": {"b": 2}}),
    ("OS::Heat::CloudConfig", {"cloud_config": {"b": 2}}),
    ("OS::Heat::MultipartMime", {"parts": [{"config": "y"}]}),
])
def test_config_types_are_replaced_on_any_change(type_name: str, change: dict) -> None:
    # Heat's configs are immutable: no property is update_allowed.
    cls = base.resource_class(type_name)
    resource = cls("cfg", FakeRuntime())
    assert resource.replacement_reason({}, change) is not None


# -- StructuredConfig -------------------------------------------------------------------
def test_structured_config_keeps_the_map() -> None:
    resource, state = create("OS::Heat::StructuredConfig", {"config": {"a": [1, 2]}})
    assert resource.attribute(state, "config") == {"a": [1, 2]}
    with pytest.raises(StackValidationFailed, match='config: "text" is not a map'):
        create("OS::Heat::StructuredConfig", {"config": "text"})


# -- CloudConfig ---------------------------------------------------------------------------
def test_cloud_config_is_rendered_as_cloud_config_yaml() -> None:
    resource, state = create("OS::Heat::CloudConfig", {
        "cloud_config": {"runcmd": [["echo", "hi"]], "package_update": True},
    })
    text = resource.attribute(state, "config")
    # Heat: '#cloud-config\n' + yaml.dump(...) with sorted keys, block style.
    assert text == "#cloud-config\npackage_update: true\nruncmd:\n- - echo\n  - hi\n"
    assert yaml.safe_load(text) == {"runcmd": [["echo", "hi"]], "package_update": True}
    assert software_config_record(state)["group"] == "Heat::Ungrouped"


# -- MultipartMime ----------------------------------------------------------------------------
def parts_of(message_text: str) -> list[email.message.Message]:
    message = email.message_from_string(message_text)
    assert message.is_multipart()
    return message.get_payload()


def test_multipart_mime_builds_text_parts() -> None:
    resource, state = create("OS::Heat::MultipartMime", {"parts": [
        {"config": "#!/bin/sh\necho one\n"},
        {"config": "#cloud-config\n{}\n", "filename": "cfg.yaml", "subtype": "cloud-config"},
        {"config": "x", "filename": "boot.sh"},
    ]})
    parts = parts_of(resource.attribute(state, "config"))
    assert [p.get_content_type() for p in parts] == [
        "text/plain", "text/cloud-config", "text/boot"]  # Heat: subtype from the filename stem
    assert parts[0].get_payload() == "#!/bin/sh\necho one\n"
    assert parts[1].get_filename() == "cfg.yaml"


def test_multipart_mime_resolves_config_ids_through_the_runtime() -> None:
    config_id = str(uuid.uuid4())
    runtime = LookupRuntime({config_id: "#!/bin/sh\necho referenced\n"})
    resource, state = create("OS::Heat::MultipartMime",
                             {"parts": [{"config": config_id}]}, runtime)
    parts = parts_of(resource.attribute(state, "config"))
    assert parts[0].get_payload() == "#!/bin/sh\necho referenced\n"


def test_multipart_mime_keeps_an_id_it_cannot_resolve() -> None:
    config_id = str(uuid.uuid4())
    for runtime in (FakeRuntime(), LookupRuntime({})):  # no capability / NotFound
        resource, state = create("OS::Heat::MultipartMime",
                                 {"parts": [{"config": config_id}]}, runtime)
        assert parts_of(resource.attribute(state, "config"))[0].get_payload() == config_id


def test_multipart_mime_splits_a_multipart_part() -> None:
    inner_id = str(uuid.uuid4())
    inner, inner_state = create("OS::Heat::MultipartMime", {"parts": [
        {"config": "a"}, {"config": "b", "subtype": "x-shellscript"}]})
    runtime = LookupRuntime({inner_id: inner.attribute(inner_state, "config")})
    resource, state = create("OS::Heat::MultipartMime", {"parts": [
        {"config": inner_id, "type": "multipart"}, {"config": "c"}]}, runtime)
    parts = parts_of(resource.attribute(state, "config"))
    assert [p.get_payload() for p in parts] == ["a", "b", "c"]
    assert parts[1].get_content_type() == "text/x-shellscript"


def test_multipart_mime_part_type_is_constrained() -> None:
    with pytest.raises(StackValidationFailed) as caught:
        create("OS::Heat::MultipartMime", {"parts": [{"config": "a", "type": "binary"}]})
    assert caught.value.message == (
        'Property error: resources.cfg.properties.parts[0].type: "binary" is not an '
        'allowed value ["text", "multipart"]')
