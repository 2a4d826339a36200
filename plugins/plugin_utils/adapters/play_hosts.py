# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reaching inventory hosts from an action plugin, the way ``delegate_to`` does.

A ``PlayHost`` runs in a process that has one thread, as ansible-core's task
machinery expects: a process the task's fork server made for one call
(``forked_hosts``), or the task's own while nothing else runs there.  Every call
gets a connection of its own, built from the target host's variables as
``TaskExecutor`` builds one, and an action handler of its own, so a stack can
reach other inventory hosts than the task's (a deployment group, a module
resource with ``host``).  With ssh the connections share ssh's ControlMaster
socket, so a new connection costs no new handshake."""

from __future__ import annotations

import base64
import contextvars
import os
import threading
from collections.abc import Mapping
from typing import Any

from ansible import constants as C
from ansible.errors import AnsibleConnectionFailure, AnsibleError, AnsibleValueOmittedError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.parsing.mod_args import RAW_PARAM_MODULES
from ansible.parsing.splitter import parse_kv
from ansible.plugins.loader import become_loader, connection_loader
from ansible.template import trust_as_template

from ..errors import HotplayError
from .forked_hosts import HostUnreachable
from .module_payloads import reuse_compiled_payloads


# Facts ansible-core learns of a host while it runs a module on it, which the
# next call to that host needs too (finding the interpreter costs a round trip).
LEARNED_FACTS_PREFIX = "discovered_interpreter_"


class PlayHost:
    """``HostContext`` for the engine: runs deployments, task lists and modules on an
    inventory host; by default the host the task runs for."""

    def __init__(self, action: Any, task_vars: dict[str, Any], hostname: str | None = None) -> None:
        self._action = action
        self._task_vars = task_vars
        own = str(task_vars.get("inventory_hostname", "localhost"))
        self.name = hostname or own
        self._own = self.name == own
        # Worker threads run handlers in a copy of the task's context (ansible-core
        # keeps the running task in a context variable).
        self._context = contextvars.copy_context()
        self._lock = threading.Lock()
        self._variables: dict[str, Any] | None = None
        self._others: dict[str, PlayHost] = {}
        self.unreachable = ""
        self.transport: str | None = None  # the connection's, once a call made one
        reuse_compiled_payloads()

    # -- the HostContext interface ---------------------------------------------------
    @property
    def state_dir(self) -> str | None:
        variables = self._connection_vars()
        value = variables.get("hotplay_state_dir")
        return str(self._templar(variables).template(value)) if value else None

    def on(self, hostname: str) -> PlayHost:
        """The same, for another inventory host (``delegate_to`` semantics)."""
        if hostname == self.name:
            return self
        known = self._task_vars.get("hostvars")
        if known is not None and hostname not in known and hostname not in C.LOCALHOST:
            raise HotplayError(f"server {hostname} is not a host of the inventory: add it (or let "
                               "the inventory plugin hotplay.stacks.stacks add it) to reach it")
        with self._lock:
            if hostname not in self._others:
                self._others[hostname] = PlayHost(self._action, self._task_vars, hostname)
            return self._others[hostname]

    def run_deployment(self, arguments: Mapping[str, Any], no_log: bool = False) -> dict[str, Any]:
        result = self.run_module("hotplay.stacks.software_deployment", arguments, no_log=no_log)
        if result.get("failed"):
            raise HotplayError(f"software_deployment on {self.name}: {result.get('msg')}")
        return result

    def run_module(self, module: str, arguments: Mapping[str, Any], *, check_mode: bool = False,
                   diff: bool = False, no_log: bool = False) -> dict[str, Any]:
        """One task as ansible-playbook runs it: through the module's action plugin
        when it has one (copy, template: they send files first), else the module.
        The result as the module gave it (``failed`` included); HostUnreachable when
        the host was lost.  ``no_log``: the arguments hold secrets (the module does
        not log to the host's syslog, diffs are hidden), as a task's ``no_log``."""
        task = self._action._task.copy(exclude_parent=True, exclude_tasks=True)
        task.action, task.args = module, dict(arguments)
        task._resolved_action = module  # noqa: SLF001 - what TaskExecutor sets when it resolves
        task.check_mode, task.diff = check_mode, diff
        task.no_log = bool(task.no_log or no_log)
        task.delegate_to = None if self._own else self.name
        variables = self._task_variables()
        cvars = self._connection_vars()
        try:
            handler = self._handler(task, variables, cvars)
            self.transport = str(getattr(handler._connection, "transport", "") or "")
            result = self._context.copy().run(self._run_handler, handler, variables)
        except AnsibleConnectionFailure as error:
            result = {"unreachable": True, "msg": str(error)}
        return self._reached(_with_message(result))

    def run_tasks(self, tasks: list[dict[str, Any]], variables: dict[str, Any]) -> dict[str, Any]:
        """An ``ansible`` config: each task one module call, its arguments (a map, or
        ``key=value`` text as a playbook writes them) templated with the deployment's
        inputs; ``register: NAME`` makes an output.  A config that names
        ``heat_outputs_path`` gets it, as Heat's ansible hook gives it: a path on the
        host whose ``<path>.NAME`` files are read back as the outputs."""
        if not _names_outputs_path(tasks):
            return self._run_task_list(tasks, dict(variables))
        made = self.run_module("ansible.builtin.tempfile", {"state": "directory",
                                                            "prefix": "hotplay-outputs-"})
        if made.get("failed") or not made.get("path"):
            return _task_failure([], "heat_outputs_path: cannot make a directory for the outputs on "
                                 f"{self.name}: {made.get('msg', '')}", {})
        folder = str(made["path"])
        try:
            result = self._run_task_list(tasks, {**variables, "heat_outputs_path": f"{folder}/outputs"})
            result["outputs"] = {**result["outputs"], **self._output_files(folder)}
            return result
        finally:
            self.run_module("ansible.builtin.file", {"path": folder, "state": "absent"})

    def _run_task_list(self, tasks: list[dict[str, Any]], variables: dict[str, Any]) -> dict[str, Any]:
        outputs: dict[str, Any] = {}
        lines: list[str] = []
        templar = self._action._templar.copy_with_new_env(available_variables=variables)
        for index, task in enumerate(tasks):
            module, arguments = _task_call(task)
            try:
                arguments = templar.template(_trusted(arguments))
            except AnsibleError as error:  # an undefined variable: the task's author's to fix
                where = f"task {index}" + (f" ({task['name']})" if task.get("name") else "")
                return _task_failure(lines, f"{where}: {error.message}", outputs)
            result = self.run_module(module, arguments)
            lines.append(f"{module}: {'changed' if result.get('changed') else 'ok'}")
            if task.get("register"):
                outputs[str(task["register"])] = _plain(result)
            if result.get("failed"):
                return _task_failure(lines, str(result.get("msg", "")), outputs)
        return {"deploy_status_code": 0, "deploy_stdout": "\n".join(lines), "deploy_stderr": "",
                "outputs": outputs}

    def _output_files(self, folder: str) -> dict[str, str]:
        """The ``outputs.NAME`` files the tasks wrote in ``folder``, by NAME."""
        found = self.run_module("ansible.builtin.find", {"paths": folder, "patterns": "outputs.*"})
        outputs: dict[str, str] = {}
        for entry in found.get("files") or []:
            path = str(entry.get("path", ""))
            read = self.run_module("ansible.builtin.slurp", {"src": path})
            if not read.get("failed"):
                name = os.path.basename(path)[len("outputs."):]
                outputs[name] = base64.b64decode(read.get("content", "")).decode("utf-8", "replace")
        return outputs

    def learned_facts(self) -> dict[str, Any]:
        """What ansible-core learned of the host so far that later calls reuse."""
        facts = self._connection_vars().get("ansible_facts") or {}
        return {key: value for key, value in facts.items() if str(key).startswith(LEARNED_FACTS_PREFIX)}

    def learn_facts(self, facts: Mapping[str, Any]) -> None:
        """Facts an earlier call learned (so ansible-core need not find them again)."""
        if facts:
            variables = self._connection_vars()
            variables["ansible_facts"] = {**(variables.get("ansible_facts") or {}), **facts}

    # -- variables ----------------------------------------------------------------------
    def _task_variables(self) -> dict[str, Any]:
        """The task_vars a handler runs with: the task's own, plus for another host
        its variables under ``ansible_delegated_vars`` as delegate_to gives them."""
        if self._own:
            return self._task_vars
        return {**self._task_vars, "ansible_delegated_vars": {self.name: self._connection_vars()}}

    def _connection_vars(self) -> dict[str, Any]:
        """The target host's variables (cached: interpreter discovery writes into them)."""
        if self._own:
            return self._task_vars
        with self._lock:
            if self._variables is None:
                self._variables = self._delegated_vars()
            return self._variables

    def _delegated_vars(self) -> dict[str, Any]:
        task = self._action._task
        manager = task.get_variable_manager()
        if manager is None:
            raise HotplayError(f"cannot reach host {self.name}: no inventory in this run")
        probe = task.copy(exclude_parent=False, exclude_tasks=True)
        probe.delegate_to = self.name
        delegated, name = manager.get_delegated_vars_and_hostname(self._action._templar, probe,
                                                                  self._task_vars)
        variables = dict(delegated["ansible_delegated_vars"][name])
        # The deployment's host is the target, not the task's host.
        variables["inventory_hostname"] = self.name
        variables["inventory_hostname_short"] = self.name.split(".")[0]
        return variables

    def _templar(self, variables: dict[str, Any]) -> Any:
        return self._action._templar.copy_with_new_env(available_variables=variables)

    # -- connection and handler ---------------------------------------------------------
    def _handler(self, task: Any, variables: dict[str, Any], cvars: dict[str, Any]) -> Any:
        templar = self._templar(cvars)
        play_context = self._action._play_context.set_task_and_variable_override(
            task=task, variables=variables, templar=templar)
        play_context.post_validate(templar=templar)
        if not play_context.remote_addr:
            play_context.remote_addr = cvars.get("ansible_host") or self.name
        connection = self._connection(task, play_context, cvars, templar)
        action = self._action
        loader = action._shared_loader_obj.action_loader
        handler_name = task.action if loader.has_plugin(task.action, collection_list=None) \
            else "ansible.legacy.normal"
        return loader.get(handler_name, task=task, connection=connection, play_context=play_context,
                          loader=action._loader, templar=templar,
                          shared_loader_obj=action._shared_loader_obj)

    def _connection(self, task: Any, play_context: Any, cvars: dict[str, Any], templar: Any) -> Any:
        """A new connection plugin for the target, configured as TaskExecutor's
        ``_get_connection`` and ``_set_connection_options`` configure one."""
        kind = _plugin_name(templar.template(cvars["ansible_connection"])) \
            if cvars.get("ansible_connection") is not None else self._default_connection(task)
        play_context.connection = kind
        connection = connection_loader.get(kind, play_context, new_stdin=None, task_uuid=task._uuid,
                                           ansible_playbook_pid=str(os.getppid()))
        if connection is None:
            raise HotplayError(f"the connection plugin '{kind}' of host {self.name} was not found")
        connection.set_become_plugin(_become_plugin(task, cvars, templar))
        if connection.become is not None:
            play_context.set_become_plugin(connection.become.name)
        play_context.set_attributes_from_plugin(connection)
        task_keys = task.dump_attrs()
        task_keys["timeout"] = play_context.timeout
        task_keys.pop("retries", None)
        if play_context.password:
            task_keys["password"] = play_context.password
        connection.set_options(task_keys=task_keys,
                               var_options=connection._resolve_option_variables(cvars, templar))
        _set_plugin_options(connection._shell, "shell", cvars, templar, task_keys)
        if connection.become is not None:
            if play_context.become_pass:
                task_keys["become_pass"] = play_context.become_pass
            _set_plugin_options(connection.become, "become", cvars, templar, task_keys)
        return connection

    def _default_connection(self, task: Any) -> str:
        """The connection keyword as the play set it (or ``-c``): the task's own
        now names the task host's resolved connection, which another host does not
        share (TaskExecutor records it there once resolved)."""
        if self._own:
            return str(task.connection)
        play = self._action._task.get_play()
        return str(getattr(play, "connection", None) or C.DEFAULT_TRANSPORT)

    @staticmethod
    def _run_handler(handler: Any, variables: dict[str, Any]) -> dict[str, Any]:
        try:
            result: dict[str, Any] = handler.run(task_vars=variables)
            return result
        finally:
            try:
                handler.cleanup()
            except AnsibleConnectionFailure:
                pass  # the host was lost: the run's own result says so
            handler._connection.close()

    def _reached(self, result: dict[str, Any]) -> dict[str, Any]:
        """The result, unless the host was lost (then HostUnreachable)."""
        if result.get("unreachable"):
            self.unreachable = str(result.get("msg", "unreachable"))
            raise HostUnreachable(f"host {self.name} is unreachable: {self.unreachable}")
        return result


def _with_message(result: dict[str, Any]) -> dict[str, Any]:
    """A module that raised gives, since ansible-core 2.19, no ``msg`` but an error
    summary under ``exception``: its message becomes the msg, as Ansible's own
    callback shows it."""
    summary = result.get("exception")
    if not result.get("failed") or result.get("msg") or summary is None:
        return result
    event = getattr(summary, "event", None)
    message = getattr(event, "msg", None) or getattr(summary, "error_message", None)
    return {**result, "msg": str(message)} if message else result


def _become_plugin(task: Any, cvars: dict[str, Any], templar: Any) -> Any:
    become = boolean(templar.template(cvars["ansible_become"])) \
        if cvars.get("ansible_become") is not None else task.become
    if not become:
        return None
    method = templar.template(cvars["ansible_become_method"]) \
        if cvars.get("ansible_become_method") else task.become_method
    plugin = become_loader.get(method)
    if plugin is None:
        raise AnsibleError(f"Invalid become method specified, could not find matching plugin: '{method}'")
    return plugin


def _plugin_name(name: str) -> str:
    """A plugin's name as its loader takes it.  After a loop's first item,
    ansible-core leaves the connection's Python module path in the host's
    ``ansible_connection`` (``ansible_collections.ansible.builtin.plugins.connection.local``),
    which the loader does not find; its FQCN is ``ansible.builtin.local``."""
    parts = name.split(".")
    if len(parts) == 6 and parts[0] == "ansible_collections" and parts[3] == "plugins":
        return ".".join((parts[1], parts[2], parts[5]))
    return name


def _set_plugin_options(plugin: Any, kind: str, cvars: dict[str, Any], templar: Any,
                        task_keys: dict[str, Any]) -> None:
    options = {}
    for name in C.config.get_plugin_vars(kind, plugin._load_name):
        if name in cvars:
            try:
                options[name] = templar.template(cvars[name])
            except AnsibleValueOmittedError:
                pass
    plugin.set_options(task_keys=task_keys, var_options=options)


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


def _task_call(task: Mapping[str, Any]) -> tuple[str, Any]:
    """The task's module and its arguments as a map (``key=value`` text parsed as
    ansible-playbook parses it; the free form of command, shell... as ``_raw_params``)."""
    calls = [key for key in task if key not in ("name", "register")]
    if len(calls) != 1:
        raise HotplayError(f"an ansible config task needs exactly one module: {sorted(task)}")
    module, arguments = calls[0], task[calls[0]]
    if isinstance(arguments, str):
        return module, parse_kv(arguments, check_raw=module in RAW_PARAM_MODULES)
    return module, arguments or {}


def _names_outputs_path(tasks: list[dict[str, Any]]) -> bool:
    return "heat_outputs_path" in repr(tasks)


def _task_failure(lines: list[str], message: str, outputs: dict[str, Any]) -> dict[str, Any]:
    return {"deploy_status_code": 1, "deploy_stdout": "\n".join(lines), "deploy_stderr": message,
            "outputs": outputs}


def _plain(result: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if not k.startswith("_ansible") and k != "invocation"}
