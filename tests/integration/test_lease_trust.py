# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a lease row may make a run believe, with real users and real processes
(issue 28):

- item 3: with /proc mounted ``hidepid=2``, another user's live job is invisible;
  it is "cannot tell", judged by its lease, never "its process is gone";
- item 6: a lease row does not make a run signal the process it names: an expired
  row forged to name an unrelated tree leaves the tree alone (the apply takes the
  lock and goes on), and another user's process is never signalled, not even a
  real holder of that lease.  A real holder of this user is still fenced
  (tests/integration/test_lock_leases.py).

The second user and its runs: other_user.py.  Root only (CI runs as root)."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import write_template
from other_user import shared_folder, start
from processes import descendants, kill_tree, wait_until
from test_lock_leases import TEMPLATE, Job

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def _rows(folder: Path, sql: str) -> list[tuple]:
    try:
        with sqlite3.connect(f"file:{folder / 'store.db'}?mode=ro", uri=True, timeout=10) as db:
            return db.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []  # not made yet


@pytest.fixture
def folder():
    with shared_folder() as shared:
        write_template(shared, "web.yaml", TEMPLATE)
        (shared / "files").mkdir()
        yield shared


# The other user's job: makes the store (so both users may write it), then, once
# told, tries to take the lock of stack web, and says what it saw and what it got.
TRY_TO_TAKE = """
store = open_store(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
lease = store.lock_record("web")
seen = os.path.exists(f"/proc/{lease.pid}")
try:
    outcome = {"took": store.acquire_lock("web", "the other user's job"), "note": store.lock_record("web").note}
except errors.StackLocked as refused:
    outcome = {"refused": str(refused)}
print(json.dumps({"saw_holder": seen, **outcome}), flush=True)
store.close()
"""


def test_a_live_job_hidden_by_hidepid_keeps_its_lock_from_another_user(folder):
    """Issue 28, item 3: root's job holds stack web's lease and renews it; the other
    user, whose /proc is mounted hidepid=2, cannot see root's processes (/proc has no
    entry for them, kill(pid, 0) is EPERM).  It is refused, naming the holder, and
    the holder completes: it never loses its lock."""
    taker = start(TRY_TO_TAKE, f"sqlite:///{folder / 'store.db'}", hidepid=True)
    holder = None
    try:
        assert taker.stdout.readline() == "ready\n"
        store = f"sqlite:///{folder / 'store.db'}?lock_lease=3&lock_renew=0.5"
        holder = Job(folder, "holder", store, "a", wait=12)
        wait_until(lambda: _rows(folder, "SELECT r.status FROM resources r JOIN stacks s ON s.id = r.stack_id"
                                         " WHERE s.name = 'web' AND r.name = 'slow'") == [("IN_PROGRESS",)],
                   120, "the holder to be working")
        output, _none = taker.communicate("go\n", timeout=60)
        seen = json.loads(output)
        held = holder.result()
    finally:
        if taker.poll() is None:
            taker.kill()
        if holder is not None and holder.process.poll() is None:
            holder.kill()
    assert seen["saw_holder"] is False  # hidepid=2 hides root's job from the other user
    assert "refused" in seen, seen
    assert re.match(rf"^Stack \"web\" is locked by ansible-playbook \(\S+, task 'Apply web as holder'\) \(pid \d+ "
                    rf"on \S+, since {STAMP}\); its lease runs until {STAMP} unless renewed$", seen["refused"])
    assert not held["failed"], held["msg"]  # not "lost the lock"
    assert held["stack_status"] == "CREATE_COMPLETE"
    assert {f.name for f in (folder / "files").iterdir()} == {"marker-a"}
    assert _rows(folder, "SELECT token FROM leases WHERE stack_name = 'web'") == [(1,)]  # never taken


def _untouched(*pids: int) -> bool:
    """Each still runs, neither stopped (the first signal of a fence) nor killed."""
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state in ("T", "t", "Z", "X"):
            return False
    return True


def _taken_over_note(folder: Path) -> str:
    [(note,)] = _rows(folder, "SELECT note FROM leases WHERE stack_name = 'web'")
    return note


def test_an_apply_leaves_alone_an_unrelated_tree_a_forged_lease_names(tmp_path):
    """Issue 28, item 6: whoever can write the store adds an expired lease naming a
    process tree that is no hotplay run (its pid and start time read from /proc).
    The next ordinary apply, as root, takes the expired lock and applies, and
    signals nothing: the tree holds no proof of that lease."""
    if os.geteuid() != 0:
        pytest.skip("the other lease tests run as root (unshare); so does this one, as an apply on AWX may")
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.processes import (  # pylint: disable=import-outside-toplevel
        pid_space,
        process_start,
    )

    write_template(tmp_path, "web.yaml", TEMPLATE)
    (tmp_path / "files").mkdir()
    store = f"sqlite:///{tmp_path / 'store.db'}?lock_lease=3&lock_renew=0.5"
    assert Job(tmp_path, "first", store, "a").result()["stack_status"] == "CREATE_COMPLETE"
    tree = subprocess.Popen(["sh", "-c", "sleep 600 & sleep 600 & wait"], start_new_session=True)
    try:
        wait_until(lambda: len(descendants(tree.pid)) == 2, 30, "the tree's two sleeps")
        members = [tree.pid, *sorted(descendants(tree.pid))]
        with sqlite3.connect(tmp_path / "store.db") as db:  # the forger writes the store
            db.execute("UPDATE leases SET token = token + 1, holder = ?, host = ?, pid = ?, pid_space = ?,"
                       " pid_start = ?, acquired = '2026-01-01T00:00:00Z', expires = 1, note = ''"
                       " WHERE stack_name = 'web'",
                       ("ansible-playbook (root@ctl, task 'Apply web')", socket.gethostname(), tree.pid,
                        pid_space(), process_start(tree.pid)))
            if "proof" in {column[1] for column in db.execute("PRAGMA table_info(leases)")}:
                db.execute("UPDATE leases SET proof = ? WHERE stack_name = 'web'", (secrets.token_hex(32),))
        db.close()
        applied = Job(tmp_path, "after", store, "b").result()
        time.sleep(0.5)
        assert _untouched(*members), "the apply signalled a tree a forged lease named"
    finally:
        kill_tree(tree.pid)
        tree.wait()
    assert not applied["failed"], applied["msg"]
    assert applied["stack_status"] == "UPDATE_COMPLETE"
    assert {f.name for f in (tmp_path / "files").iterdir()} == {"marker-b"}
    [event] = [e for e in applied["events"] if e["action"] == "LOCK"]
    assert event["status"] == "TAKEN_OVER"
    assert event["reason"].endswith(
        f"token 2: its lease ran out at 1970-01-01T00:00:01Z; not fenced: its process {tree.pid} holds no proof "
        "of this lease (no run of hotplay.stacks took it there, or one of a version before lease proofs): left "
        "alone"), event["reason"]


# The other user's run: takes stack web's lease (with its proof) and starts a child,
# then renews nothing (frozen, as far as the lease can tell), until it is told.
HOLD_AND_STALL = """
store = open_store(sys.argv[1])
store.acquire_lock("web", "the other user's job")
child = subprocess.Popen(["/bin/sleep", "600"], stdout=subprocess.DEVNULL)
print(child.pid, flush=True)
sys.stdin.readline()
"""


def test_an_apply_never_signals_another_user_s_lease_holder():
    """Issue 28, item 6: the other user's run holds stack web's lease, with its real
    proof, and a child; its lease runs out.  Root's apply takes the lock over and
    signals neither: another user's processes are never signalled (the takeover
    note says so)."""
    with shared_folder() as folder:
        write_template(folder, "web.yaml", TEMPLATE)
        (folder / "files").mkdir()
        store = f"sqlite:///{folder / 'store.db'}?lock_lease=2&lock_renew=0.5"
        holder, child = start(HOLD_AND_STALL, store), 0
        try:
            child = int(holder.stdout.readline())
            wait_until(lambda: _rows(folder, "SELECT expires < (julianday('now') - 2440587.5) * 86400.0"
                                             " FROM leases WHERE stack_name = 'web'") == [(1,)],
                       30, "the other user's lease to run out")
            applied = Job(folder, "root", store, "a").result()
            time.sleep(0.5)
            assert _untouched(holder.pid, child), "root's apply signalled another user's processes"
        finally:
            if holder.poll() is None:
                holder.communicate("done\n", timeout=30)
            if child and _untouched(child):
                os.kill(child, 9)
        assert not applied["failed"], applied["msg"]
        assert applied["stack_status"] == "CREATE_COMPLETE"
        assert re.match(rf"^took over from the other user's job \(pid {holder.pid} on \S+, since {STAMP}\), token 1: "
                        rf"its lease ran out at {STAMP}; not fenced: its process {holder.pid} is another user's "
                        r"\(uid \d+\); a run never signals another user's processes$", _taken_over_note(folder))
