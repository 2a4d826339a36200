# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The template versions: what each ``heat_template_version`` allows, as data, and
the two CloudFormation-format versions Heat also reads.

Each HOT version is written as its changes to the previous one (Heat:
heat/engine/hot/template.py, one class per version extending the previous), and
the full tables are built from those changes.  A name a version does not have but
another version has maps to an entry that fails validation naming the function
and the version, so a template never silently reads a later function as data.

The CFN versions (heat/engine/cfn/template.py: ``AWSTemplateFormatVersion:
2010-09-09`` is CfnTemplate, ``HeatTemplateFormatVersion: 2012-12-12`` is
HeatTemplate, without conditions) are two more tables of the same shape; their
sections and keys are listed in HOT's spelling, the one the engine reads
(``template/cfn.py`` renames CFN's).  They read other names as data, as Heat does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ...errors import TemplateError
from ..functions import cfn, conditions, hot
from ..functions.base import Function
from ..functions.yaql_function import Yaql

VERSION_KEY = "heat_template_version"


@dataclass(frozen=True)
class VersionChanges:
    """What one version changes relative to the previous one."""

    key: str
    aliases: tuple[str, ...] = ()
    functions: Mapping[str, type[Function]] = field(default_factory=dict)
    removed: tuple[str, ...] = ()
    condition_functions: Mapping[str, type[Function]] = field(default_factory=dict)
    sections: tuple[str, ...] = ()
    resource_keys: tuple[str, ...] = ()
    output_keys: tuple[str, ...] = ()
    parameter_keys: tuple[str, ...] = ()
    # Kinds of parameter constraints (Heat's HOTParamSchema* classes).
    constraint_kinds: tuple[str, ...] = ()
    deletion_policies: tuple[str, ...] = ()
    if_function: type[conditions.If] | None = None


CHANGES: tuple[VersionChanges, ...] = (
    VersionChanges(
        "2013-05-23",
        functions={
            "get_param": hot.GetParam,
            "get_resource": hot.GetResource,
            "get_attr": hot.GetAttThenSelect,
            "get_file": hot.GetFile,
            "list_join": hot.Join,
            "str_replace": hot.Replace,
            "resource_facade": hot.ResourceFacade,
            "Fn::GetAZs": cfn.GetAZs,
            "Ref": cfn.Ref,
            "Fn::Select": cfn.Select,
            "Fn::Join": cfn.Join,
            "Fn::Split": cfn.Split,
            "Fn::Replace": cfn.Replace,
            "Fn::Base64": cfn.Base64,
            "Fn::MemberListToMap": cfn.MemberListToMap,
            "Fn::ResourceFacade": cfn.ResourceFacade,
        },
        sections=(
            "heat_template_version",
            "description",
            "parameter_groups",
            "parameters",
            "resources",
            "outputs",
        ),
        resource_keys=(
            "type",
            "properties",
            "metadata",
            "depends_on",
            "deletion_policy",
            "update_policy",
            "description",
        ),
        output_keys=("description", "value"),
        parameter_keys=(
            "type",
            "description",
            "default",
            "schema",
            "constraints",
            "hidden",
            "label",
            "immutable",
        ),
        constraint_kinds=("range", "length", "allowed_values", "allowed_pattern", "custom_constraint"),
        deletion_policies=("Delete", "Retain", "Snapshot"),
    ),
    VersionChanges(
        "2014-10-16",
        functions={"get_attr": hot.GetAtt},
        removed=(
            "Fn::GetAZs",
            "Fn::Join",
            "Fn::Split",
            "Fn::Replace",
            "Fn::Base64",
            "Fn::MemberListToMap",
            "Fn::ResourceFacade",
            "Ref",
        ),
    ),
    VersionChanges(
        "2015-04-30",
        functions={"digest": hot.Digest, "repeat": hot.Repeat},
    ),
    VersionChanges(
        "2015-10-15",
        functions={
            "get_attr": hot.GetAttAllAttributes,
            "list_join": hot.JoinMultiple,
            "str_replace": hot.ReplaceJson,
            "str_split": hot.StrSplit,
        },
        removed=("Fn::Select",),
    ),
    VersionChanges("2016-04-08", functions={"map_merge": hot.MapMerge}),
    VersionChanges(
        "2016-10-14",
        aliases=("newton",),
        functions={
            "repeat": hot.RepeatWithMap,
            "yaql": Yaql,
            "map_replace": hot.MapReplace,
        },
        if_function=conditions.If,
        condition_functions={
            "get_param": hot.GetParam,
            "equals": conditions.Equals,
            "not": conditions.Not,
            "and": conditions.And,
            "or": conditions.Or,
        },
        sections=("conditions",),
        resource_keys=("external_id", "condition"),
        output_keys=("condition",),
        # Heat 2016-10-14 adds lower-case aliases of the deletion policies.
        deletion_policies=("delete", "retain", "snapshot"),
    ),
    VersionChanges(
        "2017-02-24",
        aliases=("ocata",),
        functions={"filter": hot.Filter, "str_replace_strict": hot.ReplaceJsonStrict},
        constraint_kinds=("modulo",),
    ),
    VersionChanges(
        "2017-09-01",
        aliases=("pike",),
        functions={
            "repeat": hot.RepeatWithNestedLoop,
            "make_url": hot.MakeURL,
            "list_concat": hot.ListConcat,
            "list_concat_unique": hot.ListConcatUnique,
            "str_replace_vstrict": hot.ReplaceJsonVeryStrict,
            "contains": hot.Contains,
        },
        condition_functions={"yaql": Yaql, "contains": hot.Contains},
    ),
    VersionChanges("2018-03-02", aliases=("queens",), parameter_keys=("tags",)),
    VersionChanges("2018-08-31", aliases=("rocky",)),
    VersionChanges("2021-04-16", aliases=("wallaby",), if_function=conditions.IfNullable),
)


@dataclass(frozen=True)
class HotVersion:
    """Everything one ``heat_template_version`` allows."""

    key: str
    aliases: tuple[str, ...]
    functions: Mapping[str, type[Function]]
    condition_functions: Mapping[str, type[Function]]
    sections: frozenset[str]
    resource_keys: frozenset[str]
    output_keys: frozenset[str]
    parameter_keys: frozenset[str]
    constraint_kinds: frozenset[str]
    deletion_policies: tuple[str, ...]
    # The key that declares the version: ``heat_template_version``, or CFN's.
    version_key: str = VERSION_KEY

    @property
    def is_cfn(self) -> bool:
        """A CloudFormation-format template (CFN's section and key names)."""
        return self.version_key != VERSION_KEY

    @property
    def has_conditions(self) -> bool:
        """Whether the ``conditions`` section and ``condition:`` keys exist."""
        return "conditions" in self.sections

    def available(self, name: str) -> bool:
        """True when ``name`` is a working function of this version."""
        fn = self.functions.get(name)
        return fn is not None and not issubclass(fn, hot.Removed)


def _function_names(changes: tuple[VersionChanges, ...]) -> set[str]:
    names: set[str] = set()
    for change in changes:
        names.update(change.functions)
        if change.if_function is not None:
            names.add("if")
    return names


def _first_version(name: str, changes: tuple[VersionChanges, ...]) -> str:
    for change in changes:
        if name in change.functions or (name == "if" and change.if_function):
            return change.key
    return ""


def _condition_table(
    functions: Mapping[str, type[Function]], own: Mapping[str, type[Function]]
) -> dict[str, type[Function]]:
    """Heat: a template function in a condition is Invalid, unless it is Removed."""
    table: dict[str, type[Function]] = {
        name: fn if issubclass(fn, hot.Removed) else hot.Invalid for name, fn in functions.items()
    }
    table.update(own)
    return table


def _build() -> dict[str, HotVersion]:
    all_names = _function_names(CHANGES)
    condition_names = {n for c in CHANGES for n in c.condition_functions}
    functions: dict[str, type[Function]] = {}
    own_conditions: dict[str, type[Function]] = {}
    lists: dict[str, list[str]] = {
        "sections": [],
        "resource_keys": [],
        "output_keys": [],
        "parameter_keys": [],
        "constraint_kinds": [],
        "deletion_policies": [],
    }
    if_function: type[conditions.If] | None = None
    versions: dict[str, HotVersion] = {}
    for change in CHANGES:
        functions.update(change.functions)
        functions.update({name: hot.Removed for name in change.removed})
        own_conditions.update(change.condition_functions)
        for attr, values in lists.items():
            values.extend(getattr(change, attr))
        if_function = change.if_function or if_function
        version = _version(
            change, functions, own_conditions, lists, if_function, all_names | condition_names
        )
        for name in (change.key, *change.aliases):
            versions[name] = version
    return versions


def _version(
    change: VersionChanges,
    functions: Mapping[str, type[Function]],
    own_conditions: Mapping[str, type[Function]],
    lists: Mapping[str, list[str]],
    if_function: type[conditions.If] | None,
    known_names: set[str],
) -> HotVersion:
    table = dict(functions)
    if if_function is not None:
        table["if"] = hot.Invalid  # placeholder so the condition table marks it Invalid
    cond_table = _condition_table(table, own_conditions) if own_conditions else {}
    if if_function is not None:
        table["if"] = type(if_function.__name__, (if_function,), {"condition_table": cond_table})
    _add_unavailable(table, change.key, _function_names(CHANGES))
    if cond_table:
        _add_unavailable(cond_table, change.key, known_names)
    return HotVersion(
        key=change.key,
        aliases=change.aliases,
        functions=MappingProxyType(table),
        condition_functions=MappingProxyType(cond_table),
        sections=frozenset(lists["sections"]),
        resource_keys=frozenset(lists["resource_keys"]),
        output_keys=frozenset(lists["output_keys"]),
        parameter_keys=frozenset(lists["parameter_keys"]),
        constraint_kinds=frozenset(lists["constraint_kinds"]),
        deletion_policies=tuple(lists["deletion_policies"]),
    )


def _add_unavailable(table: dict[str, type[Function]], key: str, names: set[str]) -> None:
    """Names of other versions' functions fail validation, naming the version."""
    for name in names - set(table):
        first = _first_version(name, CHANGES) or _first_condition_version(name)
        table[name] = hot.not_yet_added(key, first)


def _first_condition_version(name: str) -> str:
    for change in CHANGES:
        if name in change.condition_functions:
            return change.key
    return ""


VERSIONS: dict[str, HotVersion] = _build()

# Heat lists every accepted value, dates and release names, in sorted order.
_ACCEPTED = ", ".join(sorted(VERSIONS))


# -- the CloudFormation-format versions ---------------------------------------------------

CFN_VERSION_KEYS = ("AWSTemplateFormatVersion", "HeatTemplateFormatVersion")

# HeatTemplate's functions (CfnTemplate has these and Fn::If).
_CFN_FUNCTIONS: Mapping[str, type[Function]] = {
    "Fn::FindInMap": cfn.FindInMap,
    "Fn::GetAZs": cfn.GetAZs,
    "Ref": cfn.CfnRef,
    "Fn::GetAtt": cfn.GetAtt,
    "Fn::Select": cfn.Select,
    "Fn::Join": cfn.Join,
    "Fn::Split": cfn.Split,
    "Fn::Replace": cfn.Replace,
    "Fn::Base64": cfn.Base64,
    "Fn::MemberListToMap": cfn.MemberListToMap,
    "Fn::ResourceFacade": cfn.ResourceFacade,
}

_CFN_CONDITION_FUNCTIONS: Mapping[str, type[Function]] = {
    "Fn::Equals": conditions.Equals,
    "Ref": cfn.ParamRef,
    "Fn::FindInMap": cfn.FindInMap,
    "Fn::Not": cfn.Not,
    "Fn::And": conditions.And,
    "Fn::Or": conditions.Or,
}

# In HOT's spelling (template/cfn.py maps CFN's names onto these).
_CFN_SECTIONS = ("description", "mappings", "parameters", "resources", "outputs")
_CFN_RESOURCE_KEYS = ("type", "properties", "metadata", "depends_on", "deletion_policy",
                      "update_policy", "description")
# heat/engine/parameters.py PARAMETER_KEYS (read by parameters/cfn.py).
CFN_PARAMETER_KEYS = ("Type", "Default", "NoEcho", "AllowedValues", "AllowedPattern", "MaxLength",
                      "MinLength", "MaxValue", "MinValue", "Description", "ConstraintDescription",
                      "Label")


def _cfn_version(key: str, value: str, with_conditions: bool) -> HotVersion:
    """CfnTemplate (``with_conditions``) or HeatTemplate."""
    functions: dict[str, type[Function]] = dict(_CFN_FUNCTIONS)
    condition_table: dict[str, type[Function]] = {}
    if with_conditions:
        # Heat: every template function is Invalid in a condition, Fn::If too.
        condition_table = _condition_table({**functions, "Fn::If": hot.Invalid}, _CFN_CONDITION_FUNCTIONS)
        functions["Fn::If"] = type("If", (conditions.If,), {"condition_table": condition_table})
    condition_keys = ("condition",) if with_conditions else ()
    return HotVersion(
        key=value,
        aliases=(),
        functions=MappingProxyType(functions),
        condition_functions=MappingProxyType(condition_table),
        sections=frozenset(_CFN_SECTIONS + (("conditions",) if with_conditions else ())),
        resource_keys=frozenset(_CFN_RESOURCE_KEYS + condition_keys),
        output_keys=frozenset(("description", "value") + condition_keys),
        parameter_keys=frozenset(CFN_PARAMETER_KEYS),
        constraint_kinds=frozenset(),
        deletion_policies=("Delete", "Retain", "Snapshot"),
        version_key=key,
    )


CFN_VERSIONS: dict[tuple[str, str], HotVersion] = {
    ("AWSTemplateFormatVersion", "2010-09-09"): _cfn_version("AWSTemplateFormatVersion", "2010-09-09", True),
    ("HeatTemplateFormatVersion", "2012-12-12"): _cfn_version("HeatTemplateFormatVersion", "2012-12-12", False),
}


def version_of(data: Mapping[str, Any], source: str) -> HotVersion:
    """The version a template declares, with Heat's errors when it does not."""
    keys = [k for k in (VERSION_KEY, *CFN_VERSION_KEYS) if k in data]
    if not keys:
        raise TemplateError("Template format version not found.", source=source, path=VERSION_KEY)
    declared = [k for k in keys if isinstance(data.get(k), str)]
    if len(declared) > 1:
        raise _invalid(f"Ambiguous versions ({', '.join(declared)})", source, keys[0])
    if not declared:
        raise _invalid("Template version was not provided", source, keys[0])
    key, value = declared[0], data[declared[0]]
    known = VERSIONS if key == VERSION_KEY else {
        version: table for (cfn_key, version), table in CFN_VERSIONS.items() if cfn_key == key}
    if value not in known:
        # Heat: "should be one of" a list, "should be" the only one.
        accepted = _ACCEPTED if key == VERSION_KEY else ", ".join(sorted(known))
        should = "should be one of" if len(known) > 1 else "should be"
        raise _invalid(f'"{key}: {value}". "{key}" {should}: {accepted}', source, key)
    return known[value]


def _invalid(explanation: str, source: str, key: str) -> TemplateError:
    return TemplateError(f"The template version is invalid: {explanation}", source=source, path=key)
