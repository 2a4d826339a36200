# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded SQLite store: records, locks, privacy, URLs."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StoreError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store, store_path_from_url
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sql import SCHEMA_VERSION
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


@pytest.fixture
def store(tmp_path):
    opened = SqliteStore(str(tmp_path / "s.db"))
    yield opened
    opened.close()


def test_store_file_is_private_to_the_user(tmp_path):
    SqliteStore(str(tmp_path / "private" / "s.db")).close()
    assert stat.S_IMODE(os.stat(tmp_path / "private" / "s.db").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "private").st_mode) == 0o700


def test_url_convention_four_slashes_absolute_three_relative():
    assert store_path_from_url("sqlite:////abs/path.db") == "/abs/path.db"
    assert store_path_from_url("sqlite:///rel/path.db") == "rel/path.db"
    with pytest.raises(StoreError, match="not supported"):
        store_path_from_url("sqlite://")


def test_unknown_scheme_is_refused_clearly():
    with pytest.raises(StoreError, match="'mysql' is not supported"):
        open_store("mysql://x")


def test_environment_variable_names_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("HOTPLAY_STORE", f"sqlite:///{tmp_path}/env.db")
    opened = open_store(None)
    assert opened.url.endswith("/env.db")
    opened.close()


def test_stack_resources_revisions_and_events_round_trip(store):
    stack = store.create_stack("web")
    assert store.find_stack("web") == stack
    revision = store.add_revision(stack.id, "CREATE", {"template": {"a": 1}}, "digest1")
    state = ResourceState(name="db", type="OS::Heat::TestResource", action="CREATE",
                          status="COMPLETE", physical_id="web-db-x", properties={"value": "v"},
                          data={"value": "v"}, deletion_policy="Retain")
    store.save_resource(stack.id, state, requires=("net",), position=3)
    store.add_event(stack.id, "db", "CREATE", "COMPLETE", "state changed", "web-db-x")
    store.finish_revision(stack.id, revision, "COMPLETE", "done")
    [stored] = store.resources(stack.id)
    assert stored.state == state and stored.requires == ("net",) and stored.position == 3
    assert store.revisions(stack.id)[0].status == "COMPLETE"
    assert [e.reason for e in store.events(stack.id)] == ["state changed"]
    assert store.get_stack(stack.id).revision == 1


def test_deleted_stack_frees_its_name_but_keeps_history(store):
    first = store.create_stack("web")
    store.add_event(first.id, "web", "DELETE", "COMPLETE", "done")
    store.mark_stack_deleted(first.id)
    assert store.find_stack("web") is None
    second = store.create_stack("web")
    assert second.id != first.id and store.events(first.id)


def test_transaction_rolls_back_as_a_whole(store):
    stack = store.create_stack("web")
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.add_event(stack.id, "a", "CREATE", "IN_PROGRESS", "")
            raise RuntimeError("killed in the middle")
    assert store.events(stack.id) == []


def _acquire_elsewhere(path, holder: str) -> subprocess.CompletedProcess[str]:
    """Take the lock of stack 'web' from another process, which then exits."""
    code = (
        "from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore;"
        f"SqliteStore({str(path)!r}).acquire_lock('web', {holder!r})"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ, check=False)


def test_lock_refuses_a_second_holder_naming_the_first(store, tmp_path):
    store.acquire_lock("web", "job 1")
    other = _acquire_elsewhere(tmp_path / "s.db", "job 2")
    assert other.returncode != 0 and "is locked by job 1" in other.stderr
    store.release_lock("web", "job 1")
    assert _acquire_elsewhere(tmp_path / "s.db", "job 2").returncode == 0


def test_lock_of_a_dead_process_is_taken_over(tmp_path):
    assert _acquire_elsewhere(tmp_path / "s.db", "killed job").returncode == 0
    store = SqliteStore(str(tmp_path / "s.db"))
    store.acquire_lock("web", "next job")  # the holder's process is gone: no refusal
    other = _acquire_elsewhere(tmp_path / "s.db", "third")
    assert other.returncode != 0 and "is locked by next job" in other.stderr
    store.close()


def test_a_version_3_store_loses_the_unused_locks_table_and_keeps_its_stacks(tmp_path):
    """Schema version 4 drops version 1's locks table (leases replaced it in version
    3); a store at version 4 is opened without being written to."""
    import sqlite3

    path = tmp_path / "stacks.db"
    store = SqliteStore(str(path))
    store.create_stack("web")
    store.close()
    with sqlite3.connect(path) as db:  # as version 3 left it
        db.execute("CREATE TABLE locks (stack_name TEXT PRIMARY KEY, holder TEXT NOT NULL, host TEXT NOT NULL,"
                   " pid INTEGER NOT NULL, pid_start TEXT NOT NULL, acquired TEXT NOT NULL)")
        db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    db.close()
    upgraded = SqliteStore(str(path))
    try:
        assert [s.name for s in upgraded.list_stacks()] == ["web"]
        assert upgraded.schema_version() == SCHEMA_VERSION
        tables = {row["name"] for row in upgraded._read("SELECT name FROM sqlite_master WHERE type = 'table'")}  # pylint: disable=protected-access
        assert "locks" not in tables and {"leases", "stacks", "resources"} <= tables
    finally:
        upgraded.close()
    changes = sqlite3.connect(path)
    try:
        before = changes.execute("PRAGMA data_version").fetchone()[0]
        SqliteStore(str(path)).close()  # at version 4: opening writes nothing
        assert changes.execute("PRAGMA data_version").fetchone()[0] == before
    finally:
        changes.close()
