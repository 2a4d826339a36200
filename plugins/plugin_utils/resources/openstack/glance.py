# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Glance::WebImage on Glance's API (v2), as Heat 27's ``GlanceWebImage``
(heat/engine/resources/openstack/glance/image.py): the image record is made, its
data imported by Glance itself from the ``location`` URL (Glance's
``web-download`` import), its members added; the create waits until the image is
``active`` (or, with ``active: false``, deactivates it then); delete deletes it,
NotFound being done.

In place, as Heat, in its order: ``active: false`` (deactivate), ``tags`` (each
added or removed with its own call), then one JSON patch of the image
(``application/openstack-images-v2.1-json-patch``, as glanceclient's
``images.update``) for ``visibility``, ``protected``, ``owner``,
``architecture``, ``os_distro``, ``os_version``, ``kernel_id``, ``ramdisk_id``
and ``extra_properties`` (each set; an extra property taken out of the template
removed), then ``members``, then ``active: true`` (reactivate).
``extra_properties`` are given with the create's record rather than patched on
after it: the image holds the same properties.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ..base import Outcome, PropertySchema, ResourceState, register
from ..properties import allowed_pattern, allowed_values, value_range
from .base import OpenStackResource
from .session import CloudFailure

GLANCE = "image"
# Heat's glance_id_pattern for kernel and ramdisk ids.
_GLANCE_ID = ("^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}"
              "-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$")
_DISK_FORMATS = ("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop")
_CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ovf", "ova", "docker")
# The properties Heat changes with a JSON patch of the image.
_PATCHED = ("protected", "architecture", "kernel_id", "os_distro", "os_version", "owner",
            "extra_properties", "visibility", "ramdisk_id")
# Glance's image update: a JSON patch (RFC 6902) sent as this content type.
JSON_PATCH = "application/openstack-images-v2.1-json-patch"
# Properties of every image: set, never removed.
_CORE = frozenset({"visibility", "protected", "owner", "name", "min_disk", "min_ram",
                   "disk_format", "container_format", "tags"})


@register
class WebImage(OpenStackResource):
    """OS::Glance::WebImage: an image Glance downloads from a URL."""

    type_name = "OS::Glance::WebImage"
    properties_schema = {
        "name": PropertySchema("string", "Name for the image."),
        "id": PropertySchema("string", "The image ID. Glance will generate a UUID if not specified."),
        "min_disk": PropertySchema("integer", "Disk space (GB) required to boot the image.", default=0,
                                   constraints=(value_range(min=0),)),
        "min_ram": PropertySchema("integer", "RAM (MB) required to boot the image.", default=0,
                                  constraints=(value_range(min=0),)),
        "protected": PropertySchema("boolean", "Whether the image cannot be deleted.", default=False,
                                    update_allowed=True),
        "disk_format": PropertySchema("string", "Disk format of image.", required=True,
                                      constraints=(allowed_values(*_DISK_FORMATS),)),
        "container_format": PropertySchema("string", "Container format of image.", required=True,
                                           constraints=(allowed_values(*_CONTAINER_FORMATS),)),
        "location": PropertySchema("string", "URL where the data for this image already resides.",
                                   required=True),
        "tags": PropertySchema("list", "List of image tags.", update_allowed=True),
        "architecture": PropertySchema("string", "Operating system architecture.", update_allowed=True),
        "kernel_id": PropertySchema("string", "ID of the kernel image of an AMI-style image.",
                                    update_allowed=True, constraints=(allowed_pattern(_GLANCE_ID),)),
        "os_distro": PropertySchema("string", "The operating system distribution.", update_allowed=True),
        "os_version": PropertySchema("string", "Operating system version.", update_allowed=True),
        "owner": PropertySchema("string", "Owner of the image.", update_allowed=True),
        "extra_properties": PropertySchema("map", "Arbitrary properties of the image.", default={},
                                           update_allowed=True),
        "visibility": PropertySchema("string", "Scope of image accessibility.", default="private",
                                     update_allowed=True, constraints=(
                                         allowed_values("public", "private", "community", "shared"),)),
        "ramdisk_id": PropertySchema("string", "ID of the ramdisk image of an AMI-style image.",
                                     update_allowed=True, constraints=(allowed_pattern(_GLANCE_ID),)),
        "active": PropertySchema("boolean", "Activate or deactivate the image.", default=True,
                                 update_allowed=True),
        "members": PropertySchema("list", "Projects (or users) permitted to read the image.",
                                  update_allowed=True, schema=PropertySchema("string")),
    }
    attributes_schema: ClassVar[Mapping[str, Any]] = {}

    def validate(self, properties: Mapping[str, Any]) -> None:
        """Heat's ``GlanceWebImage.validate``, in its order."""
        where = f"resources.{self.name}"
        container = properties.get("container_format")
        if container in ("ami", "ari", "aki") and properties.get("disk_format") != container:
            raise self.refuse("Invalid mix of disk and container formats. When setting a disk or "
                              "container format to one of 'aki', 'ari', or 'ami', the container "
                              "and disk formats must match.", where)
        if properties.get("members") and properties.get("visibility") != "shared":
            raise self.refuse("members property should only be specified for visibility with value "
                              "shared.", where)

    # -- create -----------------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        record = {k: v for k, v in properties.items()
                  if v is not None and k not in ("extra_properties", "members", "active", "location")}
        record.update(properties.get("extra_properties") or {})
        created = self._call("POST", "/images", record)
        ident = str(created["id"])
        # Recorded before the import: a run killed now still knows what it made.
        self.runtime.claim_physical_id(self.name, ident)
        self._call("POST", f"/images/{ident}/import",
                   {"method": {"name": "web-download", "uri": properties["location"]}})
        for member in properties.get("members") or []:
            self._call("POST", f"/images/{ident}/members", {"member": member})
        self._wait_imported(ident, bool(properties.get("active", True)))
        return Outcome(ident)

    def _wait_imported(self, ident: str, active: bool) -> None:
        """Heat's ``check_create_complete``, and an import Glance gave up on (its
        ``os_glance_failed_import`` store list) fails at once where Heat would
        wait until its timeout."""
        delay = 0.25
        while True:
            image = self._show(ident) or {}
            status = image.get("status")
            if status == "killed":
                raise self.fail('Went to status killed due to "Unknown"', "ResourceInError")
            if image.get("os_glance_failed_import") and not image.get("os_glance_importing_to_stores"):
                raise self.fail(f"Glance could not import the image from its location (stores "
                                f"{image['os_glance_failed_import']}): status {status}",
                                "ResourceInError")
            if status == "active" and not active:
                self._call("POST", f"/images/{ident}/actions/deactivate")
                return
            if status == "active" or (status == "deactivated" and not active):
                return
            self.runtime.sleep(delay)
            delay = min(delay * 1.6, 4.0)

    # -- update -----------------------------------------------------------------------------
    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Heat's ``handle_update``: deactivate, tags, the patch, members, reactivate."""
        ident, old = current.physical_id, current.properties
        changed = {k: v for k, v in properties.items() if old.get(k) != v}
        if changed.get("active") is False:
            self._call("POST", f"/images/{ident}/actions/deactivate")
        if "tags" in changed:
            self._retag(ident, old.get("tags") or [], changed["tags"] or [])
        if any(key in _PATCHED for key in changed):
            patch = image_patch(self._show(ident) or {}, old, changed)
            if patch:
                self.cloud.request(GLANCE, "PATCH", f"/images/{ident}", patch, content_type=JSON_PATCH)
        if "members" in changed:
            self._remember_members(ident, old.get("members") or [], changed["members"] or [])
        if changed.get("active") is True:
            self._call("POST", f"/images/{ident}/actions/reactivate")
        return Outcome(ident, current.data)

    def _retag(self, ident: str, before: list[str], after: list[str]) -> None:
        for tag in sorted(set(after) - set(before)):
            self._call("PUT", f"/images/{ident}/tags/{tag}")
        for tag in sorted(set(before) - set(after)):
            self._gone_is_fine("DELETE", f"/images/{ident}/tags/{tag}")

    def _remember_members(self, ident: str, before: list[str], after: list[str]) -> None:
        for member in sorted(set(after) - set(before)):
            self._call("POST", f"/images/{ident}/members", {"member": member})
        for member in sorted(set(before) - set(after)):
            self._gone_is_fine("DELETE", f"/images/{ident}/members/{member}")

    # -- delete -----------------------------------------------------------------------------
    def handle_delete(self, current: ResourceState) -> None:
        if current.physical_id:
            self._gone_is_fine("DELETE", f"/images/{current.physical_id}")

    # -- reading ----------------------------------------------------------------------------
    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's WebImage has ``show`` only: the image as Glance shows it."""
        if name != "show" or not state.physical_id:
            return None
        image = self._show(state.physical_id)
        return dict(image) if image is not None else None

    def check_healthy(self, state: ResourceState) -> bool:
        image = self._show(state.physical_id) if state.physical_id else None
        return image is not None and image.get("status") not in ("deleted", "killed")

    def needs_replace_failed(self, current: ResourceState) -> bool:
        return not self.check_healthy(current)

    # -- the API ----------------------------------------------------------------------------
    def _call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        return self.cloud.request(GLANCE, method, path, body)

    def _gone_is_fine(self, method: str, path: str) -> None:
        try:
            self._call(method, path)
        except CloudFailure as error:
            if not error.not_found:
                raise

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self._show(ident)

    def _show(self, ident: str) -> Mapping[str, Any] | None:
        try:
            image: Mapping[str, Any] = self._call("GET", f"/images/{ident}")
            return image
        except CloudFailure as error:
            if error.not_found:
                return None
            raise


def image_patch(live: Mapping[str, Any], old: Mapping[str, Any], changed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """glanceclient's ``images.update`` as Heat calls it: the changed properties
    set (``extra_properties`` merged in; one taken out of the template removed,
    unless set again), as the JSON patch turning the image Glance has into that
    one: ``add`` for a property it lacks, ``replace`` for one it holds otherwise,
    ``remove`` for one taken out (or given no value: Glance takes no null for most)."""
    wanted = {key: value for key, value in changed.items() if key in _PATCHED and key != "extra_properties"}
    removed: list[str] = []
    if "extra_properties" in changed:
        extra = dict(changed["extra_properties"] or {})
        wanted.update(extra)
        removed = sorted(set(old.get("extra_properties") or {}) - set(wanted))
    patch: list[dict[str, Any]] = []
    for key, value in wanted.items():
        path = _pointer(key)
        if value is None:
            if key in live and key not in _CORE:
                patch.append({"op": "remove", "path": path})
        elif key not in live:
            patch.append({"op": "add", "path": path, "value": value})
        elif live[key] != value:
            patch.append({"op": "replace", "path": path, "value": value})
    patch.extend({"op": "remove", "path": _pointer(key)} for key in removed if key in live)
    return patch


def _pointer(key: str) -> str:
    """A JSON pointer to a top-level key (RFC 6901's escapes)."""
    return "/" + str(key).replace("~", "~0").replace("/", "~1")
