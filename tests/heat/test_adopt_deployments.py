# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A software deployment made by the real Heat, adopted onto the play's host
(localhost, the task's own connection): it keeps Heat's config and deployment
ids and the outputs its server reported; the same template applied runs nothing
on the host; a changed script runs there, as an UPDATE of the same deployment.

The peer Heat has no Nova and no agent on a server: Heat 27's ``server``
property has no constraint, so the deployment names the inventory host, and the
test reports the deployment's outputs through Heat's software deployments API
(``PUT /software_deployments/{id}``), as the agent on the server does."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from test_adopt_from_heat import TEMPLATES, ids, in_heat

TEMPLATE = TEMPLATES / "deploy.yaml"
# What the agent on the server would have reported after running the script.
REPORTED = {"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0, "greeting": "hello ran"}


def stack_task(register: str, root: Path, template: Path, **extra: Any) -> dict[str, Any]:
    return {"hotplay.stacks.stack": {"name": "dep", "template": str(template),
                                     "parameters": {"host": "localhost", "root": str(root)}, **extra},
            "register": register, "vars": host_vars(root)}


def host_vars(root: Path) -> dict[str, str]:
    return {"hotplay_state_dir": str(root.parent / "state"),
            "ansible_python_interpreter": sys.executable}


def test_deployment_adopted_then_rerun_only_when_its_script_changes(
        heat, cloud_env, run_tasks, tmp_path: Path) -> None:
    root = tmp_path / "host"
    root.mkdir()
    parameters = {"host": "localhost", "root": str(root)}
    stack_id = heat.create("dep", TEMPLATE.read_text(), {"parameters": parameters})
    in_heat_before = in_heat(heat.export("dep"))
    deployment_id = in_heat_before["deploy"]["id"]
    heat.call("PUT", f"/software_deployments/{deployment_id}",
              {"output_values": REPORTED, "status": "COMPLETE"})
    changed = tmp_path / "changed.yaml"
    changed.write_text(TEMPLATE.read_text().replace('echo "$word"', 'echo "again $word"'))

    run = run_tasks([
        {"hotplay.stacks.stack_adopt": {"cloud": "heat", "stack": "dep", "template": str(TEMPLATE),
                                        "parameters": parameters},
         "register": "adopted", "vars": host_vars(root)},
        stack_task("same", root, TEMPLATE),
        stack_task("updated", root, changed),
    ], env=cloud_env).results

    adopted = run["adopted"]
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert adopted["stack_id"] == stack_id
    assert ids(adopted) == {"script": in_heat_before["script"]["id"], "deploy": deployment_id}
    assert adopted["outputs"] == {"greeting": "hello ran", "status_code": 0}
    assert run["same"]["changed"] is False, run["same"].get("msg")
    updated = run["updated"]
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated.get("msg")
    assert ids(updated)["deploy"] == deployment_id  # in place: the same deployment
    assert ids(updated)["script"] != in_heat_before["script"]["id"]  # a new config
    assert updated["outputs"]["greeting"] == "hello ran"
    # Nothing ran on the host until the script changed; then it ran once.
    assert (root / "runs.txt").read_text() == "again ran\n"


def test_round_trip_through_heat_keeps_the_deployment_and_its_outputs(
        heat, cloud_env, run_tasks, tmp_path: Path) -> None:
    """hotplay runs the deployment on the host -> heat_abandon file -> Heat adopts it
    (its resource data keeps the outputs) -> hotplay adopts it back, in another
    store, with nothing run on the host again."""
    root = tmp_path / "host"
    root.mkdir()
    exported = tmp_path / "trip.json"
    first = run_tasks([
        stack_task("created", root, TEMPLATE),
        {"hotplay.stacks.stack_info": {"name": "dep", "format": "heat_abandon", "dest": str(exported)},
         "register": "info"},
    ], name="hotplay", env=cloud_env).results
    created = first["created"]
    assert created["stack_status"] == "CREATE_COMPLETE", created.get("msg")
    assert (root / "runs.txt").read_text() == "ran\n"

    data = json.loads(exported.read_text())  # what `openstack stack adopt --adopt-file` sends
    heat.create("deptrip", None, data["environment"], data["files"], adopt=data)
    assert in_heat(heat.export("deptrip"))["deploy"]["id"] == ids(created)["deploy"]

    parameters = {"host": "localhost", "root": str(root)}
    back = run_tasks([
        {"hotplay.stacks.stack_adopt": {"cloud": "heat", "stack": "deptrip", "name": "back",
                                        "template": str(TEMPLATE), "parameters": parameters,
                                        "store": f"sqlite:///{tmp_path / 'other.db'}"},
         "register": "back", "vars": host_vars(root)},
    ], name="back", env=cloud_env).results["back"]
    assert back["stack_status"] == "ADOPT_COMPLETE", back.get("msg")
    assert ids(back) == ids(created)
    assert back["outputs"] == created["outputs"] == {"greeting": "hello ran", "status_code": 0}
    assert (root / "runs.txt").read_text() == "ran\n"


def test_read_through_the_resource_api_keeps_the_outputs(heat, cloud_env, run_tasks, tmp_path: Path) -> None:
    """``heat_data: resources`` (no abandon data from Heat): the deployment's outputs
    come from Heat's software deployments API as well."""
    root = tmp_path / "host"
    root.mkdir()
    parameters = {"host": "localhost", "root": str(root)}
    heat.create("depapi", TEMPLATE.read_text(), {"parameters": parameters})
    deployment_id = in_heat(heat.export("depapi"))["deploy"]["id"]
    heat.call("PUT", f"/software_deployments/{deployment_id}",
              {"output_values": REPORTED, "status": "COMPLETE"})
    read = run_tasks([
        {"hotplay.stacks.stack_adopt": {"cloud": "heat", "stack": "depapi", "template": str(TEMPLATE),
                                        "parameters": parameters, "heat_data": "resources"},
         "register": "read", "vars": host_vars(root)},
    ], env=cloud_env).results["read"]
    assert read["stack_status"] == "ADOPT_COMPLETE", read.get("msg")
    assert ids(read)["deploy"] == deployment_id
    assert read["outputs"] == {"greeting": "hello ran", "status_code": 0}
    assert not (root / "runs.txt").exists()
