# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adopting a stack that a running Heat manages: its existing resources are
recorded as revision 1, with their physical ids and the values Heat generated,
and nothing is created.

The adoption runs first into a scratch store (a SQLite file in a temporary
directory): the whole definition, nested stacks to any depth, is built and each
resource matched with Heat's.  Only when every resource was adopted is the stack
copied into the task's store, in one verified transaction (store.copy); a
refusal, at any depth, leaves the task's store untouched.  Check mode stops
before the copy and shows what would be adopted.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from ..adapters.results import ProgressCallback, StackResult, event_sink, stack_result
from ..adapters.views import outcome_of
from ..errors import HotplayError, StackNotFound, check_new_stack_name
from ..language.abandon import AbandonedStack
from ..language.environment import EMPTY_ENVIRONMENT, merge_environments, parse_environment
from ..language.registry import ResourceRegistry
from ..language.template.loader import TemplateSource
from ..model.definition import StackDefinition, StackIdentity
from ..model.inputs import (
    LoadedInputs,
    check_parameter_sizes,
    definition_digest,
    keep_hidden_secrets,
    load_inputs,
    recorded_definition,
)
from ..resources.aws_autoscaling import GROUP_MEMBER_TYPES
from ..resources.base import resource_class
from ..resources.read_only import READ_ONLY_TYPE
from ..run.executor import Event, RunOptions, StackRun
from ..store.base import Store
from ..store.copy import CopyRequest, copy_stacks
from ..store.files import scratch_directory
from ..store.sealed import SealedStore, sealed
from ..store.sql import SqlStore
from ..store.sqlite import SqliteStore
from .cloud_names import NAMED_TYPES, NameReader
from .engine import cloud_session
from .settings import check_tags


# The temporary directories of the scratch stores (store.files removes the ones a
# killed job left behind).
SCRATCH_PREFIX = "hotplay-adopt-"
# The name of the environment layer stack_adopt adds for read-only resources.
READ_ONLY_ENVIRONMENT = "stack_adopt: read-only resources"


class AdoptRefused(HotplayError):
    """The stack cannot be adopted as asked: nothing is written."""


@dataclass(frozen=True)
class AdoptRequest:
    name: str
    abandoned: AbandonedStack
    source: str  # where the abandon data came from, for messages
    # The template and environment files the stack will be applied from; when
    # None, Heat's own (from the abandon data) are recorded.
    template: str | None = None
    environment: Sequence[str] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    file_roots: Sequence[str] = ()
    check_mode: bool = False
    nested_depth: int = 0
    host: Any = None
    # Resources of types this collection cannot manage: "refuse" the adoption,
    # or keep them "read_only" (Hotplay::ReadOnly).
    unmanaged: str = "refuse"
    # Reads the name the cloud shows for a physical resource (operations.cloud_names),
    # for the resources adopted into provider templates that name what they manage.
    read_name: NameReader | None = None
    # The cloud of the native OpenStack types (a clouds.yaml entry; None: openstacksdk's
    # OS_* variables), as for an apply: each of Heat's ids is looked up there as its
    # type, and the outputs (get_attr) are read from it, in a preview too.
    cloud: str | None = None
    # Whether Heat's ids may name another project's resources (an admin adopting a
    # stack of another project); otherwise such an id refuses the adoption.
    other_projects: bool = False


def adopt_stack(store: Store, request: AdoptRequest, holder: str,
                progress: ProgressCallback | None = None) -> StackResult:
    """Record Heat's stack as revision 1 of a new stack of the store."""
    check_new_stack_name(request.name)
    store = sealed(store)
    if store.find_stack(request.name) is not None:
        raise AdoptRefused(f"stack {request.name} is in the store already: adopt under another "
                           "name, or delete that stack first")
    _refuse_known_id(store, request.abandoned)
    _check_heat_tags(request)
    inputs, given = _inputs(request)
    check_parameter_sizes(given, inputs.environment)
    if request.unmanaged != "read_only":
        refuse_unmanaged(request.abandoned, request.source, inputs.environment.registry)
    request = replace(request, abandoned=_with_real_names(request, inputs.environment.registry))
    definition, given = _definition(request, inputs, given)
    keep_hidden_secrets(store, definition.parameters, request.name)
    recorded = recorded_definition(inputs, given, definition.parameters.values,
                                   definition.parameters.hidden_names())
    digest = definition_digest(inputs, definition.given_beyond_defaults(given), store.digest)
    events: list[Event] = []
    with scratch_store(store) as scratch:
        adopted = _adopt_into(scratch, request, definition, recorded, digest,
                              event_sink(events, progress))
        if request.check_mode:
            return adopted
        if not isinstance(store.inner, SqlStore) or not isinstance(scratch.inner, SqlStore):
            raise AdoptRefused("adoption needs a SQLite or PostgreSQL store")
        copy_stacks(scratch.inner, store.inner, CopyRequest(stacks=[request.name]), holder)
    final = store.find_stack(request.name)
    if final is None:  # the copy verified what it wrote: this cannot be
        raise AdoptRefused(f"stack {request.name} was not recorded")
    return stack_result(store, final, events, request.nested_depth,
                        definition.parameters.display())


def _adopt_into(scratch: SealedStore, request: AdoptRequest, definition: StackDefinition,
                recorded: dict[str, Any], digest: str, sink: Any) -> StackResult:
    """Run the adoption in the scratch store; refuse it when a resource failed."""
    keep_hidden_secrets(scratch, definition.parameters, request.name)  # sealed from the start
    stack = scratch.create_stack(request.name, stack_id=request.abandoned.id)
    # Heat's tags stay the stack's: a later task that gives none keeps them, as in Heat.
    scratch.set_stack_settings(stack.id, request.abandoned.tags, False)
    scratch.attach(stack.id)
    revision = scratch.add_revision(stack.id, "ADOPT", recorded, digest)
    # Modules run only from the task's own template and environment, never from what
    # the abandon data brings (it is input from elsewhere): without them, no host.
    host = request.host if request.template else None
    with cloud_session(request.cloud) as session:
        options = RunOptions(revision, adopt=request.abandoned, host=host, cloud=session,
                             preview=request.check_mode, adopt_other_projects=request.other_projects)
        run = StackRun(scratch, stack, sink, options=options)
        try:
            ok = run.converge(definition, "ADOPT")
        except HotplayError as error:  # the top stack's resources are not Heat's
            raise AdoptRefused(f"stack {request.abandoned.name} cannot be adopted: {error}",
                               source=request.source) from None
    final = scratch.get_stack(stack.id)
    scratch.finish_revision(stack.id, revision, "COMPLETE" if ok else "FAILED",
                            final.status_reason, outcome_of(scratch, stack.id))
    if not ok:
        raise AdoptRefused(f"stack {request.abandoned.name} cannot be adopted: "
                           f"{final.status_reason}; nothing was written", source=request.source)
    return stack_result(scratch, final, [], request.nested_depth, definition.parameters.display())


def _check_heat_tags(request: AdoptRequest) -> None:
    """Refuse, before anything is written, abandon data whose tags Heat could not have kept."""
    try:
        check_tags(request.abandoned.tags)
    except HotplayError as error:
        raise AdoptRefused(f"Heat's stack {request.abandoned.name}: {error}", source=request.source) from None


def _refuse_known_id(store: Store, abandoned: AbandonedStack) -> None:
    """Two stacks of one store must not manage the same resources: a stack with
    Heat's id is that stack, adopted (or exported) before."""
    try:
        known = store.get_stack(abandoned.id)
    except StackNotFound:
        return
    raise AdoptRefused(f"the store has Heat's stack {abandoned.name} ({abandoned.id}) already, "
                       f"as stack {known.name}: its resources are managed from there")


def unmanaged_types(abandoned: AbandonedStack, registry: ResourceRegistry | None = None) -> list[str]:
    """The types, at any depth, that this collection cannot adopt (with the
    environment's ``registry``: nor a provider template it maps them to)."""
    return sorted({entry.type for path, entry in abandoned.walk()
                   if entry.stack is None and not _adoptable(entry.type, path, registry)})


def read_only_types(request: AdoptRequest) -> list[str]:
    """The types an adoption with ``unmanaged: read_only`` keeps read-only."""
    if request.unmanaged != "read_only":
        return []
    return unmanaged_types(request.abandoned, _given_inputs(request)[0].environment.registry)


def _with_real_names(request: AdoptRequest, registry: ResourceRegistry) -> AbandonedStack:
    """Heat's stack with the cloud's name of each physical resource that a provider
    template will manage (its default name must come out as the one Heat gave)."""
    abandoned = request.abandoned
    wanted = [(path, entry) for path, entry in abandoned.walk()
              if entry.stack is None and entry.type in NAMED_TYPES
              and _provider_of(entry.type, path, registry) is not None]
    if not wanted:
        return abandoned
    if request.read_name is None:
        listed = ", ".join(f"{'/'.join(path)} ({entry.type})" for path, entry in wanted)
        raise AdoptRefused(
            f"stack {abandoned.name}: the names of {listed} are on the cloud, not in Heat's "
            "abandon data: give cloud (the clouds.yaml entry) to read them", source=request.source)
    try:
        names = {path: request.read_name(entry.type, entry.resource_id) for path, entry in wanted}
    except HotplayError as error:
        raise AdoptRefused(f"stack {abandoned.name} cannot be adopted: {error}",
                           source=request.source) from None
    return abandoned.with_real_names(names)


def _read_only_layer(inputs: LoadedInputs, types: Sequence[str]) -> LoadedInputs:
    """The inputs with one more environment, last, that maps each unmanaged type
    to Hotplay::ReadOnly (the types the given environments map so already need none:
    then applying those files next changes nothing)."""
    missing = [t for t in types if inputs.environment.registry.resolve(t) != READ_ONLY_TYPE]
    if not missing:
        return inputs
    snippet = {"resource_registry": {t: READ_ONLY_TYPE for t in missing}}
    name = READ_ONLY_ENVIRONMENT
    layer = parse_environment(snippet, name)
    text = yaml.safe_dump(snippet, sort_keys=True)
    return LoadedInputs(inputs.source, merge_environments([inputs.environment, layer]), inputs.files,
                        (*inputs.environment_texts, (name, text)))


def refuse_unmanaged(abandoned: AbandonedStack, source: str,
                     registry: ResourceRegistry | None = None) -> None:
    """One refusal naming every resource, at any depth, of a type this collection
    cannot adopt (and so could not manage)."""
    unmanaged = [f"{'/'.join(path)} ({entry.type})" for path, entry in abandoned.walk()
                 if entry.stack is None and not _adoptable(entry.type, path, registry)]
    if unmanaged:
        raise AdoptRefused(
            f"stack {abandoned.name} has resources of types hotplay.stacks cannot adopt: "
            f"{', '.join(unmanaged)}; nothing was written (an environment mapping them to "
            "provider templates adopts them into those; "
            "unmanaged: read_only keeps them as read-only resources)", source=source)


def _adoptable(type_name: str, path: tuple[str, ...] = (),
               registry: ResourceRegistry | None = None) -> bool:
    """A builtin type that can be adopted, or a type the environment maps to a
    provider template (the existing resource is adopted into the template's)."""
    # Heat's groups map their members' type in their nested stacks' environment.
    type_name = GROUP_MEMBER_TYPES.get(type_name, type_name)
    if registry is not None and _provider_of(type_name, path, registry) is not None:
        return True
    cls = resource_class(type_name)
    return cls is not None and cls.adoptable


def _provider_of(type_name: str, path: tuple[str, ...], registry: ResourceRegistry) -> str | None:
    """The provider template file ``registry`` maps the resource at ``path`` to, if any."""
    resolved = registry.resolve(type_name, path)
    if resolved == type_name or resource_class(resolved) is not None:
        return None
    return resolved


def _inputs(request: AdoptRequest) -> tuple[LoadedInputs, dict[str, Any]]:
    """The user's files when given (so that applying them next changes nothing),
    else Heat's template, environment and files; with the read-only layer when
    unmanaged resources are kept read-only."""
    inputs, given = _given_inputs(request)
    if request.unmanaged == "read_only":
        inputs = _read_only_layer(inputs, unmanaged_types(request.abandoned,
                                                          inputs.environment.registry))
    return inputs, given


def _given_inputs(request: AdoptRequest) -> tuple[LoadedInputs, dict[str, Any]]:
    if request.template:
        return (load_inputs(request.template, request.environment, request.file_roots),
                dict(request.parameters))
    abandoned = request.abandoned
    files = dict(abandoned.files)
    source = TemplateSource(f"{request.source}: template", dict(abandoned.template), files)
    # Heat's parameters are recorded as the stack's parameters, as a playbook gives
    # them (``parameters:``): the same values given again next change nothing.
    rest, parameters = heat_environment(abandoned)
    given = {**parameters, **request.parameters}
    if not rest:  # nothing but Heat's empty sections: as a playbook with no environment
        return LoadedInputs(source, EMPTY_ENVIRONMENT, files, ()), given
    name = f"{request.source}: environment"
    text = yaml.safe_dump(rest, sort_keys=True)
    return LoadedInputs(source, parse_environment(rest, name), files, ((name, text),)), given


def heat_environment(abandoned: AbandonedStack) -> tuple[dict[str, Any], dict[str, Any]]:
    """Heat's environment without its ``parameters`` and without the empty sections
    Heat writes in every one (``resource_registry: {resources: {}}``, ``event_sinks:
    []``...); and those parameters."""
    environment = dict(abandoned.environment)
    parameters = environment.pop("parameters", None)
    registry = environment.get("resource_registry")
    if isinstance(registry, Mapping) and set(registry) <= {"resources"} and not registry.get("resources"):
        environment.pop("resource_registry")
    rest = {key: value for key, value in environment.items() if value not in ({}, [], None)}
    return rest, dict(parameters) if isinstance(parameters, Mapping) else {}


def _definition(request: AdoptRequest, inputs: LoadedInputs,
                given: dict[str, Any]) -> tuple[StackDefinition, dict[str, Any]]:
    """The stack's definition, and the parameter values recorded as given."""
    identity = StackIdentity(request.name, request.abandoned.id)
    definition = StackDefinition(inputs.source, inputs.environment, given, identity, inputs.files)
    if not request.template:
        return definition, given
    missing = _heat_values_missing(request, inputs, definition)
    if not missing:
        return definition, given
    # Values the task left out are Heat's: the stack has them.
    given = {**given, **missing}
    return StackDefinition(inputs.source, inputs.environment, given, identity, inputs.files), given


def _heat_values_missing(request: AdoptRequest, inputs: LoadedInputs,
                         definition: StackDefinition) -> dict[str, Any]:
    """The template given must be the one Heat runs, with the same parameter
    values: the records claim the properties the real resources have.  A value that
    differs from Heat's only because the task did not give it (the template's
    default instead) is Heat's: those are returned, as Heat's environment has them."""
    abandoned = request.abandoned
    if dict(inputs.source.data) != dict(abandoned.template):
        raise AdoptRefused(
            f"the template {request.template} is not the one stack {abandoned.name} runs in "
            f"Heat ({request.source}): adopt with Heat's template (leave template out), then "
            "apply yours")
    heat_inputs, heat_given = _inputs(AdoptRequest(request.name, abandoned, request.source,
                                                   unmanaged=request.unmanaged))
    # Heat's template and environment, with the types mapped as the given environment
    # maps them (Heat has OS::Nova::Server itself; here it is a provider template).
    mapped = parse_environment({"resource_registry": inputs.environment.registry.as_dict()},
                               f"{request.source}: the given resource_registry")
    files = {**inputs.files, **heat_inputs.files}
    heat = StackDefinition(TemplateSource(heat_inputs.source.path, heat_inputs.source.data, files),
                           merge_environments([heat_inputs.environment, mapped]), heat_given,
                           StackIdentity(request.name, abandoned.id), files)
    ours, theirs = definition.parameters.values, heat.parameters.values
    differ = sorted(k for k in set(ours) | set(theirs)
                    if ours.get(k) != theirs.get(k) and not k.startswith("OS::"))
    written = _heat_written(abandoned)
    environment = inputs.environment
    refused = [k for k in differ if k in request.parameters or k not in written
               or k in environment.parameters or k in environment.parameter_defaults]
    if refused:
        raise AdoptRefused(
            f"parameters {', '.join(refused)} differ from those stack {abandoned.name} has in Heat "
            f"({request.source}): give the values Heat has")
    return {k: written[k] for k in differ}


def _heat_written(abandoned: AbandonedStack) -> dict[str, Any]:
    """The parameter values Heat's environment holds, as written there (its
    ``parameters`` over its ``parameter_defaults``)."""
    defaults = abandoned.environment.get("parameter_defaults")
    return {**(dict(defaults) if isinstance(defaults, Mapping) else {}),
            **heat_environment(abandoned)[1]}


@contextmanager
def scratch_store(store: SealedStore) -> Iterator[SealedStore]:
    """A throwaway store sealed with the same key (so that the rows copied from it
    open in ``store``)."""
    with scratch_directory(SCRATCH_PREFIX) as directory:
        inner = SqliteStore(os.path.join(directory, "adopt.db"))
        if store.key is not None and store.secrets and isinstance(store.inner, SqlStore):
            # The stack's keyring gets the store's salt, as a stack made there would:
            # the keyed digest of its definition is then the one the next apply makes.
            inner.insert_stored_rows("meta", [{"key": "secrets_salt", "value": store.inner.store_salt()}])
        scratch = sealed(inner, store.key)
        try:
            yield scratch
        finally:
            scratch.close()
