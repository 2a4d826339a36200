# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parameter types, Heat's messages about parameters, and conversions of values to types."""

from __future__ import annotations

import json
import numbers
from typing import Any

# --- types -------------------------------------------------------------------------

STRING, NUMBER, LIST, JSON, BOOLEAN = (
    "String", "Number", "CommaDelimitedList", "Json", "Boolean")

# HOT spelling -> canonical name kept in ParameterSchema.type
HOT_TYPES = {
    "string": STRING, "number": NUMBER, "comma_delimited_list": LIST,
    "json": JSON, "boolean": BOOLEAN,
}
HOT_NAME = {canonical: hot for hot, canonical in HOT_TYPES.items()}


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
    "not_multiple": "%s is not a multiple of %s with an offset of %s",
    "not_allowed": "%s is not an allowed value %s",  # both as JSON (Heat 27)
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
    # Heat 27 (param_utils.delim_string_to_list) keeps the spaces: " a , b" is
    # [" a ", " b"] (older Heat stripped them).
    return value.split(",")


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


# What a hidden value reads as in messages (Heat's mask).
HIDDEN_TEXT = "******"
