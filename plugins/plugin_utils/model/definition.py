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
from ..language.functions.hot import select_path
from .graph import check_acyclic
from ..limits import MAX_NESTED_DEPTH, MAX_PRODUCED_PER_STACK, MAX_RESOURCES_PER_STACK
from ..language.parameters import (
    Parameters,
    parse_parameter_schemas,
    redacted,
    resolve_parameters,
    validate_parameter_groups,
)
from .. import resources as _resource_types  # noqa: F401  (registers the types)
from ..resources.base import Resource, ResourceState, resource_class
from ..resources.base import handler_for as resource_handler
from ..resources.runtime import RuntimeContext
from ..resources.properties import UNKNOWN, contains_unknown, validate_properties
from ..language.template.hot import HotTemplate
from ..language.template.loader import TemplateSource, load_template_yaml

DELETION_POLICIES = {"delete": "Delete", "retain": "Retain", "snapshot": "Snapshot"}
PSEUDO_PARAMETERS = ("OS::stack_name", "OS::stack_id", "OS::project_id")
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
    project_id: str = "hotplay"
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
            return None
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
        if live is None or live[0] is None or not live[0].physical_id:
            return None
        return live[1].attribute(live[0], name)

    def attribute_with_path(self, name: str, path: list[Any]) -> Any:
        """An attribute and a path into it; types that read members (groups) take
        the path themselves."""
        live = self._live()
        if isinstance(live, Pending):
            return self._unknown()
        if live is None or live[0] is None or not live[0].physical_id:
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
        identity = definition.identity
        self.spent = 0  # characters and items functions produced (see charge)
        self.stack_name = identity.name
        self.stack_id = identity.id
        self.project_id = identity.project_id

    def has_param(self, name: str) -> bool:
        return name in PSEUDO_PARAMETERS or name in self.definition.parameter_schemas

    def param(self, name: str) -> Any:
        pseudo = {
            "OS::stack_name": self.stack_name,
            "OS::stack_id": self.stack_id,
            "OS::project_id": self.project_id,
        }
        if name in pseudo:
            return pseudo[name]
        return self.definition.parameters.values[name]

    def has_resource(self, name: str) -> bool:
        return name in self.definition.template.resources_section

    def resource(self, name: str) -> ResourceView:
        return ResourceView(self, name)

    def file(self, key: str) -> str | None:
        return self.definition.files.get(key)

    def has_condition(self, name: str) -> bool:
        return name in self.definition.template.conditions_section

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
    ) -> None:
        self.source = source
        self.environment = environment
        self.identity = identity
        self.files: dict[str, str] = {**source.files, **(files or {})}
        self._conditions: dict[str, bool] = {}
        self._evaluating: list[str] = []
        try:
            # A provider template that uses itself stops here, as in Heat.
            if len(identity.path) > MAX_NESTED_DEPTH:
                raise StackValidationFailed(f"Recursion depth exceeds {MAX_NESTED_DEPTH}.")
            self._build(given_parameters)
        except HotplayError as error:
            raise self._without_hidden_values(error).located(source.path)

    def _without_hidden_values(self, error: HotplayError) -> HotplayError:
        """Functions and property checks quote the values they were given; a
        hidden parameter's value must not reach the message."""
        parameters = getattr(self, "parameters", None)
        if parameters is not None:
            hidden = [parameters.values[name] for name in parameters.hidden_names()]
            error.message = redacted(error.message, hidden)
        return error

    def _build(self, given_parameters: Mapping[str, Any]) -> None:
        self.template = HotTemplate(self.source)
        count = len(self.template.resources_section)
        if count > MAX_RESOURCES_PER_STACK:
            raise StackValidationFailed(
                f"The template has {count} resources, more than the maximum of "
                f"{MAX_RESOURCES_PER_STACK} per stack", path="resources")
        version = self.template.version.key
        self.parameter_schemas = parse_parameter_schemas(
            self.template.parameters_section, self.source.path, version,
            replaced_defaults=frozenset(self.environment.parameter_defaults), check_defaults=False,
        )
        self.parameters: Parameters = resolve_parameters(
            self.parameter_schemas, given_parameters, self.environment, self.source.path
        )
        validate_parameter_groups(  # after the parameters, as Heat's Stack.validate
            self.template.parameter_groups, self.parameter_schemas, self.source.path
        )
        self.scope = Scope(self)
        for name in self.template.conditions_section:
            self.condition(name)  # Heat checks every condition, used or not
        self.resources = self._resource_definitions()
        self._refuse_duplicate_names()
        self.outputs = self._output_definitions()
        check_acyclic(self.requires_graph())

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
    def _resource_definitions(self) -> dict[str, ResourceDefinition]:
        definitions: dict[str, ResourceDefinition] = {}
        for position, (name, entry) in enumerate(self.template.resources_section.items()):
            path = f"resources.{name}"
            if self._enabled(entry, path):
                definitions[name] = self._resource_definition(name, entry, position, path)
        implied = implicit_requires(definitions.values())
        return {name: replace(defn, requires=defn.requires | implied[name]) if implied[name] else defn
                for name, defn in definitions.items()}

    def _resource_definition(
        self, name: str, entry: Mapping[str, Any], position: int, path: str
    ) -> ResourceDefinition:
        parse = self.template.parse
        properties = parse(self.scope, entry.get("properties") or {}, f"{path}.properties")
        metadata = parse(self.scope, entry.get("metadata") or {}, f"{path}.metadata")
        update_policy = parse(self.scope, entry.get("update_policy") or {}, f"{path}.update_policy")
        for snippet in (properties, metadata, update_policy):
            self.template.validate_functions(snippet)
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
        known = self._check_properties(name, implementation, properties, path)
        self._check_update_policy(implementation, update_policy, f"{path}.update_policy")
        return ResourceDefinition(
            name=name,
            type=str(entry["type"]),
            implementation=implementation,
            properties=properties,
            metadata=metadata,
            update_policy=update_policy,
            deletion_policy=self._deletion_policy(entry, path),
            external_id=parse(self.scope, entry.get("external_id"), f"{path}.external_id"),
            depends_on=depends_on,
            requires=frozenset(depends_on) | self._reads(properties, metadata),
            position=position,
            hooks=registry.hooks(resource_path),
            restricted_actions=registry.restricted_actions(resource_path),
            known_properties=known,
        )

    def _reads(self, *snippets: Any) -> frozenset[str]:
        names: set[str] = set()
        for snippet in snippets:
            names |= dependencies(snippet)
        return frozenset(names)

    def _depends_on(self, name: str, value: Any, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise StackValidationFailed(
                f"Resource {name} depends_on must be a list of resource names or a string",
                path=f"{path}.depends_on",
            )
        for needed in names:
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
        raw = entry.get("deletion_policy", "Delete")
        policy = DELETION_POLICIES.get(str(raw).lower())
        if policy is None:
            raise StackValidationFailed(
                f'Invalid deletion policy "{raw}"', path=f"{path}.deletion_policy"
            )
        cls = resource_class(self.environment.registry.resolve(
            str(entry.get("type")), (path.rsplit(".", 1)[-1],)))
        if policy == "Snapshot" and not callable(getattr(cls, "handle_snapshot_delete", None)):
            # Heat: only types that can snapshot accept it (none of ours can).
            raise StackValidationFailed(
                f'"{policy}" deletion policy not supported', path=f"{path}.deletion_policy"
            )
        return policy

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
        values = {
            key: UNKNOWN if dependencies(snippet) else resolve(snippet)
            for key, snippet in properties.items()
        }
        if cls is None:
            self._check_provider_properties(implementation, values, f"{path}.properties")
            return None
        checked = validate_properties(cls, values, f"{path}.properties", partial=True)
        if contains_unknown(checked):
            return None
        cls(name, _NO_RUNTIME).validate(checked)
        return checked

    @staticmethod
    def _check_update_policy(implementation: str, update_policy: Any, path: str) -> None:
        """Types that take an update_policy check it now (before anything runs),
        unless it reads other resources."""
        cls = resource_class(implementation)
        check = getattr(cls, "validate_update_policy", None)
        if check is not None and update_policy and not dependencies(update_policy):
            check(resolve(update_policy), path)

    def _check_provider_properties(self, key: str, values: Mapping[str, Any], path: str) -> None:
        provider = load_template_yaml(self.files[key], key)
        declared = (provider.get("parameters") or {}) if isinstance(provider, dict) else {}
        for prop in values:
            if prop not in declared:
                raise StackValidationFailed(f"Property error: {path}: Unknown Property {prop}")

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
        if implementation in self.files:
            provider = load_template_yaml(self.files[implementation], implementation)
            outputs = provider.get("outputs") if isinstance(provider, dict) else None
            return frozenset(outputs or ()) | {"show", "OS::stack_id"}
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
            value = self.template.parse(self.scope, entry.get("value"), f"{path}.value")
            if enabled:
                self.template.validate_functions(value)
            outputs[name] = OutputDefinition(
                name, value, str(entry.get("description", "")), enabled
            )
        return outputs


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
    return values, errors


def handler_for(definition: ResourceDefinition, runtime: RuntimeContext) -> Resource:
    """The type handler of a resource (provider templates are nested stacks)."""
    return resource_handler(definition.name, definition.implementation, runtime)


# -- Heat's implicit dependencies --------------------------------------------------------
# Heat's resource types add these in add_dependencies, by type name, so they hold for
# provider templates mapped over those types too: a server waits for the subnets of its
# networks (Nova takes an address from one, and the subnet cannot go while the server's
# port holds one), a port for its network's subnets, a floating IP for the router whose
# gateway is on its network.

SUBNET, SERVER, PORT, ROUTER, FLOATING_IP = ("OS::Neutron::Subnet", "OS::Nova::Server",
                                             "OS::Neutron::Port", "OS::Neutron::Router",
                                             "OS::Neutron::FloatingIP")


def implicit_requires(definitions: Iterable[ResourceDefinition]) -> dict[str, frozenset[str]]:
    """For each resource, the resources Heat makes it depend on without a reference."""
    every = list(definitions)
    subnets = [d for d in every if d.type == SUBNET]
    routers = [d for d in every if d.type == ROUTER]
    implied: dict[str, frozenset[str]] = {}
    for defn in every:
        if defn.type == SERVER:
            needs = _server_needs(defn, subnets)
        elif defn.type == PORT:
            network = _reference(_network_of(defn.properties))
            needs = {s.name for s in subnets if _reference(_network_of(s.properties)) == network}
        elif defn.type == FLOATING_IP:
            needs = _floating_ip_needs(defn, routers)
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
