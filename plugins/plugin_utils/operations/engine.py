# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine's front door: apply (create or update), preview and delete stacks.

Front ends (the action plugins, the benchmark, tests) call these functions with
plain data and get plain data back.  The order of an apply: read the inputs,
build and validate the definition, plan it against the stored state, check the
refusals (immutable parameters, restricted actions, protected resources, a stale
reviewed plan) -- all before the store is written -- and only then lock, record a
revision and converge.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from ..model.definition import StackDefinition, StackIdentity, written_names
from ..errors import HotplayError, StackLocked, check_new_stack_name
from ..run.walk import DEFAULT_WORKERS
from ..language.functions.base import walk_functions
from ..language.functions.hot import GetAtt
from ..model.update_rules import is_unhealthy
from ..store.locking import stack_lock
from ..run.hooks import carry_cleared_hooks, pending_hooks, settle_hooks, stepping
from ..run.guards import (
    Refused,
    check_immutable,
    refuse_destruction,
    refuse_restricted,
    refusals,
    refuse_stale_plan,
    restricted_changes,
)
from ..language.template.loader import collector_paused
from ..model.inputs import (
    LoadedInputs,
    check_parameter_sizes,
    definition_digest,
    keep_hidden_secrets,
    load_inputs,
    mask_declared_hidden,
    patched_inputs,
    patched_parameters,
    recorded_definition,
)
from ..model.plan import Plan, plan_id, preview_delete
from ..adapters.render import plan_nodes, render
from ..run.preview import preview
from ..run.drift import detect_drift, repairs as drift_repairs
from ..adapters.results import ProgressCallback, StackResult, event_sink, stack_result, start_timer
from ..run.executor import Cancel, Event, RunOptions, StackRun
from ..store.base import RevisionRecord, StackRecord, Store
from ..store.sealed import SealedStore, sealed
from ..resources.openstack.session import CloudSession
from ..resources.runtime import ScaleStep
from ..resources.services import TypesNotRun
from .locks import record_takeover
from .scale import (ScaleSignal, confined_to_groups, keep_heats_statuses, plan_reason, record_signal_event,
                    scale_step, statuses_before)
from .settings import (
    StackSettings,
    check_tags,
    refuse_protected_delete,
    stored_settings,
    wanted_settings,
)
from .rollback import (
    close_interrupted_revision,
    load_target,
    recorded_environment,
    rollback_summary,
    run_rollback,
)
from ..adapters.views import (
    EVERY_LEVEL,
    describe_stack,
    down_to,
    list_resources,
    outcome_from,
    resource_entry,
    summarize_stack,
)
from ..language.environment import Environment
from ..language.template.cfn import sections_of
from ..language.template.loader import TemplateSource, load_template_body
RESTRICTED_MODES = ("fail", "skip")


@dataclass(frozen=True)
class ApplyRequest:
    name: str
    template: str | None = None  # None with ``existing``: the stored template
    # Or the template itself (text, or a mapping), read as a file named
    # ``template_body`` in ``template_base`` (where its relative references are).
    template_body: str | Mapping[str, Any] | None = None
    template_base: str = ""
    environment: Sequence[str] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    existing: bool = False  # PATCH: start from the stored definition
    clear_parameters: Sequence[str] = ()
    nested_depth: int = 0
    check_mode: bool = False
    plan_id: str | None = None
    prevent_destroy: Sequence[str] = ()
    on_restricted: str = "fail"
    timeout: float = 0
    max_workers: int = DEFAULT_WORKERS
    cancel: Cancel | None = None
    graph: str = ""  # "", or one of render.FORMATS
    rollback_on_failure: bool = False  # Heat's default: off
    keep_replaced: float = 0  # seconds a successful update keeps what it replaced
    converge: bool = False  # Heat's --converge: repair what drifted (run.drift)
    breakpoints: Sequence[tuple[str, str]] = ()  # (resource path pattern, hook)
    wait_for_hooks: float = 0  # seconds to wait for hooks cleared elsewhere
    host: Any = None  # the play host deployments run on (HostContext)
    lock_timeout: float = 0  # seconds to wait for the stack's lock (0: fail at once)
    # The cloud of OpenStack types: a clouds.yaml entry, or None for openstacksdk's
    # OS_* variables.  ``session`` is the operation's one session with it (made by
    # apply_stack: callers leave it unset).
    cloud: str | None = None
    session: CloudSession | None = None
    # Directories besides the template's (and an environment's) own tree that
    # get_file and provider templates may read from.
    file_roots: Sequence[str] = ()
    # Stack settings (operations.settings); None keeps the stored value.
    tags: Sequence[str] | None = None
    deletion_protection: bool | None = None
    # A signal to a scaling policy (operations.scale): its group resized, with
    # ``existing`` (the stored definition).
    scale: ScaleSignal | None = None


@dataclass
class _Prepared:
    """Everything about an apply that is known before anything is written."""

    existing: StackRecord | None
    last: RevisionRecord | None
    inputs: LoadedInputs
    given: dict[str, Any]
    definition: StackDefinition
    digest: str
    plan: Plan
    plan_id: str
    skip: frozenset[str]
    # The stack stopped at hooks in the last revision (resumed by the same task).
    paused: bool = False
    # Heat's converge: resource paths updated to repair drift, and why.
    repairs: Mapping[str, str] = field(default_factory=dict)
    settings: StackSettings = StackSettings()
    # A scaling signal's group path -> the size it gets.
    scale: Mapping[str, ScaleStep] = field(default_factory=dict)

    @property
    def settings_changed(self) -> bool:
        return self.settings != stored_settings(self.existing)

    @property
    def existing_status(self) -> str:
        return self.existing.stack_status if self.existing else ""


def apply_stack(
    store: Store, request: ApplyRequest, holder: str, progress: ProgressCallback | None = None
) -> StackResult:
    """Create the stack, or bring it to the new definition; nothing when unchanged."""
    store = sealed(store)
    with cloud_session(request.cloud) as session:
        session.limit(request.timeout)  # the validation's calls too (the run's from its start)
        request = replace(request, session=session)
        if request.scale is not None and not request.check_mode:
            # A scaling signal is judged against the stack as the lock finds it
            # (before it, another signal's run may be resizing the group).
            result, prepared = _converge(store, request, None, holder, progress)
        else:
            prepared = _prepare(store, request)
            settled = _without_run(store, request, prepared)
            if settled is None:
                result, prepared = _converge(store, request, prepared, holder, progress)
            elif prepared.settings_changed and not (settled.failed or request.check_mode):
                result = _keep_settings_only(store, request, prepared, settled, holder)
            elif not (settled.failed or settled.changed or request.check_mode):
                result = _outputs_read_again(store, request, prepared, settled, holder)
            else:
                result = settled
    if request.graph:
        result.graph = render(plan_nodes(prepared.plan), prepared.definition.requires_graph(),
                              request.graph)
    if prepared.scale:
        result.scaled = {path: {"from": step.previous, "to": step.capacity}
                         for path, step in prepared.scale.items()}
    return result


@contextmanager
def cloud_session(cloud: str | None) -> Iterator[CloudSession]:
    """The operation's one session with its cloud (it connects only if a resource
    calls it), closed when the operation ends."""
    session = CloudSession(cloud)
    try:
        yield session
    finally:
        session.close()


def _without_run(store: SealedStore, request: ApplyRequest, prepared: _Prepared) -> StackResult | None:
    """The result when nothing is to be written (a refusal, a preview, nothing to
    change); None when the stack must be converged."""
    try:
        _refusals(request, prepared)
    except Refused as refusal:
        return _refused(store, prepared, request, refusal)
    changes = prepared.paused or prepared.plan.would_change(prepared.existing) or _marked_unhealthy(
        prepared.plan)
    if request.check_mode or not changes:
        return _planned(store, prepared, request, changes or prepared.settings_changed)
    return None


def _keep_settings_only(store: SealedStore, request: ApplyRequest, prepared: _Prepared,
                        result: StackResult, holder: str) -> StackResult:
    """Nothing to converge, but new settings (tags, deletion protection): kept
    under the stack's lock, as any write to the stack is; no revision."""
    cancel = request.cancel or Cancel()
    with stack_lock(store, request.name, holder, request.lock_timeout, cancel.event, cancel.trigger):
        current = store.find_stack(request.name)
        if current is None:  # deleted meanwhile: nothing to keep them on
            return result
        store.set_stack_settings(current.id, prepared.settings.tags,
                                 prepared.settings.deletion_protection)
        result.stack, result.changed = store.get_stack(current.id), True
    return result


def _outputs_read_again(store: SealedStore, request: ApplyRequest, prepared: _Prepared,
                        result: StackResult, holder: str) -> StackResult:
    """A re-run with nothing to change still reads the outputs that name an
    attribute again, as Heat's update that changes nothing does: what is read live
    (a server's ``show`` or ``console_urls``) may have changed behind the stack.
    Kept under the stack's lock when it did, so that stack_info says the same."""
    stack = prepared.existing
    if stack is None or not _outputs_read_attributes(prepared.definition):
        return result
    reading = StackRun(store, stack, _no_events, options=RunOptions(cloud=request.session or CloudSession()))
    outputs, errors = reading.read_outputs(prepared.definition)
    if outputs == stack.outputs and errors == stack.output_errors:
        return result
    result.stack = replace(stack, outputs=outputs, output_errors=errors)
    cancel = request.cancel or Cancel()
    try:
        with stack_lock(store, request.name, holder, request.lock_timeout, cancel.event, cancel.trigger):
            current = store.find_stack(request.name)
            if current is not None and current.id == stack.id and current.revision == stack.revision:
                store.set_stack_outputs(current.id, outputs, errors)
    except StackLocked:
        pass  # another job is changing the stack: its run resolves the outputs
    return result


def _outputs_read_attributes(definition: StackDefinition) -> bool:
    return any(isinstance(function, GetAtt) for output in definition.outputs.values() if output.enabled
               for function in walk_functions(output.value))


def _no_events(event: Event) -> None:
    """Reading the outputs again writes no event (nothing happened to the stack)."""


def _prepare(store: SealedStore, request: ApplyRequest) -> _Prepared:
    # The definition and plan of 10,000 resources are a million objects that live
    # until the run ends: the collector's passes over them were a sixth of a preview.
    with collector_paused():
        return _prepared(store, request)


def _prepared(store: SealedStore, request: ApplyRequest) -> _Prepared:
    existing = store.find_stack(request.name)
    if existing is None:
        check_new_stack_name(request.name)
    store.unlock(request.name, existing, run=True)
    last = _last_revision(store, existing)
    template = _template_of(request)
    if request.existing and last is not None:
        inputs = patched_inputs(last, template, request.environment, request.file_roots)
        given = patched_parameters(last, request.parameters, request.clear_parameters)
    elif template:
        inputs = load_inputs(template, request.environment, request.file_roots)
        given = dict(request.parameters)
    else:
        raise HotplayError(f"a template is needed: the stack {request.name} has no stored definition")
    check_parameter_sizes(request.parameters, inputs.environment)
    check_tags(request.tags)
    stack_id = existing.id if existing else str(uuid.uuid4())
    try:
        kept = frozenset(_stored_sections(last).get("parameters") or {}) if last else frozenset()
        definition = StackDefinition(inputs.source, inputs.environment, given,
                                     StackIdentity(request.name, stack_id), inputs.files,
                                     previous_parameters=kept)
    except TypesNotRun as refused:
        raise _with_catalog(refused, request) from None
    except HotplayError:
        mask_declared_hidden(store, inputs, given)  # the error may quote a hidden value
        raise
    keep_hidden_secrets(store, definition.parameters, request.name)
    digest = definition_digest(inputs, definition.given_beyond_defaults(given), store.digest)
    # Revisions recorded before the digest left out values equal to their defaults.
    spelled_out = definition_digest(inputs, given, store.digest)
    skipping = request.on_restricted == "skip"
    repairs = drift_repairs(detect_drift(store, existing, request.host, request.session)) \
        if request.converge and existing is not None else {}
    scale = _scale_of(store, existing, request.scale)
    repairs = {**repairs, **{path: plan_reason(step) for path, step in scale.items()}}
    plan = preview(store, existing, definition, skip_restricted=skipping, host=request.host,
                   probe=request.check_mode, repairs=repairs, scale=scale,
                   previous_depends_on=written_depends_on(last), cloud=request.session)
    # The preview met every secret it could resolve (nested stacks' hidden values,
    # what resource types declare): without a key, refuse now, not midway.
    store.require_key(f"stack {request.name} has secret values to keep (hidden parameters of "
                      "nested stacks, or secret properties of its resources)")
    plan.definition_changed = existing is None or not (
        _unchanged(existing, last, digest) or _unchanged(existing, last, spelled_out))
    plan.with_nested_updates(existing)
    if scale:
        confined_to_groups(plan, scale)
    skip = frozenset(c.path for c in plan.changes if c.skipped)
    paused = bool(existing and last and last.status == "PAUSED" and existing.status == "IN_PROGRESS")
    return _Prepared(existing, last, inputs, given, definition, digest, plan,
                     plan_id(existing, plan, digest, store.digest), skip, paused, repairs,
                     wanted_settings(existing, request.tags, request.deletion_protection), scale)


def _scale_of(store: Store, existing: StackRecord | None,
              signal: ScaleSignal | None) -> dict[str, ScaleStep]:
    """A scaling signal's group and the size it gets, worked out from the store as
    it is now (again once the stack's lease is held: operations.scale)."""
    if signal is None:
        return {}
    if existing is None:
        raise HotplayError("a scaling signal needs a stack that exists")
    path, step = scale_step(store, existing, signal)
    return {path: step}


def _template_of(request: ApplyRequest) -> str | TemplateSource | None:
    """The task's template: its path, or the one given inline, read now."""
    if request.template_body is None:
        return request.template
    return load_template_body(request.template_body, request.template_base or os.getcwd(),
                              request.file_roots)


def _with_catalog(refused: TypesNotRun, request: ApplyRequest) -> TypesNotRun:
    """A refusal of types not run here, each reason as the cloud's catalog decides
    it; as it is when the task has no cloud (none given, no ``OS_CLOUD`` or
    ``OS_AUTH_URL``) or cannot reach it."""
    configured = request.cloud or os.environ.get("OS_CLOUD") or os.environ.get("OS_AUTH_URL")
    if not configured or request.session is None:
        return refused
    try:
        return refused.with_catalog(request.session.has_service)
    except Exception:  # pylint: disable=broad-exception-caught  # the cloud cannot say: as it was
        return refused


def _stored_sections(last: RevisionRecord) -> Mapping[str, Any]:
    """The sections of a revision's template under HOT's names (a CFN template's
    ``Resources`` as ``resources``)."""
    return sections_of(last.definition.get("template") or {})


def written_depends_on(last: RevisionRecord | None) -> dict[str, tuple[str, ...]] | None:
    """Each resource's depends_on as the last revision's template wrote it (a name
    is a list of one), or None when there is no last revision."""
    if last is None:
        return None
    resources = _stored_sections(last).get("resources") or {}
    found: dict[str, tuple[str, ...]] = {}
    for name, entry in resources.items():
        found[str(name)] = written_names(entry.get("depends_on") if isinstance(entry, dict) else None)
    return found


def _refusals(request: ApplyRequest, prepared: _Prepared) -> None:
    if prepared.paused and prepared.last is not None and prepared.digest != prepared.last.digest:
        raise Refused(
            f"Stack {request.name} is paused at hooks in revision {prepared.last.revision}; a "
            "different definition cannot be applied now. To continue, clear the hooks "
            "(hotplay.stacks.stack_hook) and run the same task again; to go back, use "
            "hotplay.stacks.stack_rollback."
        )
    parameters = prepared.definition.parameters
    immutable = frozenset(n for n, s in parameters.schemas.items() if s.immutable)
    check_immutable(prepared.last, parameters.values, immutable, prepared.definition.identity.id)
    refuse_stale_plan(request.plan_id, prepared.plan_id, _already_applied(request, prepared))
    if request.check_mode:
        # A preview shows everything at once: each change the apply would refuse
        # is listed with why (plan.refused), and the whole plan is returned.
        prepared.plan.refused = refusals(prepared.plan, request.on_restricted,
                                         request.prevent_destroy)
        return
    if request.on_restricted != "skip":
        refuse_restricted(restricted_changes(prepared.plan))
    refuse_destruction(prepared.plan, request.prevent_destroy)


def _already_applied(request: ApplyRequest, prepared: _Prepared) -> bool:
    """This reviewed plan was applied by the last revision, which completed."""
    last = prepared.last
    return bool(last and request.plan_id and last.status == "COMPLETE"
                and last.digest == prepared.digest
                and last.definition.get("applied_plan_id") == request.plan_id)


def _converge(
    store: SealedStore, request: ApplyRequest, prepared: _Prepared | None, holder: str,
    progress: ProgressCallback | None,
) -> tuple[StackResult, _Prepared]:
    """Lock the stack (waiting up to ``lock_timeout``), then run the apply
    (``prepared`` None: planned once the lock is held)."""
    cancel = request.cancel or Cancel()
    with stack_lock(store, request.name, holder, request.lock_timeout, cancel.event, cancel.trigger):
        if prepared is None or store.find_stack(request.name) != prepared.existing:
            # Another run changed the stack since it was read (while this one
            # waited for the lock): plan again from what it left.
            prepared = _prepare(store, request)
            settled = _without_run(store, request, prepared)
            if settled is not None:
                return settled, prepared
        return _run_locked(store, request, prepared, cancel, progress), prepared


def _run_locked(
    store: SealedStore, request: ApplyRequest, prepared: _Prepared, cancel: Cancel,
    progress: ProgressCallback | None,
) -> StackResult:
    events: list[Event] = []
    sink = event_sink(events, progress)
    timer = start_timer(request.timeout, cancel, request.session)
    rolled_back: dict[str, Any] | None = None
    warnings: list[str] = []  # the resources' (RuntimeContext.warn)
    try:
        stack = store.find_stack(request.name) or store.create_stack(
            request.name, stack_id=prepared.definition.identity.id)
        store.attach(stack.id)  # its secrets are kept (sealed) from here on
        if prepared.settings != stored_settings(stack):
            store.set_stack_settings(stack.id, prepared.settings.tags,
                                     prepared.settings.deletion_protection)
        taken_over = _record_takeover(store, stack, sink)
        before = statuses_before(store, stack) if prepared.scale else None
        action, revision = _revision_to_run(store, stack, request, prepared)
        options = RunOptions(revision, prepared.skip, cancel, request.max_workers,
                             keep_replaced=request.keep_replaced,
                             breakpoints=tuple(request.breakpoints), host=request.host,
                             repairs=prepared.repairs, scale=prepared.scale, taken_over=taken_over,
                             previous_depends_on=written_depends_on(prepared.last),
                             cloud=request.session or CloudSession(), warnings=warnings)
        run = _run_until_settled(store, stack, action, prepared, sink, options, request.wait_for_hooks)
        failed = store.get_stack(stack.id)
        status = "PAUSED" if run.paused else "COMPLETE" if failed.status == "COMPLETE" else "FAILED"
        if status != "PAUSED":
            # A failed stack waits at no hook (Heat: CREATE_FAILED, the resource that
            # was paused stays INIT_COMPLETE): nothing is left to clear.
            settle_hooks(store, failed, end_stepping=status == "COMPLETE")
        if before is not None and request.scale is not None and status == "COMPLETE":
            keep_heats_statuses(store, before)
            record_signal_event(store, stack, request.scale)
        listed = list_resources(store, stack.id, EVERY_LEVEL)
        store.finish_revision(stack.id, revision, status, failed.status_reason, outcome_from(listed))
        if status == "FAILED" and request.rollback_on_failure:
            rolled_back = _roll_back_failure(store, failed, action, prepared, sink, cancel, options)
    finally:
        if timer is not None:
            timer.cancel()
    final = store.get_stack(stack.id)
    parameters = prepared.definition.parameters.display()
    # What the revision's outcome listed is still so, unless a rollback ran since.
    shown = down_to(listed, request.nested_depth) if rolled_back is None else None
    result = stack_result(store, final, events, request.nested_depth, parameters,
                          prepared.plan, prepared.plan_id, shown)
    # A paused stack run again with no hook cleared: nothing happened.
    result.changed = bool(events) or final.stack_status != prepared.existing_status
    result.warnings = warnings
    if rolled_back is not None:
        result.failed, result.rollback = True, rolled_back
        result.msg = (f"{failed.stack_status}: {failed.status_reason}; automatic rollback: "
                      f"{final.stack_status} ({final.status_reason})")
    return result


def _record_takeover(store: Store, stack: StackRecord, sink: Any) -> bool:
    """Whether the run took the lock over from one that had not released it (an
    event says so)."""
    event = record_takeover(store, stack)
    if event is not None:
        sink(event)
    return event is not None


def _revision_to_run(store: Store, stack: StackRecord, request: ApplyRequest,
                     prepared: _Prepared) -> tuple[str, int]:
    """A paused stack goes on in its revision; otherwise a new revision.  A revision
    whose run was killed is closed FAILED first; when it applied the same
    definition, the hooks cleared for it (approvals given while or after it was
    killed) hold for the new one."""
    if prepared.paused and prepared.last is not None:
        return stack.action, prepared.last.revision
    interrupted = close_interrupted_revision(store, stack)
    action = "CREATE" if stack.action == "INIT" else "UPDATE"
    recorded = {**_recorded(prepared), "applied_plan_id": request.plan_id}
    if prepared.scale:  # what the revision changed, besides its (unchanged) definition
        recorded["scaled"] = {path: step.capacity for path, step in prepared.scale.items()}
    revision = store.add_revision(stack.id, action, recorded, prepared.digest)
    if interrupted is not None and interrupted.digest == prepared.digest:
        carry_cleared_hooks(store, stack, interrupted.revision, revision)
    return action, revision


def _run_until_settled(store: Store, stack: StackRecord, action: str, prepared: _Prepared,
                       sink: Any, options: RunOptions, wait_for_hooks: float) -> StackRun:
    """Converge; when stopped at hooks, wait (``wait_for_hooks``) for someone to
    clear them from elsewhere, then go on."""
    deadline = time.monotonic() + wait_for_hooks
    while True:
        current = store.get_stack(stack.id)
        options = replace(options, stepping=stepping(store, current))
        run = StackRun(store, current, sink, options=options)
        run.converge(prepared.definition, action)
        if not run.paused or not _wait_for_clearing(store, current, deadline, options.cancel):
            return run


def _wait_for_clearing(store: Store, stack: StackRecord, deadline: float, cancel: Cancel) -> bool:
    """Poll the store until every pending hook is cleared (True) or time is up."""
    store.flush()  # whoever clears the hooks writes to the store meanwhile
    while time.monotonic() < deadline:
        if cancel.event.wait(min(1.0, max(0.0, deadline - time.monotonic()))):
            return False
        if not pending_hooks(store, stack):
            return True
    return False


def _roll_back_failure(
    store: SealedStore, failed: StackRecord, action: str, prepared: _Prepared, sink: Any, cancel: Cancel,
    run_options: RunOptions,
) -> dict[str, Any]:
    """``rollback_on_failure``: a failed create deletes what it made; a failed
    update goes back to the last good revision, swapping replaced resources back."""
    if cancel.event.is_set():
        cancel.reset()  # a time-out stops the update, not the rollback
    host, cloud = run_options.host, run_options.cloud  # the same play host and cloud session
    cloud.limit(0)  # nor the rollback's calls
    if action == "CREATE":
        options = RunOptions(failed.revision, cancel=cancel, max_workers=run_options.max_workers,
                             host=host, cloud=cloud)
        ok = StackRun(store, failed, sink, options=options).rollback_create()
        after = store.get_stack(failed.id)
        return {"target_revision": None, "status": after.stack_status,
                "status_reason": after.status_reason, "succeeded": ok, "restored": [],
                "recreated": {}, "accepted_as_is": []}
    revisions = store.revisions(failed.id)
    good = [r for r in revisions if r.status == "COMPLETE" and r.revision < failed.revision]
    try:
        if not good:
            raise Refused("no earlier revision completed: nothing to roll back to")
        target = load_target(store, failed, good[-1], prepared.given)
    except (Refused, HotplayError) as refusal:
        return {"target_revision": None, "status": failed.stack_status, "succeeded": False,
                "status_reason": f"not rolled back: {refusal}", "restored": [], "recreated": {},
                "accepted_as_is": []}
    ok, options = run_rollback(store, failed, target, sink,
                               RunOptions(cancel=cancel, max_workers=run_options.max_workers,
                                          host=host, cloud=cloud))
    return rollback_summary(target.revision.revision, options, ok, store.get_stack(failed.id))


def _recorded(prepared: _Prepared) -> dict[str, Any]:
    parameters = prepared.definition.parameters
    return recorded_definition(prepared.inputs, prepared.given, parameters.values,
                               parameters.hidden_names())


@dataclass(frozen=True)
class DeleteRequest:
    name: str
    nested_depth: int = 0
    check_mode: bool = False
    plan_id: str | None = None
    prevent_destroy: Sequence[str] = ()
    timeout: float = 0
    cancel: Cancel | None = None
    graph: str = ""
    breakpoints: Sequence[tuple[str, str]] = ()
    wait_for_hooks: float = 0
    host: Any = None
    lock_timeout: float = 0  # seconds to wait for the stack's lock (0: fail at once)
    cloud: str | None = None  # as ApplyRequest's: the cloud of OpenStack types
    max_workers: int = DEFAULT_WORKERS  # resources of a stack deleted at once
    # False lifts the stack's deletion protection; otherwise a protected stack is kept.
    deletion_protection: bool | None = None


def delete_stack(
    store: Store, request: DeleteRequest, holder: str, progress: ProgressCallback | None = None,
) -> StackResult:
    """Delete a stack (Retain policies honoured); nothing when it does not exist."""
    store = sealed(store)
    existing = store.find_stack(request.name)
    if existing is None:
        return StackResult(changed=False, failed=False, stack=None)
    store.unlock(request.name, existing, run=True)
    plan = preview_delete(store, existing)
    result = _delete_without_run(store, request, existing, plan)
    if result is None:
        with cloud_session(request.cloud) as session:
            result = _delete(store, request, existing, plan, holder, progress, session)
    if request.graph:
        result.graph = render(plan_nodes(result.plan or plan), {}, request.graph)
    return result


def _delete_without_run(store: SealedStore, request: DeleteRequest, existing: StackRecord,
                        plan: Plan) -> StackResult | None:
    """A refusal or a preview; None when the stack must be deleted."""
    current_id = plan_id(existing, plan, "delete", store.digest)
    try:
        refuse_protected_delete(existing, request.deletion_protection)
        refuse_stale_plan(request.plan_id, current_id)
        refuse_destruction(plan, request.prevent_destroy)
    except Refused as refusal:
        return StackResult(changed=False, failed=True, stack=existing,
                           resources=list_resources(store, existing.id, request.nested_depth),
                           plan=plan, plan_id=current_id, msg=str(refusal))
    if request.check_mode:
        return StackResult(changed=True, failed=False, stack=existing,
                           resources=list_resources(store, existing.id, request.nested_depth),
                           plan=plan, plan_id=current_id)
    return None


def _delete(
    store: SealedStore, request: DeleteRequest, existing: StackRecord, plan: Plan, holder: str,
    progress: ProgressCallback | None, session: CloudSession,
) -> StackResult:
    """Lock the stack (waiting up to ``lock_timeout``), then delete it."""
    cancel = request.cancel or Cancel()
    with stack_lock(store, request.name, holder, request.lock_timeout, cancel.event, cancel.trigger):
        current = store.find_stack(request.name)
        if current != existing:
            # Another run changed (or deleted) the stack while this one waited.
            if current is None:
                return StackResult(changed=False, failed=False, stack=None)
            existing, plan = current, preview_delete(store, current)
            settled = _delete_without_run(store, request, existing, plan)
            if settled is not None:
                return settled
        result = _delete_locked(store, request, existing, cancel, progress, session)
    result.plan, result.plan_id = plan, plan_id(existing, plan, "delete", store.digest)
    return result


def _delete_locked(
    store: SealedStore, request: DeleteRequest, existing: StackRecord, cancel: Cancel,
    progress: ProgressCallback | None, session: CloudSession,
) -> StackResult:
    events: list[Event] = []
    sink = event_sink(events, progress)
    timer = start_timer(request.timeout, cancel, session)
    deadline = time.monotonic() + request.wait_for_hooks
    try:
        store.attach(existing.id)
        _record_takeover(store, existing, sink)  # a delete retires nothing: it deletes all
        if existing.deletion_protection:  # lifted by this task (refused otherwise)
            store.set_stack_settings(existing.id, existing.tags, False)
        last_environment = _last_environment(store, existing)
        while True:
            current = store.get_stack(existing.id)
            options = RunOptions(existing.revision, cancel=cancel, max_workers=request.max_workers,
                                 breakpoints=tuple(request.breakpoints),
                                 stepping=stepping(store, current), host=request.host,
                                 cloud=session)
            run = StackRun(store, current, sink, options=options)
            run.delete_environment = last_environment
            ok = run.delete()
            if not run.paused or not _wait_for_clearing(store, current, deadline, cancel):
                break
        if ok:
            store.mark_stack_deleted(existing.id)
    finally:
        if timer is not None:
            timer.cancel()
    final = store.get_stack(existing.id)
    result = stack_result(store, final, events, request.nested_depth, resources=[] if ok else None)
    if ok:
        result.hooks_pending = []
    return result


def _last_environment(store: SealedStore, stack: StackRecord) -> Environment | None:
    """The environment of the last revision, for the hooks it sets on a deletion
    (None when it cannot be read: then only the task's count)."""
    last = _last_revision(store, stack)
    if last is None:
        return None
    try:
        return recorded_environment(last.definition)[1]
    except HotplayError:
        return None


def _last_revision(store: Store, stack: StackRecord | None) -> RevisionRecord | None:
    return None if stack is None else store.last_revision(stack.id)


def _unchanged(stack: StackRecord, last: RevisionRecord | None, digest: str) -> bool:
    """Whether ``digest`` is that of the stack's last revision, complete (``last``
    as read already: reading every revision again held the old definitions twice,
    issue 30 item 5)."""
    if stack.status != "COMPLETE" or stack.action not in ("CREATE", "ADOPT", "UPDATE"):
        return False
    return last is not None and last.digest == digest and last.status == "COMPLETE"


def _marked_unhealthy(plan: Plan) -> bool:
    """A resource marked unhealthy is replaced by the next apply, even one of the
    same definition (marking a nested one marks its parents too)."""
    return any(is_unhealthy(state) for state in plan.top_states)


def _planned(store: Store, prepared: _Prepared, request: ApplyRequest, changes: bool) -> StackResult:
    """A preview, or a re-run with nothing to do: the plan, nothing written."""
    stack = prepared.existing
    if stack is None:
        resources: list[dict[str, Any]] = []
    elif request.nested_depth == 0:  # what the preview read already
        resources = [resource_entry(state) for state in prepared.plan.top_states]
    else:
        resources = list_resources(store, stack.id, request.nested_depth)
    return StackResult(
        changed=changes, failed=False, stack=stack, resources=resources,
        parameters=prepared.definition.parameters.display(),
        plan=prepared.plan, plan_id=prepared.plan_id,
        hooks_pending=[h.as_dict() for h in pending_hooks(store, stack)] if stack else [],
    )


def _refused(store: Store, prepared: _Prepared, request: ApplyRequest, refusal: Refused) -> StackResult:
    result = _planned(store, prepared, request, False)
    result.failed, result.msg = True, str(refusal)
    return result


__all__ = [
    "ApplyRequest", "Cancel", "DeleteRequest", "RESTRICTED_MODES", "StackResult", "apply_stack", "delete_stack",
    "describe_stack", "summarize_stack",
]
