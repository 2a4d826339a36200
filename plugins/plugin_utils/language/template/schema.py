# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The structure of a HOT document as a JSON Schema per version, with Heat's words.

The schema is built from the version's data (sections, resource keys, output
keys, parameter keys, function names); ``jsonschema`` finds what is wrong and
``_MESSAGES`` says it the way Heat does (heat/engine/hot/template.py
validate_section, template_common.py _parse_resource_field, template.py
validate, parameters.py _check_dict).  Only the first error is reported, in the
order Heat checks: sections, then resources and outputs by name, then parameters
and conditions.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import HotplayError, TemplateError
from .versions import VERSIONS, HotVersion

Schema = dict[str, Any]


def _call_of(names: Sequence[str]) -> Schema:
    """A one-key mapping naming a function: a value to be computed later."""
    return {
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "propertyNames": {"enum": sorted(names)},
    }


def _resource_schema(version: HotVersion) -> Schema:
    call = _call_of(list(version.functions))
    fields: dict[str, Schema] = {
        "type": {"type": "string"},
        "properties": {"type": "object"},
        "metadata": {"type": "object"},
        "update_policy": {"type": "object"},
        "depends_on": {"type": ["string", "array"], "items": {"type": "string"}},
        # Which policies the version knows is checked as the stack loads (Heat reads
        # the parameters' declarations first).
        "deletion_policy": {"anyOf": [{"type": "string"}, call]},
        "description": {"type": "string"},
        "external_id": {"anyOf": [{"type": "string"}, call]},
        "condition": {"anyOf": [{"type": ["string", "boolean"]}, _condition_call(version)]},
    }
    return {
        "type": "object",
        "required": ["type"],
        "properties": {k: v for k, v in fields.items() if k in version.resource_keys},
        "additionalProperties": False,
    }


def _condition_call(version: HotVersion) -> Schema:
    return _call_of(list(version.condition_functions) or ["get_param"])


def _output_schema(version: HotVersion) -> Schema:
    fields: dict[str, Schema] = {
        "description": {},
        "value": {},
        "condition": {"anyOf": [{"type": ["string", "boolean"]}, _condition_call(version)]},
    }
    return {
        "type": "object",
        "required": ["value"],
        "properties": {k: v for k, v in fields.items() if k in version.output_keys},
        "additionalProperties": False,
    }


def _parameter_schema(version: HotVersion) -> Schema:
    return {
        "type": "object",
        "required": ["type"],
        "properties": {key: {} for key in sorted(version.parameter_keys)},
        "additionalProperties": False,
    }


def build_schema(version: HotVersion) -> Schema:
    """The JSON Schema of a whole document of ``version``."""
    sections: dict[str, Schema] = {
        "heat_template_version": {"type": "string"},
        "description": {},
        "parameter_groups": {"type": ["array", "null"]},
        "parameters": {
            "type": ["object", "null"],
            "additionalProperties": _parameter_schema(version),
        },
        "resources": {
            "type": ["object", "null"],
            "additionalProperties": _resource_schema(version),
        },
        "outputs": {"type": ["object", "null"], "additionalProperties": _output_schema(version)},
        "conditions": {"type": ["object", "null"]},
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {k: v for k, v in sections.items() if k in version.sections},
        "additionalProperties": False,
    }


@functools.lru_cache(maxsize=None)
def _validator(version_key: str) -> Any:
    # Imported here, when the quick walk below finds a template not surely valid:
    # at the top, its import took 40 ms of every task of the collection.
    try:
        import jsonschema
    except ImportError as missing:
        raise HotplayError(
            "the Python library jsonschema is required on the controller "
            f"(pip install jsonschema): {missing}"
        ) from None

    schema = build_schema(VERSIONS[version_key])
    return jsonschema.Draft202012Validator(schema)


# -- a quick walk for the templates that are right -----------------------------------------
# The keywords the schemas above use, each checked as jsonschema's Draft 2020-12
# checks it (its type checker: dict, list, str, bool, None).  Each answers True only
# when the keyword surely holds; a keyword not listed makes the walk answer False,
# and jsonschema then finds (and words) what is wrong.
_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda instance: isinstance(instance, dict),
    "array": lambda instance: isinstance(instance, list),
    "string": lambda instance: isinstance(instance, str),
    "boolean": lambda instance: isinstance(instance, bool),
    "null": lambda instance: instance is None,
}


def _of_type(expected: Any, instance: Any) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    return any(name in _TYPES and _TYPES[name](instance) for name in names)


def _properties_hold(properties: Mapping[str, Schema], instance: Any) -> bool:
    if not isinstance(instance, dict):
        return True
    return all(surely_valid(properties[key], value) for key, value in instance.items() if key in properties)


def _additional_hold(schema: Schema, instance: Any) -> bool:
    if not isinstance(instance, dict):
        return True
    extra, known = schema["additionalProperties"], schema.get("properties", {})
    return all(key in known or (extra is not False and surely_valid(extra, value))
               for key, value in instance.items())


def _on_mapping(check: Callable[[Any, dict[Any, Any]], bool]) -> Callable[[Any, Any], bool]:
    """A keyword about mappings: other instances pass it."""
    return lambda value, instance: not isinstance(instance, dict) or check(value, instance)


_QUICK: dict[str, Callable[[Any, Any], bool]] = {
    "$schema": lambda value, instance: True,
    "type": _of_type,
    "properties": _properties_hold,
    "required": _on_mapping(lambda value, instance: all(key in instance for key in value)),
    "minProperties": _on_mapping(lambda value, instance: len(instance) >= value),
    "maxProperties": _on_mapping(lambda value, instance: len(instance) <= value),
    "propertyNames": _on_mapping(lambda value, instance: all(surely_valid(value, key) for key in instance)),
    # Strings only: jsonschema's enum tells True from 1, and so would have to this.
    "enum": lambda value, instance: isinstance(instance, str) and instance in value,
    "anyOf": lambda value, instance: any(surely_valid(schema, instance) for schema in value),
    "items": lambda value, instance: not isinstance(instance, list) or all(
        surely_valid(value, item) for item in instance),
}


def surely_valid(schema: Schema, instance: Any) -> bool:
    """Whether ``instance`` surely meets ``schema`` (False: jsonschema must say)."""
    for keyword, value in schema.items():
        if keyword == "additionalProperties":
            if not _additional_hold(schema, instance):
                return False
        elif keyword not in _QUICK or not _QUICK[keyword](value, instance):
            return False
    return True


# -- Heat's words for what the schema found -------------------------------------------------

Finding = Any  # jsonschema.ValidationError
Rule = Callable[[Finding, tuple[str, ...]], str]


def _type_name(value: Any) -> str:
    return str(type(value))


def _extra_keys(error: Finding) -> list[str]:
    allowed = error.schema.get("properties", {})
    return sorted(str(k) for k in error.instance if k not in allowed)


def _top_level(error: Finding, path: tuple[str, ...]) -> str:
    if error.validator == "additionalProperties":
        return f"The template section is invalid: {_extra_keys(error)[0]}"
    return "The template is not a JSON object or YAML mapping."


def _section(error: Finding, path: tuple[str, ...]) -> str:
    name = path[0]
    if name == "conditions":
        return (
            "Condition validation error: Condition definitions must be a map. "
            f"Found a {type(error.instance).__name__} instead"
        )
    if name == "parameter_groups":
        return "Parameter Groups error: The parameter_groups should be a list."
    if name == "heat_template_version":
        return "The template version is invalid: Template version was not provided"
    return f'The "{name}" section must be a map. Found a [{_type_name(error.instance)}] instead'


def _entry(error: Finding, path: tuple[str, ...]) -> str:
    """A whole resource or output definition is wrong."""
    section = path[0]
    kind = section[:-1]
    key = {"resources": "type", "outputs": "value"}[section]
    must_contain = f"Each {kind} must contain a {key} key."
    if error.validator == "type":
        if not error.instance:
            return must_contain
        return (
            f'"{section}" must contain a map of {kind} maps. '
            f"Found a [{_type_name(error.instance)}] instead"
        )
    if error.validator == "additionalProperties":
        extra = _extra_keys(error)[0]
        if section == "resources" and extra in _LATER_RESOURCE_KEYS:
            # A key of a later version: Heat's resource_definitions says so.
            return f"Invalid keyword(s) inside a resource definition: {extra}"
        # Heat 27 says '"%s" is not a valid keyword inside a propertes definition'
        # (sic: its format is broken); hotplay names the key (docs/heat-differences.md).
        return f'"{extra}" is not a valid keyword inside a {kind} definition'
    return must_contain


# Resource keys that only later HOT versions have.
_LATER_RESOURCE_KEYS = ("external_id", "condition")


_RESOURCE_FIELD_TYPES = {
    "type": "string",
    "properties": "object",
    "metadata": "object",
    "update_policy": "object",
    "depends_on": "list or string",
    "deletion_policy": "string",
    "description": "string",
    "external_id": "string",
    "condition": "string_or_boolean",
}


def _resource_field(error: Finding, path: tuple[str, ...]) -> str:
    name, key = path[1], path[2]
    if key == "depends_on" and len(path) > 3:
        return f"Resource {name} depends_on must be a list of strings"
    if key == "deletion_policy" and isinstance(error.instance, str):
        return f'Invalid deletion policy "{error.instance}"'
    return f"Resource {name} {key} type must be {_RESOURCE_FIELD_TYPES[key]}"


def _output_field(error: Finding, path: tuple[str, ...]) -> str:
    return f"Output {path[1]} {path[2]} type must be string_or_boolean"


def _parameter(error: Finding, path: tuple[str, ...]) -> str:
    name = path[1]
    if error.validator == "type":
        return f"Invalid parameter ({name}), expected a mapping"
    if error.validator == "additionalProperties":
        return f"Invalid key '{_extra_keys(error)[0]}' for parameter ({name})"
    return f"Missing parameter type for parameter: {name}"


def _rule(path: tuple[str, ...]) -> Rule:
    """Which wording applies to a finding at ``path``."""
    if not path:
        return _top_level
    if len(path) == 1:
        return _section
    if path[0] == "parameters":
        return _parameter
    if len(path) == 2:
        return _entry
    return _resource_field if path[0] == "resources" else _output_field


# Heat checks the sections first, then resources, outputs, parameters.
_ORDER = {"resources": 1, "outputs": 2, "parameters": 3, "parameter_groups": 4, "conditions": 5}


# At one place, Heat reports unknown keys before a missing required key.
_VALIDATOR_ORDER = {"type": 0, "additionalProperties": 1, "required": 2}


def _order(error: Finding) -> tuple[Any, ...]:
    """Heat's order: sections; then every resource's keys (by name) before any
    resource's field types; then outputs, parameters, conditions."""
    path = tuple(str(p) for p in error.absolute_path)
    rank = 0 if len(path) <= 1 else _ORDER.get(path[0], 9)
    validator = _VALIDATOR_ORDER.get(str(error.validator), 3)
    return (rank, len(path) > 2, path[1:2], validator, path)


def validate_structure(data: Mapping[str, Any], version: HotVersion, source: str) -> None:
    """Raise a ``TemplateError`` for the first structural mistake, in Heat's words."""
    validator = _validator(version.key)
    # jsonschema descends into every resource (a third of a second for 10,000):
    # a template the quick walk passes has nothing it would find.
    if surely_valid(validator.schema, data):
        return
    errors = list(validator.iter_errors(data))
    if not errors:
        return
    first = min(errors, key=_order)
    path = tuple(str(p) for p in first.absolute_path)
    # A wrong type inside depends_on is reported at the depends_on key.
    shown = path[:3] if path[:1] == ("resources",) else path
    raise TemplateError(_rule(path)(first, path), source=source, path=".".join(shown))
