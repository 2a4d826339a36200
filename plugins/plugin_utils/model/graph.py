# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dependency graph: which node needs which, cycles, and the reverse order.

Nodes are any hashable keys (resource names, or ``(action, name)`` pairs for an
update).  ``requires[n]`` is the set of nodes that must finish before ``n``
starts.  Everything here is linear in nodes + edges.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

from ..errors import StackValidationFailed

Node = TypeVar("Node", bound=Hashable)


def normalise(requires: Mapping[Node, Iterable[Node]]) -> dict[Node, set[Node]]:
    """A copy with every mentioned node present as a key."""
    graph: dict[Node, set[Node]] = {node: set(needs) for node, needs in requires.items()}
    for needs in list(graph.values()):
        for node in needs:
            graph.setdefault(node, set())
    return graph


def reverse(requires: Mapping[Node, Iterable[Node]]) -> dict[Node, set[Node]]:
    """``required_by``: the order for deleting (dependants go first)."""
    reversed_graph: dict[Node, set[Node]] = {node: set() for node in requires}
    for node, needs in requires.items():
        for needed in needs:
            reversed_graph.setdefault(needed, set()).add(node)
    return reversed_graph


def find_cycle(requires: Mapping[Node, Iterable[Node]]) -> list[Node] | None:
    """One cycle as a list ``[a, b, ..., a]``, or None (iterative DFS, no recursion
    limit for 10,000-long chains)."""
    graph = normalise(requires)
    state: dict[Node, int] = {}  # 1: on the current path, 2: finished
    for start in graph:
        if start in state:
            continue
        path: list[Node] = [start]
        iterators = [iter(sorted(graph[start], key=str))]
        state[start] = 1
        while iterators:
            nxt = next(iterators[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iterators.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                iterators.append(iter(sorted(graph[nxt], key=str)))
    return None


def check_acyclic(requires: Mapping[Node, Iterable[Node]]) -> None:
    """Raise Heat's error when the graph has a cycle."""
    cycle = find_cycle(requires)
    if cycle:
        described = " --> ".join(str(node) for node in cycle)
        raise StackValidationFailed(f"Circular Dependency Found: {described}")


def topological_order(requires: Mapping[Node, Iterable[Node]]) -> list[Node]:
    """Nodes so that each comes after everything it requires (Kahn, stable)."""
    graph = normalise(requires)
    dependants = reverse(graph)
    waiting = {node: len(needs) for node, needs in graph.items()}
    ready = deque(node for node, count in waiting.items() if count == 0)
    order: list[Node] = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for dependant in dependants[node]:
            waiting[dependant] -= 1
            if waiting[dependant] == 0:
                ready.append(dependant)
    return order


def first_ready_order(requires: Mapping[Node, Iterable[Node]]) -> list[Node]:
    """Nodes so that each comes after everything it requires, taking each time the
    first ready node in the mapping's order (Heat's ``Graph.toposort``, which its
    Stack.validate walks): a node needed by an early node comes right before it."""
    graph = normalise(requires)
    dependants = reverse(graph)
    rank = {node: index for index, node in enumerate(graph)}
    waiting = {node: len(needs) for node, needs in graph.items()}
    ready = [rank[node] for node, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    nodes = list(graph)
    order: list[Node] = []
    while ready:
        node = nodes[heapq.heappop(ready)]
        order.append(node)
        for dependant in dependants[node]:
            waiting[dependant] -= 1
            if waiting[dependant] == 0:
                heapq.heappush(ready, rank[dependant])
    return order
