# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a computation that hostile input could make endless, within bounds.

A yaql expression (``range(0, 10000000000).len()``) or a regular expression
(``(a+)+$``) can run for hours inside one C call or one Python loop, and a thread
cannot be stopped.  So the computation runs in a forked copy of this process,
with its address space limited, and is killed when its time is up; only its
result (or its error, as text) comes back.  Forking costs a few milliseconds,
which is why only such computations go this way.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import time
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")


class Exceeded(Exception):
    """The computation ran out of time or memory; the text says which."""


class Failed(Exception):
    """The computation raised; the text is the error's type and message."""


def run_bounded(call: Callable[[], T], seconds: float, address_space: int) -> T:
    """``call()`` in a forked child that may run ``seconds`` and map
    ``address_space`` bytes more than this process has now."""
    reader, writer = os.pipe()
    with warnings.catch_warnings():
        # Python warns that forking a multi-threaded process may deadlock the
        # child; ours runs only ``call``, which needs none of the locks other
        # threads may hold.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        os.close(reader)
        _child(call, writer, address_space)
    os.close(writer)
    done = False
    try:
        data, done = _read_until(reader, time.monotonic() + seconds)
    finally:
        os.close(reader)
        if not done:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if not done:
        raise Exceeded(f"did not finish within {seconds:g} seconds")
    if not data:
        raise Exceeded("was stopped by the system (out of memory?)")
    kind, value = pickle.loads(data)  # noqa: S301 - written by our own child
    if kind == "ok":
        return cast(T, value)  # what the child's computation returned
    if kind == "memory":
        raise Exceeded(f"needed more than {address_space // (1024 * 1024)} MiB of memory")
    raise Failed(value)


def _child(call: Callable[[], Any], writer: int, address_space: int) -> None:  # pragma: no cover
    try:
        _limit_address_space(address_space)
        answer: tuple[str, Any] = ("ok", call())
        payload = pickle.dumps(answer)
    except MemoryError:
        payload = pickle.dumps(("memory", ""))
    except BaseException as error:  # noqa: BLE001 - whatever it is, said in the parent
        payload = pickle.dumps(("error", f"{type(error).__name__}: {error}"))
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(writer, view):]
    finally:
        os._exit(0)  # pylint: disable=protected-access


def _limit_address_space(budget: int) -> None:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            mapped = int(statm.read().split()[0]) * resource.getpagesize()
    except OSError:  # no /proc (not Linux): the time limit still holds
        return
    limit = mapped + budget
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _read_until(fd: int, deadline: float) -> tuple[bytes, bool]:
    """What the child writes, and whether it finished before ``deadline``."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return b"", False
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)
