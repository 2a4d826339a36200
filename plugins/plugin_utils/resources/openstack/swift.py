# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Swift's types as Heat 27 makes them: ``OS::Swift::Container``
(heat/engine/resources/openstack/swift/container.py), ``AWS::S3::Bucket``
(aws/s3/s3.py), and Heat's signals through Swift, ``OS::Heat::SwiftSignalHandle``
and ``OS::Heat::SwiftSignal`` (openstack/heat/swiftsignal.py), with what the
wait condition handles' ``TEMP_URL_SIGNAL`` shares with them (``signal_url``,
``take_signals``; Heat's ``SignalResponder``).

A signal through Swift needs no Heat API: the sender PUTs its signal to a Swift
temporary URL (signed with the account's ``Temp-URL-Key``, for one object, the
PUT method, until 2038 as Heat signs it); the object's container keeps every
version (``X-Versions-Location``, the container itself), so one URL takes many
signals; the waiting run lists the container and reads them.  The container of a
stack's signals is named by the stack's id, as Heat names it.

Unlike Heat, a container (or bucket) whose name exists already is not taken over:
Swift's PUT answers 202 for a container that was there, and the create fails
(Heat would record it, and its delete would then delete another's container).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlparse

from ..base import AttributeSchema, Outcome, PropertySchema, ResourceState, register
from ..properties import allowed_values, value_range
from .base import OpenStackResource
from .session import CloudFailure, CloudSession

# Heat's swift client plugin: the body of a signal object before any signal, and
# the end of a temporary URL's validity (2**31 - 1, less Heat's minute).
IN_PROGRESS = "in progress"
MAX_EPOCH = 2147483647
TEMP_URL_KEY = "x-account-meta-temp-url-key"
# How often a waiting SwiftSignal lists its container (each look is a listing and
# a read per signal object: Heat's polls start at one second too).
POLL_SECONDS = 1.0
SUCCESS, FAILURE = "SUCCESS", "FAILURE"
# Swift's container names: at most 256 bytes, no slash.
CONTAINER_NAME = re.compile(r"[^/]{1,256}")


# -- temporary URLs and signal objects (Heat's SwiftClientPlugin, SignalResponder) ----------------
def temp_url(cloud: CloudSession, container: str, obj: str, method: str = "PUT") -> str:
    """Heat's ``get_temp_url``: the account's key (made once, 32 random hex
    characters, when the account has none), the URL signed with it."""
    key = cloud.object_request("HEAD", "").headers.get(TEMP_URL_KEY)
    if not key:
        cloud.object_request("POST", "", headers={"X-Account-Meta-Temp-URL-Key": secrets.token_hex(16)})
        key = cloud.object_request("HEAD", "").headers[TEMP_URL_KEY]
    account = urlparse(cloud.endpoint("object_store"))
    path = f"{account.path}/{quote(container)}/{quote(obj)}"
    expires = MAX_EPOCH - 60
    signature = hmac.new(key.encode(), f"{method}\n{expires}\n{path}".encode(), hashlib.sha256).hexdigest()
    return f"{account.scheme}://{account.netloc}{path}?temp_url_sig={signature}&temp_url_expires={expires}"


def signal_url(cloud: CloudSession, container: str, obj: str) -> str:
    """Heat's ``get_signal_url``: the container keeps every version of its objects
    (each signal PUT to the one URL), the object starts as ``in progress``."""
    cloud.object_request("PUT", f"/{quote(container)}", headers={"X-Versions-Location": container})
    cloud.object_request("PUT", f"/{quote(container)}/{quote(obj)}", data=IN_PROGRESS.encode())
    return temp_url(cloud, container, obj)


def object_names(cloud: CloudSession, container: str) -> list[str] | None:
    """The names of the objects in ``container``; None when it is gone."""
    try:
        listing = cloud.object_request("GET", f"/{quote(container)}", params={"format": "json"}).json()
    except CloudFailure as error:
        if error.not_found:
            return None
        raise
    return [str(entry["name"]) for entry in listing or []]


def signal_objects(cloud: CloudSession, container: str, obj: str) -> list[str] | None:
    """The names of ``obj``'s versions in ``container`` (Heat's filter: every name
    that holds the object's); None when the container is gone."""
    names = object_names(cloud, container)
    return None if names is None else [name for name in names if obj in name]


def read_signals(cloud: CloudSession, container: str, names: list[str]) -> list[tuple[str, Any]]:
    """(name, body) of each signal object: ``in progress`` left out, an empty body
    an empty signal, else the JSON it holds (Heat's "Failed to parse JSON data")."""
    signals = []
    for name in names:
        try:
            body = cloud.object_request("GET", f"/{quote(container)}/{quote(name)}").body.decode()
        except CloudFailure as error:
            if error.not_found:
                continue
            raise
        if body == IN_PROGRESS:
            continue
        try:
            signals.append((name, json.loads(body) if body else {}))
        except ValueError:
            raise OpenStackResource.fail(f"Failed to parse JSON data: {body}") from None
    return signals


def delete_object(cloud: CloudSession, container: str, obj: str) -> bool:
    """Whether there was such an object (Heat ignores NotFound)."""
    try:
        cloud.object_request("DELETE", f"/{quote(container)}/{quote(obj)}")
    except CloudFailure as error:
        if error.not_found:
            return False
        raise
    return True


def delete_container(cloud: CloudSession, container: str) -> None:
    """Heat's: a container still holding objects (409), or gone, is left as it is."""
    try:
        cloud.object_request("DELETE", f"/{quote(container)}")
    except CloudFailure as error:
        if error.status not in (404, 409):
            raise


def put_container(cloud: CloudSession, container: str, headers: Mapping[str, str], what: str) -> None:
    """Make ``container``; one that was there already (Swift's 202) is refused."""
    answer = cloud.object_request("PUT", f"/{quote(container)}", headers=headers)
    if answer.status == 202:
        # A refusal as the cloud's own: the claimed name is let go (``making``).
        raise CloudFailure(f"{what} {container} already exists: give another name, or none "
                           "(a unique one is made)", 409)


# -- OS::Swift::Container and AWS::S3::Bucket ------------------------------------------------------
class SwiftResource(OpenStackResource):
    """A container of the session's account: its name is its physical id."""

    id_shape = (CONTAINER_NAME, "a Swift container name (at most 256 characters, no '/')")

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        # The account is the session's project's: what it shows is this project's.
        try:
            return self.cloud.object_request("HEAD", f"/{quote(ident)}").headers
        except CloudFailure as error:
            if error.not_found:
                return None
            raise

    def url_attribute(self, state: ResourceState, name: str) -> str:
        """Heat's ``DomainName``, ``WebsiteURL`` and ``RootURL``: from the account's
        URL as the catalog gives it to the session."""
        account = urlparse(self.cloud.endpoint("object_store"))
        root = f"{account.scheme}://{account.netloc}{account.path}"
        return {"DomainName": account.netloc.split(":")[0], "RootURL": root,
                "WebsiteURL": f"{root}/{state.physical_id}"}[name]

    def check_healthy(self, state: ResourceState) -> bool:
        return bool(state.physical_id) and self.adopted_thing(state.physical_id, state.properties) is not None


def meta_headers(kind: str, values: Mapping[str, Any] | None) -> dict[str, str]:
    """Heat's ``_build_meta_headers``: ``X-Container-Meta-<key>`` for each key."""
    return {f"X-{kind.title()}-Meta-{key}": str(value) for key, value in (values or {}).items()}


@register
class SwiftContainer(SwiftResource):
    """OS::Swift::Container: a container of the session's account; any change
    replaces it, as Heat's (no property is updatable)."""

    type_name = "OS::Swift::Container"
    properties_schema = {
        "name": PropertySchema("string", "Name for the container. If not specified, a unique name will be "
                               "generated."),
        "X-Container-Read": PropertySchema("string", "Specify the ACL permissions on who can read objects "
                                           "in the container."),
        "X-Container-Write": PropertySchema("string", "Specify the ACL permissions on who can write "
                                            "objects to the container."),
        "X-Container-Meta": PropertySchema("map", "A map of user-defined meta data to associate with the "
                                           "container.", default={}),
        "X-Account-Meta": PropertySchema("map", "A map of user-defined meta data to associate with the "
                                         "account.", default={}),
        "PurgeOnDelete": PropertySchema("boolean", "If True, delete any objects in the container when the "
                                        "container is deleted.", default=False),
    }
    attributes_schema = {
        "DomainName": AttributeSchema("The host from the container URL.", type="string"),
        "WebsiteURL": AttributeSchema("The URL of the container.", type="string"),
        "RootURL": AttributeSchema("The parent URL of the container.", type="string"),
        "ObjectCount": AttributeSchema("The number of objects stored in the container.", type="integer"),
        "BytesUsed": AttributeSchema("The number of bytes stored in the container.", type="integer"),
        "HeadContainer": AttributeSchema("A map containing all headers for the container.", type="map"),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        name = properties.get("name") or self.runtime.physical_name(self.name)
        headers = meta_headers("container", properties.get("X-Container-Meta"))
        for key in ("X-Container-Read", "X-Container-Write"):
            if properties.get(key) is not None:
                headers[key] = str(properties[key])
        with self.making(name):
            put_container(self.cloud, name, headers, "Container")
        account = meta_headers("account", properties.get("X-Account-Meta"))
        if account:
            self.cloud.object_request("POST", "", headers=account)
        return Outcome(name)

    def handle_delete(self, current: ResourceState) -> None:
        """Heat's: a container with objects is refused unless ``PurgeOnDelete``,
        which deletes them first; a container already gone is done."""
        if not current.physical_id:
            return
        container = current.physical_id
        objects = object_names(self.cloud, container)
        if objects is None:
            return
        if objects and not current.properties.get("PurgeOnDelete"):
            raise self.fail(f"Deleting non-empty container ({container}) when PurgeOnDelete is False "
                            "is not supported for resource.", "ResourceActionNotSupported")
        while objects:
            for name in objects:
                delete_object(self.cloud, container, name)
            objects = object_names(self.cloud, container) or []
        try:
            self.cloud.object_request("DELETE", f"/{quote(container)}")
        except CloudFailure as error:
            if not error.not_found:
                raise

    def attribute(self, state: ResourceState, name: str) -> Any:
        if name in ("DomainName", "WebsiteURL", "RootURL"):
            return self.url_attribute(state, name)
        if name in ("ObjectCount", "BytesUsed", "HeadContainer", "show"):
            headers = self.adopted_thing(state.physical_id, state.properties)
            if headers is None:
                return None  # Heat: a failed HEAD gives null (and a warning in its log)
            if name == "ObjectCount":
                return headers.get("x-container-object-count")
            if name == "BytesUsed":
                return headers.get("x-container-bytes-used")
            return dict(headers)
        return super().attribute(state, name)


_ACCESS_CONTROL = ("Private", "PublicRead", "PublicReadWrite", "AuthenticatedRead",
                   "BucketOwnerRead", "BucketOwnerFullControl")


@register
class S3Bucket(SwiftResource):
    """AWS::S3::Bucket: a Swift container with Heat's ACLs for S3's canned ones,
    its tags as container metadata, a website configuration as staticweb's."""

    type_name = "AWS::S3::Bucket"
    properties_schema = {
        "AccessControl": PropertySchema("string", "A predefined access control list (ACL) that grants "
                                        "permissions on the bucket.",
                                        constraints=(allowed_values(*_ACCESS_CONTROL),)),
        "WebsiteConfiguration": PropertySchema("map", "Information used to configure the bucket as a static "
                                               "website.", schema={
                                                   "IndexDocument": PropertySchema("string"),
                                                   "ErrorDocument": PropertySchema("string")}),
        "Tags": PropertySchema("list", "Tags to attach to the bucket.", schema=PropertySchema("map", schema={
            "Key": PropertySchema("string", required=True), "Value": PropertySchema("string", required=True)})),
    }
    attributes_schema = {
        "DomainName": AttributeSchema("The DNS name of the specified bucket.", type="string"),
        "WebsiteURL": AttributeSchema("The website endpoint for the specified bucket.", type="string"),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        name = self.runtime.physical_name(self.name)
        headers = {f"X-Container-Meta-S3-Tag-{tag['Key']}": str(tag["Value"])
                   for tag in properties.get("Tags") or []}
        website = properties.get("WebsiteConfiguration")
        if website is not None:
            headers["X-Container-Meta-Web-Index"] = str(website.get("IndexDocument"))
            headers["X-Container-Meta-Web-Error"] = str(website.get("ErrorDocument"))
        headers.update(self._acl(properties.get("AccessControl")))
        with self.making(name):
            put_container(self.cloud, name, headers, "Bucket")
        return Outcome(name)

    def _acl(self, access: str | None) -> dict[str, str]:
        """Heat's ACLs: the project's user (``project:user``) reads and writes
        unless the canned ACL opens reading (or writing) to everyone, or reading to
        the project."""
        project, user = self.cloud.identity_names()
        owner = f"{project}:{user}"
        read = ".r:*" if access in ("PublicRead", "PublicReadWrite") else (
            project if access == "AuthenticatedRead" else owner)
        return {"X-Container-Read": read, "X-Container-Write": ".r:*" if access == "PublicReadWrite" else owner}

    def handle_delete(self, current: ResourceState) -> None:
        """Heat's: a bucket that still holds objects is refused; one gone is done."""
        if not current.physical_id:
            return
        try:
            self.cloud.object_request("DELETE", f"/{quote(current.physical_id)}")
        except CloudFailure as error:
            if error.status == 409:
                raise self.fail(f"The bucket you tried to delete is not empty ({current.physical_id}). "
                                "is not supported for resource.", "ResourceActionNotSupported") from None
            if not error.not_found:
                raise

    def attribute(self, state: ResourceState, name: str) -> Any:
        if name in ("DomainName", "WebsiteURL"):
            return self.url_attribute(state, name)
        return super().attribute(state, name)


# -- OS::Heat::SwiftSignalHandle and OS::Heat::SwiftSignal -----------------------------------------
@register
class SwiftSignalHandle(SwiftResource):
    """OS::Heat::SwiftSignalHandle: a temporary URL to PUT signals to; its
    reference (``get_resource``) is that URL, its physical id the signal object's
    name, in the container named by the stack's id."""

    type_name = "OS::Heat::SwiftSignalHandle"
    id_shape = (CONTAINER_NAME, "a Swift object name")
    attributes_schema = {
        "token": AttributeSchema("Tokens are not needed for Swift TempURLs.", type="string"),
        "endpoint": AttributeSchema("Endpoint/url which can be used for signalling handle.", type="string"),
        "curl_cli": AttributeSchema("Convenience attribute, provides curl CLI command prefix, which can be "
                                    "used for signalling handle completion or failure.", type="string"),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        obj = self.runtime.physical_name(self.name)
        with self.making(obj):
            url = signal_url(self.cloud, self.runtime.stack_id, obj)
        return Outcome(obj, {"endpoint": url})

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        names = signal_objects(self.cloud, self.runtime.stack_id, ident)
        return {} if names else None

    def handle_delete(self, current: ResourceState) -> None:
        """Heat's: the object deleted until no version is left, then the container
        if it is empty."""
        if not current.physical_id:
            return
        while delete_object(self.cloud, self.runtime.stack_id, current.physical_id):
            pass
        delete_container(self.cloud, self.runtime.stack_id)

    def reference_id(self, state: ResourceState) -> Any:
        return state.data.get("endpoint") if state.physical_id else self.name

    def attribute(self, state: ResourceState, name: str) -> Any:
        url = state.data.get("endpoint")
        if name == "token":
            return ""  # Heat: kept for the wait condition handle's attributes
        if name == "endpoint":
            return url
        if name == "curl_cli":
            return f"curl -i -X PUT '{url}'"
        return super().attribute(state, name)

    def check_healthy(self, state: ResourceState) -> bool:
        return self.adopted_thing(state.physical_id, state.properties) is not None


def merged_signals(bodies: list[Any]) -> list[dict[str, Any]]:
    """Heat's ``SwiftSignal.get_signals``: a later signal with the same id replaces
    the earlier; each key has its default (``data`` null, ``id`` the signal's
    number, ``reason`` "Signal N received", ``status`` SUCCESS)."""
    signals: list[dict[str, Any]] = []
    for number, body in enumerate(bodies, start=1):
        signal = dict(body) if isinstance(body, Mapping) else {}
        if "id" in signal:
            signals = [s for s in signals if s.get("id") != signal["id"]]
        signal.setdefault("data", None)
        unique_id = signal.setdefault("id", number)
        signal.setdefault("reason", f"Signal {unique_id} received")
        signal.setdefault("status", SUCCESS)
        signals.append(signal)
    return signals


def _timeout_message(successes: list[str], count: Any) -> str:
    received = f"{len(successes)} of {count} received"
    return f"{received} - {';'.join(successes)}" if successes else received


@register
class SwiftSignal(SwiftResource):
    """OS::Heat::SwiftSignal: its create waits until ``count`` SUCCESS signals are
    in its handle's object; a FAILURE fails it with the failures' reasons, and
    ``timeout`` seconds without enough fail it with Heat's count."""

    type_name = "OS::Heat::SwiftSignal"
    adoptable = True  # Heat keeps nothing of it but its properties
    properties_schema = {
        "handle": PropertySchema("string", "URL of TempURL where resource will signal completion and "
                                 "optionally upload data.", required=True),
        "timeout": PropertySchema("number", "The maximum number of seconds to wait for the resource to "
                                  "signal completion.", required=True, constraints=(value_range(1, 43200),)),
        "count": PropertySchema("integer", "The number of success signals that must be received before the "
                                "stack creation process continues.", default=1,
                                constraints=(value_range(1, 1000),)),
    }
    attributes_schema = {
        "data": AttributeSchema("JSON data that was uploaded via the SwiftSignalHandle.", type="string"),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        obj = self._object(properties["handle"])
        timeout, count = float(properties["timeout"]), int(properties.get("count") or 1)
        started = time.monotonic()
        while True:
            signals = self._signals(obj)  # one read of Swift per look
            if time.monotonic() - started > timeout:
                raise self.fail(_timeout_message([s["reason"] for s in signals if s["status"] == SUCCESS], count),
                                "SwiftSignalTimeout")
            statuses = [s["status"] for s in signals]
            if FAILURE in statuses:
                raise self.fail(";".join(s["reason"] for s in signals if s["status"] == FAILURE),
                                "SwiftSignalFailure")
            unknown = [status for status in statuses if status != SUCCESS]
            if unknown:
                raise self.fail(f"Unknown status: {unknown[0]}")
            if statuses and len(statuses) >= count:
                return Outcome("")  # as Heat's: no physical id, get_resource gives its name
            self.runtime.sleep(POLL_SECONDS)

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        return Outcome(adopted.resource_id or "")  # what Heat waited for is over

    def has_attributes(self, state: ResourceState) -> bool:
        return state.action != "INIT"

    def attribute(self, state: ResourceState, name: str) -> Any:
        if name != "data":
            return super().attribute(state, name)
        signals = self._signals(self._object(state.properties.get("handle")))
        if not signals:
            return "null"  # Heat's: json.dumps(None)
        return json.dumps({str(s["id"]): s["data"] for s in signals})

    def _object(self, handle: Any) -> str:
        """The handle URL's object name, the URL checked as Heat checks it: a Swift
        temporary URL's path (``/v1/<account>/<container>/<object>``, the account
        the session's project's) in the container of this stack's signals."""
        path = urlparse(str(handle)).path
        parts = path.split("/", 4)
        what = f'"{path}" is not a valid SwiftSignalHandle.  The %s is invalid'
        if not (len(parts) == 5 and not parts[0] and parts[1] == "v1"
                and parts[2].endswith(self.cloud.project_id) and parts[3] and parts[4].strip("/")):
            raise self.fail(what % "Swift TempURL path", "ValueError")
        if parts[3] != self.runtime.stack_id:
            raise self.fail(what % "container name", "ValueError")
        return parts[4]

    def _signals(self, obj: str) -> list[dict[str, Any]]:
        names = signal_objects(self.cloud, self.runtime.stack_id, obj) or []
        return merged_signals([body for _name, body in read_signals(self.cloud, self.runtime.stack_id, names)])
