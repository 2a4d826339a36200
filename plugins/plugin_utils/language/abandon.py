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

Abandon data comes from elsewhere (another team's ``openstack stack abandon``, a
ticket's attachment), so it is read as hostile input: JSON only (no ``NaN`` or
``Infinity``), nested no deeper than documents may be, the stack named as Heat
names stacks, and no resource type that Heat itself does not have, anywhere in it
(its templates, the provider templates of its ``files``, its environments'
``resource_registry``, its resources, at any depth).  Heat never writes a type
only hotplay.stacks has (``Hotplay::Ansible::Module`` would run a command on the
controller): such data was not written by Heat.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import HotplayError, TemplateError, invalid_stack_name, printable, shown_name
from ..limits import MAX_DEPTH, MAX_NESTED_DEPTH
from .registry import BASE_URL, HOOKS, RESTRICTED, is_template_name
from .template.cfn import sections_of
from .template.loader import Unreadable, decode, load_template_yaml, read_regular

# The keys of a stack's abandon data without which nothing can be adopted (a
# nested stack's template is its parent's to make, as Heat's adopt does).
_STACK_KEYS = ("name", "id", "template", "resources")
_NESTED_KEYS = ("name", "id", "resources")
# The namespaces of the resource types Heat itself has (its plugins'); any other
# type name is a provider template (a file name, ``.yaml`` or ``.template``) or an
# alias that the environment's resource_registry maps to one of those.
HEAT_NAMESPACES = ("OS::", "AWS::")
# The namespace of the types only hotplay.stacks has: never in Heat's data.
OWN_NAMESPACE = "Hotplay::"
# Resources whose properties name more resource types: (type, property).
_TYPES_IN_PROPERTIES = (("OS::Heat::ResourceChain", "resources"),)
# Resources whose property holds a template of its own (text or a mapping).
_TEMPLATES_IN_PROPERTIES = (("OS::Heat::Stack", "template"),)


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
        data = json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as error:
        raise AbandonDataError(
            f"not JSON ({error.msg} at line {error.lineno} column {error.colno}): "
            "expected the JSON that openstack stack abandon writes", source=path) from None
    except RecursionError:  # nested deeper than the JSON decoder goes
        raise _too_deep(path, "") from None
    return read_abandon(data, path)


def read_abandon(data: Any, source: str) -> AbandonedStack:
    """Abandon data (already parsed) as records; ``source`` names it in errors.
    Refused, naming ``source`` and the place: data nested too deep, a number JSON
    cannot hold, a stack name Heat would refuse, a resource type Heat does not have."""
    _check_document(data, source)
    if isinstance(data, Mapping) and isinstance(data.get("name"), str):
        refused = invalid_stack_name(data["name"])
        if refused is not None:
            raise AbandonDataError(f"{refused.message} (no stack of Heat has such a name: this is "
                                   "not Heat's abandon data)", source=source, path="name")
    abandoned = _stack(data, source, "")
    foreign = foreign_types(abandoned)
    if foreign:
        listed = ", ".join(f"{place} ({type_name})" for place, type_name in foreign)
        raise AbandonDataError(
            f"resource types Heat does not have: {listed}; Heat's abandon data holds only "
            f"Heat's own types ({', '.join(n + '*' for n in HEAT_NAMESPACES)}) and provider "
            "templates, so this data was not written by Heat: nothing was adopted, nothing "
            "written", source=source)
    return abandoned


# JSON values with nothing to check in them.
_PLAIN = frozenset({str, int, bool, type(None)})


class _NotJson:
    """A constant JSON does not have (``NaN``, ``Infinity``), as the parser met it."""

    def __init__(self, token: str) -> None:
        self.token = token


def _not_json(token: str) -> _NotJson:
    return _NotJson(token)


def _check_document(data: Any, source: str) -> None:
    """No deeper than MAX_DEPTH, and only JSON's values: no ``NaN`` or ``Infinity``
    (Python's JSON reads them, SQLite would store them as no JSON, PostgreSQL
    refuses them), nor a number too large for a float (read as infinity), nor text
    that is not Unicode (a lone surrogate, which a JSON escape such as ``\\ud800``
    makes: no store writes it, and an export gave it back as ``?``).  Walked depth
    first, keeping only the keys of the path (a 10 MiB list has millions of items:
    nothing is kept per item)."""
    keys: list[Any] = []

    def visit(value: Any, depth: int) -> None:
        if isinstance(value, Mapping):
            children: Any = value.items()
        elif isinstance(value, list):
            children = enumerate(value)
        else:
            if isinstance(value, _NotJson):
                raise _not_a_number(f"{value.token} is not a JSON value (JSON has no NaN or "
                                    "Infinity)", source, keys)
            if isinstance(value, float) and not math.isfinite(value):
                raise _not_a_number("a number too large for JSON (it reads as Infinity)",
                                    source, keys)
            return
        if depth >= MAX_DEPTH:
            raise _too_deep(source, _spelled(keys))
        for key, child in children:
            keys.append(key)
            # Most values and keys are ASCII text: checked without a call.
            if isinstance(key, str) and not key.isascii():
                _check_unicode(key, "a key", source, keys)
            if isinstance(child, str):
                if not child.isascii():
                    _check_unicode(child, "a value", source, keys)
            elif type(child) not in _PLAIN:
                visit(child, depth + 1)
            keys.pop()

    visit(data, 0)


def _check_unicode(text: str, what: str, source: str, place: list[Any]) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise AbandonDataError(
            f"text that is not valid Unicode: a lone surrogate (\\u{ord(text[error.start]):04x}) at "
            f"character {error.start + 1} of {what}: expected the JSON that openstack stack "
            "abandon writes (Heat writes UTF-8 text)", source=source,
            path=printable(_spelled(place))) from None  # the key itself may be the bad text


def _not_a_number(what: str, source: str, place: list[Any]) -> AbandonDataError:
    return AbandonDataError(f"{what}: expected the JSON that openstack stack abandon writes",
                            source=source, path=_spelled(place))


def _too_deep(source: str, path: str) -> AbandonDataError:
    return AbandonDataError(f"nested deeper than the maximum of {MAX_DEPTH} levels: expected the "
                            "JSON that openstack stack abandon writes", source=source,
                            path=_cut(path))


def _spelled(place: list[Any]) -> str:
    path = ""
    for key in place:
        path += f"[{key}]" if isinstance(key, int) else (f".{key}" if path else str(key))
    return _cut(path)


def _cut(path: str, limit: int = 120) -> str:
    return path if len(path) <= limit else path[:limit] + "..."


# -- resource types: only Heat's ---------------------------------------------------------


def heat_has(type_name: str) -> bool:
    """Whether Heat itself can have a resource of this type: one of its own
    namespaces, or a provider template (Heat's rule: a name ending .yaml or .template)."""
    return type_name.startswith(HEAT_NAMESPACES) or is_template_name(type_name)


def foreign_types(abandoned: AbandonedStack) -> list[tuple[str, str]]:
    """(place, type) of every resource type in the abandon data that Heat does not
    have, at any depth: in its templates (a group's ``resource_def``, a chain's
    ``resources``, an ``OS::Heat::Stack``'s own template too), in the templates of
    its ``files``, as the target of a ``resource_registry`` mapping, as a resource's
    ``type``.  A name of hotplay.stacks' own namespace is never Heat's; another name
    outside Heat's namespaces is an alias, Heat's only when a mapping of the data
    renames it (the mapping's target is checked in turn)."""
    stacks = [("", abandoned)] + [("".join(f"resources.{n}." for n in path), entry.stack)
                                  for path, entry in abandoned.walk() if entry.stack is not None]
    mapped: list[str] = []
    found: list[tuple[str, str]] = []
    for prefix, stack in stacks:
        registry = stack.environment.get("resource_registry")
        if isinstance(registry, Mapping):
            found += _registry_targets(registry, f"{prefix}environment.resource_registry", mapped)
    for prefix, stack in stacks:
        found += _template_types(stack.template, f"{prefix}template", 0)
        for name, text in sorted(stack.files.items()):
            template = _as_template(text, name)
            if template is not None:
                found += _template_types(template, f"{prefix}files.{name}", 0)
        found += [(f"{prefix}resources.{name}.type", entry.type)
                  for name, entry in sorted(stack.resources.items())
                  if entry.stack is None and entry.type]
    return [(place, type_name) for place, type_name in found
            if not _known_to_heat(type_name, mapped)]


def _known_to_heat(type_name: str, mapped: list[str]) -> bool:
    name = type_name[:-1] if type_name.endswith("*") else type_name  # a wildcard's target
    if name.startswith(OWN_NAMESPACE):
        return False
    return heat_has(name) or any(
        type_name == key or (key.endswith("*") and fnmatch.fnmatchcase(type_name, key))
        for key in mapped)


def _registry_targets(registry: Mapping[str, Any], path: str,
                      mapped: list[str]) -> list[tuple[str, str]]:
    """(place, target) of every mapping of a resource_registry, per-resource entries
    too; the type names it maps are added to ``mapped``."""
    found: list[tuple[str, str]] = []
    for key, value in registry.items():
        here = f"{path}.{key}"
        if key in (HOOKS, RESTRICTED, BASE_URL):
            continue
        if isinstance(value, Mapping):
            found += _registry_targets(value, here, mapped)
        elif isinstance(value, str):
            mapped.append(str(key))
            found.append((here, value))
    return found


def _template_types(template: Any, path: str, depth: int) -> list[tuple[str, str]]:
    """(place, type) of the resource types a template names."""
    found: list[tuple[str, str]] = []
    # A CFN template's Resources and Type read under HOT's names.
    resources = sections_of(template).get("resources") if isinstance(template, Mapping) else None
    if not isinstance(resources, Mapping):
        return found
    for name, resource in resources.items():
        if not isinstance(resource, Mapping):
            continue
        here = f"{path}.resources.{name}"
        written = resource.get("type")
        if isinstance(written, str):
            found.append((f"{here}.type", written))
        properties = resource.get("properties")
        if not isinstance(properties, Mapping):
            continue
        # Types a property names: any "type" in the properties (a group's
        # resource_def, a scaling group's resource), a chain's list of types.
        found += [(f"{here}.properties.{place}", value) for place, value in _typed(properties, "")]
        for type_name, key in _TYPES_IN_PROPERTIES:
            listed = properties.get(key) if written == type_name else None
            if isinstance(listed, list):
                found += [(f"{here}.properties.{key}[{index}]", item)
                          for index, item in enumerate(listed) if isinstance(item, str)]
        for type_name, key in _TEMPLATES_IN_PROPERTIES:
            inner = properties.get(key) if written == type_name else None
            if isinstance(inner, str):
                inner = _as_template(inner, f"{here}.properties.{key}")
            if isinstance(inner, Mapping) and depth < MAX_NESTED_DEPTH:
                found += _template_types(inner, f"{here}.properties.{key}", depth + 1)
    return found


def _typed(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(place, value) of each ``type: <a namespaced name>`` inside ``value``."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if key == "type" and isinstance(item, str) and "::" in item:
                yield here, item
            else:
                yield from _typed(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _typed(item, f"{path}[{index}]")


def _as_template(text: str, source: str) -> Mapping[str, Any] | None:
    """A file's text as a template, or None when it is none (a script, a text that
    is not YAML: it cannot be run as a template either)."""
    try:
        data = load_template_yaml(text, source)
    except TemplateError:
        return None
    return data if isinstance(data, Mapping) and isinstance(data.get("resources"), Mapping) else None


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
    name = _text(data["name"], source, _join(path, "name"))
    if not name.isprintable():  # a nested stack's name is its parent's, its resource's
        raise AbandonDataError(f"stack name {shown_name(name)} has control characters: no stack of "
                               "Heat has such a name", source=source, path=_join(path, "name"))
    return AbandonedStack(
        name=name,
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
    if not entry.get("resource_id") and not _complete_without_id(entry):
        state = "_".join(str(entry.get(k) or "") for k in ("action", "status")).strip("_")
        raise AbandonDataError(
            f"resource {name} has no physical resource (resource_id is empty"
            f"{'; Heat has it ' + state if state else ''}): only a resource Heat created can be "
            "adopted", source=source, path=path)
    return AbandonedResource(
        name=name, type=_text(entry.get("type"), source, f"{path}.type"),
        resource_id=str(entry.get("resource_id") or ""),
        action=str(entry.get("action") or ""), status=str(entry.get("status") or ""),
        metadata=_mapping(entry.get("metadata") or {}, source, f"{path}.metadata"),
        data=_mapping(entry.get("resource_data") or {}, source, f"{path}.resource_data"),
    )


# Heat's types that never set a physical id (``resource_id`` stays null when they are done).
TYPES_WITHOUT_ID = frozenset({"OS::Heat::Delay", "OS::Heat::WaitCondition",
                              "AWS::CloudFormation::WaitCondition", "OS::Keystone::UserRoleAssignment",
                              "OS::Keystone::GroupRoleAssignment"})


def _complete_without_id(entry: Mapping[str, Any]) -> bool:
    """A resource of a type that Heat gives no id, done: nothing to find, all to keep."""
    return entry.get("type") in TYPES_WITHOUT_ID and entry.get("status") == "COMPLETE"


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
