# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stack the real Heat made with parameters, adopted through its API (``cloud``)
with the same template, then applied with the same parameters: nothing changes, in
check mode nor applied (Heat's parameters are the stack's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TEMPLATE = Path(__file__).resolve().parents[1] / "integration" / "heat_recorded" / "adopt_group_of_n.yaml"


def apply(register: str, check: bool = False) -> dict[str, Any]:
    task: dict[str, Any] = {"hotplay.stacks.stack": {
        "name": "counted", "template": str(TEMPLATE), "parameters": {"n": 2}}, "register": register}
    if check:
        task["check_mode"] = True
    return task


def test_heat_parameters_are_the_adopted_stacks(heat, cloud_env, run_tasks) -> None:
    template = TEMPLATE.read_text(encoding="utf-8")
    stack_id = heat.call("POST", "/stacks", {"stack_name": "counted", "template": template,
                                             "parameters": {"n": 2}, "disable_rollback": True})
    heat.wait("counted", stack_id["stack"]["id"])
    run = run_tasks([
        {"hotplay.stacks.stack_adopt": {"cloud": "heat", "stack": "counted", "template": str(TEMPLATE)},
         "register": "adopted"},
        apply("preview", check=True),
        apply("same"),
    ], env=cloud_env)
    adopted, preview, same = (run.results[k] for k in ("adopted", "preview", "same"))
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert preview["changed"] is False and preview["plan"]["updated"] == [], preview.get("plan")
    assert same["changed"] is False and same["stack_status"] == "ADOPT_COMPLETE", same.get("msg")
    heat.delete("counted")
