# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the action plugins share: their skeleton (``StackAction``), store opening
(with the store key), progress lines, lock holder names, error results, and masking
secrets in what a task shows.  With _play_hosts.py, the only engine-side code that
imports Ansible."""

from __future__ import annotations

import getpass
import importlib
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, ClassVar

import yaml
from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import action_loader, fragment_loader, module_loader
from ansible.utils.display import Display
from ansible.utils.plugin_docs import get_plugin_docs

from ansible import constants as C

from .forked_hosts import ForkedHost, forked_host, serve as serve_here
from .play_hosts import PlayHost
from ..errors import HotplayError, printable
from .child_processes import stop_child_processes
from .controller_watch import watching_controller
from .no_log_options import no_log_options
from ..model.plan import Plan
from ..run.guards import refusal_warnings
from ..secrets import SecretValues, StoreKey
from ..run.executor import Cancel, Event
from ..store import open_store
from ..store.sealed import SealedStore, sealed

# The ``store_key`` option every plugin that opens a store has (no_log: from Vault).
STORE_KEY_OPTION: dict[str, Any] = {"type": "str", "no_log": True}

_display = Display()
_docs_lock = threading.Lock()
_module_options: dict[str, Mapping[str, Any] | None] = {}
_module_found: dict[str, bool] = {}
_module_no_log: dict[str, frozenset[str]] = {}
_result_fields: dict[str, frozenset[str]] = {}


class AnsibleHost(PlayHost):
    """The play host, and what the controller knows about modules (their
    documented options), for module resources; served in a process of its own
    (``forked_hosts``)."""

    def module_options(self, module: str) -> Mapping[str, Any] | None:
        return module_options(module)

    def module_exists(self, module: str) -> bool:
        return module_exists(module)

    def module_no_log(self, module: str) -> frozenset[str]:
        """The options ``module``'s argument spec marks no_log (read once per run)."""
        with _docs_lock:
            if module not in _module_no_log:
                _module_no_log[module] = no_log_options(module)
            return _module_no_log[module]


def module_exists(module: str) -> bool:
    """Whether a module (or an action plugin, such as ansible.builtin.debug) of
    that name is installed where this run finds plugins."""
    with _docs_lock:
        if module not in _module_found:
            _module_found[module] = any(
                loader.find_plugin_with_context(module, collection_list=None).resolved
                for loader in (module_loader, action_loader))
        return _module_found[module]


def module_options(module: str) -> Mapping[str, Any] | None:
    """A module's documented options (read once per run), None when it has no
    readable documentation."""
    with _docs_lock:
        if module not in _module_options:
            _module_options[module] = _read_options(module)
        return _module_options[module]


def _read_options(module: str) -> Mapping[str, Any] | None:
    try:
        documentation = get_plugin_docs(module, "module", module_loader, fragment_loader, False)[0]
    except (AnsibleError, OSError, ValueError):
        return None  # unknown module or unreadable docs: running it will say what is wrong
    return dict(documentation.get("options") or {})


@contextmanager
def open_task_store(url: str | None, store_key: str | None = None) -> Iterator[SealedStore]:
    """The task's store; secrets sealed with ``store_key``, else ``$HOTPLAY_STORE_KEY``."""
    key = StoreKey.from_sources(store_key)
    store = sealed(open_store(url), key)
    try:
        yield store
    finally:
        store.close()


# What Ansible itself puts in a task result.
ANSIBLE_FIELDS = frozenset({"changed", "failed", "msg", "skipped", "skip_reason", "warnings",
                            "deprecations", "diff", "invocation", "exception", "before", "after"})


def masked(result: dict[str, Any], secrets: SecretValues,
           field_names: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The task result with every secret shown as ``******`` (msg, outputs, events,
    plan, diff, warnings: all of it), its own ``field_names`` left as they are."""
    shown: dict[str, Any] = secrets.mask(result, ANSIBLE_FIELDS | field_names)
    return shown


def result_field_names(module: str) -> frozenset[str]:
    """The field names of a module's documented result (``RETURN``, at any depth;
    ``module`` is the Python module of its documentation), read once per run."""
    with _docs_lock:
        if module not in _result_fields:
            _result_fields[module] = _read_result_fields(module)
        return _result_fields[module]


def _read_result_fields(module: str) -> frozenset[str]:
    try:
        documented = getattr(importlib.import_module(module), "RETURN", "") or ""
        # LibYAML's loader where PyYAML has it: a stack's RETURN took 24 ms in Python's.
        returned = yaml.load(documented, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # noqa: S506
    except (ImportError, yaml.YAMLError):
        return frozenset()
    names: set[str] = set()
    pending = [returned]
    while pending:
        fields = pending.pop()
        if isinstance(fields, Mapping):
            names.update(str(name) for name in fields)
            pending += [field.get("contains") for field in fields.values() if isinstance(field, Mapping)]
    return frozenset(names)


def native_data(value: Any) -> Any:
    """``value`` in Python's own types.  ansible-core hands over tagged subclasses
    (an int read from a playbook is an ``_AnsibleTaggedInt``), and a template's
    functions name a value's type in their errors as Heat does: ``-1 is type
    <class 'int'>``, not the tag's class."""
    if isinstance(value, bool) or value is None:
        return value
    for native in (str, int, float):
        if isinstance(value, native):
            return native(value)
    if isinstance(value, Mapping):
        return {native_data(k): native_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [native_data(item) for item in value]
    return value


def lock_holder(task: Any) -> str:
    """Who holds a stack's lock, as people will read it in a refusal."""
    job = os.environ.get("JOB_ID") or os.environ.get("AWX_JOB_ID")
    who = f"{getpass.getuser()}@{socket.gethostname()}"
    where = f"AWX job {job}" if job else "ansible-playbook"
    return f"{where} ({who}, task '{task.get_name()}')"


def progress_printer(stack_name: str, secrets: SecretValues) -> Callable[[Event], None]:
    """One line per resource action as it happens (ansible-playbook and AWX output),
    secrets masked, control characters (of a resource's name, a cloud's answer)
    escaped: the terminal or AWX's page would obey an ANSI escape."""

    def show(event: Event) -> None:
        record = event.record
        line = f"[{stack_name}] {event.resource_name}: {record.action}_{record.status}"
        if record.status == "FAILED" or record.reason not in ("state changed", ""):
            line += f" {record.reason}"
        _display.display(printable(secrets.mask_text(line)))

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
    """One loud line per deletion and replacement of a preview, and per change the
    apply would refuse."""
    return [
        f"PREVIEW: {change.path} ({change.type}) will be {change.action.upper()}: {change.reason}"
        for change in plan.changes if change.destructive
    ] + refusal_warnings(plan)


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


# The collection's root folder, and the environments shipped in it by the name a task
# gives them.
COLLECTION_ROOT = Path(__file__).resolve().parents[3]
SHIPPED_ENVIRONMENTS = {"hotplay.stacks.openstack": "environments/openstack/environment.yaml"}


class StackAction(ActionBase):  # type: ignore[misc]  # ansible-core has no type information
    """The skeleton of every hotplay.stacks action plugin: the arguments checked
    against ``ARGUMENT_SPEC``, the plugin's own ``perform``, a ``HotplayError``
    turned into one task failure, and the secrets of the store it opened masked in
    all the task shows.  Runs on the controller, check mode supported."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    ARGUMENT_SPEC: ClassVar[dict[str, Any]] = {}
    MUTUALLY_EXCLUSIVE: ClassVar[Sequence[Sequence[str]]] = ()
    # SIGTERM and SIGINT cancel ``self.cancel`` while ``perform`` runs (runs that
    # change stacks stop cleanly); other plugins keep Ansible's own handling.
    INTERRUPTIBLE: ClassVar[bool] = False
    # The plugin's engine calls may run modules on hosts from many threads: a fork
    # server, started while the task's process has one thread, runs each call.
    REACHES_HOSTS: ClassVar[bool] = False

    host: ForkedHost
    cancel: Cancel
    secrets: SecretValues

    def run(self, tmp: str | None = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        del tmp
        args = native_data(self.validate_argument_spec(
            argument_spec=self.ARGUMENT_SPEC, mutually_exclusive=list(self.MUTUALLY_EXCLUSIVE) or None
        )[1])
        self.cancel = Cancel()
        self.secrets = SecretValues()
        try:
            with ExitStack() as scope:
                spared = scope.enter_context(self._hosts(task_vars or {}))
                if self.INTERRUPTIBLE:
                    scope.enter_context(interruptible(self.cancel))
                    self.cancel.listeners.append(lambda _reason: stop_child_processes(spared=spared))
                    final_queue = getattr(_display, "_final_q", None)
                    if final_queue is not None:  # in an Ansible worker
                        scope.enter_context(watching_controller(final_queue, self.cancel.trigger))
                outcome = self.perform(args)
        except HotplayError as error:
            result.update(engine_failure(error))
        else:
            result.update(outcome)
        documentation = type(self).__module__.replace(".plugins.action.", ".plugins.modules.")
        return masked(result, self.secrets, result_field_names(documentation))

    @contextmanager
    def _hosts(self, task_vars: dict[str, Any]) -> Iterator[frozenset[int]]:
        """``self.host`` while the task runs; the processes a cancel must spare
        (the fork server: the calls it forked are stopped, it serves the rest)."""
        root = AnsibleHost(self, task_vars)
        hostvars = task_vars.get("hostvars")
        inventory = None if hostvars is None else frozenset(str(name) for name in hostvars)
        localhost = frozenset(C.LOCALHOST)
        if not self.REACHES_HOSTS:
            self.host = ForkedHost(root.name, lambda request: serve_here(root, request), inventory,
                                   localhost)
            yield frozenset()
            return
        self.host, server = forked_host(root, inventory, localhost)
        try:
            yield frozenset() if server is None else frozenset({server.pid})
        finally:
            if server is not None:
                server.close()

    def perform(self, args: dict[str, Any]) -> dict[str, Any]:
        """The plugin's own work: what to add to the task result."""
        raise NotImplementedError

    def local_path(self, path: str) -> str:
        """Relative paths are found as Ansible finds files: role, then playbook dir.
        A shipped environment is named by its FQCN (``hotplay.stacks.openstack``)."""
        if path in SHIPPED_ENVIRONMENTS:
            return str(COLLECTION_ROOT / SHIPPED_ENVIRONMENTS[path])
        return str(self._loader.path_dwim(path))

    @contextmanager
    def task_store(self, args: Mapping[str, Any]) -> Iterator[SealedStore]:
        """The store the task names (``store``, ``store_key``); its secrets are
        masked in the result."""
        with open_task_store(args["store"], args["store_key"]) as store:
            self.secrets = store.secrets
            yield store

    @property
    def check_mode(self) -> bool:
        return bool(self._task.check_mode)

    @property
    def holder(self) -> str:
        """Who this task is, in a lock refusal."""
        return lock_holder(self._task)
