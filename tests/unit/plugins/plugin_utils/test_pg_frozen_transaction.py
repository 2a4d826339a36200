# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PostgreSQL: a job frozen (SIGSTOP) inside a store transaction keeps its session
and the row locks of its open transaction, its stack's lease row among them.  On a
real server: another job needing that row waits a bounded time and fails naming
the store, the session and the job; other stacks go on; and once the server ends
the session (``idle_in_transaction_session_timeout``) the next job takes over."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import psycopg
import pytest
from pg_backends import pg_server, pg_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StoreBusy
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store, postgres
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.locking import acquire_waiting

# A job that holds stack web's lease and stops inside a write transaction.
STOPPED_INSIDE = """
import sys, time
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
store = open_store(sys.argv[1])
stack = store.create_stack("web")
store.acquire_lock("web", "job 1")
with store.transaction():
    store.add_event(stack.id, "web", "UPDATE", "IN_PROGRESS", "Stack UPDATE started")
    print("inside", flush=True)
    time.sleep(600)
"""
SHORT = "lock_lease=2&lock_renew=0.5"


@pytest.fixture
def stopped_inside(pg_url):
    """A job stopped (SIGSTOP) inside a transaction of stack web: its process."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    job = subprocess.Popen([sys.executable, "-c", STOPPED_INSIDE, f"{pg_url}?{SHORT}"],
                           stdout=subprocess.PIPE, text=True, env=environment)
    try:
        assert job.stdout.readline() == "inside\n"
        os.kill(job.pid, signal.SIGSTOP)
        yield job
    finally:
        job.kill()
        job.communicate()  # waits, and closes its pipes


def test_a_job_stopped_inside_a_transaction_is_waited_for_a_bounded_time_then_named(
        pg_url, stopped_inside, monkeypatch):
    monkeypatch.setattr(postgres, "LOCK_WAIT", 1.0)
    other = open_store(f"{pg_url}?{SHORT}")
    try:
        started = time.monotonic()
        with pytest.raises(StoreBusy) as refused:
            other.acquire_lock("web", "job 2")
        assert time.monotonic() - started < 10  # bounded, not for ever
        # An operator's break needs the same row: bounded too.
        with pytest.raises(StoreBusy):
            other.break_lock("web", "ops", "stuck")
        # Reading is not blocked, and another stack's lock is taken at once.
        assert other.lock_record("web").holder == "job 1"
        assert other.acquire_lock("db", "job 2") == 1
    finally:
        other.close()
    host = socket.gethostname()
    assert re.match(
        rf"^the store postgresql://\S+ is locked: session \d+ \(hotplay\.stacks pid {stopped_inside.pid} on "
        rf"{re.escape(host)}(?:, client \S+)?, in a transaction since \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ\), the "
        rf"job holding stack web's lock \(job 1, pid {stopped_inside.pid} on {re.escape(host)}\) has held a "
        r"row this run needs for over 1 s without finishing its transaction: a job stopped or hung "
        r"inside a write \(a paused VM, SIGSTOP, a hung controller\)\. Its session keeps the lock until "
        r"the server ends it \(set idle_in_transaction_session_timeout on the database, and the next "
        r"run takes the stack over once that job's lease has run out\) or it is ended: SELECT "
        r"pg_terminate_backend\(PID\); its unfinished write is rolled back$",
        str(refused.value)), str(refused.value)


def test_once_the_server_ends_the_stopped_session_the_next_job_takes_over(pg_server, pg_url):
    database = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_server["DATABASE_URL"], autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE \"{database}\" SET idle_in_transaction_session_timeout = '1s'")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    job = subprocess.Popen([sys.executable, "-c", STOPPED_INSIDE, f"{pg_url}?{SHORT}"],
                           stdout=subprocess.PIPE, text=True, env=environment)
    try:
        assert job.stdout.readline() == "inside\n"
        os.kill(job.pid, signal.SIGSTOP)
        taker = open_store(f"{pg_url}?{SHORT}")
        try:
            acquire_waiting(taker, "web", "job 2", wait=20)
            lease = taker.lock_record("web")
            stack = taker.find_stack("web")
            events = [e.status for e in taker.events(stack.id)]
        finally:
            taker.close()
        assert job.wait(timeout=10) == -signal.SIGKILL  # fenced: it runs on this host
    finally:
        if job.poll() is None:
            job.kill()
        job.communicate()  # waits, and closes its pipes
    assert lease.token == 2 and lease.holder == "job 2"
    assert re.match(r"^took over from job 1 \(pid \d+ on \S+, since \S+\), token 1: its lease ran out at "
                    r"\S+; fenced: stopped and killed its processes \d+ before this run acted$", lease.note)
    assert events == []  # the stopped job's unfinished write was rolled back with its session


def test_a_session_shown_with_no_transaction_start_is_named_all_the_same() -> None:
    """pg_stat_activity can show a session idle in a transaction with no
    ``xact_start`` (the transaction ending as the row is read): the message names it
    without a time instead of failing (seen once in CI, as an AttributeError)."""
    session = (11397, "hotplay.stacks pid 8207 on vm", "127.0.0.1", None)
    named = postgres._session_named(session, [("web", "job 1", "vm", 8207)])  # pylint: disable=protected-access
    assert named == ("session 11397 (hotplay.stacks pid 8207 on vm, client 127.0.0.1, in a transaction), "
                     "the job holding stack web's lock (job 1, pid 8207 on vm)")
