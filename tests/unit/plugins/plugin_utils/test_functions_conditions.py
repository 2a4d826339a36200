# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Condition functions and the ``if`` macro."""

from __future__ import annotations

import pytest
from test_functions_support import FakeContext, FakeResource, evaluate, parse

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions import base
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions.conditions import (
    check_definition,
    parse_condition,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.versions import VERSIONS


def ctx():
    return FakeContext(
        params={"env": "prod", "zones": ["a", "b"]},
        conditions={"is_prod": True, "is_dev": False},
        resources={"db": FakeResource("db"), "cache": FakeResource("cache")},
    )


def condition(snippet, version="2021-04-16", context=None):
    context = context or ctx()
    parsed = parse_condition(VERSIONS[version].condition_functions, context, snippet, "c")
    base.validate(parsed)
    return base.resolve(parsed)


def test_equals_not_and_or():
    assert condition({"equals": [{"get_param": "env"}, "prod"]}) is True
    assert condition({"not": "is_prod"}) is False
    assert condition({"and": ["is_prod", {"not": "is_dev"}, True]}) is True
    assert condition({"or": ["is_dev", False]}) is False


def test_bare_names_and_literals():
    assert condition("is_prod") is True
    assert condition(False) is False
    with pytest.raises(StackValidationFailed) as info:
        condition("nope")
    assert info.value.message == 'Invalid condition "nope"'


@pytest.mark.parametrize(
    "snippet, message",
    [
        ({"equals": ["a"]}, 'Arguments to "equals" must be of the form: [value_1, value_2]'),
        ({"and": ["is_prod"]}, 'The minimum number of condition arguments to "and" is 2.'),
        ({"or": "is_prod"}, 'Arguments to "or" must be a list of conditions'),
        ({"not": None}, 'Argument to "not" must be a condition'),
        # Heat: template functions are Invalid inside a condition.
        ({"get_resource": "db"}, 'The function "get_resource" is invalid in this context'),
        ({"if": ["is_prod", True, False]}, 'The function "if" is invalid in this context'),
    ],
)
def test_condition_errors(snippet, message):
    with pytest.raises(StackValidationFailed) as info:
        condition(snippet)
    assert info.value.message == message


def test_contains_and_yaql_in_conditions_only_from_2017_09_01():
    assert condition({"contains": ["a", {"get_param": "zones"}]}, "2017-09-01") is True
    with pytest.raises(StackValidationFailed) as info:
        condition({"contains": ["a", ["a"]]}, "2016-10-14")
    assert "contains is not supported in this version of HOT (2016-10-14)" in info.value.message
    with pytest.raises(StackValidationFailed, match='"yaql" is invalid in this context'):
        condition({"yaql": {"expression": "true"}}, "2016-10-14")


def test_condition_definition_must_be_bool_or_function():
    check_definition("ok", True, "conditions.ok")
    with pytest.raises(StackValidationFailed) as info:
        check_definition("bad", 3, "conditions.bad")
    assert info.value.message == (
        'Condition validation error: The definition of condition "bad" is invalid: 3'
    )


# -- if ------------------------------------------------------------------------------


def test_if_chooses_branch_and_only_its_dependencies():
    parsed = parse(
        {"a": {"if": ["is_dev", {"get_resource": "db"}, {"get_resource": "cache"}]}}, ctx=ctx()
    )
    assert base.dependencies(parsed) == {"cache"}
    assert base.resolve(parsed) == {"a": "cache-id"}


def test_if_branch_not_taken_is_never_parsed():
    # Heat: If is a Macro; the branch not taken is not parsed, so its errors do not count.
    parsed = parse({"if": ["is_prod", "ok", {"str_replace": "broken"}]}, ctx=ctx())
    assert parsed == "ok"


def test_if_inline_condition():
    snippet = {"if": [{"equals": [{"get_param": "env"}, "prod"]}, "big", "small"]}
    assert evaluate(snippet, ctx=ctx()) == "big"


def test_if_two_argument_form_drops_the_item_in_2021_04_16():
    snippet = {
        "list": ["x", {"if": ["is_dev", "y"]}],
        "key": {"if": ["is_dev", 1]},
        "kept": {"if": ["is_prod", 2]},
    }
    assert evaluate(snippet, ctx=ctx()) == {"list": ["x"], "kept": 2}


def test_if_two_argument_form_refused_before_2021_04_16():
    with pytest.raises(StackValidationFailed) as info:
        parse({"if": ["is_dev", "y"]}, "2018-08-31", ctx())
    assert info.value.message == (
        'Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]'
    )


def test_if_unknown_condition():
    with pytest.raises(StackValidationFailed, match='Invalid condition "maybe"'):
        parse({"if": ["maybe", 1, 2]}, ctx=ctx())


def test_if_not_in_versions_before_2016_10_14():
    with pytest.raises(StackValidationFailed) as info:
        evaluate({"if": ["is_prod", 1, 2]}, "2016-04-08", ctx())
    assert info.value.message == (
        "The template version is invalid: The function if is not supported in this version "
        "of HOT (2016-04-08); it is available from heat_template_version 2016-10-14."
    )
