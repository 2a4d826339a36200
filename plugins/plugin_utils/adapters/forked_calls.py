# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ansible's task machinery run in processes of its own, one per call (a fork server).

The engine walks a stack's graph with many threads; ansible-core's task machinery
(action handlers, connection plugins, templating, plugin loading) is written for
one thread per process: its templating keeps per-call context that two threads
interleave ("Out-of-order context deactivation detected").  And forking a process
that has threads may deadlock the child on a lock another thread held.

So the action plugin, while its process still has one thread, forks a small server
that owns a copy of the task's Ansible state and does nothing but fork: each call
from a walk thread is served by a child forked from that single-threaded server,
which runs the call in its own main thread (as ansible-core runs a task in a
worker process), sends the answer back and exits.  Calls run side by side, each
in a process of its own, and none of them ever shares ansible-core with a thread.

Each served call leads its own process group, so what it starts (the module on
localhost, an ssh client) is stopped with it; the server dies with the action
plugin's process, and a call with the server (Linux's parent-death signal), so no
module outlives the job that started it.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import pickle
import select
import signal
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from ..errors import HotplayError

# Linux's prctl option that sends a signal when the parent dies.
_PR_SET_PDEATHSIG = 1
_LENGTH = struct.Struct("!Q")
# How often the server looks for ended children to reap while it waits.
_REAP_SECONDS = 1.0


class CallLost(HotplayError):
    """The process serving a call ended without an answer (killed, out of memory)."""


class ForkServer:
    """A single-threaded copy of this process that serves each call in a child of
    its own; ``serve`` is what a child runs with the request."""

    def __init__(self, pid: int, control: socket.socket) -> None:
        self.pid = pid
        self._control = control
        self._closed = threading.Event()

    @classmethod
    def start(cls, serve: Callable[[Any], Any]) -> ForkServer | None:
        """The server, forked now; None when this process already has other
        threads (forking it could deadlock the copy: the caller then serves calls
        itself, one at a time)."""
        if threading.active_count() > 1:
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the server process (coverage does not follow it)
            ours.close()
            _serve_forever(theirs, serve, parent)
        theirs.close()
        return cls(pid, ours)

    def call(self, request: Any) -> Any:
        """``serve(request)`` in a process of its own: its value, or what it raised."""
        if self._closed.is_set():
            raise CallLost("the task is ending: no new call is started")
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with mine:
            with theirs:
                try:
                    socket.send_fds(self._control, [b"c"], [theirs.fileno()])
                except OSError as error:
                    raise CallLost(f"the process that serves Ansible calls is gone ({error})") from None
            _send_frame(mine, pickle.dumps(request))
            answer = _receive_all(mine)
        if not answer:
            raise CallLost("the process running the call ended without an answer "
                           "(killed, or out of memory)")
        kind, value = pickle.loads(answer)  # noqa: S301 - written by our own child
        if kind == "raise":
            raise value
        return value

    def close(self) -> None:
        """End the server (it stops every call still running) and reap it."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._control.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _serve_forever(control: socket.socket, serve: Callable[[Any], Any],
                   parent: int) -> NoReturn:  # pragma: no cover - runs in the server
    _die_with_parent(signal.SIGKILL, parent)
    # What the server holds is shared with each child until written to; the
    # collector would walk (and so write to, and copy) all of it in every child.
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C reaches the job's own process
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    children: set[int] = set()
    try:
        for channel in _requests(control, children):
            child = os.fork()
            if child == 0:
                control.close()
                _serve_one(channel, serve)
            os.close(channel)
            children.add(child)
    finally:
        # The job ended (or died): no call it started may go on.  A call that
        # ended leaves what it meant to leave (a service a shell module started).
        _reap(children)
        for child in children:
            with contextlib.suppress(OSError):
                os.killpg(child, signal.SIGKILL)
        os._exit(0)  # pylint: disable=protected-access


def _requests(control: socket.socket, children: set[int]) -> Iterator[int]:
    """The channel of each call, until the job closes its end (or dies)."""
    while True:
        ready = select.select([control], [], [], _REAP_SECONDS)[0]
        _reap(children)
        if not ready:
            continue
        try:
            message, channels = socket.recv_fds(control, 16, 1)[:2]
        except OSError:
            return
        if not message:
            return
        yield from channels


def _reap(children: set[int]) -> None:
    for child in list(children):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(child, os.WNOHANG)[0]:
                children.discard(child)


def _serve_one(channel: int, serve: Callable[[Any], Any]) -> NoReturn:  # pragma: no cover
    server = os.getppid()
    os.setpgid(0, 0)
    # The server's death (the job's) takes this call and all it started with it.
    signal.signal(signal.SIGHUP, _stop_own_group)
    _die_with_parent(signal.SIGHUP, server)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
        signal.signal(number, signal.SIG_DFL)
    with socket.socket(fileno=channel) as sock:
        try:
            reply: tuple[str, Any] = ("return", serve(pickle.loads(_receive_frame(sock))))  # noqa: S301
        except BaseException as error:  # noqa: BLE001 - whatever it is goes back to the caller
            reply = ("raise", error)
        sock.sendall(_pickled(reply))
    os._exit(0)  # pylint: disable=protected-access


def _pickled(reply: tuple[str, Any]) -> bytes:
    try:
        return pickle.dumps(reply)
    except Exception as error:  # noqa: BLE001 - an answer that cannot travel is said in words
        return pickle.dumps(("raise", HotplayError(f"{reply[1]!r} could not be returned: {error}")))


def _stop_own_group(_number: int, _frame: Any) -> None:  # pragma: no cover - in a served call
    os.killpg(0, signal.SIGKILL)


def _die_with_parent(number: int, parent: int) -> None:  # pragma: no cover - in a child
    """Linux sends ``number`` to this process when its parent ends; where prctl is
    not there, the server still ends when the job's end of its socket closes."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(number), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent ended before the setting took
        os.kill(os.getpid(), number)


def _send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_LENGTH.pack(len(data)) + data)


def _receive_frame(sock: socket.socket) -> bytes:
    size = _LENGTH.unpack(_receive_exactly(sock, _LENGTH.size))[0]
    return _receive_exactly(sock, size)


def _receive_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            raise CallLost("the caller went away")
        chunks += chunk
    return bytes(chunks)


def _receive_all(sock: socket.socket) -> bytes:
    chunks = bytearray()
    while chunk := sock.recv(1 << 20):
        chunks += chunk
    return bytes(chunks)
