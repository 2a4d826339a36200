# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A CFN template's ``Parameters`` section, read as Heat reads it.

Facts from heat/engine/parameters.py (``Schema.from_dict``: the keys, the types as
CFN spells them, ``MinValue``/``MaxValue`` a range, ``MinLength``/``MaxLength`` a
length, ``AllowedValues``, ``AllowedPattern``, each with ``ConstraintDescription``
as its message; ``NoEcho`` hidden when its text is ``true`` in any case) and
heat/engine/constraints.py (the constraints' own checks and messages).  The
schemas are the HOT parameters' (``schema.ParameterSchema``), so values are
converted and checked by the same code.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ...errors import TemplateError
from ..template.versions import CFN_PARAMETER_KEYS
from .constraints import Constraint, Length, Range
from .schema import CONSTRAINT_BUILDERS, ParameterSchema, check_dict, validate_schema
from .types import BOOLEAN, JSON, LIST, MESSAGES, NUMBER, STRING, _Invalid, str_to_num

CFN_TYPES = (STRING, NUMBER, LIST, JSON, BOOLEAN)


def parse_cfn_parameter_schemas(section: Any, source: str, replaced_defaults: Collection[str] = (),
                                check_defaults: bool = True) -> dict[str, ParameterSchema]:
    """The schemas of a CFN ``Parameters`` section, by name (paths in HOT's
    spelling, ``parameters.NAME``: the template translates them)."""
    if not section:
        return {}
    if not isinstance(section, Mapping):
        raise TemplateError(MESSAGES["not_mapping"] % "parameters", source=source, path="parameters")
    schemas = {}
    for name, spec in section.items():
        schema = _schema(str(name), spec, source)
        validate_schema(schema, source, check_default=check_defaults and str(name) not in replaced_defaults)
        schemas[str(name)] = schema
    return schemas


def _schema(name: str, spec: Any, source: str) -> ParameterSchema:
    path = f"parameters.{name}"
    check_dict(spec, CFN_PARAMETER_KEYS, f"parameter ({name})", source, path)
    if "Type" not in spec:
        raise TemplateError(MESSAGES["missing_type"] % name, source=source, path=path)
    if spec["Type"] not in CFN_TYPES:
        raise TemplateError(MESSAGES["invalid_type"] % spec["Type"], source=source, path=f"{path}.Type")
    return ParameterSchema(
        name=name, type=spec["Type"], default=spec.get("Default"),
        description=spec.get("Description"), label=spec.get("Label"),
        hidden=str(spec.get("NoEcho", "false")).lower() == "true",
        constraints=_constraints(spec, source, path), cfn=True)


def _constraints(spec: Mapping[str, Any], source: str, path: str) -> tuple[Constraint, ...]:
    """Heat's order: range, length, allowed values, allowed pattern."""
    description = spec.get("ConstraintDescription")
    found: list[Constraint] = []
    if "MinValue" in spec or "MaxValue" in spec:
        low, high = _bounds(spec, "MinValue", "MaxValue", source, path)
        _check_bounds(low, high, "range_empty", source, path)
        found.append(Range(description, low, high))
    if "MinLength" in spec or "MaxLength" in spec:
        low, high = _bounds(spec, "MinLength", "MaxLength", source, path)
        _check_bounds(low, high, "length_empty", source, path)
        if not all(isinstance(bound, int) or bound is None for bound in (low, high)):
            raise TemplateError(MESSAGES["length_integral"], source=source, path=path)
        found.append(Length(description, low, high))
    # The same checks as HOT's allowed_values and allowed_pattern (the words are Heat's
    # constraint classes', the same for both).
    for key, kind in (("AllowedValues", "allowed_values"), ("AllowedPattern", "allowed_pattern")):
        if key in spec:
            found.append(CONSTRAINT_BUILDERS[kind](spec[key], description, source, f"{path}.{key}"))
    return tuple(found)


def _bounds(spec: Mapping[str, Any], low_key: str, high_key: str, source: str,
            path: str) -> tuple[Any, Any]:
    """Heat's ``Schema.get_num`` of both bounds (text is read as a number)."""
    bounds = []
    for key in (low_key, high_key):
        value = spec.get(key)
        try:
            bounds.append(None if value is None else str_to_num(value))
        except _Invalid as exc:
            # Heat lets the ValueError escape (a 400 that says nothing); say what it is.
            raise TemplateError(f"{key} must be a number: {exc}", source=source,
                                path=f"{path}.{key}") from None
    return bounds[0], bounds[1]


def _check_bounds(low: Any, high: Any, empty: str, source: str, path: str) -> None:
    if low is None and high is None:
        raise TemplateError(MESSAGES[empty], source=source, path=path)
    if not all(isinstance(bound, (int, float)) or bound is None for bound in (low, high)):
        raise TemplateError(MESSAGES["min_max_numeric"], source=source, path=path)
