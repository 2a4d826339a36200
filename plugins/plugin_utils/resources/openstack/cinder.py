# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Cinder::Volume and OS::Cinder::VolumeAttachment on Cinder's API (v3), as Heat
27's resource plugins use it (heat/engine/resources/openstack/cinder/volume.py and
volume_base.py): the physical id is Cinder's id; calls speak the microversion
Heat's cinderclient speaks (the highest both it, 3.71, and the cloud know), so
``show`` has the keys Heat's has.

- create: from nothing, an image, a snapshot, a source volume or a backup (a
  restore, then the name); then wait for ``available``, failing on ``error`` with
  Cinder's own message about the volume when it has one;
- update in place: ``name``/``description``, ``metadata``, ``volume_type`` (a
  retype), ``size`` (an extend: grow only; an attached volume is extended where
  it is, the cloud's API being 3.42 or later), ``read_only`` and ``backup_id``
  (the volume detached from its server around them, as Heat does); any other
  change replaces it;
- delete: the volume is deleted, then waited for until gone; NotFound is done.
  ``deletion_policy: Snapshot`` first makes a Cinder *backup* of it, as Heat's
  ``handle_snapshot_delete`` does (skipped, as in Heat, when Cinder answers
  NotFound: a cloud without a backup service);
- waits share polls: one list of the project's volumes for every volume being
  waited for (poller.py).

The custom constraints ``cinder.volume``, ``cinder.snapshot``, ``cinder.backup``
and ``cinder.vtype`` are Heat's: a get by id (a type: its name or id), with
Heat's ``EntityNotFound`` words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import quote

from ...errors import StackValidationFailed
from ..base import Outcome, ResourceState, register
from ..properties import value_range
from . import nova
from .base import UNANSWERED_NAME, UUID_SHAPE, OpenStackResource, attributes_from_facade, properties_from_facade
from .session import CloudFailure, CloudSession

CINDER = "block_storage"
COMPUTE = "compute"
# cinderclient's MAX_VERSION in Heat 27: Heat asks for the lower of it and the cloud's.
HEAT_CINDER_MICROVERSION = "3.71"
# From this microversion Cinder extends a volume that is attached (Heat's
# MICROVERSION_EXTEND_INUSE); before it, Heat detaches the volume around the extend.
EXTEND_IN_USE = (3, 42)
# Cinder keeps user messages (why a volume went to error) from 3.3.
MESSAGES = (3, 3)

_CREATING = ("creating", "restoring-backup", "downloading")

# Heat's custom constraint -> (Cinder's path of one thing, Heat's entity name).
_GETTERS: Mapping[str, tuple[str, str]] = {
    "cinder.volume": ("/volumes", "Volume"),
    "cinder.snapshot": ("/snapshots", "VolumeSnapshot"),
    "cinder.backup": ("/backups", "Volume backup"),
}


# -- the API --------------------------------------------------------------------------------

def _version(text: str) -> tuple[int, int]:
    major, _dot, minor = text.partition(".")
    return int(major), int(minor or 0)


def cinder_microversion(cloud: CloudSession) -> str:
    """The microversion of every Cinder call of the run: the lower of Heat's
    cinderclient's and the cloud's highest (asked once per run)."""
    def ask() -> str:
        document = cloud.request(CINDER, "GET", "/") or {}
        versions = [v for v in document.get("versions") or [] if v.get("version")]
        if not versions:
            return "3.0"
        highest = max(_version(str(v["version"])) for v in versions)
        chosen = min(highest, _version(HEAT_CINDER_MICROVERSION))
        return f"{chosen[0]}.{chosen[1]}"

    return cloud.remember(("cinder", "microversion"), ask)


def cinder(cloud: CloudSession, method: str, path: str, body: Mapping[str, Any] | None = None,
           params: Mapping[str, Any] | None = None) -> Any:
    """One Cinder call at the run's microversion."""
    return cloud.request(CINDER, method, path, body, params, microversion=cinder_microversion(cloud))


def _supports(cloud: CloudSession, version: tuple[int, int]) -> bool:
    return _version(cinder_microversion(cloud)) >= version


def _show_volume(cloud: CloudSession, ident: str) -> Mapping[str, Any] | None:
    """The volume as Cinder shows it; None when it is gone."""
    try:
        volume: Mapping[str, Any] = cinder(cloud, "GET", f"/volumes/{quote(ident, safe='')}")["volume"]
        return volume
    except CloudFailure as error:
        if error.not_found:
            return None
        raise


def list_volumes(cloud: CloudSession, ids: Sequence[str]) -> list[Mapping[str, Any]]:
    """The volumes of ``ids`` among the project's: one list call (a page per
    thousand volumes).  Cinder lets a member filter by name, not by id, so the
    poll lists the project's volumes and keeps those waited for."""
    wanted = set(ids)
    found: list[Mapping[str, Any]] = []
    params: dict[str, Any] = {}
    while True:
        answer = cinder(cloud, "GET", "/volumes/detail", params=params)
        volumes = answer.get("volumes") or []
        found.extend(v for v in volumes if v.get("id") in wanted)
        more = any(link.get("rel") == "next" for link in answer.get("volumes_links") or [])
        if not (more and volumes):
            return found
        params = {"marker": volumes[-1]["id"]}


def wait_for_volume(cloud: CloudSession, ident: str, done: Callable[[Mapping[str, Any] | None], bool],
                    sleep: Callable[[float], None]) -> Mapping[str, Any] | None:
    """Poll (with every other volume wait of the run) until ``done(volume)``."""
    # The project's volumes are listed whole, whatever the ids: one call for all.
    poller = cloud.poller(f"{CINDER}:volumes", lambda ids: list_volumes(cloud, ids), ids_per_call=None)
    return poller.wait(ident, done, sleep)


def _failure(message: str, error_type: str) -> CloudFailure:
    failure = CloudFailure(message)
    failure.error_type = error_type
    return failure


def _unknown_status(result: str, status: Any, reason: str = "Unknown") -> CloudFailure:
    """Heat's ``ResourceUnknownStatus``."""
    return _failure(f'{result} - Unknown status {status} due to "{reason}"', "ResourceUnknownStatus")


def _user_message(cloud: CloudSession, ident: str) -> str:
    """Cinder's latest message to the user about volume ``ident`` (why it went to
    error), or Heat's "Unknown" when Cinder has none."""
    if not _supports(cloud, MESSAGES):
        return "Unknown"
    try:
        answer = cinder(cloud, "GET", "/messages", params={"resource_uuid": ident})
    except CloudFailure:
        return "Unknown"  # the reason is a courtesy: never a second failure
    messages = sorted(answer.get("messages") or [], key=lambda m: str(m.get("created_at")))
    return str(messages[-1].get("user_message")) if messages else "Unknown"


# -- Heat's custom constraints ------------------------------------------------------------

def find_volume_type_id(cloud: CloudSession, name_or_id: str) -> str:
    """Heat's ``get_volume_type``: the type whose name or id it is."""
    def find() -> str:
        for volume_type in cinder(cloud, "GET", "/types").get("volume_types") or []:
            if name_or_id in (volume_type.get("name"), volume_type.get("id")):
                return str(volume_type["id"])
        raise CloudFailure(f"The VolumeType ({name_or_id}) could not be found.", 404)

    return cloud.remember(("cinder", "type", name_or_id), find)


def _get_by_id(cloud: CloudSession, constraint: str, ident: str) -> None:
    path, entity = _GETTERS[constraint]

    def get() -> bool:
        try:
            cinder(cloud, "GET", f"{path}/{quote(ident, safe='')}")
        except CloudFailure as error:
            if error.not_found:
                raise CloudFailure(f"The {entity} ({ident}) could not be found.", 404) from None
            raise
        return True

    cloud.remember(("cinder", constraint, ident), get)


def check_cinder_constraint(cloud: CloudSession, constraint: str, value: Any, path: str) -> bool:
    """Heat's ``CustomConstraint(constraint)`` on ``value`` (the property at
    ``path``) when it is one of Cinder's; False when it is not."""
    if constraint != "cinder.vtype" and constraint not in _GETTERS:
        return False
    if value is None:
        return True
    try:
        if constraint == "cinder.vtype":
            find_volume_type_id(cloud, str(value))
        else:
            _get_by_id(cloud, constraint, str(value))
    except CloudFailure as error:
        if not error.not_found:
            raise
        raise StackValidationFailed(
            f"Property error: {path}: Error validating value '{value}': {error.message}") from None
    return True


class CinderResource(OpenStackResource):
    """What the Cinder types share: their constraints checked against the cloud
    (Cinder's here, ``glance.image`` through nova.py, which owns it)."""

    def validate_with_cloud(self, properties: Mapping[str, Any], path: str) -> None:
        for name, constraint in self.custom_constraints.items():
            where, value = f"{path}.{name}", properties.get(name)
            if not check_cinder_constraint(self.cloud, constraint, value, where):
                nova.check_nova_constraint(self.cloud, constraint, value, where)


# -- attaching and detaching (Heat's nova and cinder client plugins) ------------------------

def attach(cloud: CloudSession, server: str, volume: str, device: str | None) -> str:
    """Heat's ``attach_volume``: the attachment's id (Nova's, which is the volume's)."""
    body = {"volumeAttachment": {"volumeId": volume, **({"device": device} if device else {})}}
    try:
        answer = cloud.request(COMPUTE, "POST", f"/servers/{server}/os-volume_attachments", body)
    except CloudFailure as error:
        failure = _failure(f"Failed to attach volume {volume} to server {server} - "
                           f"{error.message} (HTTP {error.status})", "Error")
        failure.status = error.status  # a refusal (4xx) made nothing
        raise failure from None
    return str(((answer or {}).get("volumeAttachment") or {}).get("id") or volume)


def wait_attached(cloud: CloudSession, volume: str, sleep: Callable[[float], None]) -> Mapping[str, Any] | None:
    """Heat's ``check_attach_volume_complete``: until the volume is ``in-use``."""
    def done(item: Mapping[str, Any] | None) -> bool:
        status = (item or {}).get("status")
        if status in ("available", "attaching", "reserved"):
            return False
        if status != "in-use":
            raise _unknown_status("Volume attachment failed", status)
        return True

    return wait_for_volume(cloud, volume, done, sleep)


def detach(cloud: CloudSession, server: str, volume: str, attachment: str,
           sleep: Callable[[float], None]) -> None:
    """Heat's detach and its checks: Nova asked to detach (again while it answers
    Conflict), then Cinder's volume off the server, then Nova's attachment gone."""
    delay = 0.25
    while not _ask_detach(cloud, server, attachment):
        sleep(delay)
        delay = min(delay * 1.6, 4.0)
    wait_for_volume(cloud, volume, lambda item: _detached(item, server), sleep)
    delay = 0.25
    while _nova_attachment(cloud, server, attachment):
        sleep(delay)
        delay = min(delay * 1.6, 4.0)


def _ask_detach(cloud: CloudSession, server: str, attachment: str) -> bool:
    """Heat's ``detach_volume``: False when Nova answers Conflict (ask again)."""
    try:
        cloud.request(COMPUTE, "DELETE", f"/servers/{server}/os-volume_attachments/{attachment}")
    except CloudFailure as error:
        if error.status == 409:
            return False
        if error.status not in (400, 404):
            raise _failure(f"Could not detach attachment {attachment} from server {server}.",
                           "Error") from None
    return True


def _detached(item: Mapping[str, Any] | None, server: str) -> bool:
    """Heat's cinder ``check_detach_volume_complete``."""
    if item is None:
        return True
    servers = [a["server_id"] for a in item.get("attachments") or [] if "server_id" in a]
    if server and server not in servers:
        return True
    status = item.get("status")
    if status in ("in-use", "detaching", "reserved"):
        return False
    if status not in ("available", "deleting"):
        raise _unknown_status("Volume detachment failed", status)
    return True


def _nova_attachment(cloud: CloudSession, server: str, attachment: str) -> bool:
    """Whether Nova still has the attachment (Heat's nova check_detach_volume_complete)."""
    try:
        cloud.request(COMPUTE, "GET", f"/servers/{server}/os-volume_attachments/{attachment}")
    except CloudFailure as error:
        if error.not_found:
            return False
        raise
    return True


# -- Heat's attribute values ---------------------------------------------------------------

def volume_attribute(volume: Mapping[str, Any], name: str) -> Any:
    """Attribute ``name`` of a volume as Heat's ``_resolve_attribute`` gives it:
    most values as text (``str()`` of what cinderclient holds: ``"1"``,
    ``"None"``, ``"False"``, a list's Python text), ``metadata`` as JSON text."""
    if name == "metadata":
        return json.dumps(volume.get("metadata"))
    if name == "metadata_values":
        return volume.get("metadata")
    if name == "display_name":
        return volume.get("name")
    if name == "display_description":
        return volume.get("description")
    if name == "attachments_list":
        return volume.get("attachments")
    return str(volume.get(name))


# -- OS::Cinder::Volume ---------------------------------------------------------------------

@register
class Volume(CinderResource):
    """OS::Cinder::Volume: a Cinder volume."""

    type_name = "OS::Cinder::Volume"
    properties_schema = properties_from_facade(type_name, {
        "size": {"update_allowed": True, "constraints": (value_range(min=1),)},
        "backup_id": {"update_allowed": True},
        "name": {"update_allowed": True},
        "description": {"update_allowed": True},
        "volume_type": {"update_allowed": True},
        "metadata": {"update_allowed": True, "default": {}},
        "read_only": {"update_allowed": True},
        "multiattach": {"default": False},
    })
    attributes_schema = attributes_from_facade(type_name, {
        "metadata_values": "map", "attachments_list": "list", "multiattach": "boolean"})
    custom_constraints = {"snapshot_id": "cinder.snapshot", "backup_id": "cinder.backup",
                          "volume_type": "cinder.vtype", "image": "glance.image",
                          "source_volid": "cinder.volume"}
    # Heat's CACHE_NONE: read from Cinder whenever they are asked for.
    live_attributes: ClassVar[frozenset[str]] = frozenset({"status", "attachments", "attachments_list"})

    # -- validation -------------------------------------------------------------------------
    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's ``CinderVolume.validate``: the sources a volume may be made from."""
        if properties.get("backup_id"):
            return
        message = create_sources_error(properties)
        if message:
            raise self.refuse(message, f"resources.{self.name}")

    # -- create -----------------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        names = {"name": properties.get("name") or self.runtime.physical_name(self.name),
                 "description": properties.get("description")}
        if not properties.get("name"):
            # Heat's unique name, recorded before Cinder is asked: a run killed while
            # Cinder makes the volume (its id not yet answered) leaves a volume that
            # the next run finds by this name, and deletes (handle_delete).
            self.runtime.note_data(self.name, UNANSWERED_NAME, names["name"])
        if properties.get("backup_id"):
            restored = cinder(self.cloud, "POST", f"/backups/{properties['backup_id']}/restore",
                              {"restore": {"volume_id": None, "name": None}})
            ident = str(restored["restore"]["volume_id"])
            self.runtime.claim_physical_id(self.name, ident)
            cinder(self.cloud, "PUT", f"/volumes/{ident}", {"volume": names})
        else:
            body = self._create_body(properties, names)
            created = cinder(self.cloud, "POST", "/volumes", body)["volume"]
            ident = str(created["id"])
            # Recorded before the wait: a run killed now still knows what it made.
            self.runtime.claim_physical_id(self.name, ident)
        volume = wait_for_volume(self.cloud, ident, self._created, self.runtime.sleep) or {}
        if properties.get("read_only") is not None:
            self._set_read_only(ident, properties["read_only"])
        return Outcome(ident, self._kept(volume))

    def _create_body(self, properties: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's ``_create_arguments`` as cinderclient sends them."""
        volume: dict[str, Any] = {"size": properties.get("size"),
                                  "availability_zone": properties.get("availability_zone") or None,
                                  **names}
        if properties.get("image"):
            volume["imageRef"] = nova.find_image_id(self.cloud, str(properties["image"]))
        for key in ("snapshot_id", "volume_type", "source_volid", "metadata"):
            if properties.get(key) is not None:
                volume[key] = properties[key]
        body: dict[str, Any] = {"volume": volume}
        if properties.get("scheduler_hints"):
            body["OS-SCH-HNT:scheduler_hints"] = properties["scheduler_hints"]
        return body

    def _created(self, volume: Mapping[str, Any] | None) -> bool:
        """Heat's ``check_create_complete``, with Cinder's reason on ``error``."""
        if volume is None:
            raise CloudFailure("the volume went away while it was being created", 404)
        status = volume.get("status")
        if status == "available":
            return True
        if status in _CREATING:
            return False
        if status == "error":
            reason = _user_message(self.cloud, str(volume["id"]))
            raise _failure(f'Went to status error due to "{reason}"', "ResourceInError")
        raise _unknown_status("Volume create failed", status)

    def _kept(self, volume: Mapping[str, Any]) -> dict[str, Any]:
        """The resource data: the attribute values Heat caches when the volume acts
        (all but its CACHE_NONE ones), and the volume type Cinder chose (Heat's
        ``_store_config_default_properties``)."""
        cached = {name: volume_attribute(volume, name) for name in self.attributes_schema
                  if name not in self.live_attributes}
        data: dict[str, Any] = {"attributes": cached}
        if volume.get("volume_type") is not None:
            data["volume_type"] = volume["volume_type"]
        return data

    # -- update -----------------------------------------------------------------------------
    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Heat's ``handle_update`` and ``check_update_complete``, in their order:
        name and description, metadata, retype; then (detached first when the
        change needs it) a restore, the extend, the access mode; attached again."""
        ident, old = current.physical_id, current.properties
        volume = self._live(ident)
        changed = {k: v for k, v in properties.items() if old.get(k) != v}
        # What drifted is put back, as Heat's converge does (a size is never shrunk).
        for key in drifted_volume_keys(properties, volume):
            if key != "size":
                changed.setdefault(key, properties[key])
        if "name" in changed or "description" in changed:
            # A volume named by default keeps the name it has (Heat's physical name is
            # the same each time; an adopted volume's is Heat's, shown by Cinder only).
            default = volume.get("name") if not old.get("name") else None
            names = {"name": properties.get("name") or default or self.runtime.physical_name(self.name),
                     "description": changed.get("description") or old.get("description")}
            cinder(self.cloud, "PUT", f"/volumes/{ident}", {"volume": names})
        if "metadata" in changed:
            cinder(self.cloud, "PUT", f"/volumes/{ident}/metadata", {"metadata": changed["metadata"] or {}})
        if "volume_type" in changed:
            cinder(self.cloud, "POST", f"/volumes/{ident}/action",
                   {"os-retype": {"new_type": changed["volume_type"], "migration_policy": "never"}})
        self._slow_changes(ident, volume, changed)
        return Outcome(ident, {**current.data, **self._kept(self._live(ident))})

    def _slow_changes(self, ident: str, volume: Mapping[str, Any], changed: Mapping[str, Any]) -> None:
        new_size = changed.get("size")
        if new_size is not None and new_size < int(volume.get("size") or 0):
            raise self.fail("Shrinking volume is not supported.", "NotSupported")
        extend = new_size is not None and new_size > int(volume.get("size") or 0)
        detached = "read_only" in changed or "backup_id" in changed or (
            extend and not _supports(self.cloud, EXTEND_IN_USE))
        attachment = (volume.get("attachments") or [None])[0] if detached else None
        if attachment:
            detach(self.cloud, attachment["server_id"], ident, attachment["id"], self.runtime.sleep)
        if "backup_id" in changed:
            self._restore(ident, changed["backup_id"])
        if extend and new_size is not None:
            self._extend(ident, int(new_size))
        if "read_only" in changed:
            self._set_read_only(ident, changed["read_only"])
        if attachment:
            attach(self.cloud, attachment["server_id"], ident, attachment.get("device"))
            wait_attached(self.cloud, ident, self.runtime.sleep)

    def _restore(self, ident: str, backup: str) -> None:
        """Heat's ``_backup_restore`` into this volume, and its wait."""
        try:
            cinder(self.cloud, "POST", f"/backups/{backup}/restore", {"restore": {"volume_id": ident}})
        except CloudFailure as error:
            raise self.fail(f"Failed to restore volume {ident} from backup {backup} - "
                            f"{error.message} (HTTP {error.status})") from None

        def done(volume: Mapping[str, Any] | None) -> bool:
            status = (volume or {}).get("status")
            if status == "restoring-backup":
                return False
            if status != "available":
                raise _unknown_status("Volume backup restore failed", status)
            return True

        wait_for_volume(self.cloud, ident, done, self.runtime.sleep)

    def _extend(self, ident: str, size: int) -> None:
        """Heat's extend: when the volume is ready for it (``available``, or
        ``in-use`` from 3.42), extend it and wait until it no longer is extending."""
        ready = ("available", "in-use") if _supports(self.cloud, EXTEND_IN_USE) else ("available",)
        wait_for_volume(self.cloud, ident, lambda v: (v or {}).get("status") in ready, self.runtime.sleep)
        try:
            cinder(self.cloud, "POST", f"/volumes/{ident}/action", {"os-extend": {"new_size": size}})
        except CloudFailure as error:
            raise self.fail(f"Failed to extend volume {ident} - {error.message} "
                            f"(HTTP {error.status})") from None

        def done(volume: Mapping[str, Any] | None) -> bool:
            status = (volume or {}).get("status")
            if status == "extending":
                return False
            if status not in ready:
                raise _unknown_status("Volume resize failed", status)
            return True

        wait_for_volume(self.cloud, ident, done, self.runtime.sleep)

    def _set_read_only(self, ident: str, flag: bool) -> None:
        cinder(self.cloud, "POST", f"/volumes/{ident}/action", {"os-update_readonly_flag": {"readonly": flag}})

    def _live(self, ident: str) -> Mapping[str, Any]:
        volume = _show_volume(self.cloud, ident)
        if volume is None:
            raise self.fail(f"The Volume ({ident}) could not be found.", "NotFound")
        return volume

    # -- delete -----------------------------------------------------------------------------
    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return _show_volume(self.cloud, ident)

    def handle_delete(self, current: ResourceState) -> None:
        if not current.physical_id:
            for ident in self._unanswered(current):
                self._delete_volume(ident)
            return
        if current.deletion_policy == "Snapshot":
            self.handle_snapshot_delete(current)
            return
        self._delete_volume(current.physical_id)

    def _unanswered(self, current: ResourceState) -> list[str]:
        """The volumes a killed run may have made under the unique name it recorded."""
        name = current.data.get(UNANSWERED_NAME)
        if not name:
            return []
        listed = cinder(self.cloud, "GET", "/volumes", params={"name": str(name)})
        return [str(volume["id"]) for volume in listed.get("volumes") or [] if volume.get("name") == name]

    def handle_snapshot_delete(self, current: ResourceState) -> None:
        """Heat's ``handle_snapshot_delete``: a backup of the volume (none when its
        create or update failed), then the volume deleted; the backup is kept."""
        failed = current.status == "FAILED" and current.action in ("CREATE", "UPDATE")
        if not failed:
            backup = self._create_backup(current.physical_id)
            if backup:
                self._wait_backup(backup)
        self._delete_volume(current.physical_id)

    def _create_backup(self, ident: str) -> str | None:
        """Heat's ``_create_backup``: NotFound (the volume, or a cloud with no
        backup service) means no backup, as in Heat."""
        body = {"backup": {"container": None, "name": None, "description": None, "volume_id": ident,
                           "incremental": False, "force": False}}
        try:
            return str(cinder(self.cloud, "POST", "/backups", body)["backup"]["id"])
        except CloudFailure as error:
            if error.not_found:
                return None
            raise

    def _wait_backup(self, backup: str) -> None:
        """Heat's ``_check_create_backup_complete``: a backup that ends in any
        state but ``available`` fails the delete, and the volume is kept."""
        delay = 0.25
        while True:
            shown = cinder(self.cloud, "GET", f"/backups/{backup}")["backup"]
            status = shown.get("status")
            if status == "available":
                return
            if status != "creating":
                # Heat's words, with Cinder's reason where Heat says "Unknown".
                raise _unknown_status("Volume backup failed", status,
                                      str(shown.get("fail_reason") or "Unknown"))
            self.runtime.sleep(delay)
            delay = min(delay * 1.6, 4.0)

    def _delete_volume(self, ident: str) -> None:
        """Heat's ``_delete_volume`` and its wait: an attached volume is not
        deleted; one being deleted is waited for; NotFound is done."""
        volume = _show_volume(self.cloud, ident)
        if volume is None:
            return
        if volume.get("status") == "in-use":
            raise self.fail("Volume in use")
        if volume.get("status") != "deleting":
            try:
                cinder(self.cloud, "DELETE", f"/volumes/{ident}")
            except CloudFailure as error:
                if error.not_found:
                    return
                raise
        wait_for_volume(self.cloud, ident, _gone, self.runtime.sleep)

    # -- reading ----------------------------------------------------------------------------
    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's ``get_attr``: cached when the volume last acted, except ``show``
        and the CACHE_NONE ones, read from Cinder."""
        cached = state.data.get("attributes") or {}
        if name != "show" and name in cached:
            return cached[name]
        if not state.physical_id:
            return None
        volume = _show_volume(self.cloud, state.physical_id)
        if volume is None:
            return None
        return dict(volume) if name == "show" else volume_attribute(volume, name)

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        if not state.physical_id:
            return {"drifted": None, "msg": "nothing was created yet"}
        volume = _show_volume(self.cloud, state.physical_id)
        if volume is None:
            return {"drifted": True, "changed_keys": [], "diff": {},
                    "msg": f"the volume {state.physical_id} is gone"}
        keys = drifted_volume_keys(state.properties, volume)
        return {"drifted": bool(keys), "changed_keys": keys,
                "diff": {"before": {k: state.properties.get(k) for k in keys},
                         "after": {k: volume.get(k) for k in keys}}}

    def check_healthy(self, state: ResourceState) -> bool:
        volume = _show_volume(self.cloud, state.physical_id) if state.physical_id else None
        return volume is not None and volume.get("status") in ("available", "in-use")

    def needs_replace_failed(self, current: ResourceState) -> bool:
        """Heat's: replaced when it has no id, is gone, or is in error or deleting."""
        if not current.physical_id:
            return True
        volume = _show_volume(self.cloud, current.physical_id)
        return volume is None or volume.get("status") in ("error", "deleting")


def _gone(volume: Mapping[str, Any] | None) -> bool:
    if volume is None:
        return True
    if str(volume.get("status")).lower() == "error_deleting":
        raise _failure('Went to status error_deleting due to "delete"', "ResourceInError")
    return False


def create_sources_error(properties: Mapping[str, Any]) -> str | None:
    """Heat's ``_validate_create_sources``: without a size, exactly one of a
    snapshot or a source volume; with one, at most one source of any kind."""
    exclusive = [key for key in ("snapshot_id", "source_volid", "image", "imageRef") if properties.get(key)]
    no_size_needed = [key for key in ("snapshot_id", "source_volid") if properties.get(key)]
    size = properties.get("size")
    if size is None and (len(no_size_needed) != 1 or len(exclusive) != 1):
        return ('If neither "backup_id" nor "size" is provided, one and only one of "source_volid", '
                f'"snapshot_id" must be specified, but currently specified options: {exclusive}.')
    if size and len(exclusive) > 1:
        return ('If "size" is provided, only one of "image", "imageRef", "source_volid", '
                f'"snapshot_id" can be specified, but currently specified options: {exclusive}.')
    return None


def drifted_volume_keys(properties: Mapping[str, Any], volume: Mapping[str, Any]) -> list[str]:
    """The properties the template set (not null) that Cinder shows otherwise
    (Heat's ``parse_live_resource_data``: size, name, description, metadata)."""
    keys = []
    for key in ("size", "name", "description", "metadata"):
        wanted = properties.get(key)
        if wanted is None or (key == "metadata" and not wanted):
            continue
        shown = volume.get(key)
        if key == "metadata":
            shown = {k: v for k, v in (shown or {}).items() if k in wanted}
            wanted = {k: str(v) for k, v in wanted.items()}
        if wanted != shown:
            keys.append(key)
    return keys


# -- OS::Cinder::VolumeAttachment -----------------------------------------------------------

@register
class VolumeAttachment(CinderResource):
    """OS::Cinder::VolumeAttachment: a volume attached to a server; its id is Nova's
    attachment id (the volume's id).  Any change detaches it and attaches it as the
    new properties say, as Heat's ``handle_update`` does."""

    type_name = "OS::Cinder::VolumeAttachment"
    properties_schema = properties_from_facade(type_name, {
        "instance_uuid": {"update_allowed": True},
        "volume_id": {"update_allowed": True},
        "mountpoint": {"update_allowed": True},
    })
    attributes_schema = attributes_from_facade(type_name, {})
    custom_constraints = {"volume_id": "cinder.volume"}

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        server, volume = str(properties["instance_uuid"]), str(properties["volume_id"])
        # Nova's id of the attachment is the volume's: known before the call, and
        # recorded first, so that a run killed inside the call still knows it.
        with self.making(volume):
            ident = attach(self.cloud, server, volume, properties.get("mountpoint") or None)
        if ident != volume:
            self.runtime.claim_physical_id(self.name, ident)
        wait_attached(self.cloud, volume, self.runtime.sleep)
        return Outcome(ident)

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        old = current.properties
        if dict(old) == dict(properties):
            return Outcome(current.physical_id, current.data)  # Heat acts on a property diff only
        detach(self.cloud, str(old["instance_uuid"]), str(old["volume_id"]), current.physical_id,
               self.runtime.sleep)
        return self.handle_create(properties)

    def handle_delete(self, current: ResourceState) -> None:
        if not current.physical_id:
            return
        old = current.properties
        detach(self.cloud, str(old["instance_uuid"]), str(old["volume_id"]), current.physical_id,
               self.runtime.sleep)

    def attribute(self, state: ResourceState, name: str) -> Any:
        return None  # Heat's attachment has no attributes, and no ``show`` (no entity)

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The volume, when Nova has it attached to the template's server (the
        attachment's id is the volume's)."""
        server = str(properties.get("instance_uuid") or "")
        if not UUID_SHAPE.fullmatch(server) or not _nova_attachment(self.cloud, server, ident):
            return None
        return _show_volume(self.cloud, ident)

    def check_healthy(self, state: ResourceState) -> bool:
        server = state.properties.get("instance_uuid")
        return bool(state.physical_id) and bool(server) and \
            _nova_attachment(self.cloud, str(server), state.physical_id)
