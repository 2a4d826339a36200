# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_info: read-only views of the store."""

from __future__ import annotations

import json
from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
    engine_failure,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.drift import detect_drift, drifted
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    cloud_session,
    describe_stack,
    summarize_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.views import revision_diff
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    HotplayError,
    StackNotFound,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.private_files import write_private
from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.render import FORMATS
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.export import heat_abandon

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str"},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
    "nested_depth": {"type": "int", "default": 0},
    "events": {"type": "bool", "default": True},
    "graph": {"type": "str", "choices": list(FORMATS)},
    "compare_revisions": {"type": "list", "elements": "int"},
    "drift": {"type": "bool", "default": False},
    "format": {"type": "str", "choices": ["heat_abandon"]},
    "dest": {"type": "path"},
    "cloud": {"type": "str"},
}


class ActionModule(StackAction):
    """List stacks, or show one with its revisions, resources, events and outputs."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    REACHES_HOSTS = True  # drift reads run modules in check mode

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        with self.task_store(args) as store:
            shown = {"changed": False, **self._read(store, args)}
            if args["format"] and shown.get("exists"):
                shown["heat_abandon"] = self._export(store, args)
            if args["drift"] and shown.get("exists"):
                try:
                    with cloud_session(args["cloud"]) as session:
                        report = detect_drift(store, store.find_stack(args["name"]), self.host,
                                              session)
                except HotplayError as error:  # the stack is shown all the same
                    return {**shown, **engine_failure(error)}
                shown.update(drift=report, drifted=drifted(report))
        return shown

    def _export(self, store: Any, args: dict[str, Any]) -> dict[str, Any]:
        """Heat's abandon data of the stack; written to ``dest`` when given."""
        data = heat_abandon(store, args["name"])
        if args["dest"]:
            write_private(self._loader.path_dwim(args["dest"]), json.dumps(data, indent=1) + "\n")
        return data

    @staticmethod
    def _read(store: Any, args: dict[str, Any]) -> dict[str, Any]:
        if not args["name"]:
            stacks = store.list_stacks()
            for stack in stacks:  # checks the key, and learns what to mask
                store.unlock(stack.name, stack, run=False)
            return {"stacks": [summarize_stack(s) for s in stacks]}
        try:
            stack = describe_stack(store, args["name"], args["nested_depth"], args["events"],
                                   args["graph"] or "")
        except StackNotFound:
            return {"exists": False}
        shown: dict[str, Any] = {"exists": True, "stack": stack}
        compare = args["compare_revisions"]
        if compare:
            if len(compare) != 2:
                raise HotplayError("compare_revisions takes two revision numbers")
            shown["revision_diff"] = revision_diff(store, args["name"], compare[0], compare[1])
        return shown
