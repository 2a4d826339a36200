# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fencing: the run that takes a lease over stops the old holder and what it
started, when they run in this PID namespace; with real processes (a holder that
took a real lease, then was frozen with SIGSTOP, with a child of its own).

Only a process that proves to hold that lease (proofs.py) and is this user's is
ever signalled: a lease row naming any other process (an unrelated tree, a run
holding another lease, another user's process) leaves it alone (issue 28, item 6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from pg_backends import pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.processes import (
    descendants,
    pid_space,
    process_start,
    running,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.base import LeaseRecord
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.fencing import UNREACHABLE, fence
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.proofs import make_proof

STORE = "store-1"  # the store's identity the leases below are of

# A holder: takes the lease of stack web, starts a child (as a worker starts a
# module), says so, and works on.
HOLDER = """
import subprocess, sys, time
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
store = open_store(sys.argv[1])
store.acquire_lock("web", "job 1")
child = subprocess.Popen(["sleep", "600"])
print(child.pid, flush=True)
time.sleep(600)
"""


def _lease(pid: int, space: str | None = None, start: str | None = None, proof: str = "",
           stack: str = "web", token: int = 1) -> LeaseRecord:
    return LeaseRecord(stack_name=stack, token=token, holder="job 1", host="h", pid=pid,
                       pid_space=pid_space() if space is None else space,
                       pid_start=process_start(pid) if start is None else start,
                       acquired="2026-01-01T00:00:00Z", expires=1.0, note="", now=2.0, proof=proof)


# A holder of the lease token 1 of stack web in STORE, as a run keeps it (proofs.py),
# with a child (as a worker starts a module); with a uid, it becomes that user first.
PROVING_HOLDER = """
import os, subprocess, sys, time
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.proofs import make_proof
proof = make_proof(sys.argv[1], "web", 1)
if len(sys.argv) > 2:
    os.setgroups([])
    os.setresgid(int(sys.argv[2]), int(sys.argv[2]), int(sys.argv[2]))
    os.setresuid(int(sys.argv[2]), int(sys.argv[2]), int(sys.argv[2]))
child = subprocess.Popen(["/bin/sleep", "600"])
print(proof.digest, child.pid, flush=True)
time.sleep(600)
"""


class Tree:
    """A process (a proving holder, or a shell that is no hotplay run) with a child."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True,
                                        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        self.pid, self.proof = self.process.pid, ""

    def child_of_shell(self) -> int:
        deadline = time.monotonic() + 10
        while not descendants(self.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        [child] = descendants(self.pid)
        return child

    def end(self) -> None:
        for pid in [*descendants(self.pid), self.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.communicate()  # waits, and closes its pipe


def _holder(*args: str) -> tuple[Tree, int]:
    tree = Tree([sys.executable, "-c", PROVING_HOLDER, STORE, *args])
    tree.proof, child = tree.process.stdout.readline().split()
    return tree, int(child)


@pytest.fixture
def tree():
    """A holder of the lease with a child: (holder, child pid)."""
    holder, child = _holder()
    yield holder, child
    holder.end()


@pytest.fixture
def stranger():
    """A shell running sleep, no hotplay run (the tree of issue 28, item 6): (shell, sleep pid)."""
    shell = Tree(["sh", "-c", "sleep 600; true"])
    yield shell, shell.child_of_shell()
    shell.end()


def test_a_frozen_holder_in_this_pid_namespace_is_killed_with_its_children(tree):
    holder, child = tree
    os.kill(holder.pid, signal.SIGSTOP)
    os.kill(child, signal.SIGSTOP)
    done = fence(_lease(holder.pid, proof=holder.proof), STORE)
    assert done == f"fenced: stopped and killed its processes {', '.join(map(str, sorted([holder.pid, child])))}" \
                   " before this run acted"
    assert holder.process.wait(timeout=10) == -signal.SIGKILL
    assert not running(child)


def _untouched(*pids: int) -> bool:
    """Running, and neither stopped nor killed."""
    for pid in pids:
        if not running(pid):
            return False
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t"):
                return False
    return True


def test_a_process_without_the_lease_s_proof_is_never_signalled(stranger, tree):
    """A row anyone who can write the store may write: an expired lease naming an
    unrelated tree (its pid and start time are in /proc for all to read), with no
    proof or a made-up one; or naming a real holder of another lease, with that
    lease's proof digest copied from the store."""
    shell, sleeper = stranger
    elsewhere = make_proof(STORE, "web", 1)  # a real proof, held by this process, not by the shell
    elsewhere.close()
    for forged in ("", "0" * 64, elsewhere.digest):
        assert fence(_lease(shell.pid, proof=forged), STORE) == (
            f"not fenced: its process {shell.pid} holds no proof of this lease (no run of hotplay.stacks took "
            "it there, or one of a version before lease proofs): left alone")
    holder, child = tree
    for stack, token, store in (("db", 1, STORE), ("web", 2, STORE), ("web", 1, "another store")):
        assert fence(_lease(holder.pid, proof=holder.proof, stack=stack, token=token), store).startswith(
            f"not fenced: its process {holder.pid} holds no proof of this lease")
    assert _untouched(shell.pid, sleeper, holder.pid, child)


def test_another_user_s_process_is_never_signalled():
    """Even one that holds the lease's proof: its user may run anything in it."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the holder becomes another user (nobody)")
    holder, child = _holder("65534")
    try:
        assert fence(_lease(holder.pid, proof=holder.proof), STORE) == (
            f"not fenced: its process {holder.pid} is another user's (uid 65534); a run never signals "
            "another user's processes")
        assert _untouched(holder.pid, child)
    finally:
        holder.end()


def test_a_reused_pid_is_not_killed(tree):
    holder, _child = tree
    assert fence(_lease(holder.pid, start="12345", proof=holder.proof), STORE) == ""  # another process had that pid
    assert holder.process.poll() is None


def test_a_holder_elsewhere_is_not_reached(tree):
    holder, _child = tree
    assert fence(_lease(holder.pid, space="another-boot pid:[1]", proof=holder.proof), STORE) == UNREACHABLE
    assert holder.process.poll() is None


def test_this_process_is_never_fenced():
    assert fence(_lease(os.getpid()), STORE) == "not fenced: it is this process or one above it"
    assert fence(_lease(os.getppid()), STORE) == "not fenced: it is this process or one above it"


def test_taking_over_a_frozen_holder_s_lease_kills_it_and_its_module_first(store_url):
    url = f"{store_url}?lock_lease=1&lock_renew=0.2"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, url], stdout=subprocess.PIPE, text=True,
                              env=environment)
    try:
        module = int(holder.stdout.readline())
        for pid in (holder.pid, module):
            os.kill(pid, signal.SIGSTOP)  # a paused VM: the lease is no longer renewed
        taker = open_store(url)
        try:
            deadline = time.monotonic() + 30
            while taker.lock_record("web").held and time.monotonic() < deadline:
                time.sleep(0.1)
            assert taker.acquire_lock("web", "job 2") == 2
            note = taker.lock_record("web").note
        finally:
            taker.close()
        assert holder.wait(timeout=10) == -signal.SIGKILL and not running(module)
        assert note.startswith(f"took over from job 1 (pid {holder.pid} on ")
        assert note.endswith(f", token 1: its lease ran out at {note.split('its lease ran out at ')[1][:20]}; "
                             f"fenced: stopped and killed its processes {min(holder.pid, module)}, "
                             f"{max(holder.pid, module)} before this run acted")
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.communicate()  # waits, and closes its pipes


# A holder stopped inside a SQLite write: it keeps the lock on the whole file.
STOPPED_INSIDE_A_WRITE = """
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


def test_a_lost_holder_stopped_inside_a_sqlite_write_is_fenced_and_taken_over(tmp_path, monkeypatch):
    """SQLite: a job stopped inside a write holds the whole file; once its lease has
    run out it is a lost holder like any other, and on this host it is fenced, which
    ends its write (rolled back), so the next run takes over instead of failing
    with 'the store is locked'."""
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import sqlite as sqlite_store

    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT", 1.0)
    url = f"sqlite:///{tmp_path / 's.db'}?lock_lease=1&lock_renew=0.2"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen([sys.executable, "-c", STOPPED_INSIDE_A_WRITE, url], stdout=subprocess.PIPE,
                              text=True, env=environment)
    try:
        assert holder.stdout.readline() == "inside\n"
        os.kill(holder.pid, signal.SIGSTOP)
        time.sleep(1.5)  # its lease (1 s) runs out
        taker = open_store(url)
        try:
            assert taker.acquire_lock("web", "job 2") == 2
            note = taker.lock_record("web").note
            events = [e.status for e in taker.events(taker.find_stack("web").id)]
        finally:
            taker.close()
        assert holder.wait(timeout=10) == -signal.SIGKILL
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.communicate()  # waits, and closes its pipes
    assert note.endswith(f"; fenced: stopped and killed its processes {holder.pid} before this run acted"
                         " (it held the store's write lock)"), note
    assert events == []  # its unfinished write was rolled back


def test_a_run_holds_its_lease_s_proof_while_it_holds_the_lease(store_url):
    """The row keeps only the digest; the nonce is this process's, from the
    acquisition to the release, and bound to that lease (stack, token, store)."""
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.proofs import holds  # pylint: disable=import-outside-toplevel

    store, before = open_store(store_url), set(_lease_nonces())
    try:
        assert store.acquire_lock("web", "job 1") == 1
        lease, identity = store.lock_record("web"), store._store_identity()  # pylint: disable=protected-access
        assert len(lease.proof) == 64 and len(identity) == 32
        assert holds(os.getpid(), identity, "web", 1, lease.proof)
        assert not holds(os.getpid(), identity, "web", 2, lease.proof)
        assert not holds(os.getpid(), identity, "db", 1, lease.proof)
        assert not holds(os.getpid(), "another store", "web", 1, lease.proof)
        [nonce] = set(_lease_nonces()) - before
        assert nonce not in repr([store.stored_rows(table) for table in store.stored_tables()])  # never stored
        store.release_lock("web", "job 1")
        assert not holds(os.getpid(), identity, "web", 1, lease.proof)  # closed with the release
    finally:
        store.close()


def _lease_nonces() -> list[str]:
    """The nonces of the lease proofs this process holds open."""
    found = []
    for entry in os.listdir(f"/proc/{os.getpid()}/fd"):
        try:
            target = os.readlink(f"/proc/{os.getpid()}/fd/{entry}")
        except OSError:
            continue  # the listing's own descriptor
        if target.startswith("/memfd:hotplay-lease:"):
            found.append(target[len("/memfd:hotplay-lease:"):].split()[0])
    return found
