# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Marking a resource unhealthy (or healthy again), as Heat's ``openstack stack
resource mark unhealthy``, and what an apply does with an unhealthy resource.

Heat records an unhealthy resource ``CHECK_FAILED`` and replaces it on the next
update.  A resource inside a nested stack is reached because its parents are
marked too, the way Heat's stack check marks them: the nested stack
``CHECK_FAILED`` and its parent resource ``CHECK_FAILED``, which an update then
converges (its members decide) instead of replacing it whole.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..adapters.views import event_dict, resource_entry
from ..errors import HotplayError, StackNotFound
from ..model.update_rules import is_unhealthy
from ..run.executor import Event
from ..store.locking import stack_lock
from ..resources.base import ResourceState
from ..store.base import StackRecord, Store, StoredResource

DEFAULT_REASON = "state changed by resource_mark_unhealthy api"  # Heat's words


@dataclass(frozen=True)
class HealthRequest:
    name: str  # the top stack
    resource: str  # a path from the top stack: "web", "group/0/server"
    healthy: bool = False
    reason: str = ""
    check_mode: bool = False  # say what would change, write nothing


@dataclass(frozen=True)
class _Found:
    """A resource and the parents above it: (stack id, its parent resource row) pairs."""

    stack_id: str
    stored: StoredResource
    parents: tuple[tuple[str, StoredResource], ...]


def mark_resource(store: Store, request: HealthRequest, holder: str) -> dict[str, Any]:
    """Record the resource unhealthy (CHECK_FAILED) or healthy again (CHECK_COMPLETE
    when it was unhealthy); a result for the task."""

    stack = store.find_stack(request.name)
    if stack is None:
        raise StackNotFound.named(request.name)
    reason = request.reason or DEFAULT_REASON
    parent = request.resource.rsplit("/", 1)[0] if "/" in request.resource else ""
    if request.check_mode:
        found = find_resource(store, stack, request.resource)
        return {"changed": _would_change(found.stored.state, request.healthy, reason),
                "resource": resource_entry(found.stored.state, parent), "events": []}
    with stack_lock(store, request.name, holder):
        found = find_resource(store, stack, request.resource)
        if request.healthy:
            changed = _mark_healthy(store, found, reason)
        else:
            changed = _mark_unhealthy(store, found, request.resource, reason)
        state = _current(store, found.stack_id, found.stored.state.name)
    events = [] if not changed else [
        event_dict(_event(store, found.stack_id, state, parent))]
    return {"changed": changed, "resource": resource_entry(state, parent), "events": events}


def find_resource(store: Store, stack: StackRecord, path: str) -> _Found:
    names = [part for part in path.split("/") if part]
    if not names:
        raise HotplayError("resource must name a resource of the stack, e.g. web or group/0")
    stack_id, parents = stack.id, list[tuple[str, StoredResource]]()
    for depth, name in enumerate(names):
        rows = store.resources(stack_id)
        stored = next((r for r in rows if r.state.name == name), None)
        if stored is None and depth == len(names) - 1:  # Heat: a physical id is fine too
            stored = next((r for r in rows if r.state.physical_id == name), None)
        if stored is None:
            where = "/".join(names[:depth]) or f"stack {stack.name}"
            known = ", ".join(r.state.name for r in rows) or "none"
            raise StackNotFound(f"The Resource ({'/'.join(names[:depth + 1])}) could not be found "
                                f"in {where} (its resources: {known}).")
        if depth == len(names) - 1:
            return _Found(stack_id, stored, tuple(parents))
        if not stored.state.nested_stack_id:
            raise StackNotFound(f"{'/'.join(names[:depth + 1])} is a {stored.state.type}, not a "
                                f"nested stack: it has no resource {names[depth + 1]}")
        parents.append((stack_id, stored))
        stack_id = stored.state.nested_stack_id
    raise AssertionError("unreachable")


def _would_change(state: ResourceState, healthy: bool, reason: str) -> bool:
    if healthy:
        return is_unhealthy(state)  # Heat: only an unhealthy resource becomes healthy again
    # Heat leaves a deleted resource alone; marking it again the same way is no change.
    return not (state.action == "DELETE" or (is_unhealthy(state) and state.status_reason == reason))


def _mark_unhealthy(store: Store, found: _Found, path: str, reason: str) -> bool:
    if not _would_change(found.stored.state, False, reason):
        return False
    with store.transaction():
        _set(store, found.stack_id, found.stored, "FAILED", reason)
        child_id = found.stack_id
        for stack_id, parent in reversed(found.parents):
            store.set_stack_status(child_id, "CHECK", "FAILED", f"Resource {path} marked unhealthy")
            _set(store, stack_id, parent, "FAILED", f"Nested resource {path} marked unhealthy: {reason}")
            child_id = stack_id
    return True


def _mark_healthy(store: Store, found: _Found, reason: str) -> bool:
    if not _would_change(found.stored.state, True, reason):
        return False
    with store.transaction():
        _set(store, found.stack_id, found.stored, "COMPLETE", reason)
        child_id = found.stack_id
        for stack_id, parent in reversed(found.parents):
            if any(is_unhealthy(r.state) for r in store.resources(child_id)):
                break  # others inside are still unhealthy: the parents stay marked
            store.set_stack_status(child_id, "CHECK", "COMPLETE", "No resource is marked unhealthy")
            if is_unhealthy(parent.state):
                _set(store, stack_id, parent, "COMPLETE", reason)
            child_id = stack_id
    return True


def _set(store: Store, stack_id: str, stored: StoredResource, status: str, reason: str) -> None:
    state = replace(stored.state, action="CHECK", status=status, status_reason=reason)
    store.save_resource(stack_id, state, stored.requires, stored.position)
    store.add_event(stack_id, state.name, "CHECK", status, reason, state.physical_id)


def _current(store: Store, stack_id: str, name: str) -> ResourceState:
    return next(r.state for r in store.resources(stack_id) if r.state.name == name)


def _event(store: Store, stack_id: str, state: ResourceState, parent: str) -> Any:
    """The event this marking recorded for the resource itself."""
    record = next(e for e in reversed(store.events(stack_id)) if e.resource_name == state.name)
    return Event(record, tuple(parent.split("/")) if parent else ())
