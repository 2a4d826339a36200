# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_rollback: a thin adapter to the engine."""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.hotplay.stacks.plugins.plugin_utils._ansible import (
    STORE_KEY_OPTION,
    AnsibleHost,
    engine_failure,
    interruptible,
    lock_holder,
    masked,
    open_task_store,
    plan_diff,
    plan_warnings,
    progress_printer,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.rollback import (
    DEFAULT_MAX_AGE,
    RollbackRequest,
    rollback_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import SecretValues
from ansible_collections.hotplay.stacks.plugins.plugin_utils.stack_run import Cancel

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "revision": {"type": "int"},
    "before": {"type": "str"},
    "max_age": {"type": "int", "default": DEFAULT_MAX_AGE},
    "skip": {"type": "list", "elements": "str", "default": []},
    "parameters": {"type": "dict", "default": {}, "no_log": True},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
    "nested_depth": {"type": "int", "default": 0},
    "timeout": {"type": "int", "default": 0},
    "keep_replaced": {"type": "int", "default": 0},
    "lock_timeout": {"type": "int", "default": 0},
}
MUTUALLY_EXCLUSIVE = [("revision", "before")]


class ActionModule(ActionBase):
    """Roll a stack back to a recorded revision; check mode previews it."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_diff = True

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        del tmp
        args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC, mutually_exclusive=MUTUALLY_EXCLUSIVE
        )[1]
        cancel = Cancel()
        host = AnsibleHost(self, task_vars or {})
        request = RollbackRequest(
            name=args["name"], revision=args["revision"], before=args["before"],
            max_age=args["max_age"], skip=tuple(args["skip"]), parameters=args["parameters"],
            check_mode=bool(self._task.check_mode), nested_depth=args["nested_depth"],
            timeout=args["timeout"], keep_replaced=args["keep_replaced"], cancel=cancel,
            host=host, lock_timeout=args["lock_timeout"],
        )
        secrets = SecretValues()
        try:
            with interruptible(cancel), open_task_store(args["store"], args["store_key"]) as store:
                secrets = store.secrets
                outcome = rollback_stack(store, request, lock_holder(self._task),
                                         progress_printer(args["name"], secrets))
        except HotplayError as error:
            result.update(engine_failure(error))
            return masked(result, secrets)
        result.update(outcome.as_dict())
        if outcome.plan is not None and request.check_mode:
            result["warnings"] = plan_warnings(outcome.plan)
        if outcome.plan is not None and self._task.diff:
            result["diff"] = plan_diff(outcome.plan)
        host.report_unreachable(result)
        return masked(result, secrets)
