# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an apply, a rollback or a delete returns, and the small pieces they share:
the event sink, the time-out timer."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..model.plan import Plan
from ..resources.openstack.session import CloudSession
from ..run.executor import Cancel, Event
from ..run.hooks import pending_hooks
from ..store.base import StackRecord, Store
from .views import event_dict, list_resources, summarize_stack

ProgressCallback = Callable[[Event], None]


@dataclass
class StackResult:
    """What a task reports; ``as_dict`` is the task result."""

    changed: bool
    failed: bool
    stack: StackRecord | None
    resources: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    plan: Plan | None = None
    plan_id: str | None = None
    graph: str | None = None
    rollback: dict[str, Any] | None = None
    hooks_pending: list[dict[str, str]] | None = None
    msg: str = ""
    warnings: list[str] = field(default_factory=list)
    # A scaling signal's run: group path -> {"from": size, "to": size}.
    scaled: dict[str, dict[str, int]] | None = None

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"changed": self.changed, "failed": self.failed}
        if self.msg:
            result["msg"] = self.msg
        elif self.failed and self.stack is not None:
            result["msg"] = f"{self.stack.stack_status}: {self.stack.status_reason}"
        if self.stack is not None:
            result["stack"] = summarize_stack(self.stack)
            # Deprecated names of stack.id, stack.status and stack.status_reason
            # (the modules' RETURN says until when they stay).
            result.update(
                stack_id=self.stack.id,
                stack_status=self.stack.stack_status,
                stack_status_reason=self.stack.status_reason,
                outputs=dict(self.stack.outputs),
                output_errors=dict(self.stack.output_errors),
                revision=self.stack.revision,
            )
        result.update(resources=self.resources, events=self.events, parameters=self.parameters)
        if self.warnings:
            result["warnings"] = list(self.warnings)
        if self.plan is not None:
            result["plan"] = self.plan.as_dict()
            result["plan_id"] = self.plan_id
        if self.graph is not None:
            result["graph"] = self.graph
        if self.rollback is not None:
            result["rollback"] = self.rollback
        if self.hooks_pending is not None:
            result["hooks_pending"] = self.hooks_pending
        if self.scaled is not None:
            result["scaled"] = self.scaled
        return result


RETURN_RESOURCES = ("all", "changed", "none")
# The plan's lists of resources this run acted on (or would act on).
_ACTED_ON = ("added", "deleted", "replaced", "updated")


def trimmed(result: dict[str, Any], return_resources: str = "all",
            events_limit: int | None = None) -> dict[str, Any]:
    """A task result kept small for a big stack: ``resources`` all, only those the
    run changed (or would change), or none (and then the plan's ``unchanged`` list
    empty too); at most the last ``events_limit`` events, with ``events_omitted``
    saying how many were left out."""
    if return_resources == "none":
        result["resources"] = []
    elif return_resources == "changed":
        acted_on = _acted_on(result)
        result["resources"] = [r for r in result.get("resources", []) if r["name"] in acted_on]
    if return_resources != "all" and result.get("plan"):
        # Every resource of a no-op run is unchanged: as long a list as ``resources``.
        result["plan"] = {**result["plan"], "unchanged": []}
    events = result.get("events", [])
    if events_limit is not None and len(events) > events_limit:
        result["events_omitted"] = len(events) - events_limit
        result["events"] = events[len(events) - events_limit:]
    return result


def _acted_on(result: dict[str, Any]) -> set[str]:
    """Paths of the resources the run's events name, or its plan acts on."""
    stack_name = (result.get("stack") or {}).get("name")
    names = {f"{e['parent']}/{e['resource_name']}" if "parent" in e else e["resource_name"]
             for e in result.get("events", [])
             if "parent" in e or e["resource_name"] != stack_name}
    plan = result.get("plan") or {}
    for key in _ACTED_ON:
        names.update(plan.get(key, []))
    return names


def bad_sizes(args: dict[str, Any]) -> str:
    """Why ``parallelism`` or ``events_limit`` cannot be used ("" when they can)."""
    if args["parallelism"] < 1:
        return f"parallelism must be at least 1 (resources acted on at once), got {args['parallelism']}"
    if args.get("events_limit") is not None and args["events_limit"] < 0:
        return f"events_limit must be 0 or more (events returned), got {args['events_limit']}"
    return ""


def start_timer(seconds: float, cancel: Cancel, session: CloudSession | None = None) -> threading.Timer | None:
    """Cancel the run with Heat's "Timed out" after ``seconds`` (0: never).
    ``session``: the run's cloud session, whose calls then end by the same time, and
    send nothing more once the run is cancelled (whatever the reason)."""
    if session is not None:
        session.limit(seconds, cancel)
    if seconds <= 0:
        return None
    timer = threading.Timer(seconds, cancel.trigger, args=("Timed out",))
    timer.daemon = True
    timer.start()
    return timer


def event_sink(events: list[Event], progress: ProgressCallback | None) -> Callable[[Event], None]:
    def record(event: Event) -> None:
        events.append(event)
        if progress is not None:
            progress(event)

    return record


def stack_result(
    store: Store, stack: StackRecord, events: list[Event], nested_depth: int,
    parameters: dict[str, Any] | None = None, plan: Plan | None = None, plan_id: str | None = None,
    resources: list[dict[str, Any]] | None = None,
) -> StackResult:
    """The result of a run that changed the stack (failed when the stack did);
    ``resources``: its resources as listed already (read from the store when None)."""
    return StackResult(
        changed=True,
        failed=stack.status == "FAILED",
        stack=stack,
        resources=list_resources(store, stack.id, nested_depth) if resources is None else resources,
        events=[event_dict(e) for e in events if len(e.path) <= nested_depth],
        parameters=parameters or {},
        plan=plan,
        plan_id=plan_id,
        hooks_pending=[hook.as_dict() for hook in pending_hooks(store, stack)],
    )
