# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upgrading a store under a running job of an older version (issue 28, item 4).

Up to schema version 2 a stack's lock was a row of ``locks``; version 4 drops that
table.  A store is upgraded by the first newer run that opens it: while a job of
the old version holds a lock there, the upgrade is refused (naming the stack, the
job, what to do) and nothing is changed; once the job lets go, the store is
upgraded.  The upgrade is one transaction, and runs opening the store at once
upgrade it once.  The same through ansible-playbook:
tests/integration/test_store_upgrade_playbooks.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from old_store import OldJob, make_schema_2_store, schema_version, stored, tables
from pg_backends import pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StoreError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store, sql
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sql import SCHEMA_VERSION

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


@pytest.fixture
def old_store(store_url):
    make_schema_2_store(store_url)
    return store_url


def _shown(url: str) -> str:
    return url[len("sqlite:///"):] if url.startswith("sqlite:") else url


def _as_version_2_left_it(url: str) -> None:
    assert schema_version(url) == 2
    assert "locks" in tables(url) and "leases" not in tables(url)


def test_a_store_an_old_job_holds_a_lock_in_is_upgraded_only_once_it_lets_go(old_store):
    job = OldJob(old_store)
    try:
        with pytest.raises(StoreError) as refused:
            open_store(old_store)
        what_else = (r"If that job is gone for good \(its host is down: a job of that version on this host is "
                     r"seen to be gone\), remove its lock row: sqlite3 \S+ \"DELETE FROM locks WHERE "
                     r"stack_name = 'web'\"" if old_store.startswith("sqlite:") else
                     r"If that job hangs or is gone for good, end its database session \(the lock goes with "
                     r"it\): SELECT pg_terminate_backend\(\d+\)")
        assert re.match(
            rf"^the store {re.escape(_shown(old_store))} is in use by an older hotplay.stacks \(schema version 2\): "
            rf"stack web is locked by ansible-playbook \(old job\) \(pid {job.pid} on \S+, since {STAMP}\), a "
            rf"job of that version\. Upgrading the store to schema version {SCHEMA_VERSION} now would drop that "
            r"lock under the running job, so nothing was changed\. Let that job finish \(it removes its lock "
            r"when it ends\) and run this again, and upgrade hotplay\.stacks wherever this store is used "
            rf"\(docs/store\.md, \"Upgrading hotplay\.stacks\"\)\. {what_else}$", str(refused.value)), refused.value
        # Nothing changed: the old job's lock row is where it left it.
        _as_version_2_left_it(old_store)
        assert [row[0] for row in stored(old_store, "SELECT stack_name FROM locks")] == ["web"]
        job.release()
        store = open_store(old_store)
        try:
            assert store.schema_version() == SCHEMA_VERSION
            assert store.acquire_lock("web", "job of this version") == 1
        finally:
            store.close()
        assert "locks" not in tables(old_store)
    finally:
        job.end()


def test_an_old_lock_row_whose_job_is_gone_does_not_hold_the_upgrade_up(old_store):
    job = OldJob(old_store)
    job.end()  # killed: its row stays (SQLite), its session's lock goes (PostgreSQL)
    assert stored(old_store, "SELECT stack_name FROM locks") == [("web",)]
    store = open_store(old_store)
    try:
        assert store.schema_version() == SCHEMA_VERSION and store.acquire_lock("web", "next job") == 1
    finally:
        store.close()


def test_a_sqlite_old_lock_row_of_another_host_is_held_until_removed(tmp_path):
    """Version 2 could not tell whether a job on another host lived, and neither
    can this one: the operator removes the row, as the refusal says."""
    import sqlite3  # pylint: disable=import-outside-toplevel

    url = f"sqlite:///{tmp_path / 's.db'}"
    make_schema_2_store(url)
    with sqlite3.connect(tmp_path / "s.db") as db:
        db.execute("INSERT INTO locks VALUES ('db', 'AWX job 7', 'awx-node-2', 42, '1234', '2026-01-01T00:00:00Z')")
    db.close()
    with pytest.raises(StoreError, match=r"stack db is locked by AWX job 7 \(pid 42 on awx-node-2, since "
                                         r"2026-01-01T00:00:00Z\).* \"DELETE FROM locks WHERE stack_name = 'db'\"$"):
        open_store(url)
    _as_version_2_left_it(url)
    if _has_sqlite3_shell():  # as the refusal says
        subprocess.run(["sqlite3", str(tmp_path / "s.db"), "DELETE FROM locks WHERE stack_name = 'db'"], check=True)
    else:
        _delete_row(tmp_path / "s.db")
    open_store(url).close()
    assert schema_version(url) == SCHEMA_VERSION


def _has_sqlite3_shell() -> bool:
    return subprocess.run(["sh", "-c", "command -v sqlite3"], capture_output=True, check=False).returncode == 0


def _delete_row(path) -> None:
    import sqlite3  # pylint: disable=import-outside-toplevel

    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM locks WHERE stack_name = 'db'")
    db.close()


def test_a_failed_upgrade_leaves_the_store_as_it_was(old_store, monkeypatch):
    """One transaction: a statement that fails late undoes every one before it."""
    statements = sql.Dialect.statements

    def failing_last(self, after=0):
        return [*statements(self, after), (SCHEMA_VERSION, "CREATE TABLE leases (broken INTEGER)")]

    monkeypatch.setattr(sql.Dialect, "statements", failing_last)
    with pytest.raises(Exception, match="already exists"):  # the driver's own error
        open_store(old_store)
    monkeypatch.undo()
    _as_version_2_left_it(old_store)
    assert "stack_keys" in tables(old_store)  # version 2's own tables are all there still
    open_store(old_store).close()
    assert schema_version(old_store) == SCHEMA_VERSION


OPEN_AT_ONCE = """
import sys, time
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
start = float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
store = open_store(sys.argv[1])
print(store.schema_version(), flush=True)
store.close()
"""


def test_runs_opening_an_old_store_at_once_upgrade_it_once(old_store):
    import time  # pylint: disable=import-outside-toplevel

    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    start = time.time() + 2  # after every interpreter has started
    runs = [subprocess.Popen([sys.executable, "-c", OPEN_AT_ONCE, old_store, str(start)], env=environment,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _job in range(6)]
    outcomes = [run.communicate(timeout=120) for run in runs]
    assert [(run.returncode, out, err) for run, (out, err) in zip(runs, outcomes)] == \
        [(0, f"{SCHEMA_VERSION}\n", "")] * len(runs)
    assert schema_version(old_store) == SCHEMA_VERSION and "locks" not in tables(old_store)
    assert {"leases", "stack_keys", "stacks", "resources", "events", "hooks", "revisions", "meta"} <= tables(old_store)
