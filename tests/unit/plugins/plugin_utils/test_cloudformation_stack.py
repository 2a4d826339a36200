# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWS::CloudFormation::Stack as Heat 27's NestedStack (heat/engine/resources/aws/cfn/
stack.py): the child template read from ``TemplateURL`` (a real HTTP server on
localhost here) at validation, create and update; ``Outputs.NAME`` attributes; the
child's ARN as its reference; Heat's messages when the URL cannot be read, with
nothing written.  Side by side with the real Heat: tests/heat/test_cfn_stack_with_heat.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from served_files import ServedFiles, served_files

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

CHILD = """\
heat_template_version: 2018-08-31
parameters:
  size: {type: string}
resources:
  value: {type: OS::Heat::Value, properties: {value: {get_param: size}}}
outputs:
  echoed: {value: {get_attr: [value, value]}}
"""

PARENT = """\
heat_template_version: 2018-08-31
parameters:
  url: {type: string}
  size: {type: string, default: "3"}
resources:
  nested:
    type: AWS::CloudFormation::Stack
    properties:
      TemplateURL: {get_param: url}
      Parameters: {size: {get_param: size}}
      TimeoutInMinutes: 5
outputs:
  echoed: {value: {get_attr: [nested, Outputs.echoed]}}
  ref: {value: {get_resource: nested}}
"""


@pytest.fixture
def served() -> Iterator[ServedFiles]:
    with served_files() as files:
        yield files


def _apply(tmp_path: Path, **parameters: Any) -> dict[str, Any]:
    template = tmp_path / "parent.yaml"
    template.write_text(PARENT)
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        return apply_stack(store, ApplyRequest(name="cfn", template=str(template), parameters=parameters),
                           "job").as_dict()
    finally:
        store.close()


def test_the_child_is_read_from_the_url_and_its_outputs_are_attributes(served: ServedFiles, tmp_path: Path) -> None:
    served.files["child.yaml"] = CHILD
    made = _apply(tmp_path, url=f"{served.url}/child.yaml")
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert made["outputs"]["echoed"] == "3"
    assert re.fullmatch(r"arn:openstack:heat::hotplay:stacks/cfn-nested-[a-z0-9]{12}/[0-9a-f-]{36}",
                        made["outputs"]["ref"])

    # The template behind the URL changed: the update reads it again (Heat's
    # handle_update fetches the child template whatever changed).
    served.files["child.yaml"] = CHILD.replace("{get_attr: [value, value]}", "{list_join: [x, [{get_param: size}]]}")
    updated = _apply(tmp_path, url=f"{served.url}/child.yaml", size="4")
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated["stack_status_reason"]
    assert updated["outputs"]["echoed"] == "4" and updated["outputs"]["ref"] == made["outputs"]["ref"]

    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        gone = delete_stack(store, DeleteRequest(name="cfn"), "job").as_dict()
    finally:
        store.close()
    assert gone["stack_status"] == "DELETE_COMPLETE"


@pytest.mark.parametrize(("url", "expected"), [
    ("file:///etc/hostname", "Could not fetch remote template 'file:///etc/hostname': Invalid URL scheme file"),
    ("{base}/missing.yaml", "Could not fetch remote template '{base}/missing.yaml': "
                            "Failed to retrieve template from {base}/missing.yaml"),
])
def test_a_url_that_cannot_be_read_fails_validation_and_writes_nothing(
        served: ServedFiles, tmp_path: Path, url: str, expected: str) -> None:
    url, expected = url.format(base=served.url), expected.format(base=served.url)
    with pytest.raises(StackValidationFailed) as refused:
        _apply(tmp_path, url=url)
    assert str(refused.value).endswith(f"parent.yaml: resources.nested<nested_stack>: {expected}")
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        assert store.find_stack("cfn") is None
    finally:
        store.close()


def test_only_outputs_are_attributes(served: ServedFiles, tmp_path: Path) -> None:
    served.files["child.yaml"] = CHILD
    template = PARENT.replace("Outputs.echoed", "echoed")
    (tmp_path / "parent.yaml").write_text(template)
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        made = apply_stack(store, ApplyRequest(name="cfn", template=str(tmp_path / "parent.yaml"),
                                               parameters={"url": f"{served.url}/child.yaml"}), "job").as_dict()
    finally:
        store.close()
    assert made["output_errors"]["echoed"] == "The Referenced Attribute (nested echoed) is incorrect."
