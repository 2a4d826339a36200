# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The native HOT functions: results, version differences and Heat's error words."""

from __future__ import annotations

import hashlib

import pytest
from test_functions_support import FakeContext, FakeResource, evaluate, parse

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions import base


def fails(snippet, message, version="2021-04-16", ctx=None):
    with pytest.raises(StackValidationFailed) as info:
        evaluate(snippet, version, ctx)
    assert info.value.message == message
    return info.value


# -- get_param ------------------------------------------------------------------------------


PARAMS = FakeContext(
    params={"flavor": "m1.small", "net": {"ports": [{"ip": "10.0.0.5"}]}, "names": ["a", "b"]}
)


def test_get_param_value_and_path_into_maps_and_lists():
    assert evaluate({"get_param": "flavor"}, ctx=PARAMS) == "m1.small"
    assert evaluate({"get_param": ["net", "ports", 0, "ip"]}, ctx=PARAMS) == "10.0.0.5"
    # Heat: functions.py GetParam turns a string index into an int for lists.
    assert evaluate({"get_param": ["names", "1"]}, ctx=PARAMS) == "b"


def test_get_param_missing_path_gives_empty_string():
    # Heat: functions.py GetParam swallows KeyError/IndexError/TypeError -> ''.
    assert evaluate({"get_param": ["net", "nothing"]}, ctx=PARAMS) == ""
    assert evaluate({"get_param": ["names", 5]}, ctx=PARAMS) == ""
    assert evaluate({"get_param": ["names", "x"]}, ctx=PARAMS) == ""


def test_get_param_pseudo_parameters():
    ctx = FakeContext()
    assert evaluate({"get_param": "OS::stack_name"}, ctx=ctx) == "teststack"
    assert evaluate({"get_param": "OS::stack_id"}, ctx=ctx) == "stack-uuid"
    assert evaluate({"get_param": "OS::project_id"}, ctx=ctx) == "project-uuid"


def test_get_param_undeclared_fails_at_validation():
    error = fails({"get_param": "image"}, "The Parameter (image) was not provided.")
    assert error.path == "p.get_param"


@pytest.mark.parametrize(
    "args, message",
    [
        ([], 'Function "get_param" must have arguments'),
        ({"a": 1}, 'Argument to "get_param" must be string or list'),
        ([1, "x"], 'Parameter name in "get_param" must be string'),
    ],
)
def test_get_param_argument_errors(args, message):
    fails({"get_param": args}, message)


# -- get_resource / get_attr ------------------------------------------------------------------


def stack():
    return FakeContext(
        resources={
            "server": FakeResource("server", {"networks": {"private": ["10.0.0.5"]}, "name": "vm"}),
            "off": FakeResource("off", {"x": 1}, enabled=False),
        }
    )


def test_get_resource_gives_reference_and_reports_dependency():
    ctx = stack()
    parsed = parse({"a": {"get_resource": "server"}}, ctx=ctx)
    assert base.dependencies(parsed) == {"server"}
    assert base.resolve(parsed) == {"a": "server-id"}


def test_get_resource_unknown_is_heat_invalid_reference():
    fails(
        {"get_resource": "nope"}, 'The specified reference "nope" (in p) is incorrect.', ctx=stack()
    )


def test_reference_to_disabled_resource_is_refused():
    # Heat: a resource whose condition is false is not in the stack definition.
    fails(
        {"get_resource": "off"}, 'The specified reference "off" (in p) is incorrect.', ctx=stack()
    )


def test_get_attr_with_path_and_dependency():
    ctx = stack()
    parsed = parse({"get_attr": ["server", "networks", "private", 0]}, ctx=ctx)
    assert base.dependencies(parsed) == {"server"}
    assert base.resolve(parsed) == "10.0.0.5"


def test_get_attr_missing_path_gives_none():
    # Heat: attributes.select_from_attribute returns None for a missing path.
    assert evaluate({"get_attr": ["server", "networks", "public", 0]}, ctx=stack()) is None


def test_get_attr_unknown_attribute_is_heat_error():
    fails(
        {"get_attr": ["server", "nope"]},
        "The Referenced Attribute (server nope) is incorrect.",
        ctx=stack(),
    )


@pytest.mark.parametrize("version", ["2015-10-15", "2021-04-16"])
def test_get_attr_all_attributes_form_from_2015_10_15(version):
    assert evaluate({"get_attr": ["server"]}, version, stack()) == {
        "networks": {"private": ["10.0.0.5"]},
        "name": "vm",
    }


@pytest.mark.parametrize("version", ["2013-05-23", "2014-10-16", "2015-04-30"])
def test_get_attr_needs_attribute_before_2015_10_15(version):
    with pytest.raises(StackValidationFailed) as info:
        parse({"get_attr": ["server"]}, version, stack())
    assert info.value.message == (
        'Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]'
    )


def test_get_attr_argument_errors():
    with pytest.raises(StackValidationFailed, match='Argument to "get_attr" must be a list'):
        parse({"get_attr": "server"})
    with pytest.raises(StackValidationFailed, match="can be of the next forms"):
        parse({"get_attr": []})


# -- get_file ------------------------------------------------------------------------------


def test_get_file_content_and_missing_key():
    ctx = FakeContext(files={"boot.sh": "#!/bin/sh\n"})
    assert evaluate({"get_file": "boot.sh"}, ctx=ctx) == "#!/bin/sh\n"
    fails(
        {"get_file": "other.sh"},
        'No content found in the "files" section for get_file path: other.sh',
        ctx=ctx,
    )
    fails({"get_file": ["x"]}, 'Argument to "get_file" must be a string', ctx=ctx)


# -- list_join ------------------------------------------------------------------------------


def test_list_join_single_list_in_early_versions():
    assert evaluate({"list_join": ["-", ["a", "b"]]}, "2013-05-23") == "a-b"
    with pytest.raises(StackValidationFailed) as info:
        parse({"list_join": ["-", ["a"], ["b"]]}, "2015-04-30")
    assert info.value.message == (
        'Incorrect arguments to "list_join" should be: "list_join" : [ " ", [ "str1", "str2"]]'
    )
    fails({"list_join": [",", ["a", 1]]}, "Items to join must be strings not 1", "2013-05-23")


def test_list_join_multiple_lists_and_json_items_from_2015_10_15():
    snippet = {"list_join": [", ", ["a", None], ["b", {"k": [1]}]]}
    assert evaluate(snippet, "2015-10-15") == 'a, , b, {"k": [1]}'
    # Heat: JoinMultiple refuses numbers (only string, map or list).
    fails({"list_join": [",", [1]]}, "Items to join must be string, map or list not 1")
    fails({"list_join": [",", "ab"]}, '"list_join" must operate on a list')
    fails({"list_join": [1, ["a"]]}, '"list_join" delimiter must be a string')


# -- str_replace family ------------------------------------------------------------------------


def test_str_replace_prefers_longer_keys_and_never_rescans():
    snippet = {
        "str_replace": {"template": "$var $var2 $var", "params": {"$var": "$var2", "$var2": "two"}}
    }
    # Heat: longest key first; replaced text is not replaced again.
    assert evaluate(snippet) == "$var2 two $var2"


def test_str_replace_values_before_and_after_2015_10_15():
    snippet = {"str_replace": {"template": "v=X", "params": {"X": [1, 2]}}}
    assert evaluate(snippet, "2015-10-15") == "v=[1, 2]"
    fails(
        snippet,
        '"str_replace" params must be strings or numbers, param X is not valid',
        "2015-04-30",
    )
    assert (
        evaluate({"str_replace": {"template": "X-Y", "params": {"X": 1, "Y": None}}}, "2013-05-23")
        == "1-"
    )


def test_str_replace_syntax_error_is_heats():
    with pytest.raises(StackValidationFailed) as info:
        parse({"str_replace": {"template": "x"}})
    assert info.value.message.startswith('"str_replace" syntax should be str_replace:\n')
    with pytest.raises(StackValidationFailed, match='Arguments to "str_replace" must be a map'):
        parse({"str_replace": ["x"]})
    with pytest.raises(StackValidationFailed, match='"str_replace" parameters must be a mapping'):
        parse({"str_replace": {"template": "x", "params": ["a"]}})


def test_str_replace_strict_requires_every_param_in_template():
    snippet = {"str_replace_strict": {"template": "a", "params": {"a": "1", "bb": "2", "c": "3"}}}
    fails(snippet, "The following params were not found in the template: bb,c")


def test_str_replace_vstrict_refuses_empty_values():
    snippet = {"str_replace_vstrict": {"template": "a", "params": {"a": ""}}}
    fails(
        snippet,
        "str_replace_vstrict has an undefined or empty value for param a, "
        "must be a defined non-empty value",
    )
    assert evaluate({"str_replace_strict": {"template": "a", "params": {"a": ""}}}) == ""


# -- str_split ------------------------------------------------------------------------------


def test_str_split_list_and_index():
    assert evaluate({"str_split": [",", "a,b,c"]}) == ["a", "b", "c"]
    assert evaluate({"str_split": [",", "a,b,c", "1"]}) == "b"
    fails(
        {"str_split": [",", "a,b", 5]}, 'Incorrect index to "str_split" should be between 0 and 1'
    )
    with pytest.raises(StackValidationFailed, match='Incorrect arguments to "str_split"'):
        parse({"str_split": "a,b"})


# -- repeat ------------------------------------------------------------------------------


def test_repeat_makes_every_combination():
    snippet = {"repeat": {"template": "%a%%b%", "for_each": {"%a%": ["1", "2"], "%b%": ["x", "y"]}}}
    assert evaluate(snippet, "2015-04-30") == ["1x", "1y", "2x", "2y"]


def test_repeat_over_map_keys_from_2016_10_14():
    snippet = {"repeat": {"template": "k=%k%", "for_each": {"%k%": {"a": 1, "b": 2}}}}
    assert evaluate(snippet, "2016-10-14") == ["k=a", "k=b"]
    fails(snippet, 'The values of the "for_each" argument to "repeat" must be lists', "2016-04-08")


def test_repeat_permutations_false_from_2017_09_01():
    snippet = {
        "repeat": {
            "template": "%a%%b%",
            "for_each": {"%a%": ["1", "2"], "%b%": ["x", "y"]},
            "permutations": False,
        }
    }
    assert evaluate(snippet, "2017-09-01") == ["1x", "2y"]
    unequal = {
        "repeat": {
            "template": "%a%%b%",
            "for_each": {"%a%": ["1"], "%b%": ["x", "y"]},
            "permutations": False,
        }
    }
    fails(unequal, "For repeat, the length of for_each values should be equal if no nested loop.")
    with pytest.raises(
        StackValidationFailed, match='"permutations" should be boolean type for repeat function.'
    ):
        parse({"repeat": {"template": "", "for_each": {"a": []}, "permutations": "no"}})


def test_repeat_syntax_errors():
    with pytest.raises(StackValidationFailed, match='"repeat" syntax should be repeat:'):
        parse({"repeat": {"template": "x"}})
    fails(
        {"repeat": {"template": "x", "for_each": ["a"]}},
        'The "for_each" argument to "repeat" must contain a map',
    )


# -- digest, resource_facade ------------------------------------------------------------------


def test_digest():
    assert evaluate({"digest": ["sha256", "abc"]}) == hashlib.sha256(b"abc").hexdigest()
    fails({"digest": ["sha256"]}, 'Function "digest" usage: ["<algorithm>", "<value>"]')
    fails({"digest": ["sha256", 1]}, 'Argument to function "digest" must be a list of strings')
    with pytest.raises(StackValidationFailed) as unknown:
        evaluate({"digest": ["sha999", "abc"]})
    # The algorithm given, then the allowed ones: the user sees what to fix and with what.
    assert 'Unknown algorithm "sha999": Algorithm must be one of ' in str(unknown.value)
    assert "sha256" in str(unknown.value)


def test_resource_facade_reads_parent_and_checks_name():
    ctx = FakeContext(facades={"metadata": {"role": "db"}})
    assert evaluate({"resource_facade": "metadata"}, ctx=ctx) == {"role": "db"}
    with pytest.raises(StackValidationFailed) as info:
        parse({"resource_facade": "Metadata"})
    assert info.value.message == (
        'Incorrect arguments to "resource_facade" should be one of: '
        "metadata, deletion_policy, update_policy"
    )


# -- maps and lists ------------------------------------------------------------------------


def test_map_merge_later_wins_and_null_is_empty():
    assert evaluate({"map_merge": [{"a": 1, "b": 1}, None, {"b": 2}]}) == {"a": 1, "b": 2}
    fails(
        {"map_merge": [{"a": 1}, ["x"]]},
        "Incorrect arguments: Items to merge must be maps. ['x'] is type <class 'list'> "
        "instead of a dict",
    )


def test_map_replace_keys_values_and_collisions():
    snippet = {
        "map_replace": [{"k1": "v1", "k2": "v2"}, {"keys": {"k1": "K1"}, "values": {"v2": "V2"}}]
    }
    assert evaluate(snippet) == {"K1": "v1", "k2": "V2"}
    fails(
        {"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "b"}}]},
        "key replacement b collides with a key in the input map",
    )
    with pytest.raises(StackValidationFailed, match='Incorrect arguments to "map_replace"'):
        evaluate({"map_replace": [{"a": 1}, {"other": {}}]})


def test_list_concat_and_unique():
    assert evaluate({"list_concat": [[1, 2], None, [2]]}) == [1, 2, 2]
    assert evaluate({"list_concat_unique": [[1, {"a": 1}], [{"a": 1}, 3]]}) == [1, {"a": 1}, 3]
    fails(
        {"list_concat": [[1], "ab"]},
        'Incorrect arguments: Items to concat must be lists. [[1], "ab"] contains an item '
        'that is not a list: "ab"',
    )


def test_contains_and_filter():
    assert evaluate({"contains": ["b", ["a", "b"]]}) is True
    # Heat: a string is a sequence too.
    assert evaluate({"contains": ["b", "abc"]}) is True
    fails({"contains": ["b", 3]}, 'Second argument to "contains" should be a sequence.')
    assert evaluate({"filter": [[None, 2], [1, None, 2, 3]]}) == [1, 3]
    with pytest.raises(StackValidationFailed, match='"filter" expected 2 arguments of the form'):
        parse({"filter": [[1]]})


# -- make_url ------------------------------------------------------------------------------


def test_make_url_escapes_parts_and_brackets_ipv6():
    snippet = {
        "make_url": {
            "scheme": "http",
            "username": "u@x",
            "password": "p w",
            "host": "fd00::1",
            "port": 8080,
            "path": "/a b",
            "query": {"q": "1/2"},
            "fragment": "top",
        }
    }
    assert evaluate(snippet) == "http://u%40x:p%20w@[fd00::1]:8080/a%20b?q=1/2#top"


def test_make_url_errors():
    fails(
        {"make_url": {"host": "h", "port": 70000}},
        "Invalid URL port 70000, must be in range 1-65535",
    )
    fails({"make_url": {"hots": "h"}}, 'Invalid arguments to "make_url": hots')
    fails({"make_url": {"scheme": "http:"}}, "URL \"scheme\" should not contain ':'")


# -- yaql ------------------------------------------------------------------------------


def test_yaql_evaluates_on_data():
    snippet = {
        "yaql": {"expression": "$.data.nums.where($ > 1).sum()", "data": {"nums": [1, 2, 3]}}
    }
    assert evaluate(snippet) == 5


def test_yaql_bad_expression_is_reported_at_validation():
    parsed = parse({"yaql": {"expression": "$.data.("}})
    with pytest.raises(StackValidationFailed) as info:
        base.validate(parsed)
    assert info.value.message.startswith("Bad expression ")
    assert info.value.path == "p.yaql"


def test_yaql_has_heats_iteration_limit():
    # Heat: [yaql] limit_iterators = 200 by default.
    with pytest.raises(StackValidationFailed, match="Collection length exceeds 200 elements"):
        evaluate({"yaql": {"expression": "range(1000).select($ * 2)"}})


def test_yaql_has_heats_memory_quota():
    with pytest.raises(StackValidationFailed, match="consumed too much memory"):
        evaluate({"yaql": {"expression": "$.data.s * 100000", "data": {"s": "x"}}})


def test_yaql_syntax():
    with pytest.raises(StackValidationFailed, match='"yaql" syntax should be yaql:'):
        parse({"yaql": {"expression": "1", "extra": 1}})
    with pytest.raises(StackValidationFailed, match='Arguments to "yaql" must be a map.'):
        parse({"yaql": "1"})
