# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared store: a PostgreSQL database (AWX, several controllers), with psycopg 3.

Same behaviour as the SQLite store.  One connection shared by the executor's threads
behind a lock, in autocommit mode: writes outside an explicit ``transaction()``
commit one by one, so intent is durable before the handler acts.

Locks are leases (leases.py) timed by the server's clock, not tied to a session: a
session that ends while the job lives (``idle_session_timeout``, a terminated
backend, a failover, a pooler) is opened again and the job goes on under its lease,
which no other job can take meanwhile.  psycopg is imported only when a PostgreSQL
store is opened.

A job stopped *inside* a transaction (SIGSTOP, a paused VM) keeps its session and
the row locks of its open transaction: the lease row of its stack, and the rows it
was writing.  Another job that needs one of them waits at most ``LOCK_WAIT``
seconds (the session's ``lock_timeout``), then fails naming the store and the
session, and the job, that hold it; a server with ``idle_in_transaction_session_timeout``
ends such a session itself, rolling its transaction back, and the next run takes
the stack over once the stopped job's lease has run out.  Rows of other stacks
are not locked by it: their jobs go on.
"""

from __future__ import annotations

import datetime
import json
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from ..errors import StoreBusy, StoreError
from .base import LeaseTerms
from .leases import this_process
from .sql import (
    EVENT_INSERT,
    META_TABLE,
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


def _decoded(value: Any) -> Any:
    """psycopg returns json columns already decoded."""
    return value


def _json(value: Any) -> Any:
    """A value for a json column (psycopg adapts it, with the standard encoder)."""
    import psycopg.types.json  # pylint: disable=import-outside-toplevel

    return psycopg.types.json.Json(value, dumps=json.dumps)


DIALECT = Dialect(
    placeholder="%s",
    json_type="JSON",
    flag_type="BOOLEAN",
    false="FALSE",
    true="TRUE",
    serial_key="BIGSERIAL PRIMARY KEY",
    # Version 1's locks table (made by version 1, dropped by version 4).
    lock_owner="backend_pid INTEGER NOT NULL",
    live="NOT deleted",
    text_order=' COLLATE "C"',  # byte order whatever the database's locale
    encode=_json,
    decode=_decoded,
)

# Serialises schema creation/migration between stores opening the same database.
_MIGRATION_LOCK_KEY = 0x686F74706C6179  # "hotplay"
# A stack's lock up to schema version 2: a session's advisory lock on 64 bits of
# md5 of its name (the ``locks`` row only named the holder).
_OLD_LOCK_KEY = "('x' || substr(md5('hotplay.stacks:' || %s), 1, 16))::bit(64)::bigint"

# How long a statement waits for a row another session has locked (the session's
# lock_timeout) before the store says who holds it.  A live job's transactions last
# milliseconds (a deferred batch is committed within a fraction of a second), so
# only a job stopped or hung inside a transaction holds a row this long; as
# SQLite's busy timeout (sqlite.py's BUSY_TIMEOUT).
LOCK_WAIT = 30.0
# The sessions of this collection are named so (with the process and host, up to
# PostgreSQL's 63 characters): pg_stat_activity shows which job a session is.
APPLICATION = "hotplay.stacks"


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


# ``scheme://user:password@host...``: the password runs to the last ``@``, so an
# unencoded ``@``, ``/`` or space inside it is still taken as part of it.
_CREDENTIALS = re.compile(r"^(?P<head>[a-z][a-z0-9+.-]*://[^:/@]*):(?P<password>.*)@")


def redact_url(url: str) -> str:
    """The URL without its password, for messages."""
    return _CREDENTIALS.sub(r"\g<head>:***@", url, count=1)


def _password_pieces(url: str) -> list[str]:
    """The URL's password and the pieces a parser may quote of a malformed one
    (split where it breaks the URL: ``@``, ``/``, ``%``, spaces), longest first;
    pieces of one or two characters are left, or every message would be starred."""
    found = _CREDENTIALS.match(url)
    if not found or not found.group("password"):
        return []
    password = found.group("password")
    pieces = {password, unquote(password)} | set(re.split(r"[@/%\s]+", password))
    return sorted((piece for piece in pieces if len(piece) > 2), key=len, reverse=True)


def _without_password(url: str, text: str) -> str:
    for piece in _password_pieces(url):
        text = text.replace(piece, "***")
    return text


class PostgresStore(SqlStore):
    """The shared store."""

    dialect = DIALECT
    lease_now = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS DOUBLE PRECISION)"
    lease_row_lock = " FOR UPDATE"

    def __init__(self, url: str, connect_timeout: int = 10,
                 lease_terms: LeaseTerms = LeaseTerms()) -> None:
        self._init_leases(lease_terms)
        self.url = url
        self._shown = redact_url(url)
        self._lock = threading.RLock()
        self._in_transaction = False
        self._connect_timeout = connect_timeout
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
        me = this_process()
        try:
            connection = pg.connect(
                self.url,
                autocommit=True,
                connect_timeout=connect_timeout,
                application_name=f"{APPLICATION} pid {me.pid} on {me.host}"[:63],
            )
            # A row held by a stopped job is waited for this long, not for ever.
            connection.execute(f"SET lock_timeout = {int(LOCK_WAIT * 1000)}")
            return connection
        except pg.ProgrammingError as exc:  # a malformed URL; the driver quotes its parts
            raise StoreError(
                f"store URL {self._shown!r} is not valid: {_without_password(self.url, _first_line(exc))}"
                " (percent-encode special characters in the user and password: % as %25, @ as"
                " %40, / as %2F, a space as %20)"
            ) from None
        except pg.Error as exc:
            raise StoreError(
                f"cannot connect to the store {self._shown}: "
                f"{_without_password(self.url, _first_line(exc))}"
            ) from None

    def _migrate(self) -> None:
        """Bring the store to ``SCHEMA_VERSION`` in one transaction (PostgreSQL's DDL
        is transactional), one opener at a time (an advisory lock of the
        transaction), reading the version again once that is held.  Refused while
        a job of version 2 or older holds a lock that the upgrade would drop."""
        with self.transaction():
            self._execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK_KEY,))
            self._execute(META_TABLE)
            rows = self._read("SELECT value FROM meta WHERE key = 'schema_version'")
            current = int(rows[0]["value"]) if rows else 0
            if current > SCHEMA_VERSION:
                raise StoreError(
                    f"the store {self._shown} has schema version {current}, newer than this "
                    f"hotplay.stacks knows ({SCHEMA_VERSION}): upgrade the collection"
                )
            if current == SCHEMA_VERSION:
                return
            held = self._held_old_locks()
            if held:
                raise old_locks_refusal(
                    self._shown, current, [lock for lock, _session in held],
                    "If that job hangs or is gone for good, end its database session (the lock "
                    f"goes with it): SELECT pg_terminate_backend({held[0][1]})")
            for _version, statement in DIALECT.statements(after=current):
                column = added_column(statement)
                if column is None or not self._read(
                        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
                        " AND table_name = %s AND column_name = %s", column):
                    self._execute(statement)
            self._execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )

    def _held_old_locks(self) -> list[tuple[OldLock, int]]:
        """The rows of version 1's ``locks`` table whose job still holds the lock
        (its session's advisory lock, which version 2 took first), each with that
        job's session.  The table is locked first, so a job of that version taking
        a lock meanwhile waits, and fails once the upgrade has dropped the table;
        each free lock is held by this transaction until it ends."""
        if not self._read("SELECT to_regclass(%s) IS NOT NULL AS present", (OLD_LOCKS_TABLE,))[0]["present"]:
            return []
        self._execute("LOCK TABLE locks IN ACCESS EXCLUSIVE MODE")
        held = []
        for row in self._read("SELECT stack_name, holder, host, pid, backend_pid, acquired FROM locks"
                              " ORDER BY stack_name"):
            free = self._read(f"SELECT pg_try_advisory_xact_lock({_OLD_LOCK_KEY}) AS free", (row["stack_name"],))
            if not free[0]["free"]:
                held.append((OldLock(row["stack_name"], row["holder"], row["host"], int(row["pid"]),
                                     row["acquired"]), int(row["backend_pid"])))
        return held

    def close(self) -> None:
        with self._lock:
            if self._conn.closed and not self._fences:
                return
            try:
                if not (self._conn.closed or self._conn.broken):
                    self.flush()
                self.release_all_locks()
            except StoreError:
                pass  # left to run out
            self._conn.close()

    def _refuse_change(self) -> None:
        """A PostgreSQL store is always writable (the server refuses what it must)."""

    def _abandon(self) -> None:
        if self._conn.closed or self._conn.broken:
            self._batch_open = False  # the server rolled it back with the session
            return
        super()._abandon()

    def _execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        with self._lock:
            try:
                return self._conn.execute(sql, args or None)
            except self._pg.errors.LockNotAvailable:
                raise self._busy() from None
            except (self._pg.OperationalError, self._pg.InterfaceError) as exc:
                if self._in_transaction or self._batch_open or not (self._conn.broken or self._conn.closed):
                    raise self._failure(exc) from None
                lost = exc
            # The session ended while the job lives (idle_session_timeout, a
            # terminated backend, a failover): outside a transaction the statement
            # is tried once more in a new session.  The lease is not the session's,
            # so the job's lock holds meanwhile; the next write checks it.
            self._reconnect(lost)
            try:
                return self._conn.execute(sql, args or None)
            except self._pg.Error as exc:
                raise self._failure(exc) from None

    def _reconnect(self, lost: BaseException) -> None:
        try:
            self._conn.close()
        except self._pg.Error:
            pass
        try:
            self._conn = self._connect(self._connect_timeout)
        except StoreError as error:
            raise StoreError(f"lost the connection to the store {self._shown}: {_first_line(lost)};"
                             f" {error}") from None

    def _busy(self) -> StoreBusy:
        """A row this run needs was held past LOCK_WAIT: who holds it (looked up in
        a session of its own: this one's transaction has failed), and what to do."""
        holders = self._idle_in_transaction()
        who = "; ".join(holders) if holders else "another session (none is idle in a transaction now)"
        return StoreBusy(
            f"the store {self._shown} is locked: {who} has held a row this run needs for over "
            f"{LOCK_WAIT:g} s without finishing its transaction: a job stopped or hung inside a "
            "write (a paused VM, SIGSTOP, a hung controller). Its session keeps the lock until the "
            "server ends it (set idle_in_transaction_session_timeout on the database, and the "
            "next run takes the stack over once that job's lease has run out) or it is ended: "
            "SELECT pg_terminate_backend(PID); its unfinished write is rolled back")

    def _idle_in_transaction(self) -> list[str]:
        """The sessions of this database idle inside a transaction for over a second,
        oldest first, each with the job whose lease names its process."""
        try:
            with self._pg.connect(self.url, autocommit=True, connect_timeout=self._connect_timeout,
                                  application_name=f"{APPLICATION} diagnosis") as look:
                sessions = look.execute(
                    "SELECT pid, application_name, client_addr, xact_start FROM pg_stat_activity"
                    " WHERE datname = current_database() AND state LIKE 'idle in transaction%'"
                    " AND state_change < clock_timestamp() - interval '1 second'"
                    " ORDER BY xact_start LIMIT 3").fetchall()
                leases = look.execute("SELECT stack_name, holder, host, pid FROM leases"
                                      " WHERE expires > 0").fetchall()
        except self._pg.Error:
            return []
        return [_session_named(row, leases) for row in sessions]

    def _failure(self, exc: BaseException) -> StoreError:
        if isinstance(exc, self._pg.OperationalError):
            return StoreError(f"lost the connection to the store {self._shown}: {_first_line(exc)}")
        if isinstance(exc, self._pg.InterfaceError):
            return StoreError(f"the connection to the store {self._shown} is closed: {_first_line(exc)}")
        return StoreError(f"store {self._shown}: {_first_line(exc)}")

    def _write(self, sql: str, args: Sequence[Any] = ()) -> Any:
        with self._lock, self._own_transaction():
            return self._execute(sql, args)

    def _read(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._execute(sql, args)
            names = [column.name for column in cursor.description or ()]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

    def _one_of(self, column: str, values: Sequence[Any]) -> tuple[str, Sequence[Any]]:
        # One array argument, however many values (a statement takes at most 65535).
        return f"{quoted(column)} = ANY(%s)", (list(values),)

    def _lock_stack_row(self, stack_id: str) -> None:
        # The stack row's lock orders concurrent writers of the same stack.
        self._read("SELECT id FROM stacks WHERE id = %s FOR UPDATE", (stack_id,))

    def _insert_event(self, args: Sequence[Any]) -> int:
        with self._lock, self._fenced():
            return int(self._read(f"{DIALECT.native(EVENT_INSERT)} RETURNING id", args)[0]["id"])

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

        sql = f"SELECT * FROM {quoted(table)}"
        args: Sequence[Any] = ()
        if column is not None:
            condition, args = self._one_of(column, values)
            sql += f" WHERE {condition}"
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
            self._write(DIALECT.native(insert_sql(table, names)), values)
        if table == "events" and rows:
            # Ids given explicitly: the sequence goes on after the highest.
            self._write("SELECT setval(pg_get_serial_sequence('events', 'id'),"
                        " (SELECT MAX(id) FROM events))")


def _session_named(session: Sequence[Any], leases: Sequence[Sequence[Any]]) -> str:
    """"session 4242 (hotplay.stacks pid 31 on web-1, client 10.0.0.5, in a transaction
    since ...), the job holding stack web's lock (...)"."""
    backend, application, client, since = session
    where = f", client {client}" if client else ""
    # The server may show no start for a transaction that is ending as it is read.
    started = f" since {since.astimezone(datetime.timezone.utc):%Y-%m-%dT%H:%M:%SZ}" if since else ""
    text = f"session {backend} ({application or 'no application name'}{where}, in a transaction{started})"
    for stack, holder, host, pid in leases:
        if application == f"{APPLICATION} pid {pid} on {host}"[:63]:
            return f"{text}, the job holding stack {stack}'s lock ({holder}, pid {pid} on {host})"
    return text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
