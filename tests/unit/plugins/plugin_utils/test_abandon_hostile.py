# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Abandon data is input from elsewhere (issue 28): what Heat never writes is refused
when it is read (language.abandon), naming the file and the place: resource types
Heat does not have at any depth, data nested too deep, NaN and Infinity, stack names
Heat would refuse.  And an adoption from the abandon data's own template runs no
module (operations.adopt gives the run no host)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import (
    AbandonDataError,
    foreign_types,
    load_abandon_file,
    read_abandon,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
    AdoptRefused,
    AdoptRequest,
    adopt_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

from test_adopt import abandon_data as shared_abandon_data
from test_adopt import leaf, stack
from test_resources_module import FakeHosts

SHELL = {"type": "Hotplay::Ansible::Module",
         "properties": {"module": "ansible.builtin.shell", "args": {"cmd": "env > stolen"}}}
EVIL_PROVIDER = {"heat_template_version": "2018-08-31", "resources": {"run": SHELL}}


def abandon_data() -> dict[str, Any]:
    """test_adopt's abandon data, a copy of its own (its template is shared)."""
    copied: dict[str, Any] = json.loads(json.dumps(shared_abandon_data()))
    return copied


def with_template_resource(data: dict[str, Any], name: str, definition: dict[str, Any],
                           type_name: str) -> dict[str, Any]:
    data["template"]["resources"][name] = definition
    data["resources"][name] = leaf(name, type_name, f"web-{name}-x")
    return data


def refusal(data: dict[str, Any]) -> str:
    with pytest.raises(AbandonDataError) as raised:
        read_abandon(data, "web.json")
    return str(raised.value)


def test_a_module_resource_in_the_template_is_refused_naming_file_place_and_type() -> None:
    message = refusal(with_template_resource(abandon_data(), "steal", SHELL, "Hotplay::Ansible::Module"))
    assert message == (
        "web.json: resource types Heat does not have: "
        "template.resources.steal.type (Hotplay::Ansible::Module), "
        "resources.steal.type (Hotplay::Ansible::Module); Heat's abandon data holds only Heat's "
        "own types (OS::*, AWS::*) and provider templates, so this data was not written by Heat: "
        "nothing was adopted, nothing written")


@pytest.mark.parametrize("change, place", [
    # A provider template carried in files, the environment mapping a Heat type to it.
    (lambda d: (d["environment"].update(resource_registry={"OS::Nova::Server": "evil.yaml"}),
                d["files"].update({"evil.yaml": json.dumps(EVIL_PROVIDER)})),
     "files.evil.yaml.resources.run.type"),
    # A mapping straight to the module type, per resource too.
    (lambda d: d["environment"].update(resource_registry={"OS::Heat::Value": "Hotplay::Ansible::Module"}),
     "environment.resource_registry.OS::Heat::Value"),
    (lambda d: d["environment"].update(resource_registry={
        "resources": {"marker": {"OS::Heat::TestResource": "Hotplay::Local::File"}}}),
     "environment.resource_registry.resources.marker.OS::Heat::TestResource"),
    (lambda d: d["environment"].update(resource_registry={"OS::Heat::*": "Hotplay::*"}),
     "environment.resource_registry.OS::Heat::*"),
    # A group's members, a chain's types, a nested stack's own template.
    (lambda d: d["template"]["resources"]["group"]["properties"]["resource_def"].update(
        type="Hotplay::Ansible::Module"),
     "template.resources.group.properties.resource_def.type"),
    (lambda d: d["template"]["resources"].update(chain={
        "type": "OS::Heat::ResourceChain", "properties": {"resources": ["OS::Heat::None",
                                                                        "Hotplay::Ansible::Module"]}}),
     "template.resources.chain.properties.resources[1]"),
    (lambda d: d["template"]["resources"].update(inner={
        "type": "OS::Heat::Stack", "properties": {"template": json.dumps(EVIL_PROVIDER)}}),
     "template.resources.inner.properties.template.resources.run.type"),
    # The nested stack's own abandon data: its template, its resources.
    (lambda d: d["resources"]["group"]["resources"]["0"].update(type="Hotplay::ReadOnly"),
     "resources.group.resources.0.type"),
    (lambda d: d["resources"]["group"].update(template=EVIL_PROVIDER),
     "resources.group.template.resources.run.type"),
    # A name that is neither Heat's nor mapped to anything by the data.
    (lambda d: d["template"]["resources"]["group"]["properties"]["resource_def"].update(
        type="Custom::Thing"),
     "template.resources.group.properties.resource_def.type"),
])
def test_types_heat_does_not_have_are_refused_at_any_depth(change: Any, place: str) -> None:
    data = abandon_data()
    change(data)
    message = refusal(data)
    assert message.startswith("web.json: resource types Heat does not have: ")
    assert f"{place} (" in message


def test_heat_types_aliases_and_provider_templates_are_heats() -> None:
    data = abandon_data()
    data["environment"]["resource_registry"] = {"My::Thing": "thing.yaml",
                                                "OS::Networking::*": "OS::Neutron::*"}
    data["files"] = {"thing.yaml": json.dumps({"resources": {"v": {"type": "OS::Heat::Value"}}}),
                     "script.sh": "#!/bin/sh\necho type: Hotplay::Ansible::Module\n"}
    data["template"]["resources"]["group"]["properties"]["resource_def"]["type"] = "My::Thing"
    data["template"]["resources"]["other"] = {"type": "other.template"}
    data["resources"]["other"] = leaf("other", "other.template", "x")
    assert foreign_types(read_abandon(data, "web.json")) == []


@pytest.mark.parametrize("text, place, token", [
    ('{"name": "web", "x": [1, NaN]}', "x[1]", "NaN is not a JSON value"),
    ('{"name": "web", "x": {"y": -Infinity}}', "x.y", "-Infinity is not a JSON value"),
    ('{"name": "web", "x": 1e999}', "x", "a number too large for JSON"),
])
def test_nan_and_infinity_are_refused_naming_file_and_place(tmp_path: Path, text: str, place: str,
                                                            token: str) -> None:
    path = tmp_path / "web.json"
    path.write_text(text)
    with pytest.raises(AbandonDataError) as raised:
        load_abandon_file(str(path))
    assert str(raised.value).startswith(f"{path}: {place}: {token}")


@pytest.mark.parametrize("text, place, what", [
    ('{"name": "web", "resources": {"a": {"resource_data": {"k": "ok\\ud800"}}}}',
     "resources.a.resource_data.k", "(\\ud800) at character 3 of a value"),
    ('{"name": "web", "x": ["\\udfff"]}', "x[0]", "(\\udfff) at character 1 of a value"),
    ('{"name": "web", "x": {"\\ud83d": 1}}', "x.\\ud83d", "(\\ud83d) at character 1 of a key"),
])
def test_a_lone_surrogate_is_refused_naming_file_and_place(tmp_path: Path, text: str, place: str,
                                                           what: str) -> None:
    """A JSON escape of half a surrogate pair reads as text no store can write (an
    export gave it back as ``?``): refused at adoption, as other malformed data is."""
    path = tmp_path / "web.json"
    path.write_text(text)
    with pytest.raises(AbandonDataError) as raised:
        load_abandon_file(str(path))
    message = str(raised.value)
    assert message.startswith(f"{path}: {place}: "), message
    message.encode("utf-8")  # the message itself is text any output can carry
    assert f"text that is not valid Unicode: a lone surrogate {what}: expected the JSON that " \
           "openstack stack abandon writes" in message


def test_a_whole_surrogate_pair_is_text() -> None:
    data = abandon_data()
    data["resources"]["group"]["metadata"] = {"emoji \U0001f600": "\U0001f600 and é"}
    assert read_abandon(json.loads(json.dumps(data)), "web.json").name == "web"


@pytest.mark.parametrize("depth", [150, 100_000])
def test_deep_nesting_is_refused_naming_the_file(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "web.json"
    path.write_text('{"name": "web", "x": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(AbandonDataError) as raised:
        load_abandon_file(str(path))
    message = str(raised.value)
    assert message.startswith(f"{path}: ") and "nested deeper than the maximum of 100 levels" in message
    assert "recursion" not in message


@pytest.mark.parametrize("name", ["../etc", "web\nSTACK", "\x1b[31mred", "1web", "a" * 256])
def test_a_stack_name_heat_would_refuse_is_refused(name: str) -> None:
    data = abandon_data()
    data["name"] = name
    message = refusal(data)
    assert message.startswith("web.json: name: Invalid stack name ")
    assert "must contain only alphanumeric or \"_-.\" characters" in message
    assert "\x1b" not in message and "\n" not in message


def test_a_nested_stack_name_with_control_characters_is_refused() -> None:
    data = abandon_data()
    data["resources"]["group"]["name"] = "web-\x1b[2Jgroup"
    assert refusal(data) == ("web.json: resources.group.name: stack name web-\\x1b[2Jgroup has "
                             "control characters: no stack of Heat has such a name")


def test_an_adoption_from_the_files_own_template_reaches_no_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Were a module resource to get past the type check (a type computed by a
    function, say), it would find no host: the definition is the file's."""
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.language import abandon

    monkeypatch.setattr(abandon, "foreign_types", lambda _data: [])
    template = {"heat_template_version": "2018-08-31", "resources": {"steal": SHELL}}
    data = stack("web", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
                 {"steal": leaf("steal", "Hotplay::Ansible::Module", "stolen")}, template)
    hosts = FakeHosts()
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        request = AdoptRequest("web", read_abandon(data, "web.json"), "web.json", host=hosts.host())
        with pytest.raises(AdoptRefused) as refused:
            adopt_stack(store, request, "test")
        assert "needs a host to run on" in str(refused.value)
        assert hosts.calls == [] and store.list_stacks() == []
    finally:
        store.close()
