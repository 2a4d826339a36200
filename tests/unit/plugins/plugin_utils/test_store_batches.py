# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deferred (bookkeeping) writes on every backend: committed only with the next
durable write or a flush, in order, and a failed step undoes only itself.  What
another connection (another process, or a run after a kill) sees is always a
prefix of the writes made."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest
from pg_backends import backend_store, pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState


def _state(name: str, status: str = "COMPLETE") -> ResourceState:
    return ResourceState(name=name, type="OS::Heat::TestResource", action="CREATE",
                         status=status, physical_id=f"{name}-x")


def _seen_elsewhere(url: str, stack_id: str) -> dict[str, str]:
    """Resources and their status as another connection reads them (the driver's
    own: opening a store writes its schema marker, which waits for the batch)."""
    query = "SELECT name, status FROM resources WHERE stack_id = ? AND retired_in = 0"
    if url.startswith("sqlite:///"):
        with closing(sqlite3.connect(url[len("sqlite:///"):])) as db:
            return dict(db.execute(query, (stack_id,)).fetchall())
    import psycopg  # pylint: disable=import-outside-toplevel

    with psycopg.connect(url, autocommit=True) as db:
        return dict(db.execute(query.replace("?", "%s"), (stack_id,)).fetchall())


def test_deferred_writes_wait_for_the_next_durable_write(backend_store, store_url):
    store = backend_store
    stack = store.create_stack("s")
    with store.transaction(durable=False):
        store.save_resource(stack.id, _state("done"))
    assert _seen_elsewhere(store_url, stack.id) == {}
    assert [r.state.name for r in store.resources(stack.id)] == ["done"]  # this connection sees it
    with store.transaction():  # intent: committed with everything before it
        store.save_resource(stack.id, _state("next", "IN_PROGRESS"))
    assert _seen_elsewhere(store_url, stack.id) == {"done": "COMPLETE", "next": "IN_PROGRESS"}


def test_a_plain_write_and_a_flush_commit_the_batch(backend_store, store_url):
    store = backend_store
    stack = store.create_stack("s")
    with store.transaction(durable=False):
        store.save_resource(stack.id, _state("a"))
    store.save_resource(stack.id, _state("b"))  # outside any transaction: durable
    assert _seen_elsewhere(store_url, stack.id) == {"a": "COMPLETE", "b": "COMPLETE"}
    with store.transaction(durable=False):
        store.delete_resource(stack.id, "a")
    assert set(_seen_elsewhere(store_url, stack.id)) == {"a", "b"}
    store.flush()
    assert set(_seen_elsewhere(store_url, stack.id)) == {"b"}


def test_a_failed_step_undoes_only_itself(backend_store, store_url):
    store = backend_store
    stack = store.create_stack("s")
    with store.transaction(durable=False):
        store.save_resource(stack.id, _state("kept"))
    with pytest.raises(RuntimeError), store.transaction(durable=False):
        store.save_resource(stack.id, _state("undone"))
        raise RuntimeError("a step that fails midway")
    with pytest.raises(RuntimeError), store.transaction():
        store.save_resource(stack.id, _state("undone too"))
        raise RuntimeError("a durable step that fails midway")
    store.flush()
    assert _seen_elsewhere(store_url, stack.id) == {"kept": "COMPLETE"}


def test_a_durable_step_inside_a_deferred_one_commits_it(backend_store, store_url):
    store = backend_store
    stack = store.create_stack("s")
    with store.transaction(durable=False):
        store.save_resource(stack.id, _state("a"))
        with store.transaction():  # e.g. a secret's keyring, sealed while recording
            store.save_resource(stack.id, _state("b"))
    assert _seen_elsewhere(store_url, stack.id) == {"a": "COMPLETE", "b": "COMPLETE"}


KILLED = """
import os, sys
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState
store = open_store(sys.argv[1])
stack = store.create_stack("s")
def state(name, status):
    return ResourceState(name=name, type="T", action="CREATE", status=status)
with store.transaction():
    store.save_resource(stack.id, state("r", "IN_PROGRESS"))   # intent, durable
with store.transaction(durable=False):
    store.save_resource(stack.id, state("r", "COMPLETE"))      # its record, deferred
print(stack.id, flush=True)
os._exit(0)  # killed before anything commits the batch
"""


def test_a_killed_process_leaves_the_last_durable_state(store_url):
    done = subprocess.run([sys.executable, "-c", KILLED, store_url], capture_output=True, text=True,
                          check=True)
    stack_id = done.stdout.split()[0]
    # As if killed between the handler's return and its record: the next run
    # finds the resource IN_PROGRESS, a state today's code could leave too.
    assert _seen_elsewhere(store_url, stack_id) == {"r": "IN_PROGRESS"}


def test_a_run_waiting_at_a_hook_holds_no_write_lock(tmp_path):
    """A run paused at a hook, waiting for someone to clear it (wait_for_hooks),
    has committed everything: another process can write the store meanwhile."""
    import json  # pylint: disable=import-outside-toplevel
    import threading  # pylint: disable=import-outside-toplevel
    import time  # pylint: disable=import-outside-toplevel

    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (  # pylint: disable=import-outside-toplevel
        ApplyRequest,
        apply_stack,
    )
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore  # pylint: disable=import-outside-toplevel

    resources = {"r1": {"type": "OS::Heat::TestResource"}, "r2": {"type": "OS::Heat::TestResource"},
                 "r3": {"type": "OS::Heat::TestResource", "depends_on": ["r2"]}}
    template = tmp_path / "t.yaml"
    template.write_text(json.dumps({"heat_template_version": "2021-04-16", "resources": resources}))
    path = tmp_path / "s.db"
    store = SqliteStore(str(path))
    request = ApplyRequest(name="s", template=str(template), breakpoints=[("r2", "pre-create")],
                           wait_for_hooks=20)
    run = threading.Thread(target=apply_stack, args=(store, request, "test"))
    run.start()
    try:
        with closing(sqlite3.connect(str(path), timeout=20)) as db:
            deadline = time.monotonic() + 20
            while not db.execute("SELECT 1 FROM hooks WHERE status = 'PENDING'").fetchall():
                assert time.monotonic() < deadline, "the run never stopped at its hook"
                time.sleep(0.1)
            time.sleep(0.5)  # the run is polling for the hook to be cleared now
            db.execute("PRAGMA busy_timeout = 2000")
            db.execute("BEGIN IMMEDIATE")  # "database is locked" while a batch is open
            db.execute("UPDATE hooks SET status = 'CLEARED'")
            db.execute("COMMIT")
    finally:
        run.join(60)
        store.close()
    with closing(sqlite3.connect(str(path))) as db:
        statuses = dict(db.execute("SELECT name, action || '_' || status FROM resources").fetchall())
    assert statuses == {"r1": "CREATE_COMPLETE", "r2": "CREATE_COMPLETE", "r3": "CREATE_COMPLETE"}
