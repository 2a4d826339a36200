# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one small interface every resource type implements.

A resource type is a class with a properties schema, an attributes schema and
``handle_create/update/delete``; nothing else.  The executor calls the handlers in
worker threads with resolved properties, and records what they return in the
store.  Adding a type means adding a class in the file of its family and
registering it with ``@register``: the executor never changes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import ResourceFailure
# Re-exported: a resource type finds what it needs in this one module. The 'X as X'
# form is how mypy's strict mode is told a re-export is meant; pylint does not know it.
from ..secrets import MASK as MASK  # pylint: disable=useless-import-alias
from ..store.base import ResourceState as ResourceState  # pylint: disable=useless-import-alias
from .runtime import RuntimeContext


# Keys of ``ResourceState.data`` that are this engine's bookkeeping, not Heat's
# resource data.
ENGINE_DATA_KEYS = frozenset({"attributes", "nested_stack_id", "name_skiplist", "external_id"})


@dataclass(frozen=True)
class Constraint:
    """One constraint of a property: ``kind`` is ``allowed_values``, ``range``,
    ``length``, ``allowed_pattern`` or ``modulo``; ``args`` its arguments."""

    kind: str
    args: Mapping[str, Any]
    description: str = ""


@dataclass(frozen=True)
class PropertySchema:
    """Schema of one property, as Heat's ``properties.Schema``."""

    type: str  # string | integer | number | boolean | map | list | any
    description: str = ""
    required: bool = False
    default: Any = None
    update_allowed: bool = False
    immutable: bool = False
    constraints: tuple[Constraint, ...] = ()
    # For a map: the schema of its known keys; for a list: the schema of its items.
    schema: Mapping[str, PropertySchema] | PropertySchema | None = None


@dataclass(frozen=True)
class AttributeSchema:
    description: str = ""
    type: str = "any"


@dataclass(frozen=True)
class Outcome:
    """What a create or update leaves: the physical id and the private data kept in
    the store with the resource (Heat's ``resource data``)."""

    physical_id: str
    data: Mapping[str, Any] = field(default_factory=dict)


class Resource:
    """Base of every resource type.  Handlers run in worker threads."""

    type_name: ClassVar[str] = ""
    properties_schema: ClassVar[Mapping[str, PropertySchema]] = {}
    attributes_schema: ClassVar[Mapping[str, AttributeSchema]] = {}
    # Nested-stack types (provider templates, OS::Heat::Stack, groups) set this:
    # their children are stacks of their own in the store.
    is_nested_stack: ClassVar[bool] = False
    # Whether a resource of this type that exists already (in a Heat stack's
    # abandon data) can be recorded as it is, with ``handle_adopt``.
    adoptable: ClassVar[bool] = False

    def __init__(self, name: str, runtime: RuntimeContext) -> None:
        self.name = name
        self.runtime = runtime

    # -- validation (no side effects) -------------------------------------------
    def validate(self, properties: Mapping[str, Any]) -> None:
        """Checks beyond the schema; raise StackValidationFailed with Heat's words."""

    # -- actions ------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        return Outcome(self.runtime.physical_name(self.name))

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Update in place; only called when ``replacement_reason`` found none."""
        return Outcome(current.physical_id, current.data)

    def handle_delete(self, current: ResourceState) -> None:
        """Remove the physical resource; must succeed when it is already gone."""

    def prepare_for_replace(self, current: ResourceState) -> None:
        """Heat's hook before a replacement is created: the old resource lets go of
        what the new one takes (a server's pre-made ports).  Default: nothing."""

    def restore_prev_rsrc(self, previous: ResourceState, replacement: ResourceState | None) -> None:
        """Heat's hook when a rollback brings the replaced resource back: what the
        replacement took goes back to it.  Default: nothing."""

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        """Record the existing resource ``adopted`` (a language.abandon.AbandonedResource)
        as this type keeps it: Heat's ``handle_adopt`` keeps the physical id and the
        resource data as they are.  Only called for ``adoptable`` types."""
        return Outcome(adopted.resource_id, dict(adopted.data))

    @classmethod
    def data_from_attributes(cls, attributes: Mapping[str, Any]) -> dict[str, Any]:
        """The resource data Heat keeps for such a resource, rebuilt from the
        attributes its API shows (when no abandon data can be had).  Default: none."""
        return {}

    @classmethod
    def abandon_data(cls, state: ResourceState) -> dict[str, Any]:
        """The resource data Heat would have for this resource (``resource_data`` of
        its abandon data): what the type keeps, less the engine's own keys."""
        return {key: value for key, value in state.data.items() if key not in ENGINE_DATA_KEYS}

    @classmethod
    def exported_metadata(cls, store: Any, stack_id: str, state: ResourceState) -> dict[str, Any]:
        """The resource's metadata as Heat's abandon data gives it (Heat's resource
        metadata): the template's, unless the type keeps more there."""
        return dict(state.metadata)

    def replacement_reason(
        self, old: Mapping[str, Any], new: Mapping[str, Any]
    ) -> str | None:
        """Why changing ``old`` properties to ``new`` needs a replacement (None: it
        does not).  Heat's rule: a changed property that is not update_allowed."""
        for key in sorted(set(old) | set(new)):
            if old.get(key) == new.get(key):
                continue
            schema = self.properties_schema.get(key)
            if schema is None or not schema.update_allowed:
                return f"property {key} changed and cannot be updated in place"
        return None

    def check_healthy(self, state: ResourceState) -> bool:
        """Whether the physical resource still exists as recorded (Heat's check);
        a rollback swaps a retired resource back only when it is healthy."""
        return True

    def needs_replace_failed(self, current: ResourceState) -> bool:
        """Whether a resource whose last action failed (or never finished) is
        replaced rather than updated; Heat replaces, except nested stacks."""
        return True

    def same_physical(self, retired: ResourceState, live: ResourceState) -> bool:
        """Whether ``live`` (a resource of the stack) is the very physical resource
        a replaced, ``retired`` one names: then deleting the retired one would
        destroy the live one, so only its record goes.  Default: same physical id."""
        return retired.physical_id == live.physical_id

    # -- secrets -------------------------------------------------------------------
    def secret_paths(self, properties: Mapping[str, Any]) -> list[tuple[str, ...]]:
        """Where secret values sit in these properties, as key paths (``("args",
        "password")``): masked wherever properties are shown, and the hook for
        encrypting them at rest.  Default: none."""
        return []

    def secret_values(self, properties: Mapping[str, Any]) -> Iterable[Any]:
        """Values among the resolved ``properties`` that are secrets (``no_log``
        arguments, passwords): masked in every output and stored only encrypted.
        The engine asks before it records the properties.  Default: the
        non-empty values at ``secret_paths`` (none)."""
        values = []
        for path in self.secret_paths(properties):
            value: Any = properties
            for key in path:
                value = value.get(key) if isinstance(value, Mapping) else None
            if value is not None and str(value):
                values.append(str(value))
        return values

    def masked_properties(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        """These properties as they may be shown: secrets replaced by ``MASK``."""
        shown = dict(properties)
        for path in self.secret_paths(properties):
            shown = _masked_at(shown, path)
        return shown

    # -- reading -------------------------------------------------------------------
    def reference_id(self, state: ResourceState) -> Any:
        """``get_resource``: the physical id, or the name before it has one (Heat)."""
        return state.physical_id or self.name

    def has_attributes(self, state: ResourceState) -> bool:
        """Whether ``get_attr`` reads this resource's attributes; else they are null
        (most types: not before it has a physical id)."""
        return bool(state.physical_id)

    def attribute(self, state: ResourceState, name: str) -> Any:
        """One attribute; the default reads what the handler kept in ``data``."""
        if name == "show":
            return self.masked_properties(state.properties)
        return state.data.get("attributes", {}).get(name)

    def attribute_names(self) -> frozenset[str] | None:
        """Names ``get_attr`` may ask for (None: any name, e.g. provider outputs)."""
        return frozenset(self.attributes_schema) | {"show"}

    @staticmethod
    def fail(message: str, error_type: str = "Error") -> ResourceFailure:
        """A failure of this resource, with the error class name Heat prints."""
        return ResourceFailure(message, error_type)


def _masked_at(values: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """A copy of ``values`` with the value at ``path`` masked (when it is there)."""
    shown = dict(values)
    head, rest = path[0], path[1:]
    if head not in shown:
        return shown
    if not rest:
        shown[head] = MASK
    elif isinstance(shown[head], Mapping):
        shown[head] = _masked_at(shown[head], rest)
    return shown


# Registry of builtin types: Heat's names and ours (``Hotplay::``).
_TYPES: dict[str, type[Resource]] = {}
# Builtin types whose module is imported only when a template first names one:
# type name -> the module that registers it.  Ansible's collection loader compiles
# a collection's Python anew for every run, and most stacks name none of the
# OpenStack types (thousands of lines).
_DEFERRED: dict[str, str] = {}
# Deferred modules whose import has finished: only then are all their types there.
_IMPORTED: set[str] = set()


def register(cls: type[Resource]) -> type[Resource]:
    """Class decorator: make a resource type known by its ``type_name``."""
    if not cls.type_name or cls.type_name in _TYPES or \
            _DEFERRED.get(cls.type_name, cls.__module__) != cls.__module__:
        raise ValueError(f"bad or duplicate resource type name {cls.type_name!r}")
    _TYPES[cls.type_name] = cls
    return cls


def register_deferred(package: str, types_by_module: Mapping[str, Iterable[str]]) -> None:
    """Make the types of each module of ``package`` (module name -> type names)
    known as builtin types, registered when their module is first imported."""
    for module, type_names in types_by_module.items():
        for type_name in type_names:
            if type_name in _TYPES or type_name in _DEFERRED:
                raise ValueError(f"bad or duplicate resource type name {type_name!r}")
            _DEFERRED[type_name] = f"{package}.{module}"


def resource_class(type_name: str) -> type[Resource] | None:
    """The class of a builtin type, or None when the type is unknown."""
    module = _DEFERRED.get(type_name)
    if module is not None and module not in _IMPORTED:
        # Thread-safe: while another thread runs the module, import_module waits
        # for it to finish, so no caller sees a half-made module.
        importlib.import_module(module)
        _IMPORTED.add(module)
    return _TYPES.get(type_name)


# The type of provider templates (resources.nested.TemplateResource), registered
# by its module: a type that is not builtin is a template file.
_TEMPLATE_TYPE: list[Callable[[str, RuntimeContext, str], Resource]] = []


def register_template_type(cls: Callable[[str, RuntimeContext, str], Resource]) -> None:
    _TEMPLATE_TYPE[:] = [cls]


def handler_for(name: str, implementation: str, runtime: RuntimeContext) -> Resource:
    """The handler of resource ``name`` implemented by ``implementation`` (a builtin
    type, or else a provider template file)."""
    cls = resource_class(implementation)
    if cls is not None:
        return cls(name, runtime)
    return _TEMPLATE_TYPE[0](name, runtime, implementation)


def known_types() -> list[str]:
    return sorted(set(_TYPES) | set(_DEFERRED))
