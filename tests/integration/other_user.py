# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A second user on this controller, and jobs of it, for the tests of what one
user's run may do to another's (leases, fencing).

The tests run as root (CI does): the user is made with ``useradd`` once, and kept
(tests running at the same time share it).  A run of that user is a Python
process started as root that imports the store code first, then drops to the
user (the interpreter may live where only root can read, as under /root/.pyenv),
so it runs the store code as that user does.  With ``hidepid``, it runs in a mount
namespace of its own where a private /proc instance is mounted ``hidepid=2``
(a new instance: remounting the shared /proc would change it for the whole host).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NAME = "hotplay-other"

# What every run of the other user starts with: the store code imported while
# still root, then the user's ids (all of them: real, effective, saved).
PREAMBLE = """
import encodings.ascii, encodings.latin_1, encodings.utf_8, json, os, signal, subprocess, sys, time
from ansible_collections.hotplay.stacks.plugins.plugin_utils import errors
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import (
    fencing, leases, locking, open_store, processes, proofs, sqlite)
uid, gid = int(os.environ["OTHER_UID"]), int(os.environ["OTHER_GID"])
os.setgroups([])
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
"""


def other_user() -> tuple[int, int]:
    """The second user's uid and gid, made when missing (root only)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (as in CI): a second user is made with useradd, and /proc is "
                    "mounted hidepid=2 in a mount namespace of the test's own")
    try:
        entry = pwd.getpwnam(NAME)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                               NAME], capture_output=True, text=True, check=False)
        if made.returncode not in (0, 9):  # 9: made meanwhile by a test running at the same time
            pytest.skip(f"cannot make a second user with useradd: {made.stderr.strip()}")
        entry = pwd.getpwnam(NAME)
    return entry.pw_uid, entry.pw_gid


@contextmanager
def shared_folder() -> Iterator[Path]:
    """A folder both users reach (pytest's tmp_path is root's alone), owned by the
    other user so that it can make the store there."""
    uid, gid = other_user()
    folder = Path(tempfile.mkdtemp(prefix="hotplay-two-users-", dir="/tmp"))
    try:
        os.chown(folder, uid, gid)
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def start(script: str, *args: str, hidepid: bool = False) -> subprocess.Popen[str]:
    """A Python run of the other user (``PREAMBLE``, then ``script``), with its
    stdin and stdout as pipes; in a /proc mounted ``hidepid=2`` when asked."""
    uid, gid = other_user()
    command = [sys.executable, "-c", PREAMBLE + script, *args]
    if hidepid:
        if not shutil.which("unshare"):
            pytest.skip("needs unshare (util-linux) for a mount namespace with /proc mounted hidepid=2")
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   'mount -t proc -o hidepid=2 proc /proc && exec "$@"', "sh", *command]
    environment = {**os.environ, "OTHER_UID": str(uid), "OTHER_GID": str(gid),
                   "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=environment)
