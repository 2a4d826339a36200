# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parameter values: what a stack's parameters are, from the task, the environment and the
defaults, converted and checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from ...errors import TemplateError
from .schema import ParameterSchema, _check_constraints, _wrapped, check_default, redacted
from .types import (
    BOOLEAN,
    JSON,
    LIST,
    MESSAGES,
    NUMBER,
    _Invalid,
    bool_from_string,
    parse_json,
    parse_list,
    str_to_num,
)


class ParameterValues(Protocol):
    """Where values come from besides the task (language.environment.Environment)."""

    @property
    def parameters(self) -> Mapping[str, Any]: ...

    @property
    def parameter_defaults(self) -> Mapping[str, Any]: ...


def _checked(schema: ParameterSchema, raw: Any) -> Any:
    """Heat's ``Parameter._validate`` then ``value()``: the converted value."""
    if schema.type == NUMBER:
        number = str_to_num(raw)
        _check_constraints(schema, raw)
        return number
    if schema.type == BOOLEAN:
        bool_from_string(raw)
        _check_constraints(schema, raw)
        return bool_from_string(str(raw))
    if schema.type == LIST:
        value = parse_list(raw)
        _check_constraints(schema, value)
        return value
    if schema.type == JSON:
        value = parse_json(raw)
        _check_constraints(schema, value)
        return value
    _check_constraints(schema, raw)
    return str(raw)


@dataclass(frozen=True)
class Parameters:
    """The parameter values of one stack, converted to their types."""

    values: Mapping[str, Any]
    schemas: Mapping[str, ParameterSchema] = field(default_factory=dict)
    # While the stack loads: what reading a parameter with no usable value says.
    unreadable: Mapping[str, str] = field(default_factory=dict)

    def hidden_names(self) -> frozenset[str]:
        return frozenset(n for n, s in self.schemas.items() if s.hidden)

    def display(self) -> dict[str, Any]:
        """Values for task output; hidden ones shown as Heat shows them."""
        hidden = self.hidden_names()
        return {n: "******" if n in hidden else v for n, v in self.values.items()}

    def secret_values(self) -> dict[str, Any]:
        """Values of hidden parameters that are secrets: all but a template's own
        default, which the stored template holds in plain text anyway."""
        found = {}
        for name in sorted(self.hidden_names()):
            schema, value = self.schemas[name], self.values.get(name)
            if schema.default is not None and value == _default_value(schema):
                continue
            found[name] = value
        return found

    def hidden_defaults(self) -> dict[str, Any]:
        """Values of hidden parameters left at their template's default: no secrets
        to keep (the stored template holds them), but never shown either."""
        secret = self.secret_values()
        return {name: self.values.get(name) for name in sorted(self.hidden_names())
                if name not in secret and self.values.get(name) is not None}


def given_beyond_defaults(schemas: Mapping[str, ParameterSchema], given: Mapping[str, Any],
                          env: ParameterValues) -> dict[str, Any]:
    """``given`` without the values that change nothing: those equal, once converted,
    to what the parameter would be had it not been given (the environment's
    ``parameters``, its ``parameter_defaults``, the template's default).  A stack
    given ``n: 2`` whose default is 2 is the stack given nothing: the same
    definition (issue 40: an adopted stack's first apply changed nothing else)."""
    kept = {}
    for name, value in given.items():
        schema = schemas.get(name)
        _origin, fallback = _pick(name, ("", env.parameters), ("", env.parameter_defaults))
        fallback = schema.default if fallback is None and schema is not None else fallback
        if schema is None or value is None or fallback is None or not _same_value(schema, value, fallback):
            kept[name] = value
    return kept


def _same_value(schema: ParameterSchema, value: Any, other: Any) -> bool:
    try:
        return bool(_checked(schema, value) == _checked(schema, other))
    except _Invalid:
        return False


def _default_value(schema: ParameterSchema) -> Any:
    """The template's default converted as a given value would be (None: invalid)."""
    try:
        return _checked(schema, schema.default)
    except _Invalid:
        return None


def _unknown_names(schemas: Mapping[str, ParameterSchema], given: Mapping[str, Any],
                   env: ParameterValues, source: str) -> None:
    # Heat checks the user's values and the environment's `parameters` section
    # alike (both are its user_params); parameter_defaults may name anything.
    for name in list(given) + list(env.parameters):
        if name not in schemas:
            # The place is the section that does not declare it.
            raise TemplateError(MESSAGES["not_defined"] % {"key": name}, source=source,
                                path="parameters")


def _pick(name: str, *layers: tuple[str, Mapping[str, Any]]) -> tuple[str, Any]:
    """The first value that is not null, and where it comes from."""
    for origin, layer in layers:
        value = layer.get(name)
        if value is not None:
            return origin, value
    return "", None


def resolve_parameters(schemas: Mapping[str, ParameterSchema], given: Mapping[str, Any],
                       env: ParameterValues, source: str) -> Parameters:
    """The stack's parameter values, checked and converted as Heat does.

    Precedence: ``given`` (the task's values) > the environment's ``parameters``
    > its ``parameter_defaults`` > the template's default; a ``null`` at one level
    falls through to the next.  Every constraint is checked with Heat's wording,
    except ``custom_constraint``: it needs OpenStack services, which do not exist
    here, so it is accepted and skipped.
    """
    _unknown_names(schemas, given, env, source)
    values: dict[str, Any] = {}
    for name, schema in schemas.items():
        # Heat validates parameter by parameter: the default, then the value.
        if name not in env.parameter_defaults:
            check_default(schema, source)
        origin, raw = _pick(name, ("", given),
                            ("the environment's parameters", env.parameters),
                            ("the environment's parameter_defaults", env.parameter_defaults))
        if raw is None:
            origin, raw = "", schema.default
        path = f"parameters.{name}"
        if raw is None:
            raise TemplateError(MESSAGES["not_provided"] % {"key": name}, source=source, path=path)
        try:
            values[name] = _checked(schema, raw)
        except _Invalid as exc:
            message = _wrapped(name, str(exc))
            if schema.hidden:  # Heat's messages quote the value: not this one
                message = redacted(message, [raw])
            # The template declares it; say which file's section the wrong value
            # comes from, unless it is the task's own (Heat's words otherwise).
            if origin:
                message += f" (the value comes from {origin})"
            raise TemplateError(message, source=source, path=path) from None
    return Parameters(values, dict(schemas))


def provisional_parameters(schemas: Mapping[str, ParameterSchema], given: Mapping[str, Any],
                           env: ParameterValues) -> Parameters:
    """The values as Heat's ``Parameter.value()`` gives them before they are
    validated (while the stack loads): converted to their types, constraints not
    checked.  A value missing or not convertible is left out, and ``unreadable``
    says what reading it fails with, in Heat's words: a conversion's error (a
    boolean with no value is ``str(None)``: ``Unrecognized value 'None' ...``),
    else ``The Parameter (name) was not provided.``"""
    values: dict[str, Any] = {}
    unreadable: dict[str, str] = {}
    for name, schema in schemas.items():
        raw = _pick(name, ("", given), ("", env.parameters), ("", env.parameter_defaults))[1]
        raw = schema.default if raw is None else raw
        if raw is None and schema.type != BOOLEAN:
            continue
        try:
            values[name] = _converted(schema, raw)
        except (_Invalid, TypeError, ValueError) as error:
            message = str(error)
            unreadable[name] = redacted(message, [raw]) if schema.hidden and raw is not None else message
    return Parameters(values, dict(schemas), unreadable)


def _converted(schema: ParameterSchema, raw: Any) -> Any:
    if schema.type == NUMBER:
        return str_to_num(raw)
    if schema.type == BOOLEAN:
        return bool_from_string(str(raw))
    if schema.type == LIST:
        return parse_list(raw)
    if schema.type == JSON:
        return parse_json(raw)
    return str(raw)
