# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property validation: Heat's coercions, defaults, constraints and messages.

Expected messages come from Heat 27's heat/engine/properties.py and
constraints.py (HeatExceptionWithPath prints "Property error: <path>: <msg>",
numbers in a path as "[n]").
"""

from __future__ import annotations

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import (
    PropertySchema,
    Resource,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.properties import (
    UNKNOWN,
    allowed_pattern,
    allowed_values,
    join_path,
    length,
    modulo,
    validate_properties,
    value_range,
)

PATH = "resources.r.properties"


class Sample(Resource):
    type_name = "Test::Sample"
    properties_schema = {
        "name": PropertySchema("string", required=True),
        "count": PropertySchema("integer", default=1, constraints=(value_range(1, 10),)),
        "ratio": PropertySchema("number"),
        "enabled": PropertySchema("boolean", default=False),
        "tags": PropertySchema("list", schema=PropertySchema("string")),
        "meta": PropertySchema("map"),
        "items": PropertySchema("list", schema=PropertySchema("map", schema={
            "key": PropertySchema("string", required=True),
            "kind": PropertySchema("string", default="a",
                                   constraints=(allowed_values("a", "b"),)),
        })),
        "anything": PropertySchema("any"),
    }


def check(values: dict, cls: type = Sample, partial: bool = False) -> dict:
    return validate_properties(cls, values, PATH, partial=partial)


def error_of(values: dict, cls: type = Sample) -> str:
    with pytest.raises(StackValidationFailed) as caught:
        check(values, cls)
    return caught.value.message


# -- result shape -------------------------------------------------------------------
def test_every_schema_key_is_present_with_defaults_filled() -> None:
    assert check({"name": "x"}) == {
        "name": "x", "count": 1, "ratio": None, "enabled": False, "tags": None,
        "meta": None, "items": None, "anything": None,
    }


def test_map_items_get_all_their_schema_keys() -> None:
    assert check({"name": "x", "items": [{"key": "k"}]})["items"] == [{"key": "k", "kind": "a"}]


def test_explicit_null_means_the_type_empty_value_or_default() -> None:
    # Heat: _get_string(None) -> default or ''; a null does not trip "required".
    result = check({"name": None, "count": None, "enabled": None, "tags": None, "meta": None})
    assert (result["name"], result["count"], result["enabled"]) == ("", 1, False)
    assert (result["tags"], result["meta"]) == ([], {})


# -- coercions -----------------------------------------------------------------------
@pytest.mark.parametrize("given, expected", [("5", 5), (7, 7), (5.7, 5), (True, 1)])
def test_integer_coercion(given: object, expected: int) -> None:
    assert check({"name": "x", "count": given})["count"] == expected


@pytest.mark.parametrize("given, expected", [("2.5", 2.5), ("3", 3), (1.5, 1.5)])
def test_number_coercion(given: object, expected: float) -> None:
    assert check({"name": "x", "ratio": given})["ratio"] == expected


@pytest.mark.parametrize("given, expected", [("TRUE", True), ("false", False), (True, True)])
def test_boolean_coercion(given: object, expected: bool) -> None:
    assert check({"name": "x", "enabled": given})["enabled"] is expected


@pytest.mark.parametrize("given, expected", [(5, "5"), (True, "True")])
def test_integers_and_booleans_become_strings(given: object, expected: str) -> None:
    assert check({"name": given})["name"] == expected


def test_any_keeps_the_value() -> None:
    assert check({"name": "x", "anything": [1, {"a": None}]})["anything"] == [1, {"a": None}]


# -- type errors ---------------------------------------------------------------------
@pytest.mark.parametrize("values, message", [
    ({"name": "x", "count": "abc"}, "count: Value 'abc' is not an integer"),
    ({"name": "x", "count": "5.5"}, "count: Value '5.5' is not an integer"),
    ({"name": "x", "ratio": "abc"}, "ratio: could not convert string to float: 'abc'"),
    ({"name": "x", "enabled": "Yes"}, 'enabled: "yes" is not a valid boolean'),
    ({"name": "x", "enabled": 1}, 'enabled: "1" is not a valid boolean'),
    ({"name": 1.5}, "name: Value must be a string; got 1.5"),
    ({"name": ["a"]}, "name: Value must be a string; got ['a']"),
    # Heat never splits a string into a list for a resource property.
    ({"name": "x", "tags": "a,b"}, "tags: \"'a,b'\" is not a list"),
    ({"name": "x", "meta": ["a"]}, "meta: \"['a']\" is not a map"),
    ({"name": "x", "tags": ["a", 2.5]}, "tags[1]: Value must be a string; got 2.5"),
])
def test_type_errors_use_heat_words(values: dict, message: str) -> None:
    assert error_of(values) == f"Property error: {PATH}.{message}"


# -- structure errors ----------------------------------------------------------------
def test_unknown_property_is_reported_first() -> None:
    assert error_of({"bogus": 1, "count": "abc"}) == f"Property error: {PATH}: Unknown Property bogus"


def test_missing_required_property() -> None:
    assert error_of({}) == f"Property error: {PATH}: Property name not assigned"


def test_nested_errors_name_the_list_index() -> None:
    assert error_of({"name": "x", "items": [{"key": "k"}, {"kind": "a"}]}) == (
        f"Property error: {PATH}.items[1]: Property key not assigned")
    assert error_of({"name": "x", "items": [{"key": "k", "x": 1}]}) == (
        f"Property error: {PATH}.items[0]: Unknown Property x")
    assert error_of({"name": "x", "items": [{"key": "k", "kind": "c"}]}) == (
        f'Property error: {PATH}.items[0].kind: "c" is not an allowed value ["a", "b"]')


def test_join_path_prints_numbers_in_brackets() -> None:
    assert join_path("resources.g.properties", ["parts", 0, "config"]) == (
        "resources.g.properties.parts[0].config")


# -- constraints ----------------------------------------------------------------------
class Constrained(Resource):
    type_name = "Test::Constrained"
    properties_schema = {
        "size": PropertySchema("integer", constraints=(value_range(min=2),)),
        "word": PropertySchema("string", constraints=(length(1, 3),)),
        "even": PropertySchema("integer", constraints=(modulo(2, 0),)),
        "code": PropertySchema("string", constraints=(allowed_pattern("[a-z]+"),)),
        "mode": PropertySchema("integer", constraints=(allowed_values(1, 2),)),
        "modes": PropertySchema("list", constraints=(allowed_values("a", "b"),)),
        "told": PropertySchema("string", constraints=(length(max=1, description="one char"),)),
    }


@pytest.mark.parametrize("values, message", [
    ({"size": 1}, "size: 1 is out of range (min: 2, max: None)"),
    ({"word": "abcd"}, "word: length (4) is out of range (min: 1, max: 3)"),
    ({"even": 3}, "even: 3 is not a multiple of 2 with an offset of 0"),
    ({"code": "ab1"}, 'code: "ab1" does not match pattern "[a-z]+"'),
    ({"mode": 3}, "mode: 3 is not an allowed value [1, 2]"),
    ({"modes": ["a", "c"]}, 'modes: ["a", "c"] is not an allowed value ["a", "b"]'),
    # Heat: a constraint's description replaces the generated message.
    ({"told": "ab"}, "told: one char"),
])
def test_constraint_messages(values: dict, message: str) -> None:
    assert error_of(values, Constrained) == f"Property error: {PATH}.{message}"


def test_allowed_values_compare_after_coercion() -> None:
    assert check({"mode": "2"}, Constrained)["mode"] == 2


def test_pattern_must_match_the_whole_value() -> None:
    assert check({"code": "abc"}, Constrained)["code"] == "abc"


# -- values not known yet ------------------------------------------------------------------
def test_partial_skips_unknown_values_but_checks_the_rest() -> None:
    result = check({"name": UNKNOWN, "tags": ["a", UNKNOWN], "count": UNKNOWN}, partial=True)
    assert result["name"] is UNKNOWN and result["count"] is UNKNOWN
    assert result["tags"] == ["a", UNKNOWN]
    with pytest.raises(StackValidationFailed, match="Unknown Property bogus"):
        check({"name": UNKNOWN, "bogus": 1}, partial=True)
    with pytest.raises(StackValidationFailed, match="is not an integer"):
        check({"name": UNKNOWN, "count": "x"}, partial=True)


def test_unknown_inside_a_list_skips_its_constraints() -> None:
    assert check({"modes": ["c", UNKNOWN]}, Constrained, partial=True)["modes"] == ["c", UNKNOWN]


def test_unknown_outside_partial_is_a_caller_bug() -> None:
    with pytest.raises(TypeError):
        check({"name": UNKNOWN})
