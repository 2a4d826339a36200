# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A software deployment in Heat's abandon data adopted with no host reached: it
keeps Heat's deployment id and the output values its server reported (the
resource data ``output_values``, a JSON object as Heat keeps it); output values
that are not one refuse the adoption, naming the file and the place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
    AdoptRefused,
    AdoptRequest,
    adopt_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

from test_adopt import leaf, stack

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "script": {"type": "OS::Heat::SoftwareConfig", "properties": {
            "group": "script", "config": "#!/bin/sh\necho hi\n", "outputs": [{"name": "greeting"}]}},
        "deploy": {"type": "OS::Heat::SoftwareDeployment", "properties": {
            "config": {"get_resource": "script"}, "server": "localhost",
            "signal_transport": "NO_SIGNAL"}},
    },
    "outputs": {"greeting": {"value": {"get_attr": ["deploy", "greeting"]}},
                "stdout": {"value": {"get_attr": ["deploy", "deploy_stdout"]}}},
}
CONFIG_ID = "0b6a7e52-1c1d-4b8e-9a55-3f1d2c4e5a61"
DEPLOYMENT_ID = "5d3c9a10-8f2e-4e0b-b7a4-2c6e1f0d9b37"


def deployment_data(output_values: Any) -> dict[str, Any]:
    data = {"output_values": output_values, "deployment_status": "COMPLETE"}
    return stack("app", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", {
        "script": leaf("script", "OS::Heat::SoftwareConfig", CONFIG_ID),
        "deploy": leaf("deploy", "OS::Heat::SoftwareDeployment", DEPLOYMENT_ID, data),
    }, TEMPLATE)


def test_a_deployment_keeps_its_id_and_reported_outputs(tmp_path: Path) -> None:
    reported = json.dumps({"deploy_stdout": "hi\n", "deploy_stderr": "", "deploy_status_code": 0,
                           "greeting": "hello"})
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    abandoned = read_abandon(deployment_data(reported), "app.json")
    result = adopt_stack(store, AdoptRequest("app", abandoned, "app.json"), "test").as_dict()
    assert result["stack_status"] == "ADOPT_COMPLETE", result["stack_status_reason"]
    assert {r["name"]: r["physical_id"] for r in result["resources"]} == {
        "script": CONFIG_ID, "deploy": DEPLOYMENT_ID}
    assert result["outputs"] == {"greeting": "hello", "stdout": "hi\n"}


@pytest.mark.parametrize("output_values", ["not json", "[1, 2]"])
def test_output_values_not_a_json_object_are_named_and_nothing_written(
        tmp_path: Path, output_values: str) -> None:
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    abandoned = read_abandon(deployment_data(output_values), "app.json")
    with pytest.raises(AdoptRefused) as raised:
        adopt_stack(store, AdoptRequest("app", abandoned, "app.json"), "test")
    message = str(raised.value)
    assert message.startswith("app.json: stack app cannot be adopted: ")
    assert "resources.deploy: resource_data.output_values: expected a JSON object of the output " \
           "values the server reported" in message
    assert "Traceback" not in message
    assert store.list_stacks() == []
