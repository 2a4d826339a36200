# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Public templates of openstack/heat-templates, unchanged, on the native OpenStack
types (no environment), as a project member: create, a check-mode preview of an
update, the update, delete; afterwards the project holds nothing the stack made.

Each case runs in a project of the test's own (the demo user is its member), with
one network made by the test: hello_world, server_console and server_with_volumes
name no network, and Nova then needs the project's only one.

The templates are others' work and not shipped: they are read from a heat-templates
checkout named by $HOTPLAY_HEAT_TEMPLATES, else ../shared/heat-templates beside the
clone; without either these tests skip with one line.  A template of the tests' own
in the shape of servers_in_new_neutron_net and hello_world always runs natively
(tests/cloud/templates/servers_on_a_new_network.yaml)."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
IMAGE, FLAVOR, BIGGER_FLAVOR = "hotplay-tiny", "m1.tiny", "m1.small"
# Fits hello_world's constraints (6-8 letters and digits, an uppercase first).
ADMIN_PASS = "Hp" + uuid.uuid4().hex[:6]
PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIPcE2XbENz1QD9f47FgX3Y2y6s+ELNOQqZfTs+R7kwM hotplay-test"


@dataclass
class Project:
    """A project of the test's own, its member's connection and cloud entry, and
    the one network the templates that name none are put on."""
    name: str
    member: Any
    env: dict[str, str]
    network: Any = None
    subnet: Any = None
    keypair: str = ""
    stacks: list[str] = field(default_factory=list)  # applied and not deleted yet


@pytest.fixture
def project(conn: Any, cloud_env: dict[str, str], tmp_path: Path, run_tasks: Any) -> Iterator[Project]:
    name = f"tpl{uuid.uuid4().hex[:8]}"
    made = conn.identity.create_project(name=name, domain_id="default")
    conn.identity.assign_project_role_to_user(made, conn.identity.find_user("demo"),
                                              conn.identity.find_role("member"))
    clouds = json.loads(Path(cloud_env["OS_CLIENT_CONFIG_FILE"]).read_text())  # JSON is YAML
    entry = clouds["clouds"]["hotplay-demo"]
    clouds["clouds"][name] = {**entry, "auth": {**entry["auth"], "project_name": name}}
    config = tmp_path / "clouds.yaml"
    config.write_text(json.dumps(clouds))
    env = {**cloud_env, "OS_CLIENT_CONFIG_FILE": str(config), "OS_CLOUD": name,
           # A hidden parameter (admin_pass) is kept only encrypted: the store needs a key.
           "HOTPLAY_STORE_KEY": "cloud tests' store key"}
    import openstack.config

    member = openstack.connection.Connection(
        config=openstack.config.OpenStackConfig(config_files=[str(config)]).get_one(cloud=name))
    here = Project(name, member, env)
    try:
        here.network = member.network.create_network(name=f"{name}-net")
        here.subnet = member.network.create_subnet(network_id=here.network.id, cidr="10.60.0.0/24",
                                                   ip_version=4, name=f"{name}-subnet")
        here.keypair = member.compute.create_keypair(name=f"{name}-key", public_key=PUBLIC_KEY).name
        yield here
    finally:
        for stack in here.stacks:  # a failed test's stack: deleted as a user would
            run_tasks([{"hotplay.stacks.stack": {"name": stack, "state": "absent", "cloud": name}}],
                      name=f"cleanup-{stack}", env=env)
        _remove_routers(here)
        member.compute.delete_keypair(f"{name}-key", ignore_missing=True)
        if here.network is not None:
            member.network.delete_network(here.network, ignore_missing=True)
        conn.identity.delete_project(made, ignore_missing=True)


def leftovers(project: Project) -> list[str]:
    """What the project holds beyond the test's own network, subnet and key pair:
    after a stack's delete, what it left behind."""
    member = project.member
    found = [f"server {s.name}" for s in member.compute.servers()]
    found += [f"volume {v.name or v.id}" for v in member.block_storage.volumes()]
    found += [f"floating IP {ip.floating_ip_address}" for ip in member.network.ips()]
    found += [f"router {r.name}" for r in member.network.routers()]
    found += [f"network {n.name}" for n in member.network.networks(project_id=project.network.project_id)
              if n.id != project.network.id]
    found += [f"port {p.id} ({p.device_owner})" for p in member.network.ports(project_id=project.network.project_id)
              if p.device_owner != "network:dhcp"]
    found += [f"security group {g.name}" for g in member.network.security_groups(
        project_id=project.network.project_id) if g.name != "default"]
    return found


@dataclass
class Case:
    """A public template, the parameters it is created with, the change of the
    update, and what the preview must say of that change."""
    path: str
    parameters: Callable[[Project], dict[str, Any]]
    change: dict[str, Any]
    updated: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    check: Callable[[Project, dict[str, Any], dict[str, Any]], None] = lambda *_: None


def run(project: Project, run_tasks: Any, register: str, task: dict[str, Any],
        check_mode: bool = False) -> dict[str, Any]:
    play = {"name": register, **task, "register": register}
    if check_mode:
        play["check_mode"] = True
    done = run_tasks([play], name=register, env=project.env)
    result = done.results.get(register)
    assert result is not None, done.stdout
    assert not result.get("failed"), result.get("msg")
    return dict(result)


def apply(project: Project, run_tasks: Any, stack: str, template: Path, register: str,
          parameters: dict[str, Any], check_mode: bool = False) -> dict[str, Any]:
    return run(project, run_tasks, register, {"hotplay.stacks.stack": {
        "name": stack, "template": str(template), "parameters": parameters,
        "cloud": project.name}}, check_mode)


def ids(result: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry["physical_id"] for entry in result["resources"]}


def image_and_flavor(project: Project) -> dict[str, Any]:
    return {"image": IMAGE, "flavor": FLAVOR}


def flavor_of(project: Project, server_id: str) -> str:
    return str(project.member.compute.get_server(server_id).flavor["original_name"])


def resized(*servers: str) -> Callable[[Project, dict[str, Any], dict[str, Any]], None]:
    def check(project: Project, before: dict[str, Any], after: dict[str, Any]) -> None:
        for server in servers:
            assert ids(after)[server] == ids(before)[server]
            assert flavor_of(project, ids(after)[server]) == BIGGER_FLAVOR
    return check


def volume_extended(project: Project, before: dict[str, Any], after: dict[str, Any]) -> None:
    assert ids(after) == ids(before)
    volume = project.member.block_storage.get_volume(ids(after)["my_vol"])
    assert volume.size == 2 and volume.status == "in-use"
    [attachment] = volume.attachments
    assert attachment["server_id"] == ids(after)["my_instance"]


def server_replaced(project: Project, before: dict[str, Any], after: dict[str, Any]) -> None:
    assert ids(after)["server"] != ids(before)["server"]
    assert project.member.compute.find_server(ids(before)["server"]) is None
    assert project.member.compute.get_server(ids(after)["server"]).status == "ACTIVE"


def third_volume_attached(project: Project, before: dict[str, Any], after: dict[str, Any]) -> None:
    server = ids(after)["instance"]
    assert server == ids(before)["instance"]
    attached = [v for v in project.member.block_storage.volumes()
                if any(a["server_id"] == server for a in v.attachments)]
    assert len(attached) == 3


CASES = {
    "vm_with_cinder": Case(
        "hot/vm_with_cinder.yaml",
        lambda p: {**image_and_flavor(p), "key_name": p.keypair, "network": p.network.name},
        {"vol_size": 2}, updated=["my_vol"], check=volume_extended),
    "server_console": Case("hot/server_console.yaml", image_and_flavor, {"flavor": BIGGER_FLAVOR},
                           updated=["server"], check=resized("server")),
    "hello_world": Case(
        # db_port is in the server's user_data: Heat replaces the server by default.
        "hot/hello_world.yaml",
        lambda p: {**image_and_flavor(p), "key_name": p.keypair, "admin_pass": ADMIN_PASS},
        {"db_port": 50001}, replaced=["server"], check=server_replaced),
    "servers_in_new_neutron_net": Case(
        "hot/servers_in_new_neutron_net.yaml",
        lambda p: {**image_and_flavor(p), "key_name": p.keypair, "public_net": "public",
                   "private_net_name": f"{p.name}-private", "private_net_cidr": "10.61.0.0/24",
                   "private_net_gateway": "10.61.0.1", "private_net_pool_start": "10.61.0.10",
                   "private_net_pool_end": "10.61.0.50"},
        {"flavor": BIGGER_FLAVOR}, updated=["server1", "server2"], check=resized("server1", "server2")),
    "servers_in_existing_neutron_net": Case(
        "hot/servers_in_existing_neutron_net.yaml",
        lambda p: {**image_and_flavor(p), "key_name": p.keypair, "public_net_id": _with_router(p),
                   "private_net_id": p.network.id, "private_subnet_id": p.subnet.id},
        {"flavor": BIGGER_FLAVOR}, updated=["server1", "server2"], check=resized("server1", "server2")),
    "resource_group_server_with_volumes": Case(
        "hot/resource_group/server_with_volumes.yaml",
        lambda p: {"image_id": IMAGE, "instance_type": FLAVOR, "key_name": p.keypair, "num_volumes": 2},
        # The members' own stacks are updated too, with nothing in them changed: Heat
        # updates a nested stack whenever its resource is (its StackResource always
        # needs an update), and its preview says so.
        {"num_volumes": 3}, updated=["group_of_volumes", "group_of_volumes/0", "group_of_volumes/1"],
        added=["group_of_volumes/2", "group_of_volumes/2/volume", "group_of_volumes/2/volume_attachment"],
        check=third_volume_attached),
}


def _with_router(project: Project) -> str:
    """The public network's id, once the project's network reaches it through a
    router (floating IPs need one): the template expects an existing network that does."""
    member = project.member
    public = member.network.find_network("public")
    router = member.network.create_router(name=f"{project.name}-router",
                                          external_gateway_info={"network_id": public.id})
    member.network.add_interface_to_router(router, subnet_id=project.subnet.id)
    return str(public.id)


def _remove_routers(project: Project) -> None:
    """The router _with_router made (its interface on the test's own subnet)."""
    member = project.member
    for router in member.network.routers(name=f"{project.name}-router"):
        member.network.remove_interface_from_router(router, subnet_id=project.subnet.id)
        member.network.delete_router(router)


@pytest.mark.parametrize("case", sorted(CASES))
def test_public_template_runs_natively_unchanged(case: str, heat_templates: Path, project: Project,
                                                 run_tasks: Any) -> None:
    # heat_templates first: without a checkout the test skips before a project is made.
    spec = CASES[case]
    template = heat_templates / spec.path
    stack = f"{case[:12].replace('_', '-')}-{uuid.uuid4().hex[:6]}"
    given = spec.parameters(project)
    project.stacks.append(stack)
    created = apply(project, run_tasks, stack, template, "created", given)
    assert created["stack"]["status"] == "CREATE_COMPLETE"
    changed = {**given, **spec.change}
    preview = apply(project, run_tasks, stack, template, "preview", changed, check_mode=True)
    assert sorted(preview["plan"]["updated"]) == spec.updated, preview["plan"]
    assert sorted(preview["plan"]["replaced"]) == spec.replaced, preview["plan"]
    assert sorted(preview["plan"]["added"]) == spec.added, preview["plan"]
    assert ids(preview) == ids(created)  # a preview changes nothing
    updated = apply(project, run_tasks, stack, template, "updated", changed)
    assert updated["stack"]["status"] == "UPDATE_COMPLETE"
    spec.check(project, created, updated)
    if "admin_pass" in given:
        assert ADMIN_PASS not in json.dumps(updated)
    run(project, run_tasks, "deleted", {"hotplay.stacks.stack": {
        "name": stack, "state": "absent", "cloud": project.name}})
    project.stacks.remove(stack)
    _remove_routers(project)  # servers_in_existing_neutron_net's, made by the test
    assert leftovers(project) == []


def test_the_tests_own_template_in_heats_shape_runs_natively(project: Project, run_tasks: Any) -> None:
    """servers_in_new_neutron_net's and hello_world's shape (a router interface,
    admin_pass, Heat's hidden spellings), always run: no checkout needed."""
    template = HERE / "templates" / "servers_on_a_new_network.yaml"
    stack = f"own-{uuid.uuid4().hex[:6]}"
    project.stacks.append(stack)
    given = {"key_name": project.keypair, "image": IMAGE, "flavor": FLAVOR, "public_net": "public",
             "admin_pass": ADMIN_PASS}
    created = apply(project, run_tasks, stack, template, "created", given)
    outputs = created["outputs"]
    web = project.member.compute.get_server(outputs["web_id"])
    assert web.status == "ACTIVE" and outputs["web_private_ip"] == "10.20.0.5"
    [floating] = project.member.network.ips(floating_ip_address=outputs["web_public_ip"])
    [port] = project.member.network.ports(device_id=web.id)
    assert floating.port_id == port.id
    preview = apply(project, run_tasks, stack, template, "preview", {**given, "flavor": BIGGER_FLAVOR},
                    check_mode=True)
    assert preview["plan"]["replaced"] == [] and preview["plan"]["updated"], preview["plan"]
    run(project, run_tasks, "deleted", {"hotplay.stacks.stack": {
        "name": stack, "state": "absent", "cloud": project.name}})
    project.stacks.remove(stack)
    assert leftovers(project) == []


@pytest.mark.parametrize(("path", "down"), [("hot/asg_of_servers.yaml", "scale_down_policy"),
                                            ("hot/asg_of_stacks.yaml", "scale_dn_policy")])
def test_an_autoscaling_group_scales_by_signal_rolls_and_is_deleted(
        path: str, down: str, heat_templates: Path, project: Project, run_tasks: Any) -> None:
    """hot/asg_of_servers.yaml (servers) and hot/asg_of_stacks.yaml (vm_with_cinder.yaml:
    a server with a volume): three members; the scale-up policy's signal adds a fourth,
    the scale-down policy's (cooldown 60) changes nothing so soon after; a flavor
    change rolls across the members, each server resized in place; delete."""
    template = heat_templates / path
    stack = f"asg-{uuid.uuid4().hex[:6]}"
    given = {**image_and_flavor(project), "key_name": project.keypair, "network": project.network.name}
    project.stacks.append(stack)
    created = apply(project, run_tasks, stack, template, "created", given)
    assert created["stack"]["status"] == "CREATE_COMPLETE"

    def servers() -> dict[str, str]:
        return {s.id: s.flavor["original_name"] for s in project.member.compute.servers()
                if s.status == "ACTIVE"}

    assert len(servers()) == 3
    signal = {"hotplay.stacks.stack_signal": {"name": stack, "resource": "scale_up_policy",
                                              "cloud": project.name}}
    grown = run(project, run_tasks, "grown", signal)
    assert grown["scaled"] == {"asg": {"from": 3, "to": 4}} and len(servers()) == 4
    held = run(project, run_tasks, "held", {"hotplay.stacks.stack_signal": {
        "name": stack, "resource": down, "cloud": project.name}})
    assert held["changed"] is False and "due to cooldown, cooldown 60" in held["msg"]
    before = servers()
    preview = apply(project, run_tasks, stack, template, "preview", {**given, "flavor": BIGGER_FLAVOR},
                    check_mode=True)
    # Back to desired_capacity (3): the three newest resized in place, the oldest deleted.
    plan = preview["plan"]
    members_updated = [p for p in plan["updated"] if p.count("/") == 1]
    members_deleted = [p for p in plan["deleted"] if p.count("/") == 1]
    assert "asg" in plan["updated"] and len(members_updated) == 3 and len(members_deleted) == 1, plan
    assert servers() == before
    rolled = apply(project, run_tasks, stack, template, "rolled", {**given, "flavor": BIGGER_FLAVOR})
    assert rolled["stack"]["status"] == "UPDATE_COMPLETE"
    # desired_capacity (3) wins over the signals, as in Heat; the oldest server went.
    after = servers()
    assert len(after) == 3 and set(after) < set(before) and set(after.values()) == {BIGGER_FLAVOR}
    run(project, run_tasks, "deleted", {"hotplay.stacks.stack": {"name": stack, "state": "absent",
                                                                 "cloud": project.name}})
    project.stacks.remove(stack)
    assert leftovers(project) == []


def test_native_waitcondition_is_released_by_its_servers_own_script(
        heat_templates: Path, project: Project, run_tasks: Any, conn: Any) -> None:
    """hot/native_waitcondition.yaml unchanged (Heat's default TOKEN_SIGNAL handle): its
    server's user_data, run by the test as cloud-init would run it (the fake virt
    driver runs none), signals six times through ``curl_cli``, a PUT to a Swift
    temporary URL; the wait completes with Heat's data (the duplicate id 5 counts
    once); a flavor change is previewed then made in place; the delete leaves
    nothing, in Swift either."""
    template = heat_templates / "hot/native_waitcondition.yaml"
    stack = f"wc-{uuid.uuid4().hex[:6]}"
    given = {**image_and_flavor(project), "key_name": project.keypair, "timeout": 300}
    project.stacks.append(stack)
    created: dict[str, Any] = {}
    applying = threading.Thread(target=lambda: created.update(
        apply(project, run_tasks, stack, template, "created", given)))
    applying.start()
    try:
        server = _active_server(conn, f"{stack}-instance1-")
        script = base64.b64decode(server.user_data).decode()
        ran = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=120, check=False)
        assert ran.returncode == 0 and ran.stdout.count(" 201 ") == 6, ran.stdout + ran.stderr
    finally:
        applying.join(timeout=600)
    assert created["stack"]["status"] == "CREATE_COMPLETE", created.get("msg")
    outputs = created["outputs"]
    assert json.loads(outputs["wc_data"]) == {"1": None, "2": None, "3": "data3", "4": "data4", "5": None}
    assert outputs["curl_cli"].startswith("curl -i -X PUT 'http")

    changed = {**given, "flavor": BIGGER_FLAVOR}
    preview = apply(project, run_tasks, stack, template, "preview", changed, check_mode=True)
    assert preview["plan"]["updated"] == ["instance1"] and preview["plan"]["replaced"] == [], preview["plan"]
    updated = apply(project, run_tasks, stack, template, "updated", changed)
    assert updated["stack"]["status"] == "UPDATE_COMPLETE"
    assert ids(updated)["instance1"] == ids(created)["instance1"]
    run(project, run_tasks, "deleted", {"hotplay.stacks.stack": {"name": stack, "state": "absent",
                                                                 "cloud": project.name}})
    project.stacks.remove(stack)
    assert leftovers(project) == []
    assert list(project.member.object_store.containers()) == []


def test_swift_containers_are_made_given_their_headers_and_deleted(
        heat_templates: Path, project: Project, run_tasks: Any) -> None:
    """hot/swift.yaml unchanged: two containers, one a website (public read, web
    index and error documents in its metadata); the same template again changes
    nothing; the delete removes both."""
    template = heat_templates / "hot/swift.yaml"
    stack = f"sw-{uuid.uuid4().hex[:6]}"
    project.stacks.append(stack)
    created = apply(project, run_tasks, stack, template, "created", {})
    assert created["stack"]["status"] == "CREATE_COMPLETE"
    made = ids(created)
    website = project.member.object_store.get_container_metadata(made["SwiftContainerWebsite"])
    assert website.read_ACL == ".r:*"
    assert website.metadata == {"web-index": "index.html", "web-error": "error.html"}
    assert created["outputs"]["WebsiteURL"].endswith(f"/{made['SwiftContainerWebsite']}")
    assert created["outputs"]["DomainName"] == "127.0.0.1"
    preview = apply(project, run_tasks, stack, template, "preview", {}, check_mode=True)
    assert preview["changed"] is False
    run(project, run_tasks, "deleted", {"hotplay.stacks.stack": {"name": stack, "state": "absent",
                                                                 "cloud": project.name}})
    project.stacks.remove(stack)
    assert list(project.member.object_store.containers()) == []


def _active_server(conn: Any, prefix: str, seconds: float = 300) -> Any:
    """The admin's view of the server whose name begins with ``prefix`` (its
    user_data among it) once it is ACTIVE."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = [s for s in conn.compute.servers(all_projects=True) if s.name.startswith(prefix)]
        if found and found[0].status == "ACTIVE":
            return conn.compute.get_server(found[0].id)
        time.sleep(1)
    raise AssertionError(f"no ACTIVE server {prefix}* in {seconds} s")
