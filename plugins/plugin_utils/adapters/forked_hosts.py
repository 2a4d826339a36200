# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inventory hosts as the engine's walk threads reach them: every call that runs
Ansible (a module, an ``ansible`` config's tasks, a host variable, a module's
documentation) goes to a process of its own through the task's fork server
(``forked_calls``), where a ``PlayHost`` made from the task's Ansible state runs
it single-threaded.  What one call learns that the next needs (the Python
interpreter found on a host) comes back with its answer and goes with the
next request; pacing of the calls to one remote host happens here, in the job.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import HotplayError
from .forked_calls import ForkServer

# Calls to one host over a network connection at once: each holds an ssh session
# on the shared ControlMaster while it runs, and sshd refuses more than its
# MaxSessions (10 by default) on one connection.
REMOTE_CALLS_PER_HOST = 8
# The calls a request may make of a host (nothing else runs in a served process),
# and the host's properties it may read.
CALLS = frozenset({"run_module", "run_tasks", "run_deployment", "module_options", "module_exists",
                   "module_no_log"})
PROPERTIES = frozenset({"state_dir"})


@dataclass(frozen=True)
class HostRequest:
    """One call of ``method`` on inventory host ``host``, with the facts the job
    learned of that host so far."""

    host: str
    method: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HostAnswer:
    """What the call returned, the host's facts after it, whether it reached the
    host through a local connection (None: it opened none), and the host's
    unreachable message when it was lost."""

    value: Any
    facts: Mapping[str, Any]
    local: bool | None
    unreachable: str = ""


class ServedHost(Protocol):
    """What a served process calls (``PlayHost`` with the module documentation
    reads of ``AnsibleHost``)."""

    name: str
    unreachable: str
    transport: str | None

    def on(self, hostname: str) -> ServedHost: ...

    def learned_facts(self) -> dict[str, Any]: ...

    def learn_facts(self, facts: Mapping[str, Any]) -> None: ...


def serve(root: ServedHost, request: HostRequest) -> HostAnswer:
    """Run ``request`` on a host reached from ``root`` (in a served process)."""
    if request.method not in CALLS | PROPERTIES:
        raise HotplayError(f"{request.method} is not a call a host serves")
    host = root.on(request.host)
    host.learn_facts(request.facts)
    try:
        value = getattr(host, request.method)
        if request.method in CALLS:
            value = value(*request.args, **request.kwargs)
    except HotplayError:
        if not host.unreachable:
            raise
        value = None
    local = None if host.transport is None else host.transport == "local"
    return HostAnswer(value, host.learned_facts(), local, host.unreachable)


class ForkedHost:
    """The engine's ``HostContext``: an inventory host whose calls run in
    processes of their own (``call`` sends one ``HostRequest``)."""

    def __init__(self, name: str, call: Callable[[HostRequest], HostAnswer],
                 inventory: frozenset[str] | None, localhost_names: frozenset[str],
                 modules: ModuleFacts | None = None) -> None:
        self.name = name
        self.unreachable = ""
        self._call = call
        self._modules = modules or ModuleFacts()
        self._inventory = inventory
        self._localhost_names = localhost_names
        self._facts: dict[str, Any] = {}
        self._local: bool | None = None
        self._lock = threading.Lock()
        self._others: dict[str, ForkedHost] = {}
        self._opening = threading.Lock()
        self._opened = threading.Event()
        self._remote_calls = threading.BoundedSemaphore(REMOTE_CALLS_PER_HOST)

    # -- the HostContext interface ---------------------------------------------------
    def on(self, hostname: str) -> ForkedHost:
        """The same, for another inventory host (``delegate_to`` semantics)."""
        if hostname == self.name:
            return self
        if self._inventory is not None and hostname not in self._inventory \
                and hostname not in self._localhost_names:
            raise HotplayError(f"server {hostname} is not a host of the inventory: add it (or let "
                               "the inventory plugin hotplay.stacks.stacks add it) to reach it")
        with self._lock:
            if hostname not in self._others:
                self._others[hostname] = ForkedHost(hostname, self._call, self._inventory,
                                                    self._localhost_names, self._modules)
            return self._others[hostname]

    @property
    def state_dir(self) -> str | None:
        value: str | None = self._request("state_dir")
        return value

    def run_module(self, module: str, arguments: Mapping[str, Any], *, check_mode: bool = False,
                   diff: bool = False, no_log: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = self._paced(lambda: self._request(
            "run_module", module, dict(arguments), check_mode=check_mode, diff=diff, no_log=no_log))
        return result

    def run_deployment(self, arguments: Mapping[str, Any], no_log: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = self._paced(
            lambda: self._request("run_deployment", dict(arguments), no_log=no_log))
        return result

    def run_tasks(self, tasks: list[Mapping[str, Any]], variables: Mapping[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._paced(
            lambda: self._request("run_tasks", list(tasks), dict(variables)))
        return result

    def report_unreachable(self, result: dict[str, Any]) -> None:
        """When the task's own host was lost, Ansible counts it unreachable (a
        rolling play stops there)."""
        if not self.unreachable:
            return
        # Ansible reports a result as unreachable only when it is not also failed.
        result.update(unreachable=True, failed=False,
                      msg=f"{result.get('msg', '')} ({self.unreachable})")

    # -- what the controller knows of modules (read once per run, in a served process) --
    def module_options(self, module: str) -> Mapping[str, Any] | None:
        options: Mapping[str, Any] | None = self._modules.read(
            "module_options", module, lambda: self._request("module_options", module))
        return options

    def module_exists(self, module: str) -> bool:
        return bool(self._modules.read("module_exists", module,
                                       lambda: self._request("module_exists", module)))

    def module_no_log(self, module: str) -> frozenset[str]:
        return frozenset(self._modules.read("module_no_log", module,
                                            lambda: self._request("module_no_log", module)))

    # -- calls ----------------------------------------------------------------------------
    def _request(self, method: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            facts = dict(self._facts)
        answer = self._call(HostRequest(self.name, method, args, kwargs, facts))
        with self._lock:
            self._facts.update(answer.facts)
            if answer.local is not None:
                self._local = answer.local
        if answer.unreachable:
            self.unreachable = answer.unreachable
            raise HostUnreachable(f"host {self.name} is unreachable: {answer.unreachable}")
        return answer.value

    def _paced(self, run: Callable[[], Any]) -> Any:
        """Until one call has reached the host, calls go one at a time (over ssh the
        first opens the ControlMaster the others then share: twenty handshakes at
        once would meet sshd's MaxStartups and be refused).  Then, over a network
        connection, at most REMOTE_CALLS_PER_HOST at once; through a local one,
        freely (the calls that waited for the first included)."""
        if not self._opened.is_set():
            with self._opening:
                if not self._opened.is_set():
                    result = run()
                    self._opened.set()  # a lost host raised HostUnreachable instead
                    return result
        if self._local:
            return run()
        with self._remote_calls:
            return run()


class ModuleFacts:
    """What the controller's plugins say of a module (its options, whether it
    exists, its no_log options), read once per run however many threads ask at once:
    reading a module's documentation costs a tenth of a second."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str], Any] = {}
        self._reading: dict[tuple[str, str], threading.Lock] = {}

    def read(self, what: str, module: str, read: Callable[[], Any]) -> Any:
        key = (what, module)
        with self._lock:
            if key in self._known:
                return self._known[key]
            reading = self._reading.setdefault(key, threading.Lock())
        with reading:  # one read; the others wait for it
            with self._lock:
                if key in self._known:
                    return self._known[key]
            value = read()
            with self._lock:
                self._known[key] = value
            return value


class HostUnreachable(HotplayError):
    """A host could not be reached while a deployment or module ran on it."""


def forked_host(root: ServedHost, inventory: frozenset[str] | None,
                localhost_names: frozenset[str]) -> tuple[ForkedHost, ForkServer | None]:
    """The play host for the engine, and the fork server that runs its calls
    (None when this process has threads already: calls then run in the caller's
    thread, one at a time, which is slower but as safe)."""
    server = ForkServer.start(lambda request: serve(root, request))
    if server is not None:
        return ForkedHost(root.name, server.call, inventory, localhost_names), server
    one_at_a_time = threading.Lock()

    def in_this_process(request: HostRequest) -> HostAnswer:
        with one_at_a_time:
            return serve(root, request)

    return ForkedHost(root.name, in_this_process, inventory, localhost_names), None
