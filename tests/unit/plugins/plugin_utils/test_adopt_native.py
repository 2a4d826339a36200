# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The native OpenStack types adopted from Heat's abandon data (Heat's
``handle_adopt``: the physical id and resource data kept as they are, the cloud not
asked), then updated, read and deleted from what was adopted; and given back to Heat
in Heat's shapes.  The cloud is faked as the native types' own unit tests fake it
(test_openstack_nova, test_openstack_cinder, test_openstack_native); on a real cloud,
with the real Heat: tests/cloud/test_adopt_native.py."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from test_adopt import leaf, stack
from test_openstack_cinder import VOLUME, FakeCinder, volume, volume_properties
from test_openstack_native import FakeCloud as FakeNeutron
from test_openstack_nova import FakeCloud as FakeNova

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import ResourceFailure
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
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
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import sealed

SERVER_ID = "50000000-0000-0000-0000-000000000001"
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
IDS = {"net": "n-1", "subnet": "s-1", "port": "p-1", "key": "web-key", "group": "g-1",
       "server": SERVER_ID, "data": VOLUME, "attach": VOLUME}


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


def test_a_native_stack_is_adopted_with_heats_ids_and_data_asking_the_cloud_nothing(
        store: Any, tmp_path: Path) -> None:
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


def test_check_mode_adopts_into_nothing(store: Any) -> None:
    result = adopted(store, check_mode=True)
    assert {r["name"]: r["physical_id"] for r in result["resources"]} == IDS
    assert store.list_stacks() == []


def test_the_export_gives_heat_its_ids_and_data_back(store: Any) -> None:
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
                           claim_physical_id=lambda name, ident: None)


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
    assert cloud.sent == []  # Heat's adopt asks the cloud nothing
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
    server = nova.Server("server", runtime(FakeNova()))
    with pytest.raises(ResourceFailure, match=r"Heat's resource data internal_ports: not a list of ports: "):
        server.handle_adopt({}, heat_resource("server", {"internal_ports": '{"id": "p"}'}))


def test_an_adopted_key_pairs_private_key_is_a_secret_before_it_is_recorded() -> None:
    kept = runtime(FakeNova())
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
    cloud = FakeNeutron({"n-1": {"id": "n-1", "name": "web-net-x7yqz2kk3c4d", "status": "ACTIVE"}})
    net = neutron.Net("net", runtime(cloud))
    outcome = net.handle_adopt({}, heat_resource("net", {}))
    state = ResourceState("net", "OS::Neutron::Net", "ADOPT", physical_id="n-1", data=dict(outcome.data))
    assert net.attribute(state, "name") == "web-net-x7yqz2kk3c4d"
