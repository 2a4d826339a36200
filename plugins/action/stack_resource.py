# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_resource: mark a resource unhealthy (or
healthy again), as Heat's ``openstack stack resource mark unhealthy``."""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.hotplay.stacks.plugins.plugin_utils._ansible import (
    STORE_KEY_OPTION,
    engine_failure,
    lock_holder,
    masked,
    open_task_store,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError, StackNotFound
from ansible_collections.hotplay.stacks.plugins.plugin_utils.health import HealthRequest, mark_resource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import SecretValues

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "resource": {"type": "str", "required": True},
    "healthy": {"type": "bool", "required": True},
    "reason": {"type": "str", "default": ""},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
}


class ActionModule(ActionBase):
    """Record a resource's health in the store; the next apply replaces an
    unhealthy one."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        del tmp
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        check = bool(self._task.check_mode)
        request = HealthRequest(name=args["name"], resource=args["resource"],
                                healthy=args["healthy"], reason=args["reason"], check_mode=check)
        secrets = SecretValues()
        try:
            with open_task_store(args["store"], args["store_key"]) as store:
                secrets = store.secrets
                stack = store.find_stack(args["name"])
                if stack is None:
                    raise StackNotFound.named(args["name"])
                # Marking rewrites the resource's record: its secrets need the key.
                store.unlock(args["name"], stack, run=not check)
                result.update(mark_resource(store, request, lock_holder(self._task)))
        except HotplayError as error:
            result.update(engine_failure(error))
        return masked(result, secrets)
