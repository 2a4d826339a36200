# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's abandon data read into records (language.abandon), and a stack adopted
from it into a store (operations.adopt), with no Heat: the data is written here in
Heat's format (heat/engine/stack.py and resource.py ``prepare_abandon``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import (
    AbandonDataError,
    load_abandon_file,
    read_abandon,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
    AdoptRefused,
    AdoptRequest,
    adopt_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"label": {"type": "string", "default": "one"}},
    "resources": {
        "password": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
        "marker": {"type": "OS::Heat::TestResource",
                   "properties": {"value": {"get_attr": ["password", "value"]}}},
        "group": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "index_var": "%i%",
            "resource_def": {"type": "OS::Heat::Value", "properties": {"value": "v%i%"}}}},
    },
    "outputs": {"password": {"value": {"get_attr": ["password", "value"]}},
                "members": {"value": {"get_attr": ["group", "value"]}}},
}


def leaf(name: str, type_name: str, resource_id: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "resource_id": resource_id, "type": type_name, "action": "CREATE",
            "status": "COMPLETE", "metadata": {}, "resource_data": data or {}}


def stack(name: str, stack_id: str, resources: dict[str, Any], template: Any = None) -> dict[str, Any]:
    return {"name": name, "id": stack_id, "action": "CREATE", "status": "COMPLETE",
            "template": template or {}, "environment": {"parameters": {}}, "files": {},
            "resources": resources, "project_id": "admin", "stack_user_project_id": "p", "tags": []}


def abandon_data() -> dict[str, Any]:
    members = stack("web-group-abc", "11111111-2222-3333-4444-555555555555", {
        "0": leaf("0", "OS::Heat::Value", "web-group-abc-0-x"),
        "1": leaf("1", "OS::Heat::Value", "web-group-abc-1-y"),
    })
    return stack("web", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", {
        "password": leaf("password", "OS::Heat::RandomString", "web-password-p", {"value": "Gh7rT2xq"}),
        "marker": leaf("marker", "OS::Heat::TestResource", "web-marker-m", {"value": "Gh7rT2xq"}),
        "group": members,
    }, TEMPLATE)


def test_abandon_data_read_to_any_depth() -> None:
    abandoned = read_abandon(abandon_data(), "web.json")
    assert abandoned.name == "web"
    assert abandoned.resources["password"].data == {"value": "Gh7rT2xq"}
    group = abandoned.resources["group"]
    assert group.stack is not None and group.resource_id == "11111111-2222-3333-4444-555555555555"
    assert [("/".join(p), r.resource_id) for p, r in abandoned.walk()][:3] == [
        ("group", "11111111-2222-3333-4444-555555555555"),
        ("group/0", "web-group-abc-0-x"), ("group/1", "web-group-abc-1-y")]


@pytest.mark.parametrize("change, place, expected", [
    (lambda d: d.pop("template"), "(top level)", "missing template"),
    (lambda d: d.update(resources=[]), "resources", "expected a mapping, got a list"),
    (lambda d: d["resources"]["password"].update(resource_id=None), "resources.password",
     "has no physical resource"),
    (lambda d: d["resources"]["group"]["resources"]["1"].update(type=7), "resources.group.resources.1.type",
     "expected a non-empty string"),
    (lambda d: d["resources"]["marker"].update(resource_data="x"), "resources.marker.resource_data",
     "expected a mapping, got a string"),
    (lambda d: d.update(files={"a.yaml": 3}), "files.a.yaml", "expected the file's text"),
])
def test_bad_abandon_data_names_file_and_place(change: Any, place: str, expected: str) -> None:
    data = abandon_data()
    change(data)
    with pytest.raises(AbandonDataError) as raised:
        read_abandon(data, "web.json")
    assert str(raised.value).startswith(f"web.json: {place}: ")
    assert expected in str(raised.value)


def test_a_file_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "web.json"
    path.write_text('{"name": "web",\n  oops}')
    with pytest.raises(AbandonDataError, match=rf"^{path}: not JSON \(.* at line 2 column 3\)"):
        load_abandon_file(str(path))


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(AbandonDataError, match="cannot read the abandon file"):
        load_abandon_file(str(tmp_path / "nothing.json"))


def _store(tmp_path: Path) -> Any:
    return open_store(f"sqlite:///{tmp_path / 's.db'}")


def test_adopted_stack_keeps_physical_ids_and_generated_values(tmp_path: Path) -> None:
    store = _store(tmp_path)
    result = adopt_stack(store, AdoptRequest("web", read_abandon(abandon_data(), "web.json"), "web.json",
                                             nested_depth=2), "test").as_dict()
    assert result["stack_status"] == "ADOPT_COMPLETE" and result["revision"] == 1
    assert result["stack_id"] == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
    ids = {r["name"]: r["physical_id"] for r in result["resources"]}
    assert ids == {"password": "web-password-p", "marker": "web-marker-m",
                   "group": "11111111-2222-3333-4444-555555555555",
                   "group/0": "web-group-abc-0-x", "group/1": "web-group-abc-1-y"}
    assert result["outputs"] == {"password": "Gh7rT2xq", "members": ["v0", "v1"]}


def test_unmanaged_types_are_named_at_once_and_nothing_written(tmp_path: Path) -> None:
    data = abandon_data()
    data["resources"]["db"] = leaf("db", "OS::Trove::Instance", "9f0c")
    data["resources"]["group"]["resources"]["1"]["type"] = "OS::Zaqar::Queue"
    store = _store(tmp_path)
    with pytest.raises(AdoptRefused) as raised:
        adopt_stack(store, AdoptRequest("web", read_abandon(data, "web.json"), "web.json"), "test")
    assert str(raised.value) == (
        "web.json: stack web has resources of types hotplay.stacks cannot adopt: "
        "db (OS::Trove::Instance), group/1 (OS::Zaqar::Queue); nothing was written "
        "(an environment mapping them to provider templates adopts them into those; "
        "unmanaged: read_only keeps them as read-only resources)")
    assert store.list_stacks() == []


def test_resources_that_do_not_match_the_template_refuse_the_adoption(tmp_path: Path) -> None:
    data = abandon_data()
    del data["resources"]["group"]["resources"]["1"]  # Heat's group lost a member
    store = _store(tmp_path)
    with pytest.raises(AdoptRefused, match="the nested stack group does not have the resources "
                                           r"Heat's has \(not in Heat's stack: 1\)"):
        adopt_stack(store, AdoptRequest("web", read_abandon(data, "web.json"), "web.json"), "test")
    assert store.list_stacks() == []


def test_check_mode_writes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    result = adopt_stack(store, AdoptRequest("web", read_abandon(abandon_data(), "web.json"), "web.json",
                                             check_mode=True), "test").as_dict()
    assert [r["physical_id"] for r in result["resources"]][:2] == ["web-password-p", "web-marker-m"]
    assert store.list_stacks() == []


def test_a_template_other_than_heats_is_refused(tmp_path: Path) -> None:
    other = dict(TEMPLATE, resources={**TEMPLATE["resources"], "extra": {"type": "OS::Heat::None"}})
    path = tmp_path / "web.yaml"
    path.write_text(json.dumps(other))
    store = _store(tmp_path)
    with pytest.raises(AdoptRefused, match=f"the template {path} is not the one stack web runs in Heat"):
        adopt_stack(store, AdoptRequest("web", read_abandon(abandon_data(), "web.json"), "web.json",
                                        template=str(path)), "test")
    assert store.list_stacks() == []


def test_unmanaged_types_kept_read_only(tmp_path: Path) -> None:
    data = abandon_data()
    data["template"] = {**TEMPLATE, "resources": {
        **TEMPLATE["resources"],
        "db": {"type": "OS::Trove::Instance", "properties": {"flavor": "m1", "size": 1}}},
        "outputs": {**TEMPLATE["outputs"], "db": {"value": {"get_resource": "db"}},
                    "address": {"value": {"get_attr": ["db", "hostname"]}}}}
    data["resources"]["db"] = leaf("db", "OS::Trove::Instance", "9f0c-db", {"meta": "kept"})
    store = _store(tmp_path)
    result = adopt_stack(store, AdoptRequest("web", read_abandon(data, "web.json"), "web.json",
                                             unmanaged="read_only"), "test").as_dict()
    db = [r for r in result["resources"] if r["name"] == "db"][0]
    assert db["physical_id"] == "9f0c-db" and db["status"] == "ADOPT_COMPLETE"
    assert result["outputs"]["db"] == "9f0c-db" and result["outputs"]["address"] is None
    stored = {r.state.name: r.state for r in store.resources(result["stack_id"])}
    assert stored["db"].implementation == "Hotplay::ReadOnly"
    assert stored["db"].data == {"meta": "kept"}


def test_hidden_values_are_sealed_and_the_same_apply_changes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
        ApplyRequest,
        apply_stack,
    )

    monkeypatch.setenv("HOTPLAY_STORE_KEY", "correct horse battery")
    template = {"heat_template_version": "2018-08-31",
                "parameters": {"pw": {"type": "string", "hidden": True}},
                "resources": {"t": {"type": "OS::Heat::TestResource",
                                    "properties": {"value": {"get_param": "pw"}}}}}
    path = tmp_path / "t.yaml"
    path.write_text(json.dumps(template))
    data = stack("h", "dddddddd-0000-0000-0000-000000000001",
                 {"t": leaf("t", "OS::Heat::TestResource", "h-t-x", {"value": "s3cret-value"})}, template)
    data["environment"] = {"parameters": {"pw": "s3cret-value"}}
    request = AdoptRequest("h", read_abandon(data, "h.json"), "h.json", template=str(path),
                           parameters={"pw": "s3cret-value"})
    adopt_stack(_store(tmp_path), request, "test")
    again = apply_stack(_store(tmp_path), ApplyRequest("h", template=str(path), parameters={"pw": "s3cret-value"}),
                        "test")
    assert again.changed is False
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))  # the WAL too
    assert b"dddddddd" in stored and b"s3cret-value" not in stored
