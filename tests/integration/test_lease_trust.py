# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a lease row may make a run believe, with real users and real processes
(issue 28):

- item 3: with /proc mounted ``hidepid=2``, another user's live job is invisible;
  it is "cannot tell", judged by its lease, never "its process is gone".

The second user and its runs: other_user.py.  Root only (CI runs as root)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from conftest import write_template
from other_user import shared_folder, start
from processes import wait_until
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
