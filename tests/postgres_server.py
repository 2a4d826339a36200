# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A throwaway PostgreSQL server for the tests and benchmarks, started with
pytest-postgresql's executor over the distribution's server binaries.

initdb and postgres refuse to run as root, and CI runs as root: then the cluster
is made and run by the unprivileged ``postgres`` user (Debian's package creates
it), through ``pg_ctl_as_owner.sh``, in a directory that user owns.  As any
other user the server runs as that user.  Durability is off: test data only.

``scripts/test_deps.sh`` installs Debian's ``postgresql`` when it is missing.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import psycopg
from pytest_postgresql.executors import PostgreSQLExecutor

PG_CTL = Path(__file__).resolve().parent / "pg_ctl_as_owner.sh"
OWNER = "postgres"  # the cluster's owner when the tests run as root
SERVER_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"


class ServerMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def server_bindir() -> str:
    """The newest PostgreSQL server's bin directory (PG_BINDIR overrides)."""
    if os.environ.get("PG_BINDIR"):
        return os.environ["PG_BINDIR"]
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return os.path.dirname(found[-1])
    on_path = shutil.which("initdb")
    if on_path:
        return os.path.dirname(on_path)
    raise ServerMissing("no PostgreSQL server binaries (initdb) found: run `bash scripts/test_deps.sh` "
                        "as root, or install Debian's postgresql package (a non-root user needs only "
                        "the package installed; the server then runs as that user)")


def _free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _directory_for_the_server() -> Path:
    directory = Path(tempfile.mkdtemp(prefix="hotplay-pg-"))
    if os.geteuid() == 0:
        owner = pwd.getpwnam(OWNER)
        os.chown(directory, owner.pw_uid, owner.pw_gid)
    return directory


def _wait_until_ready(url: str, seconds: float = 60) -> None:
    """The executor returns once the port listens, but the server still refuses
    sessions while it starts up ("the database system is starting up")."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            psycopg.connect(url, connect_timeout=5).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# Run beside the server, in a session of its own: once the process that started the
# server is gone without stopping it (a test run a time-out killed), the server is
# stopped and its files removed.  Left running, such servers held memory for hours.
_REAPER = """\
import os, shutil, subprocess, sys, time
owner, pg_ctl, directory = int(sys.argv[1]), sys.argv[2], sys.argv[3]
while True:
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        break
    time.sleep(2)
subprocess.run([pg_ctl, "stop", "-D", directory + "/data", "-m", "immediate", "-w"], capture_output=True)
shutil.rmtree(directory, ignore_errors=True)
"""


def _reaper(directory: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _REAPER, str(os.getpid()), str(PG_CTL), str(directory)],
                            start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """Start a server on 127.0.0.1 (a free port, its socket in its own directory) and
    yield the URL of its ``postgres`` database; the server and its files go afterwards."""
    bindir = server_bindir()
    os.environ["HOTPLAY_PG_BINDIR"] = bindir  # read by pg_ctl_as_owner.sh
    directory = _directory_for_the_server()
    port = _free_port()
    server = PostgreSQLExecutor(
        executable=str(PG_CTL), host="127.0.0.1", port=port, datadir=str(directory / "data"),
        unixsocketdir=str(directory), logfile=str(directory / "server.log"), startparams="-w",
        dbname="postgres", user="postgres", postgres_options=SERVER_OPTIONS, timeout=120)
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    reaper = _reaper(directory)
    try:
        server.start()
        _wait_until_ready(url)
        yield url
    finally:
        try:
            server.stop()
        finally:
            reaper.kill()
            reaper.wait()
            shutil.rmtree(directory, ignore_errors=True)
