# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One suite for every store backend: SQLite, and PostgreSQL on a throwaway server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
# The fixtures that give each test a SQLite and a PostgreSQL store (not a
# conftest.py: tests/integration has the project's conftest module).
from pg_backends import backend_store, pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackLocked, StoreError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.postgres import PostgresStore
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sql import SCHEMA_VERSION


def _state(name: str, physical_id: str = "", **kwargs) -> ResourceState:
    return ResourceState(name=name, type="OS::Heat::TestResource", action="CREATE",
                         status="COMPLETE", physical_id=physical_id or f"{name}-x", **kwargs)


def test_stack_revisions_resources_events_round_trip(backend_store):
    store = backend_store
    stack = store.create_stack("web")
    assert store.find_stack("web") == stack and store.get_stack(stack.id) == stack
    definition = {"template": {"resources": {"z": {}, "a": {"type": "T"}}}, "parameters": {"n": 1}}
    revision = store.add_revision(stack.id, "CREATE", definition, "digest1")
    state = _state("db", properties={"value": "v", "nested": [1, {"k": None}]},
                   data={"value": "v"}, deletion_policy="Retain",
                   metadata={"m": 1}, update_policy={"batch": 2})
    store.save_resource(stack.id, state, requires=("net",), position=3)
    store.save_resource(stack.id, _state("net"), position=1)
    first = store.add_event(stack.id, "db", "CREATE", "COMPLETE", "state changed", "db-x")
    second = store.add_event(stack.id, "web", "CREATE", "COMPLETE", "done")
    store.finish_revision(stack.id, revision, "COMPLETE", "done", outcome={"db": {"status": "COMPLETE"}})
    store.set_stack_status(stack.id, "CREATE", "COMPLETE", "Stack CREATE completed successfully")
    store.set_stack_outputs(stack.id, {"url": "http://x", "list": [1, 2]}, {"bad": "no such attr"})

    assert [r.state.name for r in store.resources(stack.id)] == ["net", "db"]
    stored = store.resources(stack.id)[1]
    assert stored.state == state and stored.requires == ("net",) and stored.position == 3
    [recorded] = store.revisions(stack.id)
    assert recorded.revision == 1 and recorded.status == "COMPLETE" and recorded.finished
    assert recorded.definition == definition
    assert list(recorded.definition["template"]["resources"]) == ["z", "a"]  # order kept
    assert recorded.outcome == {"db": {"status": "COMPLETE"}}
    assert second.id > first.id
    assert [e.reason for e in store.events(stack.id)] == ["state changed", "done"]
    assert [e.id for e in store.events(stack.id, after_id=first.id)] == [second.id]
    again = store.get_stack(stack.id)
    assert again.revision == 1 and again.stack_status == "CREATE_COMPLETE"
    assert again.outputs == {"url": "http://x", "list": [1, 2]}
    assert again.output_errors == {"bad": "no such attr"}
    assert store.add_revision(stack.id, "UPDATE", {}, "digest2") == 2


def test_stacks_listing_children_and_deletion(backend_store):
    store = backend_store
    web = store.create_stack("web")
    app = store.create_stack("app", stack_id="fixed-id")
    child = store.create_stack("web-net-abc", parent_id=web.id, parent_resource="net")
    assert app.id == "fixed-id"
    assert [s.name for s in store.list_stacks()] == ["app", "web"]
    assert store.child_stacks(web.id) == [child] and child.parent_resource == "net"
    store.save_resource(web.id, _state("db"))
    store.add_event(web.id, "web", "DELETE", "COMPLETE", "done")
    store.mark_stack_deleted(web.id)
    assert store.find_stack("web") is None and store.resources(web.id) == []
    second = store.create_stack("web")
    assert second.id != web.id and store.events(web.id)
    with pytest.raises(Exception):
        store.create_stack("web")  # one live stack per name


def test_hooks(backend_store):
    store = backend_store
    stack = store.create_stack("web")
    assert store.hook_status(stack.id, "db", "pre-create", 1) is None
    store.set_hook(stack.id, "db", "pre-create", 1, "PENDING")
    store.set_hook(stack.id, "app", "post-create", 1, "PENDING")
    assert store.hook_status(stack.id, "db", "pre-create", 1) == "PENDING"
    store.set_hook(stack.id, "db", "pre-create", 1, "CLEARED")
    assert store.hook_status(stack.id, "db", "pre-create", 1) == "CLEARED"
    assert {(h.resource_name, h.status) for h in store.hooks(stack.id)} == {
        ("db", "CLEARED"), ("app", "PENDING")}
    assert [h.resource_name for h in store.hooks(stack.id, "PENDING")] == ["app"]
    assert store.hooks(stack.id, "PENDING")[0].revision == 1


def test_retire_and_restore(backend_store):
    store = backend_store
    stack = store.create_stack("web")
    store.save_resource(stack.id, _state("db", "old"), position=2)
    store.retire_resource(stack.id, "db", 2, keep_until="2099-01-01T00:00:00Z")
    assert store.resources(stack.id) == []
    [retired] = store.retired_resources(stack.id)
    assert retired.retired_in == 2 and retired.state.physical_id == "old"
    assert retired.keep_until == "2099-01-01T00:00:00Z"
    store.save_resource(stack.id, _state("db", "new"), position=2)
    store.restore_resource(stack.id, "db", retired_in=2, revision=3)
    [live] = store.resources(stack.id)
    assert live.state.physical_id == "old" and live.retired_in == 0 and live.keep_until == ""
    [retired] = store.retired_resources(stack.id)
    assert retired.state.physical_id == "new" and retired.retired_in == 3
    store.delete_resource(stack.id, "db", retired_in=3)
    assert store.retired_resources(stack.id) == []
    store.delete_resource(stack.id, "db")
    assert store.resources(stack.id) == []


def test_transaction_rolls_back_as_a_whole(backend_store):
    store = backend_store
    stack = store.create_stack("web")
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.add_event(stack.id, "a", "CREATE", "IN_PROGRESS", "")
            with store.transaction():  # joins the outer one
                store.save_resource(stack.id, _state("a"))
            store.set_stack_status(stack.id, "CREATE", "IN_PROGRESS", "")
            raise RuntimeError("killed in the middle")
    assert store.events(stack.id) == [] and store.resources(stack.id) == []
    assert store.get_stack(stack.id).action == "INIT"
    with store.transaction():
        store.add_event(stack.id, "a", "CREATE", "IN_PROGRESS", "")
    assert len(store.events(stack.id)) == 1


def test_writes_from_worker_threads(backend_store):
    store = backend_store
    stack = store.create_stack("web")

    def work(index):
        for step in range(10):
            store.add_event(stack.id, f"r{index}", "CREATE", "IN_PROGRESS", str(step))
            with store.transaction():
                store.save_resource(stack.id, _state(f"r{index}"), position=index)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.events(stack.id)) == 40 and len(store.resources(stack.id)) == 4


# -- locks: other processes ---------------------------------------------------------
_HOLD = """
import sys, time
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
store = open_store(sys.argv[1])
try:
    store.acquire_lock(sys.argv[2], sys.argv[3])
except Exception as exc:
    print(exc, file=sys.stderr)
    sys.exit(3)
print("locked", flush=True)
if sys.argv[4] == "hold":
    time.sleep(120)
"""


def _lock_elsewhere(url, stack, holder, hold=False):
    args = [sys.executable, "-c", _HOLD, url, stack, holder, "hold" if hold else "exit"]
    if not hold:
        return subprocess.run(args, capture_output=True, text=True, env=os.environ, check=False,
                              timeout=60)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ)
    line = proc.stdout.readline()
    if line.strip() != "locked":
        proc.kill()
        pytest.fail(f"the holder did not take the lock: {proc.stderr.read()}")
    return proc


def test_lock_refuses_a_second_holder_naming_the_first(backend_store, store_url):
    store = backend_store
    store.acquire_lock("web", "job 1")
    started = time.monotonic()
    other = _lock_elsewhere(store_url, "web", "job 2")
    assert other.returncode == 3, other.stderr
    assert 'Stack "web" is locked by job 1 (pid ' in other.stderr and " since " in other.stderr
    assert time.monotonic() - started < 30  # refused, not waited for
    second = open_store(store_url)  # another session of this process
    with pytest.raises(StackLocked, match="locked by job 1"):
        second.acquire_lock("web", "job 3")
    with pytest.raises(StackLocked, match="locked by job 1"):
        store.acquire_lock("web", "job 1 again")
    store.release_lock("web", "job 1")
    second.acquire_lock("web", "job 3")
    second.release_lock("web", "job 3")
    second.close()
    assert _lock_elsewhere(store_url, "web", "job 2").returncode == 0


def test_lock_of_a_killed_process_is_released(backend_store, store_url):
    holder = _lock_elsewhere(store_url, "web", "killed job", hold=True)
    try:
        with pytest.raises(StackLocked, match=f"locked by killed job \\(pid {holder.pid} "):
            backend_store.acquire_lock("web", "next job")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate()  # closes its pipes
    deadline = time.monotonic() + 15
    while True:  # the server notices the closed connection at once, give it a moment
        try:
            backend_store.acquire_lock("web", "next job")
            break
        except StackLocked:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    other = _lock_elsewhere(store_url, "web", "third")
    assert other.returncode == 3 and "is locked by next job" in other.stderr


def test_locks_of_different_stacks_do_not_block_each_other(backend_store, store_url):
    holder = _lock_elsewhere(store_url, "web", "job web", hold=True)
    try:
        started = time.monotonic()
        backend_store.acquire_lock("db", "job db")
        assert _lock_elsewhere(store_url, "app", "job app").returncode == 0
        assert time.monotonic() - started < 30
        with pytest.raises(StackLocked, match="job web"):
            backend_store.acquire_lock("web", "job 2")
        backend_store.release_lock("db", "job db")
    finally:
        holder.kill()
        holder.communicate()  # closes its pipes


# -- PostgreSQL only: URLs, schema, connections ---------------------------------------
def test_postgres_urls_open_the_postgres_store(pg_url):
    for url in (pg_url, pg_url.replace("postgresql://", "postgres://", 1)):
        store = open_store(url)
        assert isinstance(store, PostgresStore) and store.url == url
        store.close()


def test_schema_is_versioned_and_created_once(pg_url):
    first = PostgresStore(pg_url)
    stack = first.create_stack("web")
    second = PostgresStore(pg_url)  # finds the schema in place: no error, data kept
    assert second.schema_version() == SCHEMA_VERSION and second.get_stack(stack.id) == stack
    second.close()
    first._execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")  # pylint: disable=protected-access
    with pytest.raises(StoreError, match="schema version 99, newer"):
        PostgresStore(pg_url)
    first.close()


def test_unreachable_server_is_a_store_error():
    with pytest.raises(StoreError, match="cannot connect to the store postgresql://u:\\*\\*\\*@127.0.0.1:1/db"):
        open_store("postgresql://u:secret@127.0.0.1:1/db")


def test_bad_url_is_a_store_error_without_traceback():
    with pytest.raises(StoreError, match="is not valid: invalid URI query parameter") as caught:
        open_store("postgresql://u@127.0.0.1/db?nosuchoption=1")
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def _terminate_session(store, pg_server) -> int:
    import psycopg  # pylint: disable=import-outside-toplevel

    pid = store._read("SELECT pg_backend_pid() AS pid")[0]["pid"]  # pylint: disable=protected-access
    with psycopg.connect(pg_server["DATABASE_URL"], autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return pid


def test_a_session_ended_under_the_store_is_opened_again(pg_url, pg_server):
    # pg_terminate_backend, idle_session_timeout, a failover: the job lives on.
    store = PostgresStore(pg_url)
    stack = store.create_stack("web")
    ended = _terminate_session(store, pg_server)
    assert store.get_stack(stack.id) == stack
    store.add_event(stack.id, "a", "CREATE", "COMPLETE", "")
    assert store._read("SELECT pg_backend_pid() AS pid")[0]["pid"] != ended  # pylint: disable=protected-access
    assert [e.resource_name for e in store.events(stack.id)] == ["a"]
    store.close()


def test_a_session_that_cannot_be_opened_again_is_a_store_error(pg_url, pg_server):
    import psycopg  # pylint: disable=import-outside-toplevel

    store = PostgresStore(pg_url)
    stack = store.create_stack("web")
    database = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_server["DATABASE_URL"], autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
    try:
        _terminate_session(store, pg_server)
        with pytest.raises(StoreError, match="lost the connection to the store .*; cannot connect"):
            store.get_stack(stack.id)
    finally:
        with psycopg.connect(pg_server["DATABASE_URL"], autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
    store.close()


def test_missing_psycopg_is_a_clear_store_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(StoreError, match="needs the Python package psycopg"):
        open_store("postgresql://u@127.0.0.1:1/db")


def test_the_engine_creates_updates_rolls_back_and_deletes_on_each_backend(backend_store, tmp_path):
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (  # pylint: disable=import-outside-toplevel
        ApplyRequest,
        DeleteRequest,
        apply_stack,
        delete_stack,
    )
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.rollback import (  # pylint: disable=import-outside-toplevel
        RollbackRequest,
        rollback_stack,
    )

    template = tmp_path / "t.yaml"
    template.write_text(
        "heat_template_version: 2018-08-31\n"
        "parameters:\n  v: {type: string}\n"
        "resources:\n"
        "  group:\n    type: OS::Heat::ResourceGroup\n"
        "    properties:\n      count: 2\n"
        "      resource_def: {type: OS::Heat::TestResource, properties: {value: {get_param: v},"
        " update_replace: true}}\n"
        "outputs:\n  values: {value: {get_attr: [group, output]}}\n")

    def apply(value: str):
        return apply_stack(backend_store, ApplyRequest(name="e", template=str(template),
                                                       parameters={"v": value}), "t")

    assert apply("one").stack.stack_status == "CREATE_COMPLETE"
    updated = apply("two")
    assert updated.stack.stack_status == "UPDATE_COMPLETE" and updated.stack.outputs["values"] == ["two", "two"]
    assert apply("two").changed is False
    rolled = rollback_stack(backend_store, RollbackRequest(name="e"), "t")
    assert rolled.stack.stack_status == "ROLLBACK_COMPLETE" and rolled.stack.outputs["values"] == ["one", "one"]
    assert delete_stack(backend_store, DeleteRequest("e"), "t").stack.stack_status == "DELETE_COMPLETE"
    assert backend_store.find_stack("e") is None
