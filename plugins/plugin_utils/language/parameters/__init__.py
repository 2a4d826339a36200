# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Template parameters: schemas, conversions, constraints, as Heat does them.

Sources of the rules (facts, re-implemented): ``heat/engine/hot/parameters.py``
(which keys and constraints each HOT version allows), ``heat/engine/parameters.py``
(conversions, defaults, the ``Parameter 'x' is invalid: ...`` wrapping),
``heat/engine/constraints.py`` (constraint checks and messages),
``heat/engine/parameter_groups.py`` and ``heat/common/exception.py``; a CFN
template's ``Parameters`` (``Schema.from_dict``) are read by ``cfn`` into the same
schemas.

The parts, each importing only those before it: ``types`` (types, Heat's messages,
conversions), ``constraints``, ``schema`` (the two sections, by the HOT version's
rules from the one version table) and ``values`` (a stack's parameters, from the
task, the environment and the defaults).  What the rest of the engine uses is
imported from here.
"""

from .constraints import (
    AllowedPattern,
    AllowedValues,
    Constraint,
    CustomConstraint,
    Length,
    Modulo,
    Range,
)
from .cfn import parse_cfn_parameter_schemas
from .schema import (
    CONSTRAINT_ENTRY_KEYS,
    KIND_PRECEDENCE,
    ParameterSchema,
    VersionRules,
    parse_parameter_schemas,
    redacted,
    rules_for,
    validate_parameter_groups,
)
from .types import (
    BOOLEAN,
    HIDDEN_TEXT,
    HOT_NAME,
    HOT_TYPES,
    JSON,
    LIST,
    MESSAGES,
    NUMBER,
    STRING,
    bool_from_string,
    parse_json,
    parse_list,
    str_to_num,
    to_schema_type,
)
from .values import Parameters, ParameterValues, given_beyond_defaults, provisional_parameters, resolve_parameters

__all__ = [
    "AllowedPattern", "AllowedValues", "BOOLEAN", "CONSTRAINT_ENTRY_KEYS", "Constraint",
    "CustomConstraint", "HIDDEN_TEXT", "HOT_NAME", "HOT_TYPES", "JSON", "KIND_PRECEDENCE", "LIST",
    "Length", "MESSAGES", "Modulo", "NUMBER", "ParameterSchema", "ParameterValues", "Parameters",
    "parse_cfn_parameter_schemas",
    "Range", "STRING", "VersionRules", "bool_from_string", "given_beyond_defaults", "parse_json", "parse_list",
    "parse_parameter_schemas", "provisional_parameters", "redacted", "resolve_parameters",
    "rules_for", "str_to_num",
    "to_schema_type", "validate_parameter_groups",
]
