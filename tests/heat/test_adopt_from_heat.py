# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stacks made by the real Heat adopted with hotplay.stacks.stack_adopt, through real
ansible-playbook: RandomString, TestResource, Value, a ResourceGroup with index_var
of provider templates that nest another provider template.  Every physical id and
generated value is kept; the same template applied changes nothing; a changed one
updates in place; revision 1 can be rolled back to; and the round trip hotplay ->
heat_abandon file -> Heat adopt -> hotplay adopt keeps the ids and values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

TEMPLATES = Path(__file__).resolve().parent / "templates"


def heat_inputs() -> tuple[Any, dict[str, Any], dict[str, str]]:
    """Template, environment and files as the openstack client sends them."""
    files = {name: (TEMPLATES / name).read_text() for name in ("thing.yaml", "leaf.yaml")}
    environment = yaml.safe_load((TEMPLATES / "env.yaml").read_text())
    return (TEMPLATES / "main.yaml").read_text(), environment, files


def in_heat(data: dict[str, Any], path: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """Every resource of Heat's abandon data by path: its physical id, and its
    resource data (None for a nested stack)."""
    found: dict[str, dict[str, Any]] = {}
    for name, entry in data["resources"].items():
        key = "/".join(path + (name,))
        if "resource_id" not in entry:  # a nested stack: its own abandon data
            found[key] = {"id": entry["id"], "data": None}
            found.update(in_heat(entry, path + (name,)))
        else:
            found[key] = {"id": entry["resource_id"], "data": entry["resource_data"]}
    return found


def ids(result: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["physical_id"] for r in result["resources"]}


def adopt_task(register: str, stack: str, **options: Any) -> dict[str, Any]:
    return {"hotplay.stacks.stack_adopt": {
        "cloud": "heat", "stack": stack, "template": str(TEMPLATES / "main.yaml"),
        "environment": [str(TEMPLATES / "env.yaml")], "nested_depth": 5, **options},
        "register": register}


def apply_task(register: str, name: str, **parameters: Any) -> dict[str, Any]:
    return {"hotplay.stacks.stack": {
        "name": name, "template": str(TEMPLATES / "main.yaml"),
        "environment": [str(TEMPLATES / "env.yaml")], "parameters": parameters, "nested_depth": 5},
        "register": register}


def test_a_heat_stack_is_adopted_then_managed_here(heat, cloud_env, run_tasks) -> None:
    heat.create("web", *heat_inputs())
    heat_resources = in_heat(heat.export("web"))
    run = run_tasks([
        {**adopt_task("preview", "web"), "check_mode": True},
        {"hotplay.stacks.stack_info": {}, "register": "before"},
        adopt_task("adopted", "web"),
        apply_task("same", "web"),
        apply_task("updated", "web", label="two"),
        {"hotplay.stacks.stack_rollback": {"name": "web", "revision": 1, "nested_depth": 5},
         "register": "rolled_back"},
    ], env=cloud_env)
    results = run.results
    assert ids(results["preview"]) == {path: r["id"] for path, r in heat_resources.items()}
    assert results["before"]["stacks"] == []  # check mode wrote nothing

    adopted = results["adopted"]
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert adopted["stack_id"] == heat.stack_id("web")
    assert ids(adopted) == {path: r["id"] for path, r in heat_resources.items()}
    password = heat_resources["password"]["data"]["value"]
    secrets = [heat_resources[f"group/{i}/leaf/rnd"]["data"]["value"] for i in ("0", "1")]
    assert adopted["outputs"] == {"password": password, "marker": f"one-{password}",
                                  "members": ["one-0", "one-1"], "secrets": secrets}

    assert results["same"]["changed"] is False and results["same"]["revision"] == 1

    updated = results["updated"]
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated.get("msg")
    assert ids(updated) == ids(adopted)  # in place: the same physical resources
    assert updated["outputs"] == {"password": password, "marker": f"two-{password}",
                                  "members": ["two-0", "two-1"], "secrets": secrets}

    rolled_back = results["rolled_back"]
    assert rolled_back["stack_status"] == "ROLLBACK_COMPLETE", rolled_back.get("msg")
    assert rolled_back["outputs"] == adopted["outputs"] and ids(rolled_back) == ids(adopted)


def test_round_trip_through_heat_keeps_ids_and_values(heat, cloud_env, run_tasks, tmp_path) -> None:
    exported = tmp_path / "trip.json"
    first = run_tasks([
        apply_task("created", "trip"),
        {"hotplay.stacks.stack_info": {"name": "trip", "format": "heat_abandon", "dest": str(exported)},
         "register": "info"},
    ], name="hotplay", env=cloud_env).results
    ours = in_heat(json.loads(exported.read_text()))

    # What `openstack stack adopt --adopt-file trip.json -e env.yaml trip` sends.
    data = json.loads(exported.read_text())
    heat.create("trip", None, data["environment"], data["files"], adopt=data)
    theirs = in_heat(heat.export("trip"))
    leaves = {path for path, r in ours.items() if r["data"] is not None}
    assert {p: theirs[p] for p in leaves} == {p: ours[p] for p in leaves}

    back = run_tasks([adopt_task("back", "trip", name="trip", store=f"sqlite:///{tmp_path / 'other.db'}")],
                     name="back", env=cloud_env).results["back"]
    assert back["stack_status"] == "ADOPT_COMPLETE", back.get("msg")
    created = first["created"]
    assert {p: i for p, i in ids(back).items() if p in leaves} == {
        p: i for p, i in ids(created).items() if p in leaves}
    assert back["outputs"] == created["outputs"]


def test_read_through_the_resource_api_adopts_the_same(heat, cloud_env, run_tasks, tmp_path) -> None:
    """``heat_data: resources``, for a Heat that gives out no abandon data: the same
    resources and generated values as from the export."""
    heat.create("api", *heat_inputs())
    exported = in_heat(heat.export("api"))
    read = run_tasks([adopt_task("read", "api", heat_data="resources")], env=cloud_env).results["read"]
    assert read["stack_status"] == "ADOPT_COMPLETE", read.get("msg")
    assert ids(read) == {path: r["id"] for path, r in exported.items()}
    password = exported["password"]["data"]["value"]
    secrets = [exported[f"group/{i}/leaf/rnd"]["data"]["value"] for i in ("0", "1")]
    assert read["outputs"] == {"password": password, "marker": f"one-{password}",
                               "members": ["one-0", "one-1"], "secrets": secrets}
