# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Template parameters: schemas, conversions, constraints, as Heat does them.

Sources of the rules (facts, re-implemented): ``heat/engine/hot/parameters.py``
(which keys and constraints each HOT version allows), ``heat/engine/parameters.py``
(conversions, defaults, the ``Parameter 'x' is invalid: ...`` wrapping),
``heat/engine/constraints.py`` (constraint checks and messages),
``heat/engine/parameter_groups.py`` and ``heat/common/exception.py``.
"""

from __future__ import annotations

import functools
import json
import numbers
import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Collection, Iterable, Iterator, Mapping, Protocol

from ...bounded import Exceeded, run_bounded
from ...errors import TemplateError
from ...limits import PATTERN_ADDRESS_SPACE, PATTERN_SECONDS

from ..template.versions import VERSIONS


class ParameterValues(Protocol):
    """Where values come from besides the task (language.environment.Environment)."""

    @property
    def parameters(self) -> Mapping[str, Any]: ...

    @property
    def parameter_defaults(self) -> Mapping[str, Any]: ...


# --- types -------------------------------------------------------------------------

STRING, NUMBER, LIST, JSON, BOOLEAN = (
    "String", "Number", "CommaDelimitedList", "Json", "Boolean")

# HOT spelling -> canonical name kept in ParameterSchema.type
HOT_TYPES = {
    "string": STRING, "number": NUMBER, "comma_delimited_list": LIST,
    "json": JSON, "boolean": BOOLEAN,
}
HOT_NAME = {canonical: hot for hot, canonical in HOT_TYPES.items()}

# --- keys and constraints per HOT version (heat/engine/hot/parameters.py) ----------

# Every key a constraint entry may carry, in every version (PARAM_CONSTRAINTS);
# a kind the version does not know is "No constraint expressed".
CONSTRAINT_ENTRY_KEYS = (
    "description", "length", "range", "modulo", "allowed_values",
    "allowed_pattern", "custom_constraint")
# Heat's order of precedence among the kinds of one entry (the first found wins);
# which kinds a version knows is in template/versions.py's one table.
KIND_PRECEDENCE = ("modulo", "range", "length", "allowed_values", "allowed_pattern",
                   "custom_constraint")


@dataclass(frozen=True)
class VersionRules:
    """What a parameter declaration may say in one HOT version."""

    keys: frozenset[str]
    # constraint kinds in Heat's order of precedence within one entry
    constraint_kinds: tuple[str, ...]


@functools.lru_cache(maxsize=None)
def rules_for(version_key: str) -> VersionRules:
    """The parameter rules of a canonical ``heat_template_version``."""
    version = VERSIONS[version_key]
    return VersionRules(version.parameter_keys,
                        tuple(k for k in KIND_PRECEDENCE if k in version.constraint_kinds))


# --- Heat's messages ------------------------------------------------------------------

MESSAGES = {
    "not_mapping": "Invalid %s, expected a mapping",
    "invalid_key": "Invalid key '%(key)s' for %(entity)s",
    "missing_type": "Missing parameter type for parameter: %s",
    "tags_list": "Tags property should be a list for parameter: %s",
    "invalid_type": "Invalid type (%s)",
    "constraints_list": "Invalid parameter constraints for parameter %s, expected a list",
    "no_constraint": "No constraint expressed",
    "range_empty": "A range constraint must have a min value and/or a max value specified.",
    "length_empty": "A length constraint must have a min value and/or a max value specified.",
    "min_max_numeric": "min/max must be numeric",
    "length_integral": "min/max length must be integral",
    "modulo_empty": "A modulo constraint must have a step value and an offset value specified.",
    "step_numeric": "step/offset must be numeric",
    "step_integer": "step/offset must be integer",
    "step_zero": "step cannot be 0.",
    "offset_size": "offset must be smaller (by absolute value) than step.",
    "step_sign": "step and offset must be both positive or both negative.",
    "allowed_values_list": "AllowedValues must be a list",
    "allowed_pattern_string": "AllowedPattern must be a string",
    "constraint_invalid_for": "%(name)s constraint invalid for %(utype)s",
    "invalid_default": "Invalid default %(default)s (%(exc)s)",
    "default_list": "Default must be a comma-delimited list string: %s",
    "param_invalid": "Parameter '%(name)s' is invalid: %(exp)s",
    "not_provided": "The Parameter (%(key)s) was not provided.",
    "not_defined": "The Parameter (%(key)s) was not defined in template.",
    "list_value": "Value must be a comma-delimited list string: %s",
    "json_value": "Value must be valid JSON: %s",
    "bool_value": "Unrecognized value '%(val)s', acceptable values are: %(acceptable)s",
    "schema_type": 'Value "%(val)s" is invalid for data type "%(type)s".',
    "out_of_range": "%s is out of range (min: %s, max: %s)",
    "length_out_of_range": "length (%d) is out of range (min: %s, max: %s)",
    # sic: Heat's message ends with a stray parenthesis
    "not_multiple": "%s is not a multiple of %s with an offset of %s)",
    "not_allowed": '"%s" is not an allowed value %s',
    "no_match": '"%s" does not match pattern "%s"',
    # parameter_groups (heat/engine/parameter_groups.py)
    "groups_error": "Parameter Groups error",
    "groups_list": "The parameter_groups should be a list.",
    "group_parameters": "The parameters must be provided for each parameter group.",
    "group_parameters_list": "The parameters of parameter group should be a list.",
    "group_once": "The %s parameter must be assigned to one parameter group only.",
    "group_unknown": "The grouped parameter %s does not reference a valid parameter.",
    # ours: Heat fails with an AttributeError on a group that is not a mapping
    "group_mapping": "Each parameter group should be a mapping.",
}

# oslo_utils.strutils.bool_from_string
TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")
FALSE_STRINGS = ("0", "f", "false", "off", "n", "no")

# Heat lists pseudo parameters among a template's parameters, so parameter_groups
# may name them (stack name is not known while groups are validated).
GROUPABLE_PSEUDO_PARAMETERS = ("OS::stack_id", "OS::project_id")


class _Invalid(Exception):
    """A value or default broke a rule; the text is Heat's."""


# --- conversions --------------------------------------------------------------------

def bool_from_string(value: Any) -> bool:
    """oslo's strict ``bool_from_string``: true/false, yes/no, on/off, 1/0, t/f, y/n."""
    if isinstance(value, bool):
        return value
    text = value if isinstance(value, str) else str(value)
    lowered = text.strip().lower()
    if lowered in TRUE_STRINGS:
        return True
    if lowered in FALSE_STRINGS:
        return False
    acceptable = ", ".join(f"'{s}'" for s in sorted(TRUE_STRINGS + FALSE_STRINGS))
    raise _Invalid(MESSAGES["bool_value"] % {"val": text, "acceptable": acceptable})


def str_to_num(value: Any) -> int | float:
    """Heat's ``Schema.str_to_num``: numbers pass, else int() then float()."""
    if isinstance(value, numbers.Number):
        return value  # type: ignore[return-value]
    try:
        try:
            return int(value)
        except ValueError:
            return float(value)
    except (ValueError, TypeError) as exc:
        raise _Invalid(str(exc)) from None


def parse_list(value: Any) -> list[str]:
    """A comma_delimited_list value: a list (items as strings) or a string."""
    if isinstance(value, list):
        return [str(item) for item in value]
    if not isinstance(value, str):
        # Heat's text comes from the AttributeError of value.split
        reason = f"'{type(value).__name__}' object has no attribute 'split'"
        raise _Invalid(MESSAGES["list_value"] % reason)
    if value == "":
        return []
    return [item.strip() for item in value.split(",")]


def parse_json(value: Any) -> Any:
    """A json value: a JSON string, or data that survives a JSON round trip."""
    text = value
    try:
        if not isinstance(text, str):
            text = json.dumps(text)
        if text:
            return json.loads(text)
    except (ValueError, TypeError) as exc:
        raise _Invalid(MESSAGES["json_value"] % exc) from None
    return value


def to_schema_type(value: Any, ptype: str) -> Any:
    """Heat's ``Schema.to_schema_type`` as AllowedValues uses it."""
    try:
        if ptype == NUMBER:
            return str_to_num(value)
        if ptype == STRING:
            return str(value)
        if ptype == BOOLEAN:
            return bool_from_string(str(value))
    except _Invalid:
        raise _Invalid(MESSAGES["schema_type"] % {"val": value, "type": HOT_NAME[ptype]}) from None
    return value


# --- constraints --------------------------------------------------------------------

@dataclass(frozen=True)
class Constraint:
    """Base of the constraint objects; ``kind`` is Heat's class name."""

    description: str | None = None
    kind: ClassVar[str] = "Constraint"
    valid_types: ClassVar[tuple[str, ...]] = ()

    def validate(self, value: Any, ptype: str, hidden: bool = False) -> None:
        """Raise ``_Invalid`` with the description, or Heat's message (a hidden
        parameter's value shown as Heat shows it: ``******``)."""
        if not self._is_valid(value, ptype):
            raise _Invalid(self.description or self._err_msg(HIDDEN_TEXT if hidden else value))

    def _is_valid(self, value: Any, ptype: str) -> bool:
        raise NotImplementedError

    def _err_msg(self, value: Any) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Range(Constraint):
    min: int | float | None = None
    max: int | float | None = None
    kind = "Range"
    valid_types: ClassVar[tuple[str, ...]] = (NUMBER,)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        number = str_to_num(value)
        return not ((self.min is not None and number < self.min)
                    or (self.max is not None and number > self.max))

    def _err_msg(self, value: Any) -> str:
        return MESSAGES["out_of_range"] % (value, self.min, self.max)


@dataclass(frozen=True)
class Length(Range):
    kind = "Length"
    valid_types = (STRING, LIST, JSON)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        return Range._is_valid(self, len(value), ptype)

    def validate(self, value: Any, ptype: str, hidden: bool = False) -> None:
        # The length is said, never the value: nothing to hide.
        super().validate(value, ptype)

    def _err_msg(self, value: Any) -> str:
        return MESSAGES["length_out_of_range"] % (len(value), self.min, self.max)


@dataclass(frozen=True)
class Modulo(Constraint):
    step: int = 1
    offset: int = 0
    kind = "Modulo"
    valid_types: ClassVar[tuple[str, ...]] = (NUMBER,)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        return str_to_num(value) % self.step == self.offset

    def _err_msg(self, value: Any) -> str:
        return MESSAGES["not_multiple"] % (value, self.step, self.offset)


@dataclass(frozen=True)
class AllowedValues(Constraint):
    allowed: tuple[Any, ...] = ()
    kind = "AllowedValues"
    valid_types = (STRING, NUMBER, BOOLEAN, LIST)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        # As Heat: list items are compared as they are, scalars after conversion.
        if isinstance(value, list):
            return all(item in self.allowed for item in value)
        allowed = tuple(to_schema_type(a, ptype) for a in self.allowed)
        return to_schema_type(value, ptype) in allowed

    def _err_msg(self, value: Any) -> str:
        allowed = "[%s]" % ", ".join(str(a) for a in self.allowed)
        return MESSAGES["not_allowed"] % (value, allowed)


@dataclass(frozen=True)
class AllowedPattern(Constraint):
    pattern: str = ""
    kind = "AllowedPattern"
    valid_types = (STRING,)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        if not isinstance(value, str):
            raise TypeError(f"expected string or bytes-like object, got '{type(value).__name__}'")
        try:
            return _full_match(self.pattern, value)
        except Exceeded as exc:
            # Never the value: it may be hidden.
            raise _Invalid(f'matching the pattern "{self.pattern}" {exc} '
                           "(a pattern that backtracks catastrophically?)") from None

    def _err_msg(self, value: Any) -> str:
        return MESSAGES["no_match"] % (value, self.pattern)


@functools.lru_cache(maxsize=1024)
def _full_match(pattern: str, value: str) -> bool:
    """Heat's test (``re.match`` up to the end), with a time limit: a pattern
    like ``(a+)+$`` takes exponential time on some values."""
    def matches() -> bool:
        match = re.match(pattern, value)
        return match is not None and match.end() == len(value)

    return run_bounded(matches, PATTERN_SECONDS, PATTERN_ADDRESS_SPACE)


@dataclass(frozen=True)
class CustomConstraint(Constraint):
    """A named OpenStack-backed check (``nova.flavor``, ``glance.image``, ...).

    There is no OpenStack here to ask, so the value is accepted unchecked.
    """

    name: str = ""
    kind = "CustomConstraint"
    valid_types = (STRING, NUMBER, BOOLEAN, LIST)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        return True


# --- schemas ------------------------------------------------------------------------

@dataclass(frozen=True)
class ParameterSchema:
    """One declared parameter.  ``type`` is the canonical name (``String``,
    ``Number``, ``CommaDelimitedList``, ``Json``, ``Boolean``); ``default`` None
    means there is none (the parameter is required), as in Heat."""

    name: str
    type: str
    default: Any = None
    description: str | None = None
    label: str | None = None
    hidden: bool = False
    immutable: bool = False
    constraints: tuple[Constraint, ...] = ()
    tags: tuple[Any, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is None

    @property
    def hot_type(self) -> str:
        """The type as HOT spells it (``comma_delimited_list``)."""
        return HOT_NAME[self.type]


def _check_dict(value: Any, allowed: Any, entity: str, source: str, path: str) -> None:
    """Heat's ``Schema._check_dict``: a mapping with only the allowed keys."""
    if not isinstance(value, Mapping):
        raise TemplateError(MESSAGES["not_mapping"] % entity, source=source, path=path)
    for key in value:
        if key not in allowed:
            message = MESSAGES["invalid_key"] % {"key": key, "entity": entity}
            raise TemplateError(message, source=source, path=path)


def _get_num(key: str, definition: Mapping[str, Any], source: str, path: str) -> Any:
    value = definition.get(key)
    if value is None:
        return None
    try:
        return str_to_num(value)
    except _Invalid as exc:
        raise TemplateError(str(exc), source=source, path=f"{path}.{key}") from None


def _is_numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) or value is None


def _range(cdef: Any, desc: Any, source: str, path: str, length: bool = False) -> Constraint:
    entity = "length constraint" if length else "range constraint"
    _check_dict(cdef, ("min", "max"), entity, source, path)
    low, high = _get_num("min", cdef, source, path), _get_num("max", cdef, source, path)
    # Heat checks Length's emptiness before Range's, with its own wording.
    if low is None and high is None:
        raise TemplateError(MESSAGES["length_empty" if length else "range_empty"],
                            source=source, path=path)
    if not (_is_numeric(low) and _is_numeric(high)):
        raise TemplateError(MESSAGES["min_max_numeric"], source=source, path=path)
    if length:
        if not all(isinstance(v, int) or v is None for v in (low, high)):
            raise TemplateError(MESSAGES["length_integral"], source=source, path=path)
        return Length(desc, low, high)
    return Range(desc, low, high)


def _modulo(cdef: Any, desc: Any, source: str, path: str) -> Constraint:
    _check_dict(cdef, ("step", "offset"), "modulo constraint", source, path)
    step, offset = _get_num("step", cdef, source, path), _get_num("offset", cdef, source, path)
    problem = None
    if step is None or offset is None:
        problem = "modulo_empty"
    elif not (_is_numeric(step) and _is_numeric(offset)):
        problem = "step_numeric"
    elif int(step) != step or int(offset) != offset:
        problem = "step_integer"
    elif int(step) == 0:
        problem = "step_zero"
    elif abs(int(offset)) >= abs(int(step)):
        problem = "offset_size"
    elif int(step) * int(offset) < 0:
        problem = "step_sign"
    if problem:
        raise TemplateError(MESSAGES[problem], source=source, path=path)
    return Modulo(desc, int(step), int(offset))


def _allowed_values(cdef: Any, desc: Any, source: str, path: str) -> Constraint:
    if not isinstance(cdef, (list, tuple)):
        raise TemplateError(MESSAGES["allowed_values_list"], source=source, path=path)
    return AllowedValues(desc, tuple(cdef))


def _allowed_pattern(cdef: Any, desc: Any, source: str, path: str) -> Constraint:
    if not isinstance(cdef, str):
        raise TemplateError(MESSAGES["allowed_pattern_string"], source=source, path=path)
    try:
        re.compile(cdef)
    except re.error as exc:  # Heat lets re.error escape; say what is wrong instead
        raise TemplateError(f"Invalid allowed_pattern: {exc}", source=source, path=path) from None
    return AllowedPattern(desc, cdef)


def _custom(cdef: Any, desc: Any, source: str, path: str) -> Constraint:
    return CustomConstraint(desc, cdef)


def _length(cdef: Any, desc: Any, source: str, path: str) -> Constraint:
    return _range(cdef, desc, source, path, length=True)


CONSTRAINT_BUILDERS: dict[str, Callable[[Any, Any, str, str], Constraint]] = {
    "range": _range, "length": _length, "modulo": _modulo,
    "allowed_values": _allowed_values, "allowed_pattern": _allowed_pattern,
    "custom_constraint": _custom,
}


def _constraints(name: str, spec: Mapping[str, Any], rules: VersionRules, source: str) -> tuple[Constraint, ...]:
    entries = spec.get("constraints")
    path = f"parameters.{name}.constraints"
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise TemplateError(MESSAGES["constraints_list"] % name, source=source, path=path)
    result = []
    for index, entry in enumerate(entries):
        here = f"{path}[{index}]"
        _check_dict(entry, CONSTRAINT_ENTRY_KEYS, "parameter constraints", source, here)
        # Heat takes the first kind present, in its order; the rest are ignored.
        kind = next((k for k in rules.constraint_kinds if k in entry), None)
        if kind is None:
            raise TemplateError(MESSAGES["no_constraint"], source=source, path=here)
        build = CONSTRAINT_BUILDERS[kind]
        result.append(build(entry[kind], entry.get("description"), source, f"{here}.{kind}"))
    return tuple(result)


def _schema(name: str, spec: Any, rules: VersionRules, source: str,
            default_replaced: bool = False) -> ParameterSchema:
    path = f"parameters.{name}"
    _check_dict(spec, rules.keys, f"parameter ({name})", source, path)
    if "type" not in spec:
        raise TemplateError(MESSAGES["missing_type"] % name, source=source, path=path)
    if "tags" in rules.keys and not isinstance(spec.get("tags", []), list):
        raise TemplateError(MESSAGES["tags_list"] % name, source=source, path=f"{path}.tags")
    ptype = HOT_TYPES.get(spec["type"]) if isinstance(spec["type"], str) else None
    if ptype is None:
        raise TemplateError(MESSAGES["invalid_type"] % spec["type"], source=source,
                            path=f"{path}.type")
    schema = ParameterSchema(
        name=name, type=ptype, default=spec.get("default"),
        description=spec.get("description"), label=spec.get("label"),
        # Heat uses these as given (truthiness), it does not check them
        hidden=bool(spec.get("hidden", False)), immutable=bool(spec.get("immutable", False)),
        constraints=_constraints(name, spec, rules, source), tags=tuple(spec.get("tags") or ()))
    _validate_schema(schema, source, check_default=not default_replaced)
    return schema


def _wrapped(name: str, exp: str) -> str:
    return MESSAGES["param_invalid"] % {"name": name, "exp": exp}


def _validate_schema(schema: ParameterSchema, source: str, check_default: bool = True) -> None:
    """Heat's ``Schema.validate``: constraint kinds fit the type; default obeys them."""
    for constraint in schema.constraints:
        if schema.type not in constraint.valid_types:
            exp = MESSAGES["constraint_invalid_for"] % {
                "name": constraint.kind, "utype": schema.hot_type}
            raise TemplateError(_wrapped(schema.name, exp), source=source,
                                path=f"parameters.{schema.name}.constraints")
    if schema.default is not None and check_default:
        _validate_default(schema, source)


def _default_for_constraints(schema: ParameterSchema) -> Any:
    default = schema.default
    if schema.type != LIST:
        return default
    if isinstance(default, list):
        return [str(item) for item in default]
    if not isinstance(default, str):
        reason = f"'{type(default).__name__}' object has no attribute 'split'"
        raise _Invalid(MESSAGES["default_list"] % reason)
    return default.split(",")  # as Heat: no stripping here


def _validate_default(schema: ParameterSchema, source: str) -> None:
    path = f"parameters.{schema.name}.default"
    try:
        value = _default_for_constraints(schema)
    except _Invalid as exc:
        raise _default_error(schema, str(exc), source, path) from None
    try:
        _check_constraints(schema, value, skip_custom=True)
    except _Invalid as exc:
        exp = MESSAGES["invalid_default"] % {"default": schema.default, "exc": exc}
        raise _default_error(schema, exp, source, path) from None


def _default_error(schema: ParameterSchema, exp: str, source: str, path: str) -> TemplateError:
    message = _wrapped(schema.name, exp)
    if schema.hidden:
        message = redacted(message, [schema.default])
    return TemplateError(message, source=source, path=path)


def _check_constraints(schema: ParameterSchema, value: Any, skip_custom: bool = False) -> None:
    for constraint in schema.constraints:
        if skip_custom and isinstance(constraint, CustomConstraint):
            continue
        try:
            constraint.validate(value, schema.type, schema.hidden)
        except TypeError as exc:  # e.g. len() of a number given for a string
            raise _Invalid(str(exc)) from None


HIDDEN_TEXT = "******"


def redacted(text: str, hidden_values: Iterable[Any]) -> str:
    """``text`` with every piece of text of the hidden values replaced by ``******``.

    Conversion errors quote what they were given (``invalid literal for int()
    ... 's3cr3t'``); a value that is a list or mapping is searched leaf by leaf.
    Pieces shorter than 3 characters are left: they would garble the message
    and hide nothing.
    """
    pieces = sorted({piece for value in hidden_values for piece in _texts(value)
                     if len(piece) >= 3}, key=len, reverse=True)
    for piece in pieces:
        text = text.replace(piece, HIDDEN_TEXT)
    return text


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _texts(key)
            yield from _texts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)
        if not isinstance(value, str):
            yield json.dumps(value)


def parse_parameter_schemas(section: Mapping[str, Any] | None, source: str, version_key: str,
                            replaced_defaults: Collection[str] = ()) -> dict[str, ParameterSchema]:
    """Validate a HOT template's ``parameters`` section; the schemas by name.

    ``version_key`` is the canonical ``heat_template_version`` date
    (``"2016-10-14"``); it selects the keys and constraint kinds allowed.
    ``replaced_defaults``: parameters whose default the environment's
    ``parameter_defaults`` replace; Heat (``Parameter.set_default``) never checks
    the template's own default of those (the value used is checked instead).
    """
    if not section:
        return {}
    if not isinstance(section, Mapping):
        raise TemplateError(MESSAGES["not_mapping"] % "parameters", source=source,
                            path="parameters")
    rules = rules_for(version_key)
    return {str(name): _schema(str(name), spec, rules, source, str(name) in replaced_defaults)
            for name, spec in section.items()}


# --- parameter_groups ---------------------------------------------------------------

def _heat_path(items: list[Any]) -> str:
    """Heat's HeatExceptionWithPath path text (digits as [n], others dotted)."""
    result = ""
    for item in items:
        if isinstance(item, int) or str(item).isdigit():
            result += f"[{item}]"
        elif result:
            result += f".{item}"
        else:
            result = str(item)
    return result


def _group_error(message: str, path: list[Any], source: str) -> TemplateError:
    # Heat's StackValidationFailed(error=..., path=..., message=...) text
    text = f"{MESSAGES['groups_error']}: {_heat_path(path)}: {message}"
    return TemplateError(text, source=source)


def validate_parameter_groups(groups: Any, schemas: Mapping[str, ParameterSchema],
                              source: str) -> None:
    """Heat's ``ParameterGroups.validate`` with its messages."""
    if not groups:
        return
    if not isinstance(groups, list):
        raise _group_error(MESSAGES["groups_list"], ["parameter_groups"], source)
    known = set(schemas) | set(GROUPABLE_PSEUDO_PARAMETERS)
    grouped: list[Any] = []
    for index, group in enumerate(groups):
        if not isinstance(group, Mapping):
            raise _group_error(MESSAGES["group_mapping"], ["parameter_groups", index], source)
        path = ["parameter_groups", group.get("label", "")]
        names = group.get("parameters")
        if names is None:
            raise _group_error(MESSAGES["group_parameters"], path, source)
        if not isinstance(names, list):
            raise _group_error(MESSAGES["group_parameters_list"], path, source)
        for name in names:
            if name in grouped:
                raise _group_error(MESSAGES["group_once"] % name, path, source)
            grouped.append(name)
            if not isinstance(name, str) or name not in known:
                raise _group_error(MESSAGES["group_unknown"] % name, path, source)


# --- values -------------------------------------------------------------------------

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
