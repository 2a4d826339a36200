# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWS::CloudFormation::Stack side by side with the real Heat: the same parent
template, whose child both read from the same URL (a server on localhost), gives
the same status, the same ``Outputs.NAME`` value and a reference of the same form
(the child's ARN); a URL that cannot be read is refused with Heat's words."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from served_files import ServedFiles, served_files

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

CHILD = {
    "heat_template_version": "2018-08-31",
    "parameters": {"size": {"type": "string"}},
    "resources": {"value": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "size"}}}},
    "outputs": {"echoed": {"value": {"get_attr": ["value", "value"]}}},
}


def parent(url: str) -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "resources": {"nested": {"type": "AWS::CloudFormation::Stack", "properties": {
            "TemplateURL": url, "Parameters": {"size": "3"}, "TimeoutInMinutes": 5}}},
        "outputs": {"echoed": {"value": {"get_attr": ["nested", "Outputs.echoed"]}},
                    "ref": {"value": {"get_resource": "nested"}}},
    }


@pytest.fixture(scope="module")
def served() -> Iterator[ServedFiles]:
    with served_files() as files:
        files.files["child.yaml"] = yaml.safe_dump(CHILD)
        yield files


def _here(tmp_path: Path, name: str, template: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(template))
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        return apply_stack(store, ApplyRequest(name=name, template=str(path)), "job").as_dict()
    finally:
        store.close()


def test_the_child_from_the_url_gives_what_heat_gives(heat: Any, served: ServedFiles, tmp_path: Path) -> None:
    name = f"cfn{uuid.uuid4().hex[:8]}"
    template = parent(f"{served.url}/child.yaml")
    stack_id = heat.create(name, template)
    shown = heat.call("GET", f"/stacks/{name}/{stack_id}")["stack"]
    theirs = {o["output_key"]: o.get("output_value") for o in shown["outputs"]}
    ours = _here(tmp_path, name, template)
    assert (ours["stack_status"], shown["stack_status"]) == ("CREATE_COMPLETE", "CREATE_COMPLETE")
    assert ours["outputs"]["echoed"] == theirs["echoed"] == "3"
    arn = rf"arn:openstack:heat::[^:]+:stacks/{name}-nested-[a-zA-Z0-9]{{12}}/[0-9a-f-]{{36}}"
    assert re.fullmatch(arn, theirs["ref"]), theirs["ref"]
    assert re.fullmatch(arn, ours["outputs"]["ref"]), ours["outputs"]["ref"]


@pytest.mark.parametrize("url", ["file:///etc/hostname", "{base}/missing.yaml"])
def test_a_url_that_cannot_be_read_is_refused_as_heat_refuses_it(
        heat: Any, served: ServedFiles, tmp_path: Path, url: str) -> None:
    url = url.format(base=served.url)
    name = f"cfn{uuid.uuid4().hex[:8]}"
    with pytest.raises(AssertionError) as refused_by_heat:  # Heat's API: 400
        heat.call("POST", "/stacks", {"stack_name": name, "template": parent(url), "disable_rollback": True})
    with pytest.raises(StackValidationFailed) as refused_here:
        _here(tmp_path, name, parent(url))
    said_here = str(refused_here.value).split("resources.nested<nested_stack>: ", 1)[1]
    assert said_here.startswith("Could not fetch remote template")
    assert said_here in str(refused_by_heat.value), (said_here, str(refused_by_heat.value))
