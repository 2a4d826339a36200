# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A store of schema version 2 (the release before leases), and a job of that
version holding a stack's lock in it, for the tests of upgrading a store under a
running job (issue 28, item 4).

The schema comes from fixtures/store-schema-2 (version 2's DDL as released).  The
old job is a process of its own that takes the lock exactly as version 2 did
(plugins/plugin_utils/store/sqlite.py and postgres.py at commit 5f13db9^):

- SQLite: in a write transaction, a row of ``locks`` naming its host, pid and the
  start time of its process; released by deleting the row;
- PostgreSQL: the session's advisory lock on 64 bits of md5 of the stack's name,
  then the row (with its session's pid); released by deleting the row and
  unlocking.  A session that ends frees the lock with it.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "store-schema-2"

OLD_JOB = r"""
import datetime, os, socket, sqlite3, sys

url, name, holder = sys.argv[1:4]
pid = os.getpid()
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
key = "('x' || substr(md5('hotplay.stacks:' || %s), 1, 16))::bit(64)::bigint"
if url.startswith("sqlite:///"):
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        start = stat.read().rsplit(")", 1)[1].split()[19]
    db = sqlite3.connect(url[len("sqlite:///"):], isolation_level=None, timeout=30)
    db.execute("BEGIN IMMEDIATE")
    assert not db.execute("SELECT * FROM locks WHERE stack_name = ?", (name,)).fetchall()
    db.execute("INSERT OR REPLACE INTO locks VALUES (?, ?, ?, ?, ?, ?)",
               (name, holder, socket.gethostname(), pid, start, now))
    db.execute("COMMIT")
else:
    import psycopg
    db = psycopg.connect(url, autocommit=True)
    assert db.execute(f"SELECT pg_try_advisory_lock({key})", (name,)).fetchone()[0]
    db.execute("INSERT INTO locks VALUES (%s, %s, %s, %s, pg_backend_pid(), %s) ON CONFLICT (stack_name)"
               " DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid,"
               " backend_pid = excluded.backend_pid, acquired = excluded.acquired",
               (name, holder, socket.gethostname(), pid, now))
print("held", flush=True)
sys.stdin.readline()  # working on the stack
if url.startswith("sqlite:///"):
    db.execute("DELETE FROM locks WHERE stack_name = ? AND holder = ? AND pid = ?", (name, holder, pid))
else:
    db.execute("DELETE FROM locks WHERE stack_name = %s AND holder = %s AND pid = %s"
               " AND backend_pid = pg_backend_pid()", (name, holder, pid))
    db.execute(f"SELECT pg_advisory_unlock({key})", (name,))
print("released", flush=True)
sys.stdin.readline()
"""


def make_schema_2_store(url: str) -> None:
    """An empty store at schema version 2 at ``url`` (a new SQLite file, or an empty
    PostgreSQL database)."""
    backend = "sqlite" if url.startswith("sqlite:") else "postgresql"
    ddl = (FIXTURES / f"{backend}.sql").read_text(encoding="utf-8")
    if backend == "sqlite":
        with sqlite3.connect(url[len("sqlite:///"):]) as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(ddl)
        db.close()
        return
    import psycopg  # pylint: disable=import-outside-toplevel

    with psycopg.connect(url, autocommit=True) as db:
        db.execute(ddl)


def stored(url: str, sql: str) -> list[tuple]:
    """Rows of a query, read past the store code (as an operator would)."""
    if url.startswith("sqlite:"):
        with sqlite3.connect(f"file:{url[len('sqlite:///'):]}?mode=ro", uri=True) as db:
            rows = db.execute(sql).fetchall()
        db.close()
        return rows
    import psycopg  # pylint: disable=import-outside-toplevel

    with psycopg.connect(url, autocommit=True) as db:
        return [tuple(row) for row in db.execute(sql).fetchall()]


def tables(url: str) -> set[str]:
    if url.startswith("sqlite:"):
        return {name for (name,) in stored(url, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {name for (name,) in stored(url, "SELECT table_name FROM information_schema.tables"
                                            " WHERE table_schema = current_schema()")}


def schema_version(url: str) -> int:
    return int(stored(url, "SELECT value FROM meta WHERE key = 'schema_version'")[0][0])


class OldJob:
    """A running job of version 2 holding stack ``name``'s lock, until released."""

    def __init__(self, url: str, name: str = "web", holder: str = "ansible-playbook (old job)") -> None:
        self.process = subprocess.Popen([sys.executable, "-c", OLD_JOB, url, name, holder],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if line != "held\n":
            self.process.kill()
            raise AssertionError(f"the old job did not take the lock: {line!r}")

    @property
    def pid(self) -> int:
        return self.process.pid

    def release(self) -> None:
        """Its work done, it deletes its lock row (and unlocks), as version 2 did."""
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline() == "released\n"

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()  # waits, and closes its pipes
