# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's abandon data: a stack as ``openstack stack abandon`` (or ``stack export``)
writes it, read into plain records.

The format is Heat's ``Stack.prepare_abandon`` (heat/engine/stack.py): ``name``,
``id``, ``action``, ``status``, ``template``, ``environment``, ``files``,
``resources``, ``project_id``, ``stack_user_project_id``, ``tags``.  Each resource
is ``Resource.prepare_abandon`` (heat/engine/resource.py): ``name``,
``resource_id``, ``type``, ``action``, ``status``, ``metadata``,
``resource_data``; except a resource that is a stack of its own (a provider
template, ``OS::Heat::Stack``, a group), which is its nested stack's abandon data
(``StackResource.prepare_abandon``), resources and all, to any depth.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import HotplayError
from .template.loader import Unreadable, decode, read_regular

# The keys of a stack's abandon data without which nothing can be adopted (a
# nested stack's template is its parent's to make, as Heat's adopt does).
_STACK_KEYS = ("name", "id", "template", "resources")
_NESTED_KEYS = ("name", "id", "resources")


class AbandonDataError(HotplayError):
    """Abandon data that is not what Heat writes: nothing is adopted."""


@dataclass(frozen=True)
class AbandonedResource:
    """One resource of abandon data; ``stack`` is set when it is a nested stack."""

    name: str
    type: str
    resource_id: str
    action: str
    status: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)
    stack: "AbandonedStack | None" = None
    # The name the cloud shows for the physical resource (a server's, a network's),
    # read when it is adopted into a provider template that names it: not Heat's data.
    real_name: str = ""


@dataclass(frozen=True)
class AbandonedStack:
    name: str
    id: str
    action: str
    status: str
    template: Mapping[str, Any]
    environment: Mapping[str, Any]
    files: Mapping[str, str]
    resources: Mapping[str, AbandonedResource]
    project_id: str = ""
    tags: tuple[str, ...] = ()
    # Made up here for a provider template's resources (Heat's resource is one
    # thing): it lists each resource the template may have, whatever its conditions.
    made_up: bool = False

    def walk(self, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], AbandonedResource]]:
        """Every resource, nested ones too, with its path from this stack."""
        for name, resource in sorted(self.resources.items()):
            yield path + (name,), resource
            if resource.stack is not None:
                yield from resource.stack.walk(path + (name,))

    def with_real_names(self, names: Mapping[tuple[str, ...], str],
                        path: tuple[str, ...] = ()) -> "AbandonedStack":
        """A copy with ``real_name`` set on the resources at the paths of ``names``."""
        resources = {}
        for name, resource in self.resources.items():
            here = path + (name,)
            if resource.stack is not None:
                resource = replace(resource, stack=resource.stack.with_real_names(names, here))
            elif here in names:
                resource = replace(resource, real_name=names[here])
            resources[name] = resource
        return replace(self, resources=resources)

    def nested(self, path: tuple[str, ...]) -> "AbandonedStack | None":
        """The nested stack at ``path`` (resource names from this stack)."""
        stack: AbandonedStack | None = self
        for name in path:
            entry = stack.resources.get(name) if stack is not None else None
            stack = entry.stack if entry is not None else None
        return stack


def load_abandon_file(path: str) -> AbandonedStack:
    """Read and check an abandon file (JSON, as Heat writes it)."""
    try:
        text = decode(read_regular(path), path)
    except Unreadable as error:
        raise AbandonDataError(f"cannot read the abandon file: {error}", source=path) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise AbandonDataError(
            f"not JSON ({error.msg} at line {error.lineno} column {error.colno}): "
            "expected the JSON that openstack stack abandon writes", source=path) from None
    return read_abandon(data, path)


def read_abandon(data: Any, source: str) -> AbandonedStack:
    """Abandon data (already parsed) as records; ``source`` names it in errors."""
    return _stack(data, source, "")


def _stack(data: Any, source: str, path: str) -> AbandonedStack:
    where = path or "(top level)"
    if not isinstance(data, Mapping):
        raise AbandonDataError(f"expected a stack's abandon data (a mapping), got {_kind(data)}",
                               source=source, path=where)
    keys = _NESTED_KEYS if path else _STACK_KEYS
    missing = [key for key in keys if key not in data]
    if missing:
        raise AbandonDataError(f"missing {', '.join(missing)}: expected a stack's abandon data "
                               f"({', '.join(keys)}, ...)", source=source, path=where)
    template = _mapping(data.get("template") or {}, source, _join(path, "template"))
    environment = _mapping(data.get("environment") or {}, source, _join(path, "environment"))
    files = _mapping(data.get("files") or {}, source, _join(path, "files"))
    for name, text in files.items():
        if not isinstance(text, str):
            raise AbandonDataError(f"expected the file's text (a string), got {_kind(text)}",
                                   source=source, path=_join(path, f"files.{name}"))
    resources_path = _join(path, "resources")
    entries = _mapping(data["resources"], source, resources_path)
    resources = {str(name): _resource(str(name), entry, source, f"{resources_path}.{name}")
                 for name, entry in entries.items()}
    return AbandonedStack(
        name=_text(data["name"], source, _join(path, "name")),
        id=_text(data["id"], source, _join(path, "id")),
        action=str(data.get("action") or ""), status=str(data.get("status") or ""),
        template=template, environment=environment, files=dict(files), resources=resources,
        project_id=str(data.get("project_id") or ""),
        tags=tuple(str(tag) for tag in data.get("tags") or ()),
    )


def _resource(name: str, entry: Any, source: str, path: str) -> AbandonedResource:
    entry = _mapping(entry, source, path)
    if "resource_id" not in entry and "resources" in entry:
        nested = _stack(entry, source, path)  # a nested stack: its own abandon data
        return AbandonedResource(name=name, type="", resource_id=nested.id, action=nested.action,
                                 status=nested.status, stack=nested)
    if not entry.get("resource_id"):
        state = "_".join(str(entry.get(k) or "") for k in ("action", "status")).strip("_")
        raise AbandonDataError(
            f"resource {name} has no physical resource (resource_id is empty"
            f"{'; Heat has it ' + state if state else ''}): only a resource Heat created can be "
            "adopted", source=source, path=path)
    return AbandonedResource(
        name=name, type=_text(entry.get("type"), source, f"{path}.type"),
        resource_id=str(entry["resource_id"]),
        action=str(entry.get("action") or ""), status=str(entry.get("status") or ""),
        metadata=_mapping(entry.get("metadata") or {}, source, f"{path}.metadata"),
        data=_mapping(entry.get("resource_data") or {}, source, f"{path}.resource_data"),
    )


def _mapping(value: Any, source: str, path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise AbandonDataError(f"expected a mapping, got {_kind(value)}", source=source, path=path)
    return {str(key): item for key, item in value.items()}


def _text(value: Any, source: str, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise AbandonDataError(f"expected a non-empty string, got {_kind(value)}",
                               source=source, path=path)
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__)
