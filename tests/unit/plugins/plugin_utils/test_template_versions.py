# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The version table: which functions and sections each heat_template_version has."""

from __future__ import annotations

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import TemplateError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions import hot
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.versions import (
    VERSIONS,
    version_of,
)

DATES = [
    "2013-05-23",
    "2014-10-16",
    "2015-04-30",
    "2015-10-15",
    "2016-04-08",
    "2016-10-14",
    "2017-02-24",
    "2017-09-01",
    "2018-03-02",
    "2018-08-31",
    "2021-04-16",
]
ALIASES = {
    "newton": "2016-10-14",
    "ocata": "2017-02-24",
    "pike": "2017-09-01",
    "queens": "2018-03-02",
    "rocky": "2018-08-31",
    "wallaby": "2021-04-16",
}

# Heat: heat/engine/hot/template.py, function tables of HOTemplate20130523 ... 20210416.
FIRST_VERSION = {
    "get_param": "2013-05-23",
    "get_resource": "2013-05-23",
    "get_attr": "2013-05-23",
    "get_file": "2013-05-23",
    "list_join": "2013-05-23",
    "str_replace": "2013-05-23",
    "resource_facade": "2013-05-23",
    "digest": "2015-04-30",
    "repeat": "2015-04-30",
    "str_split": "2015-10-15",
    "map_merge": "2016-04-08",
    "yaql": "2016-10-14",
    "map_replace": "2016-10-14",
    "if": "2016-10-14",
    "filter": "2017-02-24",
    "str_replace_strict": "2017-02-24",
    "make_url": "2017-09-01",
    "list_concat": "2017-09-01",
    "list_concat_unique": "2017-09-01",
    "str_replace_vstrict": "2017-09-01",
    "contains": "2017-09-01",
}
CFN_REMOVED_IN = {
    "Fn::GetAZs": "2014-10-16",
    "Fn::Join": "2014-10-16",
    "Fn::Split": "2014-10-16",
    "Fn::Replace": "2014-10-16",
    "Fn::Base64": "2014-10-16",
    "Fn::MemberListToMap": "2014-10-16",
    "Fn::ResourceFacade": "2014-10-16",
    "Ref": "2014-10-16",
    "Fn::Select": "2015-10-15",
}


def test_every_version_and_alias_is_known():
    assert set(DATES) | set(ALIASES) == set(VERSIONS)
    for alias, date in ALIASES.items():
        assert VERSIONS[alias] is VERSIONS[date]
        assert alias in VERSIONS[date].aliases


@pytest.mark.parametrize("version", DATES)
def test_functions_available_exactly_from_their_version(version):
    table = VERSIONS[version]
    for name, first in FIRST_VERSION.items():
        assert table.available(name) == (version >= first), (name, version)
    for name, removed in CFN_REMOVED_IN.items():
        assert table.available(name) == (version < removed), (name, version)
        if version >= removed:
            assert table.functions[name] is hot.Removed


def test_behaviour_changes_are_table_entries():
    assert VERSIONS["2013-05-23"].functions["list_join"] is hot.Join
    assert VERSIONS["2015-10-15"].functions["list_join"] is hot.JoinMultiple
    assert VERSIONS["2015-04-30"].functions["str_replace"] is hot.Replace
    assert VERSIONS["2015-10-15"].functions["str_replace"] is hot.ReplaceJson
    assert VERSIONS["2016-04-08"].functions["repeat"] is hot.Repeat
    assert VERSIONS["2016-10-14"].functions["repeat"] is hot.RepeatWithMap
    assert VERSIONS["2017-09-01"].functions["repeat"] is hot.RepeatWithNestedLoop
    assert not VERSIONS["2018-08-31"].functions["if"].nullable
    assert VERSIONS["2021-04-16"].functions["if"].nullable


def test_conditions_exist_from_2016_10_14():
    assert not VERSIONS["2016-04-08"].has_conditions
    assert VERSIONS["2016-04-08"].condition_functions == {}
    newton = VERSIONS["newton"]
    assert newton.has_conditions
    assert {"condition", "external_id"} <= newton.resource_keys
    assert "condition" in newton.output_keys
    assert {"equals", "not", "and", "or", "get_param"} <= set(newton.condition_functions)


def test_lower_case_deletion_policies_from_2016_10_14():
    assert VERSIONS["2016-04-08"].deletion_policies == ("Delete", "Retain", "Snapshot")
    assert "retain" in VERSIONS["2016-10-14"].deletion_policies


def test_parameter_tags_from_2018_03_02():
    assert "tags" not in VERSIONS["2017-09-01"].parameter_keys
    assert "tags" in VERSIONS["queens"].parameter_keys


# -- version_of ------------------------------------------------------------------------------


def test_version_of_accepts_dates_and_names():
    assert version_of({"heat_template_version": "rocky"}, "t.yaml").key == "2018-08-31"


def test_missing_version_is_heats_message():
    with pytest.raises(TemplateError) as info:
        version_of({"resources": {}}, "t.yaml")
    assert info.value.message == "Template format version not found."
    assert info.value.source == "t.yaml"


def test_unknown_version_lists_every_accepted_value():
    with pytest.raises(TemplateError) as info:
        version_of({"heat_template_version": "2012-12-12"}, "t.yaml")
    assert info.value.message == (
        'The template version is invalid: "heat_template_version: 2012-12-12". '
        '"heat_template_version" should be one of: 2013-05-23, 2014-10-16, 2015-04-30, '
        "2015-10-15, 2016-04-08, 2016-10-14, 2017-02-24, 2017-09-01, 2018-03-02, 2018-08-31, "
        "2021-04-16, newton, ocata, pike, queens, rocky, wallaby"
    )


def test_version_that_is_not_a_string():
    with pytest.raises(TemplateError) as info:
        version_of({"heat_template_version": 2015}, "t.yaml")
    assert (
        info.value.message == "The template version is invalid: Template version was not provided"
    )
