# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The quick structural walk (schema.surely_valid) never passes what jsonschema
refuses, so a template gets the same error with it as without it."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import TemplateError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template import schema
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.versions import VERSIONS

CHECKED = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FUNCTIONS = sorted({name for v in VERSIONS.values() for name in (*v.functions, *v.condition_functions)})
RESOURCE_KEYS = sorted({key for v in VERSIONS.values() for key in v.resource_keys}) + ["bogus"]
OUTPUT_KEYS = sorted({key for v in VERSIONS.values() for key in v.output_keys}) + ["bogus"]
PARAMETER_KEYS = sorted({key for v in VERSIONS.values() for key in v.parameter_keys}) + ["bogus"]
SECTIONS = sorted({name for v in VERSIONS.values() for name in v.sections}) + ["bogus"]

SCALARS = st.none() | st.booleans() | st.integers(-2, 2) | st.floats(allow_nan=False) | st.sampled_from(
    ["", "T", "Delete", "Snapshot", "get_param", "r"])
CALLS = st.builds(lambda name, args: {name: args}, st.sampled_from(FUNCTIONS + ["nope", 1]), SCALARS)
KEYS = st.sampled_from(["a", "get_param", 1, True])
VALUES = st.recursive(SCALARS | CALLS, lambda children: (
    st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=2)), max_leaves=6)


def _entries(keys: list[str]) -> st.SearchStrategy:
    return st.dictionaries(st.sampled_from(keys), VALUES, max_size=4) | VALUES


def _section(keys: list[str]) -> st.SearchStrategy:
    return st.dictionaries(st.sampled_from(["a", "b", 1]), _entries(keys), max_size=3) | VALUES


DOCUMENTS = st.dictionaries(st.sampled_from(SECTIONS), VALUES, max_size=3).flatmap(
    lambda other: st.fixed_dictionaries({}, optional={
        "resources": _section(RESOURCE_KEYS), "outputs": _section(OUTPUT_KEYS),
        "parameters": _section(PARAMETER_KEYS)}).map(lambda sections: {**other, **sections}))


def _messages(data: Any, version: str) -> tuple[str, str] | None:
    try:
        schema.validate_structure(data, VERSIONS[version], "t.yaml")
    except TemplateError as error:
        return error.message, error.path
    return None


@CHECKED
@given(data=DOCUMENTS, version=st.sampled_from(sorted(VERSIONS)))
def test_what_the_walk_passes_jsonschema_passes(data: dict[str, Any], version: str) -> None:
    validator = schema._validator(version)  # pylint: disable=protected-access
    if schema.surely_valid(validator.schema, data):
        assert not list(validator.iter_errors(data))


@CHECKED
@given(data=DOCUMENTS, version=st.sampled_from(sorted(VERSIONS)))
def test_the_same_error_with_the_walk_as_without(data: dict[str, Any], version: str) -> None:
    quick = _messages(data, version)
    with mock.patch.object(schema, "surely_valid", lambda _schema, _instance: False):
        assert _messages(data, version) == quick


def test_a_usual_template_is_passed_by_the_walk() -> None:
    data = {"heat_template_version": "2021-04-16", "description": "d",
            "parameters": {"p": {"type": "string", "default": "x"}},
            "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {"value": {"get_param": "p"}},
                                "depends_on": ["s"], "deletion_policy": "Delete", "condition": True},
                          "s": {"type": "OS::Heat::None", "depends_on": "r", "external_id": {"get_param": "p"},
                                "metadata": {}, "update_policy": {}, "description": "s"}},
            "outputs": {"o": {"value": {"get_attr": ["r", "output"]}, "condition": {"not": True}}},
            "conditions": {"c": True}, "parameter_groups": []}
    assert schema.surely_valid(schema._validator("2021-04-16").schema, data)  # pylint: disable=protected-access


@pytest.mark.parametrize("resource", [
    {"type": 1}, {"properties": {}}, {"type": "T", "bogus": 1}, {"type": "T", "depends_on": [1]},
    {"type": "T", "deletion_policy": {"nope": 1}}, {"type": "T", "condition": 0}, "T", None,
])
def test_a_wrong_resource_is_left_to_jsonschema(resource: Any) -> None:
    data = {"heat_template_version": "2021-04-16", "resources": {"r": resource}}
    assert not schema.surely_valid(schema._validator("2021-04-16").schema, data)  # pylint: disable=protected-access
    assert _messages(data, "2021-04-16") is not None
