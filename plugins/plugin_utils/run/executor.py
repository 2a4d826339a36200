# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run of one stack (top-level or nested): converge it to a definition, or
delete it.

Each resource is converged when everything it reads is done: its properties are
resolved then, compared with the record, and the resource is created, updated in
place, replaced or left alone.  A replacement creates the new resource first and
keeps the old one recorded (retired) until the whole update has succeeded, then
deletes it: Heat's convergence order, and what a rollback swaps back.  Every state
change is written to the store before the handler acts and after it returns, so a
killed run leaves a store the next run can continue from.
"""

from __future__ import annotations

import datetime
import fnmatch
import secrets
import string
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from ..model.definition import (
    LiveResource,
    ResourceDefinition,
    StackDefinition,
    StackIdentity,
    handler_for,
    resolve_outputs,
)
from ..errors import HotplayError, InvalidAttribute, Paused, ResourceFailure
from .walk import DEFAULT_WORKERS, traverse
from ..language.functions.base import resolve, walk_functions
from ..language.functions.hot import GetAtt
from ..model.graph import reverse
from ..model.update_rules import (
    KEPT_AFTER_LOST_RUN, REPLACED, UPDATED, decide, external_id_change, is_new, left_by_lost_run,
    resolved_extras,
)
from ..resources.base import Outcome, Resource, ResourceState
from ..resources.openstack.session import CloudSession
from ..resources.base import handler_for as resource_handler
from ..resources.runtime import Cancelled, Declared, ScaleStep
from ..language.abandon import AbandonedResource, AbandonedStack
from ..language.environment import Environment
from ..language.template.loader import TemplateSource
from ..resources.properties import validate_properties
from ..secrets import key_missing
from ..store.base import EventRecord, StackRecord, Store, StoredResource, utc_now
from ..store.sealed import SealedStore, sealed

_NAME_CHARS = string.ascii_lowercase + string.digits
_SUFFIX_LENGTH = 12


# What a guarded handler returns (an Outcome, or nothing for a hook).
Handled = TypeVar("Handled")


@dataclass(frozen=True)
class Event:
    """An event as the task reports it (``path`` names nested resources)."""

    record: EventRecord
    path: tuple[str, ...]  # resource names from the top stack to this stack

    @property
    def resource_name(self) -> str:
        return "/".join(self.path + (self.record.resource_name,))


EventSink = Callable[[Event], None]


class Cancel:
    """Stops a run (time-out, interruption): no new resource starts, and handlers
    that wait give up with ``reason``."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reason = ""
        # Told when the run is cancelled: the task stops the work in flight (the
        # modules its resources run), which waiting alone would not.
        self.listeners: list[Callable[[str], None]] = []

    def trigger(self, reason: str) -> None:
        if not self.event.is_set():
            self.reason = reason
            self.event.set()
            for listener in list(self.listeners):
                listener(reason)

    def reset(self) -> None:
        """Ready for the next step (a rollback after a time-out): an interruption
        from now on still stops it."""
        self.reason = ""
        self.event.clear()


@dataclass
class RestoreReport:
    """What a rollback did with the resources it could swap back."""

    restored: list[str] = field(default_factory=list)  # paths swapped back in
    recreated: dict[str, str] = field(default_factory=dict)  # path -> why not swapped
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def note_restored(self, path: str) -> None:
        with self._lock:
            self.restored.append(path)

    def note_recreated(self, path: str, why: str) -> None:
        with self._lock:
            self.recreated[path] = why


@dataclass(frozen=True)
class RunOptions:
    """What every stack of one apply shares, nested ones included."""

    revision: int = 0
    # Resource paths to leave as they are (restricted actions in ``skip`` mode, or
    # resources a rollback accepts as they are).
    skip: frozenset[str] = frozenset()
    cancel: Cancel = field(default_factory=Cancel)
    max_workers: int = DEFAULT_WORKERS
    # Rollbacks swap retired (replaced) resources back in instead of recreating.
    restore: bool = False
    # Heat updates every nested stack of an updated stack; a rolling update's
    # batch passes touch only the batch (their figures are hotplay's batches).
    routine_nested_updates: bool = True
    report: RestoreReport = field(default_factory=RestoreReport)
    # How long a successful update keeps what it replaced (for a later rollback).
    keep_replaced: float = 0
    # Breakpoints given by the task: (resource path pattern, hook) pairs, on top of
    # the environment's ``hooks``.
    breakpoints: tuple[tuple[str, str], ...] = ()
    # Stepping (stack_hook action=step): every resource about to act pauses first.
    stepping: bool = False
    # The play host the task runs for (software deployments run there), if any.
    host: Any = None
    # A preview (check mode, a plan): nothing is stored, so secrets need no key.
    preview: bool = False
    # Adoption: the Heat stack (its abandon data) whose existing resources the
    # run records instead of creating them (operations.adopt); whether another
    # project's resources may be among them (an admin's adoption, asked for).
    adopt: AbandonedStack | None = None
    adopt_other_projects: bool = False
    # The task's warnings from its resources (RuntimeContext.warn), nested stacks' too.
    warnings: list[str] = field(default_factory=list)
    # Heat's converge: resource path -> why it is updated although its definition
    # did not change (its real thing drifted, or something inside it did).
    repairs: Mapping[str, str] = field(default_factory=dict)
    # A scaling signal (operations/scale.py): group path -> the size it gets.
    scale: Mapping[str, ScaleStep] = field(default_factory=dict)
    # The run took the stack's lock over from a run that had not released it (its
    # lease ran out, or its process is gone): what that run left acting is retired.
    taken_over: bool = False
    # An update: each top-level resource's depends_on as the stack's last revision
    # wrote it (Heat compares the written depends_on with the rest of a definition).
    previous_depends_on: Mapping[str, tuple[str, ...]] | None = None
    # The task's cloud (OpenStack types): one session for the whole operation --
    # its preview, drift check, run and rollback -- made by the operation; it
    # connects only when a resource calls it.
    cloud: CloudSession = field(default_factory=CloudSession)


class RunSecrets:
    """``runtime.secrets``: how a resource type keeps a value it learns at run time
    secret (a generated password, a ``no_log`` argument): masked in every output
    from then on, and stored only encrypted.

    Call ``add`` before the value is returned or recorded.  A run without a store
    key cannot store it: ``add`` then raises ``StoreKeyError``, which fails the
    resource with a message that names ``HOTPLAY_STORE_KEY`` (let it propagate).
    Values already among the resolved properties are better declared with
    ``Resource.secret_values``: the engine adds them before it records anything."""

    def __init__(self, store: SealedStore, preview: bool) -> None:
        self._store = store
        self._preview = preview

    def add(self, value: Any) -> None:
        new = self._store.secrets.add(value)
        if new and self._store.key is None and not self._preview:
            raise key_missing("a resource keeps a secret value")

    def mask(self, value: Any) -> Any:
        """``value`` with every known secret shown as ``******``."""
        return self._store.secrets.mask(value)

    def found_in(self, value: Any) -> bool:
        """Whether a secret to keep is anywhere in ``value``."""
        return self._store.secrets.found_in(value)


class RunRuntime:
    """``RuntimeContext`` given to handlers of one stack run."""

    def __init__(self, run: "StackRun") -> None:
        self.run = run
        self.stack_name = run.stack.name
        self.stack_id = run.stack.id
        self.cancel_event = run.options.cancel.event
        self.secrets = RunSecrets(run.store, run.options.preview)

    def physical_name(self, resource_name: str) -> str:
        return f"{self.stack_name}-{resource_name}-{_random_suffix()}"

    def address(self, resource_name: str) -> tuple[str, str]:
        top = self
        while top.run.parent_runtime is not None:
            top = top.run.parent_runtime
        return top.stack_name, self.run.path_of(resource_name)

    def scaled_size(self, resource_name: str) -> ScaleStep | None:
        return self.run.options.scale.get(self.run.path_of(resource_name))

    def sleep(self, seconds: float) -> None:
        if self.cancel_event.wait(seconds if seconds >= 0 else None):
            raise Cancelled(self.run.options.cancel.reason or "the run was cancelled")

    @property
    def preview(self) -> bool:
        """Nothing real may change: in check mode, and in an adoption (it records what
        exists: a module that cannot say in check mode whether it would change the
        thing is not run, and its resource is recorded as the template says)."""
        return self.run.options.preview or self.run.options.adopt is not None

    @property
    def host(self) -> Any:
        """The task's host (resources.software_deployment.HostContext), or None."""
        return self.run.options.host

    @property
    def adopts_other_projects(self) -> bool:
        return self.run.options.adopt_other_projects

    def software_config(self, physical_id: str) -> dict[str, Any] | None:
        """A software config (or component) of this stack by its id, as Heat's API
        shows it; configs of a parent stack are found too."""
        for state in list(self.run.records.values()):
            if state.physical_id == physical_id and "software_config" in state.data:
                return dict(state.data["software_config"])
        parent = self.run.parent_runtime
        return parent.software_config(physical_id) if parent is not None else None

    def config_by_id(self, physical_id: str) -> str | None:
        """The ``config`` of a software config of this stack (MultipartMime parts)."""
        for state in list(self.run.records.values()):
            if state.physical_id == physical_id:
                config = state.data.get("attributes", {}).get("config")
                return config if isinstance(config, str) else None
        return None

    # -- nested stacks (used by resources.nested) -----------------------------------
    @property
    def store(self) -> SealedStore:
        return self.run.store

    def claim_physical_id(self, resource_name: str, physical_id: str) -> None:
        state = self.run.records[resource_name]
        self.run.save(replace(state, physical_id=physical_id))

    def warn(self, message: str) -> None:
        self.run.options.warnings.append(str(self.secrets.mask(message)))

    def note_data(self, resource_name: str, key: str, value: Any) -> None:
        state = self.run.records[resource_name]
        self.run.save(replace(state, data={**state.data, key: value}))

    def withdraw_physical_id(self, resource_name: str, physical_id: str) -> None:
        state = self.run.records[resource_name]
        if state.physical_id == physical_id:
            self.run.save(replace(state, physical_id=""))

    def note_nested_stack(self, resource_name: str, child_id: str) -> None:
        """Record the child stack before it is converged (intent before action):
        a run killed inside it leaves a parent record that points at it."""
        state = self.run.records[resource_name]
        self.run.save(replace(state, nested_stack_id=child_id))

    @property
    def cloud(self) -> CloudSession:
        return self.run.options.cloud

    def check_with_cloud(self, definition: StackDefinition) -> None:
        """Heat's custom constraints that ask the cloud, for every resource of
        ``definition`` whose properties are known before anything runs (the others
        are looked up when they are: Heat's RESOLVE rules).  Reads only: check mode
        runs it too.  Raises StackValidationFailed with Heat's words.

        The session logs in first when the stack has such a type: a cloud that
        refuses the login (an unknown cloud, a wrong password) fails the task as a
        validation error does, before anything of the stack is recorded."""
        checks = [(defn, check) for defn in definition.resources.values()
                  if (check := getattr(handler_for(defn, self), "validate_with_cloud", None)) is not None]
        if checks:
            self.cloud.login()
        for defn, check in checks:
            if defn.known_properties is not None:
                check(defn.known_properties, f"resources.{defn.name}.properties")

    @property
    def files(self) -> Mapping[str, str]:
        # A delete runs with no definition: nothing is read from files then.  A
        # child stack read (not converged) by its parent has the parent's files.
        if self.run.definition is not None:
            return self.run.definition.files
        parent = self.run.parent_runtime
        return parent.files if parent is not None else {}

    def declared(self, resource_name: str) -> Declared | None:
        if self.run.definition is None:
            return None
        definition = self.run.definition.resources.get(resource_name)
        if definition is None:
            return None
        return Declared(type=definition.type, deletion_policy=definition.deletion_policy,
                        metadata=resolve(definition.metadata),
                        update_policy=resolve(definition.update_policy))

    def child(self, stack: StackRecord, resource_name: str,
              adopt: AbandonedStack | None = None) -> "ChildRun":
        run = StackRun(self.run.store, stack, self.run.sink,
                       path=self.run.path + (resource_name,), options=self.run.options)
        run.parent_runtime = self
        run.adopted_here = adopt
        return ChildRun(run, self.run.definition, resource_name)


class ChildRun:
    """``ChildStack``: a nested stack converged by the parent's run, with the
    parent's options; its definition is built here, from the parent's."""

    def __init__(self, run: "StackRun", parent: StackDefinition | None, resource_name: str) -> None:
        self._run = run
        self._parent = parent
        self._resource_name = resource_name

    @property
    def paused(self) -> bool:
        return self._run.paused

    @property
    def runtime(self) -> RunRuntime:
        return self._run.runtime

    def converge(self, template: TemplateSource, parameters: Mapping[str, Any], *,
                 facade: Mapping[str, Any], written_type: str, hold: frozenset[str],
                 action: str, batch_pass: bool = False, registry: Mapping[str, str] | None = None) -> bool:
        definition = self._definition(template, parameters, facade, written_type, registry or {})
        self._run.runtime.check_with_cloud(definition)
        if batch_pass:
            self._run.options = replace(self._run.options, routine_nested_updates=False)
        if hold:
            run = self._run
            run.options = replace(run.options, skip=run.options.skip | {run.path_of(n) for n in hold})
        return self._run.converge(definition, action)

    def delete(self) -> bool:
        return self._run.delete()

    def _definition(self, template: TemplateSource, parameters: Mapping[str, Any],
                    facade: Mapping[str, Any], written_type: str,
                    registry: Mapping[str, str]) -> StackDefinition:
        stack, parent = self._run.stack, self._parent
        if parent is None:  # only a converge builds a child's definition
            raise HotplayError(f"{self._resource_name}: no definition to converge its stack to")
        identity = StackIdentity(
            name=stack.name, id=stack.id, project_id=parent.identity.project_id,
            path=parent.identity.path + (self._resource_name,), facade=dict(facade),
        )
        environment = parent.environment.for_nested(self._resource_name, written_type, registry)
        return StackDefinition(template, environment, dict(parameters), identity, files=parent.files)


class StackRun:
    """Converge or delete one stack."""

    def __init__(
        self,
        store: Store,
        stack: StackRecord,
        sink: EventSink,
        path: tuple[str, ...] = (),
        options: RunOptions | None = None,
    ) -> None:
        self.store = sealed(store)
        self.stack = stack
        self.sink = sink
        self.path = path
        self.options = options or RunOptions()
        self.runtime = RunRuntime(self)
        # What this stack adopts when the adoption's abandon data has no nested stack
        # at its path (a provider template standing for one of Heat's resources).
        self.adopted_here: AbandonedStack | None = None
        self.walk_action = ""  # CREATE, UPDATE: the action of the walk under way
        self._states_lock = threading.Lock()
        self.records: dict[str, ResourceState] = {}
        self.requires: dict[str, tuple[str, ...]] = {}
        self.positions: dict[str, int] = {}
        for stored in store.resources(stack.id):
            self.records[stored.state.name] = stored.state
            self.requires[stored.state.name] = stored.requires
            self.positions[stored.state.name] = stored.position
        # What each resource needed when it was recorded (self.requires becomes the
        # new definition's): Heat compares depends_on with the rest of a definition.
        self.recorded_requires = {name: frozenset(names) for name, names in self.requires.items()}
        self.handlers: dict[str, Resource] = {}
        self.definition: StackDefinition | None = None
        # True when the run stopped at a hook (not failed: waiting for a person).
        self.paused = False
        # For a stack delete: the last revision's environment, which may set hooks.
        self.delete_environment: Environment | None = None
        # The runtime of the parent stack (nested stacks look configs up there).
        self.parent_runtime: RunRuntime | None = None
        # Resources retired by earlier runs and not deleted yet, by name: read once,
        # when the run first creates something (_release_left_retired).
        self._left_retired: dict[str, list[ResourceState]] | None = None

    # -- events and state -----------------------------------------------------------
    def event(self, name: str, action: str, status: str, reason: str, physical_id: str = "") -> None:
        record = self.store.add_event(self.stack.id, name, action, status, reason, physical_id)
        self.sink(Event(record, self.path))

    def stack_event(self, action: str, status: str, reason: str) -> None:
        """A stack-level event.  A nested stack's own events are stored but not
        reported: its parent resource's events already say the same."""
        with self.store.transaction():
            self.store.set_stack_status(self.stack.id, action, status, reason)
            record = self.store.add_event(
                self.stack.id, self.stack.name, action, status, reason, self.stack.id
            )
        if not self.path:
            self.sink(Event(record, self.path))

    def save(self, state: ResourceState, reason: str | None = None, durable: bool = True) -> None:
        """Record a resource's new state, and its event, in one transaction.  Not
        ``durable``: a record of what has happened (a handler returned), whose
        commit may wait for the next durable write (intent, before an action)."""
        with self.store.transaction(durable):
            self.store.save_resource(
                self.stack.id, state, self.requires.get(state.name, ()),
                self.positions.get(state.name, 0),
            )
            if reason is not None:
                self.event(state.name, state.action, state.status, reason, state.physical_id)
        with self._states_lock:
            self.records[state.name] = state

    def live(self, name: str) -> LiveResource | None:
        handler = self.handlers.get(name)
        if handler is None:
            return None
        with self._states_lock:
            return self.records.get(name), handler

    def path_of(self, name: str) -> str:
        return "/".join(self.path + (name,))

    # -- converge ---------------------------------------------------------------------
    def converge(self, definition: StackDefinition, action: str) -> bool:
        """Bring the stack to ``definition``; True when every resource got there."""
        try:
            return self._converge(definition, action)
        finally:
            # Nothing deferred stays uncommitted once the run stops (a run paused
            # at hooks waits, and other processes read and write meanwhile).
            self.store.flush()

    def _converge(self, definition: StackDefinition, action: str) -> bool:
        self.definition = definition
        self.walk_action = action
        definition.scope.live = self.live
        self.keep_hidden_secret(definition)
        if self.options.adopt is not None:
            self._check_adopted_names(definition)
        self._retire_left_in_progress()
        if not (self.stack.action == action and self.stack.status == "IN_PROGRESS"):
            self.stack_event(action, "IN_PROGRESS", f"Stack {action} started")
            if action == "UPDATE":
                self._no_pre_update_for_new(definition)
        graph = definition.requires_graph()
        for name, defn in definition.resources.items():
            self.handlers[name] = handler_for(defn, self.runtime)
            self.requires[name] = tuple(sorted(graph[name]))
            self.positions[name] = defn.position
        result = traverse(
            graph,
            lambda name: self._converge_resource(definition.resources[name]),
            self.options.max_workers,
            self.options.cancel.event,
            self.store.flush,
        )
        self._record_not_started(definition, result.not_started)
        if result.paused and not result.failed and not self.options.cancel.event.is_set():
            self.paused = True  # the stack stays *_IN_PROGRESS until the hooks are cleared
            return False
        ok = result.ok and self._delete_removed(definition) and self._delete_retired()
        # Heat: a stack operation timed out (or interrupted) has failed, even when
        # the resources running then still finished.
        ok = ok and not self.options.cancel.event.is_set()
        if self.paused:
            return False
        self._finish(definition, action, ok, result.errors)
        return ok

    def read_outputs(self, definition: StackDefinition) -> tuple[dict[str, Any], dict[str, str]]:
        """The outputs of the stack as it stands, read again and written nowhere:
        Heat resolves them at every show, so an attribute read live (a server's
        ``show``, its ``console_urls``) says what the thing is now."""
        self.definition = definition
        definition.scope.live = self.live
        for name, defn in definition.resources.items():
            self.handlers[name] = handler_for(defn, self.runtime)
        return resolve_outputs(definition)

    def _retire_left_in_progress(self) -> None:
        """A run whose lock was taken over may still be acting: a module it started
        before it froze can finish now and make the thing it claimed (the claim is
        recorded before acting).  Each resource it left being created under a
        claimed name or id is kept, retired, so this run deletes that thing, and
        the next run deletes it again and only then forgets it (left_by_lost_run).
        A name already retired in this revision (a paused revision resumed) is left
        to the usual replacement: a revision keeps one retired row per name.

        What the lost run recorded of a thing it was making (an id, or data such as a
        server's ports made for it and the unique name it was being made under)
        counts as a claim, also when that run lived on long enough to record its
        create aborted (FAILED, still with no id: its notes are all there is to find
        the thing by).  These are deleted now, before anything is made again: a
        server the lost run made holds the ports, the name or the volume that its
        replacement needs.  So is what an earlier run retired so and did not delete
        (killed in that very delete): a subnet made again beside it overlaps it."""
        making = [name for name, record in self.records.items()
                  if _left_making(record, self.options.taken_over) and not record.nested_stack_id]
        retired = self.store.retired_resources(self.stack.id)
        taken = {stored.state.name for stored in retired if stored.retired_in == self.options.revision}
        left = []
        for name in making:
            if name not in taken:
                self.store.retire_resource(self.stack.id, name, self.options.revision)
                left.append(name)
                with self._states_lock:
                    del self.records[name]
        if left:
            retired = self.store.retired_resources(self.stack.id)
        for stored in retired:
            if (stored.state.name in left and stored.retired_in == self.options.revision) or (
                    stored.retired_in < self.options.revision and left_by_lost_run(stored.state)):
                self._delete_retired_one(stored)  # a failure is its event; the end of the run tries again

    # -- secrets -------------------------------------------------------------------------
    def keep_hidden_secret(self, definition: StackDefinition) -> None:
        """The values of the definition's hidden parameters are secrets (a nested
        stack's too): without a key, a run stops here, before it records them."""
        for value in definition.parameters.secret_values().values():
            self.runtime.secrets.add(value)
        for value in definition.parameters.hidden_defaults().values():
            self.store.shown_only.add(value)

    def preview_child(self, stack: StackRecord, resource_name: str,
                      definition: StackDefinition) -> "StackRun":
        """model.plan.PlanContext: a nested stack previewed with this run's options."""
        run = StackRun(self.store, stack, lambda event: None,
                       path=self.path + (resource_name,), options=self.options)
        run.parent_runtime = self.runtime
        run.definition = definition
        run.keep_hidden_secret(definition)
        return run

    def keep_secret_properties(self, handler: Resource, properties: Mapping[str, Any]) -> None:
        """What the resource type says is secret among its resolved properties."""
        for value in handler.secret_values(properties):
            self.runtime.secrets.add(value)
        # Arguments a module's own spec marks no_log: sealed when the store has a
        # key, else stored as given (a key is not demanded for every copy content),
        # and masked in everything shown either way.
        declared_by_module = getattr(handler, "module_secret_values", None)
        if declared_by_module is not None:
            keeping = self.runtime.secrets if self.store.key is not None else self.store.shown_only
            for value in declared_by_module(properties):
                keeping.add(value)

    def _record_not_started(self, definition: StackDefinition, names: list[str]) -> None:
        """Resources a failure kept from starting are listed as Heat lists them:
        INIT_COMPLETE (nothing exists for them)."""
        with self.store.transaction(durable=False):
            for name in names:
                if name not in self.records:
                    self.save(self._new_state(definition.resources[name], "INIT", "COMPLETE"),
                              durable=False)

    def _finish(
        self, definition: StackDefinition, action: str, ok: bool, errors: Mapping[str, BaseException]
    ) -> None:
        outputs, output_errors = resolve_outputs(definition)
        self.store.set_stack_outputs(self.stack.id, outputs, output_errors)
        if ok:
            self.stack_event(action, "COMPLETE", f"Stack {action} completed successfully")
            return
        self.stack_event(action, "FAILED", self._failure_reason(errors))

    def _failure_reason(self, errors: Mapping[Any, BaseException]) -> str:
        cancel = self.options.cancel
        if cancel.event.is_set():
            return cancel.reason
        failure = next(iter(errors.values()), None)
        if isinstance(failure, _Failed):
            return failure.reason if failure.bare else f"Resource {failure.action} failed: {failure.reason}"
        if isinstance(failure, HotplayError):  # e.g. a secret and no store key to keep it
            return f"{type(failure).__name__}: {failure}"
        if failure is not None:  # a defect of ours: say what it was, keep the state
            return f"Internal error: {type(failure).__name__}: {failure}"
        return "Stack was interrupted before every resource was done"

    def _converge_resource(self, defn: ResourceDefinition) -> None:
        handler = self.handlers[defn.name]
        record = self.records.get(defn.name)
        refused = external_id_change(defn, record)
        if refused is not None:
            raise self._refuse_update(f"NotSupported: resources.{defn.name}: {refused}")
        if defn.external_id is not None:
            self._adopt(defn, record)
            return
        new = record is None or is_new(record)
        if new and self.options.adopt is None and self.path_of(defn.name) not in self.options.skip:
            # Heat stops at pre-create before it resolves the properties (a
            # function that fails there fails the stack once the hook is cleared),
            # but after it has read the attributes they need.
            self._read_needed_attributes(defn)
            self._hook_point(defn, record, "create", "pre")
        properties = self._resolved_properties(defn, handler)
        if self.options.adopt is not None and new:
            self._adopt_existing(defn, handler, properties)
            return
        if self.path_of(defn.name) in self.options.skip:
            self._accept(record)  # restricted (skip mode), or accepted by a rollback
            return
        if self.options.restore and self._swap_back(defn, handler, record, properties):
            return
        if record is None or is_new(record):  # new, spelled out for the type checker
            self._create(defn, handler, properties)
            self._hook_point(defn, self.records.get(defn.name), "create", "post")
            return
        if record.action == "CREATE" and record.status == "IN_PROGRESS" and record.nested_stack_id:
            self._resume_create(defn, handler, properties, record)  # a nested stack that paused
            return
        change = self._change_needed(defn, handler, record, properties) or self._nested_update(
            handler, record)
        if change is None:
            if self.walk_action == "UPDATE":
                # Heat stops at a pre-update hook of every resource an update walks,
                # also one it then leaves as it is (a rolling node-by-node update).
                self._hook_point(defn, record, "update", "pre", walked_only=True)
            self._still_held(defn.name)  # a resumed run: a post-hook not cleared yet
            return
        if change in defn.restricted_actions:
            raise self._restricted(defn, record, change)
        self._hook_point(defn, record, "update", "pre")
        if change == "replace":
            if record.status == "COMPLETE" and record.implementation == defn.implementation:
                # Heat finds that a property change needs a replacement while it
                # updates (its update ends, and says so, before the new one starts).
                self.event(defn.name, "UPDATE", "IN_PROGRESS", "state changed", record.physical_id)
                self.event(defn.name, "UPDATE", "COMPLETE",
                           f"The Resource {defn.name} requires replacement.", record.physical_id)
            self._replace(defn, handler, properties, record)
        else:
            self._update(defn, handler, properties, record)
        self._hook_point(defn, self.records.get(defn.name), "update", "post")

    def _resume_create(self, defn: ResourceDefinition, handler: Resource,
                       properties: dict[str, Any], record: ResourceState) -> None:
        """Carry on creating a nested stack a hook (or a kill) stopped midway."""
        try:
            outcome = self._guard(lambda: handler.handle_update(record, properties), defn.name, "CREATE")
        except _Failed as failure:
            self.save(replace(record, status="FAILED", status_reason=failure.reason), failure.reason,
                      durable=False)
            raise
        self._complete(replace(record, properties=properties), outcome)
        self._hook_point(defn, self.records.get(defn.name), "create", "post")

    # -- hooks (breakpoints) ---------------------------------------------------------
    def hooks_of(self, name: str, declared: frozenset[str]) -> frozenset[str]:
        """The hooks set on a resource: the environment's and the task's."""
        path = self.path_of(name)
        given = {hook for pattern, hook in self.options.breakpoints
                 if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(name, pattern)}
        return frozenset(declared) | given

    def _heat_stops(self, verb: str) -> bool:
        """Heat stops at create hooks only while the stack itself is created, and
        at delete hooks only while it is deleted (Resource.create and delete test
        the stack's action): a resource or group member an update adds, or one it
        removes, goes without stopping, while a provider the update adds creates
        its nested stack, whose resources stop there.  Update hooks, in any walk."""
        return verb == "update" or self.walk_action == verb.upper()

    def _no_pre_update_for_new(self, definition: StackDefinition) -> None:
        """A resource this update creates has no pre-update hook (Heat creates it
        without stopping): cleared before the walk, so that a run resumed after another
        hook does not take it, made by then, for one the update leaves alone."""
        for name, defn in definition.resources.items():
            record = self.records.get(name)
            if (record is None or is_new(record)) and "pre-update" in self.hooks_of(name, defn.hooks):
                self.store.set_hook(self.stack.id, name, "pre-update", self.options.revision, "CLEARED")

    def _hook_point(self, defn: ResourceDefinition | None, record: ResourceState | None,
                    verb: str, when: str, name: str = "", walked_only: bool = False) -> None:
        """Pause before or after an action when a hook is set there and Heat
        would stop (``_heat_stops``; Heat's semantics: the resource keeps its
        status, what depends on it waits).  Stepping, a mode of ours, stops before
        every action.  ``walked_only``: the resource is left as it is, so stepping
        does not stop."""
        name = name or (defn.name if defn else "")
        hook = f"{when}-{verb}"
        declared = defn.hooks if defn else self._declared_hooks(name)
        stepped = self.options.stepping and when == "pre" and not walked_only
        held = self._heat_stops(verb) and hook in self.hooks_of(name, declared)
        if self.options.restore or not (held or stepped):
            return
        status = self.store.hook_status(self.stack.id, name, hook, self.options.revision)
        if status == "CLEARED":
            return
        if status is None:
            if record is None and defn is not None:  # listed as Heat lists it: INIT_COMPLETE
                record = self._new_state(defn, "INIT", "COMPLETE")
                self.save(record)
            action, state = (record.action, record.status) if record else ("INIT", "COMPLETE")
            with self.store.transaction():
                self.store.set_hook(self.stack.id, name, hook, self.options.revision, "PENDING")
                self.event(name, action, state, f"{verb.upper()} paused until Hook {hook} is cleared",
                           record.physical_id if record else "")
        raise Paused(f"{self.path_of(name)}: {hook}")

    def _still_held(self, name: str) -> None:
        for hook in ("post-create", "post-update"):
            if self.store.hook_status(self.stack.id, name, hook, self.options.revision) == "PENDING":
                raise Paused(f"{self.path_of(name)}: {hook}")

    def _accept(self, record: ResourceState | None) -> None:
        """A rollback's ``skip``: a failed resource is accepted as it is
        (CloudFormation's ResourcesToSkip); others are just left alone."""
        if self.options.restore and record is not None and record.status != "COMPLETE":
            self.save(replace(record, action="ROLLBACK", status="COMPLETE",
                              status_reason="accepted as it is (skip)"),
                      "accepted as it is (skip)")

    def _swap_back(self, defn: ResourceDefinition, handler: Resource,
                   record: ResourceState | None, properties: dict[str, Any]) -> bool:
        """A rollback: put back the retired resource the target definition had,
        when it still exists and is healthy.  The live one is retired in its
        place (and deleted once the rollback succeeded)."""
        if record is not None and record.status == "COMPLETE" and self._change_needed(
                defn, handler, record, properties) is None:
            return False  # the live one already is what the target needs
        path = self.path_of(defn.name)
        for stored in self._retired_candidates(defn, properties):
            old = stored.state
            if not handler.check_healthy(old):
                self.options.report.note_recreated(
                    path, f"the resource replaced in revision {stored.retired_in} "
                          f"({old.physical_id}) is gone or changed")
                continue
            self.event(defn.name, "ROLLBACK", "IN_PROGRESS",
                       f"swapping back {old.physical_id}, replaced in revision {stored.retired_in}",
                       old.physical_id)
            self.store.restore_resource(self.stack.id, defn.name, stored.retired_in,
                                        self.options.revision, _later(self.options.keep_replaced))
            restored = replace(old, action="ROLLBACK", status="COMPLETE",
                               status_reason="state changed")
            self.save(restored, "state changed")
            # Heat's: what the replacement took goes back.
            self._guard(lambda: handler.restore_prev_rsrc(old, record), defn.name, "ROLLBACK")
            self.options.report.note_restored(path)
            return True
        return False

    def _retired_candidates(self, defn: ResourceDefinition, properties: dict[str, Any]) -> list[StoredResource]:
        """Retired resources of this name that are what ``defn`` needs, newest first.
        Empty when this run retired one of the name that a stopped run left acting:
        swapping back would retire over that record (one per name and revision)."""
        retired = self.store.retired_resources(self.stack.id)
        if any(stored.state.name == defn.name and stored.retired_in == self.options.revision
               and left_by_lost_run(stored.state) for stored in retired):
            return []
        found = [stored for stored in retired
                 if stored.state.name == defn.name
                 and stored.state.implementation == defn.implementation
                 and stored.state.status == "COMPLETE" and not left_by_lost_run(stored.state)
                 and dict(stored.state.properties) == properties]
        return sorted(found, key=lambda stored: -stored.retired_in)

    def _change_needed(self, defn: ResourceDefinition, handler: Resource, record: ResourceState,
                       properties: dict[str, Any]) -> str | None:
        """``replace``, ``update`` or None, by Heat's rules (model.update_rules)."""
        action = decide(self.store, defn, handler, record, properties,
                        repair=self.options.repairs.get(self.path_of(defn.name)),
                        requires_changed=self.requires_changed(defn, self.requires)).action
        return {REPLACED: "replace", UPDATED: "update"}.get(action)

    def requires_changed(self, defn: ResourceDefinition, resources: Mapping[str, Any]) -> bool:
        """Whether ``defn``'s depends_on differs from the last revision's (in a nested
        stack: whether the resources it needs, of ``resources``, the enabled ones,
        differ from those recorded with it): Heat's definitions differ, so it updates
        the resource."""
        written = self.options.previous_depends_on
        if written is not None and not self.path:
            return defn.name in written and written[defn.name] != defn.written_depends_on
        # A nested stack: what the resource needed as recorded (depends_on and reads).
        recorded = self.recorded_requires.get(defn.name)
        return recorded is not None and recorded != frozenset(n for n in defn.requires if n in resources)

    def _nested_update(self, handler: Resource, record: ResourceState) -> str | None:
        """Heat's StackResource ``_needs_update`` is always true: an update of the
        stack updates every nested stack (UPDATE_COMPLETE), whose members then
        decide for themselves; a provider template's changed body reaches them so."""
        nested = getattr(handler, "is_nested_stack", False) and record.nested_stack_id
        # Only in an update: a create resumed after its hooks leaves what it made.
        routine = (self.options.routine_nested_updates and not self.options.restore
                   and self.walk_action == "UPDATE")
        return "update" if nested and routine and record.status == "COMPLETE" else None

    @staticmethod
    def _read_needed_attributes(defn: ResourceDefinition) -> None:
        """Heat stores the attributes a resource reads with the resource that has
        them, as that one completes: one that fails to read (a provider's broken
        output) fails the stack there, before the reader reaches its hooks."""
        try:
            _read_attributes(defn.properties)
        except _Unresolved as error:
            raise _Failed(str(error), "CREATE", bare=True) from error

    def _resolved_properties(self, defn: ResourceDefinition, handler: Resource) -> dict[str, Any]:
        path = f"resources.{defn.name}.properties"
        try:
            checked = self._checked_properties(defn, handler, path)
            self.keep_secret_properties(handler, checked)  # before anything records them
            return checked
        except (InvalidAttribute, _Unresolved) as error:
            # Heat computes what a resource reads before touching it (create:
            # _update_stored_properties; update: the frozen definition): a function
            # that fails there fails the stack with its bare message, and the
            # resource keeps its status (INIT_COMPLETE when it was to be created).
            message = error.message if isinstance(error, InvalidAttribute) else str(error)
            raise _Failed(message, "CREATE", bare=True) from error
        except HotplayError as error:
            record = self.records.get(defn.name)
            # A failed resource Heat replaces: what fails is its replacement's CREATE.
            recreated = record is None or is_new(record) or (
                record.status == "FAILED" and handler.needs_replace_failed(record))
            raise self._fail(defn, "CREATE" if recreated else "UPDATE", record, error,
                             self._as_written(defn, handler)) from error

    @staticmethod
    def _checked_properties(defn: ResourceDefinition, handler: Resource, path: str) -> dict[str, Any]:
        if defn.known_properties is not None:
            return dict(defn.known_properties)  # validated with the definition
        if getattr(handler, "accepts_any_properties", False):
            # OS::Heat::None: never resolved, as in Heat; but Heat gathers the
            # attributes a resource reads before it acts, whatever its type, and
            # one that fails (a group's missing member) fails the stack.
            _read_attributes(defn.properties)
            return {}
        try:
            values = resolve(defn.properties)
        except InvalidAttribute:
            raise
        except HotplayError as error:
            raise _Unresolved(str(error)) from error
        check = getattr(handler, "check_properties", None)
        if check is not None:
            checked_by_type: dict[str, Any] = check(values, path)
            return checked_by_type
        checked = validate_properties(type(handler), values, path)
        handler.validate(checked)
        return checked

    @staticmethod
    def _as_written(defn: ResourceDefinition, handler: Resource) -> dict[str, Any] | None:
        """The properties a type keeps as written (``kept_as_written``), resolved,
        for the record of a resource that failed on them: an OS::Heat::Value whose
        create failed on its type still gives its value in Heat."""
        kept = getattr(handler, "kept_as_written", ())
        try:
            return {k: resolve(v) for k, v in (defn.properties or {}).items() if k in kept} or None
        except HotplayError:
            return None

    def _new_state(self, defn: ResourceDefinition, action: str, status: str) -> ResourceState:
        metadata, update_policy = resolved_extras(defn)
        return ResourceState(
            name=defn.name, type=defn.type, action=action, status=status,
            deletion_policy=defn.deletion_policy, implementation=defn.implementation,
            metadata=metadata, update_policy=update_policy,
        )

    def _create(self, defn: ResourceDefinition, handler: Resource, properties: dict[str, Any]) -> None:
        live = self.records.get(defn.name)
        if live is None or live.status != "COMPLETE":
            # A name with no working resource: what a killed run retired may still
            # hold what this one takes.  (A replacement of a working one prepares
            # that one; those kept for a rollback were prepared when replaced.)
            self._release_left_retired(defn, handler)
        state = replace(self._new_state(defn, "CREATE", "IN_PROGRESS"), properties=properties)
        self.save(state, "state changed")
        try:
            outcome = self._guard(lambda: handler.handle_create(properties), defn.name, "CREATE")
        except _Failed as failure:
            # What the create claimed before it failed (a server in ERROR, a group's
            # nested stack) stays recorded, as Heat keeps it: the stack's delete then
            # deletes it, nothing is orphaned.
            state = self._with_claims(state, defn.name)
            self.save(self._failed(state, failure.reason), failure.reason, durable=False)
            raise
        self._complete(state, outcome)

    def _with_claims(self, state: ResourceState, name: str) -> ResourceState:
        """``state`` with what the action recorded as it went and that must not be lost
        when it fails: the claimed id, the nested stack, the data it noted (a server's
        ports made for it)."""
        claimed = self.records.get(name)
        if claimed is None:
            return state
        return replace(state, physical_id=claimed.physical_id or state.physical_id,
                       nested_stack_id=claimed.nested_stack_id or state.nested_stack_id,
                       data={**state.data, **claimed.data})

    def _update(
        self, defn: ResourceDefinition, handler: Resource, properties: dict[str, Any],
        record: ResourceState,
    ) -> None:
        fresh = self._new_state(defn, "UPDATE", "IN_PROGRESS")
        state = replace(record, action="UPDATE", status="IN_PROGRESS", status_reason="",
                        type=defn.type,  # a renamed alias of the same type
                        implementation=defn.implementation,  # or another provider template
                        deletion_policy=defn.deletion_policy, metadata=fresh.metadata,
                        update_policy=fresh.update_policy)
        self.save(state, "state changed")
        try:
            outcome = self._guard(
                lambda: handler.handle_update(record, properties), defn.name, "UPDATE"
            )
        except _Failed as failure:
            state = self._with_claims(state, defn.name)
            self.save(self._failed(state, failure.reason), failure.reason, durable=False)
            raise
        self._complete(replace(state, properties=properties), outcome)

    def _failed(self, state: ResourceState, reason: str) -> ResourceState:
        """The state of a resource that failed; without a store key, a value that
        became a secret during the action (a nested stack's hidden parameter) is
        not recorded (the resource is replaced or converged again next time)."""
        failed = replace(state, status="FAILED", status_reason=reason)
        if not self.store.can_store(failed):
            failed = replace(failed, properties={}, data={})
        return failed

    def _replace(
        self, defn: ResourceDefinition, handler: Resource, properties: dict[str, Any],
        record: ResourceState,
    ) -> None:
        """Create the new resource; the old one is retired (kept in the store) and
        deleted once the whole update has succeeded (Heat's convergence order)."""
        retired = bool(record.physical_id or record.nested_stack_id)
        if retired:
            keep = _later(self.options.keep_replaced)
            self.store.retire_resource(self.stack.id, defn.name, self.options.revision, keep)
            self._prepare_for_replace(defn, handler, record)
        self._create(defn, handler, properties)
        if not retired:
            # Nothing was made (a failed create): Heat deletes its row all the same.
            self.event(defn.name, "DELETE", "IN_PROGRESS", "state changed")
            self.event(defn.name, "DELETE", "COMPLETE", "state changed")

    def _release_left_retired(self, defn: ResourceDefinition, handler: Resource) -> None:
        """Heat's ``prepare_for_replace`` of what an earlier run retired and did not
        delete yet: a run killed between retiring a resource and making its
        replacement (or while making it) leaves the old one holding what the
        replacement takes (a server's pre-made port: "Port ... is still in use").
        Letting go again of what was let go of already changes nothing."""
        with self._states_lock:
            if self._left_retired is None:
                self._left_retired = {}
                for stored in self.store.retired_resources(self.stack.id):
                    old = stored.state
                    if stored.retired_in < self.options.revision and old.physical_id \
                            and (old.action, old.status) != ("DELETE", "COMPLETE"):
                        self._left_retired.setdefault(old.name, []).append(old)
            left = list(self._left_retired.get(defn.name, ()))
        for old in left:
            self._prepare_for_replace(defn, handler, old)

    def _prepare_for_replace(self, defn: ResourceDefinition, handler: Resource,
                             record: ResourceState) -> None:
        """Heat's ``prepare_for_replace``: the old resource lets go of what its
        replacement takes (a server's pre-made ports, a key pair's name).  A failure
        is the replacement's CREATE failure."""
        if not record.physical_id:
            return
        try:
            self._guard(lambda: handler.prepare_for_replace(record), defn.name, "CREATE")
        except _Failed as failure:
            state = replace(self._new_state(defn, "CREATE", "FAILED"), properties=record.properties,
                            status_reason=failure.reason)
            self.save(state, failure.reason, durable=False)
            raise

    def _adopt(self, defn: ResourceDefinition, record: ResourceState | None) -> None:
        """``external_id``: record the existing resource; never create or delete it."""
        external = str(resolve(defn.external_id))
        if record is not None and record.physical_id == external and record.status == "COMPLETE":
            return
        state = replace(self._new_state(defn, "CREATE", "COMPLETE"),
                        physical_id=external, deletion_policy="Retain", status_reason="state changed",
                        data={"external_id": external})
        self.save(state, "state changed")

    # -- adoption (a stack that exists in Heat) -------------------------------------------
    def _abandoned_stack(self) -> AbandonedStack | None:
        if self.adopted_here is not None:
            return self.adopted_here
        adopt = self.options.adopt
        return adopt.nested(self.path) if adopt is not None else None

    def _check_adopted_names(self, definition: StackDefinition) -> None:
        """The definition and Heat's stack must have the same resources: each one
        Heat has is adopted, and none is created."""
        abandoned = self._abandoned_stack()
        known = set(abandoned.resources) if abandoned is not None else set()
        declared = set(definition.resources)
        if abandoned is not None and abandoned.made_up:
            known &= declared  # every resource the template may have, conditions aside
        if known == declared:
            return
        where = f"the nested stack {'/'.join(self.path)}" if self.path else "the stack"
        parts = []
        if declared - known:
            parts.append(f"not in Heat's stack: {', '.join(sorted(declared - known))}")
        if known - declared:
            parts.append(f"in Heat's stack only: {', '.join(sorted(known - declared))}")
        raise HotplayError(f"{where} does not have the resources Heat's has ({'; '.join(parts)})")

    def _adopt_existing(self, defn: ResourceDefinition, handler: Resource,
                        properties: dict[str, Any]) -> None:
        """Record the resource Heat has, with its physical id and resource data,
        as Heat's adopt does; nothing is created."""
        abandoned = self._abandoned_stack()
        adopted = abandoned.resources[defn.name] if abandoned is not None else None
        state = replace(self._new_state(defn, "ADOPT", "IN_PROGRESS"), properties=properties)
        self.save(state, "state changed")
        try:
            outcome = self._guard(lambda: _adopted(handler, defn, properties, adopted),
                                  defn.name, "ADOPT")
        except _Failed as failure:
            self.save(self._failed(state, failure.reason), failure.reason, durable=False)
            raise
        self._complete(state, outcome)

    def _complete(self, state: ResourceState, outcome: Outcome) -> None:
        done = replace(
            state, status="COMPLETE", status_reason="state changed",
            physical_id=outcome.physical_id, data=dict(outcome.data),
            nested_stack_id=outcome.data.get("nested_stack_id", state.nested_stack_id),
        )
        self.save(done, "state changed", durable=False)

    @staticmethod
    def _guard(call: Callable[[], Handled], name: str, action: str) -> Handled:
        """Run a handler; turn its failure into Heat's status reason."""
        try:
            return call()
        except Paused:
            raise  # a nested stack stopped at a hook: not a failure
        except ResourceFailure as error:
            reason = f"{error.error_type}: resources.{name}: {error.message}"
        except Cancelled as error:
            reason = f"{action} aborted ({error})"
        except HotplayError as error:
            reason = f"{type(error).__name__}: resources.{name}: {error}"
        except Exception as error:  # noqa: BLE001 - a handler bug must not lose the state
            reason = f"{type(error).__name__}: resources.{name}: {error}"
        raise _Failed(reason, action)

    def _fail(self, defn: ResourceDefinition, action: str, record: ResourceState | None,
              error: HotplayError, as_written: Mapping[str, Any] | None = None) -> "_Failed":
        """Record a failure found before the handler ran (a property error)."""
        reason = f"{type(error).__name__}: resources.{defn.name}: {error}"
        state = record or replace(self._new_state(defn, action, "FAILED"), properties=as_written or {})
        self.save(replace(state, action=action, status="FAILED", status_reason=reason), reason)
        return _Failed(reason, action)

    @staticmethod
    def _refuse_update(reason: str) -> "_Failed":
        """An update Heat refuses before acting (NotSupported): the stack fails with
        the reason; the resource keeps its status and gets no event (Heat 27.0.1
        leaves it e.g. CREATE_COMPLETE)."""
        return _Failed(reason, "UPDATE")

    def _restricted(self, defn: ResourceDefinition, record: ResourceState, change: str) -> "_Failed":
        """Heat's refusal of a restricted action, as its event and reason."""
        reason = f"ResourceActionRestricted: resources.{defn.name}: {change} is restricted for resource."
        self.event(defn.name, "UPDATE", "FAILED", reason, record.physical_id)
        return _Failed(reason, "UPDATE")

    # -- delete -------------------------------------------------------------------------
    def _delete_removed(self, definition: StackDefinition) -> bool:
        """Delete the recorded resources the definition no longer has."""
        removed = {n: set(r) for n, r in self.requires.items()
                   if n in self.records and n not in definition.resources}
        if not removed:
            return True
        return self._delete_resources(removed)

    def _delete_retired(self, everything: bool = False) -> bool:
        """After a successful update: delete what replacements retired, except
        what ``keep_replaced`` keeps for a while (``everything``: a stack delete)."""
        now = utc_now()
        retired = [r for r in self.store.retired_resources(self.stack.id)
                   if everything or ((not r.keep_until or r.keep_until <= now)
                                     and not self._kept_by_this_run(r))]
        for stored in sorted(retired, key=lambda r: -r.position):
            if not self._delete_retired_one(stored, everything):
                return False
        return True

    def _kept_by_this_run(self, stored: StoredResource) -> bool:
        """What a lost run left being made, deleted once by this run when it took the
        stack over: the next run deletes it again (the lost run may still finish it)."""
        return stored.retired_in == self.options.revision \
            and stored.state.status_reason == KEPT_AFTER_LOST_RUN

    def _delete_retired_one(self, stored: StoredResource, everything: bool = False) -> bool:
        old = stored.state
        handler = handler_for_record(old, self.runtime)
        # A resource recreated as the same physical resource (a fixed name or
        # path) is live again: only the stale record goes.
        in_use = any(handler.same_physical(old, s) for s in list(self.records.values()))
        self.event(old.name, "DELETE", "IN_PROGRESS", "state changed", old.physical_id)
        deleting = old.deletion_policy != "Retain" and not in_use
        try:
            if deleting:
                self._delete_physical(old, handler)
        except _Failed as failure:
            self.event(old.name, "DELETE", "FAILED", failure.reason, old.physical_id)
            return False
        with self.store.transaction(durable=False):
            self.event(old.name, "DELETE", "COMPLETE", "state changed", old.physical_id)
            if deleting and old.status == "IN_PROGRESS" and not everything:
                # Left acting by a run that stopped: it may still make the thing
                # late.  The record stays, deleted, for the next run to delete again.
                kept = replace(old, action="DELETE", status="COMPLETE", status_reason=KEPT_AFTER_LOST_RUN)
                self.store.save_resource(self.stack.id, kept, stored.requires, stored.position,
                                         stored.retired_in)
            else:
                self.store.delete_resource(self.stack.id, old.name, stored.retired_in)
        return True

    def delete(self) -> bool:
        """Delete every recorded resource, dependants first; True when all went."""
        self.walk_action = "DELETE"
        if not (self.stack.action == "DELETE" and self.stack.status == "IN_PROGRESS"):
            self.stack_event("DELETE", "IN_PROGRESS", "Stack DELETE started")
        # As Heat deletes the backup stack first: what replacements retired (or a
        # killed run left being made) holds what the stack's own resources are (a
        # server on a port).  What could not go yet is tried again after them.
        retired_gone = self._delete_retired(everything=True)
        ok = self._delete_resources({n: set(self.requires.get(n, ())) for n in self.records})
        if self.paused:
            return False
        ok = ok and (retired_gone or self._delete_retired(everything=True))
        if ok:
            self.stack_event("DELETE", "COMPLETE", "Stack DELETE completed successfully")
        else:
            failed = [s for s in self.records.values() if s.status == "FAILED"]
            reason = failed[0].status_reason if failed else self._failure_reason({})
            self.stack_event("DELETE", "FAILED", f"Resource DELETE failed: {reason}")
        return ok

    def rollback_create(self) -> bool:
        """Heat's rollback of a failed create: delete everything it made."""
        self.stack_event("ROLLBACK", "IN_PROGRESS", "Stack ROLLBACK started")
        ok = self._delete_resources({n: set(self.requires.get(n, ())) for n in self.records})
        ok = ok and self._delete_retired(everything=True)
        if ok:
            self.stack_event("ROLLBACK", "COMPLETE", "Stack ROLLBACK completed successfully")
        else:
            self.stack_event("ROLLBACK", "FAILED", self._failure_reason({}))
        return ok

    def _delete_resources(self, requires: Mapping[str, set[str]]) -> bool:
        graph = {n: {r for r in needs if r in requires} for n, needs in requires.items()}
        result = traverse(reverse(graph), self._delete_resource, self.options.max_workers,
                          self.options.cancel.event, self.store.flush)
        if result.paused and not result.failed:
            self.paused = True
        return result.ok

    def _delete_resource(self, name: str) -> None:
        record = self.records[name]
        declared = self._declared_hooks(name)
        if not (record.action == "DELETE" and record.status == "COMPLETE"):
            self._hook_point(None, record, "delete", "pre", name=name)
            handler = self.handlers.get(name) or handler_for_record(record, self.runtime)
            state = replace(record, action="DELETE", status="IN_PROGRESS", status_reason="")
            self.save(state, "state changed")
            if record.deletion_policy != "Retain":
                try:
                    self._delete_physical(record, handler)
                except _Failed as failure:
                    self.save(replace(state, status="FAILED", status_reason=failure.reason),
                              failure.reason, durable=False)
                    raise
            record = replace(state, status="COMPLETE", status_reason="state changed")
            self.save(record, "state changed", durable=False)
        # A post-delete hook keeps the (deleted) record until it is cleared.
        if "post-delete" in self.hooks_of(name, declared) and not self.options.restore:
            self._hook_point(None, record, "delete", "post", name=name)
        with self.store.transaction(durable=False):
            self.store.delete_resource(self.stack.id, name)
        with self._states_lock:
            self.records.pop(name, None)

    def _declared_hooks(self, name: str) -> frozenset[str]:
        """The environment's hooks for a resource being deleted (from the
        definition when there is one, else from the last revision's registry)."""
        definition = self.definition
        if definition is not None and name in definition.resources:
            return definition.resources[name].hooks
        environment = definition.environment if definition is not None else self.delete_environment
        return environment.registry.hooks((name,)) if environment is not None else frozenset()

    def _delete_physical(self, record: ResourceState, handler: Resource) -> None:
        if record.action == "INIT":
            return
        self._guard(lambda: _deleted(handler, record), record.name, "DELETE")


def _random_suffix() -> str:
    """12 characters of ``[a-z0-9]``, uniformly drawn: one draw of the system's
    randomness for all of them (a draw per character is costly in a wide stack)."""
    number = secrets.randbelow(len(_NAME_CHARS) ** _SUFFIX_LENGTH)
    characters = []
    for _position in range(_SUFFIX_LENGTH):
        number, digit = divmod(number, len(_NAME_CHARS))
        characters.append(_NAME_CHARS[digit])
    return "".join(characters)


def _later(seconds: float) -> str:
    """The Heat-format time ``seconds`` from now ("" for none)."""
    if seconds <= 0:
        return ""
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _left_making(record: ResourceState, taken_over: bool) -> bool:
    """A create left with claims: in progress with an id or notes (by a run whose
    lock this one took over), or failed with notes and no id (a create aborted while
    the cloud was answering, by a run that lived to record it and let go of its lock)."""
    if record.action != "CREATE":
        return False
    if record.status == "IN_PROGRESS":
        return taken_over and bool(record.physical_id or record.data)
    return record.status == "FAILED" and not record.physical_id and bool(record.data)


def handler_for_record(record: ResourceState, runtime: RunRuntime) -> Resource:
    """The handler of a recorded resource, when no definition is at hand."""
    return resource_handler(record.name, record.implementation or record.type, runtime)


class _Unresolved(Exception):
    """A function in a resource's properties failed as the resource was reached."""


class _Failed(Exception):
    """A resource failed: Heat's status reason and the action that failed."""

    def __init__(self, reason: str, action: str, bare: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.action = action
        self.bare = bare  # the stack's reason is the message alone


def _adopted(handler: Resource, defn: ResourceDefinition, properties: dict[str, Any],
             adopted: AbandonedResource | None) -> Outcome:
    """A handler's adoption, for the types that can be adopted."""
    if adopted is None:
        raise ResourceFailure("Heat's abandon data has no such resource")
    if not handler.adoptable:
        raise ResourceFailure(f"a {defn.type} cannot be adopted (hotplay.stacks cannot manage "
                              "an existing one)")
    return handler.handle_adopt(properties, adopted)


def _deleted(handler: Resource, record: ResourceState) -> Outcome:
    """A delete as ``_guard`` runs handlers: it leaves no physical id."""
    handler.handle_delete(record)
    return Outcome("")


def _read_attributes(snippet: Any) -> None:
    """Resolve every ``get_attr`` of a snippet, for its errors only.  Heat's node
    data skips an attribute the resource does not have (InvalidTemplateAttribute)
    and keeps any other error, which fails the stack."""
    for function in walk_functions(snippet):
        if isinstance(function, GetAtt):
            try:
                resolve(function)
            except InvalidAttribute:
                continue
            except HotplayError as error:
                raise _Unresolved(str(error)) from error
