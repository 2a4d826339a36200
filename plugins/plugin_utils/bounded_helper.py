# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The helper process of ``bounded.py``: one computation at a time, within bounds.

``bounded.py`` starts this file as a script (``python -I bounded_helper.py
PATH...``) and never imports it.  It imports only the standard library, and
yaql, which it looks for in the interpreter's own site-packages and then in the
PATHs it is given (where the calling process found yaql).

The exchange, on standard input and output, is frames: an 8-byte big-endian
length, then a pickle.  On start the helper writes one frame, ``("ready", "")``.
Each request is ``(task, arguments, seconds, address_space)``; each answer is
``("ok", result)``, ``("memory", "")`` or ``("error", "Type: message")``.  Before
each computation the helper limits its own address space to what it maps now
plus ``address_space``.  It exits at the end of its input (its parent closed
the pipe or died), and after running out of memory (its heap may be left in
pieces).  Whoever calls it enforces the time limit, by killing it; the CPU limit
set here is only for a helper whose parent died while it computed.
"""

from __future__ import annotations

# yaql 3.x reads ``collections.abc`` without importing it.
import collections.abc  # noqa: F401 pylint: disable=unused-import
import math
import pickle
import re
import resource
import signal
import struct
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

HEADER = struct.Struct(">Q")
OUT_OF_MEMORY = pickle.dumps(("memory", ""))
# Heat's [yaql] limits, as limits.YAQL_LIMIT_ITERATORS and YAQL_MEMORY_QUOTA give them
# (this script imports nothing of the collection; a unit test checks they agree):
# their parser is built before the helper says it is ready.
HEAT_YAQL_LIMITS = (200, 10000)

_yaql_parsers: dict[tuple[int, int], Any] = {}
_yaql_root: list[Any] = []


def full_match(pattern: str, value: str) -> bool:
    """Heat's allowed_pattern test: ``re.match`` that reaches the end of the value."""
    match = re.match(pattern, value)
    return match is not None and match.end() == len(value)


def evaluate_yaql(expression: str, data: Any, limit_iterators: int, memory_quota: int) -> Any:
    """Heat's yaql function, with Heat's [yaql] limits."""
    key = (limit_iterators, memory_quota)
    if key not in _yaql_parsers:
        import yaql  # pylint: disable=import-outside-toplevel

        options = {"yaql.limitIterators": limit_iterators, "yaql.memoryQuota": memory_quota}
        _yaql_parsers[key] = yaql.YaqlFactory().create(options)
    return _yaql_parsers[key](expression).evaluate({"data": data}, _root_context().create_child_context())


def _root_context() -> Any:
    if not _yaql_root:
        import yaql  # pylint: disable=import-outside-toplevel

        _yaql_root.append(yaql.create_context())
    return _yaql_root[0]


TASKS: dict[str, Callable[..., Any]] = {"match": full_match, "yaql": evaluate_yaql}


def main(paths: list[str]) -> None:
    # Ctrl-C reaches the whole process group; stopping the helper is its parent's job.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.path.extend(path for path in paths if path not in sys.path)
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    _warm_up()
    _write(answers, pickle.dumps(("ready", "")))
    while True:
        request = _read(requests)
        if request is None:
            return
        payload = _answer(request)
        _write(answers, payload)
        if payload == OUT_OF_MEMORY:
            return


def _warm_up() -> None:
    """Import yaql, build its root context and the parser of Heat's limits now, so
    that the first expression's time limit is not spent on them (building the
    parser took more than a second of a loaded machine); the helper serves
    patterns without yaql."""
    try:
        evaluate_yaql("1", None, *HEAT_YAQL_LIMITS)
    except ImportError:
        pass


def _answer(request: bytes) -> bytes:
    """The pickled answer; a result that cannot be pickled is an error like any other."""
    try:
        task, arguments, seconds, address_space = pickle.loads(request)  # noqa: S301 - our parent
        _limit(seconds, address_space)
        return pickle.dumps(("ok", TASKS[task](*arguments)))
    except MemoryError:
        return OUT_OF_MEMORY
    except BaseException as error:  # noqa: BLE001 - whatever it is, said by the caller
        return pickle.dumps(("error", f"{type(error).__name__}: {error}"))


def _limit(seconds: float, address_space: int) -> None:
    """This much more address space than now, and a CPU limit past which the kernel
    stops the helper (SIGXCPU) should nobody be left to kill it."""
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            mapped = int(statm.read().split()[0]) * resource.getpagesize()
    except OSError:  # no /proc (not Linux): the time limit still holds
        mapped = None
    if mapped is not None:
        wanted = mapped + address_space
        resource.setrlimit(resource.RLIMIT_AS, (_within(wanted, hard), hard))
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(used.ru_utime + used.ru_stime + seconds) + 2
    cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    resource.setrlimit(resource.RLIMIT_CPU, (_within(cpu, cpu_hard), cpu_hard))


def _within(wanted: int, hard: int) -> int:
    """A soft limit may not exceed the hard one (a parent may have set one)."""
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def _read(stream: BinaryIO) -> bytes | None:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    body = stream.read(HEADER.unpack(header)[0])
    return body if len(body) == HEADER.unpack(header)[0] else None


def _write(stream: BinaryIO, payload: bytes) -> None:
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
