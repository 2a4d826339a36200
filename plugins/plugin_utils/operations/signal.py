# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Signalling a resource, as Heat's ``openstack stack resource signal``: the checks
Heat's ``resource_signal`` makes, in its order and words, then the resource type's
own (``handle_signal``).  Types that take signals: the wait condition handles
(resources/wait_condition.py) and the scaling policies (resources/autoscaling.py).

A signal to a handle is appended to the store at once, with its SIGNAL event, without
the stack's lease: the run that holds the lease may be the very one waiting for it (a
wait condition), as in Heat, where a signal does not wait for the stack's lock.  Two
signals at once are ordered by the store and both kept.  A signal to a scaling policy
resizes its group: a run of the stack, under its lease (operations/scale.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..adapters.views import resource_entry
from ..errors import HotplayError, StackNotFound
from ..resources.autoscaling import NoScaling
from ..resources.base import resource_class
from ..resources.wait_condition import SignalRefused, WaitConditionHandleBase, record_signal
from ..store.base import Store
from .engine import ApplyRequest, apply_stack
from .health import find_resource
from .scale import ScaleSignal, is_scaling_policy

# Heat's Resource.no_signal_actions.
NO_SIGNAL_ACTIONS = ("SUSPEND", "DELETE")


class SignalNotTaken(HotplayError):
    """Heat refused the signal: nothing was recorded."""


@dataclass(frozen=True)
class SignalRequest:
    name: str  # the top stack
    resource: str  # a path from the top stack: "handle", "group/0/handle"
    data: Any = None  # Heat's signal body ("details")
    check_mode: bool = False  # check it, record nothing
    # A scaling policy's signal runs the stack: the apply options it takes.
    holder: str = ""
    lock_timeout: float = 0
    timeout: float = 0
    cloud: str | None = None
    host: Any = None
    cancel: Any = None
    progress: Callable[[Any], None] | None = None


def signal_resource(store: Store, request: SignalRequest) -> dict[str, Any]:
    """Check the signal and record it; a result for the task."""
    stack = store.find_stack(request.name)
    if stack is None:
        raise StackNotFound.named(request.name)
    found = find_resource(store, stack, request.resource)
    state = found.stored.state
    path = request.resource.strip("/")
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    if not state.physical_id and state.action == "INIT":
        raise SignalNotTaken(f"The Resource ({path}) is not available.")
    if state.action in NO_SIGNAL_ACTIONS:
        if not request.check_mode:
            store.add_event(found.stack_id, state.name, state.action, state.status,
                            f"Cannot signal resource during {state.action}", state.physical_id)
        raise SignalNotTaken(f"Signal resource during {state.action} is not supported.")
    if is_scaling_policy(state):
        return _scale(store, request, resource_entry(state, parent))
    handler_class = resource_class(state.implementation or state.type)
    if handler_class is None or not issubclass(handler_class, WaitConditionHandleBase):
        raise SignalNotTaken(f"ResourceActionNotSupported: resources.{path}: signal is not supported "
                             f"for resource. ({state.type} takes no signals here; the wait condition "
                             "handles and the scaling policies do)")
    try:
        if request.check_mode:
            before = handler_class.merged(store.signals(found.stack_id, state.name, state.physical_id))
            checked = handler_class.checked(request.data, before)
            reason = handler_class.signal_reason(checked)
        else:
            reason = record_signal(store, found.stack_id, state, handler_class, request.data)
    except SignalRefused as refused:
        raise SignalNotTaken(f"{refused.error_type}: resources.{path}: {refused.message}") from None
    return {"changed": True, "resource": resource_entry(state, parent), "reason": reason}


def _scale(store: Store, request: SignalRequest, entry: dict[str, Any]) -> dict[str, Any]:
    """A scaling policy's signal: its group resized by a run of the stack; nothing,
    and ``changed: false``, when Heat's rules leave the group as it is."""
    signal = ScaleSignal(request.resource.strip("/"), request.data)
    apply = ApplyRequest(name=request.name, existing=True, check_mode=request.check_mode,
                         scale=signal, lock_timeout=request.lock_timeout, timeout=request.timeout,
                         cloud=request.cloud, host=request.host, cancel=request.cancel)
    try:
        applied = apply_stack(store, apply, request.holder, request.progress)
    except NoScaling as nothing:
        return {"changed": False, "resource": entry, "msg": str(nothing)}
    return {**applied.as_dict(), "resource": entry}
