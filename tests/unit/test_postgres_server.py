# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tests' throwaway PostgreSQL server goes when the process that started it is
killed before it could stop it (a test run a time-out killed): nothing is left
running or on disk."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

TESTS = Path(__file__).resolve().parents[1]
HOLDER = """\
import json, sys, time
sys.path.insert(0, sys.argv[1])
from postgres_server import throwaway_postgres
with throwaway_postgres() as url:
    print(json.dumps(url), flush=True)
    time.sleep(600)
"""


def gone_within(seconds: float, check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.5)
    return False


def refuses(url: str) -> bool:
    try:
        psycopg.connect(url, connect_timeout=2).close()
    except psycopg.OperationalError:
        return True
    return False


def its_directory(url: str) -> Path:
    """The server's folder: the one whose postmaster.pid names its port."""
    port = url.rsplit(":", 1)[1].split("/")[0]
    [found] = [d for d in Path(tempfile.gettempdir()).glob("hotplay-pg-*")
               if (d / "data" / "postmaster.pid").exists()
               and port in (d / "data" / "postmaster.pid").read_text().splitlines()]
    return found


def test_a_server_whose_starter_was_killed_is_stopped_and_removed() -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(TESTS)], stdout=subprocess.PIPE, text=True)
    try:
        url = json.loads(holder.stdout.readline())
        psycopg.connect(url, connect_timeout=10).close()  # it runs
        directory = its_directory(url)
        os.kill(holder.pid, signal.SIGKILL)  # no clean-up of its own runs
    finally:
        holder.wait()
        holder.stdout.close()
    # Bounded waits (the reaper looks every 2 s), not timings: the server goes.
    assert gone_within(120, lambda: refuses(url)), f"{url} still answers"
    assert gone_within(60, lambda: not directory.exists()), f"{directory} is still there"
