# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SQLite stores' places on disk: the directories a store needs, made private to
the user whatever the umask; scratch stores in temporary directories; and what a
killed process left of either.

A new store is built under ``<path>.new-<pid>-<random>`` and linked into place
(store.sqlite); a process killed meanwhile (``kill -9``, the OOM killer) leaves that
file behind, and SQLite's ``-wal``, ``-shm`` or ``-journal`` file beside it.  The next
opening of the store removes such files whose process is gone and that are older than a
build ever takes (the process may be another host's or another PID namespace's, where its
PID means nothing here).

A scratch directory (``scratch_directory``: the adoption's scratch store) holds a lock
on a file inside it for as long as it is used; a killed process's lock is gone with
it, and the next scratch directory of that kind removes the ones nobody holds.
"""

from __future__ import annotations

import fcntl
import glob
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

PRIVATE_DIRECTORY_MODE = 0o700
# A build takes well under a second: a file this old was left by a killed process.
STALE_BUILD_SECONDS = 300.0
# SQLite's own files beside a build (its write-ahead log, its shared memory, a
# rollback journal) are the build's too: left by the same kill.
_BUILD_SUFFIX = re.compile(r"\.new-(\d+)-[0-9a-f]+(-wal|-shm|-journal)?")


def make_private_directories(directory: str) -> None:
    """Create ``directory`` and each missing parent, each with mode 0700 set
    explicitly (``os.makedirs`` gives the parents the umask's mode: 0777 under
    umask 000).  Directories that exist keep their mode.  Best effort: what cannot
    be made is left for the store's own opening to report."""
    missing: list[str] = []
    current = os.path.abspath(directory)
    while not os.path.exists(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, PRIVATE_DIRECTORY_MODE)
        except FileExistsError:
            continue  # another process made it meanwhile: its own
        except OSError:
            return
        os.chmod(path, PRIVATE_DIRECTORY_MODE)


def remove_stale_builds(path: str, now: float | None = None) -> list[str]:
    """Remove the ``<path>.new-<pid>-<random>`` files (and their ``-wal``, ``-shm``,
    ``-journal``) whose process is gone and that are older than STALE_BUILD_SECONDS;
    the ones removed.  Best effort."""
    now = time.time() if now is None else now
    removed = []
    for candidate in glob.glob(glob.escape(path) + ".new-*"):
        match = _BUILD_SUFFIX.fullmatch(candidate[len(path):])
        if match is None or process_alive(int(match.group(1))):
            continue
        try:
            if now - os.lstat(candidate).st_mtime < STALE_BUILD_SECONDS:
                continue
            os.unlink(candidate)
        except OSError:
            continue
        removed.append(candidate)
    return removed


def process_alive(pid: int) -> bool:
    """Whether a process of that PID exists here (one that cannot be signalled,
    another user's, exists all the same)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


SCRATCH_LOCK = "in-use.lock"


@contextmanager
def scratch_directory(prefix: str) -> Iterator[str]:
    """A private temporary directory (``<tmp>/<prefix><pid>-<random>``), removed
    afterwards; first the ones of this ``prefix`` that killed processes left behind."""
    remove_abandoned_scratch(prefix)
    directory = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")
    held = -1
    try:
        held = os.open(os.path.join(directory, SCRATCH_LOCK), os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
        fcntl.flock(held, fcntl.LOCK_EX)
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        if held >= 0:
            os.close(held)


def remove_abandoned_scratch(prefix: str, now: float | None = None) -> list[str]:
    """Remove this user's scratch directories of ``prefix`` in the temporary
    directory that no process holds (their owner was killed); the ones removed.
    One without its lock file (made by an older version, or this very moment) only
    once it is older than STALE_BUILD_SECONDS.  Best effort."""
    now = time.time() if now is None else now
    removed = []
    for candidate in glob.glob(os.path.join(glob.escape(tempfile.gettempdir()), glob.escape(prefix) + "*")):
        try:
            info = os.lstat(candidate)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            if _abandoned(candidate, now - info.st_mtime):
                shutil.rmtree(candidate)
                removed.append(candidate)
        except OSError:
            continue
    return removed


def _abandoned(directory: str, age: float) -> bool:
    try:
        held = os.open(os.path.join(directory, SCRATCH_LOCK), os.O_RDWR | os.O_NOFOLLOW)
    except FileNotFoundError:
        return age >= STALE_BUILD_SECONDS
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # its process runs
    finally:
        os.close(held)
    return True
