# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The embedded store: one SQLite file, private to the user.

WAL journal with ``synchronous=NORMAL``: a commit is durable against a killed
process (what ``Nothing lost`` asks) without an fsync per resource step.  One
connection shared by the executor's threads behind a lock; writes outside an
explicit ``transaction()`` commit one by one, so intent is on disk before the
handler acts.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
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

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stacks (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    parent_id TEXT REFERENCES stacks(id),
    parent_resource TEXT,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL DEFAULT '',
    revision INTEGER NOT NULL DEFAULT 0,
    outputs TEXT NOT NULL DEFAULT '{}',
    output_errors TEXT NOT NULL DEFAULT '{}',
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS stacks_live_name
    ON stacks(name) WHERE deleted = 0 AND parent_id IS NULL;
CREATE INDEX IF NOT EXISTS stacks_parent ON stacks(parent_id);
CREATE TABLE IF NOT EXISTS revisions (
    stack_id TEXT NOT NULL REFERENCES stacks(id),
    revision INTEGER NOT NULL,
    action TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL DEFAULT '',
    created TEXT NOT NULL,
    definition TEXT NOT NULL,
    digest TEXT NOT NULL,
    outcome TEXT NOT NULL DEFAULT '{}',
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
    properties TEXT NOT NULL DEFAULT '{}',
    data TEXT NOT NULL DEFAULT '{}',
    nested_stack_id TEXT,
    deletion_policy TEXT NOT NULL DEFAULT 'Delete',
    implementation TEXT NOT NULL DEFAULT '',
    metadata TEXT NOT NULL DEFAULT '{}',
    update_policy TEXT NOT NULL DEFAULT '{}',
    requires TEXT NOT NULL DEFAULT '[]',
    position INTEGER NOT NULL DEFAULT 0,
    retired_in INTEGER NOT NULL DEFAULT 0,
    keep_until TEXT NOT NULL DEFAULT '',
    updated TEXT NOT NULL,
    PRIMARY KEY (stack_id, name, retired_in)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
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
CREATE TABLE IF NOT EXISTS stack_keys (
    stack_id TEXT PRIMARY KEY,
    salt TEXT NOT NULL,
    key_check TEXT NOT NULL,
    secrets TEXT NOT NULL DEFAULT '',
    updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS locks (
    stack_name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    pid_start TEXT NOT NULL,
    acquired TEXT NOT NULL
);
"""


def _create_private(path: str) -> None:
    """Create the store file private to the user before SQLite opens it.  Only a
    file that does not exist yet is opened here: closing a descriptor of a
    database this process already has open would drop SQLite's POSIX locks on it
    (the classic way to corrupt an SQLite file)."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
    except FileExistsError:
        pass


def default_path() -> str:
    """The per-user data directory's store: ``$XDG_DATA_HOME/hotplay/stacks.db``."""
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(data_home, "hotplay", "stacks.db")


def _process_start(pid: int) -> str:
    """Start time of a process (clock ticks since boot), '' when it is gone.

    Compared with the recorded value so a reused pid is not taken for the holder.
    """
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return ""
    # A killed process nobody has reaped yet (a zombie) holds nothing any more.
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return ""
    return fields[19]


def _holder_alive(host: str, pid: int, pid_start: str) -> bool:
    if host != socket.gethostname():
        return True  # cannot tell for another machine: assume it is running
    return _process_start(pid) == pid_start


class SqliteStore(Store):
    """The embedded store."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.url = f"sqlite:///{self.path}"
        self._lock = threading.RLock()
        self._in_transaction = False
        self._db = self._connect()

    # -- life cycle -----------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        directory = os.path.dirname(self.path)
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            _create_private(self.path)
            db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            db.executescript(_SCHEMA)
            # The tables above are created when missing, so an older file is at
            # this version now (2: the stack_keys table of secrets).
            db.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?) ON CONFLICT (key)"
                " DO UPDATE SET value = excluded.value WHERE CAST(value AS INTEGER) < ?",
                (str(SCHEMA_VERSION), SCHEMA_VERSION),
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the store {self.path}: {exc}") from exc
        return db

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._in_transaction:
                yield
                return
            self._db.execute("BEGIN IMMEDIATE")
            self._in_transaction = True
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            else:
                self._db.execute("COMMIT")
            finally:
                self._in_transaction = False

    def _write(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, args)

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._db.execute(sql, args)
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()

    # -- locks ----------------------------------------------------------------------
    def acquire_lock(self, stack_name: str, holder: str) -> None:
        pid = os.getpid()
        with self.transaction():
            rows = self._read("SELECT * FROM locks WHERE stack_name = ?", (stack_name,))
            if rows:
                row = rows[0]
                if _holder_alive(row["host"], row["pid"], row["pid_start"]):
                    raise StackLocked(
                        f'Stack "{stack_name}" is locked by {row["holder"]} '
                        f'(pid {row["pid"]} on {row["host"]}, since {row["acquired"]})'
                    )
            self._write(
                "INSERT OR REPLACE INTO locks VALUES (?, ?, ?, ?, ?, ?)",
                (stack_name, holder, socket.gethostname(), pid, _process_start(pid), utc_now()),
            )

    def release_lock(self, stack_name: str, holder: str) -> None:
        self._write(
            "DELETE FROM locks WHERE stack_name = ? AND holder = ? AND pid = ?",
            (stack_name, holder, os.getpid()),
        )

    # -- stacks ---------------------------------------------------------------------
    def find_stack(self, name: str) -> StackRecord | None:
        rows = self._read(
            "SELECT * FROM stacks WHERE name = ? AND deleted = 0 AND parent_id IS NULL",
            (name,),
        )
        return stack_record(rows[0], json.loads) if rows else None

    def get_stack(self, stack_id: str) -> StackRecord:
        rows = self._read("SELECT * FROM stacks WHERE id = ?", (stack_id,))
        if not rows:
            raise StackNotFound(f"The Stack ({stack_id}) could not be found.")
        return stack_record(rows[0], json.loads)

    def list_stacks(self) -> list[StackRecord]:
        rows = self._read(
            "SELECT * FROM stacks WHERE deleted = 0 AND parent_id IS NULL ORDER BY name"
        )
        return [stack_record(row, json.loads) for row in rows]

    def child_stacks(self, stack_id: str) -> list[StackRecord]:
        rows = self._read(
            "SELECT * FROM stacks WHERE parent_id = ? AND deleted = 0 ORDER BY created, name",
            (stack_id,),
        )
        return [stack_record(row, json.loads) for row in rows]

    def create_stack(
        self, name: str, parent_id: str | None = None, parent_resource: str | None = None,
        stack_id: str | None = None,
    ) -> StackRecord:
        stack_id = stack_id or str(uuid.uuid4())
        now = utc_now()
        self._write(
            "INSERT INTO stacks(id, name, parent_id, parent_resource, action, status,"
            " created, updated) VALUES (?, ?, ?, ?, 'INIT', 'COMPLETE', ?, ?)",
            (stack_id, name, parent_id, parent_resource, now, now),
        )
        return self.get_stack(stack_id)

    def set_stack_status(self, stack_id: str, action: str, status: str, reason: str) -> None:
        self._write(
            "UPDATE stacks SET action = ?, status = ?, status_reason = ?, updated = ?"
            " WHERE id = ?",
            (action, status, reason, utc_now(), stack_id),
        )

    def set_stack_outputs(
        self, stack_id: str, outputs: Mapping[str, Any], errors: Mapping[str, str]
    ) -> None:
        self._write(
            "UPDATE stacks SET outputs = ?, output_errors = ? WHERE id = ?",
            (json.dumps(outputs), json.dumps(errors), stack_id),
        )

    def mark_stack_deleted(self, stack_id: str) -> None:
        with self.transaction():
            self._write("DELETE FROM resources WHERE stack_id = ?", (stack_id,))
            self._write("UPDATE stacks SET deleted = 1 WHERE id = ?", (stack_id,))

    # -- revisions ------------------------------------------------------------------
    def add_revision(
        self, stack_id: str, action: str, definition: Mapping[str, Any], digest: str
    ) -> int:
        with self.transaction():
            rows = self._read(
                "SELECT COALESCE(MAX(revision), 0) AS last FROM revisions WHERE stack_id = ?",
                (stack_id,),
            )
            revision = rows[0]["last"] + 1
            self._write(
                "INSERT INTO revisions VALUES (?, ?, ?, 'IN_PROGRESS', '', ?, ?, ?, '{}', '')",
                (stack_id, revision, action, utc_now(), json.dumps(definition), digest),
            )
            self._write("UPDATE stacks SET revision = ? WHERE id = ?", (revision, stack_id))
        return revision

    def finish_revision(
        self, stack_id: str, revision: int, status: str, reason: str,
        outcome: Mapping[str, Any] | None = None,
    ) -> None:
        self._write(
            "UPDATE revisions SET status = ?, status_reason = ?, outcome = ?, finished = ?"
            " WHERE stack_id = ? AND revision = ?",
            (status, reason, json.dumps(outcome or {}), utc_now(), stack_id, revision),
        )

    def revisions(self, stack_id: str) -> list[RevisionRecord]:
        rows = self._read(
            "SELECT * FROM revisions WHERE stack_id = ? ORDER BY revision", (stack_id,)
        )
        return [revision_record(row, json.loads) for row in rows]

    # -- resources ------------------------------------------------------------------
    def resources(self, stack_id: str) -> list[StoredResource]:
        rows = self._read(
            "SELECT * FROM resources WHERE stack_id = ? AND retired_in = 0 ORDER BY position, name",
            (stack_id,),
        )
        return [stored_resource(row, json.loads) for row in rows]

    def retired_resources(self, stack_id: str) -> list[StoredResource]:
        rows = self._read(
            "SELECT * FROM resources WHERE stack_id = ? AND retired_in > 0"
            " ORDER BY retired_in, position, name",
            (stack_id,),
        )
        return [stored_resource(row, json.loads) for row in rows]

    def retire_resource(self, stack_id: str, name: str, revision: int, keep_until: str = "") -> None:
        with self.transaction():
            self._retire(stack_id, name, revision, keep_until)

    def _retire(self, stack_id: str, name: str, revision: int, keep_until: str) -> None:
        # A resource replaced twice in one revision keeps only its last old self.
        self._write(
            "DELETE FROM resources WHERE stack_id = ? AND name = ? AND retired_in = ?",
            (stack_id, name, revision),
        )
        self._write(
            "UPDATE resources SET retired_in = ?, keep_until = ?, updated = ?"
            " WHERE stack_id = ? AND name = ? AND retired_in = 0",
            (revision, keep_until, utc_now(), stack_id, name),
        )

    def restore_resource(self, stack_id: str, name: str, retired_in: int, revision: int,
                         keep_until: str = "") -> None:
        with self.transaction():
            self._retire(stack_id, name, revision, keep_until)
            self._write(
                "UPDATE resources SET retired_in = 0, keep_until = '', updated = ?"
                " WHERE stack_id = ? AND name = ? AND retired_in = ?",
                (utc_now(), stack_id, name, retired_in),
            )

    def save_resource(
        self, stack_id: str, state: ResourceState, requires: Sequence[str] = (), position: int = 0,
        retired_in: int = 0,
    ) -> None:
        self._write(
            "INSERT OR REPLACE INTO resources VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)",
            resource_values(stack_id, state, requires, position, retired_in, json.dumps),
        )

    def delete_resource(self, stack_id: str, name: str, retired_in: int = 0) -> None:
        self._write(
            "DELETE FROM resources WHERE stack_id = ? AND name = ? AND retired_in = ?",
            (stack_id, name, retired_in),
        )

    # -- hooks ----------------------------------------------------------------------
    def hook_status(self, stack_id: str, resource_name: str, hook: str, revision: int) -> str | None:
        rows = self._read(
            "SELECT status FROM hooks WHERE stack_id = ? AND resource_name = ? AND hook = ?"
            " AND revision = ?",
            (stack_id, resource_name, hook, revision),
        )
        return rows[0]["status"] if rows else None

    def set_hook(self, stack_id: str, resource_name: str, hook: str, revision: int, status: str) -> None:
        self._write(
            "INSERT INTO hooks VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT"
            " (stack_id, resource_name, hook, revision) DO UPDATE SET status = excluded.status",
            (stack_id, resource_name, hook, revision, status, utc_now()),
        )

    def hooks(self, stack_id: str, status: str | None = None) -> list[HookRecord]:
        rows = self._read(
            "SELECT * FROM hooks WHERE stack_id = ? AND (? IS NULL OR status = ?)"
            " ORDER BY created, resource_name",
            (stack_id, status, status),
        )
        return [hook_record(row) for row in rows]

    # -- secrets --------------------------------------------------------------------
    def store_salt(self) -> str:
        self._write("INSERT OR IGNORE INTO meta(key, value) VALUES ('secrets_salt', ?)", (new_salt(),))
        return self._read("SELECT value FROM meta WHERE key = 'secrets_salt'")[0]["value"]

    def keyring(self, stack_id: str) -> KeyringRecord | None:
        rows = self._read("SELECT * FROM stack_keys WHERE stack_id = ?", (stack_id,))
        return keyring_record(rows[0]) if rows else None

    def save_keyring(self, record: KeyringRecord) -> None:
        self._write(
            "INSERT OR REPLACE INTO stack_keys VALUES (?, ?, ?, ?, ?)",
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
        cursor = self._write(
            "INSERT INTO events(stack_id, resource_name, action, status, reason,"
            " physical_id, time) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (stack_id, resource_name, action, status, reason, physical_id, now),
        )
        return EventRecord(
            int(cursor.lastrowid or 0), stack_id, resource_name, action, status, reason,
            physical_id, now,
        )

    def events(self, stack_id: str, after_id: int = 0) -> list[EventRecord]:
        rows = self._read(
            "SELECT * FROM events WHERE stack_id = ? AND id > ? ORDER BY id", (stack_id, after_id)
        )
        return [event_record(row) for row in rows]

    # -- rows as stored (store_copy: no decoding, so encrypted values stay so) --------
    def stored_tables(self) -> dict[str, list[str]]:
        """Each table of the store with its columns."""
        names = [row["name"] for row in self._read(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {name: [column["name"] for column in self._read(f'PRAGMA table_info("{name}")')]
                for name in names}

    def stored_rows(self, table: str, column: str | None = None,
                    values: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of ``table`` as stored (where ``column`` is one of ``values``)."""
        sql = f'SELECT * FROM "{table}"'
        if column is not None:
            if not values:
                return []
            sql += f' WHERE "{column}" IN ({", ".join("?" * len(values))})'
        return [dict(row) for row in self._read(sql, tuple(values))]

    def insert_stored_rows(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert rows as they were stored elsewhere (booleans become 0 and 1)."""
        for row in rows:
            names = list(row)
            self._write(
                f'INSERT INTO "{table}" ({", ".join(_quoted(n) for n in names)})'
                f' VALUES ({", ".join("?" * len(names))})',
                tuple(int(v) if isinstance(v, bool) else v for v in row.values()),
            )

    def delete_stored_rows(self, table: str, column: str, values: Sequence[Any]) -> None:
        if values:
            self._write(f'DELETE FROM "{table}" WHERE "{column}" IN ({", ".join("?" * len(values))})',
                        tuple(values))


def _quoted(name: str) -> str:
    """A column name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
