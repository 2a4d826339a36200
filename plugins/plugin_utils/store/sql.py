# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SQL every store backend shares: the schema (once, with its version) and the
queries of the ``Store`` interface, written once over a small ``Dialect``.

A backend (``sqlite.py``, ``postgres.py``) gives its dialect, its connection
(``_read``, ``_write``, ``transaction``), its locks and what only it can do (how an
event's id comes back, the catalogue behind ``stored_tables``).  Queries here are
written with ``?`` placeholders; ``Dialect.native`` turns them into the driver's.
"""

from __future__ import annotations

import functools
import re
import uuid
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, ClassVar, ContextManager

from ..errors import StackNotFound, StoreError
from ..secrets import new_salt
from .leases import LeaseRows
from .base import (
    EventRecord,
    HookRecord,
    KeyringRecord,
    ResourceState,
    RevisionRecord,
    SignalRecord,
    StackRecord,
    StoredResource,
    utc_now,
)
from .rows import (
    event_record,
    hook_record,
    keyring_record,
    resource_values,
    revision_record,
    signal_record,
    stack_record,
    stored_resource,
)

SCHEMA_VERSION = 7

# The schema in the order it grew: version -> statements.  ``{json}``, ``{flag}``,
# ``{serial_key}``, ``{live}`` and ``{lock_owner}`` are the dialect's words for a JSON
# column, a boolean column, an auto-numbered key, "this stack is not deleted" and the
# column that tells whether a lock's holder still runs.
META_TABLE = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
SCHEMA: tuple[tuple[int, str], ...] = (
    (1, META_TABLE + """;
CREATE TABLE IF NOT EXISTS stacks (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    parent_id TEXT REFERENCES stacks(id),
    parent_resource TEXT,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL DEFAULT '',
    revision INTEGER NOT NULL DEFAULT 0,
    outputs {json} NOT NULL DEFAULT '{{}}',
    output_errors {json} NOT NULL DEFAULT '{{}}',
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    deleted {flag} NOT NULL DEFAULT {false}
);
CREATE UNIQUE INDEX IF NOT EXISTS stacks_live_name
    ON stacks(name) WHERE {live} AND parent_id IS NULL;
CREATE INDEX IF NOT EXISTS stacks_parent ON stacks(parent_id);
CREATE TABLE IF NOT EXISTS revisions (
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    revision INTEGER NOT NULL,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL,
    definition {json} NOT NULL,
    digest TEXT NOT NULL,
    outcome {json} NOT NULL DEFAULT '{{}}',
    finished TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (stack_id, revision)
);
CREATE TABLE IF NOT EXISTS resources (
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL DEFAULT '',
    physical_id TEXT NOT NULL DEFAULT '',
    properties {json} NOT NULL DEFAULT '{{}}',
    data {json} NOT NULL DEFAULT '{{}}',
    nested_stack_id TEXT,
    deletion_policy TEXT NOT NULL DEFAULT 'Delete',
    implementation TEXT NOT NULL DEFAULT '',
    metadata {json} NOT NULL DEFAULT '{{}}',
    update_policy {json} NOT NULL DEFAULT '{{}}',
    requires {json} NOT NULL DEFAULT '[]',
    position INTEGER NOT NULL DEFAULT 0,
    retired_in INTEGER NOT NULL DEFAULT 0,
    keep_until TEXT NOT NULL DEFAULT '',
    updated TEXT NOT NULL,
    PRIMARY KEY (stack_id, name, retired_in)
);
CREATE TABLE IF NOT EXISTS events (
    id {serial_key},
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    resource_name TEXT NOT NULL,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    physical_id TEXT NOT NULL DEFAULT '',
    time TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_stack ON events(stack_id, id);
CREATE TABLE IF NOT EXISTS hooks (
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    resource_name TEXT NOT NULL,
    hook TEXT NOT NULL,
    revision INTEGER NOT NULL,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (stack_id, resource_name, hook, revision)
);
CREATE TABLE IF NOT EXISTS locks (
    stack_name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    {lock_owner},
    acquired TEXT NOT NULL
);
"""),
    # Secrets encrypted at rest: each stack's keyring (salt, key check, secret values).
    (2, """
CREATE TABLE IF NOT EXISTS stack_keys (
    stack_id TEXT PRIMARY KEY,
    salt TEXT NOT NULL,
    key_check TEXT NOT NULL,
    secrets TEXT NOT NULL DEFAULT '',
    updated TEXT NOT NULL
);
"""),
    # Locks as leases with fencing tokens (leases.py); version 1's locks table is
    # no longer read.
    (3, """
CREATE TABLE IF NOT EXISTS leases (
    stack_name TEXT PRIMARY KEY,
    token BIGINT NOT NULL,
    holder TEXT NOT NULL DEFAULT '',
    host TEXT NOT NULL DEFAULT '',
    pid INTEGER NOT NULL DEFAULT 0,
    pid_space TEXT NOT NULL DEFAULT '',
    pid_start TEXT NOT NULL DEFAULT '',
    acquired TEXT NOT NULL DEFAULT '',
    expires DOUBLE PRECISION NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT ''
);
"""),
    # Version 1's locks table goes: nothing has read or written it since version 3.
    (4, """
DROP TABLE IF EXISTS locks;
"""),
    # A lease names the digest of its holder's proof (proofs.py): fencing signals
    # only a process that holds it.
    (5, """
ALTER TABLE leases ADD COLUMN proof TEXT NOT NULL DEFAULT '';
"""),
    # Settings of a stack kept between runs: Heat's tags, and deletion protection
    # (a stack task with state=absent is refused while it is set).
    (6, """
ALTER TABLE stacks ADD COLUMN tags {json} NOT NULL DEFAULT '[]';
ALTER TABLE stacks ADD COLUMN deletion_protection {flag} NOT NULL DEFAULT {false};
"""),
    # Signals a resource received (Heat's resource signal: a wait condition handle's
    # SUCCESS or FAILURE), in the order they came, per physical resource: appended by
    # stack_signal without the stack's lease (the run that holds it may be the one
    # waiting for them), read by that run.
    (7, """
CREATE TABLE IF NOT EXISTS signals (
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    resource_name TEXT NOT NULL,
    physical_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body {json} NOT NULL,
    received TEXT NOT NULL,
    PRIMARY KEY (stack_id, resource_name, physical_id, seq)
);
"""),
)


# A store is upgraded by the first run of a newer version that opens it, in one
# transaction.  Up to version 2 a stack's lock was a row of ``locks`` (version 1's
# table), which version 4 drops: a job of such a version still running would lose
# its lock under it, and both jobs would apply the stack.  So while a row there is
# held (each backend says when: sqlite.py, postgres.py), the upgrade is refused.
OLD_LOCKS_TABLE = "locks"


@dataclass(frozen=True)
class OldLock:
    """A lock row of version 1's ``locks`` table that its job may still hold."""

    stack_name: str
    holder: str
    host: str
    pid: int
    acquired: str


def old_locks_refusal(store: str, version: int, held: Sequence[OldLock], what_else: str) -> StoreError:
    """Why a store used by a job of an older version is not upgraded, and what to
    do; ``what_else`` says how to free a lock whose job is gone for good."""
    first, others = held[0], [lock.stack_name for lock in held[1:]]
    more = f" (and {len(others)} more: {', '.join(others[:3])}{', ...' if len(others) > 3 else ''})" if others else ""
    return StoreError(
        f"the store {store} is in use by an older hotplay.stacks (schema version {version}): stack "
        f"{first.stack_name} is locked by {first.holder} (pid {first.pid} on {first.host}, since "
        f"{first.acquired}), a job of that version{more}. Upgrading the store to schema version "
        f"{SCHEMA_VERSION} now would drop that lock under the running job, so nothing was changed. Let "
        "that job finish (it removes its lock when it ends) and run this again, and upgrade hotplay.stacks "
        "wherever this store is used (docs/store.md, \"Upgrading hotplay.stacks\"). " + what_else)


@dataclass(frozen=True)
class Dialect:
    """What differs between the SQL of two backends, as data."""

    placeholder: str  # the driver's parameter marker
    json_type: str  # column type of JSON documents
    flag_type: str  # column type of booleans
    false: str  # a boolean literal
    true: str
    serial_key: str  # an auto-numbered integer primary key
    lock_owner: str  # the locks column that tells whether the holder still runs
    live: str  # the condition of a stack not deleted, as the partial index states it
    text_order: str  # appended to ORDER BY on text: byte order, as SQLite's default
    encode: Callable[[Any], Any]  # a JSON value as the driver stores it
    decode: Callable[[Any], Any]  # a JSON column as the driver returns it

    def schema(self, after: int = 0) -> list[tuple[int, str]]:
        """The statements of each schema version newer than ``after``."""
        words = {"json": self.json_type, "flag": self.flag_type, "false": self.false,
                 "serial_key": self.serial_key, "live": self.live, "lock_owner": self.lock_owner}
        return [(version, text.format(**words)) for version, text in SCHEMA if version > after]

    def statements(self, after: int = 0) -> list[tuple[int, str]]:
        """``schema`` one statement at a time (each version's text holds no ``;``
        but between statements), to run inside one transaction."""
        return [(version, statement.strip()) for version, text in self.schema(after)
                for statement in text.split(";") if statement.strip()]

    def native(self, sql: str) -> str:
        """``sql`` written with ``?`` placeholders in the driver's own (every ``?``
        is one: the shared SQL has none inside literals)."""
        return _native(sql, self.placeholder)


@functools.lru_cache(maxsize=256)
def _native(sql: str, placeholder: str) -> str:
    return sql if placeholder == "?" else sql.replace("?", placeholder)


def added_column(statement: str) -> tuple[str, str] | None:
    """The table and column an ``ALTER TABLE ... ADD COLUMN`` statement adds (None
    for another statement).  Every other statement of the schema may run twice
    (``IF NOT EXISTS``); a backend runs this one only where the column is missing,
    so a store whose tables ran ahead of its marker (a marker set back by hand, an
    upgrade an older version left half done) is upgraded all the same."""
    found = re.match(r"ALTER TABLE (\w+) ADD COLUMN (\w+) ", statement)
    return (found.group(1), found.group(2)) if found else None


def quoted(name: str) -> str:
    """A table or column name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def insert_sql(table: str, names: Sequence[str]) -> str:
    """``INSERT`` of one row of ``table`` with the named columns."""
    return (f'INSERT INTO {quoted(table)} ({", ".join(quoted(n) for n in names)})'
            f' VALUES ({", ".join("?" * len(names))})')


class SqlStore(LeaseRows):
    """The ``Store`` interface in SQL, over a backend's connection and dialect
    (locks: leases.py)."""

    dialect: Dialect
    # How a write transaction starts (SQLite: take the write lock at once).
    begin_statement: ClassVar[str] = "BEGIN"
    # A transaction whose COMMIT is deferred: bookkeeping writes wait in it for
    # the next durable write, ``flush`` or ``close`` (see ``transaction``).
    _batch_open = False
    _commit_wanted = False

    # -- transactions (durable, or deferred into the open batch) ------------------------
    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[None]:
        """Writes made together or not at all.  A durable transaction is committed
        when it ends, with every deferred write before it (in order); one with
        ``durable=False`` (a record of what already happened) joins the open batch
        and is committed by the next durable write or ``flush``.  So what is
        committed is always a prefix of the writes made, and intent recorded
        before an action is on disk before it."""
        with self._lock:
            if self._in_transaction:
                self._commit_wanted = self._commit_wanted or durable
                yield
                return
            self._refuse_change()
            joined = self._batch_open
            self._start(joined)
            self._in_transaction, self._commit_wanted = True, durable
            try:
                if not joined:
                    self._check_fences()  # once per real transaction
                yield
            except BaseException:
                self._in_transaction = False
                self._undo(joined)
                raise
            self._in_transaction = False
            if joined:
                self._execute("RELEASE SAVEPOINT hotplay_step")
            if self._commit_wanted:
                self._commit()

    def flush(self) -> None:
        """Commit the deferred writes (before a run waits, and when it ends)."""
        with self._lock:
            if self._batch_open and not self._in_transaction:
                self._commit()

    def _start(self, joined: bool) -> None:
        if joined:  # undone alone on failure, the batch before it kept
            self._execute("SAVEPOINT hotplay_step")
        else:
            self._execute(self.begin_statement)
            self._batch_open = True

    def _commit(self) -> None:
        try:
            self._execute("COMMIT")
        except BaseException:
            self._abandon()
            raise
        self._batch_open = False

    def _undo(self, joined: bool) -> None:
        """Roll back a failed transaction: only its own writes when it joined the
        batch (the whole batch when even that fails, as a kill would lose it)."""
        if joined:
            try:
                self._execute("ROLLBACK TO SAVEPOINT hotplay_step")
                self._execute("RELEASE SAVEPOINT hotplay_step")
                return
            except Exception:  # noqa: BLE001 - the connection's own error: drop the batch
                pass
        self._abandon()

    def _abandon(self) -> None:
        """Roll the open transaction back, whatever state the connection is in."""
        self._batch_open = False
        try:
            self._execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - no transaction left, or no connection
            pass

    def _own_transaction(self) -> ContextManager[None]:
        """Around a write outside a transaction: a durable transaction of its own
        when a batch is open (or a lease is held, so the lease is checked first);
        else the write commits alone (call with the connection lock held)."""
        if self._batch_open and not self._in_transaction:
            return self.transaction()
        return self._fenced() if self._fences else nullcontext()

    @abstractmethod
    def _execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """Run native SQL on the connection."""

    @abstractmethod
    def _refuse_change(self) -> None:
        """Raise when this store cannot be written."""

    # -- the backend's connection (native SQL) ----------------------------------------
    @abstractmethod
    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """Rows of a query, each readable by column name."""

    @abstractmethod
    def _write(self, sql: str, args: Sequence[Any] = ()) -> Any:
        """Run a statement (committed at once outside ``transaction()``)."""

    @abstractmethod
    def _insert_event(self, args: Sequence[Any]) -> int:
        """Insert an events row (``args`` in the order of EVENT_INSERT) and return its id."""

    def _lock_stack_row(self, stack_id: str) -> None:
        """Order concurrent writers of one stack inside a transaction (when the
        backend's transactions do not already)."""

    # -- the shared SQL (``?`` placeholders) --------------------------------------------
    def _select(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        return self._read(self.dialect.native(sql), args)

    def _change(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._write(self.dialect.native(sql), args)

    def schema_version(self) -> int:
        rows = self._select("SELECT value FROM meta WHERE key = 'schema_version'")
        return int(rows[0]["value"])

    # -- stacks ---------------------------------------------------------------------
    def find_stack(self, name: str) -> StackRecord | None:
        rows = self._select(
            f"SELECT * FROM stacks WHERE name = ? AND {self.dialect.live} AND parent_id IS NULL",
            (name,),
        )
        return stack_record(rows[0], self.dialect.decode) if rows else None

    def get_stack(self, stack_id: str) -> StackRecord:
        rows = self._select("SELECT * FROM stacks WHERE id = ?", (stack_id,))
        if not rows:
            raise StackNotFound.named(stack_id)
        return stack_record(rows[0], self.dialect.decode)

    def list_stacks(self) -> list[StackRecord]:
        rows = self._select(
            f"SELECT * FROM stacks WHERE {self.dialect.live} AND parent_id IS NULL"
            f" ORDER BY name{self.dialect.text_order}"
        )
        return [stack_record(row, self.dialect.decode) for row in rows]

    def child_stacks(self, stack_id: str) -> list[StackRecord]:
        order = self.dialect.text_order
        rows = self._select(
            f"SELECT * FROM stacks WHERE parent_id = ? AND {self.dialect.live}"
            f" ORDER BY created{order}, name{order}",
            (stack_id,),
        )
        return [stack_record(row, self.dialect.decode) for row in rows]

    def create_stack(
        self, name: str, parent_id: str | None = None, parent_resource: str | None = None,
        stack_id: str | None = None,
    ) -> StackRecord:
        stack_id = stack_id or str(uuid.uuid4())
        now = utc_now()
        self._change(
            "INSERT INTO stacks(id, name, parent_id, parent_resource, action, status,"
            " created, updated) VALUES (?, ?, ?, ?, 'INIT', 'COMPLETE', ?, ?)",
            (stack_id, name, parent_id, parent_resource, now, now),
        )
        return self.get_stack(stack_id)

    def set_stack_status(self, stack_id: str, action: str, status: str, reason: str) -> None:
        self._change(
            "UPDATE stacks SET action = ?, status = ?, status_reason = ?, updated = ?"
            " WHERE id = ?",
            (action, status, reason, utc_now(), stack_id),
        )

    def set_stack_outputs(
        self, stack_id: str, outputs: Mapping[str, Any], errors: Mapping[str, str]
    ) -> None:
        encode = self.dialect.encode
        self._change(
            "UPDATE stacks SET outputs = ?, output_errors = ? WHERE id = ?",
            (encode(outputs), encode(errors), stack_id),
        )

    def set_stack_settings(self, stack_id: str, tags: Sequence[str], deletion_protection: bool) -> None:
        flag = self.dialect.true if deletion_protection else self.dialect.false
        self._change(
            f"UPDATE stacks SET tags = ?, deletion_protection = {flag}, updated = ? WHERE id = ?",
            (self.dialect.encode(list(tags)), utc_now(), stack_id),
        )

    def mark_stack_deleted(self, stack_id: str) -> None:
        with self.transaction():
            self._change("DELETE FROM resources WHERE stack_id = ?", (stack_id,))
            self._change(f"UPDATE stacks SET deleted = {self.dialect.true} WHERE id = ?", (stack_id,))

    # -- revisions ------------------------------------------------------------------
    def add_revision(
        self, stack_id: str, action: str, definition: Mapping[str, Any], digest: str
    ) -> int:
        with self.transaction():
            self._lock_stack_row(stack_id)
            rows = self._select(
                "SELECT COALESCE(MAX(revision), 0) AS last FROM revisions WHERE stack_id = ?",
                (stack_id,),
            )
            revision = int(rows[0]["last"]) + 1
            self._change(
                "INSERT INTO revisions VALUES (?, ?, ?, 'IN_PROGRESS', '', ?, ?, ?, '{}', '')",
                (stack_id, revision, action, utc_now(), self.dialect.encode(definition), digest),
            )
            self._change("UPDATE stacks SET revision = ? WHERE id = ?", (revision, stack_id))
        return revision

    def finish_revision(
        self, stack_id: str, revision: int, status: str, reason: str,
        outcome: Mapping[str, Any] | None = None,
    ) -> None:
        self._change(
            "UPDATE revisions SET status = ?, status_reason = ?, outcome = ?, finished = ?"
            " WHERE stack_id = ? AND revision = ?",
            (status, reason, self.dialect.encode(outcome or {}), utc_now(), stack_id, revision),
        )

    def revisions(self, stack_id: str) -> list[RevisionRecord]:
        rows = self._select(
            "SELECT * FROM revisions WHERE stack_id = ? ORDER BY revision", (stack_id,)
        )
        return [revision_record(row, self.dialect.decode) for row in rows]

    def last_revision(self, stack_id: str) -> RevisionRecord | None:
        rows = self._select(
            "SELECT * FROM revisions WHERE stack_id = ? ORDER BY revision DESC LIMIT 1", (stack_id,)
        )
        return revision_record(rows[0], self.dialect.decode) if rows else None

    # -- resources ------------------------------------------------------------------
    def resources(self, stack_id: str) -> list[StoredResource]:
        rows = self._select(
            "SELECT * FROM resources WHERE stack_id = ? AND retired_in = 0"
            f" ORDER BY position, name{self.dialect.text_order}",
            (stack_id,),
        )
        return [stored_resource(row, self.dialect.decode) for row in rows]

    def retired_resources(self, stack_id: str) -> list[StoredResource]:
        rows = self._select(
            "SELECT * FROM resources WHERE stack_id = ? AND retired_in > 0"
            f" ORDER BY retired_in, position, name{self.dialect.text_order}",
            (stack_id,),
        )
        return [stored_resource(row, self.dialect.decode) for row in rows]

    def retire_resource(self, stack_id: str, name: str, revision: int, keep_until: str = "") -> None:
        with self.transaction():
            self._retire(stack_id, name, revision, keep_until)

    def _retire(self, stack_id: str, name: str, revision: int, keep_until: str) -> None:
        # A resource replaced twice in one revision keeps only its last old self.
        self._change(
            "DELETE FROM resources WHERE stack_id = ? AND name = ? AND retired_in = ?",
            (stack_id, name, revision),
        )
        self._change(
            "UPDATE resources SET retired_in = ?, keep_until = ?, updated = ?"
            " WHERE stack_id = ? AND name = ? AND retired_in = 0",
            (revision, keep_until, utc_now(), stack_id, name),
        )

    def restore_resource(self, stack_id: str, name: str, retired_in: int, revision: int,
                         keep_until: str = "") -> None:
        with self.transaction():
            self._retire(stack_id, name, revision, keep_until)
            self._change(
                "UPDATE resources SET retired_in = 0, keep_until = '', updated = ?"
                " WHERE stack_id = ? AND name = ? AND retired_in = ?",
                (utc_now(), stack_id, name, retired_in),
            )

    def save_resource(
        self, stack_id: str, state: ResourceState, requires: Sequence[str] = (), position: int = 0,
        retired_in: int = 0,
    ) -> None:
        # The whole row is replaced; a saved resource is never waiting for removal.
        self._change(
            "INSERT INTO resources VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)"
            " ON CONFLICT (stack_id, name, retired_in) DO UPDATE SET"
            " type = excluded.type, action = excluded.action, status = excluded.status,"
            " status_reason = excluded.status_reason, physical_id = excluded.physical_id,"
            " properties = excluded.properties, data = excluded.data,"
            " nested_stack_id = excluded.nested_stack_id,"
            " deletion_policy = excluded.deletion_policy,"
            " implementation = excluded.implementation, metadata = excluded.metadata,"
            " update_policy = excluded.update_policy, requires = excluded.requires,"
            " position = excluded.position, keep_until = '', updated = excluded.updated",
            resource_values(stack_id, state, requires, position, retired_in, self.dialect.encode),
        )

    def delete_resource(self, stack_id: str, name: str, retired_in: int = 0) -> None:
        self._change(
            "DELETE FROM resources WHERE stack_id = ? AND name = ? AND retired_in = ?",
            (stack_id, name, retired_in),
        )

    # -- hooks ----------------------------------------------------------------------
    def hook_status(self, stack_id: str, resource_name: str, hook: str, revision: int) -> str | None:
        rows = self._select(
            "SELECT status FROM hooks WHERE stack_id = ? AND resource_name = ? AND hook = ?"
            " AND revision = ?",
            (stack_id, resource_name, hook, revision),
        )
        return rows[0]["status"] if rows else None

    def set_hook(self, stack_id: str, resource_name: str, hook: str, revision: int, status: str) -> None:
        self._change(
            "INSERT INTO hooks VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT"
            " (stack_id, resource_name, hook, revision) DO UPDATE SET status = excluded.status",
            (stack_id, resource_name, hook, revision, status, utc_now()),
        )

    def hooks(self, stack_id: str, status: str | None = None) -> list[HookRecord]:
        order = self.dialect.text_order
        rows = self._select(
            "SELECT * FROM hooks WHERE stack_id = ? AND (CAST(? AS TEXT) IS NULL OR status = ?)"
            f" ORDER BY created{order}, resource_name{order}",
            (stack_id, status, status),
        )
        return [hook_record(row) for row in rows]

    # -- signals --------------------------------------------------------------------
    def add_signal(self, stack_id: str, resource_name: str, physical_id: str, body: Any) -> int:
        with self.transaction():
            self._lock_stack_row(stack_id)  # two signals at once: one after the other
            rows = self._select(
                "SELECT COALESCE(MAX(seq), 0) AS last FROM signals"
                " WHERE stack_id = ? AND resource_name = ? AND physical_id = ?",
                (stack_id, resource_name, physical_id))
            seq = int(rows[0]["last"]) + 1
            self._change("INSERT INTO signals VALUES (?, ?, ?, ?, ?, ?)",
                         (stack_id, resource_name, physical_id, seq, self.dialect.encode(body), utc_now()))
        return seq

    def signals(self, stack_id: str, resource_name: str, physical_id: str) -> list[SignalRecord]:
        rows = self._select(
            "SELECT * FROM signals WHERE stack_id = ? AND resource_name = ? AND physical_id = ?"
            " ORDER BY seq", (stack_id, resource_name, physical_id))
        return [signal_record(row, self.dialect.decode) for row in rows]

    def delete_signals(self, stack_id: str, resource_name: str, physical_id: str) -> None:
        self._change("DELETE FROM signals WHERE stack_id = ? AND resource_name = ? AND physical_id = ?",
                     (stack_id, resource_name, physical_id))

    # -- secrets --------------------------------------------------------------------
    def store_salt(self) -> str:
        self._change(
            "INSERT INTO meta(key, value) VALUES ('secrets_salt', ?) ON CONFLICT (key) DO NOTHING",
            (new_salt(),),
        )
        return str(self._select("SELECT value FROM meta WHERE key = 'secrets_salt'")[0]["value"])

    def keyring(self, stack_id: str) -> KeyringRecord | None:
        rows = self._select("SELECT * FROM stack_keys WHERE stack_id = ?", (stack_id,))
        return keyring_record(rows[0]) if rows else None

    def save_keyring(self, record: KeyringRecord) -> None:
        self._change(
            "INSERT INTO stack_keys VALUES (?, ?, ?, ?, ?) ON CONFLICT (stack_id) DO UPDATE SET"
            " salt = excluded.salt, key_check = excluded.key_check, secrets = excluded.secrets,"
            " updated = excluded.updated",
            (record.stack_id, record.salt, record.key_check, record.secrets, record.updated or utc_now()),
        )

    # -- events ---------------------------------------------------------------------
    def add_event(
        self,
        stack_id: str,
        resource_name: str,
        action: str,
        status: str,
        reason: str,
        physical_id: str = "",
    ) -> EventRecord:
        now = utc_now()
        event_id = self._insert_event(
            (stack_id, resource_name, action, status, reason, physical_id, now))
        return EventRecord(
            event_id, stack_id, resource_name, action, status, reason, physical_id, now,
        )

    def events(self, stack_id: str, after_id: int = 0) -> list[EventRecord]:
        rows = self._select(
            "SELECT * FROM events WHERE stack_id = ? AND id > ? ORDER BY id", (stack_id, after_id)
        )
        return [event_record(row) for row in rows]

    # -- rows as stored (store_copy: no decoding, so encrypted values stay so) --------
    # -- rows as stored (store.copy): each backend reads and writes its own columns ----
    @abstractmethod
    def stored_tables(self) -> dict[str, list[str]]:
        """Each table of the store with its columns."""

    @abstractmethod
    def stored_rows(self, table: str, column: str | None = None,
                    values: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of ``table`` as stored (where ``column`` is one of ``values``)."""

    @abstractmethod
    def insert_stored_rows(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert rows as they were stored in another store."""

    def delete_stored_rows(self, table: str, column: str, values: Sequence[Any]) -> None:
        if values:
            condition, args = self._one_of(column, values)
            self._write(f"DELETE FROM {quoted(table)} WHERE {condition}", args)

    def _one_of(self, column: str, values: Sequence[Any]) -> tuple[str, Sequence[Any]]:
        """The native condition "``column`` is one of ``values``" (at least one)
        and its arguments."""
        placeholders = ", ".join([self.dialect.placeholder] * len(values))
        return f"{quoted(column)} IN ({placeholders})", tuple(values)


EVENT_INSERT = (
    "INSERT INTO events(stack_id, resource_name, action, status, reason,"
    " physical_id, time) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
