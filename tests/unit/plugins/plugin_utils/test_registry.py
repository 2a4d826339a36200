# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resource registry: aliases, wildcards, null, per-resource entries, nesting."""

from __future__ import annotations

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import TemplateError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.registry import (
    EMPTY_REGISTRY, ResourceRegistry,
)


def reg(snippet, source="e.yaml") -> ResourceRegistry:
    return ResourceRegistry.from_snippet(snippet, source)


# --- type resolution ------------------------------------------------------------------

def test_unmapped_type_is_returned_as_is():
    assert EMPTY_REGISTRY.resolve("OS::Nova::Server", ("s",)) == "OS::Nova::Server"
    assert EMPTY_REGISTRY.resolve("OS::Nova::Server", ()) == "OS::Nova::Server"


def test_alias_chain_is_followed():
    r = reg({"A::One": "A::Two", "A::Two": "OS::Heat::None"})
    assert r.resolve("A::One", ("x",)) == "OS::Heat::None"


def test_mapping_to_a_template_yields_its_key():
    r = reg({"My::Server": "server.yaml", "My::Alias": "My::Server", "My::T": "x.template"})
    assert r.resolve("My::Server", ("s",)) == "server.yaml"
    assert r.resolve("My::Alias", ("s",)) == "server.yaml"
    assert r.resolve("My::T", ("s",)) == "x.template"


def test_template_type_is_its_own_implementation():
    assert reg({"My::A": "a.yaml"}).resolve("nested.yaml", ("n",)) == "nested.yaml"


def test_only_yaml_and_template_suffixes_are_templates():
    # Heat: "The template file extension must be .yaml or .template"
    assert reg({"My::A": "a.yml"}).resolve("My::A", ("x",)) == "a.yml"
    assert reg({"My::A": "a.yml", "a.yml": "b.yaml"}).resolve("My::A", ("x",)) == "b.yaml"


def test_wildcard_mapping_keeps_the_suffix():
    r = reg({"OS::Networking::*": "OS::Neutron::*"})
    assert r.resolve("OS::Networking::FloatingIP", ("f",)) == "OS::Neutron::FloatingIP"
    assert r.resolve("OS::Nova::Server", ("s",)) == "OS::Nova::Server"


def test_wildcard_without_separator_as_in_heats_docs():
    r = reg({"OS::Network*": "OS::Neutron*"})
    assert r.resolve("OS::Networking::Net", ("n",)) == "OS::Neutroning::Net"


def test_many_to_one_wildcard_does_not_loop_on_its_target():
    # Heat's GlobResourceInfo.matches excludes the glob's own target
    r = reg({"OS::*": "OS::Heat::None"})
    assert r.resolve("OS::Nova::Server", ("s",)) == "OS::Heat::None"


def test_matching_wildcard_beats_exact_entry_as_in_heat():
    # settled from Heat's source: ResourceInfo.__lt__ orders entries of equal
    # path length lexicographically, and "*" sorts before any letter
    r = reg({"OS::Networking::FloatingIP": "A::Exact", "OS::Networking::*": "OS::Neutron::*"})
    assert r.resolve("OS::Networking::FloatingIP", ("f",)) == "OS::Neutron::FloatingIP"


def test_wildcard_onto_a_template_never_matches():
    # Heat makes it a TemplateResourceInfo, whose matches() is always false
    assert reg({"My::*": "x.yaml"}).resolve("My::Thing", ("t",)) == "My::Thing"


def test_per_resource_mapping_beats_global():
    r = reg({"My::Server": "server.yaml",
             "resources": {"db": {"My::Server": "db.yaml"}}})
    assert r.resolve("My::Server", ("db",)) == "db.yaml"
    assert r.resolve("My::Server", ("web",)) == "server.yaml"


def test_per_resource_type_mapping_is_by_exact_name():
    # Heat's iterable_by looks up resources[resource_name]; no fnmatch for types
    r = reg({"resources": {"db*": {"My::Server": "db.yaml"}}})
    assert r.resolve("My::Server", ("db1",)) == "My::Server"


def test_per_resource_alias_target_is_resolved_with_the_same_name():
    r = reg({"My::Server": "My::Other",
             "resources": {"db": {"My::Other": "db.yaml"}}})
    assert r.resolve("My::Server", ("db",)) == "db.yaml"


def test_alias_loop_is_an_error():
    with pytest.raises(TemplateError) as info:
        reg({"A::X": "A::Y", "A::Y": "A::X"}).resolve("A::X", ("r",))
    assert info.value.message == \
        "Circular resource type mapping in resource_registry: A::X -> A::Y -> A::X"


def test_self_mapping_is_a_loop():
    with pytest.raises(TemplateError):
        reg({"A::X": "A::X"}).resolve("A::X", ("r",))


def test_growing_wildcard_is_a_loop():
    with pytest.raises(TemplateError) as info:
        reg({"A::*": "A::B::*"}).resolve("A::X", ("r",))
    assert info.value.message.startswith("Circular resource type mapping")


# --- null -----------------------------------------------------------------------------

def test_null_removes_an_earlier_mapping():
    r = reg({"My::A": "a.yaml", "My::B": "b.yaml"}).layered({"My::A": None})
    assert r.resolve("My::A", ("x",)) == "My::A"
    assert r.resolve("My::B", ("x",)) == "b.yaml"


def test_wildcard_null_removes_every_mapping_with_the_prefix():
    r = reg({"My::A": "a.yaml", "My::B": "b.yaml", "Other::C": "c.yaml"}).layered({"My::*": None})
    assert r.resolve("My::A", ("x",)) == "My::A" and r.resolve("My::B", ("x",)) == "My::B"
    assert r.resolve("Other::C", ("x",)) == "c.yaml"


def test_null_inside_a_resource_entry():
    r = reg({"resources": {"web": {"hooks": "pre-create", "restricted_actions": "update"}}})
    r = r.layered({"resources": {"web": {"hooks": None}}})
    assert r.hooks(("web",)) == frozenset()
    assert r.restricted_actions(("web",)) == frozenset({"update"})


def test_later_layer_replaces_and_keeps_others():
    r = reg({"My::A": "a.yaml", "resources": {"db": {"hooks": "pre-create"}}})
    r = r.layered({"My::A": "b.yaml", "resources": {"web": {"hooks": "post-create"}}})
    assert r.resolve("My::A", ("x",)) == "b.yaml"
    assert r.hooks(("db",)) == {"pre-create"} and r.hooks(("web",)) == {"post-create"}


def test_combined_replays_nulls_of_the_later_registry():
    later = reg({"My::A": None}, "2.yaml")
    assert reg({"My::A": "a.yaml"}).combined(later).resolve("My::A", ("x",)) == "My::A"


def test_registry_values_must_be_names():
    with pytest.raises(TemplateError) as info:
        reg({"My::A": 5})
    assert info.value.message == \
        'Invalid resource_registry value "5" for "My::A": expected a type name or a template file'
    assert info.value.path == "resource_registry.My::A" and info.value.source == "e.yaml"


# --- hooks and restricted actions -----------------------------------------------------

def test_hooks_string_or_list_with_fnmatch():
    r = reg({"resources": {"web": {"hooks": "pre-create"},
                           "*_server": {"hooks": ["pre-update", "post-delete"]},
                           "app_*": {"hooks": "pre-delete"}}})
    assert r.hooks(("web",)) == frozenset({"pre-create"})
    assert r.hooks(("app_server",)) == frozenset({"pre-update", "post-delete", "pre-delete"})
    assert r.hooks(("server",)) == frozenset()
    assert r.hooks(()) == frozenset()


def test_hooks_in_nested_stacks_by_nesting():
    # the layout from Heat's environment docs
    r = reg({"resources": {"nested_stack": {
        "hooks": "pre-create",
        "nested_resource": {"hooks": "pre-update"},
        "another_resource": {"hooks": ["pre-create", "pre-update"]}}}})
    assert r.hooks(("nested_stack",)) == {"pre-create"}
    assert r.hooks(("nested_stack", "nested_resource")) == {"pre-update"}
    assert r.hooks(("nested_stack", "another_resource")) == {"pre-create", "pre-update"}
    assert r.hooks(("nested_resource",)) == frozenset()


def test_nesting_through_a_group_with_patterns():
    r = reg({"resources": {"group": {"*": {"server": {"hooks": "pre-create"}}}}})
    assert r.hooks(("group", "0", "server")) == {"pre-create"}
    assert r.hooks(("group", "7", "server")) == {"pre-create"}
    assert r.hooks(("group", "0", "port")) == frozenset()


def test_exact_entry_wins_over_patterns_when_nesting():
    # Heat's remove_resources_except: matching patterns first, then the exact name
    r = reg({"resources": {
        "group": {"server": {"hooks": "pre-create"}},
        "gr*": {"server": {"hooks": "post-create"}}}})
    assert r.hooks(("group", "server")) == {"pre-create"}


def test_restricted_actions():
    r = reg({"resources": {"db": {"restricted_actions": ["update", "replace"]},
                           "*": {"restricted_actions": "replace"},
                           "stack": {"inner": {"restricted_actions": "update"}}}})
    assert r.restricted_actions(("db",)) == {"update", "replace"}
    assert r.restricted_actions(("web",)) == {"replace"}
    assert r.restricted_actions(("stack", "inner")) == {"update"}


@pytest.mark.parametrize("value", ["pre-launch", ["pre-create", "bogus"], 5])
def test_invalid_hooks(value):
    with pytest.raises(TemplateError) as info:
        reg({"resources": {"web": {"hooks": value}}})
    assert info.value.message == (
        f'Invalid hook type "{value}" for resource breakpoint, acceptable hook types are: '
        "('pre-create', 'pre-update', 'pre-delete', 'post-create', 'post-update', "
        "'post-delete')")
    assert info.value.path == "resource_registry.resources.web.hooks"


def test_invalid_restricted_action():
    with pytest.raises(TemplateError) as info:
        reg({"resources": {"web": {"restricted_actions": "delete"}}})
    assert info.value.message == (
        'Invalid restricted_action type "delete" for resource, acceptable '
        "restricted_action types are: ('update', 'replace')")


def test_hooks_are_kept_in_the_definition():
    snippet = {"resources": {"web": {"hooks": ["pre-create"], "restricted_actions": "update"}}}
    assert reg(snippet).as_dict() == snippet


# --- nested registries and provider templates -----------------------------------------

def test_provider_template_does_not_see_its_own_mapping():
    # Heat's get_child_environment(item_to_remove=...): inside server.yaml an
    # OS::Nova::Server resource is the real one, not server.yaml again
    r = reg({"OS::Nova::Server": "server.yaml"})
    nested = r.nested("web", "OS::Nova::Server")
    assert nested.resolve("OS::Nova::Server", ("vm",)) == "OS::Nova::Server"
    assert r.nested("web").resolve("OS::Nova::Server", ("vm",)) == "server.yaml"


def test_removed_entry_is_the_one_that_named_the_template():
    r = reg({"My::Alias": "My::Server", "My::Server": "server.yaml"})
    nested = r.nested("web", "My::Alias")
    assert nested.resolve("My::Server", ("vm",)) == "My::Server"
    assert nested.resolve("My::Alias", ("vm",)) == "My::Server"


def test_mapping_to_a_builtin_is_not_removed():
    r = reg({"My::Thing": "OS::Heat::None"})
    assert r.nested("x", "My::Thing").resolve("My::Thing", ("y",)) == "OS::Heat::None"


def test_resolve_with_via_types_applies_removal_at_each_level():
    r = reg({"OS::Nova::Server": "server.yaml"})
    assert r.resolve("OS::Nova::Server", ("web", "vm"), via_types=("OS::Nova::Server",)) == \
        "OS::Nova::Server"
    assert r.resolve("OS::Nova::Server", ("web", "vm")) == "server.yaml"


def test_per_resource_mapping_applies_inside_nested_stacks():
    r = reg({"resources": {"group": {"0": {"My::Server": "special.yaml"}}}})
    assert r.resolve("My::Server", ("group", "0")) == "special.yaml"
    assert r.resolve("My::Server", ("group", "1")) == "My::Server"


def test_nested_registry_keeps_global_mappings():
    r = reg({"OS::Networking::*": "OS::Neutron::*", "resources": {"a": {"hooks": "pre-create"}}})
    nested = r.nested("stack")
    assert nested.resolve("OS::Networking::Net", ("n",)) == "OS::Neutron::Net"
    assert nested.hooks(("a",)) == frozenset()
