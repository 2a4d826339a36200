# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The native OpenStack types adopted from Heat's abandon data (Heat's
``handle_adopt``: the physical id and resource data kept as they are, each id first
looked up as its type in the session's project), then updated, read and deleted from
what was adopted; and given back to Heat in Heat's shapes.  The cloud is faked as the native types' own unit tests fake it
(test_openstack_nova, test_openstack_cinder, test_openstack_native); on a real cloud,
with the real Heat: tests/cloud/test_adopt_native.py."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from test_adopt import leaf, stack
from test_openstack_cinder import VOLUME, FakeCinder, volume, volume_properties
from test_openstack_native import FakeCloud as FakeNeutron
from test_openstack_nova import FakeCloud as FakeNova

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import ResourceFailure
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations import adopt
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
    AdoptRefused,
    AdoptRequest,
    adopt_stack,
    unmanaged_types,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.export import heat_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import (
    ResourceState,
    known_types,
    resource_class,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack import neutron, nova
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.base import OpenStackResource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.session import CloudFailure
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import sealed

SERVER_ID = "50000000-0000-0000-0000-000000000001"
PROJECT = "0123456789abcdef0123456789abcdef"
OTHER_PROJECT = "fedcba9876543210fedcba9876543210"
# Heat keeps a server's internal ports as JSON text (server_network_mixin._data_update_ports).
HEAT_PORTS = json.dumps([{"id": "p-internal-1"}, {"id": "p-internal-2"}])
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\n"

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"}, "cidr": "10.0.0.0/24"}},
        "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
        "key": {"type": "OS::Nova::KeyPair", "properties": {"name": "web-key", "save_private_key": True}},
        "group": {"type": "OS::Nova::ServerGroup", "properties": {"policies": ["anti-affinity"]}},
        "server": {"type": "OS::Nova::Server", "properties": {
            "image": "cirros", "flavor": "m1.tiny", "key_name": {"get_resource": "key"},
            "networks": [{"port": {"get_resource": "port"}}, {"subnet": {"get_resource": "subnet"}}],
            "scheduler_hints": {"group": {"get_resource": "group"}}}},
        "data": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "attach": {"type": "OS::Cinder::VolumeAttachment", "properties": {
            "instance_uuid": {"get_resource": "server"}, "volume_id": {"get_resource": "data"}}},
    },
    "outputs": {"ids": {"value": {name: {"get_resource": name} for name in (
        "net", "subnet", "port", "key", "group", "server", "data", "attach")}},
        "private_key": {"value": {"get_attr": ["key", "private_key"]}}},
}
HEAT_DATA = {"server": {"internal_ports": HEAT_PORTS}, "data": {"volume_type": "lvmdriver-1"},
             "key": {"private_key": PRIVATE_KEY}, "port": {"port_security_enabled": True}}
IDS = {"net": "10000000-0000-4000-8000-000000000001", "subnet": "20000000-0000-4000-8000-000000000001",
       "port": "30000000-0000-4000-8000-000000000001", "key": "web-key",
       "group": "40000000-0000-4000-8000-000000000001", "server": SERVER_ID, "data": VOLUME,
       "attach": VOLUME}


class CloudOfHeatsStack:
    """What the cloud shows of the things Heat's stack has (each looked up by its id,
    as its type), in project ``owner``; every call recorded, any write refused."""

    def __init__(self, owner: str = PROJECT, ids: Mapping[str, str] | None = None) -> None:
        ids = {**IDS, **(ids or {})}
        self.project_id = PROJECT
        self.sent: list[tuple[str, str]] = []
        self.remembered: dict[tuple[str, ...], Any] = {}
        mine = {"project_id": owner}
        self.shown: dict[tuple[str, str], Any] = {
            ("compute", "/"): {"version": {"version": "2.79"}},
            ("block_storage", "/"): {"versions": [{"id": "v3.0", "version": "3.71"}]},
            ("network", f"/networks/{ids['net']}"): {"network": {"id": ids["net"], **mine}},
            ("network", f"/subnets/{ids['subnet']}"): {"subnet": {"id": ids["subnet"], **mine}},
            ("network", f"/ports/{ids['port']}"): {"port": {"id": ids["port"], **mine}},
            ("compute", f"/os-keypairs/{ids['key']}"): {"keypair": {"name": ids["key"]}},
            ("compute", f"/os-server-groups/{ids['group']}"): {"server_group": {"id": ids["group"], **mine}},
            ("compute", f"/servers/{ids['server']}"): {"server": {"id": ids["server"], "tenant_id": owner}},
            ("block_storage", f"/volumes/{ids['data']}"): {"volume": {"id": ids["data"]}},
            ("compute", f"/servers/{ids['server']}/os-volume_attachments/{ids['attach']}"):
                {"volumeAttachment": {"id": ids["attach"]}},
        }

    def request(self, service: str, method: str, path: str, body: Any = None, params: Any = None,
                microversion: str | None = None) -> Any:
        self.sent.append((method, path))
        if method != "GET":
            raise AssertionError(f"an adoption wrote to the cloud: {method} {path}")
        if (service, path) not in self.shown:
            raise CloudFailure("not found", 404)
        return self.shown[(service, path)]

    def remember(self, key: tuple[str, ...], compute: Any) -> Any:
        if key not in self.remembered:
            self.remembered[key] = compute()
        return self.remembered[key]


@pytest.fixture
def cloud(monkeypatch: pytest.MonkeyPatch) -> CloudOfHeatsStack:
    """The adoption's session with its cloud (operations.engine.cloud_session): this fake."""
    fake = CloudOfHeatsStack()

    @contextlib.contextmanager
    def session(name: str | None) -> Iterator[CloudOfHeatsStack]:
        yield fake

    monkeypatch.setattr(adopt, "cloud_session", session)
    return fake


def heat_stack() -> dict[str, Any]:
    """The abandon data Heat writes for TEMPLATE's stack."""
    resources = {name: leaf(name, TEMPLATE["resources"][name]["type"], ident, HEAT_DATA.get(name))
                 for name, ident in IDS.items()}
    return stack("web", "aaaaaaaa-0000-4000-8000-000000000001", resources, TEMPLATE)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("HOTPLAY_STORE_KEY", "correct horse battery")  # the private key is sealed
    return open_store(f"sqlite:///{tmp_path / 's.db'}")


def adopted(store: Any, **options: Any) -> dict[str, Any]:
    request = AdoptRequest("web", read_abandon(heat_stack(), "web.json"), "web.json", **options)
    return dict(adopt_stack(store, request, "test").as_dict())


def test_every_native_type_is_adoptable() -> None:
    native = [t for t in known_types() if issubclass(resource_class(t) or object, OpenStackResource)]
    assert len(native) >= 15 and all(resource_class(t).adoptable for t in native)  # type: ignore[union-attr]
    assert unmanaged_types(read_abandon(heat_stack(), "web.json")) == []


def test_a_native_stack_is_adopted_with_heats_ids_and_data_each_looked_up_as_its_type(
        store: Any, cloud: CloudOfHeatsStack, tmp_path: Path) -> None:
    result = adopted(store)
    assert result["stack_status"] == "ADOPT_COMPLETE", result
    assert {r["name"]: r["physical_id"] for r in result["resources"]} == IDS
    assert result["outputs"]["ids"] == IDS
    states = {r.state.name: r.state for r in store.resources(result["stack_id"])}
    # Kept as the types keep it: the internal ports as ids (their delete finds them).
    assert states["server"].data == {"internal_ports": ["p-internal-1", "p-internal-2"]}
    assert states["data"].data == {"volume_type": "lvmdriver-1"}
    assert states["port"].data == {"port_security_enabled": True}
    assert states["net"].properties["name"] is None  # Heat's name is the cloud's: read when needed
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))
    assert b"b3BlbnNzaC1rZXktdjEAAAA" not in stored  # sealed in the store
    looked_up = {path for _method, path in cloud.sent}
    assert {f"/networks/{IDS['net']}", f"/servers/{SERVER_ID}", f"/volumes/{VOLUME}",
            f"/os-keypairs/{IDS['key']}"} <= looked_up


@pytest.mark.parametrize(("resource", "bad_id", "expected"), [
    # A path instead of an id: it would reach another kind of thing through the URL.
    ("net", "../security-groups/10000000-0000-4000-8000-000000000009",
     r"Heat's physical id '\.\./security-groups/10000000-0000-4000-8000-000000000009' of "
     r"OS::Neutron::Net net is not the shape of such an id: expected a UUID"),
    ("server", "50000000-0000-0000-0000-000000000001/action",
     r"of OS::Nova::Server server is not the shape of such an id: expected a UUID"),
    ("key", "web-key/../../servers", r"of OS::Nova::KeyPair key is not the shape of such an id"),
    # The right shape, but nothing of that type (another type's id, or none at all).
    ("net", IDS["subnet"], r"Heat's physical id '20000000-0000-4000-8000-000000000001' of "
                           r"OS::Neutron::Net net names nothing of that type that the cloud shows"),
    ("data", "60000000-0000-4000-8000-000000000001",
     r"of OS::Cinder::Volume data names nothing of that type"),
])
def test_an_id_of_another_shape_or_of_nothing_refuses_the_adoption_and_writes_nothing(
        store: Any, cloud: CloudOfHeatsStack, resource: str, bad_id: str, expected: str) -> None:
    data = heat_stack()
    data["resources"][resource]["resource_id"] = bad_id
    with pytest.raises(AdoptRefused, match=expected):
        adopt_stack(store, AdoptRequest("web", read_abandon(data, "web.json"), "web.json"), "test")
    assert store.list_stacks() == []
    assert not any(".." in path or "/action" in path for _method, path in cloud.sent)


def test_another_projects_resource_is_adopted_only_when_the_task_allows_it(
        store: Any, cloud: CloudOfHeatsStack) -> None:
    cloud.shown[("network", f"/networks/{IDS['net']}")] = {
        "network": {"id": IDS["net"], "project_id": OTHER_PROJECT}}
    with pytest.raises(AdoptRefused, match=(
            f"Forbidden: resources.net: Heat's physical id '{IDS['net']}' of OS::Neutron::Net net is "
            f"project {OTHER_PROJECT}'s, not this session's project {PROJECT}: give other_projects")):
        adopted(store)
    assert store.list_stacks() == []
    result = adopted(store, other_projects=True)
    assert result["stack_status"] == "ADOPT_COMPLETE"


def test_an_attachment_nova_does_not_have_refuses_the_adoption(store: Any, cloud: CloudOfHeatsStack) -> None:
    del cloud.shown[("compute", f"/servers/{SERVER_ID}/os-volume_attachments/{VOLUME}")]
    with pytest.raises(AdoptRefused, match="of OS::Cinder::VolumeAttachment attach names nothing of that type"):
        adopted(store)


def test_check_mode_adopts_into_nothing(store: Any, cloud: CloudOfHeatsStack) -> None:
    result = adopted(store, check_mode=True)
    assert {r["name"]: r["physical_id"] for r in result["resources"]} == IDS
    assert store.list_stacks() == []


def test_the_export_gives_heat_its_ids_and_data_back(store: Any, cloud: CloudOfHeatsStack) -> None:
    adopted(store)
    exported = heat_abandon(sealed(store), "web")  # as stack_info opens it: secrets in the clear
    resources = exported["resources"]
    assert {name: entry["resource_id"] for name, entry in resources.items()} == IDS
    assert {name: entry["resource_data"] for name, entry in resources.items() if entry["resource_data"]} == \
        HEAT_DATA
    assert resources["server"]["type"] == "OS::Nova::Server"


# -- the types, from what was adopted ---------------------------------------------------------------

class Secrets:
    def __init__(self) -> None:
        self.kept: list[Any] = []

    def add(self, value: Any) -> None:
        self.kept.append(value)


def runtime(cloud: Any) -> Any:
    return SimpleNamespace(cloud=cloud, secrets=Secrets(), stack_name="web", sleep=lambda seconds: None,
                           physical_name=lambda name: f"web-{name}-abcdefghijkl",
                           claim_physical_id=lambda name, ident: None, adopts_other_projects=False)


def heat_resource(name: str, data: dict[str, Any]) -> Any:
    return read_abandon(stack("web", "aaaaaaaa-0000-4000-8000-000000000001",
                              {name: leaf(name, TEMPLATE["resources"][name]["type"], IDS[name], data)},
                              {"heat_template_version": "2018-08-31", "resources": {}}),
                        "web.json").resources[name]


class NovaThatDeletes(FakeNova):
    """The Nova fake of test_openstack_nova, which also deletes a server."""

    def request(self, service: str, method: str, path: str, body: Any = None, params: Any = None,
                microversion: str | None = None) -> Any:
        if method == "DELETE" and path.startswith("/servers/"):
            self.sent.append((method, path, body))
            self.servers.pop(path.split("/")[2], None)
            return None
        return super().request(service, method, path, body, params, microversion)


def test_an_adopted_server_deletes_the_internal_ports_heat_made_for_it() -> None:
    cloud = NovaThatDeletes()
    cloud.servers[SERVER_ID] = {"id": SERVER_ID, "name": "web-server-x7yq", "status": "ACTIVE"}
    server = nova.Server("server", runtime(cloud))
    outcome = server.handle_adopt({}, heat_resource("server", {"internal_ports": HEAT_PORTS}))
    assert (outcome.physical_id, outcome.data) == (SERVER_ID, {"internal_ports": ["p-internal-1", "p-internal-2"]})
    assert cloud.writes() == [] and ("GET", f"/servers/{SERVER_ID}", None) in cloud.sent  # looked up only
    server.handle_delete(ResourceState("server", "OS::Nova::Server", "ADOPT", physical_id=SERVER_ID,
                                       data=outcome.data))
    assert cloud.writes() == [("DELETE", f"/servers/{SERVER_ID}", None),
                              ("DELETE", "/ports/p-internal-1", None), ("DELETE", "/ports/p-internal-2", None)]


def test_an_adopted_server_keeps_heats_name_when_its_metadata_changes() -> None:
    cloud = FakeNova()
    cloud.servers[SERVER_ID] = {"id": SERVER_ID, "name": "web-server-x7yq", "status": "ACTIVE",
                                "metadata": {"role": "app"}}
    server = nova.Server("server", runtime(cloud))
    old = {"image": "cirros", "flavor": "m1.tiny", "name": None, "metadata": {"role": "app"}}
    state = ResourceState("server", "OS::Nova::Server", "ADOPT", physical_id=SERVER_ID, properties=old)
    outcome = server.handle_update(state, {**old, "metadata": {"role": "db"}})
    # Only the metadata changed: one PUT of all of it, the name left as Heat gave it.
    assert cloud.writes() == [("PUT", f"/servers/{SERVER_ID}/metadata", {"metadata": {"role": "db"}})]
    assert server.attribute(replace_data(state, outcome.data), "name") == "web-server-x7yq"


def replace_data(state: ResourceState, data: Any) -> ResourceState:
    return ResourceState(state.name, state.type, "UPDATE", physical_id=state.physical_id,
                         properties=state.properties, data=dict(data))


def test_bad_internal_ports_in_heats_data_fail_the_adoption_with_what_they_were() -> None:
    cloud = FakeNova()
    cloud.servers[SERVER_ID] = {"id": SERVER_ID, "name": "web-server-x7yq", "status": "ACTIVE"}
    server = nova.Server("server", runtime(cloud))
    with pytest.raises(ResourceFailure, match=r"Heat's resource data internal_ports: not a list of ports: "):
        server.handle_adopt({}, heat_resource("server", {"internal_ports": '{"id": "p"}'}))


def test_an_adopted_key_pairs_private_key_is_a_secret_before_it_is_recorded() -> None:
    kept = runtime(CloudOfHeatsStack())
    outcome = nova.KeyPair("key", kept).handle_adopt({}, heat_resource("key", {"private_key": PRIVATE_KEY}))
    assert outcome.data == {"private_key": PRIVATE_KEY} and kept.secrets.kept == [PRIVATE_KEY]


def test_an_adopted_volume_is_read_live_extended_and_keeps_heats_name() -> None:
    cloud = FakeCinder(volumes={VOLUME: {"id": VOLUME, "status": "available", "size": 1, "attachments": [],
                                         "name": "web-data-x7yqz2kk3c4d", "description": None}})
    data = volume(cloud)
    outcome = data.handle_adopt({}, heat_resource("data", {"volume_type": "lvmdriver-1"}))
    state = ResourceState("data", "OS::Cinder::Volume", "ADOPT", physical_id=VOLUME,
                          properties=volume_properties(size=1), data=dict(outcome.data))
    assert data.attribute(state, "size") == "1"  # no cache from Heat: read from Cinder
    data.handle_update(state, volume_properties(size=2, description="grown"))
    assert cloud.writes() == [
        ("PUT", f"/volumes/{VOLUME}", {"volume": {"name": "web-data-x7yqz2kk3c4d", "description": "grown"}}),
        ("POST", f"/volumes/{VOLUME}/action", {"os-extend": {"new_size": 2}})]


def test_an_adopted_network_reads_its_attributes_and_name_from_neutron() -> None:
    net_id = IDS["net"]
    cloud = FakeNeutron({net_id: {"id": net_id, "name": "web-net-x7yqz2kk3c4d", "status": "ACTIVE",
                                  "project_id": "project"}})
    net = neutron.Net("net", runtime(cloud))
    outcome = net.handle_adopt({}, heat_resource("net", {}))
    state = ResourceState("net", "OS::Neutron::Net", "ADOPT", physical_id=net_id, data=dict(outcome.data))
    assert net.attribute(state, "name") == "web-net-x7yqz2kk3c4d"
