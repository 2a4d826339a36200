# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure parts of the native Nova types (resources/openstack/nova.py): Heat 27's
schemas and hidden spellings, Heat's validation words, when a change replaces a
server, the create request (microversion, networks, user_data, metadata), the
one metadata call an update makes, status checks with Heat's messages, the
custom constraints.  What they do on a real cloud: tests/cloud/test_native_nova.py."""

from __future__ import annotations

import base64
import email
import re
from collections.abc import Mapping
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import ResourceFailure, StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.environment import parse_environment
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.loader import (
    TemplateSource,
    load_template_yaml,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.definition import (
    StackDefinition,
    StackIdentity,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import (
    MASK,
    ResourceState,
    resource_class,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack import nova
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.base import StoredResource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.poller import Poller
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.session import (
    CloudFailure,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.properties import (
    validate_properties,
)

FLAVOR_ID = "f0000000-0000-0000-0000-000000000001"
IMAGE_ID = "10000000-0000-0000-0000-000000000001"
NET_ID = "20000000-0000-0000-0000-000000000001"
PORT_ID = "30000000-0000-0000-0000-000000000001"


# -- schemas and hidden spellings ------------------------------------------------------------

def test_a_server_has_heats_update_allowed_properties_and_defaults() -> None:
    cls = resource_class("OS::Nova::Server")
    assert cls is nova.Server
    allowed = {name for name, prop in cls.properties_schema.items() if prop.update_allowed}
    # Heat 27's server.py.
    assert allowed == {"name", "image", "flavor", "flavor_update_policy", "image_update_policy",
                       "networks", "metadata", "software_config_transport",
                       "user_data_update_policy", "user_data", "admin_pass", "tags",
                       "deployment_swift_data"}
    checked = server_properties()
    assert (checked["flavor_update_policy"], checked["image_update_policy"],
            checked["user_data_format"], checked["user_data_update_policy"]) == (
        "RESIZE", "REBUILD", "HEAT_CFNTOOLS", "REPLACE")
    assert set(cls.attributes_schema) == {"name", "addresses", "networks", "first_address",
                                          "instance_name", "accessIPv4", "accessIPv6",
                                          "console_urls", "tags", "os_collect_config"}


def definition(template: str) -> StackDefinition:
    data = load_template_yaml(template, "t.yaml")
    return StackDefinition(TemplateSource("t.yaml", data, {}), parse_environment({}, "env.yaml"), {},
                           StackIdentity("s", "s-id"))


def test_a_networks_entrys_hidden_uuid_becomes_network() -> None:
    made = definition("""
heat_template_version: 2018-08-31
resources:
  server:
    type: OS::Nova::Server
    properties: {flavor: m1.tiny, image: cirros, networks: [{uuid: private}]}
""")
    known = made.resources["server"].known_properties
    assert known is not None and known["networks"][0]["network"] == "private"


def test_a_server_with_external_id_needs_no_flavor_as_in_heat() -> None:
    # Heat's validate_external: the properties of an existing server are not checked.
    made = definition("""
heat_template_version: 2018-08-31
resources:
  server:
    type: OS::Nova::Server
    external_id: 40000000-0000-0000-0000-000000000001
""")
    assert made.resources["server"].external_id is not None


def test_a_mappings_hidden_image_id_becomes_image_and_both_fail() -> None:
    moved = nova.translated_server_properties({"block_device_mapping_v2": [{"image_id": "cirros"}]})
    assert moved["block_device_mapping_v2"][0]["image"] == "cirros"
    with pytest.raises(StackValidationFailed, match="block_device_mapping_v2.image, "
                                                    "block_device_mapping_v2.image_id"):
        nova.translated_server_properties({"block_device_mapping_v2": [{"image_id": "a", "image": "b"}]})


# -- Heat's validation -----------------------------------------------------------------------

def server_properties(**values: Any) -> dict[str, Any]:
    return validate_properties(nova.Server, {"flavor": "m1.tiny", "image": "cirros", **values},
                               "resources.server.properties")


@pytest.mark.parametrize("values, message", [
    ({"image": None}, "Neither image nor bootable volume is specified for instance server"),
    ({"networks": [{"fixed_ip": "10.0.0.5"}]},
     'One of the properties "network", "port", "allocate_network" or "subnet" should be set for the '
     'specified network of server "server".'),
    ({"networks": [{"port": "p", "fixed_ip": "10.0.0.5"}]},
     "Cannot define the following properties at the same time: networks/fixed_ip, networks/port."),
    ({"networks": [{"allocate_network": "auto", "network": "n"}]},
     'Can not specify "allocate_network" with other keys of networks at the same time.'),
    ({"networks": [{"allocate_network": "auto"}, {"network": "n"}]},
     'Property "allocate_network" can not be specified if multiple network interfaces set for server.'),
    ({"networks": [{"port": "p"}], "security_groups": ["web"]},
     "Cannot define the following properties at the same time: security_groups, networks/port."),
    ({"networks": [{"network": "n", "floating_ip": "f"}]},
     'Property "floating_ip" is not supported if only "network" is specified, because the '
     "corresponding port can not be retrieved."),
    ({"block_device_mapping": [{"device_name": "vda", "volume_id": "v"}],
      "block_device_mapping_v2": [{"volume_id": "v"}]},
     "Cannot define the following properties at the same time: block_device_mapping, "
     "block_device_mapping_v2."),
])
def test_a_server_is_validated_as_heat_validates_it(values: dict[str, Any], message: str) -> None:
    with pytest.raises(StackValidationFailed) as raised:
        nova.Server("server", FakeRuntime(FakeCloud())).validate(server_properties(**values))
    assert raised.value.message == message and raised.value.path == "resources.server"


def test_every_user_data_format_is_valid() -> None:
    server = nova.Server("server", FakeRuntime(FakeCloud()))
    for data_format in ("RAW", "HEAT_CFNTOOLS", "SOFTWARE_CONFIG"):
        server.validate(server_properties(user_data="#!/bin/sh", user_data_format=data_format))


def test_the_default_format_boots_the_server_with_its_user_data_run_once() -> None:
    """Heat's default, HEAT_CFNTOOLS (hello_world leaves it so): the server gets a
    multipart whose script part cloud-init runs at first boot."""
    cloud = FakeCloud()
    nova.Server("server", FakeRuntime(cloud)).handle_create(server_properties(
        flavor="m1.tiny", image="cirros", user_data="#!/bin/sh\necho hi\n"))
    (request, _microversion), = cloud.creates
    message = email.message_from_string(base64.b64decode(request["server"]["user_data"]).decode())
    [part] = message.get_payload()
    assert (part.get_content_type(), part.get_payload()) == ("text/x-shellscript", "#!/bin/sh\necho hi\n")


# -- update or replace ----------------------------------------------------------------------------

@pytest.mark.parametrize("change, replaced", [
    ({"name": "web"}, False),
    ({"metadata": {"role": "db"}}, False),
    ({"admin_pass": "new"}, False),
    ({"flavor": "m1.small"}, False),  # RESIZE, Heat's default
    ({"flavor": "m1.small", "flavor_update_policy": "REPLACE"}, True),
    ({"image": "other"}, False),  # REBUILD, Heat's default
    ({"image": "other", "image_update_policy": "REPLACE"}, True),
    ({"user_data": "#!/bin/sh", "user_data_format": "RAW"}, True),  # user_data_format itself
    ({"key_name": "other"}, True),
    ({"networks": [{"network": "other"}]}, False),  # interfaces detached and attached in place
])
def test_a_change_replaces_a_server_where_heat_replaces_it(change: dict[str, Any], replaced: bool) -> None:
    server = nova.Server("server", FakeRuntime(FakeCloud()))
    old = server_properties(networks=[{"network": "private"}])
    new = server_properties(**{"networks": [{"network": "private"}], **change})
    assert (server.replacement_reason(old, new) is not None) is replaced


def test_a_user_data_change_replaces_only_with_the_replace_policy() -> None:
    def reason(policy: str) -> str | None:
        old = server_properties(user_data_format="RAW", user_data="a", user_data_update_policy=policy)
        new = server_properties(user_data_format="RAW", user_data="b", user_data_update_policy=policy)
        return nova.Server("server", FakeRuntime(FakeCloud())).replacement_reason(old, new)

    assert reason("REPLACE") is not None and reason("IGNORE") is None and reason("REBUILD") is None


def test_metadata_is_changed_with_one_call_sending_only_what_changed() -> None:
    live = {"role": "web", "tier": "1"}
    assert nova.metadata_change(live, {"role": "db", "tier": "1"}) == ("POST", {"role": "db"})
    assert nova.metadata_change(live, {"role": "web", "tier": "1", "new": "x"}) == ("POST", {"new": "x"})
    # A key taken out: the whole set, in one PUT (Heat deletes each key, then posts all).
    assert nova.metadata_change(live, {"tier": "1"}) == ("PUT", {"tier": "1"})
    assert nova.metadata_change(live, dict(live)) is None


def test_metadata_values_that_are_not_text_are_sent_as_json() -> None:
    assert nova.serialized_metadata({"a": "x", "n": 2, "m": {"k": [1]}}) == {
        "a": "x", "n": "2", "m": '{"k": [1]}'}


def test_an_update_of_metadata_and_name_is_one_call_each() -> None:
    cloud = FakeCloud()
    cloud.servers["s1"] = {"id": "s1", "name": "old", "status": "ACTIVE", "metadata": {"role": "web"}}
    old = server_properties(name="old", metadata={"role": "web"}, networks=[{"network": NET_ID}])
    new = server_properties(name="new", metadata={"role": "db"}, networks=[{"network": NET_ID}])
    state = ResourceState("server", "OS::Nova::Server", "CREATE", physical_id="s1", properties=old)
    nova.Server("server", FakeRuntime(cloud)).handle_update(state, new)
    assert cloud.writes() == [("POST", "/servers/s1/metadata", {"metadata": {"role": "db"}}),
                              ("PUT", "/servers/s1", {"server": {"name": "new"}})]


def test_an_update_of_metadata_alone_is_one_put_and_no_read() -> None:
    """Only the metadata changed: the whole of it in one PUT (Heat's end state:
    keys the template dropped, or added out of band, are gone), the server unread."""
    cloud = FakeCloud()
    cloud.servers["s1"] = {"id": "s1", "name": "st-server-abcdefghijkl", "status": "ACTIVE",
                           "metadata": {"role": "web", "added": "by hand"}}
    old = server_properties(metadata={"role": "web", "tier": 1}, networks=[{"network": NET_ID}])
    new = server_properties(metadata={"role": "db"}, networks=[{"network": NET_ID}])
    state = ResourceState("server", "OS::Nova::Server", "CREATE", physical_id="s1", properties=old,
                          data={"attributes": {"name": "st-server-abcdefghijkl"}})
    outcome = nova.Server("server", FakeRuntime(cloud)).handle_update(state, new)
    sent = [call for call in cloud.sent if call[1] != "/"]  # "/": the run's microversion, asked once
    assert sent == [("PUT", "/servers/s1/metadata", {"metadata": {"role": "db"}})]
    assert outcome.physical_id == "s1" and outcome.data == state.data


def test_a_metadata_update_of_a_server_that_is_gone_fails_with_heats_words() -> None:
    class GoneCloud(FakeCloud):
        def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                    params: Any = None, microversion: str | None = None) -> Any:
            if path.endswith("/metadata"):
                raise CloudFailure("Instance s1 could not be found.", 404)
            return super().request(service, method, path, body, params, microversion)

    old = server_properties(metadata={"role": "web"}, networks=[{"network": NET_ID}])
    new = server_properties(metadata={"role": "db"}, networks=[{"network": NET_ID}])
    state = ResourceState("server", "OS::Nova::Server", "CREATE", physical_id="s1", properties=old)
    with pytest.raises(ResourceFailure, match=r"The Server \(server\) could not be found."):
        nova.Server("server", FakeRuntime(GoneCloud())).handle_update(state, new)


def test_the_shared_poll_lists_servers_in_pages_of_fifty() -> None:
    """Nova asks Neutron for a page's security groups by device id in one query:
    pages of 50 keep that query short (pages of 1000 outgrew the test cloud's
    front end at ~90 servers, and the poll answered 500)."""
    pages = {None: [{"id": f"s{i}"} for i in range(50)], "s49": [{"id": "s50"}]}
    asked: list[Any] = []

    class ListingCloud(FakeCloud):
        def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                    params: Any = None, microversion: str | None = None) -> Any:
            if path == "/servers/detail":
                asked.append(dict(params))
                return {"servers": pages[params.get("marker")]}
            return super().request(service, method, path, body, params, microversion)

    server = nova.Server("server", FakeRuntime(ListingCloud()))
    found = server._list(["s3", "s50"])  # pylint: disable=protected-access
    assert [item["id"] for item in found] == ["s3", "s50"]
    assert asked == [{"limit": 50}, {"limit": 50, "marker": "s49"}]


def test_a_server_the_list_left_out_is_shown_before_it_counts_as_gone() -> None:
    """100 servers built at once: Nova's pages left out servers that were ACTIVE,
    and the poll took them for deleted.  Each one missing is shown alone."""
    listed = [{"id": f"s{i}", "status": "BUILD"} for i in range(10)]
    shown: list[str] = []

    class ForgetfulCloud(FakeCloud):
        def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                    params: Any = None, microversion: str | None = None) -> Any:
            if path == "/servers/detail":
                return {"servers": listed}
            if method == "GET" and path.startswith("/servers/"):
                ident = path.rsplit("/", 1)[1]
                shown.append(ident)
                if ident == "gone":
                    raise CloudFailure("Instance gone could not be found.", 404)
                return {"server": {"id": ident, "status": "ACTIVE"}}
            return super().request(service, method, path, body, params, microversion)

    server = nova.Server("server", FakeRuntime(ForgetfulCloud()))
    found = server._list(["s3", "left-out", "gone"])  # pylint: disable=protected-access
    assert {item["id"]: item["status"] for item in found} == {"s3": "BUILD", "left-out": "ACTIVE"}
    assert shown == ["gone", "left-out"]  # only the two the list did not show


# -- networks in place (Heat's ServerNetworkMixin) ------------------------------------------------

SUBNET_ID = "40000000-0000-0000-0000-000000000001"
OTHER_NET = "20000000-0000-0000-0000-000000000002"
OTHER_PORT = "30000000-0000-0000-0000-000000000002"


def networked(*interfaces: tuple[str, str, str]) -> InterfacesCloud:
    """A server s1 with these interfaces (port, network, address)."""
    cloud = InterfacesCloud()
    cloud.servers["s1"] = {"id": "s1", "name": "server", "status": "ACTIVE", "metadata": {}, "addresses": {}}
    for port, network, address in interfaces:
        cloud.plug(port, network, address)
    return cloud


def update_networks(cloud: InterfacesCloud, old: list[dict[str, Any]], new: list[dict[str, Any]],
                    internal: list[str] | None = None, **changes: Any) -> Any:
    state = ResourceState("server", "OS::Nova::Server", "CREATE", physical_id="s1",
                          properties=server_properties(name="server", networks=old),
                          data={"internal_ports": internal or []})
    return nova.Server("server", FakeRuntime(cloud)).handle_update(
        state, server_properties(name="server", networks=new, **changes))


def test_a_network_added_is_attached_and_the_kept_interface_left_alone() -> None:
    cloud = networked((PORT_ID, NET_ID, "10.0.0.5"))
    outcome = update_networks(cloud, [{"port": PORT_ID}],
                              [{"port": PORT_ID}, {"network": OTHER_NET, "fixed_ip": "10.1.0.7"}])
    assert cloud.writes() == [("POST", "/servers/s1/os-interface", {"interfaceAttachment": {
        "net_id": OTHER_NET, "fixed_ips": [{"ip_address": "10.1.0.7"}]}})]
    # Waited until the server's addresses showed the new interface.
    assert "10.1.0.7" in str(cloud.servers["s1"]["addresses"])
    assert outcome.physical_id == "s1" and outcome.data["internal_ports"] == []


def test_a_network_entry_named_by_name_or_by_id_is_the_same_interface() -> None:
    cloud = networked(("nova-made", NET_ID, "10.0.0.5"))
    update_networks(cloud, [{"network": "private"}], [{"network": NET_ID}])
    assert cloud.writes() == []


def test_a_port_taken_out_is_detached_before_a_new_one_is_attached() -> None:
    cloud = networked((PORT_ID, NET_ID, "10.0.0.5"))
    update_networks(cloud, [{"port": PORT_ID}], [{"port": OTHER_PORT}])
    assert [call[:2] for call in cloud.writes()] == [
        ("DELETE", f"/servers/s1/os-interface/{PORT_ID}"), ("POST", "/servers/s1/os-interface")]
    assert [i["port_id"] for i in cloud.interfaces] == [OTHER_PORT]


def test_the_same_port_with_another_floating_ip_is_detached_and_attached_again_as_in_heat() -> None:
    cloud = networked((PORT_ID, NET_ID, "10.0.0.5"))
    update_networks(cloud, [{"port": PORT_ID, "floating_ip": "fip-1"}], [{"port": PORT_ID, "floating_ip": "fip-2"}])
    assert cloud.writes() == [
        ("PUT", "/floatingips/fip-1", {"floatingip": {"port_id": None}}),
        ("PUT", "/floatingips/fip-2", {"floatingip": {"port_id": PORT_ID}}),
        ("DELETE", f"/servers/s1/os-interface/{PORT_ID}", None),
        ("POST", "/servers/s1/os-interface", {"interfaceAttachment": {"port_id": PORT_ID}})]


def test_a_subnet_entry_replaced_makes_a_port_and_deletes_the_old_one_after_its_detach() -> None:
    cloud = networked(("made-old", NET_ID, "10.0.0.5"))
    outcome = update_networks(cloud, [{"subnet": SUBNET_ID}], [{"subnet": SUBNET_ID, "fixed_ip": "10.0.0.9"}],
                              internal=["made-old"])
    calls = [call[:2] for call in cloud.writes()]
    assert calls == [("POST", "/ports"), ("DELETE", "/servers/s1/os-interface/made-old"),
                     ("DELETE", "/ports/made-old"), ("POST", "/servers/s1/os-interface")]
    made = cloud.writes()[0][2]["port"]
    # Heat's name: the index among the entries attached.
    assert made == {"network_id": NET_ID, "name": "server-port-0",
                    "fixed_ips": [{"subnet_id": SUBNET_ID, "ip_address": "10.0.0.9"}]}
    assert outcome.data["internal_ports"] == ["made-1"]


def test_port_extra_properties_of_a_port_the_server_made_change_on_that_port() -> None:
    cloud = networked(("made-old", NET_ID, "10.0.0.5"))
    outcome = update_networks(cloud, [{"subnet": SUBNET_ID, "port_extra_properties": {"admin_state_up": True}}],
                              [{"subnet": SUBNET_ID, "port_extra_properties": {"admin_state_up": False}}],
                              internal=["made-old"])
    assert cloud.writes() == [("PUT", "/ports/made-old", {"port": {"admin_state_up": False}})]
    assert outcome.data["internal_ports"] == ["made-old"]


def test_no_networks_left_attaches_one_nova_chooses() -> None:
    cloud = networked((PORT_ID, NET_ID, "10.0.0.5"))
    update_networks(cloud, [{"port": PORT_ID}], [])
    assert [call for call in cloud.writes() if call[0] == "POST"] == [
        ("POST", "/servers/s1/os-interface", {"interfaceAttachment": {}})]


def test_a_failed_attach_deletes_the_ports_the_update_made() -> None:
    cloud = networked((PORT_ID, NET_ID, "10.0.0.5"))
    cloud.refuse_attach = True
    with pytest.raises(CloudFailure):
        update_networks(cloud, [{"port": PORT_ID}], [{"port": PORT_ID}, {"subnet": SUBNET_ID}])
    assert cloud.writes()[-1] == ("DELETE", "/ports/made-1", None)


def test_a_port_an_update_makes_is_recorded_as_neutron_answers_and_forgotten_when_it_fails() -> None:
    cloud = networked((PORT_ID, NET_ID, "10.0.0.5"))
    cloud.refuse_attach = True
    runtime = FakeRuntime(cloud)
    state = ResourceState("server", "OS::Nova::Server", "UPDATE", physical_id="s1",
                          properties=server_properties(name="server", networks=[{"port": PORT_ID}]),
                          data={"internal_ports": ["made-0"]})
    with pytest.raises(CloudFailure):
        nova.Server("server", runtime).handle_update(
            state, server_properties(name="server", networks=[{"port": PORT_ID}, {"subnet": SUBNET_ID}]))
    made = next(i for i, call in enumerate(cloud.sent) if call[:2] == ("POST", "/ports"))
    assert [note for note in runtime.noted if note[0] == "internal_ports"] == [
        ("internal_ports", ["made-0", "made-1"], made + 1), ("internal_ports", ["made-0"], len(cloud.sent))]
    [(_key, asked, when)] = [note for note in runtime.noted if note[0] == "creating_port"]
    assert (asked["name"], asked["network_id"], when) == ("server-port-0", NET_ID, made)  # before it was asked


def test_the_password_changes_before_the_interfaces_as_heat_queues_them() -> None:
    cloud = networked((PORT_ID, NET_ID, "10.0.0.5"))
    update_networks(cloud, [{"port": PORT_ID}], [{"port": OTHER_PORT}], admin_pass="new")
    assert cloud.writes()[0] == ("POST", "/servers/s1/action", {"changePassword": {"adminPass": "new"}})


def test_console_urls_say_why_there_is_none_in_heats_words() -> None:
    cloud = NoConsoles()
    cloud.servers["s1"] = {"id": "s1", "name": "web", "status": "ACTIVE"}
    state = ResourceState("server", "OS::Nova::Server", "CREATE", physical_id="s1")
    urls = nova.Server("server", FakeRuntime(cloud)).attribute(state, "console_urls")
    assert urls["novnc"] == "Cannot get console url: Unavailable console type novnc. (HTTP 400) (Request-ID: req-0a1b)"
    assert list(urls) == ["novnc", "xvpvnc", "spice-html5", "rdp-html5", "serial", "webmks"]


# -- the create request ---------------------------------------------------------------------------

def test_each_port_made_for_a_subnet_and_the_servers_name_are_recorded_before_nova_is_asked() -> None:
    cloud = InterfacesCloud()
    runtime = FakeRuntime(cloud)
    outcome = nova.Server("server", runtime).handle_create(server_properties(
        flavor="m1.tiny", image="cirros", networks=[{"subnet": SUBNET_ID}, {"subnet": SUBNET_ID}]))
    assert [(key, value) for key, value, _sent in runtime.noted if key != "creating_port"] == [
        ("creating_server_name", "st-server-abcdefghijkl"),
        ("internal_ports", ["made-1"]), ("internal_ports", ["made-1", "made-2"])]
    # Each port's name and network recorded before Neutron was asked for it.
    asked = [(value["name"], sent) for key, value, sent in runtime.noted if key == "creating_port"]
    made = [i for i, call in enumerate(cloud.sent) if call[:2] == ("POST", "/ports")]
    assert asked == [("server-port-0", made[0]), ("server-port-1", made[1])]
    # Each port recorded as Neutron answered, everything before Nova was asked.
    made = [i for i, call in enumerate(cloud.sent) if call[:2] == ("POST", "/ports")]
    assert [sent for key, _value, sent in runtime.noted if key == "internal_ports"] == [made[0] + 1, made[1] + 1]
    asked_nova = next(i for i, call in enumerate(cloud.sent) if call[:2] == ("POST", "/servers"))
    assert all(sent <= asked_nova for _key, _value, sent in runtime.noted)
    assert outcome.data["internal_ports"] == ["made-1", "made-2"]
    assert "creating_server_name" not in outcome.data and "creating_port" not in outcome.data


def test_a_server_named_by_the_user_records_no_name_to_find_it_by() -> None:
    runtime = FakeRuntime(FakeCloud())
    nova.Server("server", runtime).handle_create(server_properties(name="web", flavor="m1.tiny", image="cirros"))
    assert [key for key, _value, _sent in runtime.noted] == []


def test_a_server_whose_id_a_killed_run_never_heard_is_found_by_its_name_and_deleted_before_its_ports() -> None:
    cloud = CloudWithUnanswered()
    name = "st-server-abcdefghijkl"
    cloud.servers["orphan"] = {"id": "orphan", "name": name, "status": "BUILD"}
    cloud.servers["other"] = {"id": "other", "name": name + "x", "status": "ACTIVE"}  # another's
    left = ResourceState("server", "OS::Nova::Server", "CREATE", status="IN_PROGRESS",
                         data={"creating_server_name": name, "internal_ports": ["made-1"]})
    nova.Server("server", FakeRuntime(cloud)).handle_delete(left)
    assert cloud.writes() == [("DELETE", "/servers/orphan", None), ("DELETE", "/ports/made-1", None)]
    assert list(cloud.servers) == ["other"]


def test_a_create_sends_ids_found_by_name_and_keeps_no_password() -> None:
    cloud = FakeCloud()
    runtime = FakeRuntime(cloud)
    outcome = nova.Server("server", runtime).handle_create(server_properties(
        flavor="m1.tiny", image="cirros", user_data_format="RAW", user_data="#!/bin/sh\necho hi\n",
        metadata={"n": 1}, networks=[{"network": "private", "fixed_ip": "10.0.0.5"}, {"port": PORT_ID}],
        scheduler_hints={"group": "g"}, admin_pass="s3cret"))
    assert outcome.physical_id == "s1" and runtime.claimed == ["s1"]
    (request, microversion), = cloud.creates
    body = request["server"]
    assert (body["flavorRef"], body["imageRef"], body["name"]) == (FLAVOR_ID, IMAGE_ID, "st-server-abcdefghijkl")
    assert body["networks"] == [{"uuid": NET_ID, "fixed_ip": "10.0.0.5"}, {"port": PORT_ID}]
    assert base64.b64decode(body["user_data"]).decode() == "#!/bin/sh\necho hi\n"
    assert body["metadata"] == {"n": "1"} and body["adminPass"] == "s3cret"
    assert request["os:scheduler_hints"] == {"group": "g"} and microversion == "2.96"
    # Nova's answer holds the password it made: nothing of it is kept.
    assert "nova-made" not in repr(outcome.data)


def test_a_server_naming_no_network_is_created_at_236_as_an_operator_caps_heat() -> None:
    cloud = FakeCloud()
    nova.Server("server", FakeRuntime(cloud)).handle_create(server_properties())
    (request, microversion), = cloud.creates
    assert "networks" not in request["server"] and microversion == "2.36"


def test_the_microversion_is_the_clouds_newest_capped_at_novaclients() -> None:
    assert nova.nova_microversion(FakeCloud(newest="2.104")) == "2.96"
    assert nova.nova_microversion(FakeCloud(newest="2.60")) == "2.60"
    old = FakeCloud(newest="2.20")
    assert not nova.supports(old, "2.37")
    nova.Server("server", FakeRuntime(old)).handle_create(server_properties())
    assert old.creates[0][1] == "2.20"  # an old Nova chooses the networks itself anyway


def test_admin_pass_is_a_secret() -> None:
    server = nova.Server("server", FakeRuntime(FakeCloud()))
    assert server.masked_properties(server_properties(admin_pass="s3cret"))["admin_pass"] == MASK


# -- statuses, with Heat's messages ---------------------------------------------------------------

def test_a_server_in_error_fails_with_its_fault() -> None:
    assert nova._is_active({"status": "BUILD"}) is False
    assert nova._is_active({"status": "ACTIVE"}) is True
    with pytest.raises(CloudFailure) as raised:
        nova._is_active({"status": "ERROR", "fault": {"message": "No valid host was found.", "code": 500}})
    assert raised.value.heat_reason() == ('ResourceInError: Went to status ERROR due to "Message: No '
                                          'valid host was found., Code: 500"')


def test_a_resize_nova_gave_up_fails_instead_of_waiting_forever() -> None:
    assert nova._is_resized({"status": "ACTIVE", "OS-EXT-STS:task_state": "resize_prep"}, "m1.small") is False
    assert nova._is_resized({"status": "VERIFY_RESIZE"}, "m1.small") is True
    with pytest.raises(CloudFailure, match="Resizing to 'm1.small' failed, status 'ACTIVE'"):
        nova._is_resized({"status": "ACTIVE", "OS-EXT-STS:task_state": None}, "m1.small")


def test_first_address_and_networks_are_heats() -> None:
    server = {"addresses": {"b-net": [{"addr": "10.0.0.5"}], "a-net": [{"addr": "10.1.0.5"}]}}
    assert nova.networks_of(server) == {"a-net": ["10.1.0.5"], "b-net": ["10.0.0.5"]}
    assert nova.first_address(server) == "10.0.0.5"  # the last network by name
    assert nova.first_address({"addresses": {}}) == ""


# -- custom constraints ---------------------------------------------------------------------------

@pytest.mark.parametrize("constraint, value, message", [
    ("nova.flavor", "m1.nope", "No Flavor matching {'name': 'm1.nope'}. (HTTP 404)"),
    ("glance.image", "nope", "No images matching {'name': 'nope'}."),
    ("nova.keypair", "nope", "The Key (nope) could not be found."),
    ("nova.server", "nope", "The Server (nope) could not be found."),
])
def test_a_constraint_fails_with_heats_property_error(constraint: str, value: str, message: str) -> None:
    with pytest.raises(StackValidationFailed) as raised:
        nova.check_nova_constraint(FakeCloud(), constraint, value, "resources.s.properties.p")
    assert raised.value.message == (f"Property error: resources.s.properties.p: Error validating "
                                    f"value '{value}': {message}")


def test_constraints_find_by_name_or_id() -> None:
    cloud = FakeCloud()
    for constraint, value in (("nova.flavor", "m1.tiny"), ("nova.flavor", FLAVOR_ID),
                              ("glance.image", "cirros"), ("glance.image", IMAGE_ID),
                              ("nova.keypair", "mine"), ("nova.keypair", "")):
        nova.check_nova_constraint(cloud, constraint, value, "p")


# -- the fakes --------------------------------------------------------------------------------------

class FakeCloud:
    """Nova, Glance and Neutron answers for one flavor, image, network and key pair."""

    def __init__(self, newest: str = "2.104") -> None:
        self.newest = newest
        self.sent: list[tuple[str, str, Any]] = []
        self.creates: list[tuple[dict[str, Any], str | None]] = []
        self.servers: dict[str, dict[str, Any]] = {}
        self.remembered: dict[tuple[str, ...], Any] = {}
        self.pollers: dict[str, Poller] = {}

    def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                params: Any = None, microversion: str | None = None) -> Any:
        self.sent.append((method, path, body))
        if method == "POST" and path == "/servers":
            self.creates.append((dict(body or {}), microversion))
            self.servers["s1"] = {"id": "s1", "name": body["server"]["name"], "status": "ACTIVE"}
            return {"server": {"id": "s1", "adminPass": "nova-made"}}
        answer = self._answer(service, method, path, params)
        if answer is None and method == "GET":
            raise CloudFailure("not found", 404)
        return answer

    def _answer(self, service: str, method: str, path: str, params: Any) -> Any:
        name = (params or {}).get("name") if isinstance(params, Mapping) else None
        gets = {
            ("compute", "/"): {"version": {"version": self.newest}},
            ("compute", f"/flavors/{FLAVOR_ID}"): {"flavor": {"id": FLAVOR_ID, "name": "m1.tiny"}},
            ("compute", "/flavors/detail"): {"flavors": [{"id": FLAVOR_ID, "name": "m1.tiny"}]},
            ("compute", "/os-keypairs/mine"): {"keypair": {"name": "mine"}},
            ("image", f"/images/{IMAGE_ID}"): {"id": IMAGE_ID},
            ("image", "/images"): {"images": [{"id": IMAGE_ID}] if name == "cirros" else []},
            ("network", "/networks"): {"networks": [{"id": NET_ID}] if name == "private" else []},
        }
        if method == "GET" and path.startswith("/servers/"):
            server = self.servers.get(path.split("/")[2])
            return {"server": server} if server else None
        return gets.get((service, path)) if method == "GET" else None

    def remember(self, key: tuple[str, ...], compute: Any) -> Any:
        if key not in self.remembered:
            self.remembered[key] = compute()
        return self.remembered[key]

    def poller(self, kind: str, lister: Any, ids_per_call: int | None = 40) -> Poller:
        return self.pollers.setdefault(kind, Poller(lister, ids_per_call=ids_per_call))

    def writes(self) -> list[tuple[str, str, Any]]:
        return [call for call in self.sent if call[0] != "GET"]


class InterfacesCloud(FakeCloud):
    """A server's interfaces as Nova and Neutron show them: attached and detached
    at once, the server's addresses following."""

    def __init__(self) -> None:
        super().__init__()
        self.interfaces: list[dict[str, Any]] = []
        self.ports = 0
        self.refuse_attach = False

    def plug(self, port: str, network: str, address: str) -> dict[str, Any]:
        interface = {"port_id": port, "net_id": network, "mac_addr": f"mac-{port}",
                     "fixed_ips": [{"ip_address": address, "subnet_id": SUBNET_ID}]}
        self.interfaces.append(interface)
        self.servers["s1"]["addresses"].setdefault(network, []).append(
            {"addr": address, "OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": f"mac-{port}"})
        return interface

    def unplug(self, port: str) -> None:
        self.interfaces = [i for i in self.interfaces if i["port_id"] != port]
        for listed in self.servers["s1"]["addresses"].values():
            listed[:] = [a for a in listed if a["OS-EXT-IPS-MAC:mac_addr"] != f"mac-{port}"]

    def _answer(self, service: str, method: str, path: str, params: Any) -> Any:
        if path == "/servers/s1/os-interface":
            return self._interface_call(method, params)
        if method == "DELETE" and path.startswith("/servers/s1/os-interface/"):
            self.unplug(path.rsplit("/", 1)[1])
            return None
        if path == "/ports" and method == "POST":
            self.ports += 1
            return {"port": {"id": f"made-{self.ports}"}}
        if path == "/ports" and method == "GET":
            attached = {i["port_id"] for i in self.interfaces}
            return {"ports": [{"id": ident, "device_id": "s1" if ident in attached else ""}
                              for _key, ident in params]}
        if path.startswith("/subnets/"):
            return {"subnet": {"id": SUBNET_ID, "network_id": NET_ID}}
        return super()._answer(service, method, path, params)

    def _interface_call(self, method: str, params: Any) -> Any:
        if method == "GET":
            return {"interfaceAttachments": [dict(i) for i in self.interfaces]}
        request = self.sent[-1][2]["interfaceAttachment"]
        if self.refuse_attach:
            raise CloudFailure("Failed to attach network adapter device", 500)
        port = request.get("port_id") or f"nova-{len(self.interfaces)}"
        address = (request.get("fixed_ips") or [{"ip_address": f"10.9.0.{len(self.interfaces)}"}])[0]["ip_address"]
        return {"interfaceAttachment": self.plug(port, request.get("net_id") or NET_ID, address)}


class FakeSecrets:
    """``runtime.secrets``: the values kept secret (``known``), found as substrings."""

    def __init__(self, *known: str) -> None:
        self.known = list(known)

    def add(self, value: str) -> None:
        self.known.append(value)

    def found_in(self, value: Any) -> bool:
        return isinstance(value, str) and any(secret in value for secret in self.known)


class FakeStackRows:
    """The store as a handler reads it: the stack's resource rows (``rows``)."""

    def __init__(self) -> None:
        self.rows: list[Any] = []

    def resources(self, stack_id: str) -> list[Any]:
        return [row for row in self.rows if not getattr(row, "retired_in", 0)]

    def retired_resources(self, stack_id: str) -> list[Any]:
        return [row for row in self.rows if getattr(row, "retired_in", 0)]


class FakeRuntime:
    stack_name = "st"
    stack_id = "stack-id"

    def __init__(self, cloud: FakeCloud) -> None:
        self.cloud = cloud
        self.store = FakeStackRows()
        self.claimed: list[str] = []
        self.secrets = FakeSecrets()
        # (key, value, how many calls the cloud had been sent by then)
        self.noted: list[tuple[str, Any, int]] = []

    def physical_name(self, resource_name: str) -> str:
        return f"st-{resource_name}-abcdefghijkl"

    def note_data(self, resource_name: str, key: str, value: Any) -> None:
        self.noted.append((key, value, len(self.cloud.sent)))

    def claim_physical_id(self, resource_name: str, physical_id: str) -> None:
        self.claimed.append(physical_id)

    def withdraw_physical_id(self, resource_name: str, physical_id: str) -> None:
        self.claimed.remove(physical_id)

    def sleep(self, seconds: float) -> None:
        pass


class TakenNames(FakeCloud):
    """Nova, where the key pair name ``mine`` is taken."""

    def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                params: Any = None, microversion: str | None = None) -> Any:
        if (method, path) == ("POST", "/os-keypairs") and body and body["keypair"]["name"] == "mine":
            self.sent.append((method, path, body))
            raise CloudFailure("Key pair 'mine' already exists.", 409)
        return super().request(service, method, path, body, params, microversion)


def test_a_key_pair_whose_name_is_taken_is_not_claimed() -> None:
    """Heat records a key pair once it made it: a create refused because the name is
    taken (a key pair made by hand) leaves no id that the stack's delete would remove."""
    runtime = FakeRuntime(TakenNames())
    properties = validate_properties(nova.KeyPair, {"name": "mine", "public_key": "ssh-ed25519 AAAA x"},
                                     "resources.key.properties")
    with pytest.raises(CloudFailure, match="already exists"):
        nova.KeyPair("key", runtime).handle_create(properties)
    assert runtime.claimed == []


def test_user_data_holding_a_secret_makes_its_encoded_forms_secret() -> None:
    """Issue 40, item 5: a hidden value put into user_data is sent base64-encoded, and
    Nova shows that text back (``show``): it is a secret too, so it is masked in what
    the task shows and sealed in the store like the value itself."""
    cloud = FakeCloud()
    runtime = FakeRuntime(cloud)
    runtime.secrets = FakeSecrets("s3cr3t-pw")
    properties = server_properties(user_data="#!/bin/sh\necho s3cr3t-pw > /etc/pw\n")
    nova.Server("web", runtime).handle_create(properties)
    sent = cloud.creates[0][0]["server"]["user_data"]
    assert "s3cr3t-pw" in base64.b64decode(sent).decode()
    assert runtime.secrets.found_in(sent)  # the base64 text Nova shows back
    plain = FakeRuntime(FakeCloud())
    nova.Server("web", plain).handle_create(server_properties(user_data="#!/bin/sh\necho hi\n"))
    assert plain.secrets.known == []  # user data with no secret stays as it is


def test_a_port_a_killed_run_asked_neutron_for_is_found_by_its_name_network_and_time_and_deleted() -> None:
    cloud = CloudWithUnanswered()
    cloud.ports = [
        {"id": "made-1", "created_at": "2026-11-28T10:00:01Z"},  # recorded: deleted as such
        {"id": "unanswered", "created_at": "2026-11-28T10:00:03Z"},  # the killed run's
        {"id": "older", "created_at": "2026-11-28T09:00:00Z"},  # same name, made long before: not ours
    ]
    left = ResourceState("server", "OS::Nova::Server", "CREATE", status="IN_PROGRESS", data={
        "internal_ports": ["made-1"], "creating_port": {
            "name": "server-port-1", "network_id": NET_ID, "asked_at": "2026-11-28T10:00:02+00:00"}})
    nova.Server("server", FakeRuntime(cloud)).handle_delete(left)
    assert ("GET", "/ports", None) in cloud.sent
    assert cloud.port_filters == [{"name": "server-port-1", "network_id": NET_ID}]
    assert cloud.writes() == [("DELETE", "/ports/made-1", None), ("DELETE", "/ports/unanswered", None)]


def test_the_port_of_the_server_that_replaces_a_killed_one_is_not_taken_for_its_unanswered_one() -> None:
    """A create aborted while Neutron made its port is replaced: the new server's port has
    the same Heat name, network and age, and is its record's, so it stays."""
    cloud = CloudWithUnanswered()
    cloud.ports = [{"id": "orphan", "created_at": "2026-11-28T10:00:03Z"},
                   {"id": "replacement's", "created_at": "2026-11-28T10:00:09Z"}]
    runtime = FakeRuntime(cloud)
    runtime.store.rows = [StoredResource("stack-id", ResourceState(
        "server", "OS::Nova::Server", "CREATE", physical_id="new", data={"internal_ports": ["replacement's"]}))]
    aborted = ResourceState("server", "OS::Nova::Server", "CREATE", status="FAILED", data={
        "creating_port": {"name": "server-port-0", "network_id": NET_ID, "asked_at": "2026-11-28T10:00:02+00:00"}})
    nova.Server("server", runtime).handle_delete(aborted)
    assert cloud.writes() == [("DELETE", "/ports/orphan", None)]


def test_a_port_bound_to_another_server_is_never_taken_for_an_unanswered_one() -> None:
    """Issue 40's kill campaign: the ports of every attempt at a server on a ``subnet``
    entry have Heat's one name; one bound to a server that another attempt made (its
    own row deletes it, and Neutron refuses a member the delete of a bound port) is
    left, one bound to the server this delete took down goes."""
    cloud = CloudWithUnanswered()
    cloud.ports = [{"id": "another's", "created_at": "2026-11-28T10:00:05Z", "device_id": "other-server"},
                   {"id": "mine", "created_at": "2026-11-28T10:00:03Z", "device_id": "old"}]
    cloud.servers["old"] = {"id": "old", "name": "st-server-abcdefghijkl", "status": "ACTIVE"}
    left = ResourceState("server", "OS::Nova::Server", "CREATE", status="FAILED", physical_id="old", data={
        "creating_port": {"name": "server-port-0", "network_id": NET_ID, "asked_at": "2026-11-28T10:00:02+00:00"}})
    nova.Server("server", FakeRuntime(cloud)).handle_delete(left)
    assert ("DELETE", "/ports/mine", None) in cloud.writes()
    assert ("DELETE", "/ports/another's", None) not in cloud.writes()


class CloudWithUnanswered(FakeCloud):
    """Nova's servers listed by a name pattern (Nova's ``name`` filter is a regular
    expression) and deleted; Neutron's ports listed (``ports``, whatever the filters,
    which ``port_filters`` keeps) and deleted."""

    def __init__(self) -> None:
        super().__init__()
        self.ports: list[dict[str, Any]] = []
        self.port_filters: list[dict[str, Any]] = []

    def _answer(self, service: str, method: str, path: str, params: Any) -> Any:
        if method == "GET" and path == "/servers":
            pattern = re.compile(params["name"])
            return {"servers": [dict(s) for s in self.servers.values() if pattern.search(s["name"])]}
        if method == "DELETE" and path.startswith("/servers/"):
            self.servers.pop(path.split("/")[2])
        if method == "GET" and path == "/ports":
            self.port_filters.append(dict(params))
            return {"ports": list(self.ports)}
        return super()._answer(service, method, path, params)


class NoConsoles(FakeCloud):
    """Nova with no console proxy: every console refused, as devstack without one."""

    def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                params: Any = None, microversion: str | None = None) -> Any:
        if path.endswith("/remote-consoles"):
            kind = body["remote_console"]["type"]  # type: ignore[index]
            raise CloudFailure(f"Unavailable console type {kind}.", 400, "req-0a1b")
        return super().request(service, method, path, body, params, microversion)


def test_a_long_default_server_name_is_cut_as_heat_cuts_it() -> None:
    """Heat's ``max_server_name_length`` (53): the first two characters, a hyphen, the
    end; the name is recorded (to find the server after a kill) as it was sent."""
    class LongNames(FakeRuntime):
        def physical_name(self, resource_name: str) -> str:
            return f"a-very-long-stack-name-group-abcdefghijkl-{resource_name}-mnopqrstuvwx"

    cloud = FakeCloud()
    runtime = LongNames(cloud)
    nova.Server("member", runtime).handle_create(server_properties())
    name = cloud.creates[0][0]["server"]["name"]
    full = "a-very-long-stack-name-group-abcdefghijkl-member-mnopqrstuvwx"
    assert name == "a-" + "-" + full[-50:]
    assert len(name) == 53 and ("creating_server_name", name) in [(k, v) for k, v, _n in runtime.noted]
    assert nova.reduced_name("short", 53) == "short"
