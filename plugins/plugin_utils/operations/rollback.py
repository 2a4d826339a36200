# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollback: apply a recorded prior revision again, from any state.

The target is the previous good revision (default), a revision number, or the
last good revision before a time; ``max_age`` refuses one superseded too long ago.
The rollback converges the stack to the target's stored definition with the
ROLLBACK action, swapping retired (replaced) physical resources back in where they
still exist and are healthy, and recreating those that are gone (the result says
which).  It is recorded as a revision of its own, so a rollback can be rolled back.

Hidden parameter values come from the target revision (the store keeps them
sealed: the store key opens them); only revisions recorded before secrets were
encrypted keep digests, and need the values given again.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..model.definition import StackDefinition, StackIdentity
from ..language.environment import EMPTY_ENVIRONMENT, Environment, merge_environments, parse_environment
from ..errors import StackNotFound, TemplateError
from ..run.guards import Refused
from ..store.locking import stack_lock
from ..model.inputs import (
    LoadedInputs,
    check_parameter_sizes,
    definition_digest,
    hidden_digest,
    is_hidden_mark,
    keep_hidden_secrets,
)
from ..model.plan import plan_id
from .locks import record_takeover
from .scale import rollback_reason, sizes_to_restore
from ..run.preview import preview
from ..adapters.results import ProgressCallback, StackResult, event_sink, stack_result, start_timer
from ..run.executor import Cancel, Event, RunOptions, StackRun
from ..run.walk import DEFAULT_WORKERS
from ..store.base import RevisionRecord, StackRecord, Store
from ..store.sealed import SealedStore, sealed
from ..resources.openstack.session import CloudSession
from ..language.template.loader import TemplateSource, load_yaml
from ..adapters.views import list_resources, outcome_of

DEFAULT_MAX_AGE = 3600


@dataclass(frozen=True)
class RollbackRequest:
    name: str
    revision: int | None = None  # the target; default: the previous good one
    before: str | None = None  # or: the last good revision finished before this time
    max_age: float = DEFAULT_MAX_AGE  # seconds; 0: no limit
    skip: Sequence[str] = ()  # resource paths accepted as they are
    # Hidden values again, for a target recorded before secrets were encrypted.
    parameters: Mapping[str, Any] = field(default_factory=dict)
    check_mode: bool = False
    nested_depth: int = 0
    timeout: float = 0
    keep_replaced: float = 0
    cancel: Cancel | None = None
    host: Any = None  # the play host deployments run on
    lock_timeout: float = 0  # seconds to wait for the stack's lock (0: fail at once)
    cloud: str | None = None  # the cloud of OpenStack types (operations.engine.ApplyRequest)
    session: CloudSession | None = None  # the operation's session with it (made here)
    max_workers: int = DEFAULT_WORKERS  # resources of a stack acted on at once


@dataclass(frozen=True)
class Target:
    revision: RevisionRecord
    inputs: LoadedInputs
    given: dict[str, Any]
    definition: StackDefinition
    digest: str


@dataclass(frozen=True)
class _RollbackPlan:
    """A rollback decided before the lock is taken (checked again under it)."""

    stack: StackRecord
    target: Target
    plan: Any
    plan_id: str


def rollback_stack(
    store: Store, request: RollbackRequest, holder: str, progress: ProgressCallback | None = None,
) -> StackResult:
    """Roll a stack back to a recorded revision (or preview it in check mode)."""
    check_parameter_sizes(request.parameters)
    store = sealed(store)
    session = CloudSession(request.cloud)
    session.limit(request.timeout)  # the preview's calls too (the run's from its start)
    try:
        return _rollback(store, replace(request, session=session), holder, progress)
    finally:
        session.close()


def _rollback(store: SealedStore, request: RollbackRequest, holder: str,
              progress: ProgressCallback | None) -> StackResult:
    planned = _plan_rollback(store, request, _find(store, request.name))
    if isinstance(planned, StackResult):
        return planned
    cancel = request.cancel or Cancel()
    with stack_lock(store, request.name, holder, request.lock_timeout, cancel.event, cancel.trigger):
        if store.find_stack(request.name) != planned.stack:
            # Another run changed the stack while this one waited for the lock:
            # choose the target again from the revisions it left.
            planned = _plan_rollback(store, request, _find(store, request.name))
            if isinstance(planned, StackResult):
                return planned
        return _roll_back_locked(store, request, planned, cancel, progress)


def _find(store: SealedStore, name: str) -> StackRecord:
    stack = store.find_stack(name)
    if stack is None:
        raise StackNotFound.named(name)
    store.unlock(name, stack, run=True)  # refused without the key, or with a wrong one
    return stack


def _plan_rollback(store: SealedStore, request: RollbackRequest,
                   stack: StackRecord) -> _RollbackPlan | StackResult:
    """The target and its plan; or the result of a refusal or a preview."""
    try:
        chosen = choose_target(store.revisions(stack.id), stack, request)
        target = load_target(store, stack, chosen, request.parameters)
        check_skip(store, stack, request.skip)
    except Refused as refusal:
        return StackResult(changed=False, failed=True, stack=stack, msg=str(refusal),
                           resources=list_resources(store, stack.id, request.nested_depth))
    scale = sizes_to_restore(store, stack, chosen.outcome)
    plan = preview(store, stack, target.definition, restore=True, accepted=frozenset(request.skip),
                   host=request.host, probe=request.check_mode, cloud=request.session, scale=scale,
                   repairs={path: rollback_reason(step, chosen.revision) for path, step in scale.items()})
    current_id = plan_id(stack, plan, target.digest, store.digest)
    revisions = store.revisions(stack.id)
    # A revision recorded before digests left out values equal to their defaults
    # has the digest of the parameters as given.
    spelled_out = definition_digest(target.inputs, target.given, store.digest)
    plan.definition_changed = not revisions or revisions[-1].digest not in (target.digest, spelled_out)
    if request.check_mode:
        previewed = StackResult(changed=plan.would_change(stack),
                                failed=False, stack=stack, plan=plan, plan_id=current_id,
                                resources=list_resources(store, stack.id, request.nested_depth),
                                parameters=target.definition.parameters.display())
        previewed.rollback = {"target_revision": chosen.revision, "status": None,
                              "accepted_as_is": sorted(request.skip)}
        return previewed
    return _RollbackPlan(stack, target, plan, current_id)


def _roll_back_locked(store: SealedStore, request: RollbackRequest, planned: _RollbackPlan,
                      cancel: Cancel, progress: ProgressCallback | None) -> StackResult:
    events: list[Event] = []
    timer = start_timer(request.timeout, cancel, request.session)
    target = planned.target
    try:
        store.attach(planned.stack.id)
        sink = event_sink(events, progress)
        taken_over = record_takeover(store, planned.stack)
        if taken_over is not None:
            sink(taken_over)
        options = RunOptions(cancel=cancel, skip=frozenset(request.skip), restore=True,
                             max_workers=request.max_workers,
                             keep_replaced=request.keep_replaced, host=request.host,
                             taken_over=taken_over is not None,
                             cloud=request.session or CloudSession())
        ok, options = run_rollback(store, planned.stack, target, sink, options)
    finally:
        if timer is not None:
            timer.cancel()
    final = store.get_stack(planned.stack.id)
    result = stack_result(store, final, events, request.nested_depth,
                          target.definition.parameters.display(), planned.plan, planned.plan_id)
    result.rollback = rollback_summary(target.revision.revision, options, ok, final)
    return result


def run_rollback(
    store: Store, stack: StackRecord, target: Target, sink: Any, options: RunOptions,
) -> tuple[bool, RunOptions]:
    """Converge to the target as a new ROLLBACK revision (the caller holds the lock)."""
    recorded = {**target.revision.definition, "rolled_back_to": target.revision.revision,
                "accepted_as_is": sorted(options.skip)}
    close_interrupted_revision(store, stack)
    revision = store.add_revision(stack.id, "ROLLBACK", recorded, target.digest)
    # Each group back to its size then (a scaling signal changed no definition).
    scale = sizes_to_restore(store, stack, target.revision.outcome)
    repairs = {path: rollback_reason(step, target.revision.revision) for path, step in scale.items()}
    options = replace(options, revision=revision, restore=True, scale=scale, repairs=repairs)
    run = StackRun(store, store.get_stack(stack.id), sink, options=options)
    ok = run.converge(target.definition, "ROLLBACK")
    final = store.get_stack(stack.id)
    store.finish_revision(stack.id, revision, "COMPLETE" if ok else "FAILED",
                          final.status_reason, outcome_of(store, stack.id))
    return ok, options


INTERRUPTED = "the run recording this revision stopped before it finished (killed or lost)"


def close_interrupted_revision(store: Store, stack: StackRecord) -> RevisionRecord | None:
    """A revision left IN_PROGRESS by a run that died (the caller holds the stack's
    lock, so its run is gone) is recorded FAILED, so history says what happened to
    it; that revision, or None."""
    revisions = store.revisions(stack.id)
    last = revisions[-1] if revisions else None
    if last is None or last.status != "IN_PROGRESS":
        return None
    store.finish_revision(stack.id, last.revision, "FAILED", INTERRUPTED, outcome_of(store, stack.id))
    return last


def rollback_summary(target: int, options: RunOptions, ok: bool, stack: StackRecord) -> dict[str, Any]:
    """What the result tells about a rollback."""
    return {
        "target_revision": target,
        "status": stack.stack_status,
        "status_reason": stack.status_reason,
        "restored": sorted(options.report.restored),
        "recreated": dict(sorted(options.report.recreated.items())),
        "accepted_as_is": sorted(options.skip),
        "succeeded": ok,
    }


# -- choosing the target ---------------------------------------------------------------


def choose_target(revisions: list[RevisionRecord], stack: StackRecord,
                  request: RollbackRequest) -> RevisionRecord:
    """The revision to go back to, with the refusals people need to read."""
    # A failed or killed delete leaves the current revision the last good one: going
    # back restores it (a failed update or create goes to the revision before it).
    newest = stack.revision if stack.action == "DELETE" else stack.revision - 1
    good = [r for r in revisions if r.status == "COMPLETE" and r.revision <= newest]
    unfinished = _unfinished_rollback(revisions)
    if request.revision is not None:
        chosen = _numbered(revisions, stack, request.revision)
    elif request.before:
        chosen = _before(good, request.before)
    elif unfinished is not None:
        # Retrying a rollback that failed: the same target, not the revision it left.
        chosen = _numbered(revisions, stack, unfinished)
    elif good:
        chosen = good[-1]
    else:
        raise Refused(f"Stack {stack.name} has no earlier revision that completed: "
                      "nothing to roll back to (delete the stack instead)")
    _check_age(chosen, revisions, request.max_age)
    return chosen


def _unfinished_rollback(revisions: list[RevisionRecord]) -> int | None:
    """The target of the last revision when it is a rollback that did not complete."""
    if revisions and revisions[-1].action == "ROLLBACK" and revisions[-1].status != "COMPLETE":
        return revisions[-1].definition.get("rolled_back_to")
    return None


def check_skip(store: Store, stack: StackRecord, skip: Sequence[str]) -> None:
    """Every path given to accept as it is must name a resource of the stack."""
    known = {entry["name"] for entry in list_resources(store, stack.id, nested_depth=1000)}
    unknown = sorted(set(skip) - known)
    if unknown:
        raise Refused(f"skip names resources stack {stack.name} does not have: {', '.join(unknown)}")


def _numbered(revisions: list[RevisionRecord], stack: StackRecord, number: int) -> RevisionRecord:
    found = next((r for r in revisions if r.revision == number), None)
    if found is None:
        known = ", ".join(str(r.revision) for r in revisions)
        raise Refused(f"Stack {stack.name} has no revision {number} (it has {known})")
    if found.status != "COMPLETE":
        raise Refused(f"Revision {number} of stack {stack.name} did not complete "
                      f"({found.action}_{found.status}): roll back to a revision that did")
    if number == stack.revision and stack.status == "COMPLETE":
        raise Refused(f"Revision {number} is the stack's current revision: nothing to roll back")
    return found


def _before(good: list[RevisionRecord], before: str) -> RevisionRecord:
    moment = _parse_time(before)
    earlier = [r for r in good if _parse_time(r.finished or r.created) <= moment]
    if not earlier:
        raise Refused(f"No revision completed before {before}")
    return earlier[-1]


def _check_age(chosen: RevisionRecord, revisions: list[RevisionRecord], max_age: float) -> None:
    """Refuse a target superseded more than ``max_age`` seconds ago: the world it
    described has moved on since."""
    if max_age <= 0:
        return
    later = [r for r in revisions if r.revision > chosen.revision]
    if not later:
        return
    superseded = _parse_time(later[0].created)
    age = (_now() - superseded).total_seconds()
    if age > max_age:
        raise Refused(
            f"Revision {chosen.revision} was superseded {_duration(age)} ago (at {later[0].created}), "
            f"more than max_age ({_duration(max_age)}): the world it describes may have moved "
            "on. Set max_age to 0 (or a longer time) to roll back to it anyway."
        )


def _parse_time(text: str) -> datetime.datetime:
    try:
        parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as error:
        raise Refused(f"{text!r} is not a time: expected ISO 8601, e.g. 2026-11-22T03:00:00Z") from error
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {secs} s"


# -- the target's definition -------------------------------------------------------------


def load_target(store: SealedStore, stack: StackRecord, revision: RevisionRecord,
                given_now: Mapping[str, Any]) -> Target:
    """Rebuild the definition a revision recorded; its secrets are the store's."""
    stored = revision.definition
    files = dict(stored.get("files", {}))
    source = TemplateSource(stored.get("template_path", ""), stored["template"], files)
    texts, merged = recorded_environment(stored)
    inputs = LoadedInputs(source, merged, files, texts)
    given = _parameters(stack, stored, given_now)
    try:
        definition = StackDefinition(source, merged, given, StackIdentity(stack.name, stack.id), files)
    except TemplateError as error:
        hidden_missing = _hidden_not_given(stored, given_now)
        if hidden_missing and any(f"({name})" in str(error) for name in hidden_missing):
            raise _hidden_refusal(hidden_missing) from error
        raise
    _check_hidden(stack, stored, definition)
    keep_hidden_secrets(store, definition.parameters, stack.name)
    return Target(revision, inputs, given, definition,
                  definition_digest(inputs, definition.given_beyond_defaults(given), store.digest))


def recorded_environment(stored: Mapping[str, Any]) -> tuple[tuple[tuple[str, str], ...], Environment]:
    """The environment files a revision recorded (name, text), and their merge."""
    texts = tuple((name, text) for name, text in stored.get("environment", []))
    environments = [parse_environment(load_yaml(text, name), name) for name, text in texts]
    return texts, merge_environments(environments) if environments else EMPTY_ENVIRONMENT


def _parameters(stack: StackRecord, stored: Mapping[str, Any], given_now: Mapping[str, Any]) -> dict[str, Any]:
    """The revision's parameters; hidden ones an older revision kept only as
    digests come from the task, or are left out when their default gives the
    recorded value."""
    given = {}
    for name, value in stored.get("parameters", {}).items():
        if is_hidden_mark(value):
            if name in given_now:
                given[name] = given_now[name]
            continue  # checked against the digest once the definition is built
        given[name] = value
    return given


def _check_hidden(stack: StackRecord, stored: Mapping[str, Any], definition: StackDefinition) -> None:
    recorded = stored.get("effective_parameters", {})
    values = definition.parameters.values
    missing = []
    for name in sorted(definition.parameters.hidden_names()):
        expected = recorded.get(name)
        if is_hidden_mark(expected) and hidden_digest(stack.id, name, values.get(name)) != expected:
            missing.append(name)
    if missing:
        raise _hidden_refusal(missing)


def _hidden_not_given(stored: Mapping[str, Any], given_now: Mapping[str, Any]) -> list[str]:
    return sorted(name for name, value in stored.get("parameters", {}).items()
                  if is_hidden_mark(value) and name not in given_now)


def _hidden_refusal(names: Sequence[str]) -> Refused:
    return Refused(
        "The values of hidden parameters are not kept in the store for revisions recorded "
        "before secrets were encrypted; give them with parameters (the value this revision "
        f"had): {', '.join(names)}"
    )
