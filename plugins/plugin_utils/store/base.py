# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every store keeps, and the interface the engine uses to keep it.

The store is the source of truth: the executor writes a resource's intent before
it acts and the outcome after.  Records are plain frozen dataclasses, so an
implementation only maps them to its tables (SQLite now, PostgreSQL next).
"""

from __future__ import annotations

import datetime
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


def utc_now() -> str:
    """Heat's timestamp format: ``2026-11-22T03:09:51Z``."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class ResourceState:
    """The recorded state of a resource, as the store keeps it."""

    name: str
    type: str
    action: str = "INIT"  # INIT | CREATE | UPDATE | DELETE | ROLLBACK | CHECK
    status: str = "COMPLETE"  # IN_PROGRESS | COMPLETE | FAILED
    status_reason: str = ""
    physical_id: str = ""
    properties: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)
    # For nested-stack types: the store id of the child stack.
    nested_stack_id: str | None = None
    # What deleting the stack (or dropping the resource) does: Delete or Retain.
    deletion_policy: str = "Delete"
    # The builtin type or provider template that implements ``type`` (after the
    # resource registry): what a delete needs when no definition is at hand.
    implementation: str = ""
    # The rest of the resolved definition: a change to any of it is an update,
    # as Heat compares whole frozen definitions.
    metadata: Mapping[str, Any] = field(default_factory=dict)
    update_policy: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StackRecord:
    id: str
    name: str
    action: str
    status: str
    status_reason: str
    created: str
    updated: str
    revision: int = 0
    parent_id: str | None = None
    parent_resource: str | None = None
    outputs: Mapping[str, Any] = field(default_factory=dict)
    output_errors: Mapping[str, str] = field(default_factory=dict)
    # Settings the stack keeps between runs (top-level stacks): Heat's tags, and
    # whether a deletion is refused until the protection is lifted.
    tags: tuple[str, ...] = ()
    deletion_protection: bool = False

    @property
    def stack_status(self) -> str:
        return f"{self.action}_{self.status}"


@dataclass(frozen=True)
class RevisionRecord:
    stack_id: str
    revision: int
    action: str
    status: str
    status_reason: str
    created: str
    definition: Mapping[str, Any]
    digest: str
    # What the apply left: resource path -> {type, status, physical_id}.
    outcome: Mapping[str, Any] = field(default_factory=dict)
    finished: str = ""


@dataclass(frozen=True)
class EventRecord:
    id: int
    stack_id: str
    resource_name: str
    action: str
    status: str
    reason: str
    physical_id: str
    time: str


@dataclass(frozen=True)
class HookRecord:
    """A breakpoint reached by a run: pending until someone clears it."""

    stack_id: str
    resource_name: str
    hook: str  # pre-create, post-update, ...; "step" marks a stepping run
    revision: int
    status: str  # PENDING | CLEARED
    created: str


@dataclass(frozen=True)
class SignalRecord:
    """A signal a resource received (Heat's ``resource signal`` body), in order."""

    stack_id: str
    resource_name: str
    physical_id: str  # the physical resource it reached (a replaced handle's are not the new one's)
    seq: int  # 1, 2, ...: the order the signals came in
    body: Any  # as sent: a mapping, or None
    received: str


@dataclass(frozen=True)
class KeyringRecord:
    """How a stack's secrets are locked (see ``secrets.py``): the salt its data key
    is derived with, a key check (a known text sealed with that key: a wrong key is
    told at once) and the stack's secret values (an envelope of a JSON list), so a
    later run masks and encrypts them too.  Self-contained: a copied row opens in
    another store with the same key."""

    stack_id: str
    salt: str
    key_check: str
    secrets: str = ""
    updated: str = ""


@dataclass(frozen=True)
class LeaseTerms:
    """How long a stack's lock is held without news of its holder (``length``) and
    how often a live holder renews it (``renew_every``), in seconds.  A holder that
    dies, or loses touch with the store, loses the lock one ``length`` after its
    last renewal; so ``renew_every`` is well under ``length`` (a third by default):
    two renewals may fail before a live holder's lease runs out."""

    length: float = 30.0
    renew_every: float = 10.0


@dataclass(frozen=True)
class LeaseRecord:
    """A stack's lock row: the lease of the run that took the current ``token``.

    ``token`` grows by one with every acquisition and every break, never goes back:
    a run's writes carry the token it got, so a run whose lease was taken over
    writes nothing more (fencing).  The other fields name who took it (a run, or
    an operator who broke the lock) and where its process runs.  ``expires`` and
    ``now`` are seconds since the epoch by the store's clock (the database server's
    for PostgreSQL); ``expires`` is 0 once the lease was released or broken."""

    stack_name: str
    token: int
    holder: str
    host: str
    pid: int
    pid_space: str  # boot id and PID namespace of the holder's process
    pid_start: str  # its start time: a reused pid is not taken for it
    acquired: str  # Heat timestamp of the acquisition (or the break)
    expires: float
    note: str  # how the token began: "" (free), a takeover, a break and its reason
    now: float = 0.0
    proof: str = ""  # digest of the nonce its holder keeps (proofs.py), checked before fencing

    @property
    def held(self) -> bool:
        """A run holds it and its lease has not run out."""
        return self.expires > self.now

    @property
    def broken(self) -> bool:
        return self.note.startswith(BROKEN_NOTE)

    @property
    def taken_over(self) -> bool:
        """Its holder took it from a run that had not released it."""
        return self.note.startswith(TAKEOVER_NOTE)

    def expiry_time(self) -> str:
        """``expires`` as a Heat timestamp ("" when released or broken)."""
        if self.expires <= 0:
            return ""
        moment = datetime.datetime.fromtimestamp(self.expires, datetime.timezone.utc)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    def who(self) -> str:
        """The holder as a refusal names it."""
        return f"{self.holder} (pid {self.pid} on {self.host}, since {self.acquired})"


# The note of a lease broken by an operator: "broken: <reason>".
BROKEN_NOTE = "broken: "
# The note of a lease taken from a run that had not released it (its lease ran
# out, or its process is gone): "took over from <holder>, token <n>: <why>".
TAKEOVER_NOTE = "took over from "


@dataclass(frozen=True)
class StoredResource:
    """A resource row: its state plus the bookkeeping the store adds."""

    stack_id: str
    state: ResourceState
    requires: tuple[str, ...] = ()
    # Position in the template (creation order), for stable listings.
    position: int = 0
    # 0 for the live resource; for one that a replacement retired, the revision
    # that replaced it (kept until an update completes, for rollback).
    retired_in: int = 0
    # For a retired resource: until when a successful update keeps it (Heat
    # timestamp format; "" means it goes with the next successful update).
    keep_until: str = ""


class Store(ABC):
    """A place that keeps stacks, revisions, resources and events."""

    url: str

    # -- life cycle -----------------------------------------------------------------
    @abstractmethod
    def close(self) -> None: ...

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[None]:
        """Group several writes into one atomic transaction, committed when it ends;
        with ``durable=False`` (bookkeeping of what already happened) the commit may
        wait for the next durable write or ``flush``."""
        yield

    def flush(self) -> None:
        """Commit the writes whose commit was deferred."""

    # -- locks (leases with fencing: store/leases.py) ---------------------------------
    lease_terms: LeaseTerms = LeaseTerms()

    @abstractmethod
    def acquire_lock(self, stack_name: str, holder: str) -> int:
        """Take the stack's lock (a free or expired lease) or raise ``StackLocked``
        naming the holder; the lease's token.  From here on every write of this
        store checks the token first and raises ``LockLost`` once it changed."""

    @abstractmethod
    def renew_lock(self, stack_name: str) -> None:
        """Extend the lease this store holds by ``lease_terms.length`` from now;
        ``LockLost`` when it was taken over or broken."""

    @abstractmethod
    def release_lock(self, stack_name: str, holder: str) -> None: ...

    @abstractmethod
    def lock_record(self, stack_name: str) -> LeaseRecord | None:
        """The stack's lock row, None when it was never locked."""

    @abstractmethod
    def break_lock(self, stack_name: str, by: str, reason: str) -> LeaseRecord | None:
        """End the lease, held or not, whoever holds it: the token grows, so its
        holder writes nothing more.  The row as it was, None when never locked."""

    # -- stacks ---------------------------------------------------------------------
    @abstractmethod
    def find_stack(self, name: str) -> StackRecord | None:
        """The live top-level stack of that name (not deleted), if any."""

    @abstractmethod
    def get_stack(self, stack_id: str) -> StackRecord: ...

    @abstractmethod
    def list_stacks(self) -> list[StackRecord]:
        """Live top-level stacks."""

    @abstractmethod
    def child_stacks(self, stack_id: str) -> list[StackRecord]: ...

    @abstractmethod
    def create_stack(
        self, name: str, parent_id: str | None = None, parent_resource: str | None = None,
        stack_id: str | None = None,
    ) -> StackRecord: ...

    @abstractmethod
    def set_stack_status(self, stack_id: str, action: str, status: str, reason: str) -> None: ...

    @abstractmethod
    def set_stack_outputs(
        self, stack_id: str, outputs: Mapping[str, Any], errors: Mapping[str, str]
    ) -> None: ...

    @abstractmethod
    def set_stack_settings(self, stack_id: str, tags: Sequence[str], deletion_protection: bool) -> None:
        """Keep the stack's tags and its deletion protection."""

    @abstractmethod
    def mark_stack_deleted(self, stack_id: str) -> None:
        """Keep the history, but free the name and drop the resources."""

    # -- revisions ------------------------------------------------------------------
    @abstractmethod
    def add_revision(
        self, stack_id: str, action: str, definition: Mapping[str, Any], digest: str
    ) -> int: ...

    @abstractmethod
    def finish_revision(
        self, stack_id: str, revision: int, status: str, reason: str,
        outcome: Mapping[str, Any] | None = None,
    ) -> None: ...

    @abstractmethod
    def revisions(self, stack_id: str) -> list[RevisionRecord]: ...

    def last_revision(self, stack_id: str) -> RevisionRecord | None:
        """The stack's latest revision (None before its first).  Stores read it alone:
        each revision holds a whole definition, and an apply needs only the last."""
        revisions = self.revisions(stack_id)
        return revisions[-1] if revisions else None

    # -- resources ------------------------------------------------------------------
    @abstractmethod
    def resources(self, stack_id: str) -> list[StoredResource]:
        """The live resources of a stack, in template order."""

    @abstractmethod
    def retired_resources(self, stack_id: str) -> list[StoredResource]:
        """Resources replaced by an update and not deleted yet."""

    @abstractmethod
    def retire_resource(self, stack_id: str, name: str, revision: int, keep_until: str = "") -> None:
        """Keep the live row of ``name`` aside as replaced in ``revision``."""

    @abstractmethod
    def restore_resource(self, stack_id: str, name: str, retired_in: int, revision: int,
                         keep_until: str = "") -> None:
        """Make a retired row live again; the live row of ``name`` (if any) is
        retired in ``revision`` in its place.  One transaction."""

    @abstractmethod
    def save_resource(
        self, stack_id: str, state: ResourceState, requires: Sequence[str] = (), position: int = 0,
        retired_in: int = 0,
    ) -> None:
        """Insert or replace the row of ``state.name`` (live, or retired in a revision)."""

    @abstractmethod
    def delete_resource(self, stack_id: str, name: str, retired_in: int = 0) -> None: ...

    # -- hooks ----------------------------------------------------------------------
    @abstractmethod
    def hook_status(self, stack_id: str, resource_name: str, hook: str, revision: int) -> str | None:
        """PENDING, CLEARED, or None when the run never reached that hook."""

    @abstractmethod
    def set_hook(self, stack_id: str, resource_name: str, hook: str, revision: int, status: str) -> None: ...

    @abstractmethod
    def hooks(self, stack_id: str, status: str | None = None) -> list[HookRecord]:
        """The stack's hooks (not its nested stacks'), oldest first."""

    # -- signals --------------------------------------------------------------------
    @abstractmethod
    def add_signal(self, stack_id: str, resource_name: str, physical_id: str, body: Any) -> int:
        """Append a signal to a physical resource (no lease needed); its ``seq``."""

    @abstractmethod
    def signals(self, stack_id: str, resource_name: str, physical_id: str) -> list[SignalRecord]:
        """The signals a physical resource received, in order."""

    @abstractmethod
    def delete_signals(self, stack_id: str, resource_name: str, physical_id: str) -> None: ...

    # -- secrets --------------------------------------------------------------------
    @abstractmethod
    def store_salt(self) -> str:
        """The store's salt for new keyrings (made on first use, then fixed): a
        preview and the apply after it derive the same key for a new stack."""

    @abstractmethod
    def keyring(self, stack_id: str) -> KeyringRecord | None:
        """The stack's keyring, None when it never stored a secret."""

    @abstractmethod
    def save_keyring(self, record: KeyringRecord) -> None:
        """Insert or replace the stack's keyring."""

    # -- events ---------------------------------------------------------------------
    @abstractmethod
    def add_event(
        self,
        stack_id: str,
        resource_name: str,
        action: str,
        status: str,
        reason: str,
        physical_id: str = "",
    ) -> EventRecord: ...

    @abstractmethod
    def events(self, stack_id: str, after_id: int = 0) -> list[EventRecord]: ...
