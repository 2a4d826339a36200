# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_signal: signal a resource of a stack, as
Heat's ``openstack stack resource signal``."""

from __future__ import annotations

from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackNotFound
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import (
    SignalRequest,
    signal_resource,
)

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "resource": {"type": "str", "required": True},
    "data": {"type": "raw"},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
    # Not used here: accepted so that module_defaults can set cloud once for the
    # whole action group (Ansible gives a group's defaults to each of its actions).
    "cloud": {"type": "str"},
}


class ActionModule(StackAction):
    """Record a signal to a resource (a wait condition handle) in the store."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        request = SignalRequest(name=args["name"], resource=args["resource"], data=args["data"],
                                check_mode=self.check_mode)
        with self.task_store(args) as store:
            stack = store.find_stack(args["name"])
            if stack is None:
                raise StackNotFound.named(args["name"])
            store.unlock(args["name"], stack, run=False)  # a wrong key is told here
            return signal_resource(store, request)
