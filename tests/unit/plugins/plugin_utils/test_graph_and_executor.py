# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dependency graph and the parallel traversal."""

from __future__ import annotations

import threading

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.walk import traverse
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.graph import (
    check_acyclic,
    find_cycle,
    reverse,
    topological_order,
)


def test_cycle_is_found_and_named():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    cycle = find_cycle(graph)
    assert cycle is not None and cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    with pytest.raises(StackValidationFailed, match="Circular Dependency Found: "):
        check_acyclic(graph)


def test_self_reference_is_a_cycle():
    assert find_cycle({"a": {"a"}}) == ["a", "a"]


def test_long_chain_has_no_recursion_limit():
    chain = {f"r{i}": {f"r{i - 1}"} if i else set() for i in range(20000)}
    assert find_cycle(chain) is None
    order = topological_order(chain)
    assert order[0] == "r0" and order[-1] == "r19999"


def test_reverse_gives_dependants():
    assert reverse({"b": {"a"}, "a": set()}) == {"a": {"b"}, "b": set()}


def test_traverse_respects_order_and_runs_independent_nodes_together():
    started = threading.Barrier(3, timeout=5)  # the three roots must overlap
    order: list[str] = []
    lock = threading.Lock()

    def work(node: str) -> None:
        if node.startswith("root"):
            started.wait()
        with lock:
            order.append(node)

    graph = {"root1": set(), "root2": set(), "root3": set(), "leaf": {"root1", "root2", "root3"}}
    result = traverse(graph, work)
    assert result.ok and order[-1] == "leaf"


def test_failure_stops_dependants_but_running_work_finishes():
    finished: list[str] = []
    slow_started = threading.Event()

    def work(node: str) -> None:
        if node == "bad":
            slow_started.wait(5)
            raise RuntimeError("boom")
        if node == "slow":
            slow_started.set()
            threading.Event().wait(0.2)
        finished.append(node)

    graph = {"bad": set(), "slow": set(), "after_bad": {"bad"}, "after_slow": {"slow"}}
    result = traverse(graph, work)
    assert result.failed == ["bad"] and isinstance(result.errors["bad"], RuntimeError)
    assert "slow" in finished
    assert set(result.not_started) == {"after_bad", "after_slow"}
    assert not result.ok


def test_stop_event_keeps_new_work_from_starting():
    stop = threading.Event()

    def work(node: str) -> None:
        stop.set()

    result = traverse({"a": set(), "b": {"a"}}, work, stop=stop)
    assert result.succeeded == ["a"] and result.not_started == ["b"]


def test_a_paused_node_holds_its_dependants_only():
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import Paused

    def work(node: str) -> None:
        if node == "hooked":
            raise Paused()

    graph = {"hooked": set(), "after_hooked": {"hooked"}, "free": set(), "after_free": {"free"}}
    result = traverse(graph, work)
    assert result.paused == ["hooked"] and result.failed == []
    assert set(result.succeeded) == {"free", "after_free"}
    assert result.not_started == ["after_hooked"] and not result.ok
