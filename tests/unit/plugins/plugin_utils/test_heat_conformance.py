# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Divergences from Heat the differential tester (tests/differential) found, each
shrunk to a case; the comment says what the real Heat 27.0.1 engine did with it."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.hooks import clear_hooks
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


@pytest.fixture
def stack(tmp_path: Path):
    store = SqliteStore(str(tmp_path / "store.db"))

    class Stack:
        def apply(self, text: str, files: dict[str, str] | None = None, **request: Any) -> dict[str, Any]:
            for name, body in (files or {}).items():
                (tmp_path / name).write_text(textwrap.dedent(body))
            path = tmp_path / "main.yaml"
            path.write_text(textwrap.dedent(text))
            return apply_stack(store, ApplyRequest(name="s", template=str(path), nested_depth=3, **request),
                               "test").as_dict()

        def refused(self, text: str, files: dict[str, str] | None = None, **request: Any) -> str:
            with pytest.raises(HotplayError) as caught:
                self.apply(text, files, **request)
            return str(caught.value)

        def with_hooks(self, registry: str) -> list[str]:
            """An environment whose ``resources`` entries are ``registry``."""
            (tmp_path / "hooks.yaml").write_text(f"resource_registry: {{resources: {registry}}}\n")
            return [str(tmp_path / "hooks.yaml")]

        def through_hooks(self, text: str, **request: Any) -> tuple[dict[str, Any], list[list[str]]]:
            """Apply, clearing every pending hook (as stack_hook does) and applying
            again until none is pending: the result, and where it stopped."""
            pauses: list[list[str]] = []
            result = self.apply(text, **request)
            while result["hooks_pending"]:
                pauses.append(sorted(f"{h['resource']}:{h['hook']}" for h in result["hooks_pending"]))
                clear_hooks(store, "s")
                result = self.apply(text, **request)
            return result, pauses

    yield Stack()
    store.close()


def statuses(result: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["status"] for r in result["resources"]}


def test_none_never_resolves_its_properties(stack):
    # Heat: CREATE_COMPLETE (OS::Heat::None re-parses its properties with an empty
    # schema and its validate() does nothing).
    result = stack.apply("""\
        heat_template_version: 2016-10-14
        resources:
          r:
            type: OS::Heat::None
            properties:
              joined: {list_join: ['-', ['a', false]]}
              missing: {get_param: [missing, 1]}
            deletion_policy: Snapshot
        """)
    assert result["stack_status"] == "CREATE_COMPLETE"


def test_an_unknown_deletion_policy_is_refused_even_on_none(stack):
    # Heat: 400 StackValidationFailed: Invalid deletion policy "Bogus"
    assert stack.refused("""\
        heat_template_version: 2016-10-14
        resources:
          r: {type: OS::Heat::None, deletion_policy: Bogus}
        """).endswith('Invalid deletion policy "Bogus"')


def test_none_metadata_change_is_no_update(stack):
    # Heat: after the update the None stays CREATE_COMPLETE (_needs_update is False);
    # the TestResource whose metadata changed is UPDATE_COMPLETE.
    stack.apply("""\
        heat_template_version: 2016-10-14
        resources:
          none: {type: OS::Heat::None, metadata: {a: 1}}
          test: {type: OS::Heat::TestResource, metadata: {a: 1}}
        """)
    result = stack.apply("""\
        heat_template_version: 2016-10-14
        resources:
          none: {type: OS::Heat::None, metadata: {a: 2}}
          test: {type: OS::Heat::TestResource, metadata: {a: 2}}
        """)
    assert statuses(result) == {"none": "CREATE_COMPLETE", "test": "UPDATE_COMPLETE"}


DUPLICATE = """\
    heat_template_version: 2016-10-14
    parameters:
      p0: {type: string, default: x}
    resources:
      p0: {type: OS::Heat::None}
"""
STRICT_P1 = "  p1: {type: boolean, default: false, constraints: [{allowed_values: [true]}]}\n"


@pytest.mark.parametrize("text, heat_said", [
    # A name used by a parameter and a resource.
    (DUPLICATE, "Duplicate names {'p0'}"),
    # The same before a wrong depends_on: Heat builds its dependency graph afterwards.
    (DUPLICATE + "      r1: {type: OS::Heat::None, depends_on: ghost}\n", "Duplicate names {'p0'}"),
    # Parameters in order, each default then value: p0 is missing before p1's
    # default is looked at.
    ("heat_template_version: 2016-10-14\nparameters:\n  p0: {type: string}\n" + STRICT_P1
     + "resources:\n  r: {type: OS::Heat::None}\n", "The Parameter (p0) was not provided."),
    # Allowed values written as JSON.
    ("heat_template_version: 2016-10-14\nparameters:\n" + STRICT_P1 + "resources:\n  r: {type: OS::Heat::None}\n",
     "Parameter 'p1' is invalid: Invalid default False (false is not an allowed value [true])"),
])
def test_refused_in_heats_words_and_order(stack, text, heat_said):
    # Heat 27.0.1: 400 StackValidationFailed with heat_said.
    assert stack.refused(text).endswith(heat_said)


def test_function_arguments_fail_before_parameters(stack):
    # Heat: resources.r0.properties.value.list_join: Incorrect arguments to
    # "list_join" ... (functions are parsed as the stack loads, before the missing
    # parameter p0 is noticed)
    error = stack.refused("""\
        heat_template_version: 2015-04-30
        parameters:
          p0: {type: string}
        resources:
          r0:
            type: OS::Heat::TestResource
            properties: {value: {list_join: ['-', [], []]}}
        """)
    assert 'Incorrect arguments to "list_join"' in error


def test_group_index_var_needs_three_characters(stack):
    # Heat: Property error: resources.g.properties.index_var: length (0) is out of
    # range (min: 3, max: None)
    error = stack.refused("""\
        heat_template_version: 2016-10-14
        resources:
          g:
            type: OS::Heat::ResourceGroup
            properties: {count: 1, index_var: "", resource_def: {type: OS::Heat::None}}
        """)
    assert error.endswith("index_var: length (0) is out of range (min: 3, max: None)")


def test_str_split_of_a_number_fails_as_str_split_does(stack):
    # Heat: Property error: resources.r.properties.value: 'int' object has no attribute 'split'
    error = stack.refused("""\
        heat_template_version: 2016-10-14
        resources:
          r:
            type: OS::Heat::TestResource
            properties: {value: {str_split: [',', 5]}}
        """)
    assert error.endswith("'int' object has no attribute 'split'")


PROVIDER = """\
    heat_template_version: 2016-10-14
    parameters:
      x: {type: string}
      n: {type: number, default: 1}
    resources:
      inner: {type: OS::Heat::None}
    """


@pytest.mark.parametrize("properties, message", [
    # Heat: Property error: resources.r.properties.x: Value must be a string; got {}
    ("{x: {}}", "resources.r.properties.x: Value must be a string; got {}"),
    # Heat: Property error: resources.r.properties: Property x not assigned
    ("{}", "resources.r.properties: Property x not assigned"),
    # Heat: Property error: resources.r.properties.n: could not convert string to float: 'q'
    ("{x: a, n: q}", "resources.r.properties.n: could not convert string to float: 'q'"),
])
def test_provider_properties_are_typed_by_its_parameters(stack, properties, message):
    error = stack.refused(f"""\
        heat_template_version: 2016-10-14
        resources:
          r: {{type: prov.yaml, properties: {properties}}}
        """, {"prov.yaml": PROVIDER})
    assert error.endswith(message)


def test_an_output_reading_an_undeclared_parameter_is_an_output_error(stack):
    # Heat: CREATE_COMPLETE; the output shows the error "The Parameter (missing)
    # was not provided." (outputs are validated only by functions with validate()).
    result = stack.apply("""\
        heat_template_version: 2016-10-14
        resources:
          r: {type: OS::Heat::None}
        outputs:
          o: {value: {get_param: missing}}
        """)
    assert result["stack_status"] == "CREATE_COMPLETE"
    assert "The Parameter (missing) was not provided." in result["output_errors"]["o"]


def test_every_nested_stack_is_updated_with_its_stack(stack):
    # Heat: an update that changes only the TestResource leaves the group and its
    # provider members UPDATE_COMPLETE (StackResource._needs_update is always true),
    # the members' own resources CREATE_COMPLETE, every physical id kept.
    group = """\
        heat_template_version: 2016-10-14
        resources:
          g:
            type: OS::Heat::ResourceGroup
            properties: {count: 2, resource_def: {type: member.yaml}}
          t: {type: OS::Heat::TestResource, properties: {value: %s}}
        """
    member = {"member.yaml": "heat_template_version: 2016-10-14\nresources:\n  inner: {type: OS::Heat::None}\n"}
    first = stack.apply(group % "one", member)
    second = stack.apply(group % "two", member)
    assert statuses(second) == {
        "g": "UPDATE_COMPLETE", "g/0": "UPDATE_COMPLETE", "g/1": "UPDATE_COMPLETE",
        "g/0/inner": "CREATE_COMPLETE", "g/1/inner": "CREATE_COMPLETE", "t": "UPDATE_COMPLETE"}
    assert {r["name"]: r["physical_id"] for r in first["resources"]} == {
        r["name"]: r["physical_id"] for r in second["resources"]}


def test_a_failed_resource_retried_fails_its_replacements_create(stack):
    # Heat: the Value whose value cannot be a number is CREATE_FAILED; updating the
    # stack again (another parameter value) leaves it CREATE_FAILED ("Resource CREATE
    # failed"): a failed resource is replaced, and the replacement's create fails.
    text = """\
        heat_template_version: 2016-10-14
        parameters:
          v: {type: string}
        resources:
          t: {type: OS::Heat::TestResource, properties: {value: {get_param: v}}}
          n: {type: OS::Heat::Value, properties: {type: number, value: {get_attr: [t, output]}}}
        """
    stack.apply(text, parameters={"v": "x"})
    again = stack.apply(text, parameters={"v": "y"})
    assert statuses(again)["n"] == "CREATE_FAILED"
    assert again["stack_status_reason"].startswith("Resource CREATE failed")


def test_a_later_versions_resource_key_in_heats_words(stack):
    # Heat: Invalid keyword(s) inside a resource definition: external_id
    assert stack.refused("""\
        heat_template_version: 2015-10-15
        resources:
          r: {type: OS::Heat::None, external_id: x}
        """).endswith("Invalid keyword(s) inside a resource definition: external_id")


MISSING_OUTPUT_PROVIDER = {"prov.yaml": """\
    heat_template_version: 2018-08-31
    resources:
      inner: {type: OS::Heat::None}
    outputs:
      a: {value: 1}
      broken: {value: {str_split: [',', 'a,b', 5]}}
    """}


@pytest.mark.parametrize("attribute, error", [
    # Heat: CREATE_COMPLETE; output_error "The Referenced Attribute (c absent) is incorrect."
    ("absent", "The Referenced Attribute (c absent) is incorrect."),
    # Heat: CREATE_COMPLETE; the provider's own output error, through get_attr
    # (StackResource.get_output raises TemplateOutputError): "Error in c output broken:
    # Incorrect index to "str_split" should be between 0 and 1".  hotplay names the
    # place in the provider too (docs/heat-differences.md, error-location).
    ("broken", 'Error in c output broken: outputs.broken.value.str_split: '
               'Incorrect index to "str_split" should be between 0 and 1'),
])
def test_a_provider_output_read_by_an_output_is_an_output_error(stack, attribute, error):
    result = stack.apply("""\
        heat_template_version: 2018-08-31
        resources:
          c: {type: prov.yaml}
        outputs:
          o: {value: {get_attr: [c, %s]}}
          merged: {value: {map_merge: [{k: {get_attr: [c, %s]}}, {}]}}
        """ % (attribute, attribute), MISSING_OUTPUT_PROVIDER)
    assert result["stack_status"] == "CREATE_COMPLETE"
    assert result["output_errors"]["o"] == error
    assert result["output_errors"]["merged"].endswith(error)


def test_a_missing_provider_output_read_by_a_property_fails_the_stack(stack):
    # Heat: CREATE_FAILED, reason "The Referenced Attribute (c absent) is incorrect.";
    # c CREATE_COMPLETE, t never started (INIT_COMPLETE).
    result = stack.apply("""\
        heat_template_version: 2018-08-31
        resources:
          c: {type: prov.yaml}
          t: {type: OS::Heat::TestResource, properties: {value: {get_attr: [c, absent]}}}
        """, MISSING_OUTPUT_PROVIDER)
    assert result["stack_status"] == "CREATE_FAILED"
    assert result["stack_status_reason"] == "The Referenced Attribute (c absent) is incorrect."
    assert statuses(result).get("t", "INIT_COMPLETE") == "INIT_COMPLETE"
    assert statuses(result)["c"] == "CREATE_COMPLETE"


def test_a_renamed_alias_of_the_same_template_updates_in_place(stack, tmp_path):
    # Heat: renaming Diff::Prov to Diff::Renamed (both prov.yaml) keeps the resource
    # and its nested resource (same physical ids), the resource UPDATE_COMPLETE.
    text = """\
        heat_template_version: 2016-10-14
        resources:
          r: {type: %s}
        """
    files = {"prov.yaml": "heat_template_version: 2016-10-14\nresources:\n  inner: {type: OS::Heat::None}\n"}
    (tmp_path / "env1.yaml").write_text("resource_registry: {Diff::Prov: prov.yaml}\n")
    (tmp_path / "env2.yaml").write_text("resource_registry: {Diff::Renamed: prov.yaml}\n")
    first = stack.apply(text % "Diff::Prov", files, environment=[str(tmp_path / "env1.yaml")])
    second = stack.apply(text % "Diff::Renamed", files, environment=[str(tmp_path / "env2.yaml")])
    assert statuses(second)["r"] == "UPDATE_COMPLETE"
    assert {r["name"]: r["physical_id"] for r in first["resources"]} == {
        r["name"]: r["physical_id"] for r in second["resources"]}
    assert [r["type"] for r in second["resources"] if r["name"] == "r"] == ["Diff::Renamed"]


@pytest.mark.parametrize("value, heat_said", [
    ({"k": {"get_resource": "r0"}}, "Value must be a string; got {'k': 'r0'}"),
    ([4, "a,b", {"get_attr": ["r0", "output"]}], "Value must be a string; got [4, 'a,b', None]"),
])
def test_a_value_reading_a_resource_is_typed_at_validation(stack, value, heat_said):
    # Heat: 400 "Property error: resources.r1.properties.value: <heat_said>" -- before
    # anything exists, get_resource gives the resource's name and get_attr null, and
    # the result is converted to the property's type (its constraints are not checked).
    text = json.dumps({"heat_template_version": "2016-10-14", "resources": {
        "r0": {"type": "OS::Heat::TestResource"},
        "r1": {"type": "OS::Heat::TestResource", "properties": {"value": value}}}})
    assert stack.refused(text).endswith(f"resources.r1.properties.value: {heat_said}")


def test_a_function_failing_as_its_resource_starts_fails_the_stack_bare(stack):
    # Heat: CREATE_FAILED with the reason "Items to join must be string, map or list
    # not 3" (no "Resource CREATE failed:"); r1 is never started (INIT_COMPLETE).
    result = stack.apply("""\
        heat_template_version: 2016-10-14
        resources:
          r0: {type: OS::Heat::Value, properties: {type: number, value: 3}}
          r1:
            type: OS::Heat::TestResource
            properties: {value: {list_join: ['-', [{get_attr: [r0, value]}, x]]}}
        """)
    assert result["stack_status"] == "CREATE_FAILED"
    assert result["stack_status_reason"].endswith("Items to join must be string, map or list not 3")
    assert not result["stack_status_reason"].startswith("Resource")
    assert statuses(result)["r0"] == "CREATE_COMPLETE"
    assert statuses(result).get("r1", "INIT_COMPLETE") == "INIT_COMPLETE"


def test_get_resource_of_a_provider_is_its_stack_arn(stack):
    # Heat: arn:openstack:heat::admin:stacks/<stack>-r0-<random>/<nested stack id>
    # when the provider has no OS::stack_id output (TemplateResource.get_reference_id).
    result = stack.apply("""\
        heat_template_version: 2016-10-14
        resources:
          r0: {type: prov.yaml}
        outputs:
          o0: {value: {get_resource: r0}}
        """, {"prov.yaml": "heat_template_version: 2016-10-14\nresources:\n  inner: {type: OS::Heat::None}\n"})
    nested = [r["physical_id"] for r in result["resources"] if r["name"] == "r0"][0]
    assert re.fullmatch(rf"arn:openstack:heat::hotplay:stacks/s-r0-[a-z0-9]{{12}}/{nested}",
                        result["outputs"]["o0"])


@pytest.mark.parametrize("schema, given, heat_said", [
    ("{type: boolean}", {}, "Unrecognized value 'None', acceptable values are: "),
    ("{type: boolean}", {"p": "sure"}, "Unrecognized value 'sure', acceptable values are: "),
    ("{type: number}", {"p": "x"}, "could not convert string to float: 'x'"),
    ("{type: json}", {"p": "nope"}, "Value must be valid JSON: "),
    ("{type: string}", {}, "The Parameter (p) was not provided."),
])
def test_a_parameter_read_while_the_stack_loads_fails_as_heat_reads_it(stack, schema, given, heat_said):
    # Heat: "resources.r.condition: <heat_said>..." -- the condition is evaluated as the
    # stack loads, before the parameters are validated, with Parameter.value(): a
    # boolean converts str(None), a number or json value its text.
    message = stack.refused(f"""\
        heat_template_version: 2016-10-14
        parameters:
          p: {schema}
          q: {{type: string}}
        conditions:
          c: {{equals: [{{get_param: p}}, a]}}
        resources:
          r: {{type: OS::Heat::None, condition: c}}
        """, parameters=given)
    assert heat_said in message and "is invalid" not in message


def test_outputs_are_parsed_before_resources_are_validated(stack):
    # Heat: 400 'outputs.o.value.list_join: Incorrect arguments to "list_join" should
    # be: ...' (2015-04-30 takes one list), not r's "Value must be a string".
    message = stack.refused("""\
        heat_template_version: 2015-04-30
        resources:
          r: {type: OS::Heat::TestResource, properties: {value: [a]}}
        outputs:
          o: {value: {list_join: [',', [], []]}}
        """)
    assert 'Incorrect arguments to "list_join"' in message


def test_an_update_changing_only_depends_on_updates_the_resource(stack):
    # Heat: UPDATE_COMPLETE for the TestResource and RandomString whose depends_on
    # changed (the definitions differ), CREATE_COMPLETE for the None (never updated)
    # and for r0; the RandomString keeps its value (updated in place).
    text = """\
        heat_template_version: 2016-10-14
        resources:
          r0: {type: OS::Heat::RandomString}
          r1: {type: OS::Heat::TestResource, properties: {value: a}%s}
          r2: {type: OS::Heat::None%s}
          r3: {type: OS::Heat::RandomString%s}
        """
    first = stack.apply(text % ("", "", ", depends_on: r0"))
    second = stack.apply(text % (", depends_on: [r0]", ", depends_on: [r0]", ""))
    assert statuses(second) == {"r0": "CREATE_COMPLETE", "r1": "UPDATE_COMPLETE",
                                "r2": "CREATE_COMPLETE", "r3": "UPDATE_COMPLETE"}
    assert [r["physical_id"] for r in first["resources"]] == [r["physical_id"] for r in second["resources"]]


@pytest.mark.parametrize("read", [
    "{get_attr: [g, nope]}", "{get_attr: [g, resource.1.nope]}", "{get_attr: [g, attributes, nope]}"])
def test_a_group_members_attribute_is_checked_at_validation(stack, read):
    # Heat: 400 "resources.g<nested_stack>.outputs...: The Referenced Attribute (1 nope)
    # is incorrect." -- it validates the first member (0 is removed) with what the
    # stack reads of the group; a TestResource has no attribute nope.
    message = stack.refused(f"""\
        heat_template_version: 2015-10-15
        resources:
          g:
            type: OS::Heat::ResourceGroup
            properties:
              count: 1
              removal_policies: [{{resource_list: ['0']}}]
              resource_def: {{type: OS::Heat::TestResource}}
        outputs:
          o: {{value: {read}}}
        """)
    assert message.endswith("The Referenced Attribute (1 nope) is incorrect.")


def test_a_group_read_of_a_known_attribute_or_of_no_member_passes(stack):
    # Heat: CREATE_COMPLETE -- output is a TestResource attribute; an empty group
    # (count 0) is not validated at all.
    result = stack.apply("""\
        heat_template_version: 2015-10-15
        resources:
          g: {type: OS::Heat::ResourceGroup, properties: {count: 1, resource_def: {type: OS::Heat::TestResource}}}
          e: {type: OS::Heat::ResourceGroup, properties: {count: 0, resource_def: {type: OS::Heat::TestResource}}}
        outputs:
          o: {value: {get_attr: [g, output]}}
          p: {value: {get_attr: [e, nope]}}
        """)
    assert result["stack_status"] == "CREATE_COMPLETE"


def test_a_resource_needed_by_an_earlier_one_is_validated_right_before_it(stack):
    # Heat walks its graph taking the first ready resource each time (Graph.toposort):
    # with a first and b needing c, it validates c, then b -- so b's error (Snapshot)
    # comes before that of a, whose own later error is not reached.  The order of a
    # Python set decides Heat's order of a and b; here the template's does.
    message = stack.refused("""\
        heat_template_version: 2016-10-14
        resources:
          b: {type: OS::Heat::Value, deletion_policy: Snapshot, properties: {value: {get_attr: [c, value]}}}
          c: {type: OS::Heat::Value, properties: {value: 1}}
          a: {type: OS::Heat::TestResource, properties: {value: {map_merge: [{}, 7]}}}
        """)
    assert message.endswith('"Snapshot" deletion policy not supported')


def test_an_unknown_property_is_named_before_a_missing_parameter_is_read(stack):
    # Heat: 400 "Property error: resources.r.properties: Unknown Property anything"
    # (Properties.validate checks the names first; get_param of a parameter that does
    # not exist would fail only as the value is resolved).
    message = stack.refused("""\
        heat_template_version: 2016-10-14
        resources:
          r: {type: OS::Heat::TestResource, properties: {anything: [{get_param: [missing, 1]}]}}
        """)
    assert message.endswith("resources.r.properties: Unknown Property anything")


def test_a_group_of_providers_read_for_an_output_they_lack_is_an_output_error(stack):
    # Heat: CREATE_COMPLETE; each output an error naming the group and the read's key
    # (a tuple when the read has a path).
    result = stack.apply("""\
        heat_template_version: 2017-02-24
        resources:
          g: {type: OS::Heat::ResourceGroup, properties: {count: 1, resource_def: {type: prov.yaml}}}
        outputs:
          o0: {value: {get_attr: [g, nope]}}
          o1: {value: {get_attr: [g, resource.0.nope]}}
          o2: {value: {get_attr: [g, attributes, nope]}}
        """, {"prov.yaml": "heat_template_version: 2016-10-14\nresources:\n  inner: {type: OS::Heat::None}\n"})
    assert result["stack_status"] == "CREATE_COMPLETE"
    assert result["output_errors"] == {
        "o0": "The Referenced Attribute (g nope) is incorrect.",
        "o1": "The Referenced Attribute (g resource.0.nope) is incorrect.",
        "o2": "The Referenced Attribute (g ('attributes', 'nope')) is incorrect."}


@pytest.mark.parametrize("version, policy, heat_said", [
    ("2016-04-08", "retain", 'Invalid deletion policy "retain"'),
    ("2016-04-08", "Keep", 'Invalid deletion policy "Keep"'),
    ("2016-10-14", "retain", None),
])
def test_a_deletion_policy_the_version_lacks_is_refused_as_the_stack_loads(stack, version, policy, heat_said):
    # Heat: lower-case policies exist from 2016-10-14; an unknown one is refused as the
    # resources load.
    text = f"heat_template_version: {version}\nresources:\n  r: {{type: OS::Heat::None, deletion_policy: {policy}}}\n"
    if heat_said is None:
        assert stack.apply(text)["stack_status"] == "CREATE_COMPLETE"
    else:
        assert stack.refused(text).endswith(heat_said)


def test_a_parameter_declaration_is_read_before_a_deletion_policy(stack):
    # Heat: 400 "No constraint expressed" (modulo exists from 2017-02-24; the
    # parameters are declared as the stack is built, before its resources load).
    message = stack.refused("""\
        heat_template_version: 2016-04-08
        parameters:
          p: {type: number, default: 2, constraints: [{modulo: {step: 2, offset: 0}}]}
        resources:
          r: {type: OS::Heat::None, deletion_policy: delete}
        """)
    assert message.endswith("No constraint expressed")


def test_an_update_reads_the_parameters_the_stack_had_before_anything_else(stack):
    # Heat: 400 "The Parameter (p0) was not provided." -- an update reads the new value
    # of each parameter the stack already had and the request does not give (its check
    # of immutable parameters), before it checks the names the request gives.
    text = """\
        heat_template_version: 2016-10-14
        parameters:
          p0: {type: json}
        resources:
          r: {type: OS::Heat::None}
        """
    stack.apply(text, parameters={"p0": {}})
    assert stack.refused(text, parameters={"undeclared": "x"}).endswith("The Parameter (p0) was not provided.")
    # A parameter the stack did not have is checked where Heat checks it: the name first.
    assert stack.refused(text.replace("p0", "q0"), parameters={"undeclared": "x"}).endswith(
        "The Parameter (undeclared) was not defined in template.")


def test_a_new_index_var_replaces_the_group(stack):
    # Heat: index_var is not update_allowed: the group and its members are replaced
    # (new physical ids, CREATE_COMPLETE); count is, and keeps the group.
    text = """\
        heat_template_version: 2016-10-14
        resources:
          g:
            type: OS::Heat::ResourceGroup
            properties: {count: %s, index_var: '%s', resource_def: {type: OS::Heat::TestResource}}
        """
    first = stack.apply(text % (1, "%index%"))
    counted = stack.apply(text % (2, "%index%"))
    renamed = stack.apply(text % (2, "_i_"))
    ids = [{r["name"]: r["physical_id"] for r in result["resources"]} for result in (first, counted, renamed)]
    assert ids[1]["g"] == ids[0]["g"] and ids[2]["g"] != ids[1]["g"]
    assert statuses(renamed)["g"] == "CREATE_COMPLETE"


@pytest.mark.parametrize("before, after", [
    # r1 already reads r0: depends_on adds no dependency, but the definition differs.
    ("{value: {get_resource: r0}}", "{value: {get_resource: r0}}, depends_on: [r0]"),
    # r0 is disabled: depends_on on it needs nothing, and removing it still changes r1.
    ("{value: 0}, depends_on: gone", "{value: 0}"),
])
def test_a_written_depends_on_change_updates_even_when_nothing_is_needed_otherwise(stack, before, after):
    # Heat: r1 UPDATE_COMPLETE (it compares the definitions as written).
    text = """\
        heat_template_version: 2016-10-14
        conditions: {never: false}
        resources:
          r0: {type: OS::Heat::TestResource}
          gone: {type: OS::Heat::None, condition: never}
          r1: {type: OS::Heat::Value, properties: %s}
        """
    stack.apply(text % before)
    assert statuses(stack.apply(text % after))["r1"] == "UPDATE_COMPLETE"


def test_references_in_properties_fail_before_depends_on_names(stack):
    # Heat: 400 'The specified reference "r0" (in r1.Properties.value) is incorrect.'
    # -- required_resource_names follows the functions first; r0's condition is false.
    message = stack.refused("""\
        heat_template_version: 2016-10-14
        conditions: {c0: false}
        resources:
          r0: {type: OS::Heat::None, condition: c0}
          r1: {type: OS::Heat::Value, depends_on: ghost, properties: {value: {get_attr: [r0, nope]}}}
        """)
    assert message.endswith('The specified reference "r0" (in r1.Properties.value) is incorrect.')


def test_a_missing_member_of_a_group_is_an_output_error(stack):
    # Heat: the output's error "Member '0' not found in group resource 'g'." (count 0),
    # while a missing member's attribute is null.
    result = stack.apply("""\
        heat_template_version: 2016-10-14
        resources:
          g: {type: OS::Heat::ResourceGroup, properties: {count: 0, resource_def: {type: OS::Heat::TestResource}}}
        outputs:
          ref: {value: {get_attr: [g, resource.0]}}
          attr: {value: {get_attr: [g, resource.0.output]}}
        """)
    assert result["output_errors"] == {"ref": "Member '0' not found in group resource 'g'."}
    assert result["outputs"]["attr"] is None


def test_an_external_resource_that_depends_on_another_is_refused(stack):
    # Differential seed 9, case 1684: an update giving external_id to a resource with
    # depends_on. Heat refused the update before touching anything: "Invalid
    # dependency with external OS::Heat::None resource: ext-2" (the same at create).
    # hotplay ran the update to UPDATE_FAILED.
    template = """\
        heat_template_version: 2017-09-01
        resources:
          r0:
            type: OS::Heat::RandomString
          r1:
            type: OS::Heat::None
            depends_on: r0
            {external}
        """
    created = stack.apply(template.replace("{external}", ""))
    message = stack.refused(template.replace("{external}", "external_id: ext-2"))
    assert "Invalid dependency with external OS::Heat::None resource: ext-2" in message
    assert "resources.r1.depends_on" in message
    # Nothing was touched: the stack is as the create left it.
    again = stack.apply(template.replace("{external}", ""))
    assert again["changed"] is False and statuses(again) == statuses(created)


def test_the_same_depends_on_a_disabled_resource_changes_nothing(stack):
    # Differential seed 11, case 597. Heat: the same template again leaves r1
    # CREATE_COMPLETE; its depends_on names a resource whose condition is false, and
    # the definitions as written are equal. hotplay compared the written list with
    # the one without the disabled name and updated r1.
    text = """\
        heat_template_version: 2017-09-01
        conditions: {c0: false}
        resources:
          r0: {type: OS::Heat::None, condition: c0}
          r1: {type: OS::Heat::TestResource, depends_on: r0, properties: {value: a}}
        """
    stack.apply(text)
    again = stack.apply(text)
    assert again["changed"] is False and statuses(again)["r1"] == "CREATE_COMPLETE"


def test_a_values_attribute_is_its_value_as_written(stack):
    # Heat checks value against type, but the attribute is the value unconverted:
    # outputs n "5", b "True", s 7 (hotplay gave 5, true, "7"). Changing "5" to 5 is
    # an update (UPDATE_COMPLETE): the definitions as written differ.
    text = """\
        heat_template_version: 2018-08-31
        resources:
          n: {type: OS::Heat::Value, properties: {type: number, value: %s}}
          b: {type: OS::Heat::Value, properties: {type: boolean, value: "True"}}
          s: {type: OS::Heat::Value, properties: {type: string, value: 7}}
        outputs:
          n: {value: {get_attr: [n, value]}}
          b: {value: {get_attr: [b, value]}}
          s: {value: {get_attr: [s, value]}}
        """
    created = stack.apply(text % '"5"')
    assert created["outputs"] == {"n": "5", "b": "True", "s": 7}
    updated = stack.apply(text % "5")
    assert updated["outputs"]["n"] == 5 and statuses(updated)["n"] == "UPDATE_COMPLETE"


def test_a_value_whose_create_failed_on_its_type_still_gives_its_value(stack):
    # Differential seed 5, case 1914. Heat: v CREATE_FAILED ('"[]" is not a valid
    # boolean'), and the output reads its value as resolved, [] (hotplay: null).
    result = stack.apply("""\
        heat_template_version: 2016-10-14
        resources:
          g: {type: OS::Heat::ResourceGroup, properties: {count: 0, resource_def: {type: OS::Heat::None}}}
          v: {type: OS::Heat::Value, properties: {type: boolean, value: {get_attr: [g, refs]}}}
        outputs:
          o: {value: {get_attr: [v, value]}}
        """)
    assert statuses(result)["v"] == "CREATE_FAILED"
    assert '"[]" is not a valid boolean' in result["stack_status_reason"]
    assert result["outputs"]["o"] == []


def test_a_pre_update_hook_stops_an_update_at_a_resource_it_leaves_alone(stack):
    # Heat 27.0.1: an update with a pre-update hook on r0, which the update does not
    # change, pauses there ("UPDATE paused until Hook pre-update is cleared"); once
    # cleared, r0 stays CREATE_COMPLETE (no post-update stop). A resource the update
    # creates does not stop at pre-update.
    hooks = stack.with_hooks("{r0: {hooks: [pre-update, post-update]}, added: {hooks: [pre-update]}}")
    text = """\
        heat_template_version: 2016-10-14
        resources:
          r0: {type: OS::Heat::None}
          r1: {type: OS::Heat::TestResource, depends_on: r0, properties: {value: %s}}
        """
    stack.apply(text % "a", environment=hooks)
    changed = text % "b" + "  added: {type: OS::Heat::None, depends_on: r1}\n"
    paused = stack.apply(changed, environment=hooks)
    assert statuses(paused)["r1"] == "CREATE_COMPLETE"  # waits for r0
    done, pauses = stack.through_hooks(changed, environment=hooks)
    assert pauses == [["r0:pre-update"]] and done["stack_status"] == "UPDATE_COMPLETE"
    assert statuses(done) == {"r0": "CREATE_COMPLETE", "r1": "UPDATE_COMPLETE", "added": "CREATE_COMPLETE"}


def test_a_none_reading_a_missing_group_member_fails_the_stack(stack):
    # Differential seed 41, case 32. Heat: CREATE_FAILED "Member '0' not found in
    # group resource 'r1'." (member 0 is removed by the removal policy): it gathers
    # the attributes a resource reads before it acts, even for OS::Heat::None, whose
    # properties it never resolves. hotplay created r2.
    result = stack.apply("""\
        heat_template_version: 2017-02-24
        resources:
          r1:
            type: OS::Heat::ResourceGroup
            properties:
              count: 3
              removal_policies: [{resource_list: ['0']}]
              resource_def: {type: OS::Heat::None}
          r2:
            type: OS::Heat::None
            properties:
              anything: {get_attr: [r1, resource.0]}
        """)
    assert result["stack_status"] == "CREATE_FAILED"
    assert result["stack_status_reason"] == "Member '0' not found in group resource 'r1'."
    assert "r2" not in statuses(result) or statuses(result)["r2"] == "INIT_COMPLETE"


def test_a_groups_count_is_checked_before_its_index_var(stack):
    # Differential seed 41, case 1439. Heat: "Property error:
    # resources.g.properties.count: -2 is out of range (min: 0, max: None)" (its schema
    # order); hotplay named index_var's length first.
    message = stack.refused("""\
        heat_template_version: 2017-02-24
        resources:
          g:
            type: OS::Heat::ResourceGroup
            properties: {count: -2, index_var: '', resource_def: {type: OS::Heat::None}}
        """)
    assert message.endswith("resources.g.properties.count: -2 is out of range (min: 0, max: None)")


def test_a_create_resumed_after_its_hooks_creates_only(stack):
    # Differential (hooks in the create). Heat: pre-create on r0 and r1, cleared,
    # then post-create, cleared: CREATE_COMPLETE, r1 (a group: a nested stack)
    # CREATE_COMPLETE; hotplay left r1 UPDATE_COMPLETE (a routine nested update).
    # A resource whose property fails stops at pre-create first (Heat resolves the
    # properties after the hook), then fails the stack bare.
    result, pauses = stack.through_hooks("""\
        heat_template_version: 2018-08-31
        resources:
          r0: {type: OS::Heat::Value, properties: {value: ''}}
          r1: {type: OS::Heat::ResourceGroup, properties: {count: 0, resource_def: {type: OS::Heat::None}}}
          r2:
            type: OS::Heat::TestResource
            depends_on: r1
            properties: {value: {str_split: ['-', {get_attr: [r1, refs]}]}}
        """, environment=stack.with_hooks("{'*': {hooks: [pre-create, post-create]}}"))
    assert pauses == [["r0:pre-create", "r1:pre-create"], ["r0:post-create", "r1:post-create"],
                      ["r2:pre-create"]]
    assert result["stack_status"] == "CREATE_FAILED"
    assert result["stack_status_reason"].endswith("'list' object has no attribute 'split'")
    assert statuses(result) == {"r0": "CREATE_COMPLETE", "r1": "CREATE_COMPLETE", "r2": "INIT_COMPLETE"}


def test_a_create_that_fails_while_a_hook_waits_leaves_no_hook_pending(stack):
    # Differential seed 61, case 995. Heat: r0 fails while r1 waits at pre-create:
    # CREATE_FAILED, r1 INIT_COMPLETE, nothing left to clear. hotplay reported r1's
    # hook pending on the failed stack, and a run "resuming" it was an update.
    result = stack.apply("""\
        heat_template_version: 2017-02-24
        resources:
          r0: {type: OS::Heat::TestResource, properties: {fail: true}}
          r1: {type: OS::Heat::RandomString}
        """, environment=stack.with_hooks("{r1: {hooks: [pre-create]}}"))
    assert result["stack_status"] == "CREATE_FAILED" and result["hooks_pending"] == []
    assert statuses(result) == {"r0": "CREATE_FAILED", "r1": "INIT_COMPLETE"}


def test_a_providers_property_read_from_a_group_is_typed_when_it_acts(stack):
    # Differential seed 41, case 724. Heat: r3 CREATE_FAILED "Property error: Value
    # must be a string; got []" (the group has no member: its attribute is []), and
    # the stack CREATE_FAILED; hotplay passed [] to the nested stack.
    result = stack.apply("""\
        heat_template_version: 2021-04-16
        resources:
          g:
            type: OS::Heat::ResourceGroup
            properties: {count: 0, resource_def: {type: prov.yaml}}
          r3:
            type: prov.yaml
            properties: {x: {get_attr: [g, out]}}
        """, files={"prov.yaml": """\
            heat_template_version: 2018-08-31
            parameters:
              x: {type: string, default: e}
            resources:
              inner: {type: OS::Heat::None}
            outputs:
              out: {value: 1}
            """})
    assert statuses(result)["r3"] == "CREATE_FAILED"
    assert result["stack_status_reason"].endswith("Value must be a string; got []")


def test_an_update_creates_without_create_hooks_but_a_new_nested_stack_stops(stack):
    # Differential (nested hooks, seed 6): Heat 27.0.1 stops at pre-create and
    # post-create only while the stack itself is created.  The update created b
    # and the group's new member g/0 without stopping, and the provider p it added
    # created its nested stack, whose inner stopped at pre-create; hotplay stopped
    # at all three, twice.
    hooks = stack.with_hooks("{b: {hooks: [pre-create, post-create]}, p: {inner: {hooks: [pre-create]}},"
                             " g: {'*': {hooks: [pre-create, post-create]}}}")
    files = {"prov.yaml": "heat_template_version: 2018-08-31\nresources: {inner: {type: OS::Heat::None}}\n"}
    first = stack.apply("""\
        heat_template_version: 2018-08-31
        resources:
          a: {type: OS::Heat::None}
          g: {type: OS::Heat::ResourceGroup, properties: {count: 0, resource_def: {type: OS::Heat::None}}}
        """, files=files, environment=hooks)
    assert first["stack_status"] == "CREATE_COMPLETE" and first["hooks_pending"] == []
    result, pauses = stack.through_hooks("""\
        heat_template_version: 2018-08-31
        resources:
          a: {type: OS::Heat::None}
          b: {type: OS::Heat::None}
          p: {type: prov.yaml}
          g: {type: OS::Heat::ResourceGroup, properties: {count: 1, resource_def: {type: OS::Heat::None}}}
        """, files=files, environment=hooks)
    assert pauses == [["p/inner:pre-create"]]
    assert result["stack_status"] == "UPDATE_COMPLETE"
    assert statuses(result) == {"a": "CREATE_COMPLETE", "b": "CREATE_COMPLETE", "p": "CREATE_COMPLETE",
                                "p/inner": "CREATE_COMPLETE", "g": "UPDATE_COMPLETE", "g/0": "CREATE_COMPLETE"}


def _events_of(result: dict[str, Any], name: str) -> list[str]:
    return [f"{e['action']}_{e['status']}" for e in result["events"]
            if e["resource_name"] == name and not e.get("parent")]


def test_a_property_change_that_replaces_ends_an_update_first(stack):
    # Differential (events, seed 71, case 39). Heat 27.0.1, RandomString length
    # 5 -> 6: r0 UPDATE_IN_PROGRESS, UPDATE_COMPLETE "The Resource r0 requires
    # replacement.", then the new r0 created and the old one deleted; hotplay's
    # events had no update.
    stack.apply("heat_template_version: 2018-08-31\n"
                "resources: {r0: {type: OS::Heat::RandomString, properties: {length: 5}}}\n")
    result = stack.apply("heat_template_version: 2018-08-31\n"
                         "resources: {r0: {type: OS::Heat::RandomString, properties: {length: 6}}}\n")
    assert _events_of(result, "r0") == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE", "CREATE_IN_PROGRESS",
                                        "CREATE_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    assert [e["reason"] for e in result["events"] if e["resource_name"] == "r0"][1] == \
        "The Resource r0 requires replacement."


def test_a_failed_resource_swapped_for_another_type_has_its_row_deleted(stack):
    # Differential (events, seed 71, case 179). Heat: the failed TestResource
    # swapped for OS::Heat::None: the new r0 created, the old row deleted (nothing
    # was made; Heat deletes the row all the same); hotplay dropped it silently.
    stack.apply("heat_template_version: 2018-08-31\n"
                "resources: {r0: {type: OS::Heat::TestResource, properties: {fail: true}}}\n")
    result = stack.apply("heat_template_version: 2018-08-31\n"
                         "resources: {r0: {type: OS::Heat::None, properties: {fail: true}}}\n")
    assert result["stack_status"] == "UPDATE_COMPLETE"
    assert _events_of(result, "r0") == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE", "DELETE_IN_PROGRESS",
                                        "DELETE_COMPLETE"]


def test_a_broken_attribute_read_fails_the_stack_before_the_readers_hook(stack):
    # Differential (seed 71, case 275). Heat 27.0.1: r1 reads a provider's output
    # that fails; Heat stores what r1 reads as the provider completes, and the stack
    # fails there: r1 never stops at its pre-create.  hotplay stopped at it first.
    result, pauses = stack.through_hooks("""\
        heat_template_version: 2016-04-08
        resources:
          r0: {type: prov.yaml}
          r1:
            type: OS::Heat::TestResource
            properties: {value: {get_attr: [r0, broken]}}
        """, files={"prov.yaml": """\
            heat_template_version: 2018-08-31
            resources:
              inner: {type: OS::Heat::None}
            outputs:
              broken: {value: {str_split: [',', 'a,b', 5]}}
            """}, environment=stack.with_hooks("{'*': {hooks: [pre-create]}}"))
    assert pauses == [["r0:pre-create"]]
    assert result["stack_status"] == "CREATE_FAILED"
    assert result["stack_status_reason"].startswith("Error in r0 output broken: ")
    assert statuses(result)["r1"] == "INIT_COMPLETE"


def test_an_update_removes_without_delete_hooks(stack):
    # Differential (seed 82, case 1072). Heat 27.0.1 stops at pre-delete and
    # post-delete only while the stack itself is deleted: the update removed the
    # group r1 without stopping; hotplay stopped at r1's pre-delete.
    hooks = stack.with_hooks("{'*': {hooks: [pre-delete, post-delete]}}")
    stack.apply("""\
        heat_template_version: 2018-08-31
        resources:
          r0: {type: OS::Heat::None}
          r1: {type: OS::Heat::ResourceGroup, properties: {count: 3, resource_def: {type: OS::Heat::None}}}
        """, environment=hooks)
    result, pauses = stack.through_hooks("""\
        heat_template_version: 2018-08-31
        resources:
          r0: {type: OS::Heat::None}
        """, environment=hooks)
    assert pauses == []
    assert result["stack_status"] == "UPDATE_COMPLETE" and statuses(result) == {"r0": "CREATE_COMPLETE"}
