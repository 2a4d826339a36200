# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HotTemplate: structural validation in Heat's words, and parsing snippets."""

from __future__ import annotations

from typing import Any

import pytest
from test_functions_support import FakeContext, FakeResource

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    StackValidationFailed,
    TemplateError,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions import base
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.hot import HotTemplate
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.loader import TemplateSource


def template(body: dict[str, Any], version: str = "2021-04-16") -> HotTemplate:
    data = {"heat_template_version": version, **body}
    return HotTemplate(TemplateSource(path="t.yaml", data=data, files={}))


def refused(body: dict[str, Any], version: str = "2021-04-16") -> TemplateError:
    with pytest.raises(TemplateError) as info:
        template(body, version)
    assert info.value.source == "t.yaml"
    return info.value


def test_sections_are_read_with_heat_defaults():
    tmpl = template({"resources": None, "outputs": {"o": {"value": 1}}})
    assert tmpl.version.key == "2021-04-16"
    assert tmpl.description == "No description"
    assert tmpl.resources_section == {}
    assert tmpl.outputs_section == {"o": {"value": 1}}
    assert tmpl.parameters_section == {} and tmpl.parameter_groups == []


def test_unknown_top_level_section():
    error = refused({"resource": {}})
    assert error.message == "The template section is invalid: resource"


def test_conditions_section_only_from_2016_10_14():
    template({"conditions": {"c": True}}, "2016-10-14")
    error = refused({"conditions": {"c": True}}, "2016-04-08")
    assert error.message == "The template section is invalid: conditions"


def test_unknown_resource_key_names_key_and_path():
    error = refused({"resources": {"web": {"type": "OS::Heat::None", "propertys": {}}}})
    assert error.message == '"propertys" is not a valid keyword inside a resource definition'
    assert error.path == "resources.web"


def test_missing_type():
    error = refused({"resources": {"web": {"properties": {}}}})
    assert error.message == "Each resource must contain a type key."
    assert error.path == "resources.web"
    assert refused({"resources": {"web": None}}).message == "Each resource must contain a type key."


def test_resource_that_is_not_a_map():
    error = refused({"resources": {"web": "OS::Heat::None"}})
    assert error.message == (
        "\"resources\" must contain a map of resource maps. Found a [<class 'str'>] instead"
    )


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("type", ["x"], "Resource web type type must be string"),
        ("properties", ["x"], "Resource web properties type must be object"),
        ("metadata", "x", "Resource web metadata type must be object"),
        ("depends_on", {"a": 1}, "Resource web depends_on type must be list or string"),
        ("depends_on", ["a", 1], "Resource web depends_on must be a list of strings"),
        ("deletion_policy", ["Keep"], "Resource web deletion_policy type must be string"),
        ("deletion_policy", 3, "Resource web deletion_policy type must be string"),
        ("update_policy", [], "Resource web update_policy type must be object"),
        ("description", {}, "Resource web description type must be string"),
        ("condition", 1, "Resource web condition type must be string_or_boolean"),
    ],
)
def test_resource_field_types_in_heats_words(key, value, message):
    resource = {"type": "OS::Heat::None", key: value}
    error = refused({"resources": {"web": resource}})
    assert error.message == message
    assert error.path == f"resources.web.{key}"


def test_fields_that_may_be_function_calls():
    template(
        {
            "parameters": {"p": {"type": "string"}},
            "resources": {
                "web": {
                    "type": "OS::Heat::None",
                    "deletion_policy": {"get_param": "p"},
                    "condition": {"equals": [1, 1]},
                    "properties": {"get_param": "p"},
                }
            },
        }
    )


def test_which_deletion_policies_a_version_knows_is_not_structure():
    # Heat reads the parameters' declarations before it checks the policy's name as
    # the resources load (test_heat_conformance: the definition checks it).
    template({"resources": {"w": {"type": "T", "deletion_policy": "retain"}}}, "2016-04-08")


def test_condition_key_only_from_2016_10_14():
    error = refused({"resources": {"w": {"type": "T", "condition": True}}}, "2016-04-08")
    # Heat 27 (hot/template.py resource_definitions): a key of a later version
    assert error.message == "Invalid keyword(s) inside a resource definition: condition"


def test_outputs():
    error = refused({"outputs": {"o": {"description": "x"}}})
    assert error.message == "Each output must contain a value key."
    assert error.path == "outputs.o"
    error = refused({"outputs": {"o": {"value": 1, "condtion": "c"}}})
    assert error.message == '"condtion" is not a valid keyword inside a output definition'


def test_parameters_shape():
    assert refused({"parameters": {"p": {"type": "string", "defualt": 1}}}).message == (
        "Invalid key 'defualt' for parameter (p)"
    )
    assert refused({"parameters": {"p": {"default": 1}}}).message == (
        "Missing parameter type for parameter: p"
    )
    assert refused({"parameters": {"p": {"type": "string", "tags": []}}}, "2017-09-01").message == (
        "Invalid key 'tags' for parameter (p)"
    )
    template({"parameters": {"p": {"type": "string", "tags": ["a"]}}}, "2018-03-02")


def test_section_types():
    assert refused({"conditions": ["c"]}).message == (
        "Condition validation error: Condition definitions must be a map. Found a list instead"
    )
    assert refused({"parameter_groups": {}}).message == (
        "Parameter Groups error: The parameter_groups should be a list."
    )
    error = refused({"resources": ["a"]})
    assert error.path == "resources"


def test_errors_come_in_heats_order():
    # Heat checks every resource's keys (sorted by name) before any field's type.
    error = refused({"resources": {"a": {"type": 1}, "b": {"type": "T", "bad": 1}}})
    assert error.path == "resources.b"
    error = refused({"bogus": 1, "resources": {"a": {"bad": 1}}})
    assert error.message == "The template section is invalid: bogus"


# -- parsing snippets ------------------------------------------------------------------------


def ctx() -> FakeContext:
    return FakeContext(
        params={"p": "v"},
        conditions={"on": True, "off": False},
        resources={"db": FakeResource("db")},
    )


def test_parse_uses_the_versions_functions():
    tmpl = template({}, "2015-04-30")
    parsed = tmpl.parse(ctx(), {"a": {"str_split": [",", "x,y"]}}, "resources.r.properties")
    with pytest.raises(StackValidationFailed) as info:
        tmpl.validate_functions(parsed)
    assert info.value.path == "resources.r.properties.a.str_split"
    assert info.value.source == "t.yaml"
    assert "str_split is not supported in this version of HOT (2015-04-30)" in info.value.message


def test_parse_top_level_omitted_if_is_none():
    tmpl = template({})
    assert tmpl.parse(ctx(), {"if": ["off", {"a": 1}]}, "resources.r.properties") is None


def test_parse_condition_names_literals_and_functions():
    tmpl = template({})
    for snippet, expected in [
        ("on", True),
        (False, False),
        ({"not": "on"}, False),
        ({"equals": [{"get_param": "p"}, "v"]}, True),
    ]:
        parsed = tmpl.parse_condition(ctx(), snippet, "resources.r.condition")
        tmpl.validate_functions(parsed)
        assert base.resolve(parsed) is expected


def test_parse_condition_refuses_template_functions():
    tmpl = template({})
    with pytest.raises(StackValidationFailed) as info:
        tmpl.parse_condition(ctx(), {"get_attr": ["db", "x"]}, "conditions.c")
    assert info.value.message == 'The function "get_attr" is invalid in this context'
    assert info.value.path == "conditions.c.get_attr"
