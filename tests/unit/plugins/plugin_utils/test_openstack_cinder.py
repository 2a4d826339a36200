# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure parts of the native Cinder types (resources/openstack/cinder.py): Heat
27's schemas and validation words, attribute values in Heat's shapes, the calls an
update makes (Heat's handle_update order, detach around what needs it), Heat's
Snapshot deletion policy, the constraints' messages and the microversion; and
the calls of OS::Neutron::FloatingIPAssociation and OS::Glance::WebImage.  What
they do on a real cloud is tested in tests/cloud/test_native_cinder.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    ResourceFailure,
    StackValidationFailed,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import (
    ResourceState,
    resource_class,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack import cinder
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.poller import Poller
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.session import (
    CloudFailure,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.properties import (
    validate_properties,
)

VOLUME = "11111111-2222-4333-8444-555555555555"
SERVER = "99999999-2222-4333-8444-555555555555"


class FakeCinder:
    """Cinder (and Nova's volume attachments) as dicts; records every call."""

    def __init__(self, microversion: str = "3.71", backup: str | None = "available",
                 volumes: dict[str, dict[str, Any]] | None = None) -> None:
        self.microversion, self.backup = microversion, backup
        self.volumes = volumes or {}
        self.sent: list[tuple[str, str, str, Any]] = []
        self.versions: list[str | None] = []
        self.pollers: dict[str, Poller] = {}

    def remember(self, key: tuple[str, ...], compute: Callable[[], Any]) -> Any:
        return compute()

    def poller(self, kind: str, lister: Any, ids_per_call: int | None = 40) -> Poller:
        return self.pollers.setdefault(kind, Poller(lister, ids_per_call=ids_per_call))

    def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | None = None,
                params: Any = None, microversion: str | None = None) -> Any:
        self.sent.append((service, method, path, body))
        self.versions.append(microversion)
        parts = path.strip("/").split("/")
        if service == "compute":
            return self._nova(method, parts, body)
        if method == "GET" and parts == [""]:
            return {"versions": [{"id": "v3.0", "version": self.microversion}]}
        if parts[0] == "backups":
            return self._backups(method, parts)
        if method == "GET" and parts == ["volumes", "detail"]:
            return {"volumes": list(self.volumes.values())}
        if method == "GET" and parts == ["volumes"]:
            return {"volumes": [v for v in self.volumes.values() if v.get("name") == dict(params or {}).get("name")]}
        if method == "POST" and parts == ["volumes"]:
            made = {"id": VOLUME, "status": "available", "attachments": [], **body["volume"]}
            self.volumes[VOLUME] = made
            return {"volume": made}
        volume = self.volumes.get(parts[1]) if len(parts) > 1 else None
        if volume is None:
            raise CloudFailure(f"Volume {parts[-1]} could not be found.", 404)
        if method == "DELETE":
            del self.volumes[parts[1]]
        elif method == "POST" and parts[2:] == ["action"] and "os-extend" in body:
            volume["size"] = body["os-extend"]["new_size"]
        return {"volume": volume}

    def _backups(self, method: str, parts: list[str]) -> Any:
        if method == "POST":
            if self.backup is None:
                raise CloudFailure("Service cinder-backup could not be found.", 404)
            return {"backup": {"id": "b1", "status": "creating"}}
        return {"backup": {"id": "b1", "status": self.backup, "fail_reason": "no backup service"}}

    def _nova(self, method: str, parts: list[str], body: Any) -> Any:
        volume = self.volumes.get(VOLUME, {})
        if method == "DELETE":
            volume.update(status="available", attachments=[])
        elif method == "POST":
            volume.update(status="in-use", attachments=[{"id": VOLUME, "server_id": parts[1],
                                                         "device": body["volumeAttachment"].get("device")}])
            return {"volumeAttachment": {"id": VOLUME}}
        elif method == "GET":
            raise CloudFailure("not attached", 404)
        return None

    def writes(self) -> list[tuple[str, str, Any]]:
        return [(m, p, b) for s, m, p, b in self.sent if m != "GET"]


class FakeRuntime:
    stack_name = "st"

    def __init__(self, cloud: FakeCinder) -> None:
        self.cloud = cloud
        self.claimed: list[str] = []
        self.claimed_when: list[int] = []  # how many calls the cloud had been sent then

    def physical_name(self, resource_name: str) -> str:
        return f"st-{resource_name}-abcdefghijkl"

    def withdraw_physical_id(self, resource_name: str, physical_id: str) -> None:
        self.claimed.remove(physical_id)

    def note_data(self, resource_name: str, key: str, value: Any) -> None:
        # What was noted, and how many calls the cloud had been sent then.
        self.noted = [*getattr(self, "noted", []), (key, value, len(self.cloud.sent))]

    def claim_physical_id(self, resource_name: str, physical_id: str) -> None:
        self.claimed.append(physical_id)
        self.claimed_when.append(len(self.cloud.sent))

    def sleep(self, seconds: float) -> None:
        pass


def volume_properties(**values: Any) -> dict[str, Any]:
    return validate_properties(cinder.Volume, values, "resources.data.properties")


def volume(cloud: FakeCinder) -> cinder.Volume:
    return cinder.Volume("data", FakeRuntime(cloud))  # type: ignore[arg-type]


# -- schemas and validation -----------------------------------------------------------------

def test_the_volume_types_have_heats_update_allowed_properties() -> None:
    allowed = {name for name, schema in cinder.Volume.properties_schema.items() if schema.update_allowed}
    assert allowed == {"size", "backup_id", "name", "description", "volume_type", "metadata", "read_only"}
    attachment = resource_class("OS::Cinder::VolumeAttachment")
    assert attachment is not None and all(s.update_allowed for s in attachment.properties_schema.values())
    assert cinder.Volume.live_attributes == {"status", "attachments", "attachments_list"}


@pytest.mark.parametrize(("properties", "message"), [
    ({}, 'If neither "backup_id" nor "size" is provided, one and only one of "source_volid", '
         '"snapshot_id" must be specified, but currently specified options: [].'),
    ({"size": 1, "image": "tiny", "source_volid": VOLUME},
     'If "size" is provided, only one of "image", "imageRef", "source_volid", "snapshot_id" can be '
     "specified, but currently specified options: ['source_volid', 'image']."),
])
def test_a_volume_needs_one_source_or_a_size_in_heats_words(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(StackValidationFailed) as raised:
        volume(FakeCinder()).validate(volume_properties(**properties))
    assert raised.value.message == message
    # A backup is enough, with or without a size.
    volume(FakeCinder()).validate(volume_properties(backup_id="b1"))


def test_attributes_are_in_heats_shapes_mostly_text() -> None:
    shown = {"size": 2, "snapshot_id": None, "bootable": "false", "encrypted": False,
             "metadata": {"tier": "db"}, "name": "v", "description": None,
             "attachments": [{"server_id": "s", "device": "/dev/vdb"}]}
    assert [cinder.volume_attribute(shown, n) for n in ("size", "snapshot_id", "bootable", "encrypted")] == \
        ["2", "None", "false", "False"]
    assert cinder.volume_attribute(shown, "metadata") == '{"tier": "db"}'
    assert cinder.volume_attribute(shown, "metadata_values") == {"tier": "db"}
    assert (cinder.volume_attribute(shown, "display_name"), cinder.volume_attribute(shown, "display_description")) \
        == ("v", None)
    assert cinder.volume_attribute(shown, "attachments") == "[{'server_id': 's', 'device': '/dev/vdb'}]"
    assert cinder.volume_attribute(shown, "attachments_list") == shown["attachments"]


# -- create and update ----------------------------------------------------------------------

def test_a_volume_is_created_with_heats_arguments_at_heats_microversion() -> None:
    cloud = FakeCinder(microversion="3.60")
    outcome = volume(cloud).handle_create(volume_properties(size=1, metadata={"a": "b"}))
    assert outcome.physical_id == VOLUME
    assert cloud.writes()[0] == ("POST", "/volumes", {"volume": {
        "size": 1, "availability_zone": None, "name": "st-data-abcdefghijkl", "description": None,
        "metadata": {"a": "b"}}})
    # The lower of the cloud's highest microversion and cinderclient's 3.71.
    assert set(cloud.versions) - {None} == {"3.60"}
    assert outcome.data["attributes"]["size"] == "1"


def test_a_killed_create_leaves_its_unique_name_and_the_next_delete_finds_the_volume() -> None:
    """Issue 40: Heat's unique name is recorded before Cinder is asked; a volume made
    by a run killed before it recorded the id is found by the name and deleted."""
    cloud = FakeCinder()
    handler = volume(cloud)
    handler.handle_create(volume_properties(size=1))
    assert handler.runtime.noted[0][:2] == ("creating_name", "st-data-abcdefghijkl")
    assert not [call for call in cloud.sent[:handler.runtime.noted[0][2]] if call[1] == "POST"]
    left = ResourceState("data", "OS::Cinder::Volume", "CREATE", status="FAILED",
                         data={"creating_name": "st-data-abcdefghijkl"})
    handler.handle_delete(left)
    assert ("DELETE", f"/volumes/{VOLUME}", None) in cloud.writes() and cloud.volumes == {}


def attached_volume(size: int = 1) -> dict[str, Any]:
    return {"id": VOLUME, "status": "in-use", "size": size, "name": "v",
            "attachments": [{"id": VOLUME, "server_id": SERVER, "device": "/dev/vdb"}]}


def updated(cloud: FakeCinder, old: dict[str, Any], new: dict[str, Any]) -> None:
    state = ResourceState("data", "OS::Cinder::Volume", "CREATE", physical_id=VOLUME,
                          properties=volume_properties(**old))
    volume(cloud).handle_update(state, volume_properties(**new))


def test_an_attached_volume_is_extended_where_it_is_from_3_42() -> None:
    cloud = FakeCinder(volumes={VOLUME: attached_volume()})
    updated(cloud, {"size": 1}, {"size": 2})
    assert cloud.writes() == [("POST", f"/volumes/{VOLUME}/action", {"os-extend": {"new_size": 2}})]


def test_before_3_42_an_attached_volume_is_detached_extended_and_attached_again() -> None:
    cloud = FakeCinder(microversion="3.40", volumes={VOLUME: attached_volume()})
    updated(cloud, {"size": 1}, {"size": 2})
    assert cloud.writes() == [
        ("DELETE", f"/servers/{SERVER}/os-volume_attachments/{VOLUME}", None),
        ("POST", f"/volumes/{VOLUME}/action", {"os-extend": {"new_size": 2}}),
        ("POST", f"/servers/{SERVER}/os-volume_attachments",
         {"volumeAttachment": {"volumeId": VOLUME, "device": "/dev/vdb"}})]


def test_heats_update_order_names_metadata_retype_then_access_mode() -> None:
    cloud = FakeCinder(volumes={VOLUME: {**attached_volume(), "status": "available", "attachments": []}})
    updated(cloud, {"size": 1, "name": "a"},
            {"size": 1, "name": "b", "metadata": {"k": "v"}, "volume_type": "fast", "read_only": True})
    assert [(m, p, next(iter(b))) for m, p, b in cloud.writes()] == [
        ("PUT", f"/volumes/{VOLUME}", "volume"),
        ("PUT", f"/volumes/{VOLUME}/metadata", "metadata"),
        ("POST", f"/volumes/{VOLUME}/action", "os-retype"),
        ("POST", f"/volumes/{VOLUME}/action", "os-update_readonly_flag")]
    assert cloud.writes()[0][2] == {"volume": {"name": "b", "description": None}}


def test_a_volume_is_never_shrunk() -> None:
    cloud = FakeCinder(volumes={VOLUME: attached_volume(size=2)})
    with pytest.raises(ResourceFailure) as raised:
        updated(cloud, {"size": 2}, {"size": 1})
    assert (raised.value.error_type, raised.value.message) == ("NotSupported", "Shrinking volume is not supported.")
    assert cloud.writes() == []


# -- delete ---------------------------------------------------------------------------------

def deleted(cloud: FakeCinder, policy: str, action: str = "CREATE", status: str = "COMPLETE") -> None:
    state = ResourceState("data", "OS::Cinder::Volume", action, status, physical_id=VOLUME,
                          properties=volume_properties(size=1), deletion_policy=policy)
    volume(cloud).handle_delete(state)


def available() -> dict[str, dict[str, Any]]:
    return {VOLUME: {"id": VOLUME, "status": "available", "size": 1, "attachments": []}}


def test_deletion_policy_snapshot_makes_a_backup_then_deletes_the_volume() -> None:
    cloud = FakeCinder(volumes=available())
    deleted(cloud, "Snapshot")
    assert [(m, p) for m, p, _body in cloud.writes()] == [("POST", "/backups"), ("DELETE", f"/volumes/{VOLUME}")]
    assert cloud.writes()[0][2]["backup"]["volume_id"] == VOLUME and cloud.volumes == {}


def test_a_failed_create_is_deleted_without_a_backup_and_notfound_means_no_backup() -> None:
    cloud = FakeCinder(volumes=available())
    deleted(cloud, "Snapshot", action="CREATE", status="FAILED")
    assert [(m, p) for m, p, _body in cloud.writes()] == [("DELETE", f"/volumes/{VOLUME}")]
    cloud = FakeCinder(backup=None, volumes=available())
    deleted(cloud, "Snapshot")
    assert cloud.volumes == {}


def test_a_backup_that_fails_fails_the_delete_and_keeps_the_volume() -> None:
    cloud = FakeCinder(backup="error", volumes=available())
    with pytest.raises(ResourceFailure) as raised:
        deleted(cloud, "Snapshot")
    assert raised.value.error_type == "ResourceUnknownStatus"
    assert raised.value.message == 'Volume backup failed - Unknown status error due to "no backup service"'
    assert VOLUME in cloud.volumes


def test_an_attached_volume_is_not_deleted_and_a_gone_one_is_done() -> None:
    cloud = FakeCinder(volumes={VOLUME: attached_volume()})
    with pytest.raises(ResourceFailure, match="Volume in use"):
        deleted(cloud, "Delete")
    deleted(FakeCinder(), "Delete")  # NotFound: nothing to do


# -- constraints ----------------------------------------------------------------------------

@pytest.mark.parametrize(("constraint", "entity"), [
    ("cinder.volume", "Volume"), ("cinder.snapshot", "VolumeSnapshot"),
    ("cinder.backup", "Volume backup"), ("cinder.vtype", "VolumeType")])
def test_cinder_constraints_fail_with_heats_message(constraint: str, entity: str) -> None:
    cloud = FakeCinder()
    cloud.request = _answers_nothing(cloud.request)  # type: ignore[method-assign]
    with pytest.raises(StackValidationFailed) as raised:
        cinder.check_cinder_constraint(cloud, constraint, "nope", "resources.v.properties.x")  # type: ignore[arg-type]
    assert raised.value.message == ("Property error: resources.v.properties.x: Error validating value "
                                    f"'nope': The {entity} (nope) could not be found.")


def _answers_nothing(request: Callable[..., Any]) -> Callable[..., Any]:
    def answer(service: str, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if path == "/":
            return request(service, method, path, *args, **kwargs)
        if path == "/types":
            return {"volume_types": [{"id": "t1", "name": "fast"}]}
        raise CloudFailure("not found", 404)
    return answer


def test_a_constraint_of_another_service_is_not_cinders() -> None:
    assert cinder.check_cinder_constraint(FakeCinder(), "neutron.network", "x", "p") is False  # type: ignore[arg-type]


# -- attachments ----------------------------------------------------------------------------

def attachment_properties() -> dict[str, Any]:
    return validate_properties(cinder.VolumeAttachment, {"instance_uuid": SERVER, "volume_id": VOLUME}, "p")


def test_an_attachments_id_is_recorded_before_nova_is_asked_to_attach() -> None:
    cloud = FakeCinder(volumes={VOLUME: {**attached_volume(), "status": "available", "attachments": []}})
    runtime = FakeRuntime(cloud)
    outcome = cinder.VolumeAttachment("att", runtime).handle_create(attachment_properties())  # type: ignore[arg-type]
    asked = next(i for i, call in enumerate(cloud.sent) if call[1:3] == ("POST", f"/servers/{SERVER}/os-volume_attachments"))
    assert outcome.physical_id == VOLUME and runtime.claimed == [VOLUME] and runtime.claimed_when[0] <= asked


def test_an_attach_nova_refuses_leaves_no_claim_on_the_volume() -> None:
    cloud = FakeCinder(volumes={VOLUME: attached_volume()})

    def refuse(service: str, method: str, path: str, *rest: Any, **options: Any) -> Any:
        if method == "POST" and path.endswith("/os-volume_attachments"):
            raise CloudFailure(f"Invalid volume: volume {VOLUME} already attached", 400)
        return FakeCinder.request(cloud, service, method, path, *rest, **options)

    cloud.request = refuse  # type: ignore[method-assign]
    runtime = FakeRuntime(cloud)
    with pytest.raises(CloudFailure, match=r"Failed to attach volume .* already attached \(HTTP 400\)"):
        cinder.VolumeAttachment("att", runtime).handle_create(attachment_properties())  # type: ignore[arg-type]
    assert runtime.claimed == []  # another server's attachment: not this stack's to detach


def test_an_attachment_update_detaches_then_attaches_as_the_new_properties_say() -> None:
    other = "88888888-2222-4333-8444-555555555555"
    cloud = FakeCinder(volumes={VOLUME: attached_volume()})
    old = validate_properties(cinder.VolumeAttachment, {"instance_uuid": SERVER, "volume_id": VOLUME,
                                                        "mountpoint": "/dev/vdb"}, "p")
    new = {**old, "instance_uuid": other}
    state = ResourceState("att", "OS::Cinder::VolumeAttachment", "CREATE", physical_id=VOLUME, properties=old)
    attachment = cinder.VolumeAttachment("att", FakeRuntime(cloud))  # type: ignore[arg-type]
    outcome = attachment.handle_update(state, new)
    assert cloud.writes() == [
        ("DELETE", f"/servers/{SERVER}/os-volume_attachments/{VOLUME}", None),
        ("POST", f"/servers/{other}/os-volume_attachments",
         {"volumeAttachment": {"volumeId": VOLUME, "device": "/dev/vdb"}})]
    assert outcome.physical_id == VOLUME
    # Nothing changed: nothing is detached (Heat acts on a property diff only).
    cloud.sent.clear()
    attachment.handle_update(state, old)
    assert cloud.writes() == []


# -- the floating IP association and the web image (their pure parts) ------------------------

class Recorder:
    """A cloud that answers every call with an empty item (an image: ``image``) and
    records it."""

    def __init__(self, image: dict[str, Any] | None = None) -> None:
        self.sent: list[tuple[str, str, Any]] = []
        self.content_types: list[str | None] = []
        self.image = image or {}

    def request(self, service: str, method: str, path: str, body: Any = None, params: Any = None,
                microversion: str | None = None, content_type: str | None = None) -> Any:
        self.sent.append((method, path, body))
        self.content_types.append(content_type)
        return {"floatingip": {}, "id": "i1", "status": "active", **self.image}


def test_an_association_moves_the_address_and_lets_the_old_one_go() -> None:
    cloud = Recorder()
    association = resource_class("OS::Neutron::FloatingIPAssociation")
    assert association is not None
    handler = association("assoc", FakeRuntime(cloud))  # type: ignore[arg-type]
    made = handler.handle_create({"floatingip_id": "f1", "port_id": "p1", "fixed_ip_address": None})
    assert made.physical_id.isdigit() and cloud.sent == [("PUT", "/floatingips/f1", {"floatingip": {"port_id": "p1"}})]
    cloud.sent.clear()
    state = ResourceState("assoc", association.type_name, "CREATE", physical_id=made.physical_id,
                          properties={"floatingip_id": "f1", "port_id": "p1", "fixed_ip_address": None})
    moved = handler.handle_update(state, {"floatingip_id": "f2", "port_id": "p2", "fixed_ip_address": None})
    assert moved.physical_id == made.physical_id
    assert cloud.sent == [("PUT", "/floatingips/f1", {"floatingip": {"port_id": None}}),
                          ("PUT", "/floatingips/f2", {"floatingip": {"port_id": "p2", "fixed_ip_address": None}})]
    cloud.sent.clear()
    handler.handle_delete(state)
    assert cloud.sent == [("PUT", "/floatingips/f1", {"floatingip": {"port_id": None}})]
    with pytest.raises(StackValidationFailed, match="Error validating value '10.0.0': Invalid IP address"):
        handler.validate({"floatingip_id": "f1", "port_id": "p1", "fixed_ip_address": "10.0.0"})


def test_a_web_image_refuses_what_heat_refuses() -> None:
    image = resource_class("OS::Glance::WebImage")
    assert image is not None
    handler = image("img", FakeRuntime(Recorder()))  # type: ignore[arg-type]
    with pytest.raises(StackValidationFailed, match="Invalid mix of disk and container formats"):
        handler.validate({"container_format": "ami", "disk_format": "raw"})
    with pytest.raises(StackValidationFailed,
                       match="members property should only be specified for visibility with value shared."):
        handler.validate({"container_format": "bare", "members": ["p"], "visibility": "private"})


def test_a_web_image_changes_in_place_in_heats_order_with_one_json_patch() -> None:
    image = resource_class("OS::Glance::WebImage")
    assert image is not None
    live = {"visibility": "private", "protected": False, "made_by": "hotplay", "old_key": "x"}
    cloud = Recorder(live)
    handler = image("img", FakeRuntime(cloud))  # type: ignore[arg-type]
    old = {"visibility": "private", "protected": False, "tags": ["a"], "active": True,
           "extra_properties": {"made_by": "hotplay", "old_key": "x"}}
    state = ResourceState("img", image.type_name, "CREATE", physical_id="i1", properties=old)
    handler.handle_update(state, {**old, "visibility": "public", "protected": True, "tags": ["b"], "active": False,
                                  "extra_properties": {"made_by": "hotplay", "os_distro_kind": "tiny"}})
    patch = [{"op": "replace", "path": "/visibility", "value": "public"},
             {"op": "replace", "path": "/protected", "value": True},
             {"op": "add", "path": "/os_distro_kind", "value": "tiny"},
             {"op": "remove", "path": "/old_key"}]
    assert [call for call in cloud.sent if call[0] != "GET"] == [
        ("POST", "/images/i1/actions/deactivate", None), ("PUT", "/images/i1/tags/b", None),
        ("DELETE", "/images/i1/tags/a", None), ("PATCH", "/images/i1", patch)]
    assert cloud.content_types[cloud.sent.index(("PATCH", "/images/i1", patch))] == \
        "application/openstack-images-v2.1-json-patch"
    # Only tags: no patch at all.
    cloud.sent.clear()
    handler.handle_update(state, {**old, "tags": ["a", "c"]})
    assert cloud.sent == [("PUT", "/images/i1/tags/c", None)]


def test_an_image_patch_leaves_alone_what_glance_already_holds_and_removes_what_has_no_value() -> None:
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.glance import image_patch

    live = {"visibility": "public", "os_distro": "cirros", "a/b": "1"}
    assert image_patch(live, {}, {"visibility": "public", "os_distro": None, "owner": None}) == [
        {"op": "remove", "path": "/os_distro"}]
    assert image_patch(live, {"extra_properties": {"a/b": "1"}}, {"extra_properties": {}}) == [
        {"op": "remove", "path": "/a~1b"}]
