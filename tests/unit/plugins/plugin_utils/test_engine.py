# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine end to end, in-process, on a real SQLite file."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
    describe_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    StackLocked,
    TemplateError,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


@pytest.fixture
def store(tmp_path: Path):
    opened = SqliteStore(str(tmp_path / "store.db"))
    yield opened
    opened.close()


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def apply(store, folder: Path, text: str, name: str = "s", **request: Any) -> dict[str, Any]:
    template = write(folder, f"{name}.yaml", text)
    return apply_stack(store, ApplyRequest(name=name, template=template, **request), "test").as_dict()


def events(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["resource_name"], e["action"], e["status"]) for e in result["events"]]


BASIC = """\
    heat_template_version: 2018-08-31
    parameters:
      n: {type: string, default: world}
    resources:
      a:
        type: OS::Heat::TestResource
        properties:
          value: {get_param: n}
      b:
        type: OS::Heat::RandomString
        properties:
          length: 8
      c:
        type: OS::Heat::Value
        properties:
          value: {list_join: ['-', [{get_attr: [a, output]}, {get_resource: b}]]}
    outputs:
      out:
        value: {get_attr: [c, value]}
    """


def test_dependants_start_after_what_they_read(store, tmp_path):
    # The template of ../shared/peer/heat/templates/basic.yaml; Heat: c after a and b.
    result = apply(store, tmp_path, BASIC)
    assert result["stack_status"] == "CREATE_COMPLETE"
    order = events(result)
    assert order.index(("c", "CREATE", "IN_PROGRESS")) > order.index(("a", "CREATE", "COMPLETE"))
    assert order.index(("c", "CREATE", "IN_PROGRESS")) > order.index(("b", "CREATE", "COMPLETE"))
    prefix, random = result["outputs"]["out"].split("-")
    assert prefix == "world" and len(random) == 8


def test_same_definition_again_writes_nothing(store, tmp_path):
    apply(store, tmp_path, BASIC)
    stack = store.find_stack("s")
    before = (len(store.events(stack.id)), store.revisions(stack.id))
    again = apply(store, tmp_path, BASIC)
    assert again["changed"] is False and again["events"] == []
    assert (len(store.events(stack.id)), store.revisions(stack.id)) == before


def test_independent_resources_run_at_the_same_time(store, tmp_path):
    resources = "".join(
        f"      r{i}:\n        type: OS::Heat::TestResource\n        properties: {{wait_secs: 0.3}}\n"
        for i in range(20)
    )
    result = apply(store, tmp_path, "heat_template_version: 2018-08-31\nresources:\n" + resources)
    statuses = [status for name, _action, status in events(result) if name != "s"]
    # All twenty were started before the first one finished.
    assert statuses[:20] == ["IN_PROGRESS"] * 20


FAILING = """\
    heat_template_version: 2018-08-31
    parameters:
      fail: {type: boolean, default: true}
    resources:
      ok:
        type: OS::Heat::TestResource
        properties: {value: fine}
      bad:
        type: OS::Heat::TestResource
        depends_on: ok
        properties:
          value: doomed
          fail: {get_param: fail}
      after:
        type: OS::Heat::TestResource
        depends_on: bad
    """


def test_failure_reason_and_never_started_dependants(store, tmp_path):
    result = apply(store, tmp_path, FAILING)
    assert result["stack_status"] == "CREATE_FAILED" and result["failed"]
    assert result["stack_status_reason"] == (
        "Resource CREATE failed: ValueError: resources.bad: Test Resource failed bad")
    statuses = {r["name"]: r["status"] for r in result["resources"]}
    assert statuses == {"ok": "CREATE_COMPLETE", "bad": "CREATE_FAILED", "after": "INIT_COMPLETE"}


def test_rerun_after_a_fix_keeps_what_succeeded(store, tmp_path):
    first = apply(store, tmp_path, FAILING)
    ok_id = next(r["physical_id"] for r in first["resources"] if r["name"] == "ok")
    fixed = apply(store, tmp_path, FAILING, parameters={"fail": False})
    assert fixed["stack_status"] == "UPDATE_COMPLETE", fixed["stack_status_reason"]
    touched = {event[0] for event in events(fixed)}
    assert "ok" not in touched and {"bad", "after"} <= touched
    assert next(r["physical_id"] for r in fixed["resources"] if r["name"] == "ok") == ok_id
    assert fixed["revision"] == 2


GROUP = """\
    heat_template_version: 2016-10-14
    resources:
      group:
        type: OS::Heat::ResourceGroup
        properties:
          count: 3
          index_var: "%i%"
          removal_policies: [{resource_list: ["1"]}]
          resource_def:
            type: OS::Heat::TestResource
            properties:
              value: member-%i%
    outputs:
      refs: {value: {get_attr: [group, refs]}}
      refs_map: {value: {get_attr: [group, refs_map]}}
      values: {value: {get_attr: [group, output]}}
      by_name: {value: {get_attr: [group, attributes, output]}}
      second: {value: {get_attr: [group, resource.2.output]}}
      second_ref: {value: {get_attr: [group, resource.2]}}
    """


def test_resource_group_members_and_attributes(store, tmp_path):
    result = apply(store, tmp_path, GROUP, nested_depth=1)
    outputs = result["outputs"]
    # Heat skips names a removal policy lists, and never reuses them.
    assert outputs["values"] == ["member-0", "member-2", "member-3"]
    assert outputs["by_name"] == {"0": "member-0", "2": "member-2", "3": "member-3"}
    assert outputs["second"] == "member-2"
    assert list(outputs["refs_map"]) == ["0", "2", "3"]
    assert outputs["refs"] == list(outputs["refs_map"].values())
    assert outputs["second_ref"] == outputs["refs_map"]["2"]
    nested = [r for r in result["resources"] if r.get("parent") == "group"]
    assert [r["name"] for r in nested] == ["group/0", "group/2", "group/3"]


def test_resource_chain_runs_in_order_unless_concurrent(store, tmp_path):
    chain = """\
        heat_template_version: 2016-10-14
        resources:
          chain:
            type: OS::Heat::ResourceChain
            properties:
              resources: [OS::Heat::TestResource, OS::Heat::TestResource, OS::Heat::RandomString]
              resource_properties: {}
        outputs:
          refs: {value: {get_attr: [chain, refs]}}
        """
    result = apply(store, tmp_path, chain, nested_depth=1)
    member_events = [(n, s) for n, _action, s in events(result) if n.startswith("chain/")]
    assert member_events == [
        ("chain/0", "IN_PROGRESS"), ("chain/0", "COMPLETE"),
        ("chain/1", "IN_PROGRESS"), ("chain/1", "COMPLETE"),
        ("chain/2", "IN_PROGRESS"), ("chain/2", "COMPLETE"),
    ]
    assert len(result["outputs"]["refs"]) == 3


def test_heat_stack_with_inline_template(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        resources:
          inner:
            type: OS::Heat::Stack
            properties:
              parameters: {word: hi}
              template: |
                heat_template_version: 2016-10-14
                parameters:
                  word: {type: string}
                resources:
                  r:
                    type: OS::Heat::TestResource
                    properties: {value: {get_param: word}}
                outputs:
                  said: {value: {get_attr: [r, output]}}
        outputs:
          all: {value: {get_attr: [inner, outputs]}}
          one: {value: {get_attr: [inner, outputs, said]}}
        """
    result = apply(store, tmp_path, text)
    assert result["outputs"] == {"all": {"said": "hi"}, "one": "hi"}


def test_parameter_defaults_reach_nested_stacks_and_facade(store, tmp_path):
    write(tmp_path, "member.yaml", """\
        heat_template_version: 2016-10-14
        parameters:
          colour: {type: string}
        resources:
          r:
            type: OS::Heat::TestResource
            properties: {value: {get_param: colour}}
        outputs:
          colour: {value: {get_attr: [r, output]}}
          role: {value: {resource_facade: metadata}}
        """)
    env = write(tmp_path, "env.yaml", """\
        parameter_defaults:
          colour: blue
        """)
    text = """\
        heat_template_version: 2016-10-14
        resources:
          m:
            type: member.yaml
            metadata: {role: web}
        outputs:
          colour: {value: {get_attr: [m, colour]}}
          role: {value: {get_attr: [m, role]}}
        """
    result = apply(store, tmp_path, text, environment=[env], nested_depth=2)
    assert result["outputs"] == {"colour": "blue", "role": {"role": "web"}}
    assert {"m", "m/r"} <= {r["name"] for r in result["resources"]}


def test_external_and_retained_resources_are_left_in_place(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        resources:
          outside:
            type: OS::Heat::TestResource
            external_id: existing-thing-42
          kept:
            type: OS::Heat::TestResource
            deletion_policy: retain
        outputs:
          ref: {value: {get_resource: outside}}
        """
    created = apply(store, tmp_path, text)
    assert created["outputs"]["ref"] == "existing-thing-42"
    assert ("outside", "CREATE", "IN_PROGRESS") not in events(created)
    deleted = delete_stack(store, DeleteRequest("s"), "test").as_dict()
    assert deleted["stack_status"] == "DELETE_COMPLETE"
    assert store.find_stack("s") is None


def test_output_that_cannot_be_resolved_is_reported_not_fatal(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        resources:
          r:
            type: OS::Heat::TestResource
            properties: {value: "a,b"}
        outputs:
          fine: {value: {get_attr: [r, output]}}
          broken: {value: {str_split: [",", {get_attr: [r, output]}, 7]}}
        """
    result = apply(store, tmp_path, text)
    assert result["stack_status"] == "CREATE_COMPLETE"
    assert result["outputs"] == {"fine": "a,b", "broken": None}
    assert list(result["output_errors"]) == ["broken"]


def test_validation_errors_write_nothing(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        resources:
          r:
            type: OS::Heat::TestResource
            properties: {value: 1, no_such_property: 2}
        """
    with pytest.raises(TemplateError) as caught:
        apply(store, tmp_path, text)
    assert "s.yaml" in str(caught.value) and "Unknown Property no_such_property" in str(caught.value)
    assert store.list_stacks() == []


def test_cycle_is_a_validation_error(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        resources:
          a: {type: OS::Heat::None, depends_on: b}
          b: {type: OS::Heat::None, depends_on: a}
        """
    with pytest.raises(TemplateError, match="Circular Dependency Found"):
        apply(store, tmp_path, text)


def test_second_apply_while_locked_fails_at_once_naming_the_holder(store, tmp_path):
    code = (
        "from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore;"
        f"SqliteStore({str(tmp_path / 'store.db')!r}).acquire_lock('s', 'AWX job 7');"
        "import sys; sys.stdout.write('locked\\n'); sys.stdout.flush(); sys.stdin.read()"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=os.environ, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(StackLocked, match="locked by AWX job 7"):
            apply(store, tmp_path, BASIC)
        assert store.list_stacks() == []
    finally:
        holder.communicate("")


def test_stack_info_shows_revisions_and_nested_resources(store, tmp_path):
    apply(store, tmp_path, GROUP)
    info = describe_stack(store, "s", nested_depth=1)
    assert info["status"] == "CREATE_COMPLETE"
    assert [r["revision"] for r in info["revisions"]] == [1]
    assert "group/2" in {r["name"] for r in info["resources"]}
    assert info["events"][0]["reason"] == "Stack CREATE started"


def test_stack_info_events_reach_nested_stacks_in_order(store, tmp_path):
    apply(store, tmp_path, GROUP)
    shallow = describe_stack(store, "s", nested_depth=0)["events"]
    deep = describe_stack(store, "s", nested_depth=1)["events"]
    assert {e["resource_name"] for e in shallow} == {"s", "group"}
    member = [e for e in deep if e.get("parent") == "group"]
    assert {e["resource_name"] for e in member} == {"group/0", "group/2", "group/3"}
    names = [e["resource_name"] for e in deep]
    # Members are created between the group's IN_PROGRESS and COMPLETE events.
    assert names.index("group") < names.index("group/0") < len(names) - names[::-1].index("group") - 1


def test_group_attribute_paths_reach_into_members(store, tmp_path):
    # Heat's grouputils.get_nested_attrs: the path goes to each member's attribute.
    text = """\
        heat_template_version: 2016-10-14
        resources:
          g:
            type: OS::Heat::ResourceGroup
            properties:
              count: 2
              resource_def:
                type: OS::Heat::Value
                properties: {type: json, value: {a: "w%index%"}}
        outputs:
          member: {value: {get_attr: [g, resource.1, value]}}
          member_path: {value: {get_attr: [g, resource.1, value, a]}}
          dotted: {value: {get_attr: [g, resource.1.value, a]}}
          each: {value: {get_attr: [g, value, a]}}
          by_name: {value: {get_attr: [g, attributes, value, a]}}
          ref: {value: {get_attr: [g, resource.0]}}
        """
    outputs = apply(store, tmp_path, text)["outputs"]
    assert outputs["member"] == {"a": "w1"}
    assert outputs["member_path"] == "w1" and outputs["dotted"] == "w1"
    assert outputs["each"] == ["w0", "w1"]
    assert outputs["by_name"] == {"0": "w0", "1": "w1"}
    assert isinstance(outputs["ref"], str) and outputs["ref"]


def test_external_id_may_use_functions(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        parameters:
          existing: {type: string, default: vol-123}
        resources:
          outside:
            type: OS::Heat::TestResource
            external_id: {get_param: existing}
        outputs:
          ref: {value: {get_resource: outside}}
        """
    assert apply(store, tmp_path, text)["outputs"]["ref"] == "vol-123"


def test_every_condition_is_checked_even_unused(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        conditions:
          unused: {equals: [only_one]}
        resources:
          r: {type: OS::Heat::None}
        """
    with pytest.raises(TemplateError, match="conditions.unused"):
        apply(store, tmp_path, text)
    assert store.list_stacks() == []


def test_snapshot_deletion_policy_is_refused_for_types_that_cannot_snapshot(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        resources:
          r: {type: OS::Heat::TestResource, deletion_policy: Snapshot}
        """
    with pytest.raises(TemplateError, match='"Snapshot" deletion policy not supported'):
        apply(store, tmp_path, text)


def test_a_bad_update_policy_is_refused_before_anything_is_written(store, tmp_path):
    text = """\
        heat_template_version: 2016-10-14
        resources:
          group:
            type: OS::Heat::ResourceGroup
            update_policy:
              rolling_update: {max_batch_size: 0}
            properties:
              count: 2
              resource_def: {type: OS::Heat::None}
        """
    with pytest.raises(TemplateError, match="max_batch_size: 0 is out of range"):
        apply(store, tmp_path, text)
    assert store.list_stacks() == []
