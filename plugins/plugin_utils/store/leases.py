# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stack locks as leases with fencing, the same on every SQL store.

A stack's lock is a row of ``leases``: who holds it (job, host, process and the
PID namespace it runs in), until when (``expires``, by the store's clock), and a
**token** that grows by one with each acquisition and each break.  A run renews
its lease while it lives (locking.py's heartbeat), and every write of the store it
holds the lease through is fenced: the write's transaction first renews the lease
*where the token is still the run's* (one ``UPDATE``), and when no row matches the
run has lost the lock and the write fails with ``LockLost``.  So a run whose lease
ran out and was taken over, or was broken by an operator, writes nothing more,
whatever happened to its process or its database session meanwhile.

An expired lease may be taken over; a held one never, with one exception that
needs no waiting: a holder in this very PID namespace (same boot, same namespace)
whose process is gone.  A holder elsewhere (another machine, another container,
even one with the same hostname) is judged by its lease alone, and so is one this
process cannot see (another user's, with /proc mounted ``hidepid``): "cannot tell"
is never "gone".  A holder whose
lease ran out may still live (frozen, hung): where this host can reach it, the
run taking over stops it and what it started first (fencing.py).
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, ClassVar, ContextManager

from ..errors import LockLost, StackLocked
from .processes import is_process, pid_space, process_start
from .base import BROKEN_NOTE, TAKEOVER_NOTE, LeaseRecord, LeaseTerms, Store, utc_now
from .fencing import fence
from .proofs import Proof, make_proof

LEASE_COLUMNS = "token, holder, host, pid, pid_space, pid_start, acquired, expires, note, proof"


@dataclass(frozen=True)
class Claimant:
    """This process, as a lease row names its holder."""

    host: str
    pid: int
    pid_space: str
    pid_start: str


def this_process() -> Claimant:
    pid = os.getpid()
    return Claimant(socket.gethostname(), pid, pid_space(), process_start(pid))


def holder_gone(lease: LeaseRecord) -> bool:
    """The holder ran in this PID namespace, and its process has ended (not merely
    hidden from this one: that is judged by the lease)."""
    here = pid_space()
    return bool(here) and lease.pid_space == here and is_process(lease.pid, lease.pid_start) is False


def lost_message(stack_name: str, lease: LeaseRecord | None) -> str:
    """What a run that lost its lock says: who has the stack now, since when."""
    if lease is None:
        return f"lost the lock on stack {stack_name}: its lock row is gone"
    if lease.broken:
        return (f"lost the lock on stack {stack_name}: broken by {lease.holder} at {lease.acquired}: "
                f"{lease.note[len(BROKEN_NOTE):]}")
    return (f"lost the lock on stack {stack_name}: taken over by {lease.holder} (pid {lease.pid} on "
            f"{lease.host}, token {lease.token}) at {lease.acquired}")


def refusal(stack_name: str, lease: LeaseRecord) -> StackLocked:
    """The refusal naming the holder, and when its lease runs out unless renewed."""
    held = StackLocked.held_by(stack_name, lease.holder, lease.pid, lease.host, lease.acquired)
    return StackLocked(f"{held}; its lease runs until {lease.expiry_time()} unless renewed")


class LeaseRows(Store):
    """Leases over a backend's SQL connection (a mixin of ``SqlStore``)."""

    # The backend's words: seconds since the epoch by the store's clock, and how a
    # transaction locks a row it reads ("" where a write transaction already does).
    lease_now: ClassVar[str]
    lease_row_lock: ClassVar[str]
    _lock: threading.RLock  # the backend's connection lock
    _in_transaction: bool

    def _init_leases(self, terms: LeaseTerms) -> None:
        self.lease_terms = terms
        self._fences: dict[str, int] = {}  # stack name -> token of the leases held
        self._proofs: dict[str, Proof] = {}  # stack name -> the proof of its lease, kept open
        self._unfenced = False  # True while the lease rows themselves are written
        # What a backend did to the holder before it could even read the lease row
        # (sqlite.py: a job stopped inside a write), for the takeover note.
        self._fenced_before = ""

    @abstractmethod
    def _select(self, sql: str, args: Sequence[Any] = ()) -> list[Any]: ...

    @abstractmethod
    def _change(self, sql: str, args: Sequence[Any] = ()) -> Any: ...

    # -- fencing (called by the backends' transaction and write) -----------------------
    def _fenced(self) -> ContextManager[None]:
        """Around a write outside a transaction: a transaction of its own when a
        lease is held, so the lease is checked before the write (call with the
        connection lock held)."""
        if self._fences and not self._in_transaction and not self._unfenced:
            return self.transaction()
        return nullcontext()

    def _check_fences(self) -> None:
        """First thing in a write transaction: every lease held is still this
        store's (and renewed: a run that writes is alive)."""
        if not self._unfenced:
            for name, token in list(self._fences.items()):
                self._renew(name, token)

    def _renew(self, name: str, token: int) -> None:
        cursor = self._change(
            f"UPDATE leases SET expires = {self.lease_now} + ? WHERE stack_name = ? AND token = ?",
            (self.lease_terms.length, name, token))
        if not cursor.rowcount:
            # The fence stays: every later write of this run fails the same way.
            raise LockLost(lost_message(name, self.lock_record(name)))

    @contextmanager
    def _lease_writes(self) -> Iterator[None]:
        """Writes of the lease rows themselves (not fenced), in one transaction."""
        with self._lock:
            before, self._unfenced = self._unfenced, True
            try:
                with self.transaction():
                    yield
            finally:
                self._unfenced = before

    # -- the Store interface ---------------------------------------------------------------
    def acquire_lock(self, stack_name: str, holder: str) -> int:
        me = this_process()
        proof: Proof | None = None
        try:
            with self._lease_writes():
                self._change("INSERT INTO leases (stack_name, token) VALUES (?, 0)"
                             " ON CONFLICT (stack_name) DO NOTHING", (stack_name,))
                current = self._lease(stack_name, lock_row=True)
                if current is None:  # inserted above when missing: cannot be
                    raise StackLocked(f'Stack "{stack_name}": its lock row cannot be read')
                if stack_name in self._fences or (current.held and not holder_gone(current)):
                    raise refusal(stack_name, current)
                token = current.token + 1
                identity = self._store_identity(make=True)
                note = _takeover_note(current, identity, self._fenced_before)
                self._fenced_before = ""
                # This process keeps the proof of the lease while it holds it (proofs.py).
                proof = make_proof(identity, stack_name, token)
                self._change(
                    f"UPDATE leases SET token = ?, holder = ?, host = ?, pid = ?, pid_space = ?,"
                    f" pid_start = ?, acquired = ?, expires = {self.lease_now} + ?, note = ?, proof = ?"
                    " WHERE stack_name = ?",
                    (token, holder, me.host, me.pid, me.pid_space, me.pid_start, utc_now(),
                     self.lease_terms.length, note, proof.digest, stack_name))
        except BaseException:
            if proof is not None:
                proof.close()  # the lease was not taken
            raise
        self._fences[stack_name] = token
        self._proofs[stack_name] = proof
        return token

    def renew_lock(self, stack_name: str) -> None:
        token = self._fences.get(stack_name)
        if token is None:
            raise LockLost(f"the lock on stack {stack_name} is not held by this run")
        with self._lock:
            before, self._unfenced = self._unfenced, True
            try:
                self._renew(stack_name, token)
            finally:
                self._unfenced = before

    def release_lock(self, stack_name: str, holder: str) -> None:
        token = self._fences.pop(stack_name, None)
        if token is None:
            return
        try:
            with self._lease_writes():
                # Only its own lease: one taken over (a higher token) is not touched.
                self._change("UPDATE leases SET expires = 0 WHERE stack_name = ? AND token = ?",
                             (stack_name, token))
        finally:
            # Released (or left to run out): this process holds that lease no more.
            proof = self._proofs.pop(stack_name, None)
            if proof is not None:
                proof.close()

    def release_all_locks(self) -> None:
        """On closing: what is still held goes (a lease left behind would only run out)."""
        for name in sorted(self._fences):
            self.release_lock(name, "")

    def lock_record(self, stack_name: str) -> LeaseRecord | None:
        return self._lease(stack_name)

    def break_lock(self, stack_name: str, by: str, reason: str) -> LeaseRecord | None:
        me = this_process()
        with self._lease_writes():
            current = self._lease(stack_name, lock_row=True)
            if current is None:
                return None
            self._change(
                "UPDATE leases SET token = ?, holder = ?, host = ?, pid = ?, pid_space = ?,"
                " pid_start = ?, acquired = ?, expires = 0, note = ?, proof = '' WHERE stack_name = ?",
                (current.token + 1, by, me.host, me.pid, me.pid_space, me.pid_start, utc_now(),
                 BROKEN_NOTE + reason, stack_name))
        return current

    def _store_identity(self, make: bool = False) -> str:
        """This store's own random id (``meta.store_id``, which no copy of its rows
        takes along), which lease proofs are bound to; made on first use when
        ``make`` (inside the lease transaction), else "" when there is none yet."""
        rows = self._select("SELECT value FROM meta WHERE key = 'store_id'")
        if rows or not make:
            return str(rows[0]["value"]) if rows else ""
        self._change("INSERT INTO meta (key, value) VALUES ('store_id', ?) ON CONFLICT (key) DO NOTHING",
                     (uuid.uuid4().hex,))
        return str(self._select("SELECT value FROM meta WHERE key = 'store_id'")[0]["value"])

    def _lease(self, stack_name: str, lock_row: bool = False) -> LeaseRecord | None:
        rows = self._select(
            f"SELECT stack_name, {LEASE_COLUMNS}, {self.lease_now} AS store_now FROM leases"
            f" WHERE stack_name = ?{self.lease_row_lock if lock_row else ''}", (stack_name,))
        return lease_of(rows[0]) if rows else None


def lease_of(row: Any) -> LeaseRecord:
    """A leases row (with ``store_now``) as a record."""
    return LeaseRecord(
        stack_name=row["stack_name"], token=int(row["token"]), holder=row["holder"],
        host=row["host"], pid=int(row["pid"]), pid_space=row["pid_space"],
        pid_start=row["pid_start"], acquired=row["acquired"], expires=float(row["expires"]),
        note=row["note"], now=float(row["store_now"]), proof=row["proof"])


def _takeover_note(previous: LeaseRecord, identity: str, fenced_before: str = "") -> str:
    """How a lease that was not released came to be taken (empty for a free one).
    A holder whose lease ran out may still live (frozen, hung): it is fenced
    first, where this host can reach it and it proves to hold the lease of the
    store ``identity``, and the note says what was done."""
    if previous.expires <= 0 or not previous.holder:
        return ""
    if previous.held:
        why = "its process is gone"
    else:
        why = f"its lease ran out at {previous.expiry_time()}"
        fenced = fence(previous, identity) or fenced_before
        why += f"; {fenced}" if fenced else ""
    return f"{TAKEOVER_NOTE}{previous.who()}, token {previous.token}: {why}"
