# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack_adopt: record a stack of a running Heat
(its abandon data, from a file or from the cloud) as revision 1, resources kept."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
    progress_printer,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import (
    AbandonedStack,
    load_abandon_file,
    read_abandon,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
    AdoptRequest,
    adopt_stack,
    read_only_types,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.cloud_names import NameReader, name_reader
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.heat_api import heat_client

ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str"},
    "abandon_file": {"type": "path"},
    "cloud": {"type": "str"},
    "stack": {"type": "str"},
    "heat_data": {"type": "str", "choices": ["export", "resources"], "default": "export"},
    "template": {"type": "path"},
    "environment": {"type": "list", "elements": "path", "default": []},
    "parameters": {"type": "dict", "default": {}},
    "file_roots": {"type": "list", "elements": "path", "default": []},
    "nested_depth": {"type": "int", "default": 0},
    "unmanaged": {"type": "str", "choices": ["refuse", "read_only"], "default": "refuse"},
    "other_projects": {"type": "bool", "default": False},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
}


class ActionModule(StackAction):
    """Adopt a Heat stack; in check mode, show what would be adopted."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = (("abandon_file", "stack"),)
    REACHES_HOSTS = True  # adopted module resources run their modules

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        abandoned, source = self._abandoned(args)
        name = args["name"] or abandoned.name
        request = AdoptRequest(
            name=name, abandoned=abandoned, source=source,
            template=self.local_path(args["template"]) if args["template"] else None,
            environment=[self.local_path(p) for p in args["environment"]],
            parameters=args["parameters"],
            file_roots=[self.local_path(p) for p in args["file_roots"]],
            check_mode=self.check_mode, nested_depth=args["nested_depth"], host=self.host,
            unmanaged=args["unmanaged"], cloud=args["cloud"], other_projects=args["other_projects"],
        )
        with self.task_store(args) as store, self._names(args) as read_name:
            request = replace(request, read_name=read_name)
            adopted = adopt_stack(store, request, self.holder, progress_printer(name, store.secrets))
        result = adopted.as_dict()
        result.update(changed=True, heat_stack_id=abandoned.id, heat_stack_name=abandoned.name,
                      read_only_types=read_only_types(request))
        return result

    @staticmethod
    @contextmanager
    def _names(args: dict[str, Any]) -> Iterator[NameReader | None]:
        """What reads the names of the cloud's resources (a connection made only
        when a resource needs its name read)."""
        if not args["cloud"]:
            yield None
            return
        with ExitStack() as stack:
            def read(type_name: str, physical_id: str) -> str:
                if not opened:
                    opened.append(stack.enter_context(name_reader(args["cloud"])))
                return opened[0](type_name, physical_id)
            opened: list[NameReader] = []
            yield read

    def _abandoned(self, args: dict[str, Any]) -> tuple[AbandonedStack, str]:
        """Heat's abandon data, and where it came from (for messages)."""
        if args["abandon_file"]:
            path = self._loader.path_dwim(args["abandon_file"])
            return load_abandon_file(path), path
        if not (args["cloud"] and args["stack"]):
            # required_one_of and required_together, in one message
            raise HotplayError("stack_adopt needs abandon_file, or cloud and stack")
        source = f"cloud {args['cloud']}, stack {args['stack']}"
        with heat_client(args["cloud"]) as heat:
            read = heat.export if args["heat_data"] == "export" else heat.read
            return read_abandon(read(args["stack"]), source), source
