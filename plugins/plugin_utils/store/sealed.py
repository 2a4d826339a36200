# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A store that keeps secrets encrypted: every value written through it that holds
a secret is sealed (``secrets.py``), and sealed values are opened when read.

It wraps a backend (SQLite, PostgreSQL), so both behave alike and the backends stay
plain row mappers.  What is sealed is the smallest piece that holds a secret: a
string inside a JSON column (a property, an output, a parameter, the text of an
environment file), or a whole text column (a status reason, an event's reason).
Everything else stays readable, so views and locks work without the key.

Without a key, no secret can be stored: the engine refuses such a run before it
writes anything (``unlock``, ``require_key``), and a write that would still hold a
secret fails here rather than store it in plain text.  Reading without a key shows
each sealed value as ``******``.  A wrong key is told once, by the stack's key
check, before anything is read or written.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from .base import ResourceState
from ..secrets import (
    MASK,
    PREFIX,
    SecretValues,
    StoreKey,
    WrongKey,
    is_envelope,
    key_missing,
    key_opens,
    key_wrong,
    keyed_digest,
    make_key_check,
    open_envelope,
    seal,
)
from .base import (
    EventRecord,
    HookRecord,
    KeyringRecord,
    LeaseRecord,
    RevisionRecord,
    SignalRecord,
    StackRecord,
    Store,
    StoredResource,
    utc_now,
)


# The fields of a resource's state that may hold secrets.
_SECRET_FIELDS = ("status_reason", "physical_id", "properties", "data", "metadata", "update_policy")


def _same_values(opened: Mapping[str, Any], value: Mapping[str, Any]) -> bool:
    return all(opened[key] is item for key, item in value.items())


_SCALARS = (int, float, bool, type(None))


def _nothing_sealed(value: dict[str, Any]) -> bool:
    """A flat dict of plain values (most records' properties and data): nothing to
    open in it, told without building a copy to compare."""
    for item in value.values():
        kind = type(item)
        if kind is str:
            if item.startswith(PREFIX):
                return False
        elif kind not in _SCALARS:
            return False
    return True


class SealedStore(Store):
    """A backend store, with secrets sealed on the way in and opened on the way out."""

    def __init__(self, inner: Store, key: StoreKey | None = None) -> None:
        self.inner = inner
        self.url = inner.url
        self.lease_terms = inner.lease_terms
        self.key = key
        self._values = SecretValues()
        # Masked in what tasks show, kept as they are (SecretValues.shown_only).
        self.shown_only = SecretValues()
        self._values.shown_only = self.shown_only
        self._lock = threading.RLock()
        # The top-level stack being worked on: its id (None until its row exists),
        # its name, and its keyring once it has one.
        self._root_id: str | None = None
        self._root_name = ""
        self._keyring: KeyringRecord | None = None
        # The secret values the keyring holds (read at unlock, or last saved).
        self._kept: frozenset[str] = frozenset()
        self._store_salt: str | None = None

    def __getattr__(self, name: str) -> Any:
        # Backend specifics (schema_version, path, ...) stay reachable.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    @contextmanager
    def _keyring_lock(self) -> Iterator[None]:
        """The backend's transaction, then ours: always in that order, since a
        worker thread that seals inside a transaction holds the backend's first."""
        with self.inner.transaction(), self._lock:
            yield

    @property
    def secrets(self) -> SecretValues:
        return self._values

    # -- binding to a stack -------------------------------------------------------------
    def unlock(self, name: str, stack: StackRecord | None, run: bool) -> None:
        """Work on stack ``name`` (``stack``: its record, None when it is new).

        Checks the key against the stack's keyring (a wrong key fails here) and
        learns the stack's secret values.  A ``run`` (apply, preview, rollback,
        delete: they need the real values) without a key on a stack that keeps
        secrets is refused before anything is written; a view goes on, and shows
        sealed values as ``******``."""
        keyring = self.inner.keyring(stack.id) if stack is not None else None
        if keyring is not None and self.key is not None:
            if not key_opens(self.key, keyring.key_check, keyring.stack_id):
                raise key_wrong(name)
        with self._lock:
            self._root_name = name
            self._root_id = stack.id if stack is not None else None
            self._keyring = keyring
            self._kept = frozenset()
        if keyring is None:
            return
        if self.key is None:
            if run:
                raise key_missing(f"stack {name} keeps secrets in the store")
            return
        stored = self._stored_secrets(keyring)
        self._values.add(stored)
        with self._lock:
            self._kept = frozenset(stored)

    def attach(self, stack_id: str) -> None:
        """The stack's row exists now: keep its secret values with it (a keyring is
        made when there is something to keep and a key to lock it with).  Values
        learnt before, such as an update's new hidden parameter values, are kept
        too: without them, a later view or export showed those values in the clear."""
        with self._keyring_lock():
            self._root_id = stack_id
            self._values.listener = self._persist
            if self._values and self.key is not None and (
                    self._keyring is None or not self._values.atoms <= self._kept):
                self._save_keyring(self._values.atoms)

    def require_key(self, what: str) -> None:
        """Refuse (before anything is written) when secrets are known but no key."""
        if self._values and self.key is None:
            raise key_missing(what)

    def can_store(self, value: Any) -> bool:
        """Whether ``value`` can be written: it holds no secret, or there is a key."""
        return self.key is not None or not self._values.found_in(
            value.__dict__ if isinstance(value, ResourceState) else value)

    def digest(self, parts: Sequence[bytes]) -> str:
        """SHA-256 of ``parts``; keyed (HMAC) when they hold a secret, so that a
        digest or plan id shown or stored cannot be searched for the secret."""
        if self.key is not None and any(self._values.in_text(p.decode("utf-8", "replace"))
                                        for p in parts):
            return keyed_digest(self.key, self._salt(), parts)
        plain = hashlib.sha256()
        for part in parts:
            plain.update(part)
        return plain.hexdigest()

    # -- keyring --------------------------------------------------------------------------
    def _salt(self) -> str:
        if self._keyring is not None:
            return self._keyring.salt
        if self._store_salt is None:
            self._store_salt = self.inner.store_salt()
        return self._store_salt

    def _stored_secrets(self, keyring: KeyringRecord) -> list[str]:
        if not keyring.secrets or self.key is None:
            return []
        try:
            return list(json.loads(open_envelope(self.key, keyring.secrets, f"{keyring.stack_id}:secrets")))
        except WrongKey:
            raise key_wrong(self._root_name or keyring.stack_id) from None

    def _persist(self, new: frozenset[str]) -> None:
        del new  # the whole set is written again: one row
        with self._keyring_lock():
            if self.key is not None and self._root_id is not None:
                self._save_keyring(self._values.atoms)

    def _save_keyring(self, atoms: frozenset[str]) -> KeyringRecord:
        key, root, keyring = self.key, self._root_id, self._keyring
        if key is None or root is None:
            raise RuntimeError("a keyring needs a key and a stack")  # callers check both
        if keyring is None:
            salt = self._salt()
            keyring = KeyringRecord(root, salt, make_key_check(key, salt, root))
        secrets = seal(key, keyring.salt, json.dumps(sorted(atoms)).encode(), f"{root}:secrets")
        saved = self._keyring = replace(keyring, secrets=secrets, updated=utc_now())
        self.inner.save_keyring(saved)
        self._kept = atoms
        return saved

    def _ensure_keyring(self, stack_id: str) -> KeyringRecord:
        """A secret is about to be sealed: the stack tree's keyring must exist first."""
        keyring = self._keyring
        if keyring is not None:
            return keyring
        with self._keyring_lock():
            if self._keyring is not None:
                return self._keyring
            if self._root_id is None:
                self._root_id = self._root_of(stack_id)
            saved = self._save_keyring(self._values.atoms)
            self._values.listener = self._persist
            return saved

    def _root_of(self, stack_id: str) -> str:
        stack = self.inner.get_stack(stack_id)
        while stack.parent_id:
            stack = self.inner.get_stack(stack.parent_id)
        return stack.id

    # -- sealing and opening -----------------------------------------------------------
    def _sealed(self, stack_id: str, value: Any) -> Any:
        """``value`` with each smallest piece that holds a secret sealed."""
        if not self._values:
            return value
        if isinstance(value, Mapping):
            if any(self._values.found_in(k) for k in value):
                return self._sealed_scalar(stack_id, value)  # a secret key: seal it whole
            return {k: self._sealed(stack_id, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._sealed(stack_id, item) for item in value]
        if self._values.is_secret_scalar(value) or is_envelope(value):
            return self._sealed_scalar(stack_id, value)
        return value

    def _sealed_scalar(self, stack_id: str, value: Any) -> str:
        if self.key is None:
            raise key_missing(f"a value of stack {self._root_name or stack_id} holds a secret")
        return seal(self.key, self._ensure_keyring(stack_id).salt, json.dumps(value).encode(), stack_id)

    def _sealed_text(self, stack_id: str, text: str) -> str:
        sealed = self._sealed(stack_id, text)
        return sealed if isinstance(sealed, str) else text

    def _opened(self, stack_id: str, value: Any) -> Any:
        kind = type(value)  # exact types first: every row read goes through here
        if kind is str:
            if not value.startswith(PREFIX):
                return value
        elif kind is dict and _nothing_sealed(value):
            return value
        elif kind is dict or isinstance(value, Mapping):
            opened = {k: self._opened(stack_id, v) for k, v in value.items()}
            # Nothing sealed inside: the row's own (freshly decoded) dict, so a
            # record with nothing to open is kept as it is (see _state).
            return value if kind is dict and _same_values(opened, value) else opened
        elif kind is list:
            items = [self._opened(stack_id, item) for item in value]
            return value if all(a is b for a, b in zip(items, value)) else items
        else:
            return value
        if self.key is None:
            return MASK
        try:
            return json.loads(open_envelope(self.key, value, stack_id))
        except WrongKey:
            raise key_wrong(self._name_of(stack_id)) from None

    def _name_of(self, stack_id: str) -> str:
        try:
            return self.inner.get_stack(self._root_of(stack_id)).name
        except Exception:  # noqa: BLE001 - only for the message
            return stack_id

    def _opened_stack(self, stack: StackRecord) -> StackRecord:
        return replace(stack, status_reason=self._opened(stack.id, stack.status_reason),
                       outputs=self._opened(stack.id, stack.outputs),
                       output_errors=self._opened(stack.id, stack.output_errors))

    def _opened_revision(self, revision: RevisionRecord) -> RevisionRecord:
        sid = revision.stack_id
        return replace(revision, status_reason=self._opened(sid, revision.status_reason),
                       definition=self._opened(sid, revision.definition),
                       outcome=self._opened(sid, revision.outcome))

    def _opened_resource(self, stored: StoredResource) -> StoredResource:
        state = self._state(stored.stack_id, stored.state, self._opened)
        return stored if state is stored.state else replace(stored, state=state)

    def _opened_event(self, event: EventRecord) -> EventRecord:
        return replace(event, reason=self._opened(event.stack_id, event.reason),
                       physical_id=self._opened(event.stack_id, event.physical_id))

    @staticmethod
    def _state(stack_id: str, state: ResourceState, change: Any) -> ResourceState:
        """``state`` with ``change`` applied to the fields that may hold secrets
        (``state`` itself when nothing changed: every row read comes here)."""
        changed = {name: change(stack_id, getattr(state, name)) for name in _SECRET_FIELDS}
        if all(changed[name] is getattr(state, name) for name in _SECRET_FIELDS):
            return state
        return replace(state, **changed)

    # -- the Store interface: plain passes, sealed writes, opened reads -----------------
    def close(self) -> None:
        self.inner.close()

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[None]:
        with self.inner.transaction(durable):
            yield

    def flush(self) -> None:
        self.inner.flush()

    def acquire_lock(self, stack_name: str, holder: str) -> int:
        return self.inner.acquire_lock(stack_name, holder)

    def renew_lock(self, stack_name: str) -> None:
        self.inner.renew_lock(stack_name)

    def release_lock(self, stack_name: str, holder: str) -> None:
        self.inner.release_lock(stack_name, holder)

    def lock_record(self, stack_name: str) -> LeaseRecord | None:
        return self.inner.lock_record(stack_name)

    def break_lock(self, stack_name: str, by: str, reason: str) -> LeaseRecord | None:
        return self.inner.break_lock(stack_name, by, reason)

    def find_stack(self, name: str) -> StackRecord | None:
        found = self.inner.find_stack(name)
        return self._opened_stack(found) if found is not None else None

    def get_stack(self, stack_id: str) -> StackRecord:
        return self._opened_stack(self.inner.get_stack(stack_id))

    def list_stacks(self) -> list[StackRecord]:
        return [self._opened_stack(s) for s in self.inner.list_stacks()]

    def child_stacks(self, stack_id: str) -> list[StackRecord]:
        return [self._opened_stack(s) for s in self.inner.child_stacks(stack_id)]

    def create_stack(
        self, name: str, parent_id: str | None = None, parent_resource: str | None = None,
        stack_id: str | None = None,
    ) -> StackRecord:
        return self._opened_stack(self.inner.create_stack(name, parent_id, parent_resource, stack_id))

    def set_stack_status(self, stack_id: str, action: str, status: str, reason: str) -> None:
        self.inner.set_stack_status(stack_id, action, status, self._sealed_text(stack_id, reason))

    def set_stack_outputs(
        self, stack_id: str, outputs: Mapping[str, Any], errors: Mapping[str, str]
    ) -> None:
        self.inner.set_stack_outputs(stack_id, self._sealed(stack_id, dict(outputs)),
                                     self._sealed(stack_id, dict(errors)))

    def set_stack_settings(self, stack_id: str, tags: Sequence[str], deletion_protection: bool) -> None:
        self.inner.set_stack_settings(stack_id, tags, deletion_protection)

    def mark_stack_deleted(self, stack_id: str) -> None:
        self.inner.mark_stack_deleted(stack_id)

    def add_revision(
        self, stack_id: str, action: str, definition: Mapping[str, Any], digest: str
    ) -> int:
        return self.inner.add_revision(stack_id, action, self._sealed(stack_id, dict(definition)), digest)

    def finish_revision(
        self, stack_id: str, revision: int, status: str, reason: str,
        outcome: Mapping[str, Any] | None = None,
    ) -> None:
        self.inner.finish_revision(stack_id, revision, status, self._sealed_text(stack_id, reason),
                                   self._sealed(stack_id, dict(outcome or {})))

    def revisions(self, stack_id: str) -> list[RevisionRecord]:
        return [self._opened_revision(r) for r in self.inner.revisions(stack_id)]

    def last_revision(self, stack_id: str) -> RevisionRecord | None:
        last = self.inner.last_revision(stack_id)
        return None if last is None else self._opened_revision(last)

    def resources(self, stack_id: str) -> list[StoredResource]:
        return [self._opened_resource(r) for r in self.inner.resources(stack_id)]

    def retired_resources(self, stack_id: str) -> list[StoredResource]:
        return [self._opened_resource(r) for r in self.inner.retired_resources(stack_id)]

    def retire_resource(self, stack_id: str, name: str, revision: int, keep_until: str = "") -> None:
        self.inner.retire_resource(stack_id, name, revision, keep_until)

    def restore_resource(self, stack_id: str, name: str, retired_in: int, revision: int,
                         keep_until: str = "") -> None:
        self.inner.restore_resource(stack_id, name, retired_in, revision, keep_until)

    def save_resource(
        self, stack_id: str, state: ResourceState, requires: Sequence[str] = (), position: int = 0,
        retired_in: int = 0,
    ) -> None:
        sealed = self._state(stack_id, state, self._sealed)
        self.inner.save_resource(stack_id, sealed, requires, position, retired_in)

    def delete_resource(self, stack_id: str, name: str, retired_in: int = 0) -> None:
        self.inner.delete_resource(stack_id, name, retired_in)

    def hook_status(self, stack_id: str, resource_name: str, hook: str, revision: int) -> str | None:
        return self.inner.hook_status(stack_id, resource_name, hook, revision)

    def set_hook(self, stack_id: str, resource_name: str, hook: str, revision: int, status: str) -> None:
        self.inner.set_hook(stack_id, resource_name, hook, revision, status)

    def hooks(self, stack_id: str, status: str | None = None) -> list[HookRecord]:
        return self.inner.hooks(stack_id, status)

    def add_signal(self, stack_id: str, resource_name: str, physical_id: str, body: Any) -> int:
        return self.inner.add_signal(stack_id, resource_name, physical_id, body)

    def signals(self, stack_id: str, resource_name: str, physical_id: str) -> list[SignalRecord]:
        return self.inner.signals(stack_id, resource_name, physical_id)

    def delete_signals(self, stack_id: str, resource_name: str, physical_id: str) -> None:
        self.inner.delete_signals(stack_id, resource_name, physical_id)

    def store_salt(self) -> str:
        return self.inner.store_salt()

    def keyring(self, stack_id: str) -> KeyringRecord | None:
        return self.inner.keyring(stack_id)

    def save_keyring(self, record: KeyringRecord) -> None:
        self.inner.save_keyring(record)

    def add_event(
        self, stack_id: str, resource_name: str, action: str, status: str, reason: str,
        physical_id: str = "",
    ) -> EventRecord:
        record = self.inner.add_event(stack_id, resource_name, action, status,
                                      self._sealed_text(stack_id, reason),
                                      self._sealed_text(stack_id, physical_id))
        return replace(record, reason=reason, physical_id=physical_id)

    def events(self, stack_id: str, after_id: int = 0) -> list[EventRecord]:
        return [self._opened_event(e) for e in self.inner.events(stack_id, after_id)]


def sealed(store: Store, key: StoreKey | None = None) -> SealedStore:
    """``store`` as a SealedStore (itself when it is one already)."""
    if isinstance(store, SealedStore):
        return store
    return SealedStore(store, key if key is not None else StoreKey.from_sources(None))
