# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A running Heat, reached through openstacksdk and a ``clouds.yaml`` entry: list a
project's stacks, export one (its abandon data, ``GET .../export``), abandon one
(``DELETE .../abandon``: Heat forgets it and keeps its resources).

Requests go through an adapter of openstacksdk's session for the orchestration
service (endpoint from the catalog, or ``orchestration_endpoint_override``),
without openstacksdk's version discovery: a standalone Heat without Keystone
answers none.  openstacksdk is imported only here, when a cloud is named.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import HotplayError
from ..resources.base import resource_class
from ..resources.software_deployment import DEPLOYMENT_TYPES, OUTPUTS_KEY, STATUS_KEY


# How deep the resource listing goes (Heat's max_nested_stack_depth defaults to 5).
MAX_DEPTH = 10


class HeatApiError(HotplayError):
    """The cloud, or Heat in it, refused or could not be reached."""


class HeatClient:
    """The few calls of Heat's orchestration API the migration needs."""

    def __init__(self, adapter: Any, cloud: str) -> None:
        self._adapter = adapter
        self.cloud = cloud

    def list_stacks(self) -> list[dict[str, Any]]:
        """The project's top-level stacks: name, id, stack_status."""
        found = self._call("GET", "/stacks", "list stacks")
        return [{"name": s["stack_name"], "id": s["id"], "stack_status": s["stack_status"]}
                for s in found.get("stacks", [])]

    def export(self, name: str) -> dict[str, Any]:
        """The stack's abandon data, the stack left in Heat (``stack export``)."""
        stack_id = self._stack_id(name)
        exported: dict[str, Any] = self._call("GET", f"/stacks/{name}/{stack_id}/export",
                                              f"export stack {name}")
        self.add_deployment_outputs(exported.get("resources") or {})
        return exported

    def read(self, name: str) -> dict[str, Any]:
        """The stack in abandon data's shape, read through the other APIs (template,
        environment, files, resources with their attributes), for a Heat that gives
        out no abandon data; ``resource_data`` is rebuilt from the attributes
        (``Resource.data_from_attributes``)."""
        stack = self._call("GET", f"/stacks/{name}", f"find stack {name}")["stack"]
        base = f"/stacks/{name}/{stack['id']}"
        listed = self._call("GET", f"{base}/resources?nested_depth={MAX_DEPTH}&with_detail=true",
                            f"list the resources of stack {name}")["resources"]
        action, status = _state(stack["stack_status"])
        resources = _tree(listed, stack["id"])
        self.add_deployment_outputs(resources)
        return {
            "name": name, "id": stack["id"], "action": action, "status": status,
            "template": self._call("GET", f"{base}/template", f"read the template of {name}"),
            "environment": self._call("GET", f"{base}/environment", f"read the environment of {name}"),
            "files": self._call("GET", f"{base}/files", f"read the files of {name}"),
            "resources": resources,
            "project_id": "", "stack_user_project_id": "", "tags": list(stack.get("tags") or []),
        }

    def add_deployment_outputs(self, resources: dict[str, Any]) -> None:
        """Each software deployment's output values and status (at any depth), as
        its server reported them to Heat: Heat keeps them in its software
        deployments, not in the abandon data's resource data."""
        for resource in resources.values():
            if isinstance(resource.get("resources"), dict):  # a nested stack
                self.add_deployment_outputs(resource["resources"])
            elif resource.get("type") in DEPLOYMENT_TYPES and resource.get("resource_id"):
                shown = self._call("GET", f"/software_deployments/{resource['resource_id']}",
                                   f"read software deployment {resource['resource_id']}",
                                   missing_ok=True)
                if shown is None:  # Heat adopted it: what it reported is in its resource data
                    continue
                deployment = shown.get("software_deployment") or {}
                data = resource.setdefault("resource_data", {})
                data[OUTPUTS_KEY] = json.dumps(deployment.get("output_values") or {}, sort_keys=True)
                data[STATUS_KEY] = str(deployment.get("status") or "")

    def abandon(self, name: str) -> dict[str, Any]:
        """Heat forgets the stack, its resources kept (``stack abandon``)."""
        stack_id = self._stack_id(name)
        abandoned: dict[str, Any] = self._call("DELETE", f"/stacks/{name}/{stack_id}/abandon",
                                               f"abandon stack {name}")
        return abandoned

    def _stack_id(self, name: str) -> str:
        shown = self._call("GET", f"/stacks/{name}", f"find stack {name}")
        return str(shown["stack"]["id"])

    def _call(self, method: str, path: str, what: str, missing_ok: bool = False) -> Any:
        """The JSON Heat answers; None for a 404 when ``missing_ok``."""
        try:
            response = self._adapter.request(path, method, raise_exc=False)
        except Exception as error:  # noqa: BLE001 - keystoneauth's many connection errors
            raise HeatApiError(f"cloud {self.cloud}: cannot {what}: {error}") from None
        if missing_ok and response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise HeatApiError(f"cloud {self.cloud}: Heat refused to {what}: "
                               f"HTTP {response.status_code}: {_heat_message(response)}")
        return response.json() if response.content else {}


def _state(heat_status: str) -> tuple[str, str]:
    """``CREATE_IN_PROGRESS`` -> (``CREATE``, ``IN_PROGRESS``)."""
    for status in ("IN_PROGRESS", "COMPLETE", "FAILED"):
        if heat_status.endswith(f"_{status}"):
            return heat_status[:-len(status) - 1], status
    return heat_status, ""


def _stack_of(resource: dict[str, Any]) -> tuple[str, str]:
    """(name, id) of the stack a listed resource belongs to, from its links."""
    for link in resource.get("links", ()):
        if link.get("rel") == "stack":
            name, _slash, stack_id = link["href"].rstrip("/").split("/stacks/", 1)[1].partition("/")
            return name, stack_id
    return "", ""


def _tree(listed: list[dict[str, Any]], top_id: str) -> dict[str, Any]:
    """Heat's flat resource listing (every depth) as abandon data's nested
    ``resources``: a resource whose physical id is a listed stack's id is that
    nested stack."""
    by_stack: dict[str, list[dict[str, Any]]] = {}
    names: dict[str, str] = {}
    for resource in listed:
        name, stack_id = _stack_of(resource)
        by_stack.setdefault(stack_id, []).append(resource)
        names[stack_id] = name

    def resources_of(stack_id: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for resource in by_stack.get(stack_id, []):
            physical = resource.get("physical_resource_id") or ""
            action, status = _state(resource.get("resource_status", ""))
            if physical and physical in by_stack:
                found[resource["resource_name"]] = {
                    "name": names[physical], "id": physical, "action": action, "status": status,
                    "resources": resources_of(physical)}
                continue
            found[resource["resource_name"]] = {
                "name": resource["resource_name"], "resource_id": physical,
                "type": resource["resource_type"], "action": action, "status": status,
                "metadata": {}, "resource_data": _data_from_attributes(
                    resource["resource_type"], resource.get("attributes") or {})}
        return found

    return resources_of(top_id)


def _data_from_attributes(type_name: str, attributes: dict[str, Any]) -> dict[str, Any]:
    """The resource data Heat keeps, as far as the type can tell it from its
    attributes (a RandomString's string is its ``value``)."""
    cls = resource_class(type_name)
    return cls.data_from_attributes(attributes) if cls is not None else {}


def _heat_message(response: Any) -> str:
    """Heat's error title and explanation (``NotSupported: Stack Abandon is not
    supported.`` when heat.conf lacks enable_stack_abandon)."""
    try:
        error = response.json().get("error", {})
    except ValueError:
        return str(response.text)[:300]
    return f"{error.get('type', '')}: {error.get('message', '')}".strip(": ") or response.reason


def connect(cloud: str, error: type[HotplayError], needed_for: str) -> Any:
    """An openstacksdk connection to ``cloud`` (a clouds.yaml entry); ``error``
    naming what is missing when openstacksdk is not installed (``needed_for`` says
    what needs it) or the cloud cannot be configured."""
    try:
        # Imported here: only a migration from a running Heat needs openstacksdk.
        import openstack  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise error(f"{needed_for} needs the Python package openstacksdk "
                    "on the controller (pip install openstacksdk)") from None
    try:
        return openstack.connect(cloud=cloud)
    except Exception as failure:  # noqa: BLE001 - openstacksdk's config errors vary
        raise error(f"cloud {cloud}: {failure}") from None


@contextmanager
def heat_client(cloud: str) -> Iterator[HeatClient]:
    """A client of the orchestration service of ``cloud`` (a clouds.yaml entry)."""
    connection = connect(cloud, HeatApiError, "reaching a cloud")
    # keystoneauth1 comes with openstacksdk, which connect() has imported.
    from keystoneauth1 import adapter  # pylint: disable=import-outside-toplevel
    config = connection.config
    client = adapter.Adapter(
        session=connection.session, service_type="orchestration",
        interface=config.get_interface("orchestration"),
        region_name=config.get_region_name("orchestration"),
        endpoint_override=config.get_endpoint("orchestration"))
    try:
        yield HeatClient(client, cloud)
    finally:
        connection.close()
