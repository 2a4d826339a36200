# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The first apply after stack_adopt changes nothing when it gives the stack's own
parameters: Heat's parameters (in its abandon data's environment) are the stack's.

The abandon data was recorded with the real Heat engine (heat_recorded/record.py):
a RandomString, a ResourceGroup of ``count: {get_param: n}`` RandomStrings, a Value
and a TestResource reading them, created with ``n: 2``.  The live round trip through
a Heat's API (``cloud``) is tests/heat/test_adopt_parameters.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

RECORDED = Path(__file__).resolve().parent / "heat_recorded"
TEMPLATE = str(RECORDED / "adopt_group_of_n.yaml")
ABANDON = str(RECORDED / "adopt_group_of_n.abandon.json")


def adopt(**options: Any) -> dict[str, Any]:
    return {"hotplay.stacks.stack_adopt": {"name": "moved", "abandon_file": ABANDON, **options},
            "register": "adopted"}


def apply(register: str, check: bool = False, **parameters: Any) -> dict[str, Any]:
    task: dict[str, Any] = {"hotplay.stacks.stack": {"name": "moved", "template": TEMPLATE,
                                                     "parameters": parameters},
                            "register": register}
    if check:
        task.update(check_mode=True, diff=True)
    return task


def ids(result: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["physical_id"] for r in result["resources"]}


# Heat's template recorded (no template given), or the user's file given to stack_adopt
# without parameters (it was refused: "parameters n differ").
@pytest.mark.parametrize("adopt_options", [{}, {"template": TEMPLATE}], ids=["heat-template", "own-template"])
def test_same_parameters_after_adoption_change_nothing(run_tasks, adopt_options) -> None:
    run = run_tasks([
        adopt(**adopt_options, nested_depth=2),
        apply("preview", check=True, n=2),
        apply("same", n=2),
        apply("grown", check=True, n=3),
    ])
    adopted, preview, same, grown = (run.results[k] for k in ("adopted", "preview", "same", "grown"))
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert adopted["parameters"]["n"] == 2

    assert preview["changed"] is False, preview["plan"]
    assert preview["plan"]["updated"] == [] and preview["plan"]["added"] == []
    assert "grp" in preview["plan"]["unchanged"]

    assert same["changed"] is False, same.get("plan")
    assert same["stack_status"] == "ADOPT_COMPLETE"  # no update ran
    assert same["revision"] == adopted["revision"]
    assert ids(same) == {k: v for k, v in ids(adopted).items() if "/" not in k}

    # The parameter is live: another count is a change (the group grows by one).
    assert grown["changed"] is True
    assert grown["plan"]["added"] == ["grp/2"]
