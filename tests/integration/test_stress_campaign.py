# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stress campaign for module resources, reduced for CI: a few runs of a
stack of module resources on localhost and two SSH hosts, with CPU hogs beside
it, on SQLite and PostgreSQL (``HOTPLAY_STRESS_RUNS``, default 3, the last one
deleting; ``HOTPLAY_STRESS_RESOURCES``, default 40).  The full campaign:
``bash scripts/stress_campaign.sh``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import REPO
from ssh_hosts import start_hosts
from stress_campaign import run_campaign, summary

# The throwaway PostgreSQL server of the store suite (a module, not a conftest.py).
sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "plugin_utils"))
from pg_backends import pg_server, pg_url  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position


@pytest.mark.slow(300)
def test_module_resources_under_load_fail_nothing_warn_nothing_lose_nothing(
        tmp_path: Path, pg_url: str) -> None:
    runs = int(os.environ.get("HOTPLAY_STRESS_RUNS", "3"))
    count = int(os.environ.get("HOTPLAY_STRESS_RESOURCES", "40"))
    lines: list[str] = []
    hosts = start_hosts(2)
    try:
        backends = {"sqlite": f"sqlite:///{tmp_path / 'store.db'}", "postgresql": pg_url}
        results = run_campaign(runs, count, backends, tmp_path, hosts, 4, lines.append)
    finally:
        hosts.down()
    assert len(results) == 2 * runs
    assert not any(result.problems for result in results), "\n".join(lines) + "\n" + summary(results)
