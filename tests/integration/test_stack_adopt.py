# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hotplay.stacks.stack_adopt through real ansible-playbook, from an abandon file
written here in Heat's format (the tests against a real Heat are in tests/heat):
adopt, apply the same template (nothing changes), update in place, roll back to
revision 1, and refusals that write nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import write_template

MAIN = """\
    heat_template_version: 2018-08-31
    parameters:
      label: {type: string, default: one}
    resources:
      password:
        type: OS::Heat::RandomString
        properties: {length: 12}
      marker:
        type: OS::Heat::TestResource
        properties:
          value: {list_join: ["-", [{get_param: label}, {get_attr: [password, value]}]]}
      group:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          index_var: "%i%"
          resource_def:
            type: My::Thing
            properties: {label: {get_param: label}, index: "%i%"}
    outputs:
      marker: {value: {get_attr: [marker, output]}}
      members: {value: {get_attr: [group, value]}}
    """
THING = """\
    heat_template_version: 2018-08-31
    parameters:
      label: {type: string}
      index: {type: string}
    resources:
      inner:
        type: OS::Heat::Value
        properties:
          value: {list_join: ["-", [{get_param: label}, {get_param: index}]]}
    outputs:
      value: {value: {get_attr: [inner, value]}}
    """


def heat_abandon(folder: Path) -> dict[str, Any]:
    """What Heat's abandon of that stack looks like (files keyed by URL, as the
    openstack client sends them; the nested stacks' own abandon data)."""
    import yaml

    thing_url = f"file://{folder / 'thing.yaml'}"

    def resource(name: str, type_name: str, resource_id: str, data: dict | None = None) -> dict:
        return {"name": name, "resource_id": resource_id, "type": type_name, "action": "CREATE",
                "status": "COMPLETE", "metadata": {}, "resource_data": data or {}}

    def stack(name: str, stack_id: str, resources: dict, template: dict | None = None) -> dict:
        return {"name": name, "id": stack_id, "action": "CREATE", "status": "COMPLETE",
                "template": template or {}, "environment": {}, "files": {}, "resources": resources,
                "project_id": "admin", "stack_user_project_id": "x", "tags": []}

    members = {
        index: stack(f"web-group-g-{index}-m", f"0000000{index}-0000-0000-0000-00000000000{index}",
                     {"inner": resource("inner", "OS::Heat::Value", f"web-group-g-{index}-m-inner-v")})
        for index in ("0", "1")
    }
    data = stack("web", "aaaaaaaa-0000-0000-0000-000000000001", {
        "password": resource("password", "OS::Heat::RandomString", "web-password-r",
                             {"value": "K9vQ2mX7pL4z"}),
        "marker": resource("marker", "OS::Heat::TestResource", "web-marker-t",
                           {"value": "one-K9vQ2mX7pL4z"}),
        "group": stack("web-group-g", "bbbbbbbb-0000-0000-0000-000000000002", members),
    }, yaml.safe_load((folder / "main.yaml").read_text()))
    data["template"]["heat_template_version"] = "2018-08-31"  # Heat keeps the text
    data["environment"] = {"parameters": {}, "resource_registry": {"My::Thing": thing_url}}
    data["files"] = {thing_url: (folder / "thing.yaml").read_text()}
    data["tags"] = ["env=prod", "team-web"]
    return data


def write_abandon(folder: Path, data: dict[str, Any]) -> Path:
    path = folder / "web.json"
    path.write_text(json.dumps(data))
    return path


def adopt(register: str, folder: Path, **options: Any) -> dict[str, Any]:
    return {"hotplay.stacks.stack_adopt": {
        "abandon_file": str(folder / "web.json"), "template": str(folder / "main.yaml"),
        "environment": [str(folder / "env.yaml")], "nested_depth": 2, **options}, "register": register}


def apply(register: str, folder: Path, **parameters: str) -> dict[str, Any]:
    return {"hotplay.stacks.stack": {"name": "web", "template": str(folder / "main.yaml"),
                                     "environment": [str(folder / "env.yaml")],
                                     "parameters": parameters, "nested_depth": 2},
            "register": register}


def prepare(folder: Path) -> None:
    write_template(folder, "main.yaml", MAIN)
    write_template(folder, "thing.yaml", THING)
    (folder / "env.yaml").write_text("resource_registry:\n  My::Thing: thing.yaml\n")
    write_abandon(folder, heat_abandon(folder))


def ids(result: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["physical_id"] for r in result["resources"]}


def test_adopt_apply_update_and_roll_back(run_tasks, tmp_path: Path) -> None:
    prepare(tmp_path)
    run = run_tasks([
        {**adopt("preview", tmp_path), "check_mode": True},
        {"hotplay.stacks.stack_info": {"name": "web"}, "register": "after_preview"},
        adopt("adopted", tmp_path),
        apply("same", tmp_path),
        apply("updated", tmp_path, label="two"),
        {"hotplay.stacks.stack_rollback": {"name": "web", "revision": 1, "nested_depth": 2},
         "register": "rolled_back"},
    ])
    results = run.results
    assert results["preview"]["changed"] is True and not results["preview"]["failed"]
    assert ids(results["preview"])["group/1/inner"] == "web-group-g-1-m-inner-v"
    assert results["after_preview"]["exists"] is False  # check mode wrote nothing

    adopted = results["adopted"]
    assert adopted["stack_status"] == "ADOPT_COMPLETE" and adopted["revision"] == 1
    assert adopted["stack_id"] == "aaaaaaaa-0000-0000-0000-000000000001"
    assert adopted["stack"]["tags"] == ["env=prod", "team-web"]  # Heat's, kept
    heat_ids = ids(adopted)
    assert heat_ids["password"] == "web-password-r" and heat_ids["group"] == "bbbbbbbb-0000-0000-0000-000000000002"
    assert heat_ids["group/0"] == "00000000-0000-0000-0000-000000000000"
    assert adopted["outputs"] == {"marker": "one-K9vQ2mX7pL4z", "members": ["one-0", "one-1"]}

    same = results["same"]
    assert same["changed"] is False and same["revision"] == 1, same.get("plan")

    updated = results["updated"]
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    assert updated["outputs"] == {"marker": "two-K9vQ2mX7pL4z", "members": ["two-0", "two-1"]}
    assert ids(updated) == heat_ids  # updated in place: the same physical resources
    assert updated["stack"]["tags"] == ["env=prod", "team-web"]  # a task giving none keeps them
    updated_names = {e["resource_name"] for e in updated["events"] if e["action"] == "UPDATE"}
    assert {"marker", "group"} <= updated_names and "password" not in updated_names

    rolled_back = results["rolled_back"]
    assert rolled_back["stack_status"] == "ROLLBACK_COMPLETE", rolled_back.get("msg")
    assert rolled_back["outputs"] == adopted["outputs"]
    assert ids(rolled_back) == heat_ids


def test_bad_abandon_file_and_unmanaged_types_write_nothing(run_tasks, tmp_path: Path) -> None:
    prepare(tmp_path)
    data = heat_abandon(tmp_path)
    data["resources"]["group"]["resources"]["1"]["resources"]["inner"]["resource_id"] = ""
    write_abandon(tmp_path, data)
    first = run_tasks([adopt("no_id", tmp_path)], name="no_id").results["no_id"]
    data = heat_abandon(tmp_path)
    data["tags"] = ["env=prod,team-web"]
    write_abandon(tmp_path, data)
    comma = run_tasks([adopt("comma", tmp_path)], name="comma").results["comma"]
    data = heat_abandon(tmp_path)
    data["resources"]["db"] = {**data["resources"]["marker"], "type": "OS::Trove::Instance"}
    write_abandon(tmp_path, data)
    run = run_tasks([adopt("server", tmp_path),
                     {"hotplay.stacks.stack_info": {}, "register": "listed"}], name="server")
    assert first["failed"] is True
    assert first["msg"] == (
        f"{tmp_path / 'web.json'}: resources.group.resources.1.resources.inner: resource inner has no "
        "physical resource (resource_id is empty; Heat has it CREATE_COMPLETE): only a resource Heat "
        "created can be adopted")
    assert comma["failed"] is True
    assert comma["msg"] == (f"{tmp_path / 'web.json'}: Heat's stack web: tags[0] ('env=prod,team-web') is not a "
                            "valid tag: a tag is a non-empty text of at most 80 characters without a comma "
                            "(Heat's stack tags)")
    server = run.results["server"]
    assert server["failed"] is True and "Traceback" not in run.stdout
    assert server["msg"] == (f"{tmp_path / 'web.json'}: stack web has resources of types hotplay.stacks "
                             "cannot adopt: db (OS::Trove::Instance); nothing was written "
                             "(an environment mapping them to provider templates adopts them into those; "
                             "unmanaged: read_only keeps them as read-only resources)")
    assert run.results["listed"]["stacks"] == []


def test_export_as_heat_abandon_data_adopts_back_the_same(run_tasks, tmp_path: Path) -> None:
    prepare(tmp_path)
    exported = tmp_path / "exported.json"
    run = run_tasks([
        adopt("adopted", tmp_path),
        apply("updated", tmp_path, label="two"),
        {"hotplay.stacks.stack_info": {"name": "web", "format": "heat_abandon", "dest": str(exported)},
         "register": "info"},
        {"hotplay.stacks.stack_adopt": {"abandon_file": str(exported), "name": "again"},
         "register": "same_store"},
        {"hotplay.stacks.stack_adopt": {"abandon_file": str(exported), "name": "again",
                                        "nested_depth": 2, "store": f"sqlite:///{tmp_path / 'other.db'}"},
         "register": "again"},
    ])
    data = run.results["info"]["heat_abandon"]
    assert json.loads(exported.read_text()) == data and oct(exported.stat().st_mode)[-3:] == "600"
    assert data["resources"]["password"]["resource_data"] == {"value": "K9vQ2mX7pL4z"}
    assert data["resources"]["marker"]["resource_data"] == {"value": "two-K9vQ2mX7pL4z"}
    assert data["resources"]["group"]["id"] == "bbbbbbbb-0000-0000-0000-000000000002"
    assert data["environment"]["parameters"] == {"label": "two"}
    assert run.results["same_store"]["msg"] == (
        "the store has Heat's stack web (aaaaaaaa-0000-0000-0000-000000000001) already, as stack web: "
        "its resources are managed from there")
    again = run.results["again"]
    assert again["stack_status"] == "ADOPT_COMPLETE", again
    assert ids(again) == ids(run.results["updated"])
    assert again["outputs"] == run.results["updated"]["outputs"]


SERVER = """\
    heat_template_version: 2018-08-31
    parameters:
      flavor: {type: string, default: m1.small}
    resources:
      server:
        type: OS::Trove::Instance
        properties: {image: cirros, flavor: {get_param: flavor}}
      note:
        type: OS::Heat::TestResource
        properties:
          value: {get_resource: server}
    outputs:
      note: {value: {get_attr: [note, output]}}
    """


def test_unmanaged_types_kept_read_only(run_tasks, tmp_path: Path) -> None:
    write_template(tmp_path, "server.yaml", SERVER)
    (tmp_path / "read-only.yaml").write_text("resource_registry:\n  OS::Trove::Instance: Hotplay::ReadOnly\n")
    import yaml

    template = yaml.safe_load((tmp_path / "server.yaml").read_text())
    template["heat_template_version"] = "2018-08-31"
    entry = {"action": "CREATE", "status": "COMPLETE", "metadata": {}}
    (tmp_path / "vm.json").write_text(json.dumps({
        "name": "vm", "id": "cccccccc-0000-0000-0000-000000000003", "action": "CREATE", "status": "COMPLETE",
        "template": template, "environment": {}, "files": {}, "resources": {
            "server": {"name": "server", "resource_id": "5d3e-nova", "type": "OS::Trove::Instance",
                       "resource_data": {}, **entry},
            "note": {"name": "note", "resource_id": "vm-note-n", "type": "OS::Heat::TestResource",
                     "resource_data": {"value": "5d3e-nova"}, **entry}}}))
    options = {"template": str(tmp_path / "server.yaml"), "environment": [str(tmp_path / "read-only.yaml")]}
    run = run_tasks([
        {"hotplay.stacks.stack_adopt": {"abandon_file": str(tmp_path / "vm.json"), "unmanaged": "read_only",
                                        **options}, "register": "adopted"},
        {"hotplay.stacks.stack": {"name": "vm", **options}, "register": "same"},
        {"hotplay.stacks.stack": {"name": "vm", "parameters": {"flavor": "m1.large"}, **options},
         "register": "resized"},
        {"hotplay.stacks.stack": {"name": "vm", "state": "absent"}, "register": "deleted"},
    ])
    adopted = run.results["adopted"]
    assert adopted.get("stack_status") == "ADOPT_COMPLETE", adopted
    assert adopted["read_only_types"] == ["OS::Trove::Instance"]
    assert ids(adopted) == {"server": "5d3e-nova", "note": "vm-note-n"}
    assert adopted["outputs"] == {"note": "5d3e-nova"}
    assert run.results["same"]["changed"] is False
    resized = run.results["resized"]
    assert resized["failed"] is True and resized["stack_status"] == "UPDATE_FAILED"
    assert ("server (OS::Trove::Instance) is read-only here: it was adopted from Heat and hotplay.stacks "
            "cannot manage a OS::Trove::Instance, so it cannot be changed") in resized["msg"]
    assert run.results["deleted"]["changed"] is True and not run.results["deleted"]["failed"]
