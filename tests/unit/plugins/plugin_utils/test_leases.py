# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stack locks as leases with fencing tokens, the same on SQLite and PostgreSQL.

A holder "elsewhere" (another machine, another PID namespace) is made by writing a
foreign ``pid_space`` into its lease row: this process then cannot see whether it
lives, which is the case the lease is for.  Short leases keep the tests quick."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time

import pytest
from pg_backends import pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import LockLost, StackLocked, StoreError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import lease_terms_of, open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.base import LeaseTerms
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.locking import stack_lock

SHORT = "lock_lease=1&lock_renew=0.2"


def _open(store_url: str, options: str = SHORT):
    return open_store(f"{store_url}?{options}")


def _elsewhere(store, stack: str) -> None:
    """Make the lease's holder one this process cannot see (another container)."""
    store._change("UPDATE leases SET pid_space = 'another-boot pid:[1]' WHERE stack_name = ?",  # pylint: disable=protected-access
                  (stack,))


def _run_out(store, stack: str) -> None:
    """The holder stopped renewing a while ago: its lease has run out."""
    store._change("UPDATE leases SET expires = expires - 3600 WHERE stack_name = ?", (stack,))  # pylint: disable=protected-access


@pytest.fixture
def two_stores(store_url):
    first, second = _open(store_url), _open(store_url)
    yield first, second
    first.close()
    second.close()


def test_tokens_grow_with_every_acquisition(two_stores):
    first, second = two_stores
    assert first.acquire_lock("web", "job 1") == 1
    first.release_lock("web", "job 1")
    assert second.acquire_lock("web", "job 2") == 2
    assert first.acquire_lock("db", "job 3") == 1  # each stack its own
    second.release_lock("web", "job 2")
    lease = first.lock_record("web")
    assert lease.token == 2 and lease.holder == "job 2" and not lease.held


def test_a_held_lease_elsewhere_is_never_taken_an_expired_one_is(two_stores):
    first, second = two_stores
    first.acquire_lock("web", "job 1")
    _elsewhere(first, "web")
    with pytest.raises(StackLocked, match=r'^Stack "web" is locked by job 1 \(pid \d+ on \S+, since '
                                          r'.*\); its lease runs until \d{4}-.*Z unless renewed$'):
        second.acquire_lock("web", "job 2")
    _run_out(first, "web")
    assert second.acquire_lock("web", "job 2") == 2
    lease = second.lock_record("web")
    assert lease.holder == "job 2" and lease.held
    assert lease.note.startswith("took over from job 1 (pid ") and "its lease ran out at " in lease.note


def test_a_dead_holder_in_this_pid_namespace_is_taken_over_at_once(two_stores):
    first, second = two_stores
    first.acquire_lock("web", "job 1")
    first._change("UPDATE leases SET pid_start = 'not this process' WHERE stack_name = 'web'")  # pylint: disable=protected-access
    assert second.acquire_lock("web", "job 2") == 2
    assert "its process is gone" in second.lock_record("web").note


def test_a_run_whose_lease_was_taken_over_writes_nothing_more(two_stores):
    first, second = two_stores
    stack = first.create_stack("web")
    first.acquire_lock("web", "job 1")
    first.add_event(stack.id, "a", "CREATE", "IN_PROGRESS", "state changed")  # still its own
    _elsewhere(first, "web")
    _run_out(first, "web")
    second.acquire_lock("web", "job 2")
    lost = (r"^lost the lock on stack web: taken over by job 2 \(pid \d+ on \S+, token 2\) at "
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
    with pytest.raises(LockLost, match=lost):
        first.add_event(stack.id, "a", "CREATE", "COMPLETE", "state changed")
    with pytest.raises(LockLost, match=lost):
        first.set_stack_status(stack.id, "CREATE", "COMPLETE", "done")
    with pytest.raises(LockLost, match=lost), first.transaction():
        first.delete_resource(stack.id, "a")
    assert [e.status for e in second.events(stack.id)] == ["IN_PROGRESS"]
    assert second.get_stack(stack.id).action == "INIT"
    second.add_event(stack.id, "a", "CREATE", "COMPLETE", "state changed")  # the new holder writes
    first.release_lock("web", "job 1")  # does not free the new holder's lease
    assert second.lock_record("web").held


def test_a_write_renews_the_lease_of_a_live_run(two_stores):
    first, _second = two_stores
    stack = first.create_stack("web")
    first.acquire_lock("web", "job 1")
    before = first.lock_record("web").expires
    time.sleep(0.05)
    first.add_event(stack.id, "a", "CREATE", "IN_PROGRESS", "state changed")
    assert first.lock_record("web").expires > before


def test_the_heartbeat_keeps_a_live_run_s_lease_past_its_length(two_stores):
    first, second = two_stores
    with stack_lock(first, "web", "job 1"):
        _elsewhere(first, "web")
        time.sleep(2.5)  # two and a half lease lengths, nothing written meanwhile
        with pytest.raises(StackLocked, match="locked by job 1"):
            second.acquire_lock("web", "job 2")
    assert second.acquire_lock("web", "job 2") == 2


def test_breaking_a_lock_fences_its_holder_and_frees_the_stack(two_stores):
    first, second = two_stores
    stack = first.create_stack("web")
    lost = threading.Event()
    reasons: list[str] = []

    def told(reason: str) -> None:
        reasons.append(reason)
        lost.set()

    with stack_lock(first, "web", "job 1", on_lost=told):
        _elsewhere(first, "web")
        previous = second.break_lock("web", "ops@bastion", "job 1 hung on a dead hypervisor")
        assert previous.holder == "job 1" and previous.held and previous.token == 1
        assert lost.wait(10), "the heartbeat did not notice the break"
        broken = (r"^lost the lock on stack web: broken by ops@bastion at \d{4}-\S+Z: "
                  r"job 1 hung on a dead hypervisor$")
        assert len(reasons) == 1 and reasons[0] == str(LockLost(reasons[0]))
        with pytest.raises(LockLost, match=broken):
            first.add_event(stack.id, "a", "CREATE", "COMPLETE", "state changed")
    record = second.lock_record("web")
    assert record.broken and record.token == 2 and not record.held
    assert second.acquire_lock("web", "job 2") == 3  # free at once after a break
    assert second.break_lock("never-locked", "ops", "why") is None


def test_a_heartbeat_that_cannot_renew_gives_up_before_the_lease_runs_out(two_stores):
    first, _second = two_stores
    told: list[tuple[bool, str]] = []
    failing = threading.Event()
    renew = first.renew_lock

    def unreachable(name: str) -> None:
        if failing.is_set():
            raise StoreError("lost the connection to the store: server closed the connection")
        renew(name)

    first.renew_lock = unreachable

    def lost(why: str) -> None:
        # Still held when the run is told: no one else can have the lock yet.
        told.append((first.lock_record("web").held, why))

    with stack_lock(first, "web", "job 1", on_lost=lost):
        failing.set()
        deadline = time.monotonic() + 5
        while not told and time.monotonic() < deadline:
            time.sleep(0.05)
    assert told == [(True, "lost the lock on stack web: could not renew its lease before it ran out: "
                           "lost the connection to the store: server closed the connection")]


@pytest.mark.parametrize("url, kept, terms", [
    ("sqlite:////s.db", "sqlite:////s.db", LeaseTerms(30, 10)),
    ("sqlite:////s.db?lock_lease=6", "sqlite:////s.db", LeaseTerms(6, 2)),
    ("postgresql://u@h/db?sslmode=disable&lock_lease=60&lock_renew=5",
     "postgresql://u@h/db?sslmode=disable", LeaseTerms(60, 5)),
])
def test_lease_terms_come_from_the_store_url(url, kept, terms):
    assert lease_terms_of(url) == (kept, terms)


@pytest.mark.parametrize("query, message", [
    ("lock_lease=0", "lock_lease='0' is not valid: expected a number of seconds above 0"),
    ("lock_lease=soon", "lock_lease='soon' is not valid"),
    ("lock_lease=10&lock_renew=10", r"lock_renew \(10\) must be less than lock_lease \(10\)"),
])
def test_bad_lease_terms_are_refused(query, message):
    with pytest.raises(StoreError, match=message):
        lease_terms_of(f"sqlite:////s.db?{query}")


TWO_STEPS = """\
heat_template_version: 2018-08-31
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {value: a, wait_secs: 600}
  after:
    type: OS::Heat::TestResource
    depends_on: slow
    properties: {value: b}
"""


def test_an_apply_that_loses_its_lock_stops_at_once_and_marks_nothing(store_url, tmp_path):
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (  # pylint: disable=import-outside-toplevel
        ApplyRequest,
        apply_stack,
    )

    template = tmp_path / "two.yaml"
    template.write_text(TWO_STEPS)
    running, operator = _open(store_url), _open(store_url)
    outcome: list[BaseException] = []

    def apply() -> None:
        try:
            apply_stack(running, ApplyRequest(name="web", template=str(template)), "job 1")
        except LockLost as lost:
            outcome.append(lost)

    worker = threading.Thread(target=apply)
    started = time.monotonic()
    worker.start()
    deadline = started + 30
    while time.monotonic() < deadline and not [
            r for s in [operator.find_stack("web")] if s for r in operator.resources(s.id)]:
        time.sleep(0.05)
    operator.break_lock("web", "ops", "stuck")
    worker.join(60)
    # Stopped inside the slow resource's 600 s wait: the heartbeat cancelled the run.
    assert not worker.is_alive()
    assert [str(e) for e in outcome] and str(outcome[0]).startswith(
        "lost the lock on stack web: broken by ops at ")
    stack = operator.find_stack("web")
    assert stack.stack_status == "CREATE_IN_PROGRESS"  # as the run left it when it lost the lock
    assert [(r.state.name, r.state.status) for r in operator.resources(stack.id)] == [("slow", "IN_PROGRESS")]
    running.close()
    operator.close()


HOLD_THE_WRITE_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute('BEGIN IMMEDIATE')
db.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
print('inside', flush=True)
time.sleep(600)
"""


def test_a_job_stopped_inside_a_sqlite_write_is_named_and_waited_for(tmp_path, monkeypatch):
    """A job frozen inside a write transaction keeps SQLite's lock on the whole file
    (no lease can take that): the store still opens and reads, and a run that needs
    to write says which process holds the write lock, after the busy timeout
    (1 s here), or waits for it with lock_timeout."""
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StoreBusy
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import sqlite as sqlite_store
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.locking import acquire_waiting

    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT", 1.0)
    path = tmp_path / "stacks.db"
    url = f"sqlite:///{path}"
    open_store(url).close()
    frozen = subprocess.Popen([sys.executable, "-c", HOLD_THE_WRITE_LOCK, str(path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert frozen.stdout.readline() == "inside\n"
        store = open_store(url)  # opening writes nothing: it is not held up
        try:
            assert store.lock_record("web") is None and store.list_stacks() == []
            busy = (rf"^the store {re.escape(str(path))} is locked: process {frozen.pid} on this host has "
                    r"held the store's write lock for over 1 s without finishing its write: a job "
                    r"stopped or hung inside a write .* not a stack's lock: hotplay.stacks.stack_lock "
                    r"cannot break it\. Stop that process, or let it go on")
            with pytest.raises(StoreBusy, match=busy):
                store.acquire_lock("web", "job 2")
            with pytest.raises(StoreBusy, match=busy + r".*; still locked after waiting 2 s \(lock_timeout\)$"):
                acquire_waiting(store, "web", "job 2", wait=2)
            frozen.kill()  # its unfinished write is rolled back
            frozen.communicate()  # waits, and closes its pipes
            assert store.acquire_lock("web", "job 2") == 1
        finally:
            store.close()
    finally:
        if frozen.poll() is None:
            frozen.kill()
            frozen.communicate()  # waits, and closes its pipes
