# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading and breaking a stack's lock (``hotplay.stacks.stack_lock``): what an
operator does when a job's lock must go before its lease runs out.

Breaking ends the lease whoever holds it and grows its fencing token, so the run
that held it, if it still lives, writes nothing more and stops (store/leases.py);
the stack is free at once.  The break is recorded as an event of the stack (who,
why, whom it was taken from), as Heat records what was done to a stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..adapters.views import event_dict
from ..errors import HotplayError
from ..run.executor import Event
from ..store.base import TAKEOVER_NOTE, LeaseRecord, StackRecord, Store

EVENT_ACTION = "LOCK"
EVENT_STATUS = "BROKEN"
TAKEN_OVER_STATUS = "TAKEN_OVER"


@dataclass(frozen=True)
class LockRequest:
    name: str
    state: str = "query"  # query | broken
    reason: str = ""
    check_mode: bool = False


def lock_state(lease: LeaseRecord | None) -> dict[str, Any] | None:
    """The lock as a task shows it (None: the stack was never locked)."""
    if lease is None:
        return None
    return {"held": lease.held, "holder": lease.holder, "host": lease.host, "pid": lease.pid,
            "since": lease.acquired, "expires": lease.expiry_time(), "token": lease.token,
            "note": lease.note}


def stack_lock_task(store: Store, request: LockRequest, by: str) -> dict[str, Any]:
    """Query the stack's lock, or break it; a result for the task."""
    current = store.lock_record(request.name)
    if request.state == "query":
        return {"changed": False, "lock": lock_state(current)}
    if not request.reason.strip():
        raise HotplayError("state=broken needs a reason: say why the lock must go (it is recorded)")
    # A released or already broken lease holds nothing: nothing to break.
    if current is None or current.expires <= 0:
        return {"changed": False, "lock": lock_state(current), "broken": None, "events": []}
    if request.check_mode:
        return {"changed": True, "lock": lock_state(current), "broken": lock_state(current),
                "events": []}
    previous = store.break_lock(request.name, by, request.reason) or current
    events = _record(store, request, by, previous)
    return {"changed": True, "lock": lock_state(store.lock_record(request.name)),
            "broken": lock_state(previous), "events": events}


def _record(store: Store, request: LockRequest, by: str, previous: LeaseRecord) -> list[dict[str, Any]]:
    """The break as an event of the stack (when the stack exists: a lock may
    outlive a stack that was never created)."""
    stack = store.find_stack(request.name)
    if stack is None:
        return []
    state = "held" if previous.held else f"its lease ran out at {previous.expiry_time()}"
    reason = (f"Lock broken by {by}: {request.reason} (it was held by {previous.who()}, "
              f"token {previous.token}; {state})")
    record = store.add_event(stack.id, stack.name, EVENT_ACTION, EVENT_STATUS, reason, "")
    return [event_dict(Event(record, ()))]


def record_takeover(store: Store, stack: StackRecord) -> Event | None:
    """When this run (holding the stack's lock) took the lock over from a run that
    had not released it: the event of the stack that says so (who took it, from
    whom, the token), as a break is recorded; None otherwise.  Call once, as soon
    as the run has the lock and the stack."""
    lease = store.lock_record(stack.name)
    if lease is None or not lease.taken_over:
        return None
    reason = (f"Lock taken over by {lease.holder} (pid {lease.pid} on {lease.host}, token "
              f"{lease.token}) from {lease.note[len(TAKEOVER_NOTE):]}")
    return Event(store.add_event(stack.id, stack.name, EVENT_ACTION, TAKEN_OVER_STATUS, reason, ""), ())
