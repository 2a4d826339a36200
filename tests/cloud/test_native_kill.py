# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible-playbook killed (SIGKILL, its whole process tree: the worker too, which
Ansible runs in a session of its own) while
native servers are being made, on the test cloud as the project member of clouds.yaml
entry ``hotplay-demo``: the same task again converges the stack, with nothing on the
cloud that the stack does not know, and the stack's delete leaves nothing.  One
server is on a pre-made port (a server the killed run made would hold it), one on a
``subnet`` entry (its port is made before the server).  What is on the cloud is
checked through openstacksdk."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import integration_harness
import pytest
import yaml

integration = integration_harness.load()
processes = integration_harness.helper("processes")

MEMBER_CLOUD = "hotplay-demo"

TEMPLATE = """\
    heat_template_version: 2018-08-31
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.94.0.0/24}
      port0:
        type: OS::Neutron::Port
        properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
      srv0:
        type: OS::Nova::Server
        properties: {image: hotplay-tiny, flavor: m1.tiny, networks: [{port: {get_resource: port0}}]}
      srv1:
        type: OS::Nova::Server
        properties: {image: hotplay-tiny, flavor: m1.tiny, networks: [{subnet: {get_resource: subnet}}]}
"""


@pytest.fixture(scope="module")
def member(cloud_env: dict[str, str]) -> Any:
    import openstack.config

    config = openstack.config.OpenStackConfig(config_files=[cloud_env["OS_CLIENT_CONFIG_FILE"]])
    return openstack.connection.Connection(config=config.get_one(cloud=MEMBER_CLOUD))


def server_rows(store: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """The servers' live rows as the store has them: name -> (physical id, data)."""
    if not store.exists():
        return {}
    with sqlite3.connect(store, timeout=30) as db:
        rows = db.execute("SELECT name, physical_id, data FROM resources WHERE name LIKE 'srv%' "
                          "AND retired_in = 0").fetchall()
    return {name: (ident, json.loads(data)) for name, ident, data in rows}


def known_to_the_store(store: Path) -> set[str]:
    """Every id the store's live rows record: physical ids, and the ports made for servers."""
    with sqlite3.connect(store, timeout=30) as db:
        rows = db.execute("SELECT physical_id, data FROM resources WHERE retired_in = 0").fetchall()
    return {ident for ident, _data in rows if ident} | {
        port for _ident, data in rows for port in json.loads(data).get("internal_ports") or []}


def on_the_cloud(member: Any, stack: str) -> set[str]:
    """What of the stack's the member's project holds: its servers (Heat's names begin
    with the stack's) and every port on its network."""
    servers = {s.id for s in member.compute.servers() if s.name.startswith(f"{stack}-srv")}
    nets = [n.id for n in member.network.networks() if n.name.startswith(f"{stack}-net")]
    return servers | {p.id for net in nets for p in member.network.ports(network_id=net)}


def test_a_run_killed_while_servers_are_made_is_converged_by_the_next_with_nothing_unknown(
        run_tasks: Any, cloud_env: dict[str, str], member: Any, tmp_path: Path) -> None:
    stack = f"k{uuid.uuid4().hex[:8]}"
    store = tmp_path / "kill.db"
    template = tmp_path / "servers.yaml"
    template.write_text(textwrap.dedent(TEMPLATE))
    task = {"name": "apply", "register": "done", "ignore_errors": True, "hotplay.stacks.stack": {
        "name": stack, "template": str(template), "cloud": MEMBER_CLOUD, "store": f"sqlite:///{store}"}}
    playbook = tmp_path / "killed.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [task]}]))
    killed = subprocess.Popen(integration.playbook_command(playbook), cwd=tmp_path,
                              env=integration.playbook_environment(cloud_env), start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Killed once both servers are being made (their rows written before anything
        # is asked of the cloud), a moment later: srv1's port and the servers' POSTs
        # are in flight or just answered, most runs.
        deadline = time.monotonic() + 300
        while set(server_rows(store)) != {"srv0", "srv1"}:
            assert killed.poll() is None and time.monotonic() < deadline, "the run ended before srv0 was made"
            time.sleep(0.05)
        time.sleep(0.4)
    finally:
        processes.kill_tree(killed.pid)
        killed.wait()
    left = server_rows(store)
    try:
        again = run_tasks([dict(task)], name="again", env=cloud_env).results["done"]
        assert again and not again.get("failed"), (again or {}).get("msg")
        assert again["stack_status"].endswith("_COMPLETE"), again["stack_status_reason"]
        unknown = on_the_cloud(member, stack) - known_to_the_store(store)
        assert not unknown, f"on the cloud, not in the store: {unknown}; the killed run left {left}"
    finally:
        task["hotplay.stacks.stack"]["state"] = "absent"
        task["hotplay.stacks.stack"].pop("template")
        gone = run_tasks([task], name="delete", env=cloud_env).results["done"]
    assert gone and not gone.get("failed"), (gone or {}).get("msg")
    assert on_the_cloud(member, stack) == set()
    assert not [n for n in member.network.networks() if n.name.startswith(f"{stack}-net")]
