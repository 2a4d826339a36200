# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hypothesis strategies for the differential tester: HOT templates, environments,
parameter sets and a second-step update, over engine-local resource types only.

A case is plain data (JSON), so a divergent one can be written down and replayed:

    {"template": {...}, "files": {"prov.yaml": {...}}, "environment": {...} | None,
     "parameters": {...}, "update": None | {same four keys}, "mutation": "..."}

Functions are drawn without regard to the template's version, so a function is also
used where its version lacks it; references point backwards (no cycles) except for
the odd ``depends_on`` that may point anywhere.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

VERSIONS = ["2015-04-30", "2015-10-15", "2016-04-08", "2016-10-14", "2017-02-24",
            "2017-09-01", "2018-08-31", "2021-04-16"]
CONDITIONS_FROM = "2016-10-14"
PROVIDER_FILE = "prov.yaml"
PROVIDER_TYPE = "Diff::Prov"
KINDS = ["none", "test", "value", "random", "group", "provider"]
PARAMETER_TYPES = ["string", "number", "comma_delimited_list", "json", "boolean"]
# Short texts from a few characters, so splitting, joining and placeholders meet.
WORDS = st.text(alphabet="ab ,-x%", min_size=0, max_size=6)


@dataclass
class Scope:
    """What an expression may refer to."""

    version: str
    parameters: dict[str, str] = field(default_factory=dict)  # name -> type
    resources: dict[str, str] = field(default_factory=dict)  # name -> kind
    conditions: list[str] = field(default_factory=list)
    provider_outputs: list[str] = field(default_factory=list)
    defaulted: set[str] = field(default_factory=set)

    @property
    def has_conditions(self) -> bool:
        return self.version >= CONDITIONS_FROM


def attributes_of(kind: str, scope: Scope) -> list[list[Any]]:
    """``get_attr`` argument tails that a resource of ``kind`` answers (and one it does not)."""
    known: dict[str, list[list[Any]]] = {
        "test": [["output"]],
        "value": [["value"]],
        "group": [["refs"], ["attributes", "output"], ["resource.0.output"], ["resource.0"], ["output"]],
        "provider": [[name] for name in scope.provider_outputs if name != "OS::stack_id"],
    }
    return known.get(kind, []) + [["nope"]]


@st.composite
def leaf(draw: st.DrawFn, scope: Scope) -> Any:
    choices: list[st.SearchStrategy[Any]] = [WORDS, st.integers(-3, 12), st.booleans()]
    if scope.parameters:
        names = sorted(scope.parameters) + ["missing"]
        choices.append(st.builds(lambda n: {"get_param": n}, st.sampled_from(names)))
        choices.append(st.builds(lambda n, i: {"get_param": [n, i]}, st.sampled_from(names),
                                 st.integers(0, 2)))
    referable = sorted(n for n, k in scope.resources.items() if k != "random")
    if referable:
        name = draw(st.sampled_from(referable))
        tails = attributes_of(scope.resources[name], scope)
        choices.append(st.builds(lambda t: {"get_attr": [name, *t]}, st.sampled_from(tails)))
        if scope.resources[name] in ("test", "none", "provider"):
            choices.append(st.just({"get_resource": name}))
    return draw(st.one_of(choices))


def expressions(scope: Scope, depth: int = 2) -> st.SearchStrategy[Any]:
    if depth <= 0:
        return leaf(scope)
    inner = expressions(scope, depth - 1)
    strings = st.one_of(WORDS, inner)
    calls: list[st.SearchStrategy[Any]] = [
        leaf(scope),
        st.builds(lambda t, k, v: {"str_replace": {"template": t, "params": {k: v}}},
                  st.sampled_from(["a-x", "x x", "<%a%>-b", "ab"]), st.sampled_from(["x", "<%a%>", "a"]),
                  inner),
        st.builds(lambda d, items: {"list_join": [d, items]}, st.sampled_from([",", "-", ""]),
                  st.lists(strings, max_size=3)),
        st.builds(lambda d, items, more: {"list_join": [d, items, more]}, st.sampled_from([",", "-"]),
                  st.lists(strings, max_size=2), st.lists(strings, max_size=2)),
        st.builds(lambda d, s: {"str_split": [d, s]}, st.sampled_from([",", " ", "-"]), strings),
        st.builds(lambda d, s, i: {"str_split": [d, s, i]}, st.sampled_from([",", "-"]), strings,
                  st.integers(-1, 3)),
        st.builds(lambda items, t: {"repeat": {"for_each": {"%v%": items}, "template": t}},
                  st.one_of(st.lists(WORDS, max_size=3), inner), st.sampled_from(["x-%v%", "%v%"])),
        st.builds(lambda a, b: {"map_merge": [a, b]},
                  st.dictionaries(st.sampled_from(["k", "l"]), inner, max_size=2),
                  st.one_of(st.dictionaries(st.sampled_from(["k", "m"]), inner, max_size=2), inner)),
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["k", "l"]), inner, max_size=2),
    ]
    if scope.has_conditions or scope.conditions:
        names = scope.conditions + [True, False]
        calls.append(st.builds(lambda c, a, b: {"if": [c, a, b]}, st.sampled_from(names), inner, inner))
    return st.one_of(calls)


@st.composite
def parameter(draw: st.DrawFn, version: str) -> tuple[dict[str, Any], str]:
    kind = draw(st.sampled_from(PARAMETER_TYPES))
    schema: dict[str, Any] = {"type": kind}
    defaults = {
        "string": st.one_of(WORDS, st.integers(0, 9)),
        "number": st.one_of(st.integers(-5, 20), st.sampled_from(["3", "2.5", "x"])),
        "comma_delimited_list": st.one_of(st.sampled_from(["a,b", "a, b ,c", " a", "", "x"]),
                                          st.lists(WORDS, max_size=3)),
        "json": st.one_of(st.sampled_from(['{"k": 1}', "[1, 2]", "{}"]),
                          st.dictionaries(st.sampled_from(["k", "l"]), st.integers(0, 3), max_size=2)),
        "boolean": st.one_of(st.booleans(), st.sampled_from(["yes", "off", "t", "maybe"])),
    }
    if draw(st.booleans()):
        schema["default"] = draw(defaults[kind])
    if draw(st.integers(0, 3)) == 0:
        schema["constraints"] = [draw(constraint(kind))]
    if draw(st.integers(0, 5)) == 0:
        schema["hidden"] = True
    return schema, kind


@st.composite
def constraint(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    choices = {
        "string": [{"length": {"min": 1, "max": 4}}, {"allowed_values": ["a", "b", "ab"]},
                   {"allowed_pattern": "[a-z]*"}],
        "number": [{"range": {"min": 0, "max": 10}}, {"allowed_values": [1, 2, 3]},
                   {"modulo": {"step": 2, "offset": 0}}],
        "comma_delimited_list": [{"length": {"min": 1}}, {"allowed_values": ["a", "b"]}],
        "json": [{"length": {"max": 1}}],
        "boolean": [{"allowed_values": [True]}],
    }[kind]
    picked = dict(draw(st.sampled_from(choices)))
    if draw(st.booleans()):
        picked["description"] = "must be right"
    return picked


def parameter_value(kind: str) -> st.SearchStrategy[Any]:
    return {
        "string": st.one_of(WORDS, st.integers(0, 12)),
        "number": st.one_of(st.integers(-2, 12), st.sampled_from(["4", "1.5", "nan-ish"])),
        "comma_delimited_list": st.one_of(st.sampled_from(["a,b", "a , b", " b ,a ", "", "a,,b"]),
                                          st.lists(st.sampled_from(["a", "b", " c"]), max_size=3)),
        "json": st.one_of(st.sampled_from(['{"k": 2}', "[3]", "nope"]),
                          st.dictionaries(st.sampled_from(["k", "m"]), st.integers(0, 3), max_size=2)),
        "boolean": st.one_of(st.booleans(), st.sampled_from(["true", "no", "1", "sure"])),
    }[kind]


@st.composite
def parameter_values(draw: st.DrawFn, scope: Scope) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, kind in sorted(scope.parameters.items()):
        # Mostly given when there is no default: a missing value refuses the whole case.
        odds = 1 if name in scope.defaulted else 12
        if draw(st.integers(0, odds)) != 0:
            values[name] = draw(parameter_value(kind))
    if draw(st.integers(0, 40)) == 0:
        values["undeclared"] = "x"
    return values


@st.composite
def provider_template(draw: st.DrawFn) -> dict[str, Any]:
    version = draw(st.sampled_from(VERSIONS))
    inner_kind = draw(st.sampled_from(["OS::Heat::TestResource", "OS::Heat::None"]))
    inner: dict[str, Any] = {"type": inner_kind}
    if inner_kind == "OS::Heat::TestResource":
        inner["properties"] = {"value": {"get_param": "x"}}
    template: dict[str, Any] = {
        "heat_template_version": version,
        "parameters": {"x": {"type": "string", "default": draw(st.sampled_from(["d", "e", ""]))}},
        "resources": {"inner": inner},
        "outputs": {},
    }
    if draw(st.booleans()):
        template["parameters"]["y"] = {"type": "number", "default": 1}
    outputs = template["outputs"]
    if inner_kind == "OS::Heat::TestResource":
        outputs["out"] = {"value": {"get_attr": ["inner", "output"]}}
    if draw(st.booleans()):
        outputs["param"] = {"value": {"str_replace": {"template": "p-x", "params": {"x": {"get_param": "x"}}}}}
    if draw(st.booleans()):
        outputs["OS::stack_id"] = {"value": {"get_resource": "inner"}}
    if draw(st.integers(0, 5)) == 0:
        # An output whose value fails when read: Heat creates the stack anyway.
        outputs["broken"] = {"value": {"str_split": [",", "a,b", 5]}}
    return template


@st.composite
def resource(draw: st.DrawFn, kind: str, scope: Scope, names: list[str]) -> dict[str, Any]:
    value = expressions(scope, draw(st.integers(0, 2)))
    definition: dict[str, Any]
    if kind == "none":
        definition = {"type": "OS::Heat::None"}
        if draw(st.booleans()):
            definition["properties"] = {"anything": draw(value)}
    elif kind == "test":
        props: dict[str, Any] = {"value": draw(value)}
        if draw(st.integers(0, 6)) == 0:
            props["fail"] = True
        if draw(st.integers(0, 3)) == 0:
            props["update_replace"] = True
        definition = {"type": "OS::Heat::TestResource", "properties": props}
    elif kind == "value":
        props = {"value": draw(value)}
        if draw(st.booleans()):
            props["type"] = draw(st.sampled_from(PARAMETER_TYPES + ["list"]))
        definition = {"type": "OS::Heat::Value", "properties": props}
    elif kind == "random":
        definition = {"type": "OS::Heat::RandomString", "properties": {"length": draw(st.integers(1, 12))}}
    elif kind == "group":
        definition = {"type": "OS::Heat::ResourceGroup", "properties": draw(group_properties(scope))}
    else:
        definition = {"type": PROVIDER_TYPE}
        if draw(st.booleans()):
            definition["properties"] = {"x": draw(value)}
    if draw(st.integers(0, 4)) == 0 and names:
        definition["depends_on"] = draw(st.sampled_from(names + ["ghost"]))
    if draw(st.integers(0, 4)) == 0:
        definition["metadata"] = {"m": draw(WORDS)}
    if draw(st.integers(0, 5)) == 0:
        definition["deletion_policy"] = draw(st.sampled_from(["Delete", "Retain", "delete", "Snapshot"]))
    if scope.conditions and draw(st.integers(0, 3)) == 0:
        definition["condition"] = draw(st.sampled_from(scope.conditions))
    return definition


@st.composite
def group_properties(draw: st.DrawFn, scope: Scope) -> dict[str, Any]:
    member = draw(st.sampled_from(["OS::Heat::None", "OS::Heat::TestResource", PROVIDER_TYPE]))
    index_var = draw(st.sampled_from([None, "%index%", "_i_", ""]))
    marker = index_var if index_var else "%index%"
    member_def: dict[str, Any] = {"type": member}
    if member == "OS::Heat::TestResource":
        member_def["properties"] = {"value": f"m-{marker}"}
    elif member == PROVIDER_TYPE and draw(st.booleans()):
        member_def["properties"] = {"x": f"p{marker}"}
    props: dict[str, Any] = {"count": draw(st.integers(0, 3)), "resource_def": member_def}
    if index_var is not None:
        props["index_var"] = index_var
    if draw(st.integers(0, 3)) == 0:
        names = draw(st.lists(st.sampled_from(["0", "1", "5"]), max_size=2, unique=True))
        props["removal_policies"] = [{"resource_list": names}]
    if draw(st.integers(0, 5)) == 0 and scope.parameters:
        props["count"] = {"get_param": sorted(scope.parameters)[0]}
    return props


@st.composite
def conditions(draw: st.DrawFn, scope: Scope) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for index in range(draw(st.integers(0, 2))):
        name = f"c{index}"
        options: list[Any] = [True, False]
        if scope.parameters:
            pname = draw(st.sampled_from(sorted(scope.parameters)))
            options.append({"equals": [{"get_param": pname}, draw(WORDS)]})
            options.append({"not": {"equals": [{"get_param": pname}, "a"]}})
        if found:
            options.append({"not": draw(st.sampled_from(sorted(found)))})
            options.append({"or": [draw(st.sampled_from(sorted(found))), False]})
        found[name] = draw(st.sampled_from(options))
    return found


@st.composite
def stacks(draw: st.DrawFn) -> dict[str, Any]:
    """A whole first step: template, provider file, environment and parameters."""
    version = draw(st.sampled_from(VERSIONS))
    scope = Scope(version)
    template: dict[str, Any] = {"heat_template_version": version}
    parameters: dict[str, Any] = {}
    for index in range(draw(st.integers(0, 3))):
        schema, kind = draw(parameter(version))
        parameters[f"p{index}"] = schema
        scope.parameters[f"p{index}"] = kind
        if "default" in schema:
            scope.defaulted.add(f"p{index}")
    if parameters:
        template["parameters"] = parameters
    if scope.has_conditions and draw(st.booleans()):
        found = draw(conditions(scope))
        if found:
            template["conditions"] = found
            scope.conditions = sorted(found)
    provider = draw(provider_template())
    scope.provider_outputs = sorted(provider["outputs"])
    resources: dict[str, Any] = {}
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4))
    if draw(st.integers(0, 12)) == 0 and parameters:
        kinds[0] = "clash"  # a resource named like a parameter
    for index, kind in enumerate(kinds):
        name = "p0" if kind == "clash" else f"r{index}"
        kind = "none" if kind == "clash" else kind
        resources[name] = draw(resource(kind, scope, sorted(resources)))
        scope.resources[name] = kind
    template["resources"] = resources
    outputs = {f"o{i}": {"value": draw(expressions(scope, 2))} for i in range(draw(st.integers(0, 3)))}
    if outputs:
        template["outputs"] = outputs
    uses_provider = any(k == "provider" for k in kinds) or any(
        r.get("properties", {}).get("resource_def", {}).get("type") == PROVIDER_TYPE for r in resources.values())
    environment = {"resource_registry": {PROVIDER_TYPE: PROVIDER_FILE}} if uses_provider else None
    if environment is not None and draw(st.integers(0, 4)) == 0:
        environment["resource_registry"]["Diff::Alias"] = "OS::Heat::None"
    return {"template": template, "files": {PROVIDER_FILE: provider} if uses_provider else {},
            "environment": environment, "parameters": draw(parameter_values(scope)),
            "scope": scope}


MUTATIONS = ["same", "parameters", "property", "add", "remove", "replace", "swap", "depends_on",
             "metadata", "group", "provider_body", "alias", "external_id", "deletion_policy",
             "output", "restricted", "hooks"]


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    """A first step, and most of the time a second step that updates it."""
    first = draw(stacks())
    scope: Scope = first.pop("scope")
    if draw(st.integers(0, 15)) == 0:  # breakpoints in the create too
        name = draw(st.sampled_from(["*", "r0", "r1"]))
        _set_hooks(first, name,
                   draw(st.lists(st.sampled_from(["pre-create", "post-create"]), min_size=1, unique=True)),
                   _inside(draw, first, name))
    case = dict(first, update=None, mutation=None)
    if draw(st.integers(0, 5)) == 0:
        return case
    mutation = draw(st.sampled_from(MUTATIONS))
    second = {k: copy.deepcopy(first[k]) for k in ("template", "files", "environment", "parameters")}
    MUTATE[mutation](draw, second, scope)
    case.update(update=second, mutation=mutation)
    return case


def _names(step: dict[str, Any], kind: str | None = None) -> list[str]:
    resources = step["template"]["resources"]
    return sorted(n for n, r in resources.items() if kind is None or r["type"] == kind)


def _same(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    return None


def _parameters(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    step["parameters"] = draw(parameter_values(scope))


def _property(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    names = _names(step, "OS::Heat::TestResource") + _names(step, "OS::Heat::Value")
    if names:
        props = step["template"]["resources"][draw(st.sampled_from(names))].setdefault("properties", {})
        props["value"] = draw(expressions(scope, 1))


def _add(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    kind = draw(st.sampled_from(["none", "test", "value", "random"]))
    step["template"]["resources"]["added"] = draw(resource(kind, scope, _names(step)))


def _remove(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    names = _names(step)
    if len(names) > 1:
        del step["template"]["resources"][draw(st.sampled_from(names))]


def _replace(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    resources = step["template"]["resources"]
    for name in _names(step):
        props = resources[name].setdefault("properties", {})
        if resources[name]["type"] == "OS::Heat::TestResource":
            props.update(update_replace=True, value="replaced")
            return
        if resources[name]["type"] == "OS::Heat::RandomString":
            props["length"] = int(props.get("length", 8)) + 1
            return


def _swap(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    swaps = {"OS::Heat::TestResource": "OS::Heat::None", "OS::Heat::None": "OS::Heat::TestResource",
             "OS::Heat::Value": "OS::Heat::TestResource", "OS::Heat::RandomString": "OS::Heat::None",
             PROVIDER_TYPE: "OS::Heat::None"}
    names = [n for n in _names(step) if step["template"]["resources"][n]["type"] in swaps]
    if names:
        chosen = step["template"]["resources"][draw(st.sampled_from(names))]
        chosen["type"] = swaps[chosen["type"]]
        if chosen["type"] == "OS::Heat::TestResource" and draw(st.booleans()):
            chosen.pop("properties", None)


def _depends_on(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    names = _names(step)
    last = step["template"]["resources"][names[-1]]
    if last.pop("depends_on", None) is None and len(names) > 1:
        last["depends_on"] = [names[0]]


def _metadata(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    chosen = step["template"]["resources"][draw(st.sampled_from(_names(step)))]
    chosen["metadata"] = {"m": draw(WORDS), "changed": True}


def _group(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    groups = _names(step, "OS::Heat::ResourceGroup")
    if not groups:
        return _property(draw, step, scope)
    props = step["template"]["resources"][draw(st.sampled_from(groups))]["properties"]
    change = draw(st.sampled_from(["count", "removal", "index_var", "member"]))
    if change == "count":
        props["count"] = draw(st.integers(0, 4))
    elif change == "removal":
        props["removal_policies"] = [{"resource_list": [draw(st.sampled_from(["0", "1"]))]}]
    elif change == "index_var":
        props["index_var"] = draw(st.sampled_from(["%i%", "%index%"]))
    else:
        props["resource_def"]["metadata"] = {"v": 2}
    return None


def _provider_body(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    provider = step["files"].get(PROVIDER_FILE)
    if provider is None:
        return _property(draw, step, scope)
    provider["parameters"]["x"]["default"] = "changed"
    provider["resources"]["inner"]["metadata"] = {"body": "changed"}
    return None


def _alias(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    registry = (step["environment"] or {}).get("resource_registry") or {}
    if PROVIDER_TYPE not in registry:  # no provider (an environment of hooks only)
        return _metadata(draw, step, scope)
    registry["Diff::Renamed"] = registry.pop(PROVIDER_TYPE)
    for definition in step["template"]["resources"].values():
        if definition["type"] == PROVIDER_TYPE:
            definition["type"] = "Diff::Renamed"
        member = definition.get("properties", {}).get("resource_def")
        if isinstance(member, dict) and member.get("type") == PROVIDER_TYPE:
            member["type"] = "Diff::Renamed"
    return None


def _external_id(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    chosen = step["template"]["resources"][draw(st.sampled_from(_names(step)))]
    chosen["external_id"] = draw(st.sampled_from(["ext-1", "ext-2"]))


def _deletion_policy(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    chosen = step["template"]["resources"][draw(st.sampled_from(_names(step)))]
    chosen["deletion_policy"] = draw(st.sampled_from(["Retain", "Delete", "Snapshot"]))


def _output(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    step["template"].setdefault("outputs", {})["changed"] = {"value": draw(expressions(scope, 1))}


def _restricted(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    """Another change, with ``restricted_actions`` on a resource in the update's
    environment (often the changed one)."""
    MUTATE[draw(st.sampled_from(["property", "replace", "swap", "metadata", "depends_on", "same"]))](
        draw, step, scope)
    actions = draw(st.sampled_from([["update"], ["replace"], ["update", "replace"], "replace"]))
    environment = step["environment"] or {}
    registry = environment.setdefault("resource_registry", {})
    registry.setdefault("resources", {})[draw(st.sampled_from(_names(step)))] = {"restricted_actions": actions}
    step["environment"] = environment


HOOKS = ["pre-create", "post-create", "pre-update", "post-update", "pre-delete"]


def _hooks(draw: st.DrawFn, step: dict[str, Any], scope: Scope) -> None:
    """Another change, with breakpoints (hooks) on a resource in the update's
    environment: the run pauses there until they are cleared."""
    MUTATE[draw(st.sampled_from(["property", "replace", "add", "remove", "metadata", "group"]))](
        draw, step, scope)
    # A name, or a pattern (Heat's registry matches resource names with fnmatch):
    # often every resource, so that the update stops somewhere.
    names = sorted(set(_names(step)) | set(scope.resources) | {"added", "r[01]"})
    # Providers and groups twice as often: their nested resources may get the hooks.
    parents = _names(step, PROVIDER_TYPE) + _names(step, "OS::Heat::ResourceGroup")
    name = draw(st.sampled_from(["*", "*", "*", *names, *parents]))
    hooks = draw(st.lists(st.sampled_from(HOOKS + ["pre-update", "post-update"]), min_size=1,
                          max_size=2, unique=True))
    _set_hooks(step, name, hooks, _inside(draw, step, name))


def _set_hooks(step: dict[str, Any], name: str, hooks: list[str], inside: str | None = None) -> None:
    """Hooks on ``name``, or on its nested resource ``inside`` (a provider's
    resource, a group's member: Heat's registry nests them under the parent)."""
    environment = step["environment"] or {}
    registry = environment.setdefault("resource_registry", {})
    registry.setdefault("resources", {})[name] = (
        {"hooks": hooks} if inside is None else {inside: {"hooks": hooks}})
    step["environment"] = environment


def _inside(draw: st.DrawFn, step: dict[str, Any], name: str) -> str | None:
    """Now and then, a nested resource of ``name`` to set the hooks on instead."""
    resources = step["template"].get("resources")
    entry = resources.get(name) if isinstance(resources, dict) else None
    kind = entry.get("type") if isinstance(entry, dict) else None
    choices = {PROVIDER_TYPE: ["inner"], "OS::Heat::ResourceGroup": ["0", "*"]}.get(str(kind), [])
    if not choices or not draw(st.booleans()):
        return None
    return draw(st.sampled_from(choices))


MUTATE = {"same": _same, "parameters": _parameters, "property": _property, "add": _add,
          "remove": _remove, "replace": _replace, "swap": _swap, "depends_on": _depends_on,
          "metadata": _metadata, "group": _group, "provider_body": _provider_body, "alias": _alias,
          "external_id": _external_id, "deletion_policy": _deletion_policy, "output": _output,
          "restricted": _restricted, "hooks": _hooks}
