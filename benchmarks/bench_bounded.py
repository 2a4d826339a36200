#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print what one bounded check costs: an ``allowed_pattern`` match and a ``yaql``
evaluation, each with its time limit.

``fork per check (old)`` is the BASELINE: the approach hotplay.stacks used before
issue 27, copied here as it was (``_fork_per_check``) so that it can still be
measured.  Every check forks this process (engine imported, so as large as a small
Ansible worker), runs there and is read back through a pipe.  ``current`` is the code
in the collection, called the way the engine calls it: ``AllowedPattern.validate``
(the regex package, in-process) and the ``yaql`` function (helper processes, reused).
Each check uses a value not seen before (the pattern check caches answers).  One
helper is started before the figures; the threaded figure includes starting the
others.  ``sequential`` is one check after the other; ``N threads`` runs the same
number of checks from N threads at once (the engine walks a stack with a thread
pool) and prints wall time divided by checks.
Usage: PYTHONPATH=.build/collections .venv/bin/python benchmarks/bench_bounded.py [--n 200] [--threads 32]
"""

from __future__ import annotations

import argparse
import collections.abc  # noqa: F401 pylint: disable=unused-import  # yaql 3 needs it imported
import functools
import os
import pickle
import re
import resource
import select
import signal
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import yaql

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions import base
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.parameters.constraints import AllowedPattern
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.versions import VERSIONS
from ansible_collections.hotplay.stacks.plugins.plugin_utils.limits import (
    PATTERN_ADDRESS_SPACE,
    PATTERN_SECONDS,
    YAQL_ADDRESS_SPACE,
    YAQL_LIMIT_ITERATORS,
    YAQL_MEMORY_QUOTA,
    YAQL_SECONDS,
)

PATTERN = "[a-z][a-z0-9-]{0,62}"
EXPRESSION = "$.data.nums.where($ > 1).sum()"


# -- the old approach, as it was: fork this process for every check ------------------


def _fork_per_check(call: Callable[[], Any], seconds: float, address_space: int) -> Any:
    """OLD BASELINE (before issue 27): ``call()`` in a forked child."""
    reader, writer = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        os.close(reader)
        try:
            with open("/proc/self/statm", encoding="ascii") as statm:
                limit = int(statm.read().split()[0]) * resource.getpagesize() + address_space
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            payload = pickle.dumps(("ok", call()))
        except BaseException as error:  # noqa: BLE001 - as the old code did
            payload = pickle.dumps(("error", f"{type(error).__name__}: {error}"))
        view = memoryview(payload)
        while view:
            view = view[os.write(writer, view):]
        os._exit(0)  # pylint: disable=protected-access
    os.close(writer)
    chunks, deadline = [], time.monotonic() + seconds
    try:
        while select.select([reader], [], [], max(deadline - time.monotonic(), 0))[0]:
            chunk = os.read(reader, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        else:
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(reader)
        os.waitpid(pid, 0)
    return pickle.loads(b"".join(chunks))[1]  # noqa: S301 - our own child


def old_pattern(index: int) -> bool:
    value = f"host-{index}"

    def matches() -> bool:
        match = re.match(PATTERN, value)
        return match is not None and match.end() == len(value)

    return bool(_fork_per_check(matches, PATTERN_SECONDS, PATTERN_ADDRESS_SPACE))


@functools.cache
def _old_engine() -> tuple[Any, Any]:
    """The parser and root context the old code built once in the calling process."""
    options = {"yaql.limitIterators": YAQL_LIMIT_ITERATORS, "yaql.memoryQuota": YAQL_MEMORY_QUOTA}
    return yaql.YaqlFactory().create(options), yaql.create_context()


def old_yaql(index: int) -> Any:
    parser, root = _old_engine()
    statement = parser(EXPRESSION)
    data = {"nums": [1, 2, 3, index]}
    return _fork_per_check(lambda: statement.evaluate({"data": data}, root.create_child_context()),
                           YAQL_SECONDS, YAQL_ADDRESS_SPACE)


# -- the code in the collection, as the engine calls it ------------------------------


def current_pattern(index: int) -> bool:
    AllowedPattern(pattern=PATTERN).validate(f"host-{index}", "string")
    return True


def current_yaql(index: int) -> Any:
    snippet = {"yaql": {"expression": EXPRESSION, "data": {"nums": [1, 2, 3, index]}}}
    parsed = base.parse(VERSIONS["2021-04-16"].functions, None, snippet, "bench")
    base.validate(parsed)
    return base.resolve(parsed)


# -- measuring ------------------------------------------------------------------------


def per_check(check: Callable[[int], Any], count: int, threads: int, start: int) -> float:
    """Milliseconds of wall time per check, ``count`` checks from ``threads`` threads."""
    indexes = range(start, start + count)
    began = time.perf_counter()
    if threads == 1:
        for index in indexes:
            check(index)
    else:
        with warnings.catch_warnings(), ThreadPoolExecutor(threads) as pool:
            warnings.simplefilter("ignore", DeprecationWarning)  # the old code's fork
            list(pool.map(check, indexes))
    return (time.perf_counter() - began) * 1000 / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--n", type=int, default=200, help="checks per figure")
    parser.add_argument("--threads", type=int, default=32)
    args = parser.parse_args()
    rows = [("allowed_pattern", "fork per check (old)", old_pattern),
            ("allowed_pattern", "current", current_pattern),
            ("yaql", "fork per check (old)", old_yaql),
            ("yaql", "current", current_yaql)]
    current_pattern(-1), current_yaql(-1), old_yaql(-1)  # warm up: imports, first helper
    print(f"{'check':<16} {'approach':<22} {'sequential':>12} {str(args.threads) + ' threads':>12}")
    for offset, (kind, approach, check) in enumerate(rows):
        start = offset * 10 * args.n
        alone = per_check(check, args.n, 1, start)
        together = per_check(check, args.n, args.threads, start + 5 * args.n)
        print(f"{kind:<16} {approach:<22} {alone:>9.3f} ms {together:>9.3f} ms")


if __name__ == "__main__":
    main()
