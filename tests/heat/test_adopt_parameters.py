# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stack the real Heat made with parameters, adopted with the same template, then
applied with the same parameters: nothing changes, in check mode nor applied (Heat's
parameters are the stack's).  Adopted through Heat's API (``cloud``) and from the
abandon data Heat hands over (``abandon_file``), with the parameter's default other
than its value and equal to it (issue 40: ``default: 2`` given ``n: 2`` explicitly
was reported to update the group after an adoption from the abandon file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

TEMPLATE = Path(__file__).resolve().parents[1] / "integration" / "heat_recorded" / "adopt_group_of_n.yaml"


def apply(name: str, template: Path, register: str, check: bool = False) -> dict[str, Any]:
    task: dict[str, Any] = {"hotplay.stacks.stack": {
        "name": name, "template": str(template), "parameters": {"n": 2}}, "register": register}
    if check:
        task["check_mode"] = True
    return task


@pytest.mark.parametrize(("default", "source"), [(1, "api"), (2, "api"), (2, "abandon_file")],
                         ids=["default-1-api", "default-2-api", "default-2-abandon-file"])
def test_heat_parameters_are_the_adopted_stacks(heat, cloud_env, run_tasks, tmp_path, default, source) -> None:
    template = tmp_path / "counted.yaml"
    template.write_text(TEMPLATE.read_text(encoding="utf-8").replace(
        "n: {type: number, default: 1}", f"n: {{type: number, default: {default}}}"))
    name = f"counted-{default}-{source.replace('_', '-')}"
    stack_id = heat.call("POST", "/stacks", {"stack_name": name, "template": template.read_text(),
                                             "parameters": {"n": 2}, "disable_rollback": True})["stack"]["id"]
    heat.wait(name, stack_id)
    if source == "api":
        adopt = {"cloud": "heat", "stack": name, "template": str(template)}
    else:
        # `openstack stack abandon`: Heat forgets the stack and hands over its data.
        abandon_file = tmp_path / "abandoned.json"
        abandon_file.write_text(json.dumps(heat.call("DELETE", f"/stacks/{name}/{stack_id}/abandon")))
        adopt = {"name": name, "abandon_file": str(abandon_file), "template": str(template),
                 "parameters": {"n": 2}}
    run = run_tasks([
        {"hotplay.stacks.stack_adopt": adopt, "register": "adopted"},
        apply(name, template, "preview", check=True),
        apply(name, template, "same"),
    ], env=cloud_env)
    adopted, preview, same = (run.results[k] for k in ("adopted", "preview", "same"))
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert preview["changed"] is False and preview["plan"]["updated"] == [], (json.dumps(preview.get("plan"))[:3000], adopted.get("parameters"))
    assert same["changed"] is False and same["stack_status"] == "ADOPT_COMPLETE", same.get("msg")
    assert same["revision"] == adopted["revision"]
    if source == "api":
        heat.delete(name)
    else:
        assert heat.gone(name)
