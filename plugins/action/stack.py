# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of hotplay.stacks.stack: a thin adapter to the engine."""

from __future__ import annotations

from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.action import (
    STORE_KEY_OPTION,
    StackAction,
    plan_diff,
    plan_warnings,
    progress_printer,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    RESTRICTED_MODES,
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.results import RETURN_RESOURCES, bad_sizes, trimmed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.hooks import HOOK_TYPES
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.walk import DEFAULT_WORKERS
from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.render import FORMATS


ARGUMENT_SPEC: dict[str, Any] = {
    "name": {"type": "str", "required": True},
    "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
    "template": {"type": "path"},
    "template_body": {"type": "raw"},
    "environment": {"type": "list", "elements": "path", "default": []},
    "parameters": {"type": "dict", "default": {}},
    "existing": {"type": "bool", "default": False},
    "clear_parameters": {"type": "list", "elements": "str", "default": []},
    "store": {"type": "str"},
    "store_key": STORE_KEY_OPTION,
    "nested_depth": {"type": "int", "default": 0},
    "plan_id": {"type": "str"},
    "prevent_destroy": {"type": "list", "elements": "str", "default": []},
    "on_restricted": {"type": "str", "choices": list(RESTRICTED_MODES), "default": "fail"},
    "timeout": {"type": "int", "default": 0},
    "graph": {"type": "str", "choices": list(FORMATS)},
    "rollback_on_failure": {"type": "bool", "default": False},
    "keep_replaced": {"type": "int", "default": 0},
    "converge": {"type": "bool", "default": False},
    "breakpoints": {
        "type": "list", "elements": "dict", "default": [],
        "options": {
            "resource": {"type": "str", "required": True},
            "hook": {"type": "list", "elements": "str", "required": True, "choices": list(HOOK_TYPES)},
        },
    },
    "wait_for_hooks": {"type": "int", "default": 0},
    "lock_timeout": {"type": "int", "default": 0},
    "file_roots": {"type": "list", "elements": "path", "default": []},
    "cloud": {"type": "str"},
    "tags": {"type": "list", "elements": "str"},
    "deletion_protection": {"type": "bool"},
    "parallelism": {"type": "int", "default": DEFAULT_WORKERS},
    "return_resources": {"type": "str", "choices": list(RETURN_RESOURCES), "default": "all"},
    "events_limit": {"type": "int"},
}
MUTUALLY_EXCLUSIVE = [("template", "template_body")]


class ActionModule(StackAction):
    """Apply (state=present) or delete (state=absent) a stack on the controller.

    In check mode it previews: the plan, nothing written."""

    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = MUTUALLY_EXCLUSIVE
    INTERRUPTIBLE = True
    REACHES_HOSTS = True
    _supports_diff = True

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        given_template = args["template"] or args["template_body"] is not None
        if args["state"] == "present" and not (given_template or args["existing"]):
            # required_if cannot say this: existing is a bool that is always set.
            return {"failed": True,
                    "msg": "state=present needs template (or template_body), or existing: true"}
        refused = bad_sizes(args)
        if refused:
            return {"failed": True, "msg": refused}
        with self.task_store(args) as store:
            outcome = self._apply_or_delete(store, args)
        self.host.report_unreachable(outcome)
        return trimmed(outcome, args["return_resources"], args["events_limit"])

    def _apply_or_delete(self, store: Any, args: dict[str, Any]) -> dict[str, Any]:
        holder, cancel, host, check = self.holder, self.cancel, self.host, self.check_mode
        progress = progress_printer(args["name"], store.secrets)
        if args["state"] == "absent":
            deletion = DeleteRequest(
                name=args["name"], nested_depth=args["nested_depth"], check_mode=check,
                plan_id=args["plan_id"], prevent_destroy=args["prevent_destroy"],
                timeout=args["timeout"], cancel=cancel, graph=args["graph"] or "",
                breakpoints=_breakpoints(args), wait_for_hooks=args["wait_for_hooks"],
                host=host, lock_timeout=args["lock_timeout"], cloud=args["cloud"],
                max_workers=args["parallelism"], deletion_protection=args["deletion_protection"],
            )
            deleted = delete_stack(store, deletion, holder, progress)
            return self._with_plan_views(deleted.as_dict(), deleted.plan, check)
        request = ApplyRequest(
            name=args["name"],
            template=self.local_path(args["template"]) if args["template"] else None,
            template_body=args["template_body"],
            template_base=self._loader.get_basedir(),
            environment=[self.local_path(p) for p in args["environment"]],
            parameters=args["parameters"],
            existing=args["existing"],
            clear_parameters=args["clear_parameters"],
            nested_depth=args["nested_depth"],
            check_mode=check,
            plan_id=args["plan_id"],
            prevent_destroy=args["prevent_destroy"],
            on_restricted=args["on_restricted"],
            timeout=args["timeout"],
            cancel=cancel,
            graph=args["graph"] or "",
            rollback_on_failure=args["rollback_on_failure"],
            keep_replaced=args["keep_replaced"],
            converge=args["converge"],
            breakpoints=_breakpoints(args),
            wait_for_hooks=args["wait_for_hooks"],
            host=host,
            lock_timeout=args["lock_timeout"],
            file_roots=[self.local_path(p) for p in args["file_roots"]],
            cloud=args["cloud"],
            max_workers=args["parallelism"],
            tags=args["tags"],
            deletion_protection=args["deletion_protection"],
        )
        applied = apply_stack(store, request, holder, progress)
        return self._with_plan_views(applied.as_dict(), applied.plan, check)

    def _with_plan_views(self, result: dict[str, Any], plan: Any, check: bool) -> dict[str, Any]:
        """Loud previews: a warning per deletion and replacement; ``--diff``."""
        if plan is None:
            return result
        if check:
            result["warnings"] = plan_warnings(plan)
        if self._task.diff:
            result["diff"] = plan_diff(plan)
        return result


def _breakpoints(args: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """(resource pattern, hook) pairs from the task's ``breakpoints``."""
    return tuple((entry["resource"], hook) for entry in args["breakpoints"] for hook in entry["hook"])
