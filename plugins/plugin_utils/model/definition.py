# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stack definition: template + environment + parameters, resolved as far as
they can be before any resource exists.

Parameters are converted and checked, conditions evaluated, resource types looked
up, every snippet parsed into functions, and the dependency graph built and checked
for cycles.  Resource properties stay parsed (unresolved): they read other
resources, which only the executor can provide, through a ``Scope``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..language.environment import Environment
from ..errors import HotplayError, StackValidationFailed, TemplateError
from ..language.functions.base import dependencies, resolve
from ..language.functions.hot import GetParam, select_path
from .graph import check_acyclic, first_ready_order
from .group_reads import check_member_reads, group_reads
from ..limits import MAX_NESTED_DEPTH, MAX_PRODUCED_PER_STACK, MAX_RESOURCES_PER_STACK
from ..language.parameters import (
    Parameters,
    given_beyond_defaults,
    provisional_parameters,
    redacted,
    resolve_parameters,
    validate_parameter_groups,
)
from .. import resources as _resource_types  # noqa: F401  (registers the types)
from ..resources.base import Resource, ResourceState, resource_class
from ..resources.services import TypesNotRun, Unrun, heat_type_not_run
from ..resources.facades import check_against_facade, translate_replaced
from ..resources.base import handler_for as resource_handler
from ..resources.nested import stack_arn
from ..resources.runtime import PROJECT_ID, Cancelled, RuntimeContext
from ..resources.properties import check_provider_properties, contains_unknown, validate_properties
from ..language.template.cfn import sections_of
from ..language.template.hot import HotTemplate
from ..language.template.loader import TemplateSource, load_template_yaml
from ..language.template.reading import read_template

DELETION_POLICIES = {"delete": "Delete", "retain": "Retain", "snapshot": "Snapshot"}
# The value Heat gives a CFN template's AWS::Region (heat/engine/cfn/parameters.py).
CFN_REGION = "ap-southeast-1"
PROVIDER_SUFFIXES = (".yaml", ".yml", ".template", ".json")


@dataclass(frozen=True)
class ResourceDefinition:
    """One enabled resource of the definition (functions still unresolved)."""

    name: str
    type: str  # the type as written in the template
    implementation: str  # builtin type name or provider-template file key
    properties: Any
    metadata: Any
    update_policy: Any
    deletion_policy: str
    external_id: Any
    depends_on: tuple[str, ...]
    requires: frozenset[str]
    position: int
    hooks: frozenset[str]
    restricted_actions: frozenset[str]
    # The validated properties when none reads another resource (known before
    # anything runs, so nothing needs to resolve them again).
    known_properties: Mapping[str, Any] | None = None
    # depends_on as written, names of resources whose condition is false included:
    # Heat compares definitions as written, so only a change of this is an update.
    written_depends_on: tuple[str, ...] = ()

    @property
    def is_provider(self) -> bool:
        return resource_class(self.implementation) is None


@dataclass(frozen=True)
class OutputDefinition:
    name: str
    value: Any
    description: str
    enabled: bool


@dataclass(frozen=True)
class StackIdentity:
    name: str
    id: str
    project_id: str = PROJECT_ID
    # For nested stacks: the names of the resources from the top stack down.
    path: tuple[str, ...] = ()
    facade: Mapping[str, Any] | None = None


class _NoRuntime:
    """Handlers only validate here: they get no way to act."""

    stack_name = stack_id = ""


_NO_RUNTIME: Any = _NoRuntime()

# A live resource as the scope sees it: its record and its type's handler.
LiveResource = tuple[ResourceState | None, Resource]


KNOWN_AFTER_APPLY = "(known after apply)"


@dataclass(frozen=True)
class Pending:
    """A resource a preview expects to change: its new values are not known yet.

    ``keeps_id``: an in-place update keeps the physical id (``get_resource``)."""

    state: ResourceState | None
    handler: Resource
    keeps_id: bool


class ResourceView:
    """``ResourceRef`` for functions: reads the live state of one resource."""

    def __init__(self, scope: "Scope", name: str) -> None:
        self.scope = scope
        self.name = name

    @property
    def enabled(self) -> bool:
        return self.scope.definition.resource_enabled(self.name)

    def _live(self) -> LiveResource | Pending | None:
        return self.scope.live(self.name) if self.enabled else None

    def attribute_names(self) -> frozenset[str] | None:
        live = self._live()
        if live is None:
            return self.scope.definition.attribute_names_of(self.name)
        handler = live.handler if isinstance(live, Pending) else live[1]
        return handler.attribute_names()

    def reference_id(self) -> Any:
        live = self._live()
        if live is None:
            return self.name if self.scope.placeholders and self.enabled else None
        if isinstance(live, Pending):
            if live.keeps_id and live.state is not None and live.state.physical_id:
                return live.handler.reference_id(live.state)
            return self._unknown()
        state, handler = live
        return handler.reference_id(state) if state and state.physical_id else self.name

    def attribute(self, name: str) -> Any:
        live = self._live()
        if isinstance(live, Pending):
            return self._unknown()
        if live is None or live[0] is None or not live[1].has_attributes(live[0]):
            return None
        return live[1].attribute(live[0], name)

    def attribute_with_path(self, name: str, path: list[Any]) -> Any:
        """An attribute and a path into it; types that read members (groups) take
        the path themselves."""
        live = self._live()
        if isinstance(live, Pending):
            return self._unknown()
        if live is None or live[0] is None or not live[1].has_attributes(live[0]):
            return None
        state, handler = live
        if state is None:  # checked above; says so to the type checker
            return None
        by_type = getattr(handler, "attribute_path", None)
        if by_type is not None:
            return by_type(state, name, path)
        return select_path(handler.attribute(state, name), path)

    def all_attributes(self) -> dict[str, Any]:
        names = self.attribute_names() or frozenset()
        return {name: self.attribute(name) for name in sorted(names) if name != "show"}

    def _unknown(self) -> str:
        self.scope.on_unknown(self.name)
        return KNOWN_AFTER_APPLY


class Scope:
    """``StackContext`` for functions, bound to one definition and its live state.

    ``live`` starts empty (validation: no resource exists yet) and the executor
    points it at the resources it is running.
    """

    def __init__(
        self,
        definition: "StackDefinition",
        live: Callable[[str], LiveResource | Pending | None] = lambda name: None,
    ) -> None:
        self.definition = definition
        self.live = live
        # A preview learns which resources a value read before they are known.
        self.on_unknown: Callable[[str], None] = lambda name: None
        # While validating: a resource that does not exist yet answers get_resource
        # with its name, as Heat's FnGetRefId does.
        self.placeholders = False
        identity = definition.identity
        self.spent = 0  # characters and items functions produced (see charge)
        self.stack_name = identity.name
        self.stack_id = identity.id
        self.project_id = identity.project_id
        self.pseudo = self._pseudo_parameters(definition.template.pseudo_parameters)

    def _pseudo_parameters(self, names: tuple[str, ...]) -> dict[str, str]:
        """The values of the template's pseudo parameters (HOT's ``OS::``, CFN's ``AWS::``)."""
        values = {
            "OS::stack_name": self.stack_name,
            "OS::stack_id": self.stack_id,
            "OS::project_id": self.project_id,
            "AWS::StackName": self.stack_name,
            # Heat gives a CFN template the stack's ARN, not its bare id.
            "AWS::StackId": stack_arn(self.stack_name, self.stack_id),
            "AWS::Region": CFN_REGION,
        }
        return {name: values[name] for name in names}

    def has_param(self, name: str) -> bool:
        return name in self.pseudo or name in self.definition.parameter_schemas

    def param(self, name: str) -> Any:
        if name in self.pseudo:
            return self.pseudo[name]
        parameters = self.definition.parameters
        if name not in parameters.values:  # while the stack loads: a value missing or wrong
            raise StackValidationFailed(parameters.unreadable.get(
                name, f"The Parameter ({name}) was not provided."))
        return parameters.values[name]

    def has_resource(self, name: str) -> bool:
        return name in self.definition.template.resources_section

    def resource(self, name: str) -> ResourceView:
        return ResourceView(self, name)

    def file(self, key: str) -> str | None:
        return self.definition.files.get(key)

    def has_condition(self, name: str) -> bool:
        return name in self.definition.template.conditions_section

    def mappings(self) -> Mapping[str, Any]:
        return self.definition.template.mappings

    def condition(self, name: str) -> bool:
        return self.definition.condition(name)

    def charge(self, function: Any, value: Any) -> None:
        """Count what a function produced (its length: characters, items or keys).

        One function's result is bounded by the function itself; many calls
        (a snippet reused through YAML aliases in many places) add up, and the
        sum for one stack is bounded here."""
        self.spent += len(value) if isinstance(value, (str, list, dict)) else 1
        if self.spent > MAX_PRODUCED_PER_STACK:
            raise StackValidationFailed(
                "The values intrinsic functions computed for this stack add up to more than "
                f"the maximum of {MAX_PRODUCED_PER_STACK} characters or items",
                path=function.path)

    def facade(self, key: str) -> Any:
        facade = self.definition.identity.facade
        if facade is None:
            raise StackValidationFailed(
                "Resource facade %s is only available in nested stacks" % key
            )
        return facade.get(key)


class StackDefinition:
    """Everything about a stack that does not need its resources to exist."""

    def __init__(
        self,
        source: TemplateSource,
        environment: Environment,
        given_parameters: Mapping[str, Any],
        identity: StackIdentity,
        files: Mapping[str, str] | None = None,
        previous_parameters: frozenset[str] = frozenset(),
    ) -> None:
        self.source = source
        self.environment = environment
        self.identity = identity
        # An update: the parameters the stack's current template declares.
        self.previous_parameters = previous_parameters
        self.files: dict[str, str] = {**source.files, **(files or {})}
        self._conditions: dict[str, bool] = {}
        self._evaluating: list[str] = []
        try:
            # A provider template that uses itself stops here, as in Heat.
            if len(identity.path) > MAX_NESTED_DEPTH:
                raise StackValidationFailed(f"Recursion depth exceeds {MAX_NESTED_DEPTH}.")
            self._build(given_parameters)
        except HotplayError as error:
            template: HotTemplate | None = getattr(self, "template", None)
            if template is not None:
                error = template.in_own_words(error)
            raise self._without_hidden_values(error).located(source.path)

    def _without_hidden_values(self, error: HotplayError) -> HotplayError:
        """Functions and property checks quote the values they were given; a
        hidden parameter's value must not reach the message."""
        parameters = getattr(self, "parameters", None)
        if parameters is not None:
            hidden = [parameters.values.get(name) for name in parameters.hidden_names()]
            error.message = redacted(error.message, hidden)
        return error

    def _build(self, given_parameters: Mapping[str, Any]) -> None:
        self.template = read_template(self.source)
        count = len(self.template.resources_section)
        if count > MAX_RESOURCES_PER_STACK:
            raise StackValidationFailed(
                f"The template has {count} resources, more than the maximum of "
                f"{MAX_RESOURCES_PER_STACK} per stack", path="resources")
        self.parameter_schemas = self.template.parameter_schemas(
            replaced_defaults=frozenset(self.environment.parameter_defaults), check_defaults=False)
        self.scope = Scope(self)
        # Heat's order (engine/service.py, stack.py ``validate``): loading the stack
        # parses every resource (function arguments, resource conditions) with the
        # parameters as given; then parameters, groups, conditions, resource types,
        # names, references and cycles; then each resource, dependencies first.
        self.parameters: Parameters = provisional_parameters(
            self.parameter_schemas, given_parameters, self.environment)
        self._read_kept_parameters(given_parameters)
        parsed = self._parse_resources()
        provisional = self.parameters
        self.parameters = resolve_parameters(
            self.parameter_schemas, given_parameters, self.environment, self.source.path
        )
        if self.parameters.values != provisional.values:
            self._conditions.clear()
            parsed = {}
        validate_parameter_groups(
            self.template.parameter_groups, self.parameter_schemas, self.source.path
        )
        for name in self.template.conditions_section:
            self.condition(name)  # Heat checks every condition, used or not
        self.resources = self._resource_definitions(parsed)
        self._refuse_duplicate_names()
        self._check_references()
        check_acyclic(self.requires_graph())
        # Heat parses the outputs (a function's arguments are checked) as it
        # gathers what they read, before it validates the resources; it validates
        # the outputs' functions after them.
        self.outputs = self._output_definitions()
        self._validate_resources()
        self._validate_outputs()

    def _read_kept_parameters(self, given: Mapping[str, Any]) -> None:
        """An update: Heat reads the new value of each parameter the stack already
        had and the request does not give (its check of immutable parameters), so
        one with no usable value fails first (``The Parameter (p0) was not
        provided.``), before the stack loads."""
        for name in self.parameter_schemas:
            if (name in self.previous_parameters and name not in given
                    and name not in self.environment.parameters and name not in self.parameters.values):
                raise StackValidationFailed(self.parameters.unreadable.get(
                    name, f"The Parameter ({name}) was not provided."))

    def given_beyond_defaults(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The given parameters that make a difference: without those equal to the
        value the parameter has when not given (what a definition's digest holds)."""
        return given_beyond_defaults(self.parameter_schemas, given, self.environment)

    def _refuse_duplicate_names(self) -> None:
        """Heat refuses a name used by both a parameter and a resource (whose
        condition holds), in its words (a Python set)."""
        both = sorted(set(self.parameter_schemas) & set(self.resources))
        if both:
            names = "{" + ", ".join(repr(name) for name in both) + "}"
            raise StackValidationFailed(f"Duplicate names {names}")

    # -- conditions -------------------------------------------------------------------
    def condition(self, name: str) -> bool:
        """A named condition's value, evaluated once; conditions may use others."""
        if name in self._conditions:
            return self._conditions[name]
        section = self.template.conditions_section
        if name not in section:
            raise StackValidationFailed(f'Invalid condition "{name}"', path="conditions")
        if name in self._evaluating:
            chain = " -> ".join(self._evaluating + [name])
            raise StackValidationFailed(
                f"Circular definition for condition {name}: {chain}", path="conditions"
            )
        self._evaluating.append(name)
        try:
            value = self._evaluate_condition(section[name], f"conditions.{name}")
        finally:
            self._evaluating.pop()
        self._conditions[name] = value
        return value

    def _evaluate_condition(self, snippet: Any, path: str) -> bool:
        parsed = self.template.parse_condition(self.scope, snippet, path)
        self.template.validate_functions(parsed)
        value = resolve(parsed)
        if not isinstance(value, bool):
            raise StackValidationFailed(
                f"The definition of condition is invalid: {snippet!r}", path=path
            )
        return value

    def _enabled(self, entry: Mapping[str, Any], path: str) -> bool:
        if "condition" not in entry:
            return True
        return self._evaluate_condition(entry["condition"], f"{path}.condition")

    # -- resources --------------------------------------------------------------------
    def _parse_resources(self) -> dict[str, dict[str, Any]]:
        """Every resource's snippets parsed (Heat's stack load: a function's
        arguments are checked here), and its condition evaluated."""
        parsed: dict[str, dict[str, Any]] = {}
        for name, entry in self.template.resources_section.items():
            path = f"resources.{name}"
            parsed[name] = self._parse_entry(entry, path)
            self._deletion_policy(entry, path)
            self._enabled(entry, path)
        return parsed

    def _parse_entry(self, entry: Mapping[str, Any], path: str) -> dict[str, Any]:
        parse = self.template.parse
        return {key: parse(self.scope, entry.get(key) or {}, f"{path}.{key}")
                for key in ("properties", "metadata", "update_policy")} | {
            "external_id": parse(self.scope, entry.get("external_id"), f"{path}.external_id")}

    def _refuse_types_not_run(self) -> None:
        """Heat's types that this collection does not run, every such resource named
        in one refusal (resources/services.py), before any resource is read."""
        unrun = []
        for name, entry in self.template.resources_section.items():
            path = f"resources.{name}"
            if not isinstance(entry, Mapping) or not isinstance(entry.get("type"), str) \
                    or not self._enabled(entry, path):
                continue
            try:
                implementation = self.environment.registry.resolve(entry["type"], (name,))
            except TemplateError:
                continue  # said where the resource is read
            if resource_class(implementation) is None and heat_type_not_run(implementation):
                unrun.append(Unrun(self.template.place(path), implementation))
        if unrun:
            raise TypesNotRun(unrun)

    def _resource_definitions(self, parsed: Mapping[str, dict[str, Any]]) -> dict[str, ResourceDefinition]:
        self._refuse_types_not_run()
        definitions: dict[str, ResourceDefinition] = {}
        for position, (name, entry) in enumerate(self.template.resources_section.items()):
            path = f"resources.{name}"
            if self._enabled(entry, path):
                snippets = parsed.get(name) or self._parse_entry(entry, path)
                definitions[name] = self._resource_definition(name, entry, snippets, position, path)
        implied = implicit_requires(definitions.values())
        return {name: replace(defn, requires=defn.requires | implied[name]) if implied[name] else defn
                for name, defn in definitions.items()}

    def _resource_definition(
        self, name: str, entry: Mapping[str, Any], snippets: Mapping[str, Any], position: int, path: str
    ) -> ResourceDefinition:
        properties, metadata = snippets["properties"], snippets["metadata"]
        depends_on = self._depends_on(name, entry.get("depends_on"), path)
        # A nested stack's environment is already narrowed to it (for_nested):
        # registry paths are relative to this stack.
        resource_path = (name,)
        registry = self.environment.registry
        try:
            implementation = registry.resolve(str(entry["type"]), resource_path)
        except TemplateError as error:  # a loop of the environment's mappings
            error.path = error.path or f"{path}.type"
            raise
        self._check_type(name, str(entry["type"]), implementation, path)
        if resource_class(implementation) is None:  # a provider standing for Heat's type
            declared = self._provider(implementation).get("parameters") or {}
            properties = translate_replaced(str(entry["type"]), properties, declared,
                                            f"{path}.properties")
        else:  # Heat's own type, native here: its hidden spellings too
            properties = translate_replaced(implementation, properties, (), f"{path}.properties")
        return ResourceDefinition(
            name=name,
            type=str(entry["type"]),
            implementation=implementation,
            properties=properties,
            metadata=metadata,
            update_policy=snippets["update_policy"],
            deletion_policy=self._deletion_policy(entry, path),
            external_id=snippets["external_id"],
            depends_on=depends_on,
            written_depends_on=written_names(entry.get("depends_on")),
            requires=frozenset(depends_on) | self._reads(properties, metadata),
            position=position,
            hooks=registry.hooks(resource_path),
            restricted_actions=registry.restricted_actions(resource_path),
        )

    def _check_references(self) -> None:
        """Heat builds the dependency graph before validating any resource: a
        ``depends_on``, ``get_resource`` or ``get_attr`` naming no resource fails
        first."""
        for name, defn in self.resources.items():
            entry = self.template.resources_section[name]
            # Heat's required_resource_names: the references in properties and
            # metadata are followed (and fail) before depends_on's names are looked up.
            for snippet in (defn.properties, defn.metadata):
                self.template.check_references(snippet)
            self._check_external_depends_on(defn, entry.get("depends_on"), f"resources.{name}")
            self._depends_on(name, entry.get("depends_on"), f"resources.{name}", check=True)

    @staticmethod
    def _check_external_depends_on(defn: ResourceDefinition, depends_on: Any, path: str) -> None:
        """Heat's required_resource_names: a resource standing for an existing
        thing (``external_id``) may not wait for others, so a ``depends_on`` on it
        is refused (whatever it names) before any name in it is looked up."""
        if defn.external_id is None or not depends_on:
            return
        raise StackValidationFailed(
            f"Invalid dependency with external {defn.type} resource: {resolve(defn.external_id)}",
            path=f"{path}.depends_on")

    def _validate_resources(self) -> None:
        """Each resource checked, dependencies first, in template order otherwise
        (Heat's ``Stack.validate`` walks its graph so, in the order of a set)."""
        for name in first_ready_order(self.requires_graph()):
            defn = self.resources[name]
            path = f"resources.{name}"
            cls = resource_class(defn.implementation)
            if getattr(cls, "accepts_any_properties", False):
                continue  # OS::Heat::None: Heat's validate() does nothing at all
            # get_param in properties fails as Heat's does: when the value is
            # resolved (below), in the order the functions are evaluated.
            self.template.validate_functions(defn.properties, skip=(GetParam,))
            for snippet in (defn.metadata, defn.update_policy):
                self.template.validate_functions(snippet)
            self._check_snapshot(defn, path)
            if cls is None:  # a provider template: Heat's TemplateResource checks its facade
                check_against_facade(defn.type, self._provider(defn.implementation),
                                     f"{path}<{defn.implementation}>", self.environment.parameter_defaults)
            self._check_update_policy(defn.implementation, defn.update_policy, f"{path}.update_policy")
            if defn.external_id is not None:
                continue  # Heat's validate_external: an existing thing's properties are not checked
            known = self._check_properties(name, defn.implementation, defn.properties, path)
            if known is not None:
                self.resources[name] = replace(defn, known_properties=known)
                self._check_group_reads(name, defn, known)

    def _check_group_reads(self, name: str, defn: ResourceDefinition, properties: dict[str, Any]) -> None:
        """A ResourceGroup's members read elsewhere in the stack, checked against the
        member's type as Heat validates the group's nested stack (model.group_reads)."""
        cls = resource_class(defn.implementation)
        if cls is None or getattr(cls, "type_name", None) != "OS::Heat::ResourceGroup":
            return
        group: Any = cls(name, _NO_RUNTIME)
        members = group.member_names(properties)
        member_def = properties.get("resource_def") or {}
        if not members or not isinstance(member_def.get("type"), str):
            return
        nested = self.environment.for_nested(name, defn.type)
        member_cls = resource_class(nested.registry.resolve(member_def["type"], (members[0],)))
        names = member_cls(members[0], _NO_RUNTIME).attribute_names() if member_cls is not None else None
        if names is None:
            return
        snippets = [s for d in self.resources.values() for s in (d.properties, d.metadata)]
        snippets += [o.value for o in self.outputs.values() if o.enabled]
        check_member_reads(name, members[0], frozenset(names), group_reads(name, snippets))

    def _reads(self, *snippets: Any) -> frozenset[str]:
        names: set[str] = set()
        for snippet in snippets:
            names |= dependencies(snippet)
        return frozenset(names)

    def _depends_on(self, name: str, value: Any, path: str, check: bool = False) -> tuple[str, ...]:
        """The names a resource depends on (``check``: each must be a resource)."""
        if value is None:
            return ()
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise StackValidationFailed(
                f"Resource {name} depends_on must be a list of resource names or a string",
                path=f"{path}.depends_on",
            )
        for needed in names if check else ():
            if needed not in self.template.resources_section:
                raise StackValidationFailed(
                    f'The specified reference "{needed}" (in {name}) is incorrect.',
                    path=f"{path}.depends_on",
                )
        # A dependency on a resource whose condition is false is dropped, as Heat; one on
        # itself stays, and the graph check refuses it as Heat does (a circular dependency).
        return tuple(n for n in names if self.resource_enabled(n))

    def resource_enabled(self, name: str) -> bool:
        """True when the template declares ``name`` and its condition holds."""
        entry = self.template.resources_section.get(name)
        return entry is not None and self._enabled(entry, f"resources.{name}")

    def _deletion_policy(self, entry: Mapping[str, Any], path: str) -> str:
        """The policy in Heat's spelling; one the template's version does not know
        fails as the stack loads (after the parameters' declarations are read)."""
        raw = entry.get("deletion_policy", "Delete")
        policy = DELETION_POLICIES.get(str(raw).lower())
        if isinstance(raw, str) and "deletion_policy" in entry and raw not in self.template.version.deletion_policies:
            policy = None
        if policy is None:
            raise StackValidationFailed(
                f'Invalid deletion policy "{raw}"', path=f"{path}.deletion_policy"
            )
        return policy

    @staticmethod
    def _check_snapshot(defn: ResourceDefinition, path: str) -> None:
        cls = resource_class(defn.implementation)
        if defn.deletion_policy == "Snapshot" and not callable(getattr(cls, "handle_snapshot_delete", None)):
            # Heat: only types that can snapshot accept it (none of ours can); the
            # check is in Resource.validate, which OS::Heat::None skips.
            raise StackValidationFailed(
                '"Snapshot" deletion policy not supported', path=f"{path}.deletion_policy"
            )

    def _check_type(self, name: str, written: str, implementation: str, path: str) -> None:
        if resource_class(implementation) is not None:
            return
        if implementation.endswith(PROVIDER_SUFFIXES) and implementation in self.files:
            return
        if implementation.endswith(PROVIDER_SUFFIXES):
            raise StackValidationFailed(
                f'Could not fetch remote template "{implementation}": '
                "it is not among the files of the template or its environment",
                path=f"{path}.type",
            )
        raise StackValidationFailed(
            f"The Resource Type ({written}) could not be found.", path=f"{path}.type"
        )

    def _check_properties(
        self, name: str, implementation: str, properties: Any, path: str
    ) -> dict[str, Any] | None:
        """Validate what can be known now; values that read other resources are
        checked when the resource is converged (Heat does the same).  Returns the
        validated properties when all are known."""
        if not isinstance(properties, dict):
            raise StackValidationFailed(
                "Properties must be a mapping", path=f"{path}.properties"
            )
        cls = resource_class(implementation)
        if getattr(cls, "accepts_any_properties", False):
            # Heat's OS::Heat::None never resolves its properties (it re-parses
            # them with an empty schema): what they would compute is not checked.
            return {}
        self._check_property_names(cls, properties, f"{path}.properties")
        values = {}
        reading = frozenset(key for key, snippet in properties.items() if dependencies(snippet))
        for key, snippet in properties.items():
            values[key] = self._resolve_as_heat_validates(snippet) if key in reading else resolve(snippet)
        if cls is None:
            self._check_provider_properties(implementation, values, f"{path}.properties", reading)
            return None
        checked = validate_properties(cls, values, f"{path}.properties", partial=True, unchecked=reading)
        if reading or contains_unknown(checked):
            # Checks of the values known now, as Heat's validate() makes them
            # (it validates with what get_resource gives before anything exists).
            early = getattr(cls, "validate_known", None)
            if early is not None:
                early(cls(name, _NO_RUNTIME), {k: v for k, v in checked.items()
                                               if k not in reading and not contains_unknown(v)})
            return None
        cls(name, _NO_RUNTIME).validate(checked)
        return checked

    @staticmethod
    def _check_property_names(resource_type: type | None, properties: Mapping[str, Any], path: str) -> None:
        """Heat's Properties.validate names an unknown property before it resolves
        any value (a get_param of a missing parameter fails later)."""
        if resource_type is None or getattr(resource_type, "keeps_any_properties", False) or hasattr(
                resource_type, "properties_schema_for"):
            return
        schema = getattr(resource_type, "properties_schema", {})
        for key in properties:
            if key not in schema:
                raise StackValidationFailed(f"Property error: {path}: Unknown Property {key}")

    def _resolve_as_heat_validates(self, snippet: Any) -> Any:
        """Heat validates a value that reads other resources with what they give
        before they exist (``get_resource``: the name; ``get_attr``: null): a
        function that cannot take those fails now, and so does a result of the
        wrong type (``Value must be a string; got {'k': 'r0'}``), as in Heat.  The
        real value is only known once the resources exist."""
        self.scope.placeholders = True
        try:
            return resolve(snippet)
        finally:
            self.scope.placeholders = False

    @staticmethod
    def _check_update_policy(implementation: str, update_policy: Any, path: str) -> None:
        """Types that take an update_policy check it now (before anything runs),
        unless it reads other resources."""
        cls = resource_class(implementation)
        check = getattr(cls, "validate_update_policy", None)
        if check is not None and update_policy and not dependencies(update_policy):
            check(resolve(update_policy), path)

    def _provider(self, key: str) -> Mapping[str, Any]:
        """A provider template's sections under HOT's names, whatever its format
        ({} when it is not a mapping)."""
        provider = load_template_yaml(self.files[key], key)
        return sections_of(provider) if isinstance(provider, dict) else {}

    def _check_provider_properties(self, key: str, values: Mapping[str, Any], path: str,
                                   reading: frozenset[str] = frozenset()) -> None:
        """A provider template's parameters are the resource's properties, typed and
        required as Heat's ``Properties.schema_from_params`` makes them."""
        declared = self._provider(key).get("parameters") or {}
        for prop in values:
            if prop not in declared:
                raise StackValidationFailed(f"Property error: {path}: Unknown Property {prop}")
        check_provider_properties(declared, values, path, frozenset(self.environment.parameter_defaults),
                                  reading)

    def attribute_names_of(self, name: str) -> frozenset[str] | None:
        """Attributes ``get_attr`` may name on a resource, from its type alone
        (None: any name, e.g. groups); used while no resource exists yet."""
        entry = self.template.resources_section.get(name)
        if not isinstance(entry, Mapping) or "type" not in entry:
            return None
        implementation = self.environment.registry.resolve(
            str(entry["type"]), (name,)
        )
        cls = resource_class(implementation)
        if cls is not None:
            return cls(name, _NO_RUNTIME).attribute_names()
        # A provider template: Heat checks the name only when it is read (its
        # TemplateResource overrides get_attribute), so any name passes here.
        return None

    def requires_graph(self) -> dict[str, set[str]]:
        """Each enabled resource and the enabled resources it needs first."""
        return {
            name: {n for n in defn.requires if n in self.resources}
            for name, defn in self.resources.items()
        }

    # -- outputs ----------------------------------------------------------------------
    def _output_definitions(self) -> dict[str, OutputDefinition]:
        outputs: dict[str, OutputDefinition] = {}
        for name, entry in (self.template.outputs_section or {}).items():
            path = f"outputs.{name}"
            entry = entry or {}
            enabled = self._enabled(entry, path)
            # Heat does not parse the value of an output whose condition is false.
            value = self.template.parse(self.scope, entry.get("value"), f"{path}.value") if enabled else None
            outputs[name] = OutputDefinition(
                name, value, str(entry.get("description", "")), enabled
            )
        return outputs

    def _validate_outputs(self) -> None:
        for output in self.outputs.values():
            if output.enabled:
                # Heat's output validation runs only the functions that have a
                # validate(); get_param fails when the output is read (output error).
                self.template.validate_functions(output.value, skip=(GetParam,))


def resolve_outputs(definition: StackDefinition) -> tuple[dict[str, Any], dict[str, str]]:
    """Every output's value (None when disabled or failing) and the failures."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name, output in definition.outputs.items():
        values[name] = None
        if not output.enabled:
            continue
        try:
            values[name] = resolve(output.value)
        except (HotplayError, KeyError, TypeError, ValueError) as error:
            errors[name] = str(error)
        except Cancelled as error:  # a live attribute, read after the run's time ran out
            errors[name] = f"not read: {error}"
    return values, errors


def handler_for(definition: ResourceDefinition, runtime: RuntimeContext) -> Resource:
    """The type handler of a resource (provider templates are nested stacks)."""
    return resource_handler(definition.name, definition.implementation, runtime)


# -- Heat's implicit dependencies --------------------------------------------------------
# Heat's resource types add these in add_dependencies, by type name, so they hold for
# provider templates mapped over those types too: a server waits for the subnets of its
# networks (Nova takes an address from one, and the subnet cannot go while the server's
# port holds one), a port for its network's subnets, a floating IP for the router whose
# gateway is on its network and for the router interface on its port's subnet, a
# floating IP association for the router interface on its port's subnet.

SUBNET, SERVER, PORT, ROUTER, FLOATING_IP = ("OS::Neutron::Subnet", "OS::Nova::Server",
                                             "OS::Neutron::Port", "OS::Neutron::Router",
                                             "OS::Neutron::FloatingIP")
ROUTER_INTERFACE = "OS::Neutron::RouterInterface"
FLOATING_IP_ASSOCIATION = "OS::Neutron::FloatingIPAssociation"


def implicit_requires(definitions: Iterable[ResourceDefinition]) -> dict[str, frozenset[str]]:
    """For each resource, the resources Heat makes it depend on without a reference."""
    every = list(definitions)
    subnets = [d for d in every if d.type == SUBNET]
    routers = [d for d in every if d.type == ROUTER]
    interfaces = [d for d in every if d.type == ROUTER_INTERFACE]
    ports = {d.name: d for d in every if d.type == PORT}
    implied: dict[str, frozenset[str]] = {}
    for defn in every:
        if defn.type == SERVER:
            needs = _server_needs(defn, subnets)
        elif defn.type == PORT:
            network = _reference(_network_of(defn.properties))
            needs = {s.name for s in subnets if _reference(_network_of(s.properties)) == network}
        elif defn.type == FLOATING_IP:
            needs = _floating_ip_needs(defn, routers) | _interfaces_of_ports(
                [ports[name] for name in defn.requires if name in ports], interfaces, subnets)
        elif defn.type == FLOATING_IP_ASSOCIATION:
            needs = _interfaces_on_first_subnets([ports[name] for name in defn.requires if name in ports],
                                                 interfaces)
        else:
            needs = set()
        implied[defn.name] = frozenset(needs - {defn.name})
    return implied


def _server_needs(server: ResourceDefinition, subnets: list[ResourceDefinition]) -> set[str]:
    """Heat's Server.add_dependencies: every subnet of a network the server names, and
    every subnet when a network entry or the subnet's network is not known."""
    networks = [_plain(entry) for entry in _plain(server.properties.get("networks")) or ()]
    if not networks:
        return set()
    needs = set()
    for subnet in subnets:
        on = _reference(_network_of(subnet.properties))
        for entry in networks:
            named = _reference(entry.get("network") or entry.get("uuid")) \
                if isinstance(entry, Mapping) else None
            if on is None or named is None or named == on:
                needs.add(subnet.name)
                break
    return needs


def _floating_ip_needs(floating_ip: ResourceDefinition, routers: list[ResourceDefinition]) -> set[str]:
    """Heat's FloatingIP.add_dependencies: the routers whose gateway is on its network."""
    network = _reference(floating_ip.properties.get("floating_network")
                         or floating_ip.properties.get("floating_network_id"))
    needs = set()
    for router in routers:
        gateway = _plain(router.properties.get("external_gateway_info"))
        if isinstance(gateway, Mapping) and network is not None \
                and _reference(gateway.get("network")) == network:
            needs.add(router.name)
    return needs


def _interfaces_of_ports(ports: list[ResourceDefinition], interfaces: list[ResourceDefinition],
                         subnets: list[ResourceDefinition]) -> set[str]:
    """Heat's FloatingIP._add_router_interface_dependencies: the router interfaces on
    a subnet of a port the floating IP reads (Neutron reaches the external network
    from the port's subnet only through one)."""
    return {interface.name for interface in interfaces
            if any(_port_on_subnet(port, _reference(interface.properties.get("subnet")
                                                    or interface.properties.get("subnet_id")), subnets)
                   for port in ports)}


def _interfaces_on_first_subnets(ports: list[ResourceDefinition],
                                 interfaces: list[ResourceDefinition]) -> set[str]:
    """Heat's FloatingIPAssociation.add_dependencies: the router interfaces on the
    subnet of the first ``fixed_ips`` entry of a port the association reads (a port
    without ``fixed_ips`` adds none there, unlike a floating IP's)."""
    firsts = []  # a list: a subnet given as a map or list is not hashable
    for port in ports:
        fixed_ips = _plain(port.properties.get("fixed_ips"))
        if isinstance(fixed_ips, list) and fixed_ips and isinstance(fixed_ips[0], Mapping):
            firsts.append(_reference(fixed_ips[0].get("subnet") or fixed_ips[0].get("subnet_id")))
    return {interface.name for interface in interfaces
            if _reference(interface.properties.get("subnet") or interface.properties.get("subnet_id")) in firsts}


def _port_on_subnet(port: ResourceDefinition, subnet: Any, subnets: list[ResourceDefinition]) -> bool:
    fixed_ips = _plain(port.properties.get("fixed_ips"))
    if isinstance(fixed_ips, list) and fixed_ips:
        return any(isinstance(entry, Mapping)
                   and _reference(entry.get("subnet") or entry.get("subnet_id")) == subnet
                   for entry in fixed_ips)
    if subnet is None:
        return True  # Heat: an interface whose subnet is not known yet counts
    network = _reference(_network_of(port.properties))
    if network is None:
        return False
    # Heat asks Neutron for the network's subnets; here the template's subnets say,
    # and a subnet from outside the template might be on it.
    named = [s for s in subnets if subnet == frozenset({s.name})]
    return not named or any(_reference(_network_of(s.properties)) == network for s in named)


def _network_of(properties: Mapping[str, Any]) -> Any:
    return properties.get("network") or properties.get("network_id")


def _plain(snippet: Any) -> Any:
    """A property's value when it reads no resource (a parameter, a literal); None when
    it is known only after a resource is made."""
    if snippet is None:
        return None
    if dependencies(snippet):
        # A list or map with references inside keeps its shape; a function does not.
        return snippet if isinstance(snippet, (Mapping, list)) else None
    return resolve(snippet)


def _reference(snippet: Any) -> Any:
    """What a network property names, comparable between resources: the resources it
    reads (``get_resource: net`` and ``get_attr: [net, id]`` name the same one) or its
    value; None when not given."""
    if snippet is None:
        return None
    names = dependencies(snippet)
    if names:
        return frozenset(names)
    value = resolve(snippet)
    return value if value not in ("", None) else None


def written_names(depends_on: Any) -> tuple[str, ...]:
    """A ``depends_on`` as written (validated): a name is a list of one."""
    return (depends_on,) if isinstance(depends_on, str) else tuple(depends_on or ())
