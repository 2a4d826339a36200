# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_hook: list, clear or step breakpoints."""

from __future__ import annotations

import fnmatch
from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackNotFound
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.hooks import (
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
    # Not used here: accepted so that module_defaults can set cloud once for the
    # whole action group (Ansible gives a group's defaults to each of its actions).
    "cloud": {"type": "str"},
}


class ActionModule(StackAction):
    """Pending hooks of a stack; clearing them lets the next run go past them."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        check_hook_names(args["hook"])
        with self.task_store(args) as store:
            return self._act(store, args)

    def _act(self, store: Any, args: dict[str, Any]) -> dict[str, Any]:
        stack = store.find_stack(args["name"])
        if stack is None:
            raise StackNotFound.named(args["name"])
        store.unlock(args["name"], stack, run=False)  # a wrong key is told here
        pending = [h.as_dict() for h in pending_hooks(store, stack)]
        if args["action"] == "list" or self.check_mode:
            matching = [h for h in pending if _matches(h, args)]
            would_change = args["action"] != "list" and (bool(matching) or args["action"] == "step")
            return {"changed": would_change, "hooks_pending": pending, "hooks": matching}
        cleared = clear_hooks(store, args["name"], args["resource"], args["hook"],
                              step=args["action"] == "step")
        left = [h.as_dict() for h in pending_hooks(store, stack)]
        return {"changed": bool(cleared) or args["action"] == "step",
                "hooks": [h.as_dict() for h in cleared], "hooks_pending": left}


def _matches(hook: dict[str, str], args: dict[str, Any]) -> bool:
    return fnmatch.fnmatchcase(hook["resource"], args["resource"]) and (
        not args["hook"] or hook["hook"] in args["hook"])
