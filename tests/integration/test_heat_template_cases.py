# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real public Heat templates, run unchanged, compared with what Heat returned.

The corpus is not shipped with the project (the templates are others' work): it is
the ``heat-templates-cases`` folder of the team's shared directory, one folder per
case with ``template.yaml``, optional ``params.json`` and ``expected.json`` (what
OpenStack Heat 27.0.1 returned on create; ``{"$len": N}`` stands for a random value).
It is read from ``$HOTPLAY_HEAT_CASES``, else from ``../shared/heat-templates-cases``
beside the clone; without either, this module is skipped with one line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO


def _corpus() -> Path:
    named = os.environ.get("HOTPLAY_HEAT_CASES")
    if named:  # asked for by name: its absence is an error, not a skip
        return Path(named)
    beside = REPO.parent / "shared" / "heat-templates-cases"
    if not beside.is_dir():
        pytest.skip("optional corpus of real Heat templates not found: set HOTPLAY_HEAT_CASES to a "
                    "heat-templates-cases folder, or put the team's shared/ folder beside the clone",
                    allow_module_level=True)
    return beside


CASES = _corpus() / "cases"
CASE_IDS = sorted(p.name for p in CASES.iterdir()) if CASES.is_dir() else []


def matches(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict) and set(expected) == {"$len"}:
        return isinstance(actual, str) and len(actual) == expected["$len"]
    if isinstance(expected, dict):
        return isinstance(actual, dict) and set(expected) == set(actual) and all(
            matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            matches(e, a) for e, a in zip(expected, actual))
    return expected == actual


def test_the_cases_are_there():
    assert CASE_IDS, f"no Heat template cases found under {CASES}"


@pytest.mark.parametrize("case", CASE_IDS)
def test_heat_template_case(case, run_tasks):
    folder = CASES / case
    step = json.loads((folder / "expected.json").read_text())["steps"][0]
    params_file = folder / "params.json"
    parameters = json.loads(params_file.read_text()) if params_file.exists() else {}
    # A stack name starts with a letter (Heat's rule), as Heat's runs of the cases did (c208-...).
    run = run_tasks([{
        "hotplay.stacks.stack": {"name": f"c{case}", "template": str(folder / "template.yaml"),
                                 "parameters": parameters},
        "register": "result",
    }])
    result = run.results["result"]
    assert result.get("stack_status") == step["status"], result
    # Outputs with random values Heat's record leaves out are not compared.
    for name, expected in step["outputs"].items():
        assert matches(expected, result["outputs"].get(name)), (name, result["outputs"])
    for left, right in step.get("outputs_equal", []):
        assert result["outputs"][left] == result["outputs"][right]
    statuses = {r["name"]: r["status"] for r in result["resources"]}
    for name, status in step.get("resources", {}).items():
        assert statuses.get(name) == status
    for name in step.get("absent_resources", []):
        assert name not in statuses
