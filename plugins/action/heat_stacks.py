# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.heat_stacks: a running Heat's stacks, listed, and
abandoned there on request (Heat forgets them, their resources kept)."""

from __future__ import annotations

import json
import os
from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import StackAction
from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.private_files import write_private
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.heat_api import heat_client

ARGUMENT_SPEC: dict[str, Any] = {
    "cloud": {"type": "str", "required": True},
    "abandon": {"type": "list", "elements": "str", "default": []},
    "dest": {"type": "path"},
}


class ActionModule(StackAction):
    """List the project's stacks in Heat; abandon the ones named in ``abandon``."""

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        if args["abandon"] and not args["dest"]:
            raise HotplayError("abandon needs dest: the folder where Heat's abandon data of each "
                               "stack is kept (what openstack stack adopt would need to take it back)")
        with heat_client(args["cloud"]) as heat:
            stacks = heat.list_stacks()
            known = {s["name"] for s in stacks}
            missing = sorted(set(args["abandon"]) - known)
            if missing:
                raise HotplayError(f"cloud {args['cloud']}: Heat has no stack {', '.join(missing)} "
                                   f"(it has: {', '.join(sorted(known)) or 'none'})")
            written = []
            if not self.check_mode:
                for name in args["abandon"]:
                    written.append(self._keep(args["dest"], name, heat.abandon(name)))
        abandoned = [] if self.check_mode else list(args["abandon"])
        return {"changed": bool(args["abandon"]), "stacks": stacks, "abandoned": abandoned,
                "abandon_files": written}

    def _keep(self, folder: str, name: str, data: dict[str, Any]) -> str:
        """Heat's abandon data of a stack it forgot, in ``folder/<name>.json`` (0600)."""
        folder = self._loader.path_dwim(folder)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, f"{name}.json")
        write_private(path, json.dumps(data, indent=1) + "\n")
        return path
