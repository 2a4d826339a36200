# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CFN functions HOT 2013-05-23 accepts, and their removal in later versions."""

from __future__ import annotations

import pytest
from test_functions_support import FakeContext, FakeResource, evaluate, parse

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions import base

OLD = "2013-05-23"


def test_ref_is_a_resource_reference_or_a_parameter():
    ctx = FakeContext(params={"size": 3}, resources={"vol": FakeResource("vol")})
    parsed = parse([{"Ref": "vol"}, {"Ref": "size"}, {"Ref": "OS::stack_name"}], OLD, ctx)
    assert base.dependencies(parsed) == {"vol"}
    assert base.resolve(parsed) == ["vol-id", 3, "teststack"]
    with pytest.raises(StackValidationFailed) as info:
        evaluate({"Ref": "nothing"}, OLD, ctx)
    assert info.value.message == 'The specified reference "nothing" (in p) is incorrect.'


def test_select_from_list_map_and_json_text():
    assert evaluate({"Fn::Select": ["1", ["a", "b"]]}, OLD) == "b"
    assert evaluate({"Fn::Select": ["k", {"k": "v"}]}, OLD) == "v"
    assert evaluate({"Fn::Select": [0, '["x"]']}, OLD) == "x"
    # Heat: an index or key that is not there gives ''.
    assert evaluate({"Fn::Select": [5, ["a"]]}, OLD) == ""
    assert evaluate({"Fn::Select": ["z", {"k": "v"}]}, OLD) == ""
    with pytest.raises(StackValidationFailed, match='Index to "Fn::Select" must be a string'):
        evaluate({"Fn::Select": [1, {"k": "v"}]}, OLD)


def test_join_split_replace_base64():
    assert evaluate({"Fn::Join": [",", ["a", "b"]]}, OLD) == "a,b"
    assert evaluate({"Fn::Split": [",", "a,b"]}, OLD) == ["a", "b"]
    assert evaluate({"Fn::Replace": [{"$x": "1", "%y%": 2}, "$x and %y%"]}, OLD) == "1 and 2"
    assert evaluate({"Fn::Base64": "plain"}, OLD) == "plain"
    with pytest.raises(StackValidationFailed) as info:
        parse({"Fn::Replace": {"$x": "1"}}, OLD)
    assert info.value.message == (
        'Incorrect arguments to "Fn::Replace" should be: '
        '{"Fn::Replace": [ {"$var1": "foo", "%var2%": "bar"}, "$var1 is %var2%"]}'
    )


def test_member_list_to_map():
    snippet = {
        "Fn::MemberListToMap": [
            "Name",
            "Value",
            [
                ".member.0.Name=owner",
                ".member.0.Value=ops",
                ".member.1.Name=tier",
                ".member.1.Value=web",
            ],
        ]
    }
    assert evaluate(snippet, OLD) == {"owner": "ops", "tier": "web"}
    with pytest.raises(
        StackValidationFailed, match="Fn::MemberListToMap Key Name must be a string"
    ):
        parse({"Fn::MemberListToMap": [1, "Value", []]}, OLD)


def test_resource_facade_cfn_names():
    ctx = FakeContext(facades={"deletion_policy": "Retain"})
    assert evaluate({"Fn::ResourceFacade": "DeletionPolicy"}, OLD, ctx) == "Retain"


def test_get_azs_answers_like_heat_without_nova():
    assert evaluate({"Fn::GetAZs": ""}, OLD) == ["nova"]


@pytest.mark.parametrize(
    "name, args",
    [
        ("Fn::Join", [",", ["a"]]),
        ("Fn::Split", [",", "a"]),
        ("Fn::Replace", [{}, "a"]),
        ("Fn::Base64", "a"),
        ("Fn::GetAZs", ""),
        ("Ref", "x"),
        ("Fn::ResourceFacade", "Metadata"),
        ("Fn::MemberListToMap", ["Name", "Value", []]),
    ],
)
def test_cfn_functions_removed_from_2014_10_16(name, args):
    with pytest.raises(StackValidationFailed) as info:
        evaluate({name: args}, "2014-10-16")
    # Heat: hot/functions.py Removed.validate, wrapped in InvalidTemplateVersion.
    assert info.value.message == (
        f"The template version is invalid: The function {name} is not supported in this "
        "version of HOT."
    )
    assert info.value.path == f"p.{name}"


def test_select_lives_until_2015_04_30():
    assert evaluate({"Fn::Select": [0, ["a"]]}, "2015-04-30") == "a"
    with pytest.raises(StackValidationFailed, match="Fn::Select is not supported"):
        evaluate({"Fn::Select": [0, ["a"]]}, "2015-10-15")


def test_fn_getatt_is_plain_data_in_hot():
    # Heat: no HOT version's function table has Fn::GetAtt (CFN templates only).
    snippet = {"Fn::GetAtt": ["server", "name"]}
    assert evaluate(snippet, OLD) == snippet
