# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Updates with Heat's semantics, the preview, and the refusals, in-process."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


@pytest.fixture
def store(tmp_path: Path):
    opened = SqliteStore(str(tmp_path / "store.db"))
    yield opened
    opened.close()


class Stack:
    """One stack applied again and again from changing template text."""

    def __init__(self, store: SqliteStore, folder: Path, name: str = "s") -> None:
        self.store, self.folder, self.name, self.count = store, folder, name, 0

    def apply(self, text: str, **request: Any) -> dict[str, Any]:
        self.count += 1
        path = self.folder / f"{self.name}-{self.count}.yaml"
        path.write_text(textwrap.dedent(text))
        request.setdefault("nested_depth", 2)
        return apply_stack(self.store, ApplyRequest(name=self.name, template=str(path), **request),
                           "test").as_dict()

    def patch(self, **request: Any) -> dict[str, Any]:
        request.setdefault("nested_depth", 2)
        return apply_stack(self.store, ApplyRequest(name=self.name, existing=True, **request),
                           "test").as_dict()


@pytest.fixture
def stack(store, tmp_path) -> Stack:
    return Stack(store, tmp_path)


def ids(result: dict[str, Any]) -> dict[str, str]:
    return {r["name"]: r["physical_id"] for r in result["resources"]}


def touched(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["resource_name"], e["action"], e["status"]) for e in result["events"]
            if e["resource_name"] != "s"]


TWO = """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string, default: one}
      replace_value: {type: string, default: r1}
    resources:
      in_place:
        type: OS::Heat::TestResource
        properties: {value: {get_param: value}}
      replaced:
        type: OS::Heat::TestResource
        properties:
          value: {get_param: replace_value}
          update_replace: true
      reader:
        type: OS::Heat::Value
        properties: {value: {get_resource: replaced}}
    outputs:
      reader: {value: {get_attr: [reader, value]}}
    """


def test_in_place_update_keeps_the_physical_id(stack):
    first = stack.apply(TWO)
    second = stack.apply(TWO, parameters={"value": "two"})
    assert second["stack_status"] == "UPDATE_COMPLETE"
    assert ids(second)["in_place"] == ids(first)["in_place"]
    assert touched(second) == [("in_place", "UPDATE", "IN_PROGRESS"), ("in_place", "UPDATE", "COMPLETE")]
    assert second["plan"]["updated"] == ["in_place"]
    assert second["plan"]["reasons"]["in_place"] == "properties changed: value"


def test_replacement_creates_first_repoints_dependants_then_deletes_the_old(stack, store):
    first = stack.apply(TWO)
    second = stack.apply(TWO, parameters={"replace_value": "r2"})
    assert ids(second)["replaced"] != ids(first)["replaced"]
    assert second["outputs"]["reader"] == ids(second)["replaced"]
    order = touched(second)
    create_new = order.index(("replaced", "CREATE", "COMPLETE"))
    update_reader = order.index(("reader", "UPDATE", "COMPLETE"))
    delete_old = order.index(("replaced", "DELETE", "COMPLETE"))
    assert create_new < update_reader < delete_old
    assert second["plan"]["replaced"] == ["replaced"]
    assert "update_replace" in second["plan"]["reasons"]["replaced"]
    assert "reads replaced, which will be replaced" in second["plan"]["reasons"]["reader"]
    assert store.retired_resources(store.find_stack("s").id) == []


FAIL_AFTER_REPLACE = TWO.replace("""      reader:
        type: OS::Heat::Value
        properties: {value: {get_resource: replaced}}""", """      reader:
        type: OS::Heat::TestResource
        properties:
          value: {get_resource: replaced}
          fail: {get_param: fail}""").replace(
    "      replace_value: {type: string, default: r1}",
    "      replace_value: {type: string, default: r1}\n      fail: {type: boolean, default: false}").replace(
    "reader: {value: {get_attr: [reader, value]}}", "reader: {value: {get_attr: [reader, output]}}")


def test_old_resource_is_kept_until_the_update_succeeds(stack, store):
    first = stack.apply(FAIL_AFTER_REPLACE)
    failed = stack.apply(FAIL_AFTER_REPLACE, parameters={"replace_value": "r2", "fail": True})
    assert failed["stack_status"] == "UPDATE_FAILED"
    retired = store.retired_resources(store.find_stack("s").id)
    assert [(r.state.name, r.state.physical_id) for r in retired] == [
        ("replaced", ids(first)["replaced"])]
    assert ("replaced", "DELETE", "COMPLETE") not in touched(failed)
    fixed = stack.apply(FAIL_AFTER_REPLACE, parameters={"replace_value": "r2", "fail": False})
    assert fixed["stack_status"] == "UPDATE_COMPLETE"
    assert ("replaced", "DELETE", "COMPLETE") in touched(fixed)
    assert store.retired_resources(store.find_stack("s").id) == []


def test_added_removed_and_metadata_changes(stack):
    stack.apply("""\
        heat_template_version: 2018-08-31
        resources:
          keep: {type: OS::Heat::TestResource, metadata: {tier: web}}
          drop: {type: OS::Heat::None}
        """)
    second = stack.apply("""\
        heat_template_version: 2018-08-31
        resources:
          keep: {type: OS::Heat::TestResource, metadata: {tier: db}}  # None never updates
          new: {type: OS::Heat::None}
        """)
    plan = second["plan"]
    assert (plan["added"], plan["deleted"], plan["updated"]) == (["new"], ["drop"], ["keep"])
    assert plan["reasons"]["keep"] == "metadata changed"
    assert plan["reasons"]["drop"] == "removed from the template"
    assert ("drop", "DELETE", "COMPLETE") in touched(second)
    assert {r["name"] for r in second["resources"]} == {"keep", "new"}


CONDITIONAL = """\
    heat_template_version: 2016-10-14
    parameters:
      env: {type: string, default: test}
    conditions:
      prod: {equals: [{get_param: env}, prod]}
    resources:
      always: {type: OS::Heat::None}
      only_prod: {type: OS::Heat::None, condition: prod}
    """


def test_condition_flip_adds_then_deletes(stack):
    assert {r["name"] for r in stack.apply(CONDITIONAL)["resources"]} == {"always"}
    prod = stack.apply(CONDITIONAL, parameters={"env": "prod"})
    assert prod["plan"]["added"] == ["only_prod"]
    back = stack.apply(CONDITIONAL, parameters={"env": "test"})
    assert back["plan"]["deleted"] == ["only_prod"]
    assert {r["name"] for r in back["resources"]} == {"always"}


GROUP = """\
    heat_template_version: 2016-10-14
    parameters:
      count: {type: number, default: 3}
      remove: {type: json, default: []}
    resources:
      group:
        type: OS::Heat::ResourceGroup
        properties:
          count: {get_param: count}
          removal_policies: [{resource_list: {get_param: remove}}]
          resource_def:
            type: OS::Heat::TestResource
            properties: {value: "m-%index%"}
    outputs:
      values: {value: {get_attr: [group, output]}}
    """


def test_resource_group_count_up_down_and_removal_policies(stack):
    assert stack.apply(GROUP)["outputs"]["values"] == ["m-0", "m-1", "m-2"]
    down = stack.apply(GROUP, parameters={"count": 2})
    assert down["plan"]["deleted"] == ["group/2"] and down["outputs"]["values"] == ["m-0", "m-1"]
    # Removing member 0 by policy: never reused, even when the count grows again.
    removed = stack.apply(GROUP, parameters={"count": 2, "remove": ["0"]})
    assert removed["plan"]["deleted"] == ["group/0"] and removed["plan"]["added"] == ["group/2"]
    assert removed["outputs"]["values"] == ["m-1", "m-2"]
    grown = stack.apply(GROUP, parameters={"count": 3, "remove": []})
    assert grown["plan"]["added"] == ["group/3"]
    assert grown["outputs"]["values"] == ["m-1", "m-2", "m-3"]


NESTED_MEMBER = """\
    heat_template_version: 2016-10-14
    parameters:
      word: {type: string}
    resources:
      inner:
        type: OS::Heat::TestResource
        properties: {value: {get_param: word}, update_replace: true}
      steady:
        type: OS::Heat::None
    outputs:
      said: {value: {get_attr: [inner, output]}}
    """


def test_check_mode_previews_nested_changes_with_reasons_and_writes_nothing(stack, store, tmp_path):
    (tmp_path / "member.yaml").write_text(textwrap.dedent(NESTED_MEMBER))
    text = """\
        heat_template_version: 2016-10-14
        parameters:
          word: {type: string, default: hello}
        resources:
          member:
            type: member.yaml
            properties: {word: {get_param: word}}
        """
    stack.apply(text)
    stack_id = store.find_stack("s").id
    before = (len(store.events(stack_id)), len(store.revisions(stack_id)))
    preview = stack.apply(text, parameters={"word": "bye"}, check_mode=True)
    assert preview["changed"] is True and preview["stack_status"] == "CREATE_COMPLETE"
    plan = preview["plan"]
    assert plan["updated"] == ["member"] and plan["replaced"] == ["member/inner"]
    assert plan["unchanged"] == ["member/steady"]
    assert "update_replace" in plan["reasons"]["member/inner"]
    assert preview["events"] == []
    assert (len(store.events(stack_id)), len(store.revisions(stack_id))) == before


def test_reviewed_plan_applies_and_a_stale_one_is_refused(stack):
    stack.apply(TWO)
    reviewed = stack.apply(TWO, parameters={"value": "two"}, check_mode=True)
    applied = stack.apply(TWO, parameters={"value": "two"}, plan_id=reviewed["plan_id"])
    assert applied["stack_status"] == "UPDATE_COMPLETE"
    # The same plan id again: the stack moved on since the review.
    stale = stack.apply(TWO, parameters={"value": "three"}, plan_id=reviewed["plan_id"])
    assert stale["failed"] and stale["changed"] is False and "is stale" in stale["msg"]
    assert stale["stack_status"] == "UPDATE_COMPLETE" and stale["revision"] == 2


def test_prevent_destroy_lists_each_destructive_change_and_changes_nothing(stack):
    stack.apply(TWO)
    refused = stack.apply(TWO, parameters={"replace_value": "r2"}, prevent_destroy=["OS::Heat::*"])
    assert refused["failed"] and not refused["changed"]
    assert "replaced (OS::Heat::TestResource) would be replaced" in refused["msg"]
    assert refused["revision"] == 1 and refused["events"] == []
    by_name = stack.apply(TWO, parameters={"value": "two"}, prevent_destroy=["replaced"])
    assert by_name["stack_status"] == "UPDATE_COMPLETE"  # an in-place update is not destructive


def test_restricted_update_refused_as_heat_or_skipped(stack, tmp_path):
    env = tmp_path / "env.yaml"
    env.write_text(textwrap.dedent("""\
        resource_registry:
          resources:
            in_place:
              restricted_actions: update
        """))
    stack.apply(TWO, environment=[str(env)])
    refused = stack.apply(TWO, environment=[str(env)], parameters={"value": "two", "replace_value": "r2"})
    assert refused["failed"] and not refused["changed"] and refused["revision"] == 1
    assert refused["msg"] == ("UPDATE_FAILED: Resource UPDATE failed: ResourceActionRestricted: "
                              "resources.in_place: update is restricted for resource.")
    skipped = stack.apply(TWO, environment=[str(env)], parameters={"value": "two", "replace_value": "r2"},
                          on_restricted="skip")
    assert skipped["stack_status"] == "UPDATE_COMPLETE"
    names = {event[0] for event in touched(skipped)}
    assert "in_place" not in names and "replaced" in names


def test_patch_update_reuses_the_stored_definition(stack):
    stack.apply(TWO, parameters={"value": "kept"})
    patched = stack.patch(parameters={"replace_value": "r9"})
    assert patched["parameters"] == {"value": "kept", "replace_value": "r9"}
    assert patched["plan"]["replaced"] == ["replaced"] and "in_place" in patched["plan"]["unchanged"]
    cleared = stack.patch(clear_parameters=["value"])
    assert cleared["parameters"]["value"] == "one"  # back to the template's default
    assert cleared["plan"]["updated"] == ["in_place"]


def test_immutable_parameter_refuses_a_change(stack):
    text = """\
        heat_template_version: 2018-08-31
        parameters:
          region: {type: string, immutable: true, default: east}
        resources:
          r:
            type: OS::Heat::TestResource
            properties: {value: {get_param: region}}
        """
    stack.apply(text, parameters={"region": "east"})
    refused = stack.apply(text, parameters={"region": "west"})
    assert refused["failed"] and refused["msg"] == (
        "The following parameters are immutable and may not be updated: region")
    assert refused["revision"] == 1


def test_timeout_marks_in_flight_resources_failed_and_a_rerun_continues(stack):
    slow = """\
        heat_template_version: 2018-08-31
        parameters:
          wait: {type: number, default: 30}
        resources:
          fast: {type: OS::Heat::TestResource}
          slow:
            type: OS::Heat::TestResource
            properties: {wait_secs: {get_param: wait}}
          after: {type: OS::Heat::None, depends_on: slow}
        """
    timed_out = stack.apply(slow, timeout=1)
    assert timed_out["stack_status"] == "CREATE_FAILED"
    assert timed_out["stack_status_reason"] == "Timed out"
    statuses = {r["name"]: (r["status"], r["status_reason"]) for r in timed_out["resources"]}
    assert statuses["fast"][0] == "CREATE_COMPLETE"
    assert statuses["slow"] == ("CREATE_FAILED", "CREATE aborted (Timed out)")
    assert statuses["after"][0] == "INIT_COMPLETE"
    resumed = stack.apply(slow, parameters={"wait": 0})
    assert resumed["stack_status"] == "UPDATE_COMPLETE"
    assert "fast" not in {event[0] for event in touched(resumed)}


def test_graph_of_a_preview_colours_each_action(stack):
    stack.apply(TWO)
    preview = stack.apply(TWO, parameters={"replace_value": "r2"}, check_mode=True, graph="mermaid")
    assert preview["graph"].startswith("flowchart LR")
    assert "replaced<br/>OS::Heat::TestResource<br/>replaced" in preview["graph"]
    dot = stack.apply(TWO, parameters={"replace_value": "r2"}, check_mode=True, graph="dot")["graph"]
    assert '"replaced" -> "reader";' in dot and "#ef6c00" in dot


def test_immutable_parameter_cannot_fall_back_to_another_default(stack):
    # Heat's immutable_params_modified compares every parameter both stacks have.
    text = """\
        heat_template_version: 2018-08-31
        parameters:
          region: {type: string, immutable: true, default: east}
        resources:
          r: {type: OS::Heat::None}
        """
    stack.apply(text, parameters={"region": "west"})
    refused = stack.apply(text)
    assert refused["failed"] and "immutable and may not be updated: region" in refused["msg"]


def test_applying_a_reviewed_plan_again_is_a_no_op_not_stale(stack):
    stack.apply(TWO)
    reviewed = stack.apply(TWO, parameters={"value": "two"}, check_mode=True)
    stack.apply(TWO, parameters={"value": "two"}, plan_id=reviewed["plan_id"])
    again = stack.apply(TWO, parameters={"value": "two"}, plan_id=reviewed["plan_id"])
    assert again["failed"] is False and again["changed"] is False and again["revision"] == 2


def test_skip_mode_plans_restricted_resources_as_left_alone(stack, tmp_path):
    env = tmp_path / "env.yaml"
    env.write_text("resource_registry:\n  resources:\n    replaced: {restricted_actions: replace}\n")
    stack.apply(TWO, environment=[str(env)])
    planned = stack.apply(TWO, environment=[str(env)], parameters={"replace_value": "r2"},
                          on_restricted="skip", prevent_destroy=["*"], check_mode=True)
    assert planned["failed"] is False
    assert planned["plan"]["replaced"] == [] and "replaced" in planned["plan"]["unchanged"]
    # What reads the skipped resource sees it unchanged.
    assert "reader" in planned["plan"]["unchanged"]


def test_delete_preview_guard_and_retained_resources(stack, store):
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
        DeleteRequest,
        delete_stack,
    )

    stack.apply("""\
        heat_template_version: 2018-08-31
        resources:
          data: {type: OS::Heat::None, deletion_policy: Retain}
          app: {type: OS::Heat::None}
        """)
    preview = delete_stack(store, DeleteRequest("s", check_mode=True), "test").as_dict()
    assert sorted(preview["plan"]["deleted"]) == ["app", "data"]
    assert "the physical resource is kept" in preview["plan"]["reasons"]["data"]
    refused = delete_stack(store, DeleteRequest("s", prevent_destroy=["data"]), "test").as_dict()
    assert refused["failed"] and "data (OS::Heat::None) would be deleted" in refused["msg"]
    assert store.find_stack("s") is not None
    stale = delete_stack(store, DeleteRequest("s", plan_id="0" * 32), "test").as_dict()
    assert stale["failed"] and "is stale" in stale["msg"]
    done = delete_stack(store, DeleteRequest("s", plan_id=preview["plan_id"]), "test").as_dict()
    assert done["stack_status"] == "DELETE_COMPLETE"


ADOPTABLE = """\
    heat_template_version: 2016-10-14
    resources:
      test1:
        type: OS::Heat::TestResource
    """
ADOPTING = ADOPTABLE + "    external_id: foobar\n"  # under the last line's 4 spaces


def test_changing_external_id_fails_the_update_as_heat_does(stack):
    """Heat (resource.py ``update``): an update that adds, changes or drops a
    resource's external_id fails, NotSupported; the resource is left as it was."""
    created = stack.apply(ADOPTABLE)
    preview = stack.apply(ADOPTING, check_mode=True)
    assert preview["plan"]["updated"] == ["test1"]
    assert "Update to property external_id of test1 (OS::Heat::TestResource) is not supported" in (
        preview["plan"]["reasons"]["test1"])
    failed = stack.apply(ADOPTING)
    assert failed["stack_status"] == "UPDATE_FAILED"
    reason = "NotSupported: resources.test1: Update to property external_id of test1 " \
             "(OS::Heat::TestResource) is not supported."
    assert failed["msg"].endswith(reason), failed["msg"]
    assert ids(failed)["test1"] == ids(created)["test1"]
    # Heat 27.0.1 (differential tester): the resource stays CREATE_COMPLETE, no event.
    assert {r["name"]: r["status"] for r in failed["resources"]} == {"test1": "CREATE_COMPLETE"}
    assert [e for e in failed["events"] if e["resource_name"] == "test1"] == []


def test_an_adopted_resource_keeps_its_external_id_and_cannot_drop_it(stack):
    adopted = stack.apply(ADOPTING)
    assert adopted["stack_status"] == "CREATE_COMPLETE" and ids(adopted)["test1"] == "foobar"
    again = stack.apply(ADOPTING, parameters={})
    assert again["failed"] is False
    dropped = stack.apply(ADOPTABLE)
    assert dropped["stack_status"] == "UPDATE_FAILED"
    assert "Update to property external_id of test1" in dropped["msg"]


def test_a_block_that_ends_the_template_keeps_no_final_newline(stack):
    """Heat strips a template's text before parsing it (template_format.parse), so a
    ``|`` block at the very end loses its final newline; one before it keeps it."""
    result = stack.apply("""\
        heat_template_version: 2018-08-31
        outputs:
          inside:
            value: |
              kept
          last:
            value: |
              stripped
        """)
    assert result["outputs"] == {"inside": "kept\n", "last": "stripped"}


def test_parameter_defaults_replace_a_nested_default_that_breaks_its_constraint(stack, tmp_path):
    """TripleO's deployment/cephadm/ceph-grafana.yaml: a nested template whose own
    default breaks its constraint, the environment's parameter_defaults giving a valid
    value.  Heat replaces the default (Parameter.set_default) and never checks the
    template's own; without parameter_defaults the template is refused."""
    (tmp_path / "member.yaml").write_text(textwrap.dedent("""\
        heat_template_version: 2018-08-31
        parameters:
          port:
            type: number
            default: 0
            constraints: [{range: {min: 1, max: 65535}}]
        outputs:
          port: {value: {get_param: port}}
        """))
    template = """\
        heat_template_version: 2018-08-31
        resources:
          member: {type: member.yaml}
        outputs:
          port: {value: {get_attr: [member, port]}}
        """
    with pytest.raises(HotplayError, match="Invalid default 0"):
        stack.apply(template)
    environment = tmp_path / "env.yaml"
    environment.write_text("parameter_defaults:\n  port: 3100\n")
    created = stack.apply(template, environment=[str(environment)])
    assert created["stack_status"] == "CREATE_COMPLETE", created.get("msg")
    assert created["outputs"]["port"] == 3100
    environment.write_text("parameter_defaults:\n  port: 70000\n")
    with pytest.raises(HotplayError, match="70000"):
        stack.apply(template, environment=[str(environment)])
