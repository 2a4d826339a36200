# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The update preview: what applying a definition would do to each resource, and why.

Resources are visited in dependency order.  Each one's properties are resolved
with the recorded state of the resources it reads; a value read from a resource
that will itself change is not known yet, so it counts as changed (and the reason
says which resource it comes from).  A changed property that the type cannot
update in place means a replacement, as in Heat.  Nested stacks are previewed
inside, and their resources named ``parent/child``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .definition import KNOWN_AFTER_APPLY, Pending, StackDefinition, StackIdentity, handler_for
from ..errors import HotplayError, StackValidationFailed, TemplateError
from ..language.functions.base import resolve
from .graph import topological_order
from .update_rules import UNCHANGED, UPDATED, Known, decide, external_id_change, is_new, left_by_lost_run
from ..resources.base import Resource, ResourceState
from ..resources.nested import NestedStackResource
from ..resources.runtime import RuntimeContext
from ..resources.properties import UNKNOWN, validate_properties
from ..store.base import StackRecord, Store, utc_now

PLAN_KEYS = ("added", "deleted", "replaced", "updated", "unchanged")
NESTED_UPDATE = "a nested stack: updated with the stack, as Heat updates every nested stack"


@dataclass(frozen=True)
class Change:
    """What the plan does to one resource."""

    path: str  # "web", or "group/0/server" inside nested stacks
    action: str  # one of PLAN_KEYS
    type: str
    reason: str = ""
    before: Mapping[str, Any] | None = None
    after: Mapping[str, Any] | None = None
    restricted: bool = False  # the environment restricts this action (Heat)
    skipped: bool = False  # restricted, and left as it is (on_restricted: skip)
    # A complete nested stack with nothing of its own to change: updated all the
    # same when the stack is (Plan.with_nested_updates).
    routine: bool = False

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def destructive(self) -> bool:
        return self.action in ("deleted", "replaced")


@dataclass(frozen=True)
class Refusal:
    """A change the apply would refuse (the environment's ``restricted_actions``,
    the task's ``prevent_destroy``): a preview lists each one instead of failing."""

    path: str
    type: str
    action: str  # the plan's word: "updated", "replaced", "deleted"
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"resource": self.path, "type": self.type, "action": self.action,
                "reason": self.reason}


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    # The changes an apply would refuse, each with why (set by a preview only: an
    # apply fails at them instead).
    refused: list[Refusal] = field(default_factory=list)
    # The stored state the plan was made against (what ``plan_id`` hashes).
    state_lines: list[str] = field(default_factory=list)
    # The top stack's recorded resources, in template order (read once).
    top_states: list[ResourceState] = field(default_factory=list)
    # What resources that can ask their own tool (module resources) said about
    # their change in check mode: path -> {changed: bool or None, ...}.
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The stack's definition differs from its last complete revision (outputs or
    # parameters may change with no resource changing): the apply records it.
    definition_changed: bool = False

    def would_change(self, stack: StackRecord | None) -> bool:
        """``changed`` as check mode reports it, for an apply and a rollback alike:
        the stack is new or not COMPLETE, its definition changes, or a resource does."""
        return (stack is None or stack.status != "COMPLETE" or self.definition_changed
                or self.changes_anything)

    def with_nested_updates(self, stack: StackRecord | None) -> None:
        """Heat updates every nested stack of a stack it updates (StackResource's
        ``_needs_update`` is always true), and so does the apply: when the plan
        changes anything, its complete nested stacks are listed as updated."""
        if not self.would_change(stack):
            return
        self.changes = [replace(c, action="updated", reason=NESTED_UPDATE) if c.routine else c
                        for c in self.changes]

    def by_action(self) -> dict[str, list[str]]:
        """Heat's preview keys, each a list of resource paths."""
        grouped: dict[str, list[str]] = {key: [] for key in PLAN_KEYS}
        for change in self.changes:
            grouped[change.action].append(change.path)
        return grouped

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = dict(self.by_action())
        # Unchanged resources have a reason only when one was left alone on purpose.
        result["reasons"] = {c.path: c.reason for c in self.changes if c.reason}
        if self.checks:
            result["checks"] = dict(self.checks)
        if self.refused:
            result["refused"] = [refusal.as_dict() for refusal in self.refused]
        return result

    @property
    def changes_anything(self) -> bool:
        return any(change.action != "unchanged" for change in self.changes)

    def top_level(self) -> dict[str, Change]:
        return {c.path: c for c in self.changes if "/" not in c.path}


def plan_id(stack: StackRecord | None, plan: Plan, definition_digest: str,
            digest: Callable[[Sequence[bytes]], str] | None = None) -> str:
    """Identifies 'this stored state + this definition': an apply given a plan id
    refuses when either changed since the preview.  ``digest``: the store's, keyed
    when the state holds a secret (a plan id is shown)."""
    parts = [definition_digest.encode()]
    if stack is not None:
        parts.append(f"{stack.id}:{stack.revision}:{stack.stack_status}".encode())
    parts.extend(line.encode() for line in sorted(plan.state_lines))
    return (digest or _sha256)(parts)[:32]


def _sha256(parts: Sequence[bytes]) -> str:
    return hashlib.sha256(b"".join(parts)).hexdigest()


def _state_line(prefix: str, state: ResourceState) -> str:
    return json.dumps([prefix + state.name, state.action, state.status, state.physical_id,
                       state.properties], sort_keys=True, default=str)


class PlanContext(Protocol):
    """What planning one stack needs of the run it previews: the recorded states,
    the runtime the handlers read through, and secrets kept as the run keeps them.
    run.executor.StackRun in preview mode is one (see run.preview)."""

    @property
    def store(self) -> Any:
        """A store.sealed.SealedStore."""

    @property
    def stack(self) -> StackRecord: ...

    @property
    def records(self) -> Mapping[str, ResourceState]: ...

    @property
    def positions(self) -> Mapping[str, int]: ...

    @property
    def runtime(self) -> RuntimeContext: ...

    def keep_secret_properties(self, handler: Resource, properties: Mapping[str, Any]) -> None:
        """Keep the values of properties the type declares secret as secrets."""

    def requires_changed(self, defn: Any, resources: Mapping[str, Any]) -> bool:
        """Whether the resources ``defn`` needs differ from those recorded with it."""

    def preview_child(self, stack: StackRecord, resource_name: str,
                      definition: StackDefinition) -> PlanContext:
        """The context of a nested stack (``stack`` may be unsaved: not created yet)."""


def plan_stack(context: PlanContext, definition: StackDefinition, skip_restricted: bool = False,
               restore: bool = False, accepted: frozenset[str] = frozenset(),
               probe: bool = False, repairs: Mapping[str, str] | None = None) -> Plan:
    """The plan of applying ``definition`` to the stack of ``context``.

    With ``skip_restricted``, a resource whose change the environment restricts is
    planned as left unchanged, and what reads it sees it unchanged.  With
    ``restore`` (a rollback), a retired resource that is what the definition
    needs is planned as swapped back in.  With ``probe`` (check mode), resources
    that can ask their tool (module resources) say whether their change would
    change anything, in ``plan.checks``.  ``repairs`` (Heat's converge): resource
    paths updated although their definition did not change, and why."""
    plan = Plan()
    plan.top_states = sorted(context.records.values(), key=lambda s: context.positions.get(s.name, 0))
    previewer = _Previewer(context, definition, "", plan, skip_restricted, restore)
    previewer.accepted = accepted
    previewer.repairs = dict(repairs or {})
    previewer.probes = _Probes() if probe else None
    try:
        previewer.walk()
    finally:
        if previewer.probes is not None:
            plan.checks = previewer.probes.results()
    return plan


class _Probes:
    """Check-mode questions to resources that can ask their own tool, asked side
    by side while the plan is walked (nothing is started for other types)."""

    WORKERS = 16

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._asked: dict[str, Future[dict[str, Any]] | dict[str, Any]] = {}

    def ask(self, path: str, handler: Resource, current: ResourceState | None,
            after: Mapping[str, Any], unknown: Mapping[str, set[str]]) -> None:
        check = getattr(handler, "check_change", None)
        if check is None:
            return
        if unknown:
            self._asked[path] = {"changed": None, "msg": "its arguments are known only after apply"}
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.WORKERS)
        self._asked[path] = self._pool.submit(check, current, dict(after))

    def results(self) -> dict[str, dict[str, Any]]:
        answers: dict[str, dict[str, Any]] = {}
        for path, asked in self._asked.items():
            if not isinstance(asked, Future):
                answers[path] = asked
                continue
            try:
                answers[path] = asked.result()
            except Exception as error:  # noqa: BLE001 - a probe must not break the preview
                answers[path] = {"changed": None, "msg": f"{type(error).__name__}: {error}"}
        if self._pool is not None:
            self._pool.shutdown()
        return answers


def preview_delete(store: Store, stack: StackRecord) -> Plan:
    """The plan of deleting a stack: every recorded resource, nested ones too."""
    plan = Plan()
    _deleted_tree(store, stack.id, "", plan, "the stack is deleted")
    for stored in store.retired_resources(stack.id):
        state = stored.state
        plan.changes.append(Change(state.name, "deleted", state.type,
                                   f"replaced in revision {stored.retired_in}, kept until now",
                                   dict(state.properties), None))
    return plan


def unsaved_stack(identity: StackIdentity) -> StackRecord:
    """The record of a stack not created yet, as a preview sees it."""
    now = utc_now()
    return StackRecord(identity.id, identity.name, "INIT", "COMPLETE", "", now, now)


class _Previewer:
    """Plans one stack of the tree (nested stacks get their own)."""

    def __init__(self, stack_run: PlanContext, definition: StackDefinition, prefix: str, plan: Plan,
                 skip_restricted: bool = False, restore: bool = False) -> None:
        self.skip_restricted = skip_restricted
        self.restore = restore
        # Paths a rollback accepts as they are (its ``skip``).
        self.accepted: frozenset[str] = frozenset()
        # Heat's converge: paths updated to repair drift, and why.
        self.repairs: dict[str, str] = {}
        self.stack_run = stack_run
        self.store: Store = stack_run.store
        self.definition = definition
        self.prefix = prefix
        self.plan = plan
        self.records: dict[str, ResourceState] = dict(stack_run.records)
        plan.state_lines.extend(_state_line(prefix, state) for state in self.records.values())
        self.actions: dict[str, str] = {}
        self.handlers: dict[str, Resource] = {}
        self.read_pending: set[str] = set()
        # Values not known yet, resolved as far as they go (markers where unknown).
        self.partial: dict[str, Any] = {}
        self.probes: _Probes | None = None

    def walk(self) -> None:
        scope = self.definition.scope
        scope.live, scope.on_unknown = self._live, self.read_pending.add
        try:
            for name in topological_order(self.definition.requires_graph()):
                self._plan(name)
            for name, state in self.records.items():
                if name not in self.definition.resources:
                    where = "the nested stack's definition" if self.prefix else "the template"
                    self._deleted(name, state, f"removed from {where}")
            self._left_by_lost_run()
        finally:
            scope.on_unknown = lambda name: None

    def _left_by_lost_run(self) -> None:
        """What a run that stopped was making, kept retired: deleted (again)."""
        for stored in self.store.retired_resources(self.stack_run.stack.id):
            if left_by_lost_run(stored.state):
                self.plan.changes.append(Change(
                    self.prefix + stored.state.name, "deleted", stored.state.type,
                    f"left acting by a run that stopped ({stored.state.physical_id}), "
                    f"retired in revision {stored.retired_in}", dict(stored.state.properties), None))

    # -- what other resources see --------------------------------------------------
    def _live(self, name: str) -> Any:
        action = self.actions.get(name)
        handler = self.handlers.get(name)
        if action is None or handler is None:
            return None
        state = self.records.get(name)
        if action == "unchanged":
            return state, handler
        return Pending(state, handler, keeps_id=action == "updated")

    # -- one resource -------------------------------------------------------------------
    def _plan(self, name: str) -> None:
        defn = self.definition.resources[name]
        handler = handler_for(defn, self.stack_run.runtime)
        self.handlers[name] = handler
        record = self.records.get(name)
        after, unknown = self._properties(defn, handler)
        self._preflight(handler, after)
        action, reason = self._decide(defn, handler, record, after, unknown)
        if self.prefix + name in self.accepted and action != "added":
            action, reason = "unchanged", "accepted as it is (skip)"
        if self.restore and action != "unchanged" and not unknown:
            action, reason = self._swap_back(defn, handler, after, action, reason)
        path = self.prefix + name
        restricted = (action == "updated" and "update" in defn.restricted_actions) or (
            action == "replaced" and "replace" in defn.restricted_actions)
        skipped = restricted and self.skip_restricted
        if skipped:
            verb = "update" if action == "updated" else "replace"
            action, reason = "unchanged", f"left as it is: {verb} is restricted ({reason})"
        self.actions[name] = action
        before = handler.masked_properties(record.properties) if record and action != "added" else None
        routine = (action == "unchanged" and not reason and not self.restore and record is not None
                   and handler.is_nested_stack and record.status == "COMPLETE")
        self.plan.changes.append(Change(path, action, defn.type, reason, before,
                                        handler.masked_properties(_shown(after, unknown)),
                                        restricted, skipped, routine))
        if self.probes is not None and action in ("added", "updated", "replaced"):
            self.probes.ask(path, handler, record if action == "updated" else None, after, unknown)
        self._plan_inside(name, defn, handler, record, action, after, unknown)

    def _preflight(self, handler: Resource, after: Mapping[str, Any]) -> None:
        """Checks a type makes against what the run can reach (a module resource:
        its module is installed), before anything is written."""
        check = getattr(handler, "preflight", None)
        if check is None:
            return
        try:
            check(after)
        except HotplayError as error:
            raise error.located(self.definition.source.path) from None

    def _properties(self, defn: Any, handler: Resource) -> tuple[dict[str, Any], dict[str, set[str]]]:
        """Resolved properties, and for each not known yet the resources it reads;
        the secrets among them are masked in the preview too."""
        properties, unknown = self._resolved(defn, handler)
        known = {k: v for k, v in properties.items() if k not in unknown}
        self.stack_run.keep_secret_properties(handler, known)
        return properties, unknown

    def _resolved(self, defn: Any, handler: Resource) -> tuple[dict[str, Any], dict[str, set[str]]]:
        self.partial = {}
        if defn.known_properties is not None:
            return dict(defn.known_properties), {}
        values: dict[str, Any] = {}
        unknown: dict[str, set[str]] = {}
        for key, snippet in (defn.properties or {}).items():
            self.read_pending.clear()
            try:
                value = resolve(snippet)
            except (HotplayError, TypeError, ValueError, KeyError, AttributeError):
                value = UNKNOWN  # it reads something not known yet
            if self.read_pending or value is UNKNOWN:
                unknown[key] = set(self.read_pending)
                if value is not UNKNOWN:
                    self.partial[key] = value  # known parts, with markers where unknown
                value = UNKNOWN
            values[key] = value
        if getattr(handler, "check_properties", None) is not None:
            return values, unknown
        try:
            checked = validate_properties(type(handler), values, f"resources.{defn.name}.properties",
                                          partial=True)
        except HotplayError:
            checked = values  # the apply reports it; the plan still shows the change
        return checked, unknown

    def _decide(self, defn: Any, handler: Resource, record: ResourceState | None,
                after: Mapping[str, Any], unknown: Mapping[str, set[str]]) -> tuple[str, str]:
        refused = external_id_change(defn, record)
        if refused is not None:
            return UPDATED, f"{refused} The update fails (NotSupported), as in Heat"
        if defn.external_id is not None and not is_new(record):
            return UNCHANGED, ""  # an adopted resource is never touched
        known = Known(unknown, self.partial, lambda key: _describe(key, unknown, self.actions))
        decision = decide(self.store, defn, handler, record, after, known,
                          repair=self.repairs.get(self.prefix + defn.name),
                          requires_changed=self.stack_run.requires_changed(defn, self.definition.resources))
        return decision.action, decision.reason

    def _swap_back(self, defn: Any, handler: Resource, after: Mapping[str, Any],
                   action: str, reason: str) -> tuple[str, str]:
        """A rollback puts back a retired resource when it is what is needed."""
        gone = []
        for stored in sorted(self.store.retired_resources(self.stack_run.stack.id),
                             key=lambda r: -r.retired_in):
            old = stored.state
            if (old.name != defn.name or old.implementation != defn.implementation
                    or old.status != "COMPLETE" or left_by_lost_run(old)
                    or dict(old.properties) != dict(after)):
                continue
            if handler.check_healthy(old):
                return "replaced", (f"swaps back {old.physical_id}, replaced in revision "
                                    f"{stored.retired_in}")
            gone.append(f"the resource replaced in revision {stored.retired_in} "
                        f"({old.physical_id}) is gone or changed")
        if gone:
            return action, f"{reason}; {'; '.join(gone)}, so it is recreated"
        return action, reason

    # -- nested stacks --------------------------------------------------------------------
    def _plan_inside(self, name: str, defn: Any, handler: Resource, record: ResourceState | None,
                     action: str, after: Mapping[str, Any], unknown: Mapping[str, set[str]]) -> None:
        prefix = f"{self.prefix}{name}/"
        if action == "replaced" and record is not None and record.nested_stack_id:
            # Also when the new type has no nested stack (a provider swapped for
            # OS::Heat::None): what the old one had goes with it (Heat lists it).
            _deleted_tree(self.store, record.nested_stack_id, prefix, self.plan, "its parent is replaced")
        if not isinstance(handler, NestedStackResource):
            return
        if unknown:
            return  # what the child gets is known only after apply
        child_stack = None
        if action in ("updated", "unchanged") and record is not None and record.nested_stack_id:
            child_stack = self.store.get_stack(record.nested_stack_id)
        handler.bind_current(record if action != "added" else None)
        try:
            child = self._child_definition(name, handler, after, child_stack)
            if child is None:
                return
            record_for_child = child_stack or unsaved_stack(child.identity)
            context = self.stack_run.preview_child(record_for_child, name, child)
            nested = _Previewer(context, child, prefix, self.plan, self.skip_restricted, self.restore)
            nested.accepted = self.accepted
            nested.repairs = self.repairs
            nested.probes = self.probes
            nested.walk()
        except TemplateError as error:
            # Heat validates nested stacks with their parent (StackResource.
            # validate_nested_stack) and names the place as it does:
            # resources.web<web.yaml>.resources.server...
            # (resources.web in CFN's words when the parent is a CFN template).
            parent = self.definition.template.place(f"resources.{name}")
            inside = f"{parent}<{getattr(handler, 'template_key', 'nested_stack')}>"
            raise StackValidationFailed(
                error.message, source=self.definition.source.path,
                path=f"{inside}.{error.path}" if error.path else inside,
            ) from None

    def _child_definition(self, name: str, handler: Any, after: Mapping[str, Any],
                          child_stack: StackRecord | None) -> StackDefinition | None:
        parent = self.definition
        identity = StackIdentity(
            name=child_stack.name if child_stack else f"{parent.identity.name}-{name}",
            id=child_stack.id if child_stack else f"{parent.identity.id}/{name}",
            project_id=parent.identity.project_id,
            path=parent.identity.path + (name,),
            facade={},
        )
        try:
            return StackDefinition(
                handler.child_template(after),
                parent.environment.for_nested(name, parent.resources[name].type,
                                              getattr(handler, "child_registry", dict)()),
                handler.child_parameters(after), identity, files=parent.files,
            )
        except TemplateError:
            raise  # the template is wrong: said now, before anything is written
        except HotplayError:
            return None  # the apply will report it where it happens

    def _deleted(self, name: str, state: ResourceState, reason: str) -> None:
        self.plan.changes.append(Change(self.prefix + name, "deleted", state.type, reason,
                                        dict(state.properties), None))
        if state.nested_stack_id:
            _deleted_tree(self.store, state.nested_stack_id, f"{self.prefix}{name}/", self.plan,
                          "its parent is deleted")


def _deleted_tree(store: Store, stack_id: str, prefix: str, plan: Plan, reason: str) -> None:
    for stored in store.resources(stack_id):
        state = stored.state
        plan.state_lines.append(_state_line(prefix, state))
        kept = " (deletion_policy Retain: the physical resource is kept)" if (
            state.deletion_policy == "Retain") else ""
        plan.changes.append(Change(prefix + state.name, "deleted", state.type, reason + kept,
                                   dict(state.properties), None))
        if state.nested_stack_id:
            _deleted_tree(store, state.nested_stack_id, f"{prefix}{state.name}/", plan, reason)


def _describe(key: str, unknown: Mapping[str, set[str]], actions: Mapping[str, str]) -> str:
    if key not in unknown:
        return key
    sources = sorted(unknown[key])
    if not sources:
        return f"{key} (known after apply)"
    said = ", ".join(f"{n}, which will be {actions.get(n, 'changed')}" for n in sources)
    return f"{key} (reads {said})"


def _shown(after: Mapping[str, Any], unknown: Mapping[str, set[str]]) -> dict[str, Any]:
    return {k: (KNOWN_AFTER_APPLY if k in unknown else v) for k, v in after.items()}
