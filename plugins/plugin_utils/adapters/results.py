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
from ..run.executor import Cancel, Event
from ..run.hooks import pending_hooks
from ..store.base import StackRecord, Store
from .views import event_dict, list_resources

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

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"changed": self.changed, "failed": self.failed}
        if self.msg:
            result["msg"] = self.msg
        elif self.failed and self.stack is not None:
            result["msg"] = f"{self.stack.stack_status}: {self.stack.status_reason}"
        if self.stack is not None:
            result.update(
                stack_id=self.stack.id,
                stack_status=self.stack.stack_status,
                stack_status_reason=self.stack.status_reason,
                outputs=dict(self.stack.outputs),
                output_errors=dict(self.stack.output_errors),
                revision=self.stack.revision,
            )
        result.update(resources=self.resources, events=self.events, parameters=self.parameters)
        if self.plan is not None:
            result["plan"] = self.plan.as_dict()
            result["plan_id"] = self.plan_id
        if self.graph is not None:
            result["graph"] = self.graph
        if self.rollback is not None:
            result["rollback"] = self.rollback
        if self.hooks_pending is not None:
            result["hooks_pending"] = self.hooks_pending
        return result


def start_timer(seconds: float, cancel: Cancel) -> threading.Timer | None:
    """Cancel the run with Heat's "Timed out" after ``seconds`` (0: never)."""
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
