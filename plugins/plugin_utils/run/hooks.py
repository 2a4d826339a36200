# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Breakpoints seen from outside a run: list the pending ones, clear them, step.

A run that reaches a hook records it (PENDING, with Heat's event) and stops the
branch behind it; the task returns.  Clearing writes CLEARED and Heat's event
``Hook pre-create is cleared``; the next run of the same task goes past it.
Stepping clears and asks the next run to pause before every resource it starts.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..errors import HotplayError, StackNotFound
from ..store.base import HookRecord, StackRecord, Store

HOOK_TYPES = ("pre-create", "pre-update", "pre-delete", "post-create", "post-update", "post-delete")
STEP = "step"
STEP_RESOURCE = "*"


@dataclass(frozen=True)
class PendingHook:
    path: str  # resource path from the top stack: "group/0/server"
    hook: str
    record: HookRecord

    def as_dict(self) -> dict[str, str]:
        return {"resource": self.path, "hook": self.hook}


def pending_hooks(store: Store, stack: StackRecord) -> list[PendingHook]:
    """Every pending hook of a stack and its nested stacks, in its current revision
    (hooks of earlier revisions belong to runs that are over)."""
    current = store.get_stack(stack.id).revision
    return list(_pending(store, stack.id, "", current))


def _pending(store: Store, stack_id: str, prefix: str, revision: int) -> Iterator[PendingHook]:
    for record in store.hooks(stack_id, status="PENDING"):
        if record.hook != STEP and record.revision == revision:
            yield PendingHook(prefix + record.resource_name, record.hook, record)
    # Child stacks know the resource that made them: no resource rows to read.
    for child in store.child_stacks(stack_id):
        yield from _pending(store, child.id, f"{prefix}{child.parent_resource}/", revision)


def carry_cleared_hooks(store: Store, stack: StackRecord, old: int, new: int) -> None:
    """Hooks cleared in revision ``old`` are cleared in revision ``new`` too (every
    nested stack's): the approvals of a killed run's definition, applied again."""
    with store.transaction():
        _carry_cleared(store, stack.id, old, new)


def _carry_cleared(store: Store, stack_id: str, old: int, new: int) -> None:
    for record in store.hooks(stack_id, status="CLEARED"):
        if record.revision == old:
            store.set_hook(stack_id, record.resource_name, record.hook, new, "CLEARED")
    for child in store.child_stacks(stack_id):
        _carry_cleared(store, child.id, old, new)


def settle_hooks(store: Store, stack: StackRecord, end_stepping: bool = True) -> None:
    """After a run that went to the end: hooks it no longer stopped at (their
    breakpoint was taken away, or the run failed while they were pending) are
    over, and so is stepping (``end_stepping``: after a success)."""
    with store.transaction():
        for pending in pending_hooks(store, stack):
            record = pending.record
            store.set_hook(record.stack_id, record.resource_name, record.hook, record.revision,
                           "CLEARED")
        _clear_over(store, stack.id, store.get_stack(stack.id).revision)
        if end_stepping:
            _set_stepping(store, stack, False)


def _clear_over(store: Store, stack_id: str, revision: int) -> None:
    """Hooks still PENDING in an earlier revision: their run was killed while it
    waited at them (issue 40, item 9); no run will stop there again."""
    for record in store.hooks(stack_id, status="PENDING"):
        if record.hook != STEP and record.revision < revision:
            store.set_hook(stack_id, record.resource_name, record.hook, record.revision, "CLEARED")
    for child in store.child_stacks(stack_id):
        _clear_over(store, child.id, revision)


def clear_hooks(store: Store, name: str, resource: str = "*", hooks: Sequence[str] = (),
                step: bool = False) -> list[PendingHook]:
    """Clear the pending hooks matching ``resource`` (fnmatch on the path) and
    ``hooks`` (all when empty); with ``step``, the next run pauses at each
    resource it starts."""
    stack = _stack(store, name)
    cleared = [p for p in pending_hooks(store, stack)
               if fnmatch.fnmatchcase(p.path, resource) and (not hooks or p.hook in hooks)]
    with store.transaction():
        for pending in cleared:
            _clear_one(store, pending)
        if cleared or step:
            _set_stepping(store, stack, step)
    return cleared


def _clear_one(store: Store, pending: PendingHook) -> None:
    record = pending.record
    store.set_hook(record.stack_id, record.resource_name, record.hook, record.revision, "CLEARED")
    state = next((r.state for r in store.resources(record.stack_id)
                  if r.state.name == record.resource_name), None)
    action, status = (state.action, state.status) if state else ("INIT", "COMPLETE")
    store.add_event(record.stack_id, record.resource_name, action, status,
                    f"Hook {record.hook} is cleared", state.physical_id if state else "")


def stepping(store: Store, stack: StackRecord) -> bool:
    """Whether the stack's runs pause before every resource (set by ``step``)."""
    return store.hook_status(stack.id, STEP_RESOURCE, STEP, 0) == "PENDING"


def _set_stepping(store: Store, stack: StackRecord, on: bool) -> None:
    if on or stepping(store, stack):
        store.set_hook(stack.id, STEP_RESOURCE, STEP, 0, "PENDING" if on else "CLEARED")


def _stack(store: Store, name: str) -> StackRecord:
    stack = store.find_stack(name)
    if stack is None:
        raise StackNotFound.named(name)
    return stack


def check_hook_names(hooks: Sequence[str]) -> None:
    wrong = [h for h in hooks if h not in HOOK_TYPES]
    if wrong:
        raise HotplayError(f"unknown hook {', '.join(wrong)}: expected one of {', '.join(HOOK_TYPES)}")
