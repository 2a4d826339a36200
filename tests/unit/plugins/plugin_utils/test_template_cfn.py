# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CloudFormation-format templates (``AWSTemplateFormatVersion: 2010-09-09``,
``HeatTemplateFormatVersion: 2012-12-12``) through the engine on a real SQLite store,
as Heat 27 reads them (heat/engine/cfn/template.py, functions.py, parameters.py and
heat/engine/parameters.py ``Schema.from_dict``).  The values and messages were
checked against the real Heat engine (tests/heat/test_cfn_templates_with_heat.py
compares some of them side by side)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from served_files import ServedFiles, served_files

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.export import heat_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

TEMPLATE = """\
AWSTemplateFormatVersion: '2010-09-09'
Description: every part of a CFN template
Parameters:
  Env: {Type: String, Default: prod, AllowedValues: [prod, dev], ConstraintDescription: prod or dev}
  Secret: {Type: String, NoEcho: 'true', Default: s3cr3t-default}
  Count: {Type: Number, MinValue: '1', MaxValue: 5, Default: 2}
  Names: {Type: CommaDelimitedList, Default: 'a,b'}
  Settings: {Type: Json, Default: {k: v}}
  Enabled: {Type: Boolean, Default: 'yes'}
  Code: {Type: String, Default: ab, MinLength: 2, MaxLength: '4', AllowedPattern: '[a-z]+'}
Mappings:
  Sizes: {prod: {Size: large}, dev: {Size: small}}
  Zones: {large: {Zone: z1}, small: {Zone: z2}}
Conditions:
  IsProd: {'Fn::Equals': [{Ref: Env}, prod]}
  IsDev: {'Fn::Not': [IsProd]}
  ProdAndEnabled: {'Fn::And': [IsProd, {'Fn::Equals': [{Ref: Enabled}, true]}]}
  Either: {'Fn::Or': [IsProd, IsDev]}
Resources:
  size:
    Type: OS::Heat::Value
    Properties:
      value: {'Fn::FindInMap': [Zones, {'Fn::FindInMap': [Sizes, {Ref: Env}, Size]}, Zone]}
  label:
    Type: OS::Heat::Value
    DependsOn: size
    Metadata: {role: web}
    Properties:
      value:
        'Fn::Join': ['-', [{Ref: 'AWS::StackName'}, {'Fn::If': [IsProd, p, d]}, {'Fn::Select': [1, {Ref: Names}]}]]
  devonly:
    Type: OS::Heat::Value
    Condition: IsDev
    Properties: {value: dev}
  random:
    Type: OS::Heat::RandomString
    DeletionPolicy: Delete
    Properties: {length: 8}
  nothing: {Type: OS::Heat::None}
  handle: {Type: AWS::CloudFormation::WaitConditionHandle}
Outputs:
  zone: {Value: {'Fn::GetAtt': [size, value]}, Description: the zone}
  label: {Value: {'Fn::GetAtt': [label, value]}}
  ref: {Value: {Ref: size}}
  random: {Value: {'Fn::GetAtt': [random, value]}}
  count: {Value: {Ref: Count}}
  names: {Value: {Ref: Names}}
  settings: {Value: {Ref: Settings}}
  enabled: {Value: {Ref: Enabled}}
  stack_name: {Value: {Ref: 'AWS::StackName'}}
  stack_id: {Value: {Ref: 'AWS::StackId'}}
  region: {Value: {Ref: 'AWS::Region'}}
  both: {Value: {'Fn::If': [ProdAndEnabled, yes-both, not-both]}}
  either: {Value: {'Fn::If': [Either, one, none]}}
  devonly: {Value: {Ref: devonly}, Condition: IsDev}
  split: {Value: {'Fn::Split': [',', 'x,y']}}
  replaced: {Value: {'Fn::Replace': [{'%who%': {Ref: Env}}, 'hello %who%']}}
  encoded: {Value: {'Fn::Base64': plain}}
"""


class Stack:
    """One stack of a store in a temporary folder."""

    def __init__(self, folder: Path, template: str = TEMPLATE) -> None:
        self.folder = folder
        self.url = f"sqlite:///{folder / 'state.db'}"
        self.template = folder / "stack.template"
        self.template.write_text(template)

    def apply(self, **parameters: Any) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            request = ApplyRequest(name="web", template=str(self.template), parameters=parameters)
            return apply_stack(store, request, "job").as_dict()
        finally:
            store.close()

    def delete(self) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            return delete_stack(store, DeleteRequest(name="web"), "job").as_dict()
        finally:
            store.close()

    def abandon(self) -> dict[str, Any]:
        store = open_store(self.url)
        try:
            return heat_abandon(store, "web")
        finally:
            store.close()

    def stacks(self) -> list[Any]:
        store = open_store(self.url)
        try:
            return store.list_stacks()
        finally:
            store.close()


@pytest.fixture
def stack(tmp_path: Path) -> Stack:
    return Stack(tmp_path)


def test_a_cfn_template_runs_with_heats_values(stack: Stack) -> None:
    made = stack.apply()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    outputs = made["outputs"]
    assert outputs["zone"] == "z1"  # Fn::FindInMap inside Fn::FindInMap
    assert outputs["label"] == "web-p-b"
    assert re.fullmatch(r"web-size-[a-z0-9]{12}", outputs["ref"])  # Ref of a resource: its reference id
    assert re.fullmatch(r"[A-Za-z0-9]{8}", outputs["random"])
    assert (outputs["count"], outputs["names"], outputs["settings"], outputs["enabled"]) == (
        2, ["a", "b"], {"k": "v"}, True)
    assert outputs["stack_name"] == "web"
    assert re.fullmatch(r"arn:openstack:heat::hotplay:stacks/web/[0-9a-f-]{36}", outputs["stack_id"])
    assert outputs["region"] == "ap-southeast-1"
    assert (outputs["both"], outputs["either"]) == ("yes-both", "one")
    assert outputs["devonly"] is None  # its condition is false
    assert (outputs["split"], outputs["replaced"], outputs["encoded"]) == (["x", "y"], "hello prod", "plain")
    names = {r["name"]: r["type"] for r in made["resources"]}
    assert names == {"size": "OS::Heat::Value", "label": "OS::Heat::Value", "random": "OS::Heat::RandomString",
                     "nothing": "OS::Heat::None", "handle": "AWS::CloudFormation::WaitConditionHandle"}


def test_a_noecho_parameter_is_hidden(stack: Stack) -> None:
    made = stack.apply()
    assert made["parameters"]["Secret"] == "******"
    assert made["parameters"]["Env"] == "prod"


def test_an_update_follows_the_conditions_and_a_delete_removes_everything(stack: Stack) -> None:
    stack.apply()
    updated = stack.apply(Env="dev", Names="c,d")
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated["stack_status_reason"]
    outputs = updated["outputs"]
    assert (outputs["zone"], outputs["label"], outputs["both"]) == ("z2", "web-d-d", "not-both")
    assert re.fullmatch(r"web-devonly-[a-z0-9]{12}", outputs["devonly"])
    assert "devonly" in {r["name"] for r in updated["resources"]}
    back = stack.apply(Env="prod")
    assert back["stack_status"] == "UPDATE_COMPLETE", back["stack_status_reason"]
    assert "devonly" not in {r["name"] for r in back["resources"]}
    deleted = stack.delete()
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted["stack_status_reason"]


def test_heat_abandon_gives_back_the_template_as_written(stack: Stack) -> None:
    stack.apply()
    data = stack.abandon()
    assert data["template"] == yaml.safe_load(TEMPLATE)
    assert "AWSTemplateFormatVersion" in data["template"] and "resources" not in data["template"]


def test_a_heat_template_format_version_template_runs(tmp_path: Path) -> None:
    stack = Stack(tmp_path, """\
HeatTemplateFormatVersion: '2012-12-12'
Parameters:
  Word: {Type: String, Default: hi}
Mappings:
  M: {hi: {there: everyone}}
Resources:
  v:
    Type: OS::Heat::Value
    Properties: {value: {'Fn::FindInMap': [M, {Ref: Word}, there]}}
Outputs:
  v: {Value: {'Fn::GetAtt': [v, value]}}
""")
    made = stack.apply()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert made["outputs"] == {"v": "everyone"}


EXAMPLE = Path(__file__).resolve().parents[4] / "playbooks" / "templates" / "examples" / "cfn_site.template"


def test_the_shipped_example_runs(tmp_path: Path) -> None:
    stack = Stack(tmp_path, EXAMPLE.read_text())
    made = stack.apply(Environment="production")
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert made["outputs"]["site"] == "web-large-east-live"
    assert (made["outputs"]["disk"], made["outputs"]["banner"]) == (100, None)


# -- bad input: one message, Heat's words, CFN's places, nothing written -------------------

BAD = [
    ("unknown section", {"Resourcez": {}},
     "The template section is invalid: Resourcez", ""),
    ("a bad version", {"AWSTemplateFormatVersion": "2010-09-10"},
     'The template version is invalid: "AWSTemplateFormatVersion: 2010-09-10". '
     '"AWSTemplateFormatVersion" should be: 2010-09-09',
     "AWSTemplateFormatVersion"),
    ("a bad Heat version", {"AWSTemplateFormatVersion": None, "HeatTemplateFormatVersion": "2013"},
     'The template version is invalid: "HeatTemplateFormatVersion: 2013". '
     '"HeatTemplateFormatVersion" should be: 2012-12-12',
     "HeatTemplateFormatVersion"),
    ("an unknown resource key", {"Resources": {"v": {"Type": "OS::Heat::None", "Propertes": {}}}},
     '"Propertes" is not a valid keyword inside a resource definition', "Resources.v"),
    ("a resource without a type", {"Resources": {"v": {"Properties": {}}}},
     "Each Resource must contain a Type key.", "Resources.v"),
    ("a resource that is not a map", {"Resources": {"v": "x"}},
     "Resources must contain Resource. Found a [<class 'str'>] instead", "Resources.v"),
    ("properties that are not a map", {"Resources": {"v": {"Type": "OS::Heat::None", "Properties": "x"}}},
     "Resource v Properties type must be object", "Resources.v.Properties"),
    ("a DependsOn of numbers", {"Resources": {"v": {"Type": "OS::Heat::None", "DependsOn": [1]}}},
     "Resource v DependsOn must be a list of strings", "Resources.v.DependsOn"),
    ("a lower-case deletion policy", {"Resources": {"v": {"Type": "OS::Heat::None", "DeletionPolicy": "delete"}}},
     'Invalid deletion policy "delete"', "Resources.v.DeletionPolicy"),
    ("an unknown output key", {"Outputs": {"o": {"Value": 1, "Foo": 2}}},
     '"Foo" is not a valid keyword inside an output definition', "Outputs.o"),
    ("an output without a value", {"Outputs": {"o": {"Description": "d"}}},
     "Output validation error: Outputs.o: Each output definition must contain a Value key.", ""),
    ("a bad parameter type", {"Parameters": {"p": {"Type": "string"}}},
     "Invalid type (string)", "Parameters.p.Type"),
    ("an unknown parameter key", {"Parameters": {"p": {"Type": "String", "hidden": True}}},
     "Invalid key 'hidden' for parameter (p)", "Parameters.p"),
    ("a parameter without a type", {"Parameters": {"p": {"Default": "x"}}},
     "Missing parameter type for parameter: p", "Parameters.p"),
    ("a constraint the type has not", {"Parameters": {"p": {"Type": "String", "Default": "z", "MinValue": 1}}},
     "Parameter 'p' is invalid: Range constraint invalid for String", "Parameters.p"),
    ("a default not allowed", {"Parameters": {"p": {
        "Type": "String", "Default": "z", "AllowedValues": ["a"], "ConstraintDescription": "must be a"}}},
     "Parameter 'p' is invalid: Invalid default z (must be a)", "Parameters.p.Default"),
    ("a default too long", {"Parameters": {"p": {"Type": "String", "Default": "abcdef", "MaxLength": "3"}}},
     "Parameter 'p' is invalid: Invalid default abcdef (length (6) is out of range (min: None, max: 3))",
     "Parameters.p.Default"),
    ("a parameter not given", {"Parameters": {"p": {"Type": "Number"}}},
     "The Parameter (p) was not provided.", "Parameters.p"),
    ("conditions in a HeatTemplateFormatVersion template",
     {"AWSTemplateFormatVersion": None, "HeatTemplateFormatVersion": "2012-12-12", "Conditions": {}},
     "The template section is invalid: Conditions", ""),
    ("Fn::GetAtt with a path", {"Resources": {"v": {"Type": "OS::Heat::Value",
                                                    "Properties": {"value": {"Fn::GetAtt": ["v", "value", "x"]}}}}},
     'Arguments to "Fn::GetAtt" must be of the form [resource_name, attribute]',
     "Resources.v.Properties.value.Fn::GetAtt"),
    ("Fn::FindInMap with two arguments", {"Mappings": {"M": {"a": {"b": 1}}}, "Resources": {
        "v": {"Type": "OS::Heat::Value", "Properties": {"value": {"Fn::FindInMap": ["M", "a"]}}}}},
     "'not enough values to unpack (expected 3, got 2)'", "Resources.v.Properties.value.Fn::FindInMap"),
    ("Fn::FindInMap of a key not there", {"Mappings": {"M": {"a": {"b": 1}}}, "Resources": {
        "v": {"Type": "OS::Heat::Value", "Properties": {"value": {"Fn::FindInMap": ["M", "x", "b"]}}}}},
     '"Fn::FindInMap": Mappings.M has no key "x"', "Resources.v.Properties.value.Fn::FindInMap"),
    ("a Ref to nothing", {"Resources": {"v": {"Type": "OS::Heat::Value",
                                              "Properties": {"value": {"Ref": "OS::stack_name"}}}}},
     'The specified reference "OS::stack_name" (in unknown) is incorrect.', "Resources.v.Properties.value.Ref"),
    ("a resource's attribute in a condition", {"Conditions": {"c": {"Fn::Equals": [{"Fn::GetAtt": ["v", "a"]}, 1]}},
                                               "Resources": {"v": {"Type": "OS::Heat::None"}}},
     'The function "Fn::GetAtt" is invalid in this context', "Conditions.c.Fn::Equals[0].Fn::GetAtt"),
    ("Fn::Not of a condition not in a list", {"Conditions": {"c": {"Fn::Not": True}}},
     'Arguments to "Fn::Not" must be of the form: [condition]', "Conditions.c.Fn::Not"),
    ("Fn::If with two arguments", {"Conditions": {"c": True}, "Resources": {
        "v": {"Type": "OS::Heat::Value", "Properties": {"value": {"Fn::If": ["c", 1]}}}}},
     'Arguments to "Fn::If" must be of the form: [condition_name, value_if_true, value_if_false]',
     "Resources.v.Properties.value.Fn::If"),
    ("an unknown property", {"Resources": {"v": {"Type": "OS::Heat::Value", "Properties": {"valeu": 1}}}},
     "Property error: Resources.v.Properties: Unknown Property valeu", ""),
]


@pytest.mark.parametrize("change, message, path", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_input_is_refused_with_one_message_and_nothing_written(
        tmp_path: Path, change: dict[str, Any], message: str, path: str) -> None:
    document = {"AWSTemplateFormatVersion": "2010-09-09", **change}
    stack = Stack(tmp_path, json.dumps({k: v for k, v in document.items() if v is not None}))
    with pytest.raises(HotplayError) as refused:
        stack.apply()
    assert (refused.value.message, refused.value.path) == (message, path)
    assert refused.value.source == str(stack.template)
    assert stack.stacks() == []


@pytest.mark.parametrize("given, message", [
    ({"Count": 9}, "Parameter 'Count' is invalid: 9 is out of range (min: 1, max: 5)"),
    ({"Env": "test"}, "Parameter 'Env' is invalid: prod or dev"),
    ({"Code": "A1"}, "Parameter 'Code' is invalid: \"A1\" does not match pattern \"[a-z]+\""),
    ({"Enabled": "maybe"}, "Parameter 'Enabled' is invalid: Unrecognized value 'maybe'"),
])
def test_a_value_that_breaks_a_constraint_is_refused_in_heats_words(
        stack: Stack, given: dict[str, Any], message: str) -> None:
    with pytest.raises(HotplayError) as refused:
        stack.apply(**given)
    assert refused.value.message.startswith(message)
    assert refused.value.path == f"Parameters.{next(iter(given))}"
    assert stack.stacks() == []


def test_a_noecho_value_is_never_quoted(tmp_path: Path) -> None:
    stack = Stack(tmp_path, """\
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Password: {Type: String, NoEcho: true, AllowedPattern: '[a-z]+'}
""")
    with pytest.raises(HotplayError) as refused:
        stack.apply(Password="Wrong-Secret-1")
    assert "Wrong-Secret-1" not in str(refused.value)
    assert "******" in str(refused.value)


# -- nested stacks written in CFN ----------------------------------------------------------

CHILD = """\
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Size: {Type: String}
Resources:
  echo:
    Type: OS::Heat::Value
    Properties: {value: {'Fn::Join': [':', [{Ref: 'AWS::StackName'}, {Ref: Size}]]}}
  facade:
    Type: OS::Heat::Value
    Properties: {type: json, value: {'Fn::ResourceFacade': Metadata}}
Outputs:
  echoed: {Value: {'Fn::GetAtt': [echo, value]}}
  metadata: {Value: {'Fn::GetAtt': [facade, value]}}
  policy: {Value: {'Fn::ResourceFacade': DeletionPolicy}}
"""


@pytest.fixture
def served() -> Iterator[ServedFiles]:
    with served_files() as files:
        yield files


def test_a_cfn_child_of_cloudformation_stack_reads_its_parents_facade(served: ServedFiles, tmp_path: Path) -> None:
    served.files["child.template"] = CHILD
    stack = Stack(tmp_path, f"""\
AWSTemplateFormatVersion: '2010-09-09'
Resources:
  nested:
    Type: AWS::CloudFormation::Stack
    DeletionPolicy: Retain
    Metadata: {{role: db}}
    Properties:
      TemplateURL: {served.url}/child.template
      Parameters: {{Size: '3'}}
Outputs:
  echoed: {{Value: {{'Fn::GetAtt': [nested, Outputs.echoed]}}}}
  metadata: {{Value: {{'Fn::GetAtt': [nested, Outputs.metadata]}}}}
  policy: {{Value: {{'Fn::GetAtt': [nested, Outputs.policy]}}}}
  ref: {{Value: {{Ref: nested}}}}
""")
    made = stack.apply()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    outputs = made["outputs"]
    assert re.fullmatch(r"web-nested-[a-z0-9]{12}:3", outputs["echoed"])
    assert (outputs["metadata"], outputs["policy"]) == ({"role": "db"}, "Retain")
    assert re.fullmatch(r"arn:openstack:heat::hotplay:stacks/web-nested-[a-z0-9]{12}/[0-9a-f-]{36}", outputs["ref"])


def test_an_inline_cfn_child_of_heat_stack_runs(tmp_path: Path) -> None:
    stack = Stack(tmp_path, """\
heat_template_version: 2018-08-31
resources:
  nested:
    type: OS::Heat::Stack
    properties:
      template: {get_file: child.template}
      parameters: {Size: '4'}
outputs:
  echoed: {value: {get_attr: [nested, outputs, echoed]}}
""")
    (tmp_path / "child.template").write_text(CHILD)
    made = stack.apply()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert re.fullmatch(r"web-nested-[a-z0-9]{12}:4", made["outputs"]["echoed"])


def test_an_error_in_a_cfn_child_names_its_place_in_cfns_words(served: ServedFiles, tmp_path: Path) -> None:
    served.files["child.template"] = CHILD.replace("Fn::GetAtt': [echo, value]", "Fn::GetAtt': [echo]")
    stack = Stack(tmp_path, f"""\
AWSTemplateFormatVersion: '2010-09-09'
Resources:
  nested:
    Type: AWS::CloudFormation::Stack
    Properties: {{TemplateURL: {served.url}/child.template, Parameters: {{Size: '3'}}}}
""")
    with pytest.raises(HotplayError) as refused:
        stack.apply()
    assert refused.value.path == "Resources.nested<nested_stack>.Outputs.echoed.Value.Fn::GetAtt"
    assert refused.value.message == 'Arguments to "Fn::GetAtt" must be of the form [resource_name, attribute]'
    assert stack.stacks() == []


PROVIDER_ENVIRONMENT = "resource_registry:\n  Site::Echo: child.template\n"


def _provider_stack(tmp_path: Path) -> tuple[Stack, Path]:
    stack = Stack(tmp_path, """\
AWSTemplateFormatVersion: '2010-09-09'
Resources:
  echo:
    Type: Site::Echo
    DeletionPolicy: Retain
    Metadata: {role: cache}
    Properties: {Size: '5'}
Outputs:
  echoed: {Value: {'Fn::GetAtt': [echo, echoed]}}
  metadata: {Value: {'Fn::GetAtt': [echo, metadata]}}
""")
    (tmp_path / "child.template").write_text(CHILD)
    environment = tmp_path / "env.yaml"
    environment.write_text(PROVIDER_ENVIRONMENT)
    return stack, environment


def test_a_cfn_provider_template_is_validated_with_its_parent(tmp_path: Path) -> None:
    stack, environment = _provider_stack(tmp_path)
    (tmp_path / "child.template").write_text(CHILD.replace("Size: {Type: String}", "Size: {Type: Number}"))
    store = open_store(stack.url)
    try:
        with pytest.raises(HotplayError) as refused:
            apply_stack(store, ApplyRequest(name="web", template=str(stack.template),
                                            environment=[str(environment)], check_mode=True), "job")
        assert store.list_stacks() == []
    finally:
        store.close()
    assert refused.value.path == "Resources.echo<child.template>.Resources.echo.Properties.value.Fn::Join"
    assert refused.value.message == "Items to join must be strings not 5"


def test_a_cfn_provider_template_runs(tmp_path: Path) -> None:
    stack, environment = _provider_stack(tmp_path)
    store = open_store(stack.url)
    try:
        made = apply_stack(store, ApplyRequest(name="web", template=str(stack.template),
                                               environment=[str(environment)]), "job").as_dict()
    finally:
        store.close()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert re.fullmatch(r"web-echo-[a-z0-9]{12}:5", made["outputs"]["echoed"])
    assert made["outputs"]["metadata"] == {"role": "cache"}
