# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Environments: loading one file, merging several, what nested stacks see."""

from __future__ import annotations

import os

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language import environment as E
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import TemplateError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.parameters import (
    parse_parameter_schemas, resolve_parameters,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "environments")


def fixture(name: str) -> str:
    return os.path.join(FIXTURES, name)


def load(name: str) -> E.Environment:
    return E.load_environment(fixture(name))[0]


def env_of(document, source="e.yaml") -> E.Environment:
    return E.parse_environment(document, source)


def load_error(name: str) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        E.load_environment(fixture(name))
    return info.value


# --- loading --------------------------------------------------------------------------

def test_every_section_is_read():
    env = load("base.yaml")
    assert env.parameters == {"flavor": "m1.small", "count": 2}
    assert env.parameter_defaults == {"key_name": "ops", "tags": ["a"]}
    assert env.encrypted_param_names == ("db_password",)
    assert env.event_sinks == ({"type": "zaqar-queue", "target": "myqueue"},)
    assert env.parameter_merge_strategies == {"default": "overwrite"}
    assert env.registry.resolve("My::Server", ("app",)) == "server.yaml"
    assert env.source == fixture("base.yaml")


def test_referenced_provider_templates_keyed_as_written():
    files = E.load_environment(fixture("base.yaml"))[1]
    assert files == {
        "server.yaml": os.path.join(FIXTURES, "server.yaml"),
        "templates/net.template": os.path.join(FIXTURES, "templates", "net.template"),
        "file:///srv/heat/abs.yaml": "/srv/heat/abs.yaml",
        # per-resource mappings are collected too (heatclient does the same)
        "db_server.yaml": os.path.join(FIXTURES, "db_server.yaml"),
    }


def test_base_url_is_honoured_as_heatclient_does():
    files = E.load_environment(fixture("base_url.yaml"))[1]
    assert files == {"a.yaml": "/opt/templates/a.yaml",
                     "special_a.yaml": "/elsewhere/special_a.yaml"}


def test_type_names_and_hooks_are_not_files():
    files = E.referenced_files({"A::B": "OS::Heat::None", "hooks": "pre-create",
                                "resources": {"r": {"hooks": ["pre-create"]}}}, "/d")
    assert files == {}


def test_wrong_section_names_the_file():
    err = load_error("wrong_section.yaml")
    assert err.message == 'environment has wrong section "paramters"'
    assert err.source == fixture("wrong_section.yaml")
    assert str(err).startswith(fixture("wrong_section.yaml") + ": ")


def test_not_a_mapping():
    assert load_error("not_mapping.yaml").message == \
        "The environment is not a valid YAML mapping data type."


def test_empty_file_is_an_empty_environment():
    env = load("empty.yaml")
    assert env.parameters == {} and env.registry.resolve("OS::Nova::Server", ("s",)) == \
        "OS::Nova::Server"


def test_bad_yaml_names_the_file():
    assert load_error("bad_yaml.yaml").source == fixture("bad_yaml.yaml")


def test_missing_file():
    err = load_error("no_such_file.yaml")
    assert err.message == "Could not read environment file: No such file or directory"


def test_bad_hook_is_refused_with_heats_words():
    assert load_error("bad_hook.yaml").message == (
        'Invalid hook type "pre-launch" for resource breakpoint, acceptable hook types are: '
        "('pre-create', 'pre-update', 'pre-delete', 'post-create', 'post-update', "
        "'post-delete')")


def test_dates_stay_strings_as_in_heats_loader():
    assert load("dates.yaml").parameters == {"release": "2016-10-14"}


def test_empty_sections_are_empty():
    env = env_of({"parameters": None, "resource_registry": None, "event_sinks": None})
    assert env.parameters == {} and env.event_sinks == ()


@pytest.mark.parametrize("section", ["parameters", "parameter_defaults", "resource_registry",
                                     "parameter_merge_strategies"])
def test_mapping_sections_must_be_mappings(section):
    with pytest.raises(TemplateError) as info:
        env_of({section: ["x"]})
    assert info.value.message == f'The "{section}" section must be a mapping.'


def test_list_sections_must_be_lists():
    with pytest.raises(TemplateError) as info:
        env_of({"event_sinks": {"a": 1}})
    assert info.value.message == 'The "event_sinks" section must be a list.'


def test_empty_environment():
    assert E.EMPTY_ENVIRONMENT.parameters == {}
    assert E.EMPTY_ENVIRONMENT.registry.hooks(("a",)) == frozenset()


# --- nested stacks --------------------------------------------------------------------

def test_nested_stack_sees_parameter_defaults_not_parameters():
    nested = load("base.yaml").for_nested("db")
    assert nested.parameters == {}
    assert nested.parameter_defaults == {"key_name": "ops", "tags": ["a"]}
    assert nested.event_sinks == load("base.yaml").event_sinks


def test_nested_parameter_defaults_fill_nested_parameters():
    nested = load("base.yaml").for_nested("web")
    schemas = parse_parameter_schemas({"key_name": {"type": "string"}}, "n.yaml", "2018-08-31")
    assert resolve_parameters(schemas, {}, nested, "n.yaml").values == {"key_name": "ops"}


def test_nested_registry_is_scoped_to_the_resource():
    env = env_of({"resource_registry": {"resources": {
        "group": {"0": {"hooks": "pre-create"}, "*": {"restricted_actions": "update"}}}}})
    nested = env.for_nested("group")
    assert nested.registry.hooks(("0",)) == frozenset({"pre-create"})
    assert nested.registry.restricted_actions(("1",)) == frozenset({"update"})
    assert env.for_nested("other").registry.hooks(("0",)) == frozenset()


# --- merging --------------------------------------------------------------------------

def test_merge_none_and_one():
    assert E.merge_environments([]) is E.EMPTY_ENVIRONMENT
    one = load("base.yaml")
    merged = E.merge_environments([one])
    assert merged.parameters == one.parameters and merged.parameter_merge_strategies == {}


def test_merge_in_order_later_wins_by_default():
    merged = E.merge_environments([load("base.yaml"), load("override.yaml")])
    assert merged.parameters == {"flavor": "m1.large", "count": 2}
    # override.yaml asks `merge` for tags: lists are extended
    assert merged.parameter_defaults == {"key_name": "ops", "tags": ["a", "b"], "extra": {"x": 1}}
    assert merged.encrypted_param_names == ("db_password",)
    assert merged.source == fixture("override.yaml")


def test_merged_registry_layers_entries_and_null_removes():
    merged = E.merge_environments([load("base.yaml"), load("override.yaml")])
    reg = merged.registry
    assert reg.resolve("My::Net", ("n",)) == "My::Net"          # removed by null
    assert reg.resolve("My::Server", ("app",)) == "server.yaml"  # kept
    assert reg.hooks(("web",)) == frozenset({"pre-delete"})      # added
    assert reg.hooks(("db",)) == frozenset({"pre-create"})       # kept
    assert reg.restricted_actions(("db",)) == frozenset({"update", "replace"})


def strategies_env(source, section, values, strategies=None):
    document = {section: values}
    if strategies is not None:
        document["parameter_merge_strategies"] = strategies
    return env_of(document, source)


SCHEMAS = parse_parameter_schemas({
    "s": {"type": "string"}, "n": {"type": "number"}, "l": {"type": "comma_delimited_list"},
    "j": {"type": "json"}, "b": {"type": "boolean"}}, "t.yaml", "2018-08-31")


def merged_params(*envs, typed=True):
    return E.merge_environments(list(envs), SCHEMAS if typed else None).parameters


def test_merge_strategy_merge_per_type():
    first = strategies_env("1.yaml", "parameters",
                           {"s": "ab", "n": 1, "l": "x,y", "j": {"a": {"k": 1}}})
    second = strategies_env("2.yaml", "parameters",
                            {"s": "cd", "n": "2", "l": "z", "j": {"a": {"m": 2}, "b": 3}},
                            {"default": "merge"})
    assert merged_params(first, second) == {
        "s": "abcd", "n": 3, "l": "x,y,z", "j": {"a": {"m": 2}, "b": 3}}


def test_merge_strategy_deep_merge_json():
    first = strategies_env("1.yaml", "parameters", {"j": {"a": {"k": 1}, "l": [1]}})
    second = strategies_env("2.yaml", "parameters", {"j": '{"a": {"m": 2}, "l": [2]}'},
                            {"j": "deep_merge"})
    assert merged_params(first, second) == {"j": {"a": {"k": 1, "m": 2}, "l": [1, 2]}}


def test_deep_merge_on_a_list_falls_back_to_merge():
    first = strategies_env("1.yaml", "parameters", {"l": ["a"]})
    second = strategies_env("2.yaml", "parameters", {"l": ["b"]}, {"l": "deep_merge"})
    assert merged_params(first, second) == {"l": ["a", "b"]}


def test_unknown_strategy_falls_back_to_the_files_default():
    first = strategies_env("1.yaml", "parameters", {"s": "a"})
    second = strategies_env("2.yaml", "parameters", {"s": "b"},
                            {"default": "merge", "s": "append"})
    assert merged_params(first, second) == {"s": "ab"}


def test_merge_of_a_boolean_is_refused():
    first = strategies_env("1.yaml", "parameters", {"b": True})
    second = strategies_env("2.yaml", "parameters", {"b": False}, {"b": "deep_merge"})
    with pytest.raises(TemplateError) as info:
        merged_params(first, second)
    # Heat names 'merge' whatever merging strategy was asked for
    assert info.value.message == "Invalid merge strategy 'merge' for parameter 'b'."
    assert info.value.source == "2.yaml"


def test_conflicting_strategies_across_files():
    # settled from Heat's source: the strategy is recorded from the second file on,
    # shared by parameters and parameter_defaults, and must not change afterwards
    first = strategies_env("1.yaml", "parameters", {"s": "a"})
    second = strategies_env("2.yaml", "parameters", {"s": "b"})
    third = strategies_env("3.yaml", "parameter_defaults", {"s": "c"}, {"s": "merge"})
    forth = strategies_env("4.yaml", "parameter_defaults", {"s": "d"}, {"s": "merge"})
    E.merge_environments([first, second, forth])
    with pytest.raises(TemplateError) as info:
        E.merge_environments([first, second, forth, third], SCHEMAS)
    assert info.value.message == \
        "Conflicting merge strategy 'merge' for parameter 's' in file '3.yaml'."


def test_later_files_drop_names_the_template_does_not_declare():
    first = strategies_env("1.yaml", "parameters", {"s": "a", "zz": 1})
    second = strategies_env("2.yaml", "parameters", {"s": "b", "yy": 2})
    # as Heat: the first section is taken whole, later unknown names are ignored
    assert merged_params(first, second) == {"s": "b", "zz": 1}
    assert merged_params(first, second, typed=False) == {"s": "b", "zz": 1, "yy": 2}


def test_null_values_in_later_files_are_skipped():
    first = strategies_env("1.yaml", "parameter_defaults", {"s": "a"})
    second = strategies_env("2.yaml", "parameter_defaults", {"s": None})
    assert E.merge_environments([first, second], SCHEMAS).parameter_defaults == {"s": "a"}


def test_merge_without_schemas_guesses_types():
    first = strategies_env("1.yaml", "parameters", {"j": {"a": 1}, "l": ["a"]})
    second = strategies_env("2.yaml", "parameters", {"j": {"b": 2}, "l": ["b"]},
                            {"default": "merge"})
    expected = {"j": {"a": 1, "b": 2}, "l": ["a", "b"]}
    assert merged_params(first, second, typed=False) == expected


def test_invalid_json_while_merging():
    first = strategies_env("1.yaml", "parameters", {"j": {"a": 1}})
    second = strategies_env("2.yaml", "parameters", {"j": "{oops"}, {"default": "merge"})
    with pytest.raises(TemplateError) as info:
        merged_params(first, second)
    assert info.value.message.startswith("Invalid parameter in environment Expecting")
    assert info.value.path == "parameters.j"


def test_merging_does_not_change_the_inputs():
    first = strategies_env("1.yaml", "parameters", {"j": {"a": {"k": 1}}})
    second = strategies_env("2.yaml", "parameters", {"j": {"a": {"m": 2}}},
                            {"default": "deep_merge"})
    merged_params(first, second)
    assert first.parameters == {"j": {"a": {"k": 1}}}


def test_merge_then_resolve_uses_the_merged_values():
    merged = E.merge_environments([load("base.yaml"), load("override.yaml")])
    schemas = parse_parameter_schemas({"flavor": {"type": "string"},
                                       "count": {"type": "number"}}, "t.yaml", "2018-08-31")
    assert resolve_parameters(schemas, {}, merged, "t.yaml").values == \
        {"flavor": "m1.large", "count": 2}
