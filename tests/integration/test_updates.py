# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Updates, previews and refusals through real ansible-playbook runs."""

from __future__ import annotations

from conftest import EXAMPLES, write_template

APP = str(EXAMPLES / "app_stack.yaml")

TWO = """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string, default: one}
      replace_value: {type: string, default: r1}
      region: {type: string, default: east, immutable: true}
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


def stack(register: str, template: str, check: bool = False, **options) -> dict:
    task = {"hotplay.stacks.stack": {"name": "svc", "template": template, **options},
            "register": register}
    if check:
        task.update(check_mode=True, diff=True)
    return task


def ids(result: dict) -> dict[str, str]:
    return {r["name"]: r["physical_id"] for r in result["resources"]}


def test_preview_review_apply_and_refusals(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "two.yaml", TWO))
    run = run_tasks([
        stack("created", template),
        stack("preview", template, check=True, parameters={"replace_value": "r2", "value": "two"}),
        stack("applied", template, parameters={"replace_value": "r2", "value": "two"},
              plan_id="{{ preview.plan_id }}"),
        stack("stale", template, parameters={"value": "three"}, plan_id="{{ preview.plan_id }}"),
        stack("guarded", template, parameters={"replace_value": "r3"}, prevent_destroy=["replaced"]),
        stack("immutable", template, parameters={"region": "west"}),
        {"hotplay.stacks.stack": {"name": "svc", "existing": True, "parameters": {"value": "patched"}},
         "register": "patched"},
    ])
    created, preview, applied = (run.results[k] for k in ("created", "preview", "applied"))
    # The preview: Heat's keys, reasons, loud warnings, a diff, and nothing written.
    assert preview["changed"] is True and preview["revision"] == 1
    assert preview["plan"]["replaced"] == ["replaced"]
    assert sorted(preview["plan"]["updated"]) == ["in_place", "reader"]
    assert "reads replaced, which will be replaced" in preview["plan"]["reasons"]["reader"]
    assert any("replaced (OS::Heat::TestResource) will be REPLACED" in w for w in preview["warnings"])
    diff = {d["after_header"]: d for d in preview["diff"]}
    assert diff["in_place (OS::Heat::TestResource) updated"]["after"]["value"] == "two"
    # Warnings are what ansible-playbook prints loudly (on stderr).
    assert "PREVIEW: replaced (OS::Heat::TestResource) will be REPLACED" in run.stderr
    # The reviewed plan applied: new physical id for the replaced one, same for the other.
    assert applied["stack_status"] == "UPDATE_COMPLETE" and applied["plan"] == preview["plan"]
    assert ids(applied)["replaced"] != ids(created)["replaced"]
    assert ids(applied)["in_place"] == ids(created)["in_place"]
    assert applied["outputs"]["reader"] == ids(applied)["replaced"]
    # Refusals: failed, nothing changed, the stack as it was.
    for name, words in (("stale", "is stale"), ("guarded", "would be replaced"),
                        ("immutable", "immutable and may not be updated: region")):
        refused = run.results[name]
        assert refused["failed"] and refused["changed"] is False and words in refused["msg"], refused
        assert refused["stack_status"] == "UPDATE_COMPLETE" and refused["revision"] == 2
    patched = run.results["patched"]
    assert patched["revision"] == 3 and patched["plan"]["updated"] == ["in_place"]
    assert patched["parameters"]["replace_value"] == "r2"


def test_example_stack_scales_down_and_previews_nested_changes(run_tasks):
    run = run_tasks([
        stack("created", APP, nested_depth=1),
        stack("preview", APP, check=True, parameters={"worker_count": 2}, nested_depth=1),
        stack("scaled", APP, parameters={"worker_count": 2}, nested_depth=1),
    ])
    preview, scaled = run.results["preview"], run.results["scaled"]
    assert preview["plan"]["deleted"] == ["workers/2"]
    assert preview["plan"]["updated"][0] == "workers"
    assert preview["plan"]["reasons"]["workers"] == "properties changed: count"
    assert any("workers/2 (OS::Heat::TestResource) will be DELETED" in w for w in preview["warnings"])
    assert scaled["outputs"]["workers"] == ["worker-0", "worker-1"]
    assert "workers/2" not in {r["name"] for r in scaled["resources"]}


def test_restricted_actions_refused_as_heat_then_skipped(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "two.yaml", TWO))
    env = str(write_template(tmp_path, "env.yaml", """\
        resource_registry:
          resources:
            replaced:
              restricted_actions: [replace]
        """))
    changed = {"replace_value": "r2", "value": "two"}
    run = run_tasks([
        stack("created", template, environment=[env]),
        stack("refused", template, environment=[env], parameters=changed),
        stack("skipped", template, environment=[env], parameters=changed, on_restricted="skip"),
    ])
    refused, skipped = run.results["refused"], run.results["skipped"]
    assert refused["failed"] and refused["msg"] == (
        "UPDATE_FAILED: Resource UPDATE failed: ResourceActionRestricted: "
        "resources.replaced: replace is restricted for resource.")
    assert refused["revision"] == 1
    assert skipped["stack_status"] == "UPDATE_COMPLETE"
    assert ids(skipped)["replaced"] == ids(run.results["created"])["replaced"]
    assert {e["resource_name"] for e in skipped["events"]} == {"svc", "in_place"}


def test_condition_flip_and_group_removal_policies(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "flip.yaml", """\
        heat_template_version: 2016-10-14
        parameters:
          env: {type: string, default: test}
          count: {type: number, default: 3}
          remove: {type: json, default: []}
        conditions:
          prod: {equals: [{get_param: env}, prod]}
        resources:
          monitor: {type: OS::Heat::None, condition: prod}
          group:
            type: OS::Heat::ResourceGroup
            properties:
              count: {get_param: count}
              removal_policies: [{resource_list: {get_param: remove}}]
              resource_def: {type: OS::Heat::TestResource, properties: {value: "m-%index%"}}
        outputs:
          values: {value: {get_attr: [group, output]}}
        """))
    run = run_tasks([
        stack("created", template, nested_depth=1),
        stack("prod", template, parameters={"env": "prod", "count": 4}, nested_depth=1),
        stack("removed", template, parameters={"env": "test", "count": 3, "remove": ["1"]},
              nested_depth=1),
    ])
    prod, removed = run.results["prod"], run.results["removed"]
    assert sorted(prod["plan"]["added"]) == ["group/3", "monitor"]
    assert prod["outputs"]["values"] == ["m-0", "m-1", "m-2", "m-3"]
    # Heat: the removed name is skipped, the others keep theirs (0, 2, 3).
    assert sorted(removed["plan"]["deleted"]) == ["group/1", "monitor"]
    assert removed["outputs"]["values"] == ["m-0", "m-2", "m-3"]
