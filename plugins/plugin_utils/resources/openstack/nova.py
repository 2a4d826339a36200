# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Nova::* on Nova's API (v2.1), as Heat 27's resource plugins use it
(heat/engine/resources/openstack/nova/): the physical id is Nova's id (a key
pair's is its name), requests are Heat's, attributes are read live in Heat's
shapes.

- **Microversion**: negotiated once per run as Heat does: the newest the cloud
  offers, capped at novaclient's newest (2.96), which Heat's client cannot pass.
  It is sent per call, so no other type's calls change.
- **Server create** waits for ACTIVE (shared polls: one ``GET /servers/detail``
  for every server being waited for) and fails with the server's fault on ERROR.
  A server naming no ``networks`` is created the way a Heat whose operator set
  ``max_nova_api_microversion = 2.36`` creates it (Heat's own rule sends no
  networks, which Nova refuses from 2.37 on): that one call is made at 2.36, and
  Nova puts the server on the project's network, as before 2.37.
- **Server update in place**, in Heat's order: metadata (one call: only the keys
  that changed, or the whole set when a key goes), tags, name, ``admin_pass``,
  ``networks`` (interfaces detached and attached as Heat's
  ``ServerNetworkMixin`` decides: server_networks.py), flavor (resize and
  confirm, ``flavor_update_policy: RESIZE``), image (rebuild,
  ``image_update_policy: REBUILD*``); anything else replaces it.
  A replacement detaches the pre-made ports (``networks[].port``) from the old
  server first, and a rollback that swaps the old server back gives them back
  (Heat's ``prepare_for_replace`` and ``restore_prev_rsrc``).
- **Delete** waits until Nova no longer lists the server; NotFound is done.
- Heat's custom constraints ``nova.flavor``, ``nova.keypair``, ``nova.server``
  and ``glance.image``, with Heat's messages.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar
from urllib.parse import quote

from ...errors import StackValidationFailed
from ..base import AttributeSchema, Outcome, PropertySchema, ResourceState, register
from ..properties import allowed_values, length
from .base import OpenStackResource, _values_at, attributes_from_facade, properties_from_facade
from .constraints import NEUTRON_KINDS, NotFoundByNameOrId, check_custom_constraint, find_neutron_id
from .server_networks import Entry, NetworksChange, calculate_networks, interface_entry, port_extra_body
from .session import CloudFailure, CloudSession
from .user_data import encoded_user_data, server_user_data

COMPUTE = "compute"
IMAGE_SERVICE = "image"
NEUTRON = "network"
# novaclient's API_MAX_VERSION: Heat asks for no newer microversion than its client knows.
NOVACLIENT_MAX = (2, 96)
# The last microversion at which Nova chooses the networks of a server that names none.
LEGACY_NETWORKS = "2.36"
_UUID_LIKE = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")
# Servers per page of the shared polls' list.  Nova shows a page's servers with
# their security groups, which it asks Neutron for by device id, 150 servers a
# query: pages as long as Nova allows (1000) made that query ~7 KB long once a
# project held 150 servers, more than some front ends take (the test cloud's
# gunicorn takes 4 KB: the poll answered 500 from ~90 servers on).  A page of 50
# keeps it under 2.5 KB; a page shorter than this is the last.
_PAGE = 50
# Statuses a server passes through on its way to ACTIVE (Heat's deferred_server_statuses).
_DEFERRED = frozenset({"BUILD", "HARD_REBOOT", "PASSWORD", "REBOOT", "RESCUE", "RESIZE",
                       "REVERT_RESIZE", "SHUTOFF", "SUSPENDED", "VERIFY_RESIZE"})


# Heat's ``max_server_name_length`` (default and maximum): a server's default name is
# cut to it, so that the host name with ``.novalocal`` fits Linux's 64 characters.
MAX_SERVER_NAME_LENGTH = 53


def reduced_name(name: str, limit: int) -> str:
    """Heat's ``reduce_physical_resource_name``: a name longer than ``limit`` keeps its
    first two characters, a hyphen and the end that fits."""
    if len(name) <= limit:
        return name
    return name[:2] + "-" + name[-(limit - 3):]


# -- the microversion ---------------------------------------------------------------------------

def _version(text: str) -> tuple[int, int]:
    major, minor = str(text).split(".", 1)
    return int(major), int(minor)


def nova_microversion(cloud: CloudSession) -> str:
    """The microversion of the run's Nova calls (Heat's ``get_max_microversion``)."""
    def negotiate() -> str:
        answer = cloud.request(COMPUTE, "GET", "/") or {}
        newest = _version((answer.get("version") or {}).get("version") or "2.1")
        major, minor = min(newest, NOVACLIENT_MAX)
        return f"{major}.{minor}"

    return cloud.remember(("nova", "microversion"), negotiate)


def supports(cloud: CloudSession, version: str) -> bool:
    return _version(nova_microversion(cloud)) >= _version(version)


def nova(cloud: CloudSession, method: str, path: str, body: Mapping[str, Any] | None = None,
         params: Any = None, microversion: str | None = None) -> Any:
    """One call to Nova at the run's microversion (or the one given)."""
    return cloud.request(COMPUTE, method, path, body, params,
                         microversion=microversion or nova_microversion(cloud))


# -- lookups and custom constraints ---------------------------------------------------------------

class NotFoundInCloud(CloudFailure):
    """A lookup by name or id found nothing, or several."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 404)


def find_flavor_id(cloud: CloudSession, flavor: str) -> str:
    """novaclient's ``get_flavor``: an id first, then the one flavor of that name."""
    def find() -> str:
        try:
            return str(nova(cloud, "GET", f"/flavors/{quote(flavor, safe='')}")["flavor"]["id"])
        except CloudFailure as error:
            if not error.not_found:
                raise
        listed = nova(cloud, "GET", "/flavors/detail")["flavors"]
        same = [item for item in listed if item.get("name") == flavor]
        if len(same) != 1:
            raise NotFoundInCloud(f"No Flavor matching {{'name': '{flavor}'}}. (HTTP 404)" if not same
                                  else f"Multiple Flavor matches found for name '{flavor}'")
        return str(same[0]["id"])

    return cloud.remember(("nova", "flavor", flavor), find)


def find_image_id(cloud: CloudSession, image: str) -> str:
    """Heat's glance ``get_image``: an id first (when it looks like one), then the
    one image of that name."""
    def find() -> str:
        if _UUID_LIKE.match(image):
            try:
                return str(cloud.request(IMAGE_SERVICE, "GET", f"/images/{image}")["id"])
            except CloudFailure as error:
                if not error.not_found:
                    raise
        listed = cloud.request(IMAGE_SERVICE, "GET", "/images", params={"name": image})["images"]
        if not listed:
            raise NotFoundInCloud(f"No images matching {{'name': '{image}'}}.")
        if len(listed) > 1:
            raise NotFoundInCloud(f"No images unique match found for {{'name': '{image}'}}.")
        return str(listed[0]["id"])

    return cloud.remember(("glance", "image", image), find)


def _show_keypair(cloud: CloudSession, name: str) -> Mapping[str, Any]:
    try:
        keypair: Mapping[str, Any] = nova(cloud, "GET", f"/os-keypairs/{quote(name, safe='')}")["keypair"]
        return keypair
    except CloudFailure as error:
        if error.not_found:
            raise NotFoundInCloud(f"The Key ({name}) could not be found.") from None
        raise


def _check_server(cloud: CloudSession, server: str) -> None:
    try:
        nova(cloud, "GET", f"/servers/{quote(server, safe='')}")
    except CloudFailure as error:
        if error.not_found:
            raise NotFoundInCloud(f"The Server ({server}) could not be found.") from None
        raise


# Heat's custom constraint name -> the check (a value that fails raises NotFoundInCloud).
NOVA_CONSTRAINTS: Mapping[str, Callable[[CloudSession, str], Any]] = {
    "nova.flavor": find_flavor_id,
    "nova.keypair": lambda cloud, name: _show_keypair(cloud, name) if name else None,
    "nova.server": _check_server,
    "glance.image": find_image_id,
}


def check_nova_constraint(cloud: CloudSession, constraint: str, value: Any, path: str) -> None:
    """Heat's ``CustomConstraint`` of Nova and Glance (others: constraints.py)."""
    check = NOVA_CONSTRAINTS.get(constraint)
    if check is None:
        check_custom_constraint(cloud, constraint, value, path)
        return
    if value is None:
        return
    try:
        check(cloud, str(value))
    except NotFoundInCloud as error:
        raise StackValidationFailed(
            f"Property error: {path}: Error validating value '{value}': {error.message}") from None


class NovaResource(OpenStackResource):
    """What the OS::Nova types share: calls at the run's microversion, and the
    Nova and Glance constraints."""

    def validate_with_cloud(self, properties: Mapping[str, Any], path: str) -> None:
        for name, constraint in self.custom_constraints.items():
            for where, value in _values_at(properties, name, path):
                check_nova_constraint(self.cloud, constraint, value, where)

    def _nova(self, method: str, path: str, body: Mapping[str, Any] | None = None,
              params: Any = None, microversion: str | None = None) -> Any:
        return nova(self.cloud, method, path, body, params, microversion)

    def _gone_is_fine(self, call: Callable[[], Any]) -> None:
        try:
            call()
        except CloudFailure as error:
            if not error.not_found:
                raise

    def _shown(self, path: str, key: str, params: Any = None) -> Mapping[str, Any] | None:
        """What Nova shows at ``path`` (under ``key``); None when there is nothing."""
        try:
            shown: Mapping[str, Any] = self._nova("GET", path, params=params)[key]
        except CloudFailure as error:
            if error.not_found:
                return None
            raise
        return shown


# The resource data key of the name a server is being made under (one Heat generated),
# until Nova's answer gives its id.
UNANSWERED_SERVER = "creating_server_name"
# The resource data key of the port last asked of Neutron for a ``subnet`` entry: its
# name (Heat's ``<resource>-port-<n>``), network and when it was asked for.
UNANSWERED_PORT = "creating_port"
# How far Neutron's clock may be behind the controller's, for such a port.
_CLOCK_SLACK = datetime.timedelta(seconds=30)


def _made_at(port: Mapping[str, Any]) -> datetime.datetime:
    """When Neutron made the port (its ``created_at``, UTC); long ago when it does not say."""
    try:
        made = datetime.datetime.fromisoformat(str(port.get("created_at")))
    except ValueError:
        return datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    return made if made.tzinfo else made.replace(tzinfo=datetime.timezone.utc)


def _failure(message: str, error_type: str) -> CloudFailure:
    failure = CloudFailure(message)
    failure.error_type = error_type
    return failure


# -- OS::Nova::Server: schema ---------------------------------------------------------------------

_BDM = PropertySchema("map", schema={
    "device_name": PropertySchema("string", required=True),
    "volume_id": PropertySchema("string"),
    "snapshot_id": PropertySchema("string"),
    "volume_size": PropertySchema("integer"),
    "delete_on_termination": PropertySchema("boolean"),
})
_BDM_V2 = PropertySchema("map", schema={
    "device_name": PropertySchema("string"),
    "volume_id": PropertySchema("string"),
    "image_id": PropertySchema("string"),  # hidden: Heat's REPLACE rule makes it ``image``
    "image": PropertySchema("string"),
    "snapshot_id": PropertySchema("string"),
    "swap_size": PropertySchema("integer"),
    "ephemeral_size": PropertySchema("integer"),
    "ephemeral_format": PropertySchema("string", constraints=(
        allowed_values("ext2", "ext3", "ext4", "xfs", "ntfs"),)),
    "device_type": PropertySchema("string", constraints=(allowed_values("cdrom", "disk"),)),
    "disk_bus": PropertySchema("string", constraints=(
        allowed_values("ide", "lame_bus", "scsi", "usb", "virtio"),)),
    "boot_index": PropertySchema("integer"),
    "volume_size": PropertySchema("integer"),
    "delete_on_termination": PropertySchema("boolean"),
    "volume_type": PropertySchema("string"),
})
_NETWORK = PropertySchema("map", schema={
    "uuid": PropertySchema("string"),  # hidden: Heat's REPLACE rule makes it ``network``
    "network": PropertySchema("string"),
    "allocate_network": PropertySchema("string", update_allowed=True,
                                       constraints=(allowed_values("none", "auto"),)),
    "fixed_ip": PropertySchema("string"),
    "port": PropertySchema("string"),
    "port_extra_properties": PropertySchema("map", update_allowed=True),
    "subnet": PropertySchema("string"),
    "floating_ip": PropertySchema("string"),
    "tag": PropertySchema("string"),
})
_SERVER_PROPERTIES: dict[str, dict[str, Any]] = {
    "name": {"update_allowed": True},
    "image": {"update_allowed": True},
    "block_device_mapping": {"schema": _BDM},
    "block_device_mapping_v2": {"schema": _BDM_V2},
    "flavor": {"update_allowed": True},
    "flavor_update_policy": {"default": "RESIZE", "update_allowed": True,
                             "constraints": (allowed_values("RESIZE", "REPLACE"),)},
    "image_update_policy": {"default": "REBUILD", "update_allowed": True, "constraints": (
        allowed_values("REBUILD", "REPLACE", "REBUILD_PRESERVE_EPHEMERAL"),)},
    "security_groups": {"default": []},
    "networks": {"update_allowed": True, "schema": _NETWORK},
    "metadata": {"default": {}, "update_allowed": True},
    "user_data_format": {"default": "HEAT_CFNTOOLS", "constraints": (
        allowed_values("HEAT_CFNTOOLS", "RAW", "SOFTWARE_CONFIG"),)},
    "software_config_transport": {"default": "POLL_SERVER_CFN", "update_allowed": True,
                                  "constraints": (allowed_values(
                                      "POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL",
                                      "ZAQAR_MESSAGE"),)},
    "user_data_update_policy": {"default": "REPLACE", "update_allowed": True,
                                "constraints": (allowed_values("REPLACE", "IGNORE", "REBUILD"),)},
    "user_data": {"default": "", "update_allowed": True},
    "diskConfig": {"constraints": (allowed_values("AUTO", "MANUAL"),)},
    "personality": {"default": {}},
    "admin_pass": {"update_allowed": True},
    "tags": {"update_allowed": True, "schema": PropertySchema("string")},
    "deployment_swift_data": {"default": {}, "update_allowed": True},
}


def translated_server_properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    """Heat's REPLACE rule of block_device_mapping_v2: a mapping's hidden
    ``image_id`` is its ``image`` (``networks[].uuid`` is the facade's rule)."""
    values = dict(properties)
    mappings = values.get("block_device_mapping_v2")
    if isinstance(mappings, list):
        moved = []
        for item in mappings:
            if isinstance(item, Mapping) and item.get("image_id") is not None:
                if item.get("image") not in (None, ""):
                    raise StackValidationFailed(
                        "Cannot define the following properties at the same time: "
                        "block_device_mapping_v2.image, block_device_mapping_v2.image_id")
                item = {**item, "image": item["image_id"], "image_id": None}
            moved.append(item)
        values["block_device_mapping_v2"] = moved
    return values


def _network_id_of(entry: Mapping[str, Any]) -> Any:
    return entry.get("network") if entry.get("network") is not None else entry.get("uuid")


def server_validation_errors(name: str, properties: Mapping[str, Any]) -> list[str]:
    """Heat's ``Server.validate`` checks that need no cloud, in its order; the
    messages Heat gives (empty: valid)."""
    errors = []
    if properties.get("block_device_mapping") and properties.get("block_device_mapping_v2"):
        errors.append("Cannot define the following properties at the same time: "
                      "block_device_mapping, block_device_mapping_v2.")
    bootable = any(m.get("volume_id") or m.get("snapshot_id") or m.get("image")
                   for m in (properties.get("block_device_mapping") or [])
                   + (properties.get("block_device_mapping_v2") or []))
    if not properties.get("image") and not bootable:
        errors.append(f"Neither image nor bootable volume is specified for instance {name}")
    networks = properties.get("networks") or []
    for entry in networks:
        errors.extend(_network_errors(name, entry))
    if any(entry.get("allocate_network") for entry in networks) and len(networks) != 1:
        errors.append('Property "allocate_network" can not be specified if multiple network '
                      "interfaces set for server.")
    if any(entry.get("port") is not None for entry in networks) and properties.get("security_groups"):
        errors.append("Cannot define the following properties at the same time: "
                      "security_groups, networks/port.")
    if properties.get("personality"):
        errors.append("Cannot use the personality parameter as nova no longer supports it. "
                      "Use user_data instead.")
    return errors


def _network_errors(server: str, entry: Mapping[str, Any]) -> list[str]:
    """Heat's ``_validate_network``."""
    network, port, subnet = _network_id_of(entry), entry.get("port"), entry.get("subnet")
    allocate = entry.get("allocate_network")
    if network is None and port is None and subnet is None and not allocate:
        return ['One of the properties "network", "port", "allocate_network" or "subnet" should '
                f'be set for the specified network of server "{server}".']
    if allocate and len([k for k, v in entry.items() if v is not None]) != 1:
        return ['Can not specify "allocate_network" with other keys of networks at the same time.']
    if entry.get("fixed_ip") and port is not None:
        return ["Cannot define the following properties at the same time: "
                "networks/fixed_ip, networks/port."]
    if entry.get("floating_ip") is not None and network is not None and port is None \
            and subnet is None and not entry.get("port_extra_properties"):
        return ['Property "floating_ip" is not supported if only "network" is specified, because '
                "the corresponding port can not be retrieved."]
    return []


def serialized_metadata(metadata: Mapping[str, Any] | None) -> dict[str, str]:
    """Heat's ``meta_serialize``: values that are not text are sent as JSON."""
    return {str(key): value if isinstance(value, str) else json.dumps(value)
            for key, value in (metadata or {}).items()}


def metadata_change(live: Mapping[str, str], wanted: Mapping[str, str]) -> tuple[str, dict[str, str]] | None:
    """The one call that makes Nova's metadata ``wanted``: ``("POST", changed
    keys)`` when keys are only added or changed, ``("PUT", all)`` when one goes;
    None when nothing differs.  (Heat deletes each removed key, then posts all.)"""
    if set(live) - set(wanted):
        return "PUT", dict(wanted)
    changed = {key: value for key, value in wanted.items() if live.get(key) != value}
    return ("POST", changed) if changed else None


def server_replacement_reason(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Heat's ``needs_replace_with_prop_diff`` (``networks`` change in place)."""
    def changed(key: str) -> bool:
        return old.get(key) != new.get(key)

    def policy(key: str) -> Any:
        return new.get(key) or old.get(key)

    if changed("flavor") and policy("flavor_update_policy") == "REPLACE":
        return "property flavor changed and flavor_update_policy is REPLACE"
    if changed("image") and policy("image_update_policy") == "REPLACE":
        return "property image changed and image_update_policy is REPLACE"
    if changed("user_data") and policy("user_data_update_policy") == "REPLACE":
        return "property user_data changed and user_data_update_policy is REPLACE"
    return None


# -- OS::Nova::Server ---------------------------------------------------------------------------------

@register
class Server(NovaResource):
    """OS::Nova::Server: a Nova server."""

    type_name = "OS::Nova::Server"
    properties_schema = properties_from_facade(type_name, _SERVER_PROPERTIES)
    attributes_schema = attributes_from_facade(type_name, {
        "addresses": "map", "networks": "map", "console_urls": "map", "tags": "list",
        "os_collect_config": "map"})
    custom_constraints = {"image": "glance.image", "flavor": "nova.flavor",
                          "key_name": "nova.keypair", "networks.network": "neutron.network",
                          "networks.uuid": "neutron.network", "networks.port": "neutron.port",
                          "networks.subnet": "neutron.subnet",
                          "block_device_mapping_v2.image": "glance.image"}
    port_list_data = frozenset({"internal_ports"})  # Heat's shape when adopted and exported

    # -- validation ---------------------------------------------------------------------------------
    def validate(self, properties: Mapping[str, Any]) -> None:
        errors = server_validation_errors(self.name, translated_server_properties(properties))
        if errors:
            raise self.refuse(errors[0], f"resources.{self.name}")

    def secret_paths(self, properties: Mapping[str, Any]) -> list[tuple[str, ...]]:
        return [("admin_pass",)]

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        return super().replacement_reason(old, new) or server_replacement_reason(old, new)

    # -- create ------------------------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        properties = translated_server_properties(properties)
        internal: list[str] = []
        name = properties.get("name")
        if not name:
            # Heat's unique name, recorded before anything is made: a run killed while
            # Nova makes the server (its id not yet answered) leaves a server that the
            # next run finds by this name, and deletes (handle_delete).
            name = self._default_name()
            self.runtime.note_data(self.name, UNANSWERED_SERVER, name)
        body, microversion = self._create_body(properties, name, internal)
        request: dict[str, Any] = {"server": body}
        if properties.get("scheduler_hints"):
            # novaclient sends the hints beside the server, not in it.
            request["os:scheduler_hints"] = dict(properties["scheduler_hints"])
        try:
            created = self._nova("POST", "/servers", request, microversion=microversion)
        except CloudFailure:
            self._delete_ports(internal)
            raise
        # Only the id: the answer also holds the password Nova made for the server.
        ident = str(created["server"]["id"])
        self.runtime.claim_physical_id(self.name, ident)
        live = self._wait_active(ident)
        if properties.get("tags"):
            self._nova("PUT", f"/servers/{ident}/tags", {"tags": list(properties["tags"])})
        self._associate_floating_ips(properties.get("networks") or [], internal)
        return Outcome(ident, {"internal_ports": internal,
                               "attributes": {"name": (live or {}).get("name", name)}})

    def _create_body(self, properties: Mapping[str, Any], name: str,
                     internal: list[str]) -> tuple[dict[str, Any], str | None]:
        """The server's create request (novaclient's ``_boot``, as Heat calls it),
        and the microversion to send it at (None: the run's)."""
        body: dict[str, Any] = {
            "name": name,
            "imageRef": find_image_id(self.cloud, properties["image"]) if properties.get("image") else "",
            "flavorRef": find_flavor_id(self.cloud, properties["flavor"]),
            "min_count": 1, "max_count": 1,
        }
        optional = {"key_name": properties.get("key_name"),
                    "availability_zone": properties.get("availability_zone"),
                    "config_drive": properties.get("config_drive"),
                    "OS-DCF:diskConfig": properties.get("diskConfig"),
                    "reservation_id": properties.get("reservation_id"),
                    "adminPass": properties.get("admin_pass") or None}
        body.update({key: value for key, value in optional.items() if value is not None})
        if properties.get("metadata"):
            body["metadata"] = serialized_metadata(properties["metadata"])
        user_data = self._user_data(properties)
        if user_data:
            body["user_data"] = user_data
        if properties.get("security_groups"):
            body["security_groups"] = [{"name": group} for group in properties["security_groups"]]
        if properties.get("block_device_mapping"):
            body["block_device_mapping"] = block_device_mapping(properties["block_device_mapping"])
        if properties.get("block_device_mapping_v2"):
            body["block_device_mapping_v2"] = [
                self._bdm_v2(item) for item in properties["block_device_mapping_v2"]]
        networks = properties.get("networks") or []
        microversion = None
        if networks:
            body["networks"] = self._nics(networks, properties.get("security_groups") or [], internal)
        elif supports(self.cloud, "2.37"):
            if any(m.get("volume_type") for m in properties.get("block_device_mapping_v2") or []):
                body["networks"] = "auto"  # volume_type needs 2.67: Nova's nearest choice
            else:
                microversion = LEGACY_NETWORKS
        return body, microversion

    def _bdm_v2(self, item: Mapping[str, Any]) -> dict[str, Any]:
        mapping = block_device_mapping_v2_item(item)
        if item.get("image"):
            mapping["uuid"] = find_image_id(self.cloud, str(item["image"]))
        return mapping

    def _nics(self, networks: Sequence[Mapping[str, Any]], security_groups: Sequence[str],
              internal: list[str]) -> Any:
        """Heat's ``_build_nics``: an ``allocate_network`` string, or one entry per
        network (a pre-made port, a port made for a subnet, or a network)."""
        for entry in networks:
            if entry.get("allocate_network"):
                return entry["allocate_network"]
        nics = []
        for index, entry in enumerate(networks):
            nic: dict[str, Any] = {}
            network = _network_id_of(entry)
            if entry.get("port"):
                nic["port"] = self._neutron_id("port", entry["port"])
            elif entry.get("subnet") or entry.get("port_extra_properties"):
                port = self._internal_port(entry, index, security_groups)
                internal.append(port)
                # Recorded as Neutron answers, as Heat does: a run killed from now on
                # leaves no port that the stack does not know.
                self.runtime.note_data(self.name, "internal_ports", list(internal))
                nic["port"] = port
            else:
                nic["uuid"] = self._neutron_id("network", network)
                if entry.get("fixed_ip"):
                    nic["fixed_ip"] = entry["fixed_ip"]
            if entry.get("tag"):
                nic["tag"] = entry["tag"]
            nics.append(nic)
        return nics

    def _neutron_id(self, kind: str, value: Any) -> str:
        if _UUID_LIKE.match(str(value)):
            return str(value)
        return find_neutron_id(self.cloud, NEUTRON_KINDS[kind], str(value))

    def _internal_port(self, entry: Mapping[str, Any], index: int,
                       security_groups: Sequence[str]) -> str:
        """Heat's ``_create_internal_port``: a port the server owns, named
        ``<resource>-port-<index>``, on the entry's subnet (and fixed_ip)."""
        network = _network_id_of(entry)
        subnet = self._neutron_id("subnet", entry["subnet"]) if entry.get("subnet") else None
        if network is None and subnet is not None:
            shown = self.cloud.request(NEUTRON, "GET", f"/subnets/{subnet}")["subnet"]
            network_id = str(shown["network_id"])
        else:
            network_id = self._neutron_id("network", network)
        port: dict[str, Any] = {"network_id": network_id, "name": f"{self.name}-port-{index}"}
        fixed = {k: v for k, v in (("subnet_id", subnet), ("ip_address", entry.get("fixed_ip"))) if v}
        if fixed:
            port["fixed_ips"] = [fixed]
        if security_groups:
            port["security_groups"] = [self._neutron_id("security_group", g) for g in security_groups]
        port.update(port_extra_body(entry.get("port_extra_properties")))
        # Heat's name is not unique: the port a run killed now leaves is found by its
        # name, on its network, made since it was asked for (_unanswered_ports).
        self.runtime.note_data(self.name, UNANSWERED_PORT, {
            "name": port["name"], "network_id": network_id,
            "asked_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
        made = self.cloud.request(NEUTRON, "POST", "/ports", {"port": port})["port"]
        return str(made["id"])

    def _without_creation_notes(self, current: ResourceState) -> ResourceState:
        """What a create or an update that did not finish noted as it went, settled:
        a port it asked Neutron for and never heard of is deleted (the record never
        had it); the server itself has its id."""
        notes = {UNANSWERED_PORT, UNANSWERED_SERVER}
        if not notes & set(current.data):
            return current
        self._delete_ports(self._unanswered_ports(current, current.data.get("internal_ports") or []))
        return replace(current, data={k: v for k, v in current.data.items() if k not in notes})

    def _unanswered_ports(self, current: ResourceState, known: Sequence[str],
                          freed: Sequence[str] = ()) -> list[str]:
        """The ports named, on the network, as the last one a run asked Neutron for
        (for a ``subnet`` entry), made since then and not among ``known``: the one a
        run killed before Neutron's answer made.  A port bound to a server is
        another's (the server a later attempt made, found by its own row), unless
        that server is one of ``freed``, which this delete took down."""
        asked = current.data.get(UNANSWERED_PORT)
        if not isinstance(asked, Mapping):
            return []
        since = datetime.datetime.fromisoformat(str(asked["asked_at"])) - _CLOCK_SLACK
        listed = self.cloud.request(NEUTRON, "GET", "/ports", params={
            "name": str(asked["name"]), "network_id": str(asked["network_id"])})
        # Heat's port names repeat: the port of the resource that replaces this one
        # has the same name, network and age, and its record knows it.
        taken = {*known, *self._ports_of_the_stack()}
        return [str(port["id"]) for port in listed.get("ports") or []
                if port["id"] not in taken and _made_at(port) >= since
                and (not port.get("device_id") or port["device_id"] in freed)]

    def _ports_of_the_stack(self) -> set[str]:
        """The ports the stack's servers (live, or replaced and not deleted yet)
        record as made for them: each row deletes its own."""
        store, stack = self.runtime.store, self.runtime.stack_id
        return {str(port) for stored in [*store.resources(stack), *store.retired_resources(stack)]
                for port in stored.state.data.get("internal_ports") or []}

    def _associate_floating_ips(self, networks: Sequence[Mapping[str, Any]], internal: list[str]) -> None:
        """Heat's ``floating_ip`` of a network entry with a port: the address is
        moved to that port."""
        made = iter(internal)
        for entry in networks:
            port = None
            if entry.get("port"):
                port = self._neutron_id("port", entry["port"])
            elif entry.get("subnet") or entry.get("port_extra_properties"):
                port = next(made, None)
            if entry.get("floating_ip") and port:
                association = {"port_id": port}
                if entry.get("fixed_ip"):
                    association["fixed_ip_address"] = entry["fixed_ip"]
                self.cloud.request(NEUTRON, "PUT", f"/floatingips/{entry['floating_ip']}",
                                   {"floatingip": association})

    def _wait_active(self, ident: str) -> Mapping[str, Any] | None:
        return self._wait(ident, _is_active)

    # -- update ------------------------------------------------------------------------------------
    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        current = self._without_creation_notes(current)
        ident = current.physical_id
        old, new = current.properties, properties
        changed = {key for key in set(old) | set(new) if old.get(key) != new.get(key)}
        if changed == {"metadata"}:
            self._replace_metadata(ident, serialized_metadata(new.get("metadata")))
            return Outcome(ident, dict(current.data))
        live = self._show(ident)
        if live is None:
            raise self.fail(f"The Server ({self.name}) could not be found.", "EntityNotFound")
        wanted_meta = serialized_metadata(new.get("metadata"))
        call = metadata_change(live.get("metadata") or {}, wanted_meta)
        if call is not None and ("metadata" in changed or new.get("metadata") is not None):
            self._nova(call[0], f"/servers/{ident}/metadata", {"metadata": call[1]})
        if "tags" in changed:
            self._nova("PUT", f"/servers/{ident}/tags", {"tags": list(new.get("tags") or [])})
        name = self._wanted_name(current, new, live)
        if name != live.get("name"):
            self._nova("PUT", f"/servers/{ident}", {"server": {"name": name}})
        internal = list(current.data.get("internal_ports") or [])
        plan = self._plan_networks(ident, old, new, internal) if "networks" in changed else None
        try:
            if "image" not in changed:
                self._change_password(ident, changed, new)
            if plan is not None:
                self._apply_networks(ident, plan, internal)
        except Exception:
            # The record keeps the old entries (the next update starts from them):
            # the ports made for new ones go.
            self._forget_made_ports(plan.created if plan is not None else [], internal)
            raise
        if "flavor" in changed:
            self._resize(ident, str(new["flavor"]))
        if "user_data" in changed and new.get("user_data_update_policy") == "REBUILD":
            self._rebuild(ident, {"imageRef": (live.get("image") or {}).get("id") or "",
                                  "user_data": self._user_data(new)})
        if "image" in changed:
            self._rebuild(ident, self._rebuild_body(new))
        return Outcome(ident, {**current.data, "internal_ports": internal, "attributes": {"name": name}})

    def _change_password(self, ident: str, changed: set[str], new: Mapping[str, Any]) -> None:
        """Heat changes the password at once (before the interfaces, the resize and
        the rebuilds it queues); a rebuild sends it instead."""
        if "admin_pass" in changed and new.get("admin_pass"):
            self._nova("POST", f"/servers/{ident}/action",
                       {"changePassword": {"adminPass": new["admin_pass"]}})

    # -- networks in place (Heat's ServerNetworkMixin) ------------------------------------------
    def _plan_networks(self, ident: str, old: Mapping[str, Any], new: Mapping[str, Any],
                       internal: Sequence[str]) -> _NetworksPlan:
        """Heat's ``_update_networks``, up to the steps it queues: what changes
        (server_networks.py), and what Heat does while it calculates: extra
        properties of a port the server made changed on it, the floating IPs of
        entries that go let go, ports made for new entries (``<resource>-port-<n>``)
        and floating IPs put on them."""
        listed = self._nova("GET", f"/servers/{ident}/os-interface")["interfaceAttachments"]
        change = calculate_networks([self._resolved_entry(e) for e in old.get("networks") or []],
                                    [self._resolved_entry(e) for e in new.get("networks") or []],
                                    [interface_entry(i) for i in listed], internal, self._entry_network)
        plan = _NetworksPlan(change.detach, {str(i.get("port_id")): i.get("mac_addr") for i in listed})
        try:
            plan.attach = self._prepare_networks(change, new.get("security_groups") or [], plan.created,
                                                 internal)
        except Exception:
            self._forget_made_ports(plan.created, internal)
            raise
        return plan

    def _forget_made_ports(self, created: Sequence[str], internal: Sequence[str]) -> None:
        """The ports an update made, deleted when it failed; the record back to ``internal``."""
        self._delete_ports(created)
        if created:
            self.runtime.note_data(self.name, "internal_ports", list(internal))

    def _apply_networks(self, ident: str, plan: _NetworksPlan, internal: list[str]) -> None:
        """Heat's queued steps, in order: each old interface detached (a port the
        server made deleted once Nova has let it go), then each new one attached."""
        for port in plan.detach:
            self._detach_interface(ident, port, plan.macs.get(port))
            if port in internal:
                self._delete_ports([port])
                internal.remove(port)
        for attachment in plan.attach:
            self._attach_interface(ident, attachment)
        internal.extend(plan.created)

    def _prepare_networks(self, change: NetworksChange, groups: Sequence[str],
                          created: list[str], internal: Sequence[str]) -> list[_Attachment]:
        for port, extras in change.update_ports:
            body = port_extra_body(extras)
            if body:
                self.cloud.request(NEUTRON, "PUT", f"/ports/{port}", {"port": body})
        for floating_ip in change.disassociate:
            self._gone_is_fine(functools.partial(self.cloud.request, NEUTRON, "PUT", f"/floatingips/{floating_ip}",
                                                 {"floatingip": {"port_id": None}}))
        return [self._attachment(entry, index, groups, created, internal)
                for index, entry in enumerate(change.attach)]

    def _attachment(self, entry: Entry, index: int, groups: Sequence[str], created: list[str],
                    internal: Sequence[str]) -> _Attachment:
        """Heat's ``_calculate_add_nets`` for one entry: its port, a port made for
        its subnet (named for its index among the entries attached), or its network
        (Nova makes the port, the server's security groups set on it after)."""
        def group_ids() -> list[str]:
            return [self._neutron_id("security_group", group) for group in groups]

        if entry.get("allocate_network") == "auto":
            return _Attachment({"net_id": self._auto_network()}, group_ids())
        if entry.get("port"):
            request: dict[str, Any] = {"port_id": entry["port"]}
        elif entry.get("subnet") or entry.get("port_extra_properties"):
            port = self._internal_port(entry, index, groups)
            created.append(port)
            self.runtime.note_data(self.name, "internal_ports", [*internal, *created])  # as Neutron answers
            request = {"port_id": port}
        else:
            network = self._entry_network(entry)
            request = {"net_id": network} if network else {}
            if network and entry.get("fixed_ip"):
                request["fixed_ips"] = [{"ip_address": entry["fixed_ip"]}]
            return _Attachment(request, group_ids())
        if entry.get("floating_ip"):
            association = {"port_id": request["port_id"]}
            if entry.get("fixed_ip"):
                association["fixed_ip_address"] = entry["fixed_ip"]
            self.cloud.request(NEUTRON, "PUT", f"/floatingips/{entry['floating_ip']}",
                               {"floatingip": association})
        return _Attachment(request, [])

    def _resolved_entry(self, entry: Mapping[str, Any]) -> Entry:
        """A networks entry as Heat's translation rules leave it: ``uuid`` moved to
        ``network``; network, subnet and port by id (a name no longer found stays
        as written)."""
        resolved = dict(entry)
        if resolved.get("uuid") is not None:
            resolved["network"], resolved["uuid"] = resolved["uuid"], None
        for key in ("network", "subnet", "port"):
            if resolved.get(key):
                try:
                    resolved[key] = self._neutron_id(key, resolved[key])
                except NotFoundByNameOrId:
                    continue
        return resolved

    def _entry_network(self, entry: Mapping[str, Any]) -> str | None:
        """Heat's ``_get_network_id``: the entry's network, or its subnet's."""
        if entry.get("network"):
            return str(entry["network"])
        if entry.get("subnet"):
            subnet = self.cloud.request(NEUTRON, "GET", f"/subnets/{entry['subnet']}")["subnet"]
            return str(subnet["network_id"])
        return None

    def _auto_network(self) -> str:
        """Heat's ``allocate_network: auto``: the project's own network, or the shared
        one, or the one Neutron's auto-allocated topology makes; several refused."""
        project = self.cloud.project_id
        own = self.cloud.request(NEUTRON, "GET", "/networks", params={
            "tenant_id": project, "shared": "False", "admin_state_up": "True"})["networks"]
        shared = self.cloud.request(NEUTRON, "GET", "/networks", params={"shared": "True"})["networks"]
        found = [str(n["id"]) for n in own + shared]
        if not found:
            topology = self.cloud.request(NEUTRON, "GET", f"/auto-allocated-topology/{project}")
            found = [str(topology["auto_allocated_topology"]["id"])]
        if len(found) > 1:
            raise _failure("Multiple possible networks found.", "UnableToAutoAllocateNetwork")
        return found[0]

    def _detach_interface(self, server: str, port: str, mac: str | None) -> None:
        """Heat's ``check_interface_detach``: Neutron no longer binds the port to the
        server, and the server's addresses no longer show its MAC."""
        self._detach(server, port)
        if mac:
            self._wait(server, lambda shown: shown is None or mac not in _fixed_macs(shown))

    def _attach_interface(self, server: str, attachment: _Attachment) -> None:
        """Heat's ``interface_attach`` and ``check_interface_attach``: done when the
        server's addresses show every address of the port (those of a port Nova made
        too, which Heat does not wait for: the attributes read after it show it)."""
        answer = self._nova("POST", f"/servers/{server}/os-interface",
                            {"interfaceAttachment": attachment.request})["interfaceAttachment"]
        if attachment.security_groups:
            self.cloud.request(NEUTRON, "PUT", f"/ports/{answer['port_id']}",
                               {"port": {"security_groups": list(attachment.security_groups)}})
        addresses = {str(ip["ip_address"]) for ip in answer.get("fixed_ips") or [] if ip.get("ip_address")}
        self._wait(server, lambda shown: _shows_addresses(shown, addresses))

    def _replace_metadata(self, ident: str, metadata: Mapping[str, str]) -> None:
        """Only the metadata changed: one PUT of all of it, with no read of the server
        first.  Heat's ``meta_update`` reads the server, deletes the keys it holds
        that the template no longer has (added out of band too) and sets the rest:
        the server ends with the same metadata.  The read was most of an update's
        time on a busy cloud (Nova shows a server far slower than it sets metadata)."""
        try:
            self._nova("PUT", f"/servers/{ident}/metadata", {"metadata": dict(metadata)})
        except CloudFailure as error:
            if error.not_found:
                raise self.fail(f"The Server ({self.name}) could not be found.", "EntityNotFound") from None
            raise

    def _wanted_name(self, current: ResourceState, new: Mapping[str, Any],
                     live: Mapping[str, Any]) -> str:
        """The template's name; without one, the name the server was given (a
        name taken out of the template: a new default name, as Heat's physical
        name)."""
        if new.get("name"):
            return str(new["name"])
        given = (current.data.get("attributes") or {}).get("name")
        if current.properties.get("name") is None and given:
            return str(given)
        return self._default_name() if current.properties.get("name") \
            else str(live.get("name"))

    def _resize(self, ident: str, flavor: str) -> None:
        """Heat's resize: ``resize``, wait for VERIFY_RESIZE, ``confirmResize``,
        wait for ACTIVE."""
        flavor_id = find_flavor_id(self.cloud, flavor)
        self._nova("POST", f"/servers/{ident}/action", {"resize": {"flavorRef": flavor_id}})
        self._wait(ident, lambda item: _is_resized(item, flavor))
        self._nova("POST", f"/servers/{ident}/action", {"confirmResize": None})
        self._wait(ident, _is_confirmed)

    def _default_name(self) -> str:
        """Heat's physical name of a server, cut to ``max_server_name_length``."""
        return reduced_name(self.runtime.physical_name(self.name), MAX_SERVER_NAME_LENGTH)

    def _rebuild_body(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "imageRef": find_image_id(self.cloud, str(properties["image"])),
            "preserve_ephemeral": properties.get("image_update_policy") == "REBUILD_PRESERVE_EPHEMERAL"}
        if properties.get("admin_pass"):
            body["adminPass"] = properties["admin_pass"]
        if properties.get("metadata") is not None:
            body["metadata"] = serialized_metadata(properties["metadata"])
        return body

    def _user_data(self, properties: Mapping[str, Any]) -> str:
        """The user data Nova takes (base64 of the text Heat builds).  When it holds a
        secret (a hidden parameter put into it), the texts derived from it are secrets
        too: Nova shows the base64 back (the ``show`` attribute), where the secret's
        own text is not found, so it would be neither masked nor sealed."""
        encoded = encoded_user_data(properties)
        if encoded and self.runtime.secrets.found_in(properties.get("user_data")):
            self.runtime.secrets.add(server_user_data(properties))
            self.runtime.secrets.add(encoded)
        return encoded

    def _rebuild(self, ident: str, body: Mapping[str, Any]) -> None:
        """Heat's rebuild: the action (its answer, which holds a password, is not
        kept), then wait until the server leaves REBUILD."""
        self._nova("POST", f"/servers/{ident}/action", {"rebuild": dict(body)})
        self._wait(ident, _is_rebuilt)

    # -- replacement (Heat's prepare_for_replace / restore_prev_rsrc) ------------------------------
    def prepare_for_replace(self, current: ResourceState) -> None:
        """Before the replacement is made: the old server lets go of its pre-made
        ports, which the new one takes."""
        if not current.physical_id:
            return
        live = self._show(current.physical_id)
        if live is None or live.get("status") == "ERROR":
            return
        for port in self._premade_ports(current.properties):
            self._detach(current.physical_id, port)

    def restore_prev_rsrc(self, previous: ResourceState, replacement: ResourceState | None) -> None:
        """A rollback swapped ``previous`` back in: the pre-made ports go back from
        the replacement to it."""
        ports = self._premade_ports(previous.properties)
        if replacement is not None and replacement.physical_id:
            for port in ports:
                self._detach(replacement.physical_id, port)
        for port in ports:
            self._attach(previous.physical_id, port)

    def _premade_ports(self, properties: Mapping[str, Any]) -> list[str]:
        return [self._neutron_id("port", entry["port"])
                for entry in properties.get("networks") or [] if entry.get("port")]

    def _detach(self, server: str, port: str) -> None:
        try:
            self._nova("DELETE", f"/servers/{server}/os-interface/{port}")
        except CloudFailure as error:
            if error.not_found:
                return
            raise
        self._wait_port(port, lambda shown: shown is None or shown.get("device_id") != server)

    def _attach(self, server: str, port: str) -> None:
        self._nova("POST", f"/servers/{server}/os-interface",
                   {"interfaceAttachment": {"port_id": port}})
        self._wait_port(port, lambda shown: shown is not None and shown.get("device_id") == server)

    def _wait_port(self, port: str, done: Callable[[Mapping[str, Any] | None], bool]) -> None:
        def listed(ids: Sequence[str]) -> list[Mapping[str, Any]]:
            ports: list[Mapping[str, Any]] = self.cloud.request(
                NEUTRON, "GET", "/ports", params=[("id", i) for i in ids])["ports"]
            return ports

        self.cloud.poller(f"{NEUTRON}:ports", listed).wait(port, done, self.runtime.sleep)

    # -- delete ------------------------------------------------------------------------------------
    def handle_delete(self, current: ResourceState) -> None:
        """The server, then the ports made for it (it holds them).  A server that a
        killed run asked Nova for, and whose id it never heard, is found by the
        unique name it was made under."""
        internal = list(current.data.get("internal_ports") or [])
        servers = [current.physical_id] if current.physical_id else self._unanswered(current)
        for server in servers:
            try:
                self._nova("DELETE", f"/servers/{server}")
            except CloudFailure as error:
                if not error.not_found:
                    raise
            else:
                self._wait(server, self._is_deleted)
        self._delete_ports([*internal, *self._unanswered_ports(current, internal, servers)])

    def _unanswered(self, current: ResourceState) -> list[str]:
        """The ids of the servers named as the create recorded (Heat's unique
        ``<stack>-<resource>-<12 random characters>``) before it asked Nova."""
        name = current.data.get(UNANSWERED_SERVER)
        if not name:
            return []
        found = self._nova("GET", "/servers", params={"name": f"^{re.escape(str(name))}$"})
        return [str(server["id"]) for server in found.get("servers") or [] if server.get("name") == name]

    def _is_deleted(self, item: Mapping[str, Any] | None) -> bool:
        """Heat's ``check_delete_server_complete``."""
        if item is None or item.get("status") == "DELETED":
            return True
        if item.get("OS-EXT-STS:task_state") == "deleting":
            return False
        if item.get("status") == "SOFT_DELETED":
            self._nova("POST", f"/servers/{item['id']}/action", {"forceDelete": None})
        elif item.get("status") == "ERROR":
            fault = item.get("fault") or {}
            raise _failure(f"Went to status ERROR due to \"Server {item.get('name')} delete failed: "
                           f"({fault.get('code')}) {fault.get('message', 'Unknown')}\"",
                           "ResourceInError")
        return False

    def _delete_ports(self, ports: Iterable[str]) -> None:
        for path in [f"/ports/{port}" for port in ports]:
            self._gone_is_fine(functools.partial(self.cloud.request, NEUTRON, "DELETE", path))

    # -- reading ------------------------------------------------------------------------------------
    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's ``_resolve_attribute``: read live, in Heat's shapes."""
        if not state.physical_id:
            return None
        if name == "name":
            cached = (state.data.get("attributes") or {}).get("name")
            if cached:
                return cached
        if name == "os_collect_config":
            return self._collect_config()
        live = self._show(state.physical_id)
        if live is None:
            return ""
        readers: dict[str, Callable[[Mapping[str, Any]], Any]] = {
            # Heat's show: the server as Nova shows it, and os_collect_config.
            "show": lambda s: {"os_collect_config": self._collect_config(), **s},
            "name": lambda s: s.get("name"),
            "addresses": self._addresses,
            "networks": lambda s: self._with_network_ids(networks_of(s)),
            "first_address": first_address,
            "instance_name": lambda s: s.get("OS-EXT-SRV-ATTR:instance_name"),
            "accessIPv4": lambda s: s.get("accessIPv4"),
            "accessIPv6": lambda s: s.get("accessIPv6"),
            "tags": lambda s: s.get("tags"),
            "console_urls": self._console_urls,
        }
        reader = readers.get(name)
        return reader(live) if reader else None

    def _collect_config(self) -> Any:
        """Heat's: the ``os-collect-config`` key of the resource's metadata."""
        declared = self.runtime.declared(self.name)
        metadata = declared.metadata if declared is not None else None
        return metadata.get("os-collect-config", {}) if isinstance(metadata, Mapping) else {}

    def _addresses(self, server: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's ``_get_server_addresses``: the server's ports as Neutron has them,
        by network name, each address with its port, subnets and network (and the
        floating addresses of each), then the same lists by network id."""
        ports = self.cloud.request(NEUTRON, "GET", "/ports", params={"device_id": server["id"]})["ports"]
        networks: dict[str, Any] = {}
        subnets: dict[str, Any] = {}
        by_label: dict[str, list[dict[str, Any]]] = {}
        for port in ports:
            network = networks.get(port["network_id"]) or self.cloud.request(
                NEUTRON, "GET", f"/networks/{port['network_id']}")["network"]
            networks[port["network_id"]] = network
            listed = by_label.setdefault(str(network["name"]), [])
            for fixed in port.get("fixed_ips") or []:
                listed.extend(self._port_addresses(port, fixed, network, subnets))
        return self._with_network_ids(by_label)

    def _port_addresses(self, port: Mapping[str, Any], fixed: Mapping[str, Any],
                        network: Mapping[str, Any], subnets: dict[str, Any]) -> list[dict[str, Any]]:
        address = fixed.get("ip_address")
        version = [_ip_version(address)]  # Heat's value is a one-item tuple
        found: list[dict[str, Any]] = []
        if address:
            floating = self.cloud.request(NEUTRON, "GET", "/floatingips",
                                          params={"fixed_ip_address": address})["floatingips"]
            found.extend({"addr": fip["floating_ip_address"], "version": version,
                          "OS-EXT-IPS-MAC:mac_addr": port["mac_address"],
                          "OS-EXT-IPS:type": "floating", "port": None} for fip in floating)
        for item in port.get("fixed_ips") or []:
            subnet = item.get("subnet_id")
            if subnet and subnet not in subnets:
                subnets[subnet] = self.cloud.request(NEUTRON, "GET", f"/subnets/{subnet}")["subnet"]
        found.append({"addr": address, "OS-EXT-IPS-MAC:mac_addr": port["mac_address"],
                      "OS-EXT-IPS:type": "fixed", "port": port["id"], "version": version,
                      "subnets": [subnets[i["subnet_id"]] for i in port.get("fixed_ips") or []
                                  if i.get("subnet_id")],
                      "network": dict(network)})
        return found

    def _with_network_ids(self, by_label: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's ``_extend_networks``: each network's list under its id too (when
        the name names one network)."""
        extended = dict(by_label)
        for label, value in by_label.items():
            try:
                extended[find_neutron_id(self.cloud, NEUTRON_KINDS["network"], label)] = value
            except NotFoundByNameOrId:
                continue
        return extended

    def _console_urls(self, server: Mapping[str, Any]) -> dict[str, str]:
        """Heat's ``get_console_urls``: each console type's URL, or why there is none."""
        urls = {}
        for kind, protocol in (("novnc", "vnc"), ("xvpvnc", "vnc"), ("spice-html5", "spice"),
                               ("rdp-html5", "rdp"), ("serial", "serial"), ("webmks", "mks")):
            try:
                answer = self._nova("POST", f"/servers/{server['id']}/remote-consoles",
                                    {"remote_console": {"protocol": protocol, "type": kind}})
                urls[kind] = str(answer["remote_console"]["url"])
            except CloudFailure as error:
                urls[kind] = f"Cannot get console url: {error.client_text()}"  # Heat's str(novaclient's)
        return urls

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        if not state.physical_id:
            return {"drifted": None, "msg": "nothing was created yet"}
        live = self._show(state.physical_id)
        if live is None:
            return {"drifted": True, "changed_keys": [], "diff": {},
                    "msg": f"the server {state.physical_id} is gone"}
        keys = server_drift(state.properties, live, (state.data.get("attributes") or {}).get("name"))
        return {"drifted": bool(keys), "changed_keys": keys,
                "diff": {"before": {k: state.properties.get(k) for k in keys},
                         "after": {k: live.get(k) for k in keys}}}

    def check_healthy(self, state: ResourceState) -> bool:
        live = self._show(state.physical_id) if state.physical_id else None
        return live is not None and live.get("status") == "ACTIVE"

    def needs_replace_failed(self, current: ResourceState) -> bool:
        """Heat's: replaced when it has no id, is gone, or is in ERROR."""
        if not current.physical_id:
            return True
        live = self._show(current.physical_id)
        return live is None or live.get("status") in ("ERROR", "DELETED", "SOFT_DELETED")

    # -- the API -------------------------------------------------------------------------------------
    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self._show(ident)

    def _show(self, ident: str) -> Mapping[str, Any] | None:
        try:
            server: Mapping[str, Any] = self._nova("GET", f"/servers/{ident}")["server"]
            return server
        except CloudFailure as error:
            if error.not_found:
                return None
            raise

    def _list(self, ids: Sequence[str]) -> list[Mapping[str, Any]]:
        """The servers among ``ids``, for the shared polls.  Nova filters by one
        ``uuid`` only, and for members not at all: one id is one show; several are
        the project's servers, listed (a call per page of ``_PAGE``), picked out.
        A server the pages did not show is shown alone before it counts as gone:
        listed while a hundred others were being built, pages of Nova's list
        left out servers that were ACTIVE (the poll took them for deleted)."""
        if len(ids) == 1:
            shown = self._show(ids[0])
            return [shown] if shown is not None else []
        wanted, marker = set(ids), None
        found: list[Mapping[str, Any]] = []
        while True:
            params = {"limit": _PAGE, **({"marker": marker} if marker else {})}
            page: list[Mapping[str, Any]] = self._nova("GET", "/servers/detail", params=params)["servers"]
            found.extend(server for server in page if server.get("id") in wanted)
            if len(page) < _PAGE or not page:
                break
            marker = str(page[-1]["id"])
        listed = {server.get("id") for server in found}
        for ident in sorted(wanted - listed):
            shown = self._show(ident)
            if shown is not None:
                found.append(shown)
        return found

    def _wait(self, ident: str, done: Callable[[Mapping[str, Any] | None], bool]) -> Mapping[str, Any] | None:
        # The project's servers are listed whole, whatever the ids: one call for all.
        poller = self.cloud.poller(f"{COMPUTE}:servers", self._list, ids_per_call=None)
        return poller.wait(ident, done, self.runtime.sleep)


def block_device_mapping(mappings: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Heat's ``_build_block_device_mapping`` (``<id>:<snap or ''>:<size>:<delete>``
    per device), as novaclient then sends it."""
    body = []
    for mapping in mappings:
        item: dict[str, Any] = {"device_name": mapping["device_name"]}
        if mapping.get("snapshot_id"):
            item["snapshot_id"] = mapping["snapshot_id"]
        else:
            item["volume_id"] = mapping.get("volume_id")
        if mapping.get("volume_size"):
            item["volume_size"] = str(mapping["volume_size"])
        if mapping.get("delete_on_termination"):
            item["delete_on_termination"] = str(mapping["delete_on_termination"])
        body.append(item)
    return body


def block_device_mapping_v2_item(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """Heat's ``_build_block_device_mapping_v2`` for one mapping (an image's id is
    looked up by the caller)."""
    item: dict[str, Any]
    if mapping.get("volume_id"):
        item = {"uuid": mapping["volume_id"], "source_type": "volume", "destination_type": "volume",
                "boot_index": 0, "delete_on_termination": False}
    elif mapping.get("snapshot_id"):
        item = {"uuid": mapping["snapshot_id"], "source_type": "snapshot",
                "destination_type": "volume", "boot_index": 0, "delete_on_termination": False}
    elif mapping.get("image"):
        item = {"uuid": mapping["image"], "source_type": "image", "destination_type": "volume",
                "boot_index": 0, "delete_on_termination": False}
    elif mapping.get("swap_size"):
        item = {"source_type": "blank", "destination_type": "local", "boot_index": -1,
                "delete_on_termination": True, "guest_format": "swap",
                "volume_size": mapping["swap_size"]}
    else:
        item = {"source_type": "blank", "destination_type": "local", "boot_index": -1,
                "delete_on_termination": True}
        if mapping.get("ephemeral_size"):
            item["volume_size"] = mapping["ephemeral_size"]
        if mapping.get("ephemeral_format"):
            item["guest_format"] = mapping["ephemeral_format"]
    if mapping.get("device_name"):
        item["device_name"] = mapping["device_name"]
    for key in ("device_type", "disk_bus", "boot_index", "volume_size", "delete_on_termination",
                "volume_type"):
        if mapping.get(key) is not None:
            item[key] = mapping[key]
    return item


def networks_of(server: Mapping[str, Any]) -> dict[str, list[str]]:
    """novaclient's ``Server.networks``: each network's addresses, by name, sorted."""
    addresses = server.get("addresses") or {}
    return {label: [a["addr"] for a in addresses[label]] for label in sorted(addresses)}


def first_address(server: Mapping[str, Any]) -> str:
    """Heat's ``server_to_ipaddress``: the first address of the last network by
    name; '' when it has none."""
    networks = networks_of(server)
    for label in sorted(networks, reverse=True):
        if networks[label]:
            return networks[label][0]
    return ""


def _ip_version(address: Any) -> int | None:
    try:
        return ipaddress.ip_address(str(address)).version
    except ValueError:
        return None


def server_drift(properties: Mapping[str, Any], live: Mapping[str, Any],
                 recorded_name: str | None) -> list[str]:
    """The properties whose value Nova now holds otherwise: the name (the
    template's, or the one it was given), metadata (as Nova keeps it: text)."""
    keys = []
    if live.get("name") != (properties.get("name") or recorded_name or live.get("name")):
        keys.append("name")
    if serialized_metadata(properties.get("metadata")) != (live.get("metadata") or {}):
        keys.append("metadata")
    return keys


@dataclass
class _NetworksPlan:
    """A networks update: the ports to detach (with their MACs, which the server's
    addresses show while attached), the interfaces to attach, the ports made."""

    detach: list[str]
    macs: dict[str, Any]
    attach: list[_Attachment] = field(default_factory=list)
    created: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Attachment:
    """An interface to attach: Nova's ``interfaceAttachment`` request, and the
    security groups then set on the port Nova makes for it."""

    request: dict[str, Any]
    security_groups: list[str]


def _fixed_addresses(server: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [address for listed in (server.get("addresses") or {}).values() for address in listed
            if address.get("OS-EXT-IPS:type") == "fixed"]


def _fixed_macs(server: Mapping[str, Any]) -> set[str]:
    return {str(address.get("OS-EXT-IPS-MAC:mac_addr")) for address in _fixed_addresses(server)}


def _shows_addresses(server: Mapping[str, Any] | None, addresses: set[str]) -> bool:
    if server is None:
        raise _failure("The server went away while an interface was attached", "EntityNotFound")
    return addresses <= {str(address.get("addr")) for address in _fixed_addresses(server)}


def _is_active(item: Mapping[str, Any] | None) -> bool:
    """Heat's ``_check_active``."""
    if item is None:
        raise _failure('Server is not active - Unknown status DELETED due to "Unknown"',
                       "ResourceUnknownStatus")
    status = str(item.get("status") or "").split("(", maxsplit=1)[0]
    if status == "ACTIVE":
        return True
    if status in _DEFERRED:
        return False
    if status == "ERROR":
        fault = item.get("fault") or {}
        raise _failure(f'Went to status ERROR due to "Message: {fault.get("message", "Unknown")}, '
                       f'Code: {fault.get("code", "Unknown")}"', "ResourceInError")
    raise _failure(f'Server is not active - Unknown status {status} due to "Unknown"',
                   "ResourceUnknownStatus")


def _is_resized(item: Mapping[str, Any] | None, flavor: str) -> bool:
    """Heat's ``check_resize``: VERIFY_RESIZE is done.  Nova marks the resize
    (task_state) before it answers, so an ACTIVE server with no task left has
    given up: the scheduler found no host (Heat would wait for its time-out)."""
    if item is None:
        return False
    status = item.get("status")
    if status == "VERIFY_RESIZE":
        return True
    if status == "RESIZE" or (status == "ACTIVE" and item.get("OS-EXT-STS:task_state")):
        return False
    raise _failure(f"Resizing to '{flavor}' failed, status '{status}'", "Error")


def _is_confirmed(item: Mapping[str, Any] | None) -> bool:
    """Heat's ``check_verify_resize``."""
    if item is None:
        return False
    status = item.get("status")
    if status == "ACTIVE":
        return True
    task = item.get("OS-EXT-STS:task_state") or ""
    if status == "VERIFY_RESIZE" or "resize" in task:
        return False
    raise _failure(f"Server is not active - Unknown status {status} due to "
                   f"\"Confirm resize for server {item.get('id')} failed\"", "ResourceUnknownStatus")


def _is_rebuilt(item: Mapping[str, Any] | None) -> bool:
    """Heat's ``check_rebuild``."""
    if item is None or item.get("status") == "REBUILD" or item.get("OS-EXT-STS:task_state"):
        return False
    if item.get("status") == "ERROR":
        raise _failure("Rebuilding server failed, status 'ERROR'", "Error")
    return True


# -- OS::Nova::KeyPair --------------------------------------------------------------------------------

@register
class KeyPair(NovaResource):
    """OS::Nova::KeyPair: a key pair of the session's user; its id is its name.
    Any change replaces it (the old one is deleted first: one name)."""

    type_name = "OS::Nova::KeyPair"
    properties_schema = properties_from_facade(type_name, {
        "name": {"constraints": (length(min=1, max=255),)},
        "save_private_key": {"default": False},
        "type": {"constraints": (allowed_values("ssh", "x509"),)},
    })
    attributes_schema = attributes_from_facade(type_name, {})
    secret_data = frozenset({"private_key"})
    # Its name (Nova's rule for a key pair's name from microversion 2.92).
    id_shape = (re.compile(r"[A-Za-z0-9 @._-]{1,255}"),
                "a key pair's name (letters, digits, spaces, '@', '.', '_', '-')")

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The key pair of the session's user (or of the template's ``user``)."""
        params = {"user_id": properties["user"]} if properties.get("user") else None
        return self._shown(f"/os-keypairs/{quote(ident, safe='')}", "keypair", params)

    def validate_with_cloud(self, properties: Mapping[str, Any], path: str) -> None:
        """Heat's ``KeyPair.validate``: Nova generates no key from 2.92 on."""
        if not properties.get("public_key") and supports(self.cloud, "2.92"):
            raise StackValidationFailed("The public_key property is required by the nova API "
                                        "version currently used.", path=path.rsplit(".", 1)[0])

    def secret_paths(self, properties: Mapping[str, Any]) -> list[tuple[str, ...]]:
        return []

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        name = str(properties["name"])
        body: dict[str, Any] = {"name": name}
        if properties.get("public_key"):
            body["public_key"] = properties["public_key"]
        if properties.get("type"):
            body["type"] = properties["type"]
        if properties.get("user"):
            body["user_id"] = properties["user"]
        with self.making(name):
            made = self._nova("POST", "/os-keypairs", {"keypair": body})["keypair"]
        data: dict[str, Any] = {}
        private = made.get("private_key")
        if private and properties.get("save_private_key"):
            self.runtime.secrets.add(private)
            data["private_key"] = private
        return Outcome(name, data)

    def prepare_for_replace(self, current: ResourceState) -> None:
        """Heat's: the replacement has the same name, so the old key pair goes first."""
        self.handle_delete(current)

    def handle_delete(self, current: ResourceState) -> None:
        if not current.physical_id:
            return
        params = {"user_id": current.properties["user"]} if current.properties.get("user") else None
        path = f"/os-keypairs/{quote(current.physical_id, safe='')}"
        self._gone_is_fine(lambda: self._nova("DELETE", path, params=params))

    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's: text; ``private_key`` only when saved ('' otherwise)."""
        if name == "private_key":
            return str(state.data.get("private_key", "")) if state.properties.get("save_private_key") else ""
        if name == "public_key":
            if state.properties.get("public_key"):
                return str(state.properties["public_key"])
            try:
                return str(_show_keypair(self.cloud, state.physical_id).get("public_key"))
            except NotFoundInCloud:
                return None
        if name == "show":
            try:
                return dict(_show_keypair(self.cloud, state.physical_id))
            except NotFoundInCloud:
                return None
        return None

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        if not state.physical_id:
            return {"drifted": None, "msg": "nothing was created yet"}
        present = self.check_healthy(state)
        return {"drifted": not present, "changed_keys": [],
                **({} if present else {"msg": f"the key pair {state.physical_id} is gone"})}

    def check_healthy(self, state: ResourceState) -> bool:
        try:
            _show_keypair(self.cloud, state.physical_id)
        except NotFoundInCloud:
            return False
        return True

    def needs_replace_failed(self, current: ResourceState) -> bool:
        return not current.physical_id or not self.check_healthy(current)


# -- OS::Nova::ServerGroup ----------------------------------------------------------------------------

_POLICIES = ("anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity")


@register
class ServerGroup(NovaResource):
    """OS::Nova::ServerGroup: a group whose policy places its servers; any change
    replaces it."""

    type_name = "OS::Nova::ServerGroup"
    properties_schema = {
        "name": PropertySchema("string"),
        "policies": PropertySchema("list", default=["anti-affinity"], constraints=(
            allowed_values(*_POLICIES),), schema=PropertySchema("string")),
        "rules": PropertySchema("map"),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {}

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        name = properties.get("name") or self.runtime.physical_name(self.name)
        policies = list(properties.get("policies") or ["anti-affinity"])
        group: dict[str, Any] = {"name": name}
        if supports(self.cloud, "2.64"):
            group["policy"] = policies[0]
            if properties.get("rules"):
                group["rules"] = dict(properties["rules"])
        else:
            group["policies"] = policies
        made = self._nova("POST", "/os-server-groups", {"server_group": group})["server_group"]
        return Outcome(str(made["id"]))

    def handle_delete(self, current: ResourceState) -> None:
        if current.physical_id:
            self._gone_is_fine(lambda: self._nova("DELETE", f"/os-server-groups/{current.physical_id}"))

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self._shown(f"/os-server-groups/{ident}", "server_group")

    def attribute(self, state: ResourceState, name: str) -> Any:
        if name != "show" or not state.physical_id:
            return None
        try:
            return self._nova("GET", f"/os-server-groups/{state.physical_id}")["server_group"]
        except CloudFailure as error:
            if error.not_found:
                return None
            raise

    def check_healthy(self, state: ResourceState) -> bool:
        return self.attribute(state, "show") is not None


# -- OS::Nova::Flavor -----------------------------------------------------------------------------------

@register
class Flavor(NovaResource):
    """OS::Nova::Flavor: a flavor (Nova lets admins make them); its extra specs and,
    for a private flavor, the projects that may use it change in place."""

    type_name = "OS::Nova::Flavor"
    properties_schema = {
        "tenants": PropertySchema("list", default=[], update_allowed=True, schema=PropertySchema("string")),
        "flavorid": PropertySchema("string"),
        "name": PropertySchema("string"),
        "ram": PropertySchema("integer", required=True),
        "vcpus": PropertySchema("integer", required=True),
        "disk": PropertySchema("integer", default=0),
        "swap": PropertySchema("integer", default=0),
        "ephemeral": PropertySchema("integer", default=0),
        "rxtx_factor": PropertySchema("number", default=1.0),
        "extra_specs": PropertySchema("map", update_allowed=True),
        "is_public": PropertySchema("boolean", default=True),
    }
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {
        "is_public": AttributeSchema(type="boolean"), "extra_specs": AttributeSchema(type="map")}

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        """Heat's: ``flavorid`` auto and Heat's default name when not given; then
        the extra specs, and a private flavor's projects (the session's when none)."""
        body = {"name": properties.get("name") or self.runtime.physical_name(self.name),
                "id": properties.get("flavorid") or None, "ram": properties["ram"],
                "vcpus": properties["vcpus"], "disk": properties.get("disk") or 0,
                "swap": properties.get("swap") or 0,
                "OS-FLV-EXT-DATA:ephemeral": properties.get("ephemeral") or 0,
                "rxtx_factor": properties.get("rxtx_factor") or 1.0,
                "os-flavor-access:is_public": properties.get("is_public", True)}
        made = self._nova("POST", "/flavors", {"flavor": body})["flavor"]
        ident = str(made["id"])
        self.runtime.claim_physical_id(self.name, ident)
        if properties.get("extra_specs"):
            self._set_specs(ident, properties["extra_specs"])
        if not properties.get("is_public", True):
            for project in properties.get("tenants") or [self.cloud.project_id]:
                self._access(ident, "addTenantAccess", project)
        return Outcome(ident)

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        ident = current.physical_id
        if current.properties.get("extra_specs") != properties.get("extra_specs"):
            old = self._nova("GET", f"/flavors/{ident}/os-extra_specs").get("extra_specs") or {}
            for key in old:
                self._gone_is_fine(functools.partial(
                    self._nova, "DELETE", f"/flavors/{ident}/os-extra_specs/{quote(key, safe='')}"))
            if properties.get("extra_specs"):
                self._set_specs(ident, properties["extra_specs"])
        if current.properties.get("tenants") != properties.get("tenants") and \
                not properties.get("is_public", True):
            listed = self._nova("GET", f"/flavors/{ident}/os-flavor-access")["flavor_access"]
            old_projects = {item["tenant_id"] for item in listed}
            new_projects = set(properties.get("tenants") or [])
            for project in sorted(old_projects - new_projects):
                self._access(ident, "removeTenantAccess", project)
            for project in sorted(new_projects - old_projects):
                self._access(ident, "addTenantAccess", project)
        return Outcome(ident)

    def _set_specs(self, ident: str, specs: Mapping[str, Any]) -> None:
        self._nova("POST", f"/flavors/{ident}/os-extra_specs",
                   {"extra_specs": {str(k): str(v) for k, v in specs.items()}})

    def _access(self, ident: str, action: str, project: str) -> None:
        self._nova("POST", f"/flavors/{ident}/action", {action: {"tenant": project}})

    def handle_delete(self, current: ResourceState) -> None:
        if current.physical_id:
            self._gone_is_fine(functools.partial(self._nova, "DELETE", f"/flavors/{current.physical_id}"))

    # Nova's rule for a flavor's id (any one an admin gives; Heat's own are UUIDs).
    id_shape = (re.compile(r"[A-Za-z0-9._ -]{1,255}"), "a flavor's id (letters, digits, '.', '_', '-', spaces)")

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self._shown(f"/flavors/{quote(ident, safe='')}", "flavor")

    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's: read when asked."""
        if not state.physical_id:
            return None
        try:
            if name == "extra_specs":
                return self._nova("GET", f"/flavors/{state.physical_id}/os-extra_specs")["extra_specs"]
            flavor = self._nova("GET", f"/flavors/{state.physical_id}")["flavor"]
        except CloudFailure as error:
            if error.not_found:
                return None
            raise
        if name == "is_public":
            return flavor.get("os-flavor-access:is_public")
        return dict(flavor) if name == "show" else None

    def check_healthy(self, state: ResourceState) -> bool:
        return self.attribute(state, "show") is not None
