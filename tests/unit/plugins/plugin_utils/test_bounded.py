# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bounded evaluation (bounded.py): yaql in reused helper processes, patterns
in-process; from many threads at once, never by forking the caller, and nothing
left running after a time-out."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils import bounded, bounded_helper
from ansible_collections.hotplay.stacks.plugins.plugin_utils.bounded import Exceeded, Failed, run_bounded
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions import base, yaql_function
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.parameters import patterns
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.parameters.constraints import AllowedPattern
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.parameters.types import _Invalid
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.versions import VERSIONS

MIB = 1024 * 1024
ENDLESS = "range(0, 100000000000).len()"


def yaql(expression: str, data: object = None) -> object:
    snippet = {"yaql": {"expression": expression, "data": data if data is not None else {}}}
    parsed = base.parse(VERSIONS["2021-04-16"].functions, None, snippet, "p")
    base.validate(parsed)
    return base.resolve(parsed)


def pattern_refusal(pattern: str, value: str) -> str:
    with pytest.raises(_Invalid) as info:
        AllowedPattern(pattern=pattern).validate(value, "string")
    return str(info.value)


def children() -> set[int]:
    """Processes whose parent is this one, zombies included (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.add(int(entry.name))
    return found


def idle_helpers() -> set[int]:
    return {helper.process.pid for helper in bounded._POOL._idle}  # pylint: disable=protected-access


@pytest.fixture(autouse=True)
def fresh_pool():
    """Each test starts its own helpers (and so goes through starting one)."""
    bounded._POOL.stop_all()  # pylint: disable=protected-access
    yield
    bounded._POOL.stop_all()  # pylint: disable=protected-access


def test_patterns_and_yaql_from_32_threads_at_once_warn_nothing_and_answer_right() -> None:
    def check(index: int) -> tuple[object, bool, str]:
        total = yaql("$.data.nums.sum()", {"nums": [index, 1, 2]})
        matches = patterns.full_match("[a-z]+-[0-9]+", f"host-{index}")
        refused = pattern_refusal("[a-z]+", f"host{index}")
        return total, matches, refused

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ThreadPoolExecutor(32) as pool:
            answers = list(pool.map(check, range(96)))
    assert answers == [(index + 3, True, f'"host{index}" does not match pattern "[a-z]+"')
                       for index in range(96)]
    assert len(bounded._POOL._live) <= bounded.HELPERS_AT_ONCE  # pylint: disable=protected-access


def test_evaluation_never_forks_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("os.fork() called during a bounded evaluation")

    monkeypatch.setattr(os, "fork", no_fork)
    assert yaql("$.data.s + '!'", {"s": "hi"}) == "hi!"
    assert patterns.full_match("[a-z]+", "abc")
    # A pattern that the regex package would unroll at compile goes to a helper.
    assert patterns.compiled_pattern("(?:a{1000}){1000}") is None
    assert not patterns.full_match("(?:a{1000}){1000}", "aaa")
    with pytest.raises(Exceeded, match="did not finish within 0.5 seconds"):
        run_bounded("yaql", (ENDLESS, {}, 200, 10000), 0.5, 512 * MIB)


def test_hostile_pattern_times_out_with_the_message_of_before() -> None:
    started = time.process_time()
    assert pattern_refusal("(a|aa)+$", "a" * 60 + "!") == (
        'matching the pattern "(a|aa)+$" did not finish within 2 seconds '
        "(a pattern that backtracks catastrophically?)")
    assert time.process_time() - started < 10


def test_hostile_yaql_times_out_and_leaves_no_helper_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaql_function, "YAQL_SECONDS", 1.0)
    before = children()
    with pytest.raises(StackValidationFailed, match=r"The expression did not finish within 1 seconds\."):
        yaql(ENDLESS)
    assert children() - before <= idle_helpers()
    monkeypatch.undo()  # the next one gets a helper (in the usual time: a loaded machine)
    assert yaql("$.data.n * 2", {"n": 21}) == 42


def test_the_helper_warms_up_the_parser_of_the_limits_the_engine_uses() -> None:
    assert bounded_helper.HEAT_YAQL_LIMITS == (yaql_function.LIMIT_ITERATORS, yaql_function.MEMORY_QUOTA)


def test_hostile_pattern_on_a_long_value_times_out_in_a_helper_and_leaves_none(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "PATTERN_SECONDS", 1.0)
    before = children()
    value = "a" * (patterns.PATTERN_IN_PROCESS_CHARS + 60) + "!"
    assert "did not finish within 1 seconds" in pattern_refusal("(a|aa)+$", value)
    assert children() - before <= idle_helpers()


def test_a_helper_killed_while_computing_is_stopped_by_the_system() -> None:
    yaql("1")  # a helper, idle now
    helper = next(iter(idle_helpers()))
    threading.Timer(0.5, os.kill, (helper, 9)).start()
    with pytest.raises(StackValidationFailed,
                       match=r"The expression was stopped by the system \(out of memory\?\)\."):
        yaql(ENDLESS)
    assert helper not in children()


def test_a_computation_past_its_address_space_is_refused() -> None:
    # yaql's own memory quota set past the address space: the helper's limit stops it.
    doubled = ("$.data.s + $.data.s", {"s": "a" * (20 * MIB)}, 200, 10**12)
    with pytest.raises(Exceeded, match="needed more than 1 MiB of memory"):
        run_bounded("yaql", doubled, 5.0, 1 * MIB)
    assert run_bounded("match", ("a+", "aaa"), 5.0, 1 * MIB)  # a new helper


def test_yaql_errors_and_results_are_the_values_of_before() -> None:
    assert yaql("$.data", {"t": (1, 2), "m": {"a": None}, "f": 1.5}) == {
        "t": [1, 2], "m": {"a": None}, "f": 1.5}
    with pytest.raises(Failed, match="^CollectionTooLargeException: Collection length exceeds 200"):
        run_bounded("yaql", ("range(1000).select($ * 2)", {}, 200, 10000), 5.0, 512 * MIB)


def test_idle_helpers_are_capped_and_reused() -> None:
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda index: yaql("$.data", index), range(64)))
    idle = idle_helpers()
    assert 0 < len(idle) <= bounded.IDLE_HELPERS
    yaql("1")
    assert idle_helpers() == idle


def test_an_idle_helper_exits_when_its_parent_dies() -> None:
    code = (
        "import os, sys\n"
        "from ansible_collections.hotplay.stacks.plugins.plugin_utils import bounded\n"
        "bounded.run_bounded('match', ('a', 'a'), 5.0, 64 << 20)\n"
        "print(bounded._POOL._idle[0].process.pid, flush=True)\n"
        "os._exit(0)\n"  # no atexit: the helper must see the end of its input
    )
    parent = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, timeout=120)
    helper = int(parent.stdout)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{helper}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{helper}").exists()


def test_a_forked_child_uses_its_own_helpers_and_leaves_the_parents() -> None:
    yaql("1")
    inherited = idle_helpers()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the test's own fork
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        ok = yaql("$.data + 1", 1) == 2 and not idle_helpers() & inherited
        os._exit(0 if ok else 1)
    assert os.waitpid(pid, 0)[1] == 0
    assert idle_helpers() == inherited
    assert yaql("$.data + 2", 1) == 3
