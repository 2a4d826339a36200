# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An update that gives an existing provider resource another template (another file,
directly or through the environment's resource_registry) that adds one resource,
through hotplay and through the real Heat engine, compared: Heat updates the
resource in place (both are its TemplateResource), so its preview (with
``show_nested``) lists as added only the new nested resource, the others unchanged,
and the update keeps them.  The generated cases never rename the provider file."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from heat_peer import HeatPeer, peer_folder, peer_venv  # noqa: E402
from run import run_cases  # noqa: E402

if not os.environ.get("HOTPLAY_HEAT_ENDPOINT") and (peer_folder() is None or peer_venv() is None):
    pytest.skip("the Heat peer is not there: put the team's shared/ folder beside the clone (or set "
                "HOTPLAY_HEAT_PEER) and run make heat-peer", allow_module_level=True)

THING = {
    "heat_template_version": "2018-08-31",
    "parameters": {"label": {"type": "string"}},
    "resources": {
        "inner": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "label"}}},
        "other": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}},
    },
    "outputs": {"label": {"value": {"get_attr": ["inner", "value"]}}},
}
THING_EXTRA = {**THING, "resources": {**THING["resources"], "extra": {
    "type": "OS::Heat::Value", "properties": {"value": "new"}}}}


def main(type_name: str) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "resources": {"thing": {"type": type_name, "properties": {"label": "a"}}},
            "outputs": {"label": {"value": {"get_attr": ["thing", "label"]}}}}


def step(type_name: str, files: dict[str, Any], registry: dict[str, str] | None = None) -> dict[str, Any]:
    return {"template": main(type_name), "files": files, "parameters": {},
            "environment": {"resource_registry": registry} if registry else None}


CASES = [
    # type: thing.yaml, then type: thing_v2.yaml
    {**step("thing.yaml", {"thing.yaml": THING}),
     "update": step("thing_v2.yaml", {"thing_v2.yaml": THING_EXTRA}), "mutation": "provider_file"},
    # Diff::Thing mapped to thing.yaml, then to thing_v2.yaml
    {**step("Diff::Thing", {"thing.yaml": THING}, {"Diff::Thing": "thing.yaml"}),
     "update": step("Diff::Thing", {"thing_v2.yaml": THING_EXTRA}, {"Diff::Thing": "thing_v2.yaml"}),
     "mutation": "provider_mapping"},
    # the same file, a new body
    {**step("thing.yaml", {"thing.yaml": THING}),
     "update": step("thing.yaml", {"thing.yaml": THING_EXTRA}), "mutation": "provider_body"},
]


@pytest.fixture(scope="module")
def endpoint():
    named = os.environ.get("HOTPLAY_HEAT_ENDPOINT")
    if named:
        yield named
        return
    folder, venv = peer_folder(), peer_venv()
    assert folder is not None and venv is not None
    peer = HeatPeer.start(folder, venv)
    try:
        yield peer.endpoint
    finally:
        peer.stop()


@pytest.mark.slow
def test_another_provider_template_updates_in_place_as_heat_does(endpoint) -> None:
    outcomes = run_cases(CASES, endpoint, playbook_every=2)
    assert [o["verdict"] for o in outcomes] == ["same"] * len(outcomes), [
        (o["case"]["mutation"], o["side"], o["differences"]) for o in outcomes if o["verdict"] != "same"]
    for outcome in (o for o in outcomes if o["side"] == "engine"):  # the playbook side has none
        preview = outcome["hotplay"][1]["preview"]
        assert preview["added"] == ["thing/extra"], (outcome["case"]["mutation"], preview)
        assert preview["updated"] == ["thing"] and preview["replaced"] == []
        assert sorted(preview["unchanged"]) == ["thing/inner", "thing/other"]
