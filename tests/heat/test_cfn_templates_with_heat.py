# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CloudFormation-format templates side by side with the real Heat: the same template
and parameters give the same outputs (parameters of every type, Mappings and
Fn::FindInMap, Conditions and Fn::If, Ref of parameters, resources and pseudo
parameters, Fn::GetAtt); bad templates are refused with Heat's words; and the
abandon data of a CFN stack made here is adopted by Heat as its own."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.export import heat_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

TEMPLATE: dict[str, Any] = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Parameters": {
        "Env": {"Type": "String", "Default": "prod", "AllowedValues": ["prod", "dev"]},
        "Count": {"Type": "Number", "MinValue": "1", "MaxValue": 5, "Default": 2},
        "Names": {"Type": "CommaDelimitedList", "Default": "a,b"},
        "Settings": {"Type": "Json", "Default": {"k": "v"}},
        "Enabled": {"Type": "Boolean", "Default": "yes"},
    },
    "Mappings": {"Sizes": {"prod": {"Size": "large"}, "dev": {"Size": "small"}}},
    "Conditions": {
        "IsProd": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
        "IsDev": {"Fn::Not": ["IsProd"]},
        "Both": {"Fn::And": ["IsProd", {"Fn::Equals": [{"Ref": "Enabled"}, True]}]},
        "Either": {"Fn::Or": ["IsProd", "IsDev"]},
    },
    "Resources": {
        "size": {"Type": "OS::Heat::Value",
                 "Properties": {"value": {"Fn::FindInMap": ["Sizes", {"Ref": "Env"}, "Size"]}}},
        "label": {"Type": "OS::Heat::Value", "DependsOn": "size", "Properties": {"value": {"Fn::Join": [
            "-", [{"Ref": "AWS::StackName"}, {"Fn::If": ["IsProd", "p", "d"]}, {"Fn::Select": [1, {"Ref": "Names"}]}]]}}},
        "devonly": {"Type": "OS::Heat::Value", "Condition": "IsDev", "Properties": {"value": "dev"}},
        "nothing": {"Type": "OS::Heat::None"},
    },
    "Outputs": {
        "size": {"Value": {"Fn::GetAtt": ["size", "value"]}},
        "label": {"Value": {"Fn::GetAtt": ["label", "value"]}},
        "ref": {"Value": {"Ref": "size"}},
        "count": {"Value": {"Ref": "Count"}},
        "names": {"Value": {"Ref": "Names"}},
        "settings": {"Value": {"Ref": "Settings"}},
        "enabled": {"Value": {"Ref": "Enabled"}},
        "stack_id": {"Value": {"Ref": "AWS::StackId"}},
        "region": {"Value": {"Ref": "AWS::Region"}},
        "both": {"Value": {"Fn::If": ["Both", "yes", "no"]}},
        "either": {"Value": {"Fn::If": ["Either", "one", "none"]}},
        "devonly": {"Value": {"Ref": "devonly"}, "Condition": "IsDev"},
        "replaced": {"Value": {"Fn::Replace": [{"%who%": {"Ref": "Env"}}, "hello %who%"]}},
    },
}


def _here(folder: Path, name: str, template: Any, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
    path = folder / f"{name}.template"
    path.write_text(json.dumps(template))
    store = open_store(f"sqlite:///{folder / 's.db'}")
    try:
        return apply_stack(store, ApplyRequest(name=name, template=str(path), parameters=parameters or {}),
                           "job").as_dict()
    finally:
        store.close()


def _heat_outputs(heat: Any, name: str, stack_id: str) -> dict[str, Any]:
    shown = heat.call("GET", f"/stacks/{name}/{stack_id}")["stack"]
    return {o["output_key"]: o.get("output_value") for o in shown["outputs"]}


def _comparable(outputs: dict[str, Any], name: str) -> dict[str, Any]:
    """The outputs with the parts each engine names its own way made alike: the
    project in the stack's ARN, the random part of a physical name."""
    alike = dict(outputs)
    alike["stack_id"] = re.sub(r"^arn:openstack:heat::[^:]+:stacks/[^/]+/[0-9a-f-]{36}$", "ARN", outputs["stack_id"])
    for key in ("ref", "devonly"):
        if isinstance(outputs.get(key), str):
            alike[key] = re.sub(rf"^{name}-(\w+)-[a-z0-9]{{12}}$", r"NAME-\1", outputs[key])
    alike["label"] = outputs["label"].replace(name, "NAME")
    return alike


@pytest.mark.parametrize("parameters", [{}, {"Env": "dev", "Names": "c,d", "Count": "4", "Enabled": "false"}],
                         ids=["defaults", "given"])
def test_the_same_cfn_template_gives_the_same_outputs(heat: Any, tmp_path: Path, parameters: dict[str, Any]) -> None:
    name = f"cfn{uuid.uuid4().hex[:8]}"
    stack_id = heat.call("POST", "/stacks", {"stack_name": name, "template": TEMPLATE, "parameters": parameters,
                                             "disable_rollback": True})["stack"]["id"]
    heat.wait(name, stack_id)
    theirs = _heat_outputs(heat, name, stack_id)
    ours = _here(tmp_path, name, TEMPLATE, parameters)
    assert ours["stack_status"] == "CREATE_COMPLETE", ours["stack_status_reason"]
    assert _comparable(ours["outputs"], name) == _comparable(theirs, name)


BAD: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("unknown section", {"Resourcez": {}}, {}),
    ("bad version", {"AWSTemplateFormatVersion": "2010-09-10"}, {}),
    ("no type", {"Resources": {"v": {"Properties": {}}}}, {}),
    ("properties not a map", {"Resources": {"v": {"Type": "OS::Heat::None", "Properties": "x"}}}, {}),
    ("bad parameter type", {"Parameters": {"p": {"Type": "string"}}}, {}),
    ("bad parameter key", {"Parameters": {"p": {"Type": "String", "Foo": 1}}}, {}),
    ("constraint for another type", {"Parameters": {"p": {"Type": "String", "Default": "z", "MinValue": 1}}}, {}),
    ("default not allowed", {"Parameters": {"p": {"Type": "String", "Default": "z", "AllowedValues": ["a"]}}}, {}),
    ("value out of range", {"Parameters": {"p": {"Type": "Number", "MaxValue": 5}}}, {"p": 9}),
    ("Fn::GetAtt with a path", {"Resources": {"v": {"Type": "OS::Heat::Value", "Properties": {
        "value": {"Fn::GetAtt": ["v", "value", "x"]}}}}}, {}),
    ("Fn::FindInMap with two arguments", {"Mappings": {"M": {"a": {"b": 1}}}, "Resources": {"v": {
        "Type": "OS::Heat::Value", "Properties": {"value": {"Fn::FindInMap": ["M", "a"]}}}}}, {}),
    ("Ref to nothing", {"Resources": {"v": {"Type": "OS::Heat::Value", "Properties": {"value": {"Ref": "x"}}}}}, {}),
    ("Fn::GetAtt in a condition", {"Conditions": {"c": {"Fn::Equals": [{"Fn::GetAtt": ["v", "a"]}, 1]}},
                                   "Resources": {"v": {"Type": "OS::Heat::None"}}}, {}),
    ("unknown property", {"Resources": {"v": {"Type": "OS::Heat::Value", "Properties": {"valeu": 1}}}}, {}),
    ("conditions in a Heat template", {"AWSTemplateFormatVersion": None, "HeatTemplateFormatVersion": "2012-12-12",
                                       "Conditions": {}}, {}),
]


@pytest.mark.parametrize("change, parameters", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_a_bad_cfn_template_is_refused_in_heats_words(heat: Any, tmp_path: Path, change: dict[str, Any],
                                                      parameters: dict[str, Any]) -> None:
    document = {"AWSTemplateFormatVersion": "2010-09-09", **change}
    template = {key: value for key, value in document.items() if value is not None}
    name = f"cfn{uuid.uuid4().hex[:8]}"
    with pytest.raises(AssertionError) as refused_by_heat:  # Heat's API: 400
        heat.call("POST", "/stacks", {"stack_name": name, "template": template, "parameters": parameters,
                                      "disable_rollback": True})
    with pytest.raises(HotplayError) as refused_here:
        _here(tmp_path, name, template, parameters)
    said_by_heat = json.loads(str(refused_by_heat.value).split(": 400 ", 1)[1])["error"]["message"]
    said_here = refused_here.value.message
    # Heat puts the place before its words ("Property error: Resources.v.Properties.value: ...");
    # hotplay keeps it in `path`.
    assert said_by_heat.endswith(said_here), (said_here, said_by_heat)


def test_heat_adopts_the_abandon_data_of_a_cfn_stack_made_here(heat: Any, tmp_path: Path) -> None:
    name = f"cfn{uuid.uuid4().hex[:8]}"
    ours = _here(tmp_path, name, TEMPLATE)
    assert ours["stack_status"] == "CREATE_COMPLETE", ours["stack_status_reason"]
    store = open_store(f"sqlite:///{tmp_path / 's.db'}")
    try:
        data = heat_abandon(store, name)
    finally:
        store.close()
    assert data["template"] == TEMPLATE
    stack_id = heat.create(name, None, data["environment"], data["files"], adopt=data)
    theirs = _heat_outputs(heat, name, stack_id)
    assert (theirs["size"], theirs["label"]) == (ours["outputs"]["size"], ours["outputs"]["label"])
    heat.delete(name)
