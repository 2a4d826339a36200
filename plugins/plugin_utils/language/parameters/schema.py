# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A template's ``parameters`` and ``parameter_groups`` sections, checked as Heat checks them:
the keys and constraint kinds each HOT version allows (from the one version table),
schemas, defaults, groups."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Iterator, Mapping

from ...errors import TemplateError, join_path
from ..template.versions import VERSIONS
from .constraints import (
    AllowedPattern,
    AllowedValues,
    Constraint,
    CustomConstraint,
    Length,
    Modulo,
    Range,
)
from .types import (
    GROUPABLE_PSEUDO_PARAMETERS,
    HIDDEN_TEXT,
    HOT_NAME,
    HOT_TYPES,
    LIST,
    MESSAGES,
    _Invalid,
    str_to_num,
)

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
    # Declared in a CFN template (``Type: CommaDelimitedList``), not in HOT.
    cfn: bool = False

    @property
    def required(self) -> bool:
        return self.default is None

    @property
    def hot_type(self) -> str:
        """The type as HOT spells it (``comma_delimited_list``)."""
        return HOT_NAME[self.type]

    @property
    def written_type(self) -> str:
        """The type as the template spells it (Heat's messages quote that)."""
        return self.type if self.cfn else self.hot_type


def check_dict(value: Any, allowed: Any, entity: str, source: str, path: str) -> None:
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
    check_dict(cdef, ("min", "max"), entity, source, path)
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
    check_dict(cdef, ("step", "offset"), "modulo constraint", source, path)
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
        check_dict(entry, CONSTRAINT_ENTRY_KEYS, "parameter constraints", source, here)
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
    check_dict(spec, rules.keys, f"parameter ({name})", source, path)
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
    validate_schema(schema, source, check_default=not default_replaced)
    return schema


def _wrapped(name: str, exp: str) -> str:
    return MESSAGES["param_invalid"] % {"name": name, "exp": exp}


def validate_schema(schema: ParameterSchema, source: str, check_default: bool = True) -> None:
    """Heat's ``Schema.validate``: constraint kinds fit the type; default obeys them."""
    for constraint in schema.constraints:
        if schema.type not in constraint.valid_types:
            exp = MESSAGES["constraint_invalid_for"] % {
                "name": constraint.kind, "utype": schema.written_type}
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
                            replaced_defaults: Collection[str] = (),
                            check_defaults: bool = True) -> dict[str, ParameterSchema]:
    """Validate a HOT template's ``parameters`` section; the schemas by name.

    ``version_key`` is the canonical ``heat_template_version`` date
    (``"2016-10-14"``); it selects the keys and constraint kinds allowed.
    ``replaced_defaults``: parameters whose default the environment's
    ``parameter_defaults`` replace; Heat (``Parameter.set_default``) never checks
    the template's own default of those (the value used is checked instead).
    ``check_defaults=False`` leaves the defaults to ``resolve_parameters``, which
    checks each just before its parameter's value, in Heat's order.
    """
    if not section:
        return {}
    if not isinstance(section, Mapping):
        raise TemplateError(MESSAGES["not_mapping"] % "parameters", source=source,
                            path="parameters")
    rules = rules_for(version_key)
    return {str(name): _schema(str(name), spec, rules, source,
                               str(name) in replaced_defaults or not check_defaults)
            for name, spec in section.items()}


def check_default(schema: ParameterSchema, source: str) -> None:
    """Heat's ``Schema.validate`` of one parameter's default (when it has one)."""
    if schema.default is not None:
        _validate_default(schema, source)


# --- parameter_groups ---------------------------------------------------------------

def _group_error(message: str, path: list[Any], source: str) -> TemplateError:
    # Heat's StackValidationFailed(error=..., path=..., message=...) text
    text = f"{MESSAGES['groups_error']}: {join_path('', path)}: {message}"
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
