# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_rollback: a thin adapter to the engine."""

from __future__ import annotations

from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
    plan_diff,
    plan_warnings,
    progress_printer,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.results import RETURN_RESOURCES, bad_sizes, trimmed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.walk import DEFAULT_WORKERS
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.rollback import (
    DEFAULT_MAX_AGE,
    RollbackRequest,
    rollback_stack,
)

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
    "cloud": {"type": "str"},
    "parallelism": {"type": "int", "default": DEFAULT_WORKERS},
    "return_resources": {"type": "str", "choices": list(RETURN_RESOURCES), "default": "all"},
    "events_limit": {"type": "int"},
}
MUTUALLY_EXCLUSIVE = [("revision", "before")]


class ActionModule(StackAction):
    """Roll a stack back to a recorded revision; check mode previews it."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = MUTUALLY_EXCLUSIVE
    INTERRUPTIBLE = True
    REACHES_HOSTS = True
    _supports_diff = True

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        refused = bad_sizes(args)
        if refused:
            return {"failed": True, "msg": refused}
        request = RollbackRequest(
            name=args["name"], revision=args["revision"], before=args["before"],
            max_age=args["max_age"], skip=tuple(args["skip"]), parameters=args["parameters"],
            check_mode=self.check_mode, nested_depth=args["nested_depth"],
            timeout=args["timeout"], keep_replaced=args["keep_replaced"], cancel=self.cancel,
            host=self.host, lock_timeout=args["lock_timeout"], cloud=args["cloud"],
            max_workers=args["parallelism"],
        )
        with self.task_store(args) as store:
            outcome = rollback_stack(store, request, self.holder,
                                     progress_printer(args["name"], self.secrets))
        shown = outcome.as_dict()
        if outcome.plan is not None and request.check_mode:
            shown["warnings"] = plan_warnings(outcome.plan)
        if outcome.plan is not None and self._task.diff:
            shown["diff"] = plan_diff(outcome.plan)
        self.host.report_unreachable(shown)
        return trimmed(shown, args["return_resources"], args["events_limit"])
