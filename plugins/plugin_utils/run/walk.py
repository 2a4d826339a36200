# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run work over a dependency graph, in parallel wherever the edges allow.

A node starts as soon as everything it requires has succeeded.  When a node fails,
nothing new starts; work already running finishes (as Heat does), and the nodes
never started are reported so the caller can say so.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..errors import Paused
from ..model.graph import normalise, reverse

Node = TypeVar("Node", bound=Hashable)

# Handlers mostly wait (sleeps, remote calls), so more threads than cores pay off:
# a wide stack of resources that each wait 1 s finishes in about 1 s.
DEFAULT_WORKERS = 128
# How long the walk waits for work to finish before calling ``before_waiting``:
# completions that come in quick succession share one call (one store commit).
LINGER = 0.05


@dataclass
class TraversalResult(Generic[Node]):
    succeeded: list[Node] = field(default_factory=list)
    failed: list[Node] = field(default_factory=list)
    paused: list[Node] = field(default_factory=list)
    not_started: list[Node] = field(default_factory=list)
    errors: dict[Node, BaseException] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.not_started and not self.paused


def traverse(
    requires: Mapping[Node, Iterable[Node]],
    work: Callable[[Node], None],
    max_workers: int = DEFAULT_WORKERS,
    stop: threading.Event | None = None,
    before_waiting: Callable[[], None] = lambda: None,
) -> TraversalResult[Node]:
    """Call ``work(node)`` for every node after the nodes it requires.

    ``work`` signals failure by raising, and a pause by raising ``Paused`` (only
    its dependants wait).  Setting ``stop`` (a time-out, an interruption) keeps
    new nodes from starting, like a failure does.  ``before_waiting`` is called
    whenever the walk is about to wait for work to finish, and at its end (the
    executor commits the store writes it deferred).
    """
    graph = normalise(requires)
    dependants = reverse(graph)
    waiting = {node: len(needs) for node, needs in graph.items()}
    ready = [node for node, count in waiting.items() if count == 0]
    result: TraversalResult[Node] = TraversalResult()
    running: dict[Future[None], Node] = {}
    # Each future puts itself here when done: taking one completion costs O(1),
    # where waiting on every running future costs O(running) each time (a wide
    # stack is then quadratic).
    completed: queue.SimpleQueue[Future[None]] = queue.SimpleQueue()
    halted = False
    with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
        while ready or running:
            halted = halted or bool(result.failed) or bool(stop and stop.is_set())
            if not halted:
                for node in ready:
                    future = pool.submit(work, node)
                    running[future] = node
                    future.add_done_callback(completed.put)
                ready = []
            if not running:
                break
            for future in _completions(completed, before_waiting):
                ready.extend(_settle(running.pop(future), future, dependants, waiting, result))
    before_waiting()
    done = set(result.succeeded) | set(result.failed) | set(result.paused)
    result.not_started = [node for node in graph if node not in done]
    return result


def _completions(completed: queue.SimpleQueue[Future[None]],
                 before_waiting: Callable[[], None]) -> list[Future[None]]:
    """The next finished future (waiting for one), and every other finished already."""
    try:
        finished = [completed.get(timeout=LINGER)]
    except queue.Empty:
        before_waiting()
        finished = [completed.get()]
    while True:
        try:
            finished.append(completed.get_nowait())
        except queue.Empty:
            return finished


def _settle(node: Node, future: Future[None], dependants: Mapping[Node, Iterable[Node]],
            waiting: dict[Node, int], result: TraversalResult[Node]) -> list[Node]:
    """Record how ``node`` ended; the dependants it made ready."""
    error = future.exception()
    if isinstance(error, Paused):
        result.paused.append(node)
        return []
    if error is not None:
        result.failed.append(node)
        result.errors[node] = error
        return []
    result.succeeded.append(node)
    ready = []
    for dependant in dependants[node]:
        waiting[dependant] -= 1
        if waiting[dependant] == 0:
            ready.append(dependant)
    return ready
