# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_lock: read a stack's lock, or break it."""

from __future__ import annotations

from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.locks import (
    LockRequest,
    stack_lock_task,
)

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "state": {"type": "str", "choices": ["query", "broken"], "default": "query"},
    "reason": {"type": "str", "default": ""},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
    # Not used here: accepted so that module_defaults can set cloud once for the
    # whole action group (Ansible gives a group's defaults to each of its actions).
    "cloud": {"type": "str"},
}


class ActionModule(StackAction):
    """Who holds a stack's lock and until when; with state=broken, end it."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        request = LockRequest(name=args["name"], state=args["state"], reason=args["reason"],
                              check_mode=self.check_mode)
        with self.task_store(args) as store:
            return stack_lock_task(store, request, self.holder)
