# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack: a thin adapter to the engine."""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.hotplay.stacks.plugins.plugin_utils._ansible import (
    engine_failure,
    lock_holder,
    open_task_store,
    progress_printer,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.engine import (
    ApplyRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
    "template": {"type": "path"},
    "environment": {"type": "list", "elements": "path", "default": []},
    "parameters": {"type": "dict", "default": {}},
    "store": {"type": "str"},
    "nested_depth": {"type": "int", "default": 0},
}
REQUIRED_IF = [("state", "present", ["template"])]


class ActionModule(ActionBase):
    """Apply (state=present) or delete (state=absent) a stack on the controller."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = False

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        del tmp
        args = self.validate_argument_spec(
            argument_spec=ARGUMENT_SPEC, required_if=REQUIRED_IF
        )[1]
        try:
            with open_task_store(args["store"]) as store:
                outcome = self._apply_or_delete(store, args)
        except HotplayError as error:
            result.update(engine_failure(error))
            return result
        result.update(outcome)
        return result

    def _apply_or_delete(self, store: Any, args: dict[str, Any]) -> dict[str, Any]:
        holder = lock_holder(self._task)
        progress = progress_printer(args["name"])
        if args["state"] == "absent":
            return delete_stack(store, args["name"], holder, args["nested_depth"], progress).as_dict()
        request = ApplyRequest(
            name=args["name"],
            template=self._local_path(args["template"]),
            environment=[self._local_path(p) for p in args["environment"]],
            parameters=args["parameters"],
            nested_depth=args["nested_depth"],
        )
        return apply_stack(store, request, holder, progress).as_dict()

    def _local_path(self, path: str) -> str:
        """Relative paths are found as Ansible finds files: role, then playbook dir."""
        return self._loader.path_dwim(path)
