# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.store_copy: copy stacks with their history
from one store to another."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    StackAction,
    open_task_store,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import (
    STORE_ENV_VAR,
    store_path_from_url,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.base import Store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.postgres import redact_url
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.copy import (
    CopyRequest,
    copy_stacks,
)

ARGUMENT_SPEC: dict[str, Any] = {
    "source": {"type": "str", "required": True},
    "target": {"type": "str"},
    "stacks": {"type": "list", "elements": "str", "default": []},
    "overwrite": {"type": "bool", "default": False},
    "lock_timeout": {"type": "int", "default": 0},
}


class ActionModule(StackAction):
    """Copy stacks, revisions, resources, events and hooks between two stores;
    check mode reports what would be copied."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    INTERRUPTIBLE = True

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        check = self.check_mode
        source_url, target_url = _urls(args)
        request = CopyRequest(stacks=args["stacks"], overwrite=args["overwrite"], check_mode=check,
                              lock_timeout=args["lock_timeout"], cancel=self.cancel.event)
        with _opened(source_url, target_url, check) as (source, target):
            copied = copy_stacks(source, target, request, self.holder)
        return {**copied.as_dict(), "msg": _summary(copied.stacks, source_url, target_url, check)}


def _urls(args: dict[str, Any]) -> tuple[str, str]:
    target = args["target"] or os.environ.get(STORE_ENV_VAR, "")
    if not target:
        raise HotplayError(f"store_copy needs a target store: the target option, or {STORE_ENV_VAR}")
    if args["source"].startswith("sqlite:") and not os.path.exists(store_path_from_url(args["source"])):
        raise HotplayError(f"the source store {args['source']} does not exist")
    return args["source"], target


@contextmanager
def _opened(source_url: str, target_url: str, check: bool) -> Iterator[tuple[Store, Store | None]]:
    """Both stores; in check mode a SQLite target that does not exist yet is not
    created (None: empty)."""
    with ExitStack() as stores:
        source = stores.enter_context(open_task_store(source_url))
        missing = target_url.startswith("sqlite:") and not os.path.exists(store_path_from_url(target_url))
        target = None if check and missing else stores.enter_context(open_task_store(target_url))
        yield source, target


def _summary(stacks: list[dict[str, Any]], source: str, target: str, check: bool) -> str:
    if not stacks:
        return f"no stack to copy in {redact_url(source)}"
    revisions = sum(s["revisions"] for s in stacks)
    deleted = sum(1 for s in stacks if s["deleted"])
    history = f", {deleted} of them deleted (history)" if deleted else ""
    verb = "would copy" if check else "copied"
    return (f"{verb} {len(stacks)} stacks{history} with {revisions} revisions from "
            f"{redact_url(source)} to {redact_url(target)}")
