# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An existing provider resource given another template that adds one resource
(another file, directly or through the environment): the preview lists as added only
the new nested resource, as Heat's preview with show_nested does, and the update
keeps the others (Heat updates a provider resource in place).  Compared with the
real Heat in tests/differential/test_provider_template_swap.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import write_template

THING = """\
    heat_template_version: 2018-08-31
    parameters:
      label: {type: string}
    resources:
      inner:
        type: OS::Heat::Value
        properties: {value: {get_param: label}}
      other:
        type: OS::Heat::TestResource
        properties: {value: x}
    """
EXTRA = """\
      extra:
        type: OS::Heat::Value
        properties: {value: new}
    """


def main(type_name: str) -> str:
    return f"""\
    heat_template_version: 2018-08-31
    resources:
      thing:
        type: {type_name}
        properties: {{label: a}}
    """


def task(register: str, template: Path, environment: Path | None, check: bool = False) -> dict[str, Any]:
    options: dict[str, Any] = {"name": "app", "template": str(template), "nested_depth": 2}
    if environment is not None:
        options["environment"] = [str(environment)]
    entry: dict[str, Any] = {"hotplay.stacks.stack": options, "register": register}
    if check:
        entry["check_mode"] = True
    return entry


@pytest.mark.parametrize("through_environment", [False, True], ids=["type-file", "registry"])
def test_preview_adds_only_the_new_nested_resource(run_tasks, tmp_path, through_environment) -> None:
    write_template(tmp_path, "thing.yaml", THING)
    write_template(tmp_path, "thing_v2.yaml", THING.rstrip(" ") + EXTRA)
    if through_environment:
        first = write_template(tmp_path, "main.yaml", main("My::Thing"))
        second = first
        env1 = write_template(tmp_path, "env1.yaml", 'resource_registry: {"My::Thing": thing.yaml}\n')
        env2 = write_template(tmp_path, "env2.yaml", 'resource_registry: {"My::Thing": thing_v2.yaml}\n')
    else:
        first = write_template(tmp_path, "main.yaml", main("thing.yaml"))
        second = write_template(tmp_path, "main_v2.yaml", main("thing_v2.yaml"))
        env1 = env2 = None
    run = run_tasks([
        task("created", first, env1),
        task("preview", second, env2, check=True),
        task("updated", second, env2),
    ])
    created, preview, updated = (run.results[k] for k in ("created", "preview", "updated"))
    assert created["stack_status"] == "CREATE_COMPLETE", created.get("msg")
    plan = preview["plan"]
    assert plan["added"] == ["thing/extra"]
    assert plan["updated"] == ["thing"] and plan["replaced"] == [] and plan["deleted"] == []
    assert sorted(plan["unchanged"]) == ["thing/inner", "thing/other"]
    assert "provider template changed from thing.yaml to thing_v2.yaml" in plan["reasons"]["thing"]

    assert updated["stack_status"] == "UPDATE_COMPLETE", updated.get("msg")
    before = {r["name"]: r["physical_id"] for r in created["resources"]}
    after = {r["name"]: r["physical_id"] for r in updated["resources"]}
    assert {k: after[k] for k in before} == before  # kept, the nested stack too
    assert "thing/extra" in after
