# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Template parameters: schemas, conversions, constraints, precedence, groups."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language import parameters as P
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.versions import VERSIONS
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.environment import (
    EMPTY_ENVIRONMENT, Environment,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import TemplateError

LATEST = "2021-04-16"


def schemas(section, version=LATEST):
    return P.parse_parameter_schemas(section, "t.yaml", version)


def resolve(section, given=None, env=EMPTY_ENVIRONMENT, version=LATEST):
    return P.resolve_parameters(schemas(section, version), given or {}, env, "t.yaml").values


def schema_error(section, version=LATEST) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        schemas(section, version)
    return info.value


def value_error(section, given=None, env=EMPTY_ENVIRONMENT) -> str:
    with pytest.raises(TemplateError) as info:
        resolve(section, given, env)
    return info.value.message


# --- schema parsing -------------------------------------------------------------------

def test_schema_fields_are_carried():
    got = schemas({"pw": {
        "type": "string", "default": "x", "description": "d", "label": "L",
        "hidden": True, "immutable": True, "tags": ["a", "b"]}})["pw"]
    assert (got.type, got.default, got.description, got.label) == ("String", "x", "d", "L")
    assert got.hidden and got.immutable and got.tags == ("a", "b")
    assert got.hot_type == "string" and not got.required


@pytest.mark.parametrize("hot, canonical", [
    ("string", "String"), ("number", "Number"), ("json", "Json"),
    ("comma_delimited_list", "CommaDelimitedList"), ("boolean", "Boolean")])
def test_hot_types_map_to_canonical_names(hot, canonical):
    assert schemas({"p": {"type": hot}})["p"].type == canonical


def test_no_section_means_no_parameters():
    assert schemas(None) == {} and schemas({}) == {}


def test_parameter_must_be_a_mapping():
    err = schema_error({"p": "string"})
    assert err.message == "Invalid parameter (p), expected a mapping"
    assert err.source == "t.yaml" and err.path == "parameters.p"


def test_unknown_key():
    assert schema_error({"p": {"type": "string", "Default": 1}}).message == \
        "Invalid key 'Default' for parameter (p)"


def test_missing_type():
    assert schema_error({"p": {"default": 1}}).message == "Missing parameter type for parameter: p"


@pytest.mark.parametrize("bad", ["String", "integer", "list"])
def test_invalid_type(bad):
    # HOT only knows the lower-case names; CFN's "String" is not one of them
    assert schema_error({"p": {"type": bad}}).message == f"Invalid type ({bad})"


def test_tags_only_from_2018_03_02():
    # Heat: HOTParamSchema20180302 adds `tags` to the allowed keys
    assert schema_error({"p": {"type": "string", "tags": ["a"]}}, "2017-09-01").message == \
        "Invalid key 'tags' for parameter (p)"
    assert schemas({"p": {"type": "string", "tags": ["a"]}}, "2018-03-02")["p"].tags == ("a",)


def test_tags_must_be_a_list():
    assert schema_error({"p": {"type": "string", "tags": "a"}}).message == \
        "Tags property should be a list for parameter: p"


def test_immutable_allowed_in_every_version():
    # settled from Heat's source: `immutable` is in HOTParamSchema.KEYS (2013-05-23)
    assert schemas({"p": {"type": "string", "immutable": True}}, "2013-05-23")["p"].immutable


def test_modulo_only_from_2017_02_24():
    # Heat: HOTParamSchema (pre 2017-02-24) has no modulo branch -> "No constraint expressed"
    spec = {"p": {"type": "number", "constraints": [{"modulo": {"step": 2, "offset": 0}}]}}
    assert schema_error(spec, "2016-10-14").message == "No constraint expressed"
    assert isinstance(schemas(spec, "2017-02-24")["p"].constraints[0], P.Modulo)


def test_version_rules_come_from_the_one_version_table():
    base = ("range", "length", "allowed_values", "allowed_pattern", "custom_constraint")
    assert P.rules_for("2016-10-14").constraint_kinds == base
    assert P.rules_for("2017-09-01").constraint_kinds == ("modulo",) + base
    assert "tags" not in P.rules_for("2017-09-01").keys
    assert "tags" in P.rules_for("2021-04-16").keys
    assert P.rules_for("2021-04-16").keys == VERSIONS["2021-04-16"].parameter_keys


# --- constraint definitions -----------------------------------------------------------

def constraint_error(constraint, ptype="number"):
    return schema_error({"p": {"type": ptype, "constraints": [constraint]}}).message


def test_constraints_must_be_a_list():
    assert schema_error({"p": {"type": "string", "constraints": {"length": {"min": 1}}}}).message \
        == "Invalid parameter constraints for parameter p, expected a list"


@pytest.mark.parametrize("constraint, message", [
    ("x", "Invalid parameter constraints, expected a mapping"),
    ({"lenght": {"min": 1}}, "Invalid key 'lenght' for parameter constraints"),
    ({"description": "only words"}, "No constraint expressed"),
    ({"range": 5}, "Invalid range constraint, expected a mapping"),
    ({"range": {"low": 1}}, "Invalid key 'low' for range constraint"),
    ({"range": {}}, "A range constraint must have a min value and/or a max value specified."),
    ({"modulo": {"step": 2}},
     "A modulo constraint must have a step value and an offset value specified."),
    ({"modulo": {"step": 2.5, "offset": 0}}, "step/offset must be integer"),
    ({"modulo": {"step": 0, "offset": 0}}, "step cannot be 0."),
    ({"modulo": {"step": 2, "offset": 2}}, "offset must be smaller (by absolute value) than step."),
    ({"modulo": {"step": 3, "offset": -1}}, "step and offset must be both positive or both negative."),
    ({"modulo": {"step": 2, "bad": 1}}, "Invalid key 'bad' for modulo constraint"),
    ({"allowed_values": "a"}, "AllowedValues must be a list"),
])
def test_bad_constraint_definitions(constraint, message):
    assert constraint_error(constraint) == message


@pytest.mark.parametrize("constraint, message", [
    ({"length": {}}, "A length constraint must have a min value and/or a max value specified."),
    ({"length": {"min": 1.5}}, "min/max length must be integral"),
    ({"allowed_pattern": 5}, "AllowedPattern must be a string"),
])
def test_bad_string_constraint_definitions(constraint, message):
    assert constraint_error(constraint, "string") == message


def test_range_bounds_given_as_strings_are_numbers():
    got = schemas({"p": {"type": "number", "constraints": [{"range": {"min": "1", "max": "2.5"}}]}})
    assert got["p"].constraints[0] == P.Range(None, 1, 2.5)


def test_first_constraint_kind_wins_within_one_entry():
    # Heat's _constraint_from_def checks range before length, modulo before both
    got = schemas({"p": {"type": "number", "constraints": [
        {"range": {"min": 1}, "length": {"min": 1}}]}})
    assert got["p"].constraints[0] == P.Range(None, 1, None)


@pytest.mark.parametrize("ptype, constraint, kind", [
    ("string", {"range": {"min": 1}}, "Range"),
    ("number", {"length": {"min": 1}}, "Length"),
    ("string", {"modulo": {"step": 2, "offset": 0}}, "Modulo"),
    ("json", {"allowed_values": [1]}, "AllowedValues"),
    ("number", {"allowed_pattern": "a"}, "AllowedPattern"),
    ("json", {"custom_constraint": "nova.flavor"}, "CustomConstraint"),
])
def test_constraint_kind_must_fit_the_type(ptype, constraint, kind):
    assert constraint_error(constraint, ptype) == \
        f"Parameter 'p' is invalid: {kind} constraint invalid for {ptype}"


def test_default_must_obey_constraints():
    err = schema_error({"p": {"type": "number", "default": 7,
                              "constraints": [{"range": {"min": 1, "max": 5}}]}})
    assert err.message == \
        "Parameter 'p' is invalid: Invalid default 7 (7 is out of range (min: 1, max: 5))"
    assert err.path == "parameters.p.default"


def test_default_uses_constraint_description():
    err = schema_error({"p": {"type": "string", "default": "abc", "constraints": [
        {"length": {"max": 2}, "description": "too long"}]}})
    assert err.message == "Parameter 'p' is invalid: Invalid default abc (too long)"


def test_list_default_split_without_stripping_for_constraints():
    # Heat's _validate_default splits on "," only; " b" is not in allowed_values
    err = schema_error({"p": {"type": "comma_delimited_list", "default": "a, b",
                              "constraints": [{"allowed_values": ["a", "b"]}]}})
    assert "Invalid default a, b" in err.message
    schemas({"p": {"type": "comma_delimited_list", "default": "a,b",
                   "constraints": [{"allowed_values": ["a", "b"]}]}})


def test_list_default_must_be_a_string_or_list():
    assert schema_error({"p": {"type": "comma_delimited_list", "default": 5}}).message == (
        "Parameter 'p' is invalid: Default must be a comma-delimited list string: "
        "'int' object has no attribute 'split'")


def test_custom_constraint_not_checked_on_default():
    got = schemas({"p": {"type": "string", "default": "m1.tiny",
                         "constraints": [{"custom_constraint": "nova.flavor"}]}})
    assert got["p"].constraints == (P.CustomConstraint(None, "nova.flavor"),)


# --- conversions ----------------------------------------------------------------------

@pytest.mark.parametrize("given, expected", [
    ("5", 5), ("2.5", 2.5), (7, 7), (" 3 ", 3), ("1e3", 1000.0), (0.5, 0.5)])
def test_number_conversion(given, expected):
    got = resolve({"n": {"type": "number"}}, {"n": given})["n"]
    assert got == expected and isinstance(got, type(expected))


def test_number_rejects_text():
    assert value_error({"n": {"type": "number"}}, {"n": "abc"}) == \
        "Parameter 'n' is invalid: could not convert string to float: 'abc'"


@pytest.mark.parametrize("given", ["true", "True", "yes", "1", "on", "t", "y", True, 1])
def test_boolean_true(given):
    assert resolve({"b": {"type": "boolean"}}, {"b": given})["b"] is True


@pytest.mark.parametrize("given", ["false", "NO", "0", "off", "f", "n", False, 0])
def test_boolean_false(given):
    assert resolve({"b": {"type": "boolean"}}, {"b": given})["b"] is False


def test_boolean_rejects_other_words():
    assert value_error({"b": {"type": "boolean"}}, {"b": "maybe"}) == (
        "Parameter 'b' is invalid: Unrecognized value 'maybe', acceptable values are: "
        "'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'")


@pytest.mark.parametrize("given, expected", [
    # Heat 27 keeps the spaces around the items (differential tester)
    ("a,b , c", ["a", "b ", " c"]), ("", []), ("one", ["one"]),
    (["x", 2, True], ["x", "2", "True"])])
def test_comma_delimited_list_conversion(given, expected):
    assert resolve({"l": {"type": "comma_delimited_list"}}, {"l": given})["l"] == expected


def test_comma_delimited_list_rejects_a_number():
    assert value_error({"l": {"type": "comma_delimited_list"}}, {"l": 5}) == (
        "Parameter 'l' is invalid: Value must be a comma-delimited list string: "
        "'int' object has no attribute 'split'")


@pytest.mark.parametrize("given, expected", [
    ('{"a": [1, 2]}', {"a": [1, 2]}), ({"a": 1}, {"a": 1}), ("[1, 2]", [1, 2]), ([1], [1])])
def test_json_conversion(given, expected):
    assert resolve({"j": {"type": "json"}}, {"j": given})["j"] == expected


def test_json_rejects_bad_text():
    message = value_error({"j": {"type": "json"}}, {"j": "{bad"})
    assert message.startswith("Parameter 'j' is invalid: Value must be valid JSON: Expecting")


@pytest.mark.parametrize("given, expected", [("abc", "abc"), (5, "5"), (True, "True")])
def test_string_conversion(given, expected):
    assert resolve({"s": {"type": "string"}}, {"s": given})["s"] == expected


def test_defaults_are_converted_too():
    got = resolve({"l": {"type": "comma_delimited_list", "default": "a, b"},
                   "n": {"type": "number", "default": "4"},
                   "b": {"type": "boolean", "default": "yes"},
                   "j": {"type": "json", "default": '{"k": 1}'}})
    assert got == {"l": ["a", " b"], "n": 4, "b": True, "j": {"k": 1}}


# --- constraints on values ------------------------------------------------------------

def check(ptype, constraint, value):
    return resolve({"p": {"type": ptype, "constraints": [constraint]}}, {"p": value})["p"]


def refuse(ptype, constraint, value):
    return value_error({"p": {"type": ptype, "constraints": [constraint]}}, {"p": value})


def test_range():
    assert check("number", {"range": {"min": 1, "max": 5}}, "5") == 5
    assert refuse("number", {"range": {"min": 1, "max": 5}}, "6") == \
        "Parameter 'p' is invalid: 6 is out of range (min: 1, max: 5)"
    assert refuse("number", {"range": {"min": 1}}, 0) == \
        "Parameter 'p' is invalid: 0 is out of range (min: 1, max: None)"


def test_length_of_string_list_and_json():
    assert check("string", {"length": {"min": 2, "max": 3}}, "abc") == "abc"
    assert refuse("string", {"length": {"min": 2, "max": 3}}, "abcd") == \
        "Parameter 'p' is invalid: length (4) is out of range (min: 2, max: 3)"
    assert refuse("comma_delimited_list", {"length": {"min": 2}}, "a") == \
        "Parameter 'p' is invalid: length (1) is out of range (min: 2, max: None)"
    assert check("json", {"length": {"max": 1}}, {"a": 1}) == {"a": 1}


def test_modulo_message_is_heats():
    assert check("number", {"modulo": {"step": 2, "offset": 1}}, 7) == 7
    assert refuse("number", {"modulo": {"step": 2, "offset": 1}}, 4) == \
        "Parameter 'p' is invalid: 4 is not a multiple of 2 with an offset of 1"  # Heat 27: no stray parenthesis


def test_allowed_values_string_number_boolean():
    assert check("string", {"allowed_values": ["a", "b"]}, "b") == "b"
    assert refuse("string", {"allowed_values": ["a", "b"]}, "c") == \
        "Parameter 'p' is invalid: \"c\" is not an allowed value [\"a\", \"b\"]"  # Heat 27: JSON
    # values are compared after conversion to the parameter's type
    assert check("number", {"allowed_values": [1, "2"]}, "2") == 2
    assert check("boolean", {"allowed_values": ["yes"]}, True) is True


def test_allowed_values_of_a_number_that_is_not_one():
    assert refuse("number", {"allowed_values": ["one"]}, 1) == \
        "Parameter 'p' is invalid: Value \"one\" is invalid for data type \"number\"."


def test_allowed_values_on_lists_compare_items_unconverted():
    assert check("comma_delimited_list", {"allowed_values": ["a", "b"]}, "a,b") == ["a", "b"]
    assert refuse("comma_delimited_list", {"allowed_values": ["a"]}, "a,z") == \
        "Parameter 'p' is invalid: [\"a\", \"z\"] is not an allowed value [\"a\"]"  # Heat 27: JSON


def test_allowed_pattern_must_match_whole_value():
    assert check("string", {"allowed_pattern": "[a-z]+"}, "abc") == "abc"
    assert refuse("string", {"allowed_pattern": "[a-z]+"}, "abc1") == \
        "Parameter 'p' is invalid: \"abc1\" does not match pattern \"[a-z]+\""


def test_description_replaces_the_message():
    assert refuse("string", {"allowed_pattern": "[a-z]+", "description": "lower case"}, "A") == \
        "Parameter 'p' is invalid: lower case"


def test_custom_constraint_is_accepted_unchecked():
    assert check("string", {"custom_constraint": "nova.keypair"}, "anything") == "anything"


def test_all_constraints_apply_in_order():
    section = {"p": {"type": "string", "constraints": [
        {"length": {"max": 10}}, {"allowed_pattern": "[a-z]*"}]}}
    assert value_error(section, {"p": "ABC"}).endswith('does not match pattern "[a-z]*"')


# --- precedence -----------------------------------------------------------------------

SECTION = {"p": {"type": "string", "default": "template"}}


def env(**sections):
    return Environment(**sections)


def test_precedence_given_beats_everything():
    e = env(parameters={"p": "env"}, parameter_defaults={"p": "pdef"})
    assert resolve(SECTION, {"p": "given"}, e)["p"] == "given"


def test_precedence_env_parameters_beat_defaults():
    e = env(parameters={"p": "env"}, parameter_defaults={"p": "pdef"})
    assert resolve(SECTION, {}, e)["p"] == "env"


def test_precedence_parameter_defaults_beat_template_default():
    assert resolve(SECTION, {}, env(parameter_defaults={"p": "pdef"}))["p"] == "pdef"
    assert resolve(SECTION)["p"] == "template"


def test_null_falls_through_to_the_next_level():
    e = env(parameters={"p": None}, parameter_defaults={"p": "pdef"})
    assert resolve(SECTION, {"p": None}, e)["p"] == "pdef"


def test_parameter_defaults_may_name_anything():
    assert resolve(SECTION, {}, env(parameter_defaults={"other": 1})) == {"p": "template"}


def test_required_parameter_missing():
    assert value_error({"p": {"type": "string"}}) == "The Parameter (p) was not provided."


def test_parameter_defaults_satisfy_a_required_parameter():
    assert resolve({"p": {"type": "number"}}, {}, env(parameter_defaults={"p": 3}))["p"] == 3


def test_unknown_given_name():
    assert value_error(SECTION, {"nope": 1}) == "The Parameter (nope) was not defined in template."


def test_unknown_name_in_environment_parameters():
    # Heat validates env `parameters` and user values together (its user_params)
    assert value_error(SECTION, {}, env(parameters={"nope": 1})) == \
        "The Parameter (nope) was not defined in template."


def test_parameter_defaults_value_is_checked_when_used():
    section = {"p": {"type": "number", "default": 1, "constraints": [{"range": {"max": 5}}]}}
    # Heat's words, and where the value was given (ours).
    assert value_error(section, {}, env(parameter_defaults={"p": 9})) == (
        "Parameter 'p' is invalid: 9 is out of range (min: None, max: 5) "
        "(the value comes from the environment's parameter_defaults)")


def test_unused_bad_default_type_is_not_an_error():
    # Heat only type-checks the value in use; constraints on the default always
    assert resolve({"n": {"type": "number", "default": "x"}}, {"n": 2})["n"] == 2


# --- Parameters -----------------------------------------------------------------------

def test_hidden_values_are_masked_for_display():
    section = {"pw": {"type": "string", "hidden": True}, "user": {"type": "string"}}
    params = P.resolve_parameters(schemas(section), {"pw": "s3cret", "user": "me"},
                                  EMPTY_ENVIRONMENT, "t.yaml")
    assert params.values["pw"] == "s3cret"
    assert params.hidden_names() == frozenset({"pw"})
    assert params.display() == {"pw": "******", "user": "me"}
    assert params.schemas["pw"].hidden


def test_immutable_flag_is_carried():
    params = P.resolve_parameters(schemas({"p": {"type": "string", "default": "a",
                                                 "immutable": True}}),
                                  {}, EMPTY_ENVIRONMENT, "t.yaml")
    assert params.schemas["p"].immutable


# --- parameter_groups -----------------------------------------------------------------

S = {"a": {"type": "string"}, "b": {"type": "string"}}


def group_error(groups):
    with pytest.raises(TemplateError) as info:
        P.validate_parameter_groups(groups, schemas(S), "t.yaml")
    return info.value


def test_valid_groups_and_none():
    P.validate_parameter_groups([{"label": "g", "parameters": ["a"]},
                                 {"parameters": ["b"]}], schemas(S), "t.yaml")
    P.validate_parameter_groups(None, schemas(S), "t.yaml")


def test_groups_must_be_a_list():
    assert group_error({"a": 1}).message == \
        "Parameter Groups error: parameter_groups: The parameter_groups should be a list."


def test_group_needs_parameters():
    err = group_error([{"label": "Server"}])
    assert err.message == ("Parameter Groups error: parameter_groups.Server: "
                           "The parameters must be provided for each parameter group.")
    assert err.source == "t.yaml"


def test_group_parameters_must_be_a_list():
    assert group_error([{"label": "g", "parameters": "a"}]).message == (
        "Parameter Groups error: parameter_groups.g: "
        "The parameters of parameter group should be a list.")


def test_parameter_in_two_groups():
    assert group_error([{"label": "x", "parameters": ["a"]},
                        {"label": "y", "parameters": ["a"]}]).message == (
        "Parameter Groups error: parameter_groups.y: "
        "The a parameter must be assigned to one parameter group only.")


def test_grouped_parameter_must_exist():
    assert group_error([{"label": "g", "parameters": ["zz"]}]).message == (
        "Parameter Groups error: parameter_groups.g: "
        "The grouped parameter zz does not reference a valid parameter.")


def test_group_without_label_keeps_heats_path_text():
    # Heat joins ['parameter_groups', ''] as "parameter_groups." (HeatExceptionWithPath)
    assert group_error([{"parameters": ["zz"]}]).message.startswith(
        "Parameter Groups error: parameter_groups.: ")


def test_pseudo_parameters_may_be_grouped():
    # Heat's ParameterGroups lists the template's parameters including pseudo ones
    P.validate_parameter_groups([{"parameters": ["OS::stack_id", "a"]}], schemas(S), "t.yaml")


def test_group_must_be_a_mapping():
    assert group_error(["a"]).message == \
        "Parameter Groups error: parameter_groups[0]: Each parameter group should be a mapping."


# --- properties -----------------------------------------------------------------------

_ITEM = st.text(alphabet=st.characters(blacklist_characters=",", blacklist_categories=("Cs",)))


@given(st.lists(_ITEM, min_size=1))
def test_comma_delimited_list_round_trip(items):
    # Heat 27's delim_string_to_list: split on "," and keep the items as they are; "" is []
    text = ",".join(items)
    assert P.parse_list(text) == (text.split(",") if text else [])


@given(st.integers(min_value=-10**6, max_value=10**6))
def test_number_strings_convert_to_the_same_int(number):
    assert P.str_to_num(str(number)) == number
