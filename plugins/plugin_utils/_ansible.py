# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the action plugins share: store opening, progress lines, lock holder
names and error results.  The only engine-side file that imports Ansible."""

from __future__ import annotations

import getpass
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ansible.errors import AnsibleConnectionFailure
from ansible.template import trust_as_template
from ansible.utils.display import Display

from .errors import HotplayError
from .plan import Plan
from .stack_run import Cancel, Event
from .store import open_store
from .store.base import Store

_display = Display()


@contextmanager
def open_task_store(url: str | None) -> Iterator[Store]:
    store = open_store(url)
    try:
        yield store
    finally:
        store.close()


def lock_holder(task: Any) -> str:
    """Who holds a stack's lock, as people will read it in a refusal."""
    job = os.environ.get("JOB_ID") or os.environ.get("AWX_JOB_ID")
    who = f"{getpass.getuser()}@{socket.gethostname()}"
    where = f"AWX job {job}" if job else "ansible-playbook"
    return f"{where} ({who}, task '{task.get_name()}')"


def progress_printer(stack_name: str) -> Callable[[Event], None]:
    """One line per resource action as it happens (ansible-playbook and AWX output)."""

    def show(event: Event) -> None:
        record = event.record
        line = f"[{stack_name}] {event.resource_name}: {record.action}_{record.status}"
        if record.status == "FAILED" or record.reason not in ("state changed", ""):
            line += f" {record.reason}"
        _display.display(line)

    return show


def engine_failure(error: HotplayError) -> dict[str, Any]:
    """A task failure for a user's mistake or a refusal: one message, no traceback."""
    return {"failed": True, "changed": False, "msg": str(error)}


@contextmanager
def interruptible(cancel: Cancel) -> Iterator[None]:
    """SIGTERM or SIGINT (an AWX cancel, Ctrl-C) stops the run cleanly: nothing new
    starts, waiting resources give up, the store says what happened."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGTERM, signal.SIGINT)
    previous = {number: signal.getsignal(number) for number in signals}

    def stop(number: int, _frame: Any) -> None:
        cancel.trigger(f"Interrupted by {signal.Signals(number).name}")

    for number in signals:
        signal.signal(number, stop)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def plan_warnings(plan: Plan) -> list[str]:
    """One loud line per deletion and replacement of a preview."""
    return [
        f"PREVIEW: {change.path} ({change.type}) will be {change.action.upper()}: {change.reason}"
        for change in plan.changes if change.destructive
    ]


def plan_diff(plan: Plan) -> list[dict[str, Any]]:
    """``--diff``: properties before and after, per changed resource."""
    return [
        {
            "before_header": f"{change.path} ({change.type})",
            "after_header": f"{change.path} ({change.type}) {change.action}",
            "before": dict(change.before or {}),
            "after": dict(change.after or {}),
        }
        for change in plan.changes if change.action != "unchanged"
    ]


class HostUnreachable(HotplayError):
    """The task's host could not be reached while a deployment ran on it."""


class PlayHost:
    """``HostContext`` for the engine: runs deployments on the task's host through
    the play's own connection.  One call at a time: an action plugin's connection
    and remote temporary directory are not made to be shared between threads."""

    def __init__(self, action: Any, task_vars: dict[str, Any]) -> None:
        self._action = action
        self._task_vars = task_vars
        self._lock = threading.Lock()
        self.name = str(task_vars.get("inventory_hostname", "localhost"))
        state_dir = task_vars.get("hotplay_state_dir")
        self.state_dir = action._templar.template(state_dir) if state_dir else None
        self.unreachable = ""

    def run_deployment(self, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self._module("hotplay.stacks.software_deployment", dict(arguments))
        if result.get("failed"):
            raise HotplayError(f"software_deployment on {self.name}: {result.get('msg')}")
        return result

    def run_tasks(self, tasks: list[dict[str, Any]], variables: dict[str, Any]) -> dict[str, Any]:
        """An ``ansible`` config: each task one module call, its arguments templated
        with the deployment's inputs; ``register: NAME`` makes an output."""
        outputs: dict[str, Any] = {}
        lines: list[str] = []
        templar = self._action._templar.copy_with_new_env(available_variables=dict(variables))
        for task in tasks:
            module, arguments = _task_call(task)
            result = self._task(module, templar.template(_trusted(arguments)))
            lines.append(f"{module}: {'changed' if result.get('changed') else 'ok'}")
            if task.get("register"):
                outputs[str(task["register"])] = _plain(result)
            if result.get("failed"):
                return {"deploy_status_code": 1, "deploy_stdout": "\n".join(lines),
                        "deploy_stderr": str(result.get("msg", "")), "outputs": outputs}
        return {"deploy_status_code": 0, "deploy_stdout": "\n".join(lines), "deploy_stderr": "",
                "outputs": outputs}

    def _module(self, name: str, arguments: Any) -> dict[str, Any]:
        with self._lock:
            try:
                result = self._action._execute_module(
                    module_name=name, module_args=arguments, task_vars=self._task_vars)
            except AnsibleConnectionFailure as error:
                result = {"unreachable": True, "msg": str(error)}
        return self._reached(result)

    def _reached(self, result: dict[str, Any]) -> dict[str, Any]:
        """The result, unless the host was lost (then HostUnreachable)."""
        if result.get("unreachable"):
            self.unreachable = str(result.get("msg", "unreachable"))
            raise HostUnreachable(f"host {self.name} is unreachable: {self.unreachable}")
        return result

    def _task(self, module: str, arguments: Any) -> dict[str, Any]:
        """One task as ansible-playbook runs it: through the module's action plugin
        when it has one (copy, template: they send files first), else the module."""
        action = self._action
        loader = action._shared_loader_obj.action_loader
        handler_name = module if loader.has_plugin(module, collection_list=None) else "ansible.legacy.normal"
        task = action._task.copy(exclude_parent=True, exclude_tasks=True)
        task.action, task.args = module, dict(arguments)
        task._resolved_action = module  # noqa: SLF001 - what TaskExecutor sets when it resolves
        handler = loader.get(handler_name, task=task, connection=action._connection,
                             play_context=action._play_context, loader=action._loader,
                             templar=action._templar, shared_loader_obj=action._shared_loader_obj)
        with self._lock:
            try:
                result = handler.run(task_vars=self._task_vars)
            except AnsibleConnectionFailure as error:
                result = {"unreachable": True, "msg": str(error)}
            finally:
                handler.cleanup()
        return self._reached(result)

    def report_unreachable(self, result: dict[str, Any]) -> None:
        """When the host was lost: Ansible counts the host unreachable (a rolling
        play stops there), and nothing is cleaned up on it (trying would fail again
        and replace the task's result with that failure)."""
        if not self.unreachable:
            return
        shell = getattr(self._action._connection, "_shell", None)
        if shell is not None:
            shell.tmpdir = None
        # Ansible reports a result as unreachable only when it is not also failed.
        result.update(unreachable=True, failed=False,
                      msg=f"{result.get('msg', '')} ({self.unreachable})")


def _trusted(value: Any) -> Any:
    """The config is the template author's content, like a playbook's: its strings
    may be templates (ansible-core only renders strings trusted as templates)."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {key: _trusted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_trusted(item) for item in value]
    return value


def _task_call(task: dict[str, Any]) -> tuple[str, Any]:
    calls = [key for key in task if key not in ("name", "register")]
    if len(calls) != 1:
        raise HotplayError(f"an ansible config task needs exactly one module: {sorted(task)}")
    return calls[0], task[calls[0]] or {}


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if not k.startswith("_ansible") and k != "invocation"}
