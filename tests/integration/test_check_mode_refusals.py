# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check mode lists the changes an apply would refuse (the environment's
``restricted_actions``, the task's ``prevent_destroy``) in ``plan.refused``, each
with why, and warns; the whole plan is returned.  The apply still fails, as
``on_restricted`` says."""

from __future__ import annotations

from typing import Any

from conftest import write_template

TEMPLATE = """\
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
      free:
        type: OS::Heat::Value
        properties: {value: {get_param: value}}
    """
ENVIRONMENT = """\
    resource_registry:
      resources:
        in_place: {restricted_actions: update}
    """
CHANGED = {"value": "two", "replace_value": "r2"}


def stack(register: str, template: str, environment: str, check: bool = False,
          **options: Any) -> dict[str, Any]:
    task: dict[str, Any] = {"hotplay.stacks.stack": {
        "name": "guarded", "template": template, "environment": [environment], **options},
        "register": register}
    if check:
        task["check_mode"] = True
    return task


def test_preview_lists_every_refusal_and_the_apply_still_fails(run_tasks, tmp_path) -> None:
    template = str(write_template(tmp_path, "main.yaml", TEMPLATE))
    environment = str(write_template(tmp_path, "env.yaml", ENVIRONMENT))
    run = run_tasks([
        stack("created", template, environment),
        stack("preview", template, environment, check=True, parameters=CHANGED,
              prevent_destroy=["replaced"]),
        stack("preview_skip", template, environment, check=True, parameters=CHANGED,
              prevent_destroy=["replaced"], on_restricted="skip"),
        stack("applied", template, environment, parameters=CHANGED, prevent_destroy=["replaced"]),
        stack("applied_skip", template, environment, parameters=CHANGED,
              prevent_destroy=["replaced"], on_restricted="skip"),
    ])
    created, preview, skip = (run.results[k] for k in ("created", "preview", "preview_skip"))
    assert created["stack_status"] == "CREATE_COMPLETE"

    # The preview does not fail: the whole plan, and each refusal named with why.
    assert preview["failed"] is False, preview.get("msg")
    plan = preview["plan"]
    assert plan["updated"] == ["in_place", "free"] and plan["replaced"] == ["replaced"]
    refused = {r["resource"]: r for r in plan["refused"]}
    assert sorted(refused) == ["in_place", "replaced"]
    assert refused["in_place"]["action"] == "updated"
    assert "update is restricted for resource" in refused["in_place"]["reason"]
    assert refused["replaced"]["action"] == "replaced"
    assert "prevent_destroy protects it (replaced)" in refused["replaced"]["reason"]
    warnings = "\n".join(preview["warnings"])
    assert "REFUSED: in_place (OS::Heat::TestResource) would be UPDATED" in warnings
    assert "REFUSED: replaced (OS::Heat::TestResource) would be REPLACED" in warnings

    # on_restricted: skip leaves in_place as it is: only prevent_destroy refuses.
    assert [r["resource"] for r in skip["plan"]["refused"]] == ["replaced"]
    assert "in_place" in skip["plan"]["unchanged"]

    # The apply fails as before: at the restricted resource (Heat's message), then,
    # with skip, at the protected one; nothing changed.
    applied, applied_skip = run.results["applied"], run.results["applied_skip"]
    assert applied["failed"] is True and applied["changed"] is False
    assert "resources.in_place: update is restricted for resource." in applied["msg"]
    assert applied_skip["failed"] is True and "prevent_destroy" in applied_skip["msg"]
    assert applied_skip["stack_status"] == "CREATE_COMPLETE"
