# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_hook: list, clear or step breakpoints."""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase

from ansible_collections.hotplay.stacks.plugins.plugin_utils._ansible import (
    STORE_KEY_OPTION,
    engine_failure,
    masked,
    open_task_store,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import SecretValues
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    HotplayError,
    StackNotFound,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.hooks import (
    HOOK_TYPES,
    check_hook_names,
    clear_hooks,
    pending_hooks,
)

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "action": {"type": "str", "choices": ["list", "clear", "step"], "default": "list"},
    "resource": {"type": "str", "default": "*"},
    "hook": {"type": "list", "elements": "str", "choices": list(HOOK_TYPES), "default": []},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
}


class ActionModule(ActionBase):
    """Pending hooks of a stack; clearing them lets the next run go past them."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        del tmp
        args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)[1]
        secrets = SecretValues()
        try:
            check_hook_names(args["hook"])
            with open_task_store(args["store"], args["store_key"]) as store:
                secrets = store.secrets
                result.update(self._act(store, args))
        except HotplayError as error:
            result.update(engine_failure(error))
        return masked(result, secrets)

    def _act(self, store: Any, args: dict[str, Any]) -> dict[str, Any]:
        stack = store.find_stack(args["name"])
        if stack is None:
            raise StackNotFound.named(args["name"])
        store.unlock(args["name"], stack, run=False)  # a wrong key is told here
        pending = [h.as_dict() for h in pending_hooks(store, stack)]
        if args["action"] == "list" or self._task.check_mode:
            matching = [h for h in pending if _matches(h, args)]
            would_change = args["action"] != "list" and (bool(matching) or args["action"] == "step")
            return {"changed": would_change, "hooks_pending": pending, "hooks": matching}
        cleared = clear_hooks(store, args["name"], args["resource"], args["hook"],
                              step=args["action"] == "step")
        left = [h.as_dict() for h in pending_hooks(store, stack)]
        return {"changed": bool(cleared) or args["action"] == "step",
                "hooks": [h.as_dict() for h in cleared], "hooks_pending": left}


def _matches(hook: dict[str, str], args: dict[str, Any]) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(hook["resource"], args["resource"]) and (
        not args["hook"] or hook["hook"] in args["hook"])
