# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared store: a PostgreSQL database (AWX, several controllers), with psycopg 3.

Same behaviour as the SQLite store.  One connection shared by the executor's threads
behind a lock, in autocommit mode: writes outside an explicit ``transaction()``
commit one by one, so intent is durable before the handler acts.

Locks are session-level advisory locks (one per stack name), so the lock of a job
whose process dies goes with its connection; a ``locks`` row names the holder for
the refusal message.  psycopg is imported only when a PostgreSQL store is opened.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import StackLocked, StackNotFound, StoreError
from ..secrets import new_salt
from ..resources.base import ResourceState
from .base import (
    EventRecord,
    HookRecord,
    KeyringRecord,
    RevisionRecord,
    StackRecord,
    Store,
    StoredResource,
    utc_now,
)
from .rows import (
    event_record,
    resource_values,
    hook_record,
    keyring_record,
    revision_record,
    stack_record,
    stored_resource,
)

SCHEMA_VERSION = 2

# Migrations in order: version -> statements.  Each runs once, in one transaction
# with the bump of meta.schema_version.
_MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, """
CREATE TABLE stacks (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    parent_id TEXT REFERENCES stacks(id),
    parent_resource TEXT,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL DEFAULT '',
    revision INTEGER NOT NULL DEFAULT 0,
    outputs JSON NOT NULL DEFAULT '{}',
    output_errors JSON NOT NULL DEFAULT '{}',
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    deleted BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE UNIQUE INDEX stacks_live_name ON stacks(name) WHERE NOT deleted AND parent_id IS NULL;
CREATE INDEX stacks_parent ON stacks(parent_id);
CREATE TABLE revisions (
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    revision INTEGER NOT NULL,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL,
    definition JSON NOT NULL,
    digest TEXT NOT NULL,
    outcome JSON NOT NULL DEFAULT '{}',
    finished TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (stack_id, revision)
);
CREATE TABLE resources (
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL DEFAULT '',
    physical_id TEXT NOT NULL DEFAULT '',
    properties JSON NOT NULL DEFAULT '{}',
    data JSON NOT NULL DEFAULT '{}',
    nested_stack_id TEXT,
    deletion_policy TEXT NOT NULL DEFAULT 'Delete',
    implementation TEXT NOT NULL DEFAULT '',
    metadata JSON NOT NULL DEFAULT '{}',
    update_policy JSON NOT NULL DEFAULT '{}',
    requires JSON NOT NULL DEFAULT '[]',
    position INTEGER NOT NULL DEFAULT 0,
    retired_in INTEGER NOT NULL DEFAULT 0,
    keep_until TEXT NOT NULL DEFAULT '',
    updated TEXT NOT NULL,
    PRIMARY KEY (stack_id, name, retired_in)
);
CREATE TABLE events (
    id BIGSERIAL PRIMARY KEY,
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    resource_name TEXT NOT NULL,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    physical_id TEXT NOT NULL DEFAULT '',
    time TEXT NOT NULL
);
CREATE INDEX events_stack ON events(stack_id, id);
CREATE TABLE hooks (
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    resource_name TEXT NOT NULL,
    hook TEXT NOT NULL,
    revision INTEGER NOT NULL,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (stack_id, resource_name, hook, revision)
);
CREATE TABLE locks (
    stack_name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    backend_pid INTEGER NOT NULL,
    acquired TEXT NOT NULL
);
"""),
    # Secrets encrypted at rest: each stack's keyring (salt, key check, secret values).
    (2, """
CREATE TABLE stack_keys (
    stack_id TEXT PRIMARY KEY,
    salt TEXT NOT NULL,
    key_check TEXT NOT NULL,
    secrets TEXT NOT NULL DEFAULT '',
    updated TEXT NOT NULL
);
"""),
)

# Serialises schema creation/migration between stores opening the same database.
_MIGRATION_LOCK_KEY = 0x686F74706C6179  # "hotplay"

# The advisory lock key of a stack: 64 bits of md5, so two stack names never share a
# lock in practice (hashtext() has only 32 bits).
_LOCK_KEY_SQL = "('x' || substr(md5('hotplay.stacks:' || %s), 1, 16))::bit(64)::bigint"


def _psycopg() -> Any:
    try:
        import psycopg  # pylint: disable=import-outside-toplevel
        import psycopg.types.json  # pylint: disable=import-outside-toplevel,unused-import
    except ImportError as exc:
        raise StoreError(
            "a postgresql:// store needs the Python package psycopg 3 on the controller "
            "(pip install 'psycopg[binary]>=3.1')"
        ) from exc
    return psycopg


def redact_url(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"^([a-z]+://[^:/@]*):[^@/]*@", r"\1:***@", url)


class PostgresStore(Store):
    """The shared store."""

    def __init__(self, url: str, connect_timeout: int = 10) -> None:
        self.url = url
        self._shown = redact_url(url)
        self._lock = threading.RLock()
        self._in_transaction = False
        self._held: set[str] = set()
        self._pg = _psycopg()
        self._conn = self._connect(connect_timeout)
        try:
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    # -- life cycle -----------------------------------------------------------------
    def _connect(self, connect_timeout: int) -> Any:
        pg = self._pg
        try:
            return pg.connect(
                self.url,
                autocommit=True,
                connect_timeout=connect_timeout,
                application_name="hotplay.stacks",
            )
        except pg.ProgrammingError as exc:  # a malformed URL
            raise StoreError(f"store URL {self._shown!r} is not valid: {_first_line(exc)}") from None
        except pg.Error as exc:
            raise StoreError(
                f"cannot connect to the store {self._shown}: {_first_line(exc)}"
            ) from None

    def _migrate(self) -> None:
        with self.transaction():
            self._execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK_KEY,))
            self._execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            rows = self._read("SELECT value FROM meta WHERE key = 'schema_version'")
            current = int(rows[0]["value"]) if rows else 0
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"the store {self._shown} has schema version {current}, newer than this "
                    f"hotplay.stacks knows ({SCHEMA_VERSION}): upgrade the collection"
                )
            for version, statements in _MIGRATIONS:
                if version <= current:
                    continue
                self._execute(statements)
                self._execute(
                    "INSERT INTO meta(key, value) VALUES ('schema_version', %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(version),),
                )

    def schema_version(self) -> int:
        rows = self._read("SELECT value FROM meta WHERE key = 'schema_version'")
        return int(rows[0]["value"])

    def close(self) -> None:
        with self._lock:
            if self._conn.closed:
                return
            try:
                for name in sorted(self._held):
                    self._execute(
                        "DELETE FROM locks WHERE stack_name = %s AND backend_pid = pg_backend_pid()",
                        (name,),
                    )
            except StoreError:
                pass
            self._held.clear()
            self._conn.close()  # ends the session: its advisory locks go with it

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._in_transaction:
                yield
                return
            self._execute("BEGIN")
            self._in_transaction = True
            try:
                yield
            except BaseException:
                self._in_transaction = False
                if not self._conn.closed and not self._conn.broken:
                    try:
                        self._execute("ROLLBACK")
                    except StoreError:
                        pass
                raise
            else:
                self._in_transaction = False
                self._execute("COMMIT")
            finally:
                self._in_transaction = False

    def _execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        with self._lock:
            try:
                return self._conn.execute(sql, args or None)
            except self._pg.OperationalError as exc:
                raise StoreError(
                    f"lost the connection to the store {self._shown}: {_first_line(exc)}"
                ) from None
            except self._pg.InterfaceError as exc:
                raise StoreError(
                    f"the connection to the store {self._shown} is closed: {_first_line(exc)}"
                ) from None
            except self._pg.Error as exc:
                raise StoreError(f"store {self._shown}: {_first_line(exc)}") from exc

    def _write(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._execute(sql, args)

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._execute(sql, args)
            names = [column.name for column in cursor.description or ()]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

    def _json(self, value: Any) -> Any:
        return self._pg.types.json.Json(value, dumps=json.dumps)

    # -- locks ----------------------------------------------------------------------
    def acquire_lock(self, stack_name: str, holder: str) -> None:
        with self._lock:
            if stack_name not in self._held:
                rows = self._read(f"SELECT pg_try_advisory_lock({_LOCK_KEY_SQL}) AS ok", (stack_name,))
                got = bool(rows[0]["ok"])
            else:
                got = False  # held by this store already: a second holder is refused
            if not got:
                rows = self._read("SELECT * FROM locks WHERE stack_name = %s", (stack_name,))
                if rows:
                    row = rows[0]
                    raise StackLocked(
                        f'Stack "{stack_name}" is locked by {row["holder"]} '
                        f'(pid {row["pid"]} on {row["host"]}, since {row["acquired"]})'
                    )
                raise StackLocked(f'Stack "{stack_name}" is locked by another job')
            try:
                self._write(
                    "INSERT INTO locks VALUES (%s, %s, %s, %s, pg_backend_pid(), %s)"
                    " ON CONFLICT (stack_name) DO UPDATE SET holder = excluded.holder,"
                    " host = excluded.host, pid = excluded.pid,"
                    " backend_pid = excluded.backend_pid, acquired = excluded.acquired",
                    (stack_name, holder, socket.gethostname(), os.getpid(), utc_now()),
                )
            except BaseException:
                self._unlock(stack_name)
                raise
            self._held.add(stack_name)

    def _unlock(self, stack_name: str) -> None:
        try:
            self._execute(f"SELECT pg_advisory_unlock({_LOCK_KEY_SQL})", (stack_name,))
        except StoreError:
            pass  # the session is gone, and its locks with it

    def release_lock(self, stack_name: str, holder: str) -> None:
        with self._lock:
            if stack_name not in self._held:
                return
            cursor = self._write(
                "DELETE FROM locks WHERE stack_name = %s AND holder = %s AND pid = %s"
                " AND backend_pid = pg_backend_pid()",
                (stack_name, holder, os.getpid()),
            )
            if cursor.rowcount:
                self._held.discard(stack_name)
                self._unlock(stack_name)

    # -- stacks ---------------------------------------------------------------------
    def find_stack(self, name: str) -> StackRecord | None:
        rows = self._read(
            "SELECT * FROM stacks WHERE name = %s AND NOT deleted AND parent_id IS NULL",
            (name,),
        )
        return stack_record(rows[0], _decoded) if rows else None

    def get_stack(self, stack_id: str) -> StackRecord:
        rows = self._read("SELECT * FROM stacks WHERE id = %s", (stack_id,))
        if not rows:
            raise StackNotFound(f"The Stack ({stack_id}) could not be found.")
        return stack_record(rows[0], _decoded)

    def list_stacks(self) -> list[StackRecord]:
        rows = self._read(
            "SELECT * FROM stacks WHERE NOT deleted AND parent_id IS NULL ORDER BY name COLLATE \"C\""
        )
        return [stack_record(row, _decoded) for row in rows]

    def child_stacks(self, stack_id: str) -> list[StackRecord]:
        rows = self._read(
            "SELECT * FROM stacks WHERE parent_id = %s AND NOT deleted"
            " ORDER BY created COLLATE \"C\", name COLLATE \"C\"",
            (stack_id,),
        )
        return [stack_record(row, _decoded) for row in rows]

    def create_stack(
        self, name: str, parent_id: str | None = None, parent_resource: str | None = None,
        stack_id: str | None = None,
    ) -> StackRecord:
        stack_id = stack_id or str(uuid.uuid4())
        now = utc_now()
        self._write(
            "INSERT INTO stacks(id, name, parent_id, parent_resource, action, status,"
            " created, updated) VALUES (%s, %s, %s, %s, 'INIT', 'COMPLETE', %s, %s)",
            (stack_id, name, parent_id, parent_resource, now, now),
        )
        return self.get_stack(stack_id)

    def set_stack_status(self, stack_id: str, action: str, status: str, reason: str) -> None:
        self._write(
            "UPDATE stacks SET action = %s, status = %s, status_reason = %s, updated = %s"
            " WHERE id = %s",
            (action, status, reason, utc_now(), stack_id),
        )

    def set_stack_outputs(
        self, stack_id: str, outputs: Mapping[str, Any], errors: Mapping[str, str]
    ) -> None:
        self._write(
            "UPDATE stacks SET outputs = %s, output_errors = %s WHERE id = %s",
            (self._json(outputs), self._json(errors), stack_id),
        )

    def mark_stack_deleted(self, stack_id: str) -> None:
        with self.transaction():
            self._write("DELETE FROM resources WHERE stack_id = %s", (stack_id,))
            self._write("UPDATE stacks SET deleted = TRUE WHERE id = %s", (stack_id,))

    # -- revisions ------------------------------------------------------------------
    def add_revision(
        self, stack_id: str, action: str, definition: Mapping[str, Any], digest: str
    ) -> int:
        with self.transaction():
            # The stack row's lock orders concurrent writers of the same stack.
            self._read("SELECT id FROM stacks WHERE id = %s FOR UPDATE", (stack_id,))
            rows = self._read(
                "SELECT COALESCE(MAX(revision), 0) AS last FROM revisions WHERE stack_id = %s",
                (stack_id,),
            )
            revision = int(rows[0]["last"]) + 1
            self._write(
                "INSERT INTO revisions VALUES (%s, %s, %s, 'IN_PROGRESS', '', %s, %s, %s, '{}', '')",
                (stack_id, revision, action, utc_now(), self._json(definition), digest),
            )
            self._write("UPDATE stacks SET revision = %s WHERE id = %s", (revision, stack_id))
        return revision

    def finish_revision(
        self, stack_id: str, revision: int, status: str, reason: str,
        outcome: Mapping[str, Any] | None = None,
    ) -> None:
        self._write(
            "UPDATE revisions SET status = %s, status_reason = %s, outcome = %s, finished = %s"
            " WHERE stack_id = %s AND revision = %s",
            (status, reason, self._json(outcome or {}), utc_now(), stack_id, revision),
        )

    def revisions(self, stack_id: str) -> list[RevisionRecord]:
        rows = self._read(
            "SELECT * FROM revisions WHERE stack_id = %s ORDER BY revision", (stack_id,)
        )
        return [revision_record(row, _decoded) for row in rows]

    # -- resources ------------------------------------------------------------------
    def resources(self, stack_id: str) -> list[StoredResource]:
        rows = self._read(
            "SELECT * FROM resources WHERE stack_id = %s AND retired_in = 0"
            " ORDER BY position, name COLLATE \"C\"",
            (stack_id,),
        )
        return [stored_resource(row, _decoded) for row in rows]

    def retired_resources(self, stack_id: str) -> list[StoredResource]:
        rows = self._read(
            "SELECT * FROM resources WHERE stack_id = %s AND retired_in > 0"
            " ORDER BY retired_in, position, name COLLATE \"C\"",
            (stack_id,),
        )
        return [stored_resource(row, _decoded) for row in rows]

    def retire_resource(self, stack_id: str, name: str, revision: int, keep_until: str = "") -> None:
        with self.transaction():
            self._retire(stack_id, name, revision, keep_until)

    def _retire(self, stack_id: str, name: str, revision: int, keep_until: str) -> None:
        # A resource replaced twice in one revision keeps only its last old self.
        self._write(
            "DELETE FROM resources WHERE stack_id = %s AND name = %s AND retired_in = %s",
            (stack_id, name, revision),
        )
        self._write(
            "UPDATE resources SET retired_in = %s, keep_until = %s, updated = %s"
            " WHERE stack_id = %s AND name = %s AND retired_in = 0",
            (revision, keep_until, utc_now(), stack_id, name),
        )

    def restore_resource(self, stack_id: str, name: str, retired_in: int, revision: int,
                         keep_until: str = "") -> None:
        with self.transaction():
            self._retire(stack_id, name, revision, keep_until)
            self._write(
                "UPDATE resources SET retired_in = 0, keep_until = '', updated = %s"
                " WHERE stack_id = %s AND name = %s AND retired_in = %s",
                (utc_now(), stack_id, name, retired_in),
            )

    def save_resource(
        self, stack_id: str, state: ResourceState, requires: Sequence[str] = (), position: int = 0,
        retired_in: int = 0,
    ) -> None:
        self._write(
            "INSERT INTO resources VALUES"
            " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, '', %s)"
            " ON CONFLICT (stack_id, name, retired_in) DO UPDATE SET"
            " type = excluded.type, action = excluded.action, status = excluded.status,"
            " status_reason = excluded.status_reason, physical_id = excluded.physical_id,"
            " properties = excluded.properties, data = excluded.data,"
            " nested_stack_id = excluded.nested_stack_id,"
            " deletion_policy = excluded.deletion_policy,"
            " implementation = excluded.implementation, metadata = excluded.metadata,"
            " update_policy = excluded.update_policy, requires = excluded.requires,"
            " position = excluded.position, keep_until = '', updated = excluded.updated",
            resource_values(stack_id, state, requires, position, retired_in, self._json),
        )

    def delete_resource(self, stack_id: str, name: str, retired_in: int = 0) -> None:
        self._write(
            "DELETE FROM resources WHERE stack_id = %s AND name = %s AND retired_in = %s",
            (stack_id, name, retired_in),
        )

    # -- hooks ----------------------------------------------------------------------
    def hook_status(self, stack_id: str, resource_name: str, hook: str, revision: int) -> str | None:
        rows = self._read(
            "SELECT status FROM hooks WHERE stack_id = %s AND resource_name = %s AND hook = %s"
            " AND revision = %s",
            (stack_id, resource_name, hook, revision),
        )
        return rows[0]["status"] if rows else None

    def set_hook(self, stack_id: str, resource_name: str, hook: str, revision: int, status: str) -> None:
        self._write(
            "INSERT INTO hooks VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT"
            " (stack_id, resource_name, hook, revision) DO UPDATE SET status = excluded.status",
            (stack_id, resource_name, hook, revision, status, utc_now()),
        )

    def hooks(self, stack_id: str, status: str | None = None) -> list[HookRecord]:
        rows = self._read(
            "SELECT * FROM hooks WHERE stack_id = %s AND (%s::text IS NULL OR status = %s)"
            " ORDER BY created COLLATE \"C\", resource_name COLLATE \"C\"",
            (stack_id, status, status),
        )
        return [hook_record(row) for row in rows]

    # -- secrets --------------------------------------------------------------------
    def store_salt(self) -> str:
        self._write(
            "INSERT INTO meta(key, value) VALUES ('secrets_salt', %s) ON CONFLICT (key) DO NOTHING",
            (new_salt(),),
        )
        return self._read("SELECT value FROM meta WHERE key = 'secrets_salt'")[0]["value"]

    def keyring(self, stack_id: str) -> KeyringRecord | None:
        rows = self._read("SELECT * FROM stack_keys WHERE stack_id = %s", (stack_id,))
        return keyring_record(rows[0]) if rows else None

    def save_keyring(self, record: KeyringRecord) -> None:
        self._write(
            "INSERT INTO stack_keys VALUES (%s, %s, %s, %s, %s) ON CONFLICT (stack_id) DO UPDATE SET"
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
        rows = self._read(
            "INSERT INTO events(stack_id, resource_name, action, status, reason,"
            " physical_id, time) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (stack_id, resource_name, action, status, reason, physical_id, now),
        )
        return EventRecord(
            int(rows[0]["id"]), stack_id, resource_name, action, status, reason, physical_id, now,
        )

    def events(self, stack_id: str, after_id: int = 0) -> list[EventRecord]:
        rows = self._read(
            "SELECT * FROM events WHERE stack_id = %s AND id > %s ORDER BY id", (stack_id, after_id)
        )
        return [event_record(row) for row in rows]

    # -- rows as stored (store_copy: no decoding, so encrypted values stay so) --------
    def stored_tables(self) -> dict[str, list[str]]:
        """Each table of the store with its columns."""
        rows = self._read(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position")
        tables: dict[str, list[str]] = {}
        for row in rows:
            tables.setdefault(row["table_name"], []).append(row["column_name"])
        return tables

    def stored_rows(self, table: str, column: str | None = None,
                    values: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of ``table`` as stored: JSON columns as their text (not decoded)."""
        from psycopg.types.string import TextLoader  # pylint: disable=import-outside-toplevel

        sql = f'SELECT * FROM "{table}"'
        args: tuple[Any, ...] = ()
        if column is not None:
            sql, args = sql + f' WHERE "{column}" = ANY(%s)', (list(values),)
        with self._lock:
            try:
                cursor = self._conn.cursor()
                for json_type in ("json", "jsonb"):
                    cursor.adapters.register_loader(json_type, TextLoader)
                cursor.execute(sql, args or None)
            except self._pg.Error as exc:
                raise StoreError(f"store {self._shown}: {_first_line(exc)}") from exc
            names = [c.name for c in cursor.description or ()]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

    def insert_stored_rows(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert rows as they were stored elsewhere: JSON as its text, 0 and 1 into
        boolean columns as booleans."""
        booleans = {row["column_name"] for row in self._read(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
            " AND table_name = %s AND data_type = 'boolean'", (table,))}
        for row in rows:
            names = list(row)
            values = [bool(v) if n in booleans and v is not None else v for n, v in row.items()]
            self._write(
                f'INSERT INTO "{table}" ({", ".join(_quoted(n) for n in names)})'
                f' VALUES ({", ".join(["%s"] * len(names))})',
                values,
            )
        if table == "events" and rows:
            # Ids given explicitly: the sequence goes on after the highest.
            self._write("SELECT setval(pg_get_serial_sequence('events', 'id'),"
                        " (SELECT MAX(id) FROM events))")

    def delete_stored_rows(self, table: str, column: str, values: Sequence[Any]) -> None:
        if values:
            self._write(f'DELETE FROM "{table}" WHERE "{column}" = ANY(%s)', (list(values),))


def _decoded(value: Any) -> Any:
    """psycopg returns json columns already decoded."""
    return value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _quoted(name: str) -> str:
    """A column name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
