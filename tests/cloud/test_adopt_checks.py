# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An abandon file is input from elsewhere, and what its ids name is what the adopted
stack's updates and delete act on: hotplay.stacks.stack_adopt looks each native id up
as its type, in the session's project, before anything is recorded (Heat checks
nothing).  On the test cloud, through real ansible-playbook (one play for every case),
as the project member of clouds.yaml entry ``hotplay-demo`` and as the admin; what is
on the cloud afterwards is checked through openstacksdk."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import integration_harness
import pytest

store_rows = integration_harness.load().store_rows

MEMBER_CLOUD = "hotplay-demo"
ADMIN_CLOUD = "hotplay"


@pytest.fixture(scope="module")
def member(cloud_env: dict[str, str]) -> Any:
    import openstack.config

    config = openstack.config.OpenStackConfig(config_files=[cloud_env["OS_CLIENT_CONFIG_FILE"]])
    return openstack.connection.Connection(config=config.get_one(cloud=MEMBER_CLOUD))


@pytest.fixture
def things(conn: Any, member: Any) -> Iterator[dict[str, str]]:
    """A network of the admin's project; a network and a security group of the member's."""
    suffix = uuid.uuid4().hex[:8]
    made = {"admin_net": conn.network.create_network(name=f"adopt-admin-{suffix}"),
            "member_net": member.network.create_network(name=f"adopt-member-{suffix}"),
            "member_group": member.network.create_security_group(name=f"adopt-member-{suffix}")}
    yield {name: thing.id for name, thing in made.items()}
    conn.network.delete_network(made["admin_net"], ignore_missing=True)
    conn.network.delete_network(made["member_net"], ignore_missing=True)
    conn.network.delete_security_group(made["member_group"], ignore_missing=True)


def abandon_file(folder: Path, name: str, net_id: str) -> str:
    """Heat's abandon data of a stack with one OS::Neutron::Net, whose id is ``net_id``."""
    data = {"name": name, "id": str(uuid.uuid4()), "action": "CREATE", "status": "COMPLETE",
            "template": {"heat_template_version": "2018-08-31",
                         "resources": {"net": {"type": "OS::Neutron::Net"}}},
            "environment": {"parameters": {}}, "files": {}, "tags": [],
            "project_id": "elsewhere", "stack_user_project_id": "elsewhere",
            "resources": {"net": {"name": "net", "resource_id": net_id, "type": "OS::Neutron::Net",
                                  "action": "CREATE", "status": "COMPLETE", "metadata": {},
                                  "resource_data": {}}}}
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_ids_of_an_abandon_file_are_looked_up_as_their_type_in_the_sessions_project(
        run_tasks: Any, store_url: str, cloud_env: dict[str, str], conn: Any, member: Any,
        things: dict[str, str], tmp_path: Path) -> None:
    cases = {
        # What the member cannot see: another project's network.
        "hidden": (MEMBER_CLOUD, things["admin_net"], {}),
        # A path: through the network's URL, it would reach the security group.
        "path": (MEMBER_CLOUD, f"../security-groups/{things['member_group']}", {}),
        # The member's own security group, given as a network.
        "wrong_type": (MEMBER_CLOUD, things["member_group"], {}),
        # The admin sees every project's network: only its own is adopted unless told.
        "other_project": (ADMIN_CLOUD, things["member_net"], {}),
        "allowed": (ADMIN_CLOUD, things["member_net"], {"other_projects": True}),
    }
    tasks = [{"name": name, "register": name,
              "hotplay.stacks.stack_adopt": {"name": name, "cloud": cloud, **options,
                                             "abandon_file": abandon_file(tmp_path, name, net_id)}}
             for name, (cloud, net_id, options) in cases.items()]
    run = run_tasks(tasks, env=cloud_env)
    results = run.results
    where = "Resource ADOPT failed: {error}: resources.net: Heat's physical id '{ident}' of OS::Neutron::Net net"
    expected = {
        "hidden": where.format(error="NotFound", ident=things["admin_net"])
        + " names nothing of that type that the cloud shows this session",
        "path": where.format(error="StackValidationFailed", ident=f"../security-groups/{things['member_group']}")
        + " is not the shape of such an id: expected a UUID",
        "wrong_type": where.format(error="NotFound", ident=things["member_group"])
        + " names nothing of that type that the cloud shows this session",
        "other_project": where.format(error="Forbidden", ident=things["member_net"])
        + f" is project {member.current_project_id}'s, not this session's project {conn.current_project_id}",
    }
    for name, text in expected.items():
        assert results[name]["failed"] and text in results[name]["msg"], (name, results[name], run.stdout)
    assert results["allowed"]["stack_status"] == "ADOPT_COMPLETE", results["allowed"]
    assert store_rows(store_url, "SELECT name FROM stacks") == [("allowed",)]
    # Nothing of the cloud was touched by the refused adoptions.
    assert conn.network.get_network(things["admin_net"]) is not None
    assert member.network.get_security_group(things["member_group"]) is not None
    assert member.network.get_network(things["member_net"]) is not None
