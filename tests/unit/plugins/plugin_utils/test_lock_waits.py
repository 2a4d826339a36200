# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for a stack's lock (``lock_timeout``), on SQLite and on PostgreSQL."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
# A store of each backend per test (not a conftest.py: tests/integration has the
# project's conftest module).
from pg_backends import backend_store, pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackLocked
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.locking import acquire_waiting
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.rollback import (
    RollbackRequest,
    rollback_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.executor import Cancel
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

_HOLDER = """
import sys
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
store = open_store(sys.argv[1])
store.acquire_lock(sys.argv[2], "AWX job 7 (awx@ee, task 'Apply')")
print("locked", flush=True)
sys.stdin.readline()
store.release_lock(sys.argv[2], "AWX job 7 (awx@ee, task 'Apply')")
print("released", flush=True)
sys.stdin.readline()
"""


class Holder:
    """Another process holding a stack's lock until told to let it go."""

    def __init__(self, url: str, stack: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _HOLDER, url, stack],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=os.environ)
        assert self.proc.stdout.readline() == "locked\n"

    def release(self) -> None:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "released\n"

    def stop(self) -> None:
        self.proc.communicate("\n\n", timeout=30)


@pytest.fixture
def holder(store_url):
    made: list[Holder] = []

    def hold(stack: str) -> Holder:
        made.append(Holder(store_url, stack))
        return made[-1]

    yield hold
    for one in made:
        one.stop()


def test_a_wait_gets_the_lock_once_the_holder_frees_it(backend_store, holder):
    held = holder("web")
    got = threading.Event()

    def wait_for_it() -> None:
        acquire_waiting(backend_store, "web", "job 2", wait=60)
        got.set()

    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    assert not got.wait(1.0)  # still held: the waiter is waiting
    held.release()
    waiter.join(60)
    assert got.is_set()
    with contextlib.closing(open_store(backend_store.url)) as another, \
            pytest.raises(StackLocked, match="locked by job 2"):
        another.acquire_lock("web", "job 3")
    backend_store.release_lock("web", "job 2")


def test_a_wait_that_runs_out_names_the_holder(backend_store, holder):
    holder("web")
    with pytest.raises(StackLocked) as refused:
        acquire_waiting(backend_store, "web", "job 2", wait=1)
    message = str(refused.value)
    assert message.startswith("Stack \"web\" is locked by AWX job 7 (awx@ee, task 'Apply') (pid ")
    assert " since 20" in message and message.endswith("; still locked after waiting 1 s (lock_timeout)")


def test_no_wait_fails_at_once_with_the_plain_refusal(backend_store, holder):
    holder("web")
    with pytest.raises(StackLocked) as refused:
        acquire_waiting(backend_store, "web", "job 2", wait=0)
    assert "AWX job 7" in str(refused.value) and "after waiting" not in str(refused.value)


def test_an_interruption_ends_the_wait(backend_store, holder):
    holder("web")
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    with pytest.raises(StackLocked, match="stopped waiting for the lock: the run was interrupted"):
        acquire_waiting(backend_store, "web", "job 2", wait=600, cancel=cancel)


def test_waiting_for_one_stack_does_not_hold_up_another(backend_store, holder, store_url):
    holder("web")

    def wait_in_vain() -> None:
        with contextlib.closing(open_store(store_url)) as waiter:
            pytest.raises(StackLocked, acquire_waiting, waiter, "web", "job 2", wait=3)

    waiting = threading.Thread(target=wait_in_vain)
    waiting.start()
    other = open_store(store_url)
    other.acquire_lock("db", "job db")  # no refusal, no wait
    other.release_lock("db", "job db")
    other.close()
    waiting.join(30)


# -- the engine: what a waiting run does once it has the lock ------------------------

SLOW = """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string}
    resources:
      r:
        type: OS::Heat::TestResource
        properties: {value: {get_param: value}, wait_secs: 1}
    outputs:
      value: {value: {get_attr: [r, output]}}
    """


def _template(folder: Path) -> str:
    path = folder / "slow.yaml"
    path.write_text(textwrap.dedent(SLOW))
    return str(path)


class _LetsAnotherRunIn:
    """A store whose first lock attempt first lets another run take the lock and
    change the stack: what happens when two jobs start at once."""

    def __init__(self, store, other_run) -> None:
        self._store = store
        self._other_run = other_run
        self._started = False

    def __getattr__(self, name):
        return getattr(self._store, name)

    def acquire_lock(self, stack_name: str, holder: str) -> None:
        if not self._started:
            self._started = True
            locked = threading.Event()
            threading.Thread(target=self._other_run, args=(locked,)).start()
            assert locked.wait(60), "the other run did not take the lock"
        self._store.acquire_lock(stack_name, holder)


def _other_apply(store_url: str, template: str, value: str):
    def run(locked: threading.Event) -> None:
        store = open_store(store_url)
        real_acquire = store.acquire_lock

        def acquire_and_tell(name: str, who: str) -> None:
            real_acquire(name, who)
            locked.set()

        store.acquire_lock = acquire_and_tell
        apply_stack(store, ApplyRequest(name="s", template=template, parameters={"value": value}),
                    "the other job")
        store.close()

    return run


def test_a_waiting_apply_plans_again_from_what_the_holder_left(backend_store, store_url, tmp_path):
    template = _template(tmp_path)
    apply_stack(backend_store, ApplyRequest(name="s", template=template, parameters={"value": "a"}), "j1")
    racing = _LetsAnotherRunIn(backend_store, _other_apply(store_url, template, "b"))
    result = apply_stack(racing, ApplyRequest(name="s", template=template, parameters={"value": "c"},
                                              lock_timeout=60), "j2")
    assert not result.failed and result.changed
    assert result.stack.revision == 3 and result.stack.outputs == {"value": "c"}
    assert [(r.revision, r.status) for r in backend_store.revisions(result.stack.id)] == [
        (1, "COMPLETE"), (2, "COMPLETE"), (3, "COMPLETE")]
    assert result.plan.by_action()["updated"] == ["r"]


def test_a_waiting_apply_of_what_the_holder_applied_changes_nothing(backend_store, store_url, tmp_path):
    template = _template(tmp_path)
    racing = _LetsAnotherRunIn(backend_store, _other_apply(store_url, template, "b"))
    result = apply_stack(racing, ApplyRequest(name="s", template=template, parameters={"value": "b"},
                                              lock_timeout=60), "j2")
    assert not result.failed and not result.changed and result.stack.revision == 1


def test_a_reviewed_plan_made_stale_while_waiting_is_refused(backend_store, store_url, tmp_path):
    template = _template(tmp_path)
    apply_stack(backend_store, ApplyRequest(name="s", template=template, parameters={"value": "a"}), "j1")
    reviewed = apply_stack(backend_store, ApplyRequest(name="s", template=template, check_mode=True,
                                                       parameters={"value": "c"}), "j2")
    racing = _LetsAnotherRunIn(backend_store, _other_apply(store_url, template, "b"))
    result = apply_stack(racing, ApplyRequest(name="s", template=template, parameters={"value": "c"},
                                              plan_id=reviewed.plan_id, lock_timeout=60), "j2")
    assert result.failed and not result.changed and "is stale" in result.msg
    assert result.stack.revision == 2 and result.stack.outputs == {"value": "b"}


def test_a_waiting_delete_of_a_stack_the_holder_deleted_does_nothing(backend_store, store_url, tmp_path):
    template = _template(tmp_path)
    apply_stack(backend_store, ApplyRequest(name="s", template=template, parameters={"value": "a"}), "j1")

    def other_delete(locked: threading.Event) -> None:
        store = open_store(store_url)
        real_acquire = store.acquire_lock
        store.acquire_lock = lambda name, who: (real_acquire(name, who), locked.set())
        delete_stack(store, DeleteRequest("s"), "the other job")
        store.close()

    result = delete_stack(_LetsAnotherRunIn(backend_store, other_delete),
                          DeleteRequest("s", lock_timeout=60), "j2")
    assert not result.failed and not result.changed and backend_store.find_stack("s") is None


def test_rollback_waits_for_the_lock_and_chooses_its_target_again(backend_store, store_url, tmp_path):
    template = _template(tmp_path)
    for value in ("a", "b"):
        apply_stack(backend_store, ApplyRequest(name="s", template=template,
                                                parameters={"value": value}), "j1")
    racing = _LetsAnotherRunIn(backend_store, _other_apply(store_url, template, "c"))
    result = rollback_stack(racing, RollbackRequest("s", lock_timeout=60, cancel=Cancel()), "j2")
    assert not result.failed
    # The previous good revision is now 2 ("b"): the holder's update made 3 ("c").
    assert result.rollback["target_revision"] == 2 and result.stack.outputs == {"value": "b"}
    assert result.stack.revision == 4


def test_an_apply_that_cannot_wait_long_enough_names_the_holder(backend_store, holder, tmp_path):
    holder("s")
    with pytest.raises(StackLocked, match=r"locked by AWX job 7 .*still locked after waiting 1 s"):
        apply_stack(backend_store, ApplyRequest(name="s", template=_template(tmp_path),
                                                parameters={"value": "a"}, lock_timeout=1), "j2")
    assert backend_store.list_stacks() == []
