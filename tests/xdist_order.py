# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order the tests are handed to pytest-xdist's workers in: a pytest plugin that
scripts/test.sh loads (``-p xdist_order``; a plugin, not a conftest.py, whose module name
the test folders' own conftest.py files would share).

scripts/test.sh runs the tests with ``--dist loadgroup``: each worker takes the next test
as it finishes one (a module marked ``xdist_group`` goes to one worker whole, so that
its costly module fixture, SSH hosts or a Heat engine, starts once).  The tests marked
``slow`` (a minute or so each on these machines; ``slow(SECONDS)`` for a longer one) are
handed out first, the longest first: started last, one of them kept a worker busy for
minutes after the other had run out of tests.  A grouped test that pytest-xdist would hand
to any worker (it ignored the group) errors at its set-up, saying so."""

from __future__ import annotations

import pytest


def expected_seconds(item: pytest.Item) -> float:
    """What a slow test's marker says it takes (a minute when it does not say), 0 for the rest."""
    slow = item.get_closest_marker("slow")
    if slow is None:
        return 0
    return float(slow.args[0]) if slow.args else 60


def group_of(item: pytest.Item) -> str | None:
    group = item.get_closest_marker("xdist_group")
    if group is None:
        return None
    return str(group.args[0] if group.args else group.kwargs.get("name", "default"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first, the longest first; a group (one worker runs it whole,
    one test after another) by the sum of its tests' seconds: the tests of the Heat
    engine on the cloud, handed out last, kept one worker busy for minutes alone."""
    totals: dict[str, float] = {}
    for item in items:
        if (group := group_of(item)) is not None:
            totals[group] = totals.get(group, 0) + expected_seconds(item)

    def seconds(item: pytest.Item) -> float:
        group = group_of(item)
        return expected_seconds(item) if group is None else totals[group]

    items.sort(key=seconds, reverse=True)  # stable: the rest keep their order


LOST_GROUP = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_groups_held(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a worker, after pytest-xdist marked each grouped test's id with its group: a
    grouped test whose id lacks it is handed to any worker (pytest 9.2 with
    pytest-xdist 3.8.0 did that silently: requirements-dev.txt), and a test sharing a
    one-of-a-kind fixture (a Heat engine on the cloud) with a test in the other worker
    would fail far from the cause; such a test errors at its set-up, saying why."""
    if not hasattr(config, "workerinput") or not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        if group_of(item) is not None and "@" not in item.nodeid:
            item.stash[LOST_GROUP] = ("--dist loadgroup ignored this test's xdist_group (pytest-xdist "
                                      "and pytest disagree on node ids: see requirements-dev.txt)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if LOST_GROUP in item.stash:
        pytest.fail(item.stash[LOST_GROUP], pytrace=False)
