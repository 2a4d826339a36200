# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's types that this collection does not run, on the test cloud: a template naming
them is refused before anything is written (in check mode too) with one message that
names each such resource, its type and its service, in Heat's words for a service the
cloud's catalog lacks (Trove here) and saying that the cloud runs the others (Nova's
host aggregates); and the worked example of docs/openstack.md, a provider template
over ``openstack.cloud.host_aggregate`` (docs/examples/nova_host_aggregate.yaml),
runs such a type: the aggregate is made, updated and deleted in Nova."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import yaml

EXAMPLE = Path(os.environ.get("HOTPLAY_REPO", Path(__file__).resolve().parents[2])) / "docs" / "examples" / \
    "nova_host_aggregate.yaml"
TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"zone_name": {"type": "string", "default": "one"}},
    "resources": {
        "aggregate": {"type": "OS::Nova::HostAggregate", "properties": {
            "name": {"get_param": "zone_name"}, "metadata": {"tier": "gold"}}},
    },
    "outputs": {"id": {"value": {"get_resource": "aggregate"}},
                "metadata": {"value": {"get_attr": ["aggregate", "show", "metadata"]}}},
}
WITH_TROVE = {**TEMPLATE, "resources": {**TEMPLATE["resources"], "db": {
    "type": "OS::Trove::Instance", "properties": {"flavor": "m1.small", "size": 1}}}}


def stack_task(name: str, template: Path, state: str = "present", check_mode: bool = False,
               environment: list[str] | None = None, **parameters: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {"name": name, "state": state}
    if state == "present":
        arguments.update(template=str(template), parameters=parameters, environment=environment or [])
    task: dict[str, Any] = {"name": "stack", "hotplay.stacks.stack": arguments, "register": "done",
                            "ignore_errors": True}
    if check_mode:
        task["check_mode"] = True
    return task


def test_types_not_run_are_refused_naming_each_and_its_service(run_tasks: Any, cloud_env: dict[str, str],
                                                               tmp_path: Path) -> None:
    template = tmp_path / "unrun.yaml"
    template.write_text(yaml.safe_dump(WITH_TROVE))
    name = f"u{uuid.uuid4().hex[:8]}"
    env = {**cloud_env, "OS_CLOUD": "hotplay"}
    for check_mode in (True, False):
        done = run_tasks([stack_task(name, template, check_mode=check_mode)], name=f"{name}-{check_mode}", env=env)
        result = done.results["done"]
        assert result["failed"], result
        message = result["msg"]
        assert "resources.aggregate (OS::Nova::HostAggregate): the cloud runs nova (compute), but " \
               "hotplay.stacks does not implement OS::Nova::HostAggregate yet" in message, message
        assert "resources.db (OS::Trove::Instance): HEAT-E99001 Service trove is not available for resource " \
               "type OS::Trove::Instance, reason: Service endpoint not in service catalog." in message, message
        assert "nothing was written" in message and "Traceback" not in message
    listed = run_tasks([{"name": "info", "hotplay.stacks.stack_info": {"name": name}, "register": "done",
                         "ignore_errors": True}], name=f"{name}-info", env=env).results["done"]
    assert not listed.get("exists"), listed


def test_the_worked_example_runs_a_type_this_collection_does_not(run_tasks: Any, cloud_env: dict[str, str],
                                                                 tmp_path: Path, conn: Any) -> None:
    template = tmp_path / "aggregate.yaml"
    template.write_text(yaml.safe_dump(TEMPLATE))
    environment = tmp_path / "env.yaml"
    # As the docs say: the provider beside the environment that maps the type to it.
    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    environment.write_text(yaml.safe_dump({"resource_registry": {"OS::Nova::HostAggregate": EXAMPLE.name}}))
    name = f"a{uuid.uuid4().hex[:8]}"
    zone = f"{name}-zone"
    env = {**cloud_env, "OS_CLOUD": "hotplay"}

    def apply(**parameters: Any) -> dict[str, Any]:
        done = run_tasks([stack_task(name, template, environment=[str(environment)], **parameters)],
                         name=f"{name}-{len(parameters)}", env=env).results["done"]
        assert not done.get("failed"), done.get("msg")
        return dict(done["outputs"])

    made = apply(zone_name=zone)
    aggregate = conn.compute.get_aggregate(made["id"])
    assert (aggregate.name, aggregate.metadata) == (zone, {"tier": "gold"}) and made["metadata"] == {"tier": "gold"}
    template.write_text(yaml.safe_dump({**TEMPLATE, "resources": {"aggregate": {
        "type": "OS::Nova::HostAggregate", "properties": {"name": {"get_param": "zone_name"},
                                                          "metadata": {"tier": "silver"}}}}}))
    updated = apply(zone_name=zone)
    assert updated["id"] == made["id"]  # in place, as Heat's metadata update
    assert conn.compute.get_aggregate(made["id"]).metadata == {"tier": "silver"}
    deleted = run_tasks([stack_task(name, template, state="absent")], name=f"{name}-delete", env=env).results["done"]
    assert not deleted.get("failed"), deleted.get("msg")
    assert made["id"] not in {a.id for a in conn.compute.aggregates()}
