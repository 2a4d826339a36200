# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a computation that hostile input could make endless, within bounds.

A yaql expression (``range(0, 10000000000).len()``) can run for hours inside
one Python loop, and a thread cannot be stopped.  So it runs in a helper
process (``bounded_helper.py``), which limits its own address space and is
killed when its time is up; only its result (or its error, as text) comes back.

The helper is started with ``subprocess`` (fork and exec at once, from C: safe
in a process with many threads) and never by ``os.fork()`` of this interpreter,
whose copy would inherit locks that other threads hold (logging, imports, the
allocator) and could deadlock.  Helpers are kept and reused: starting one costs
tens of milliseconds, a computation in a warm one a fraction of a millisecond.
At most ``HELPERS_AT_ONCE`` run at a time (a thread that finds none free waits
for one; its time limit starts when it has one), ``IDLE_HELPERS`` wait for the
next computation, and all are killed when this interpreter exits.  An idle
helper exits by itself when its parent dies (the end of its input).

No thread is started and nothing here forks this interpreter.
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("bounded_helper.py")
# Computations at once: one a core, at most 8 (each helper maps tens of MiB and
# computes on a core of its own); helpers kept idle between them; how long a helper
# may take to start (Python and the yaql import; slow on a loaded machine).
HELPERS_AT_ONCE = max(2, min(8, os.cpu_count() or 2))
IDLE_HELPERS = min(4, HELPERS_AT_ONCE)
HELPER_START_SECONDS = 60.0
_HEADER_SIZE = 8


class Exceeded(Exception):
    """The computation ran out of time or memory; the text says which."""


class Failed(Exception):
    """The computation raised; the text is the error's type and message."""


def run_bounded(task: str, arguments: tuple[Any, ...], seconds: float, address_space: int) -> Any:
    """``TASKS[task](*arguments)`` of ``bounded_helper.py`` in a helper process that
    may run ``seconds`` and map ``address_space`` bytes more than it has now."""
    request = _frame(pickle.dumps((task, arguments, seconds, address_space)))
    helper = _POOL.take()
    reusable = False
    try:
        data, done = helper.exchange(request, time.monotonic() + seconds)
        kind, value = pickle.loads(data) if data else ("died", "")  # noqa: S301 - our helper
        reusable = kind in ("ok", "error")
    finally:
        _POOL.give(helper, reusable)
    if not done:
        raise Exceeded(f"did not finish within {seconds:g} seconds")
    if kind == "ok":
        return value
    if kind == "died":
        raise Exceeded("was stopped by the system (out of memory?)")
    if kind == "memory":
        raise Exceeded(f"needed more than {address_space // (1024 * 1024)} MiB of memory")
    raise Failed(value)


class _Helper:
    """One helper process and the two ends of its pipes."""

    def __init__(self) -> None:
        # -I: no environment variables, user site-packages or current directory
        # on the path; where this interpreter found yaql is passed on instead.
        command = [sys.executable, "-I", str(SCRIPT), *_search_path()]
        self.process = subprocess.Popen(  # noqa: S603 - our own script
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if self.process.stdin is None or self.process.stdout is None:  # never: both are pipes
            raise Failed("the helper process has no pipes")
        self._requests = self.process.stdin.fileno()
        self._answers = self.process.stdout.fileno()
        os.set_blocking(self._requests, False)

    def wait_ready(self) -> bool:
        data, done = self.exchange(b"", time.monotonic() + HELPER_START_SECONDS)
        return done and bool(data) and pickle.loads(data) == ("ready", "")  # noqa: S301

    def exchange(self, request: bytes, deadline: float) -> tuple[bytes, bool]:
        """Send ``request``, read one answer: (its pickle, or b"" if the helper
        died; whether it all happened before ``deadline``)."""
        view = memoryview(request)
        while view:
            if not _wait(self._requests, deadline, write=True):
                return b"", False
            try:
                view = view[os.write(self._requests, view):]
            except BlockingIOError:  # the pipe filled up between poll and write
                continue
            except BrokenPipeError:
                return b"", True
        header, done = _read_exactly(self._answers, _HEADER_SIZE, deadline)
        if not done or len(header) < _HEADER_SIZE:
            return b"", done
        body, done = _read_exactly(self._answers, int.from_bytes(header, "big"), deadline)
        return body, done

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Kill and reap (a helper still computing would not read a goodbye)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.close_pipes()

    def close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


class _Pool:
    """The helpers: idle ones to reuse, and how many there are in all."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._changed = threading.Condition()
        self._idle: list[_Helper] = []
        self._live: set[_Helper | _Placeholder] = set()

    def take(self) -> _Helper:
        with self._changed:
            while not self._idle and len(self._live) >= HELPERS_AT_ONCE:
                self._changed.wait()
            if self._idle:
                helper = self._idle.pop()
            else:
                helper = None
                self._live.add(placeholder := _Placeholder())
        if helper is not None:
            return helper if helper.alive() else self._replace(helper)
        return self._start(placeholder)

    def give(self, helper: _Helper, reusable: bool) -> None:
        with self._changed:
            keep = reusable and len(self._idle) < IDLE_HELPERS and helper in self._live
            if keep:
                self._idle.append(helper)
            else:
                self._live.discard(helper)
            self._changed.notify()
        if not keep:
            helper.stop()

    def stop_all(self) -> None:
        with self._changed:
            helpers = [helper for helper in self._live if isinstance(helper, _Helper)]
            self._idle.clear()
            self._live.clear()
        for helper in helpers:
            helper.stop()

    def forget(self) -> None:
        """In a forked child: the helpers are the parent's, to leave alone.  The
        child closes its copies of their pipes (so that a helper still sees the end
        of its input when the parent exits) and starts its own when it needs one."""
        inherited = [helper for helper in self._live if isinstance(helper, _Helper)]
        self._reset()  # a new lock too: a thread of the parent may have held the old one
        for helper in inherited:
            helper.close_pipes()
            _NOT_OURS.append(helper)  # never reaped, so never collected (and warned about)

    def _replace(self, dead: _Helper) -> _Helper:
        with self._changed:
            self._live.discard(dead)
            self._live.add(placeholder := _Placeholder())
        dead.stop()
        return self._start(placeholder)

    def _start(self, placeholder: _Placeholder) -> _Helper:
        helper: _Helper | None = None
        try:
            helper = _Helper()
            if not helper.wait_ready():
                raise Failed("the helper process did not start")
        except BaseException:
            with self._changed:
                self._live.discard(placeholder)
                self._changed.notify()
            if helper is not None:
                helper.stop()
            raise
        with self._changed:
            self._live.discard(placeholder)
            self._live.add(helper)
        return helper


class _Placeholder:
    """A helper being started: counted, not yet usable."""


def _search_path() -> list[str]:
    """Where this interpreter finds modules (yaql among them): the helper looks there
    after its own standard library and site-packages, which thus come first."""
    return [entry for entry in sys.path if entry and os.path.isabs(entry)]


def _frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(_HEADER_SIZE, "big") + payload


def _wait(fd: int, deadline: float, write: bool = False) -> bool:
    """Whether ``fd`` can be read (written) before ``deadline``; poll, not select,
    which fails on descriptors past 1023 (a busy worker may have that many)."""
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT if write else select.POLLIN)
    return bool(poller.poll(max(1, round(left * 1000))))


def _read_exactly(fd: int, size: int, deadline: float) -> tuple[bytes, bool]:
    """``size`` bytes (b"" if the helper died first), and whether in time."""
    chunks: list[bytes] = []
    while size:
        if not _wait(fd, deadline):
            return b"", False
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return b"", True
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks), True


_POOL = _Pool()
_NOT_OURS: list[_Helper] = []
atexit.register(_POOL.stop_all)
os.register_at_fork(after_in_child=_POOL.forget)
