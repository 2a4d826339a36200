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
import re
import secrets
import socket
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from ..errors import StoreBusy, StoreError
from .base import LeaseTerms
from .fencing import fence
from .leases import LEASE_COLUMNS, lease_of
from .processes import is_process, pid_space
from .sql import (
    EVENT_INSERT,
    OLD_LOCKS_TABLE,
    SCHEMA_VERSION,
    Dialect,
    OldLock,
    SqlStore,
    added_column,
    insert_sql,
    old_locks_refusal,
    quoted,
)

# How long a statement waits for another process's write (SQLite's busy timeout)
# before the store says who holds the write lock: writes of a live job last
# milliseconds (one resource step each), so only a stopped or hung one lasts this.
BUSY_TIMEOUT = 30.0

DIALECT = Dialect(
    placeholder="?",
    json_type="TEXT",
    flag_type="INTEGER",
    false="0",
    true="1",
    serial_key="INTEGER PRIMARY KEY AUTOINCREMENT",
    # Version 1's locks table (made by version 1, dropped by version 4).
    lock_owner="pid_start TEXT NOT NULL",
    live="deleted = 0",
    text_order="",  # SQLite's default collation is byte order already
    encode=json.dumps,
    decode=json.loads,
)


def _create_store(path: str) -> None:
    """Create a new store at ``path`` whole, or not at all: built under another
    name, private to the user, then linked into place (which fails when another
    process made one first; theirs is used).  So a file at a store's path is a
    complete store, and an empty or foreign file there is refused, not taken for a
    new store.  Only a file that does not exist yet is opened here: closing a
    descriptor of a database this process already has open would drop SQLite's
    POSIX locks on it (the classic way to corrupt an SQLite file)."""
    building = f"{path}.new-{os.getpid()}-{secrets.token_hex(4)}"
    os.close(os.open(building, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
    try:
        db = sqlite3.connect(building, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            _migrate(db, path)
        finally:
            db.close()
        try:
            os.link(building, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(building)


def _migrate(db: sqlite3.Connection, path: str) -> None:
    """Bring the store to ``SCHEMA_VERSION`` in one transaction (SQLite's DDL is
    transactional): under the write lock the version is read again (another run
    may have upgraded the store meanwhile), the statements of each newer version
    run, and the marker is set; any failure leaves the store as it was.  Refused
    while a job of version 2 or older may hold a lock that the upgrade would drop
    (``_held_old_locks``)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = _stored_version(db)
        if version > SCHEMA_VERSION:
            raise _newer(path, version)
        if version == SCHEMA_VERSION and not _missing_objects(db):
            db.execute("ROLLBACK")
            return
        held = _held_old_locks(db)
        if held:
            raise old_locks_refusal(
                path, version, held,
                "If that job is gone for good (its host is down: a job of that version on this host is "
                f"seen to be gone), remove its lock row: sqlite3 {path} \"DELETE FROM locks WHERE "
                f"stack_name = '{held[0].stack_name}'\"")
        for _version, statement in DIALECT.statements(after=version):
            column = added_column(statement)
            if column is None or column[1] not in {row[1] for row in db.execute(
                    f"PRAGMA table_info({quoted(column[0])})")}:
                db.execute(statement)
        if _missing_objects(db):
            # A marker ahead of its tables: what is missing is made again (only the
            # statements that may run twice).
            for _version, statement in DIALECT.statements():
                if re.match(r"(CREATE (UNIQUE )?(TABLE|INDEX) IF NOT EXISTS|DROP (TABLE|INDEX) IF EXISTS) ",
                            statement):
                    db.execute(statement)
        db.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', ?) ON CONFLICT (key)"
            " DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _stored_version(db: sqlite3.Connection) -> int:
    """The schema version the store's marker says (0: a new file, no marker yet)."""
    try:
        rows = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    except sqlite3.OperationalError as error:
        if "no such table" not in str(error):
            raise
        rows = []
    return int(rows[0][0]) if rows else 0


def _held_old_locks(db: sqlite3.Connection) -> list[OldLock]:
    """The rows of version 1's ``locks`` table whose job may still run: as version 2
    judged them, a holder on another host (it cannot tell) or whose process on
    this host is still the one that took the lock (or cannot be seen)."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (OLD_LOCKS_TABLE,)).fetchall():
        return []
    here = socket.gethostname()
    held = []
    for name, holder, host, pid, start, acquired in db.execute(
            "SELECT stack_name, holder, host, pid, pid_start, acquired FROM locks ORDER BY stack_name"):
        if host != here or is_process(int(pid), str(start)) is not False:
            held.append(OldLock(name, holder, host, int(pid), acquired))
    return held


def _newer(path: str, version: object) -> StoreError:
    return StoreError(f"the store {path} has schema version {version}, newer than this "
                      f"hotplay.stacks knows ({SCHEMA_VERSION}): upgrade the collection")


def _missing_objects(db: sqlite3.Connection) -> bool:
    """Whether a table or index of the schema is missing, or one it dropped is
    there (read, not written)."""
    statements = "\n".join(text for _version, text in DIALECT.schema())
    made = set(re.findall(r"CREATE (?:UNIQUE )?(?:TABLE|INDEX) IF NOT EXISTS (\w+)", statements))
    dropped = set(re.findall(r"DROP (?:TABLE|INDEX) IF EXISTS (\w+)", statements))
    present = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    return bool(made - dropped - present) or bool(dropped & present)


def _refuse_unless_store(db: sqlite3.Connection, path: str) -> int:
    """A store carries its schema marker; anything else at the path is refused.
    The store's schema version."""
    if os.path.getsize(path) == 0:
        raise StoreError(
            f"the store {path} is an empty file, not a store (was it truncated?): restore it "
            "from a backup, or remove it to start a new, empty store")
    try:
        rows = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    except sqlite3.OperationalError as error:
        if "no such table" not in str(error):
            raise
        rows = []
    if not rows:
        raise StoreError(f"{path} is an SQLite database but not a hotplay.stacks store "
                         "(it has no schema marker); give the path of a store, or a new file")
    if int(rows[0][0]) > SCHEMA_VERSION:
        raise _newer(path, rows[0][0])
    return int(rows[0][0])


def default_path() -> str:
    """The per-user data directory's store: ``$XDG_DATA_HOME/hotplay/stacks.db``."""
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(data_home, "hotplay", "stacks.db")


class SqliteStore(SqlStore):
    """The embedded store."""

    dialect = DIALECT
    # The host's clock (SQLite has no other): hosts sharing a store keep theirs in
    # step (NTP), well within a lease's length.
    lease_now = "((julianday('now') - 2440587.5) * 86400.0)"
    lease_row_lock = ""  # BEGIN IMMEDIATE holds the write lock already
    begin_statement = "BEGIN IMMEDIATE"

    def __init__(self, path: str, lease_terms: LeaseTerms = LeaseTerms()) -> None:
        self._init_leases(lease_terms)
        self.path = os.path.abspath(path)
        self.url = f"sqlite:///{self.path}"
        self._lock = threading.RLock()
        self._in_transaction = False
        self.read_only = False
        self._db = self._connect()

    # -- life cycle -----------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        directory = os.path.dirname(self.path)
        if os.path.isfile(self.path) and not (os.access(self.path, os.W_OK)
                                              and os.access(directory, os.W_OK)):
            return self._connect_read_only()
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            if not os.path.exists(self.path):
                _create_store(self.path)
            db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT
            )
            try:
                version = _refuse_unless_store(db, self.path)
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA foreign_keys=ON")
                # Only an older store is written to on opening: a job stopped inside
                # a write holds the write lock, and this store must still open (to
                # read it, to say who holds it).
                if version < SCHEMA_VERSION or _missing_objects(db):
                    db.execute("PRAGMA journal_mode=WAL")
                    _migrate(db, self.path)
            except (StoreError, sqlite3.Error):
                db.close()
                raise
        except sqlite3.OperationalError as exc:
            raise self._failed(exc, f"cannot open the store {self.path}") from exc
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the store {self.path}: {exc}") from exc
        return db

    def _connect_read_only(self) -> sqlite3.Connection:
        """A store on read-only media, or one this user may not change: opened to be
        read (stack_info, the inventory), refusing every change with one message."""
        self.read_only = True
        try:
            # On read-only media SQLite cannot make the shared-memory file a WAL
            # store is read through: the file is read as immutable (nobody can be
            # changing it there).
            mode = "mode=ro" if os.access(os.path.dirname(self.path), os.W_OK) else "immutable=1"
            db = sqlite3.connect(f"file:{quote(self.path)}?{mode}", uri=True,
                                 check_same_thread=False, isolation_level=None, timeout=30)
            try:
                _refuse_unless_store(db, self.path)
            except (StoreError, sqlite3.Error):
                db.close()
                raise
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {self.path} (read-only): {exc}") from exc
        return db

    def _refuse_change(self) -> None:
        if self.read_only:
            raise StoreError(f"the store {self.path} is read-only (read-only media, or no write "
                             "permission for this user): it can be read, not changed")

    def close(self) -> None:
        with self._lock:
            if not self.read_only:
                try:
                    self.flush()
                    self.release_all_locks()
                except StoreError:
                    pass  # left to run out
            self._db.close()

    def _write(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            self._refuse_change()
            with self._own_transaction():
                return self._execute(sql, args)

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._execute(sql, args)
            cursor.row_factory = sqlite3.Row
            try:
                return cursor.fetchall()
            except sqlite3.Error as error:
                raise self._failed(error) from error

    def _execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        try:
            return self._db.execute(sql, args)
        except sqlite3.Error as error:
            raise self._failed(error) from error

    def _failed(self, error: sqlite3.Error, doing: str = "") -> StoreError:
        """SQLite's own words (``database or disk is full``, ``database disk image is
        malformed``) say nothing of which file: the store's error names it.  A write
        lock held past the busy timeout says who holds it, and what to do."""
        if isinstance(error, sqlite3.OperationalError) and "database is locked" in str(error):
            return StoreBusy(f"{doing or 'the store ' + self.path + ' is locked'}: {self._busy_reason()}")
        return StoreError(f"{doing or 'the store ' + self.path + ' failed'}: {error}")

    def _busy_reason(self) -> str:
        pid = write_lock_holder(self.path)
        who = f"process {pid} on this host{self._lease_holder_named(pid)}" if pid else \
            "a process (on another host, or one this host cannot see)"
        return (f"{who} has held the store's write lock for over {BUSY_TIMEOUT:g} s without finishing its "
                "write: a job stopped or hung inside a write (a paused VM, SIGSTOP, a hung file "
                "system). This is SQLite's lock on the whole store file, not a stack's lock: "
                "hotplay.stacks.stack_lock cannot break it. Stop that process, or let it go on; its "
                "unfinished write is rolled back, and then the store is free")

    def _lease_holder_named(self, pid: int) -> str:
        """", the job holding stack web's lock (...)" when a lease names that process."""
        try:
            rows = self._db.execute("SELECT stack_name, holder FROM leases WHERE pid = ? AND pid_space = ?"
                                    " AND pid_space != '' AND expires > 0", (pid, pid_space())).fetchall()
        except sqlite3.Error:
            return ""
        return "".join(f", the job holding stack {name}'s lock ({holder})" for name, holder in rows[:1])

    def _insert_event(self, args: Sequence[Any]) -> int:
        return int(self._write(EVENT_INSERT, args).lastrowid or 0)

    def acquire_lock(self, stack_name: str, holder: str) -> int:
        """As every store; and when a job stopped inside a write holds the whole
        file past the busy timeout while every lease it holds has run out, it is a
        lost holder: fenced as a takeover fences (fencing.py), then tried again."""
        try:
            return super().acquire_lock(stack_name, holder)
        except StoreBusy:
            fenced = self._fence_stuck_writer()
            if not fenced:
                raise
        self._fenced_before = fenced
        return super().acquire_lock(stack_name, holder)

    def _fence_stuck_writer(self) -> str:
        """Fence the process holding the write lock when it is on this host, holds
        leases, and all of them have run out; what was done ("" when nothing)."""
        pid = write_lock_holder(self.path)
        if pid is None:
            return ""
        try:
            rows = self._read(
                f"SELECT stack_name, {LEASE_COLUMNS}, {self.lease_now} AS store_now FROM leases"
                " WHERE pid = ? AND pid_space = ? AND pid_space != '' AND expires > 0",
                (pid, pid_space()))
        except StoreError:
            return ""
        leases = [lease_of(row) for row in rows]
        if not leases or any(lease.held for lease in leases):
            return ""  # a job with a live lease is only slow: never killed
        done = fence(leases[0], self._store_identity())
        return f"{done} (it held the store's write lock)" if done.startswith("fenced:") else ""

    # -- rows as stored (store_copy: no decoding, so encrypted values stay so) --------
    def stored_tables(self) -> dict[str, list[str]]:
        """Each table of the store with its columns."""
        names = [row["name"] for row in self._read(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {name: [column["name"] for column in self._read(f"PRAGMA table_info({quoted(name)})")]
                for name in names}

    def stored_rows(self, table: str, column: str | None = None,
                    values: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of ``table`` as stored (where ``column`` is one of ``values``)."""
        sql = f"SELECT * FROM {quoted(table)}"
        args: Sequence[Any] = ()
        if column is not None:
            if not values:
                return []
            condition, args = self._one_of(column, values)
            sql += f" WHERE {condition}"
        return [dict(row) for row in self._read(sql, args)]

    def insert_stored_rows(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert rows as they were stored elsewhere (booleans become 0 and 1)."""
        for row in rows:
            self._write(
                insert_sql(table, list(row)),
                tuple(int(v) if isinstance(v, bool) else v for v in row.values()),
            )


def write_lock_holder(path: str) -> int | None:
    """The pid of the process on this host holding the store's write lock (a POSIX
    lock on byte 120 of a WAL store's shared-memory file, or on the database file
    itself in other journal modes), from /proc/locks; None when none is seen."""
    shm_inode, db_inode = _inode(f"{path}-shm"), _inode(path)
    try:
        with open("/proc/locks", encoding="ascii") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 8 or fields[1] != "POSIX" or fields[3] != "WRITE":
            continue
        inode, start = int(fields[5].rsplit(":", 1)[-1]), fields[6]
        if fields[4] != "0" and (inode == shm_inode and start == "120" or inode == db_inode):
            return int(fields[4])
    return None


def _inode(path: str) -> int:
    try:
        return os.stat(path).st_ino
    except OSError:
        return -1
