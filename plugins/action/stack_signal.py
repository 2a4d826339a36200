# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_signal: signal a resource of a stack, as
Heat's ``openstack stack resource signal``: a wait condition handle records it, a
scaling policy resizes its group (a run of the stack, under its lease)."""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
    progress_printer,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError, StackNotFound
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import (
    SignalRequest,
    signal_resource,
)

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str"},
    "resource": {"type": "str"},
    "url": {"type": "str"},
    "data": {"type": "raw"},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
    # What a scaling policy's run takes, as hotplay.stacks.stack's options.
    "cloud": {"type": "str"},
    "lock_timeout": {"type": "int", "default": 0},
    "timeout": {"type": "int", "default": 0},
}
MUTUALLY_EXCLUSIVE = [("url", "name"), ("url", "resource")]
# A scaling policy's signal_url and alarm_url (resources/autoscaling.signal_url).
URL = re.compile(r"hotplay://stacks/(?P<name>[^/]+)/resources/(?P<resource>.+)/signal")


class ActionModule(StackAction):
    """Record a signal to a resource (a wait condition handle) in the store, or
    resize the group of a scaling policy."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = MUTUALLY_EXCLUSIVE
    INTERRUPTIBLE = True
    REACHES_HOSTS = True  # a group's members may run modules on hosts

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        name, resource = _target(args)
        with self.task_store(args) as store:
            request = SignalRequest(
                name=name, resource=resource, data=args["data"], check_mode=self.check_mode,
                holder=self.holder, lock_timeout=args["lock_timeout"], timeout=args["timeout"],
                cloud=args["cloud"], host=self.host, cancel=self.cancel,
                progress=progress_printer(name, store.secrets))
            return self._signal(store, request)

    @staticmethod
    def _signal(store: Any, request: SignalRequest) -> dict[str, Any]:
        stack = store.find_stack(request.name)
        if stack is None:
            raise StackNotFound.named(request.name)
        store.unlock(request.name, stack, run=False)  # a wrong key is told here
        return signal_resource(store, request)


def _target(args: dict[str, Any]) -> tuple[str, str]:
    """The stack and resource: ``name`` and ``resource``, or a policy's ``url``."""
    if args["url"] is not None:
        match = URL.fullmatch(args["url"])
        if match is None:
            raise HotplayError(f"url {args['url']!r} is not a scaling policy's signal_url "
                               "(hotplay://stacks/STACK/resources/RESOURCE/signal)")
        return match["name"], match["resource"]
    if not (args["name"] and args["resource"]):
        raise HotplayError("stack_signal needs name and resource, or url")
    return args["name"], args["resource"]
