# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation of resource properties against a type's schema, as Heat does it.

``validate_properties`` checks unknown keys, required keys, types (with Heat's
coercions) and constraints, fills defaults, and returns the properties the
handlers see.  Errors carry Heat's words, e.g.::

    Property error: resources.bad.properties.length: 0 is out of range (min: 1, max: 512)
    Property error: resources.bad.properties: Unknown Property foo
    Property error: resources.cfg.properties.inputs[0]: Property name not assigned

Facts from Heat 27 (``heat/engine/properties.py`` and ``constraints.py``):

- every key of the schema is in the result; a key neither given nor defaulted is
  ``None``; a map with a schema holds exactly its schema's keys;
- an explicit ``null`` means "the type's empty value or the default"
  (``''``, ``0``, ``False``, ``{}``, ``[]``); it does not trip ``required``;
- ``"5"`` is an integer/number, ``5.7`` is the integer 5, ``True``/``5`` are the
  strings ``"True"``/``"5"``, ``"TRUE"`` is a boolean, ``1`` is not, and a string
  is never a list (comma splitting is only for provider templates);
- unknown keys are reported before anything else; then each property in schema
  order, its type first, then its nested schema, then its constraints.

Values not known yet (a ``get_attr`` on a resource not created) are the
``UNKNOWN`` sentinel; with ``partial=True`` they are kept as they are and their
type and constraints are not checked.  The keys named in ``unchecked`` hold what a
value that reads other resources gives before they exist (``get_resource``: the
name, ``get_attr``: null): as in Heat (``Properties._find_deps_any_in_init``) they
are converted to their type, which may fail, but their constraints are not checked,
nor the keys of their nested maps.

Three optional class attributes of a resource type are honoured:
``accepts_any_properties`` (OS::Heat::None: anything goes, nothing is kept),
``keeps_any_properties`` (Hotplay::ReadOnly: anything goes, kept as given),
``kept_as_written`` (property names whose value is checked against its type but
kept as resolved, not converted: OS::Heat::Value's ``value``) and the classmethod
``properties_schema_for(values)`` (OS::Heat::Value: the schema depends on another
property's value).
"""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import StackValidationFailed, join_path
from .base import Constraint, PropertySchema


class _Unknown:
    """A value that will only be known once the stack runs."""

    _instance: "_Unknown | None" = None

    def __new__(cls) -> "_Unknown":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class _Mode:
    """How a value is checked: ``partial`` lets UNKNOWN through; ``constrain`` is
    false for a value that reads resources not created yet (its type is checked,
    not its constraints)."""

    partial: bool
    constrain: bool = True


# -- constraint constructors (the ``args`` of each kind, in one place) ------------
def allowed_values(*values: Any, description: str = "") -> Constraint:
    return Constraint("allowed_values", {"allowed": tuple(values)}, description)


def value_range(min: float | None = None, max: float | None = None,
                description: str = "") -> Constraint:
    return Constraint("range", {"min": min, "max": max}, description)


def length(min: int | None = None, max: int | None = None,
           description: str = "") -> Constraint:
    return Constraint("length", {"min": min, "max": max}, description)


def modulo(step: int, offset: int, description: str = "") -> Constraint:
    return Constraint("modulo", {"step": step, "offset": offset}, description)


def allowed_pattern(pattern: str, description: str = "") -> Constraint:
    return Constraint("allowed_pattern", {"pattern": pattern}, description)


# -- the public entry point ------------------------------------------------------
def validate_properties(resource_class: type, values: Mapping[str, Any] | None,
                        path: str, partial: bool = False,
                        unchecked: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The validated properties of a resource, or StackValidationFailed.

    ``path`` is where the properties live (``resources.bad.properties``); it
    prefixes Heat's message.  With ``partial`` the ``UNKNOWN`` values are skipped;
    the keys in ``unchecked`` are converted but not constrained.
    """
    values = values or {}
    if getattr(resource_class, "accepts_any_properties", False):
        # Heat's OS::Heat::None re-parses its properties with an empty schema.
        return {}
    if getattr(resource_class, "keeps_any_properties", False):
        return dict(values)  # Hotplay::ReadOnly: another type's, kept as written
    schema = schema_for(resource_class, values)
    try:
        checked = _validate_mapping(schema, values, _Mode(partial), unchecked)
    except _Invalid as err:
        where = join_path(path, err.path)
        raise StackValidationFailed(f"Property error: {where}: {err.message}") from None
    for key in getattr(resource_class, "kept_as_written", ()):
        if key in values:
            checked[key] = values[key]
    return checked


def schema_for(resource_class: type, values: Mapping[str, Any]) -> Mapping[str, PropertySchema]:
    """The schema that applies to these values (most types: a fixed one)."""
    hook = getattr(resource_class, "properties_schema_for", None)
    schema: Mapping[str, PropertySchema] = (
        hook(values) if hook is not None else getattr(resource_class, "properties_schema"))
    return schema


# Exact types that hold nothing: tested first, as isinstance against the Mapping ABC
# is slow and every property value of every resource comes here.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def contains_unknown(value: Any) -> bool:
    if type(value) in _SCALARS:
        return False
    if value is UNKNOWN:
        return True
    if isinstance(value, Mapping):
        return any(contains_unknown(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_unknown(v) for v in value)
    return False


# -- internals -----------------------------------------------------------------------
class _Invalid(Exception):
    """A validation error and where it is, relative to the current mapping."""

    def __init__(self, message: str, path: Sequence[str | int] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.path = list(path)

    def under(self, key: str | int) -> "_Invalid":
        return _Invalid(self.message, [key, *self.path])


def _validate_mapping(schema: Mapping[Any, PropertySchema], data: Mapping[Any, Any],
                      mode: _Mode, unchecked: frozenset[str] = frozenset()) -> dict[Any, Any]:
    # Heat reads an unconstrained nested map through its schema's keys only.
    for key in data if mode.constrain else ():
        if key not in schema:
            raise _Invalid(f"Unknown Property {key}")
    loose = _Mode(mode.partial, constrain=False)
    return {key: _property_value(key, prop, data, loose if key in unchecked else mode)
            for key, prop in schema.items()}


def _property_value(key: str | int, prop: PropertySchema,
                    data: Mapping[Any, Any], mode: _Mode) -> Any:
    if key in data:
        try:
            return _checked_value(prop, data[key], mode)
        except _Invalid as err:
            raise err.under(key) from None
    if prop.default is not None:
        try:
            return _checked_value(prop, None, mode)
        except _Invalid as err:
            raise err.under(key) from None
    if prop.required:
        # Heat names no sub-path here: the key is in the message.
        raise _Invalid(f"Property {key} not assigned")
    return None


def _checked_value(prop: PropertySchema, value: Any, mode: _Mode) -> Any:
    if value is UNKNOWN:
        if not mode.partial:
            raise TypeError("UNKNOWN property value outside partial validation")
        return UNKNOWN
    coerced = _coerce(prop, value, mode)
    if mode.constrain and not contains_unknown(coerced):
        for constraint in prop.constraints:
            _check_constraint(constraint, prop, coerced)
    return coerced


def _coerce(prop: PropertySchema, value: Any, mode: _Mode) -> Any:
    coerce = _COERCERS.get(prop.type)
    if coerce is None:
        raise ValueError(f"unknown property type {prop.type!r}")
    try:
        return coerce(prop, value, mode)
    except (TypeError, ValueError) as err:
        # Heat turns any error of a conversion into the message of the error.
        raise _Invalid(str(err)) from None


def _default_or(prop: PropertySchema, empty: Any) -> Any:
    # Heat: ``has_default() and default() or <empty>`` (a falsy default is empty).
    return prop.default if prop.default is not None and prop.default else empty


def _to_string(prop: PropertySchema, value: Any, mode: _Mode) -> str:
    if value is None:
        value = _default_or(prop, "")
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int)):
        return str(value)
    raise ValueError(f"Value must be a string; got {value!r}")


def _to_integer(prop: PropertySchema, value: Any, mode: _Mode) -> int:
    if value is None:
        value = _default_or(prop, 0)
    try:
        return int(value)
    except ValueError:
        raise TypeError(f"Value '{value}' is not an integer") from None


def str_to_num(value: Any) -> int | float:
    """Heat's ``Schema.str_to_num``: numbers stay, strings become int or float."""
    if isinstance(value, numbers.Number):
        return value  # type: ignore[return-value]
    try:
        return int(value)
    except ValueError:
        return float(value)


def _to_number(prop: PropertySchema, value: Any, mode: _Mode) -> int | float:
    if value is None:
        value = _default_or(prop, 0)
    return str_to_num(value)


def _to_boolean(prop: PropertySchema, value: Any, mode: _Mode) -> bool:
    if value is None:
        value = _default_or(prop, False)
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        normalised = value.lower()
        if normalised not in ("true", "false"):
            raise ValueError(f'"{normalised}" is not a valid boolean')
        return normalised == "true"
    raise TypeError(f'"{value}" is not a valid boolean')


def _to_map(prop: PropertySchema, value: Any, mode: _Mode) -> dict[Any, Any]:
    if value is None:
        value = prop.default if prop.default is not None else {}
    if not isinstance(value, Mapping):
        raise TypeError(f'"{value}" is not a map')
    if isinstance(prop.schema, Mapping):
        return _validate_mapping(prop.schema, value, mode)
    return dict(value)


def _to_list(prop: PropertySchema, value: Any, mode: _Mode) -> list[Any]:
    if value is None:
        value = _default_or(prop, [])
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise TypeError(f'"{value!r}" is not a list')
    if isinstance(prop.schema, PropertySchema):
        item_schema = prop.schema
        return [_list_item(index, item_schema, item, mode)
                for index, item in enumerate(value)]
    return list(value)


def _list_item(index: int, schema: PropertySchema, item: Any, mode: _Mode) -> Any:
    try:
        return _checked_value(schema, item, mode)
    except _Invalid as err:
        raise err.under(index) from None


def _to_any(prop: PropertySchema, value: Any, mode: _Mode) -> Any:
    return value


_COERCERS = {
    "string": _to_string,
    "integer": _to_integer,
    "number": _to_number,
    "boolean": _to_boolean,
    "map": _to_map,
    "list": _to_list,
    "any": _to_any,
}


# -- constraints -----------------------------------------------------------------------
def _check_constraint(constraint: Constraint, prop: PropertySchema, value: Any) -> None:
    check = _CONSTRAINT_CHECKS.get(constraint.kind)
    if check is None:
        raise ValueError(f"unknown constraint kind {constraint.kind!r}")
    try:
        error = check(constraint.args, prop, value)
    except (TypeError, ValueError) as err:
        error = str(err)
    if error is not None:
        # Heat: a constraint's description, when it has one, replaces its message.
        raise _Invalid(constraint.description or error)


def _check_range(args: Mapping[str, Any], prop: PropertySchema, value: Any) -> str | None:
    number = str_to_num(value)
    low, high = args.get("min"), args.get("max")
    if (low is not None and number < low) or (high is not None and number > high):
        return f"{value} is out of range (min: {low}, max: {high})"
    return None


def _check_length(args: Mapping[str, Any], prop: PropertySchema, value: Any) -> str | None:
    size = len(value)
    low, high = args.get("min"), args.get("max")
    if (low is not None and size < low) or (high is not None and size > high):
        return f"length ({size}) is out of range (min: {low}, max: {high})"
    return None


def _check_modulo(args: Mapping[str, Any], prop: PropertySchema, value: Any) -> str | None:
    step, offset = args["step"], args["offset"]
    if str_to_num(value) % step != offset:
        return f"{value} is not a multiple of {step} with an offset of {offset}"
    return None


def _check_pattern(args: Mapping[str, Any], prop: PropertySchema, value: Any) -> str | None:
    pattern = args["pattern"]
    match = re.match(pattern, value)
    if match is None or match.end() != len(value):
        return f'"{value}" does not match pattern "{pattern}"'
    return None


def _check_allowed(args: Mapping[str, Any], prop: PropertySchema, value: Any) -> str | None:
    allowed = tuple(args["allowed"])
    if isinstance(value, list):
        # Heat: every item of a list must be allowed (compared as they are).
        valid = all(item in allowed for item in value)
    else:
        valid = _in_schema_type(prop.type, value) in tuple(
            _in_schema_type(prop.type, item) for item in allowed)
    if valid:
        return None
    shown = ", ".join(json.dumps(item) for item in allowed)
    return f"{json.dumps(value)} is not an allowed value [{shown}]"


_TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")
_FALSE_STRINGS = ("0", "f", "false", "off", "n", "no")


def _in_schema_type(prop_type: str, value: Any) -> Any:
    """Heat's ``Schema.to_schema_type``: how AllowedValues compares values."""
    try:
        if prop_type == "integer":
            number = str_to_num(value)
            if isinstance(number, float):
                raise ValueError(number)
            return number
        if prop_type == "number":
            return str_to_num(value)
        if prop_type == "string":
            return str(value)
        if prop_type == "boolean":
            return _strict_bool(str(value))
    except ValueError:
        raise ValueError(
            f'Value "{value}" is invalid for data type "{prop_type.capitalize()}".'
        ) from None
    return value


def _strict_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE_STRINGS:
        return True
    if lowered in _FALSE_STRINGS:
        return False
    raise ValueError(text)


_CONSTRAINT_CHECKS = {
    "range": _check_range,
    "length": _check_length,
    "modulo": _check_modulo,
    "allowed_pattern": _check_pattern,
    "allowed_values": _check_allowed,
}


# -- a provider template's parameters as properties -------------------------------
# Heat's ``Schema.from_parameter``: the property type of each parameter type.
PROVIDER_PROPERTY_TYPES = {"string": "string", "number": "number", "comma_delimited_list": "list",
                           "json": "map", "boolean": "boolean"}


def check_provider_properties(declared: Mapping[str, Any], values: Mapping[str, Any], path: str,
                              defaulted: frozenset[str] | None = None,
                              reading: frozenset[str] = frozenset()) -> None:
    """A provider template's parameters are the resource's properties, typed (and,
    with ``defaulted``, the names given a default by the environment, required) as
    Heat's ``Properties.schema_from_params`` makes them.  Without ``defaulted``
    (a resource about to act, its values all known) types only."""
    schemas: dict[str, PropertySchema] = {}
    for name, spec in declared.items():
        kind = PROVIDER_PROPERTY_TYPES.get(str(spec.get("type"))) if isinstance(spec, Mapping) else None
        if kind is not None:
            required = defaulted is not None and spec.get("default") is None and name not in defaulted
            schemas[str(name)] = PropertySchema(kind, required=required)
    holder = type("ProviderProperties", (), {"properties_schema": schemas})
    converted = {k: provider_conversion(schemas.get(k), v) for k, v in values.items()}
    validate_properties(holder, converted, path, partial=defaulted is not None, unchecked=reading)


def provider_conversion(schema: PropertySchema | None, value: Any) -> Any:
    """Heat's ``allow_conversion`` of parameter-made properties: a list may be given
    as comma-separated text, a ``json`` value as text or a list (checked by the
    nested stack's parameter)."""
    if schema is None or value is UNKNOWN:
        return value
    if schema.type == "list" and isinstance(value, str):
        return value.split(",") if value else []  # no stripping (Heat 27)
    if schema.type == "map" and (isinstance(value, str) or (
            isinstance(value, (list, tuple)))):
        return {}
    return value
