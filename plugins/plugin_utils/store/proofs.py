# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lease holder's proof that it holds its lease, checked before it is fenced.

A lease row names its holder's process by pid and start time, and anyone can read
both in /proc: whoever can write the store could write an expired lease naming any
process, and the run taking it over would stop and kill that process's whole tree
(fencing.py).  So the row alone is never enough to signal anything.

When a run takes a lease it draws a random nonce that it keeps to itself: as the
name of an anonymous in-memory file (``memfd_create``), ``hotplay-lease:NONCE``,
which it holds open while it holds the lease and which goes with its process.
The row records only a digest of the nonce bound to that very lease (the store's
identity, the stack, the token).  The kernel shows a process's open files
(``/proc/PID/fd``) only to its own user and to root, so:

- someone who can only write the store knows digests, never a nonce;
- a process that is no run of hotplay.stacks holds no such file;
- a run holding another lease (another stack, another token, another store) holds
  a nonce whose digest is not this row's;
- a process of another user may hold whatever it likes: fencing never signals
  another user's process anyway (fencing.py).

Where memfds are missing (not Linux) a run holds no proof, and nobody fences it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass

PREFIX = "hotplay-lease:"
# What /proc/PID/fd/N links to for such a file: "/memfd:hotplay-lease:NONCE (deleted)".
_LINK = "/memfd:" + PREFIX


@dataclass
class Proof:
    """The nonce's file, held open by the lease's holder, and the digest its lease
    row records ("" when no proof could be made)."""

    descriptor: int | None
    digest: str

    def close(self) -> None:
        if self.descriptor is not None:
            os.close(self.descriptor)
            self.descriptor = None


def make_proof(identity: str, stack_name: str, token: int) -> Proof:
    """A new nonce for the lease ``token`` of ``stack_name`` in the store ``identity``,
    kept by this process until the proof is closed."""
    nonce = secrets.token_hex(16)
    try:
        descriptor = os.memfd_create(PREFIX + nonce, os.MFD_CLOEXEC)
    except (AttributeError, OSError):
        return Proof(None, "")
    return Proof(descriptor, digest(identity, stack_name, token, nonce))


def digest(identity: str, stack_name: str, token: int, nonce: str) -> str:
    text = "\0".join(("hotplay.stacks lease proof 1", identity, stack_name, str(token), nonce))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def holds(pid: int, identity: str, stack_name: str, token: int, expected: str) -> bool:
    """Whether process ``pid`` holds the nonce of that lease, whose row records
    ``expected`` (False when it cannot be looked at: another user's process)."""
    if not expected:
        return False
    try:
        entries = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for entry in entries:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{entry}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith(_LINK):
            nonce = target[len(_LINK):].split(" ", 1)[0]
            if hmac.compare_digest(digest(identity, stack_name, token, nonce), expected):
                return True
    return False
