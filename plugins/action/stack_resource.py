# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_resource: mark a resource unhealthy (or
healthy again), as Heat's ``openstack stack resource mark unhealthy``."""

from __future__ import annotations

from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackNotFound
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.health import HealthRequest, mark_resource

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "resource": {"type": "str", "required": True},
    "healthy": {"type": "bool", "required": True},
    "reason": {"type": "str", "default": ""},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
    # Not used here: accepted so that module_defaults can set cloud once for the
    # whole action group (Ansible gives a group's defaults to each of its actions).
    "cloud": {"type": "str"},
}


class ActionModule(StackAction):
    """Record a resource's health in the store; the next apply replaces an
    unhealthy one."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        check = self.check_mode
        request = HealthRequest(name=args["name"], resource=args["resource"],
                                healthy=args["healthy"], reason=args["reason"], check_mode=check)
        with self.task_store(args) as store:
            stack = store.find_stack(args["name"])
            if stack is None:
                raise StackNotFound.named(args["name"])
            # Marking rewrites the resource's record: its secrets need the key.
            store.unlock(args["name"], stack, run=not check)
            return mark_resource(store, request, self.holder)
