# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fencing the holder of a lease that is taken over: stop it, where this host can
and where it proves to be that holder.

A lease that ran out is taken over whatever its holder does meanwhile.  Its
token stops every *write* of the old run, but not the processes it had started:
a run frozen (SIGSTOP, a paused VM) while a module was writing a file goes on
when it wakes, and that module finishes its write over what the new run did.
When the old holder runs in this very PID namespace (same boot, same namespace,
its pid still the process that took the lease), the run that takes over stops
it, with everything below it (the Ansible worker and the module processes it
started), before it acts: first SIGSTOP, so that nothing forks or acts in
between, then SIGKILL, then it waits until they are gone.  A holder elsewhere
(another host, container or PID namespace) cannot be reached; the takeover note
says so, and docs/store.md says what may then still happen.

The lease row is not trusted to name the process: whoever can write the store
could name any process in it.  Before any signal, the process must be this
user's (all its user ids this process's own: another user's process is never
signalled, nor is another user's process below it), and it must hold the proof
of that very lease (proofs.py: a nonce only the holder knows).  A process that
fails either is left alone, and the takeover note says why; the lease, expired,
is taken over all the same, as one of a holder on another host is.

What was done is written into the takeover note, which the run records as its
``LOCK`` ``TAKEN_OVER`` event: the fence is audited with the takeover.
"""

from __future__ import annotations

import os
import signal
import time

from . import proofs
from .processes import ancestors, descendants, is_process, owner, pid_space, process_start, running
from .base import LeaseRecord

# How long killed processes are given to be gone (a process in uninterruptible
# sleep, on a hung file system, dies only when its I/O returns).
FENCE_WAIT = 5.0
POLL = 0.02

UNREACHABLE = ("not fenced: its processes are on another host or in another PID namespace, out of "
               "this run's reach")


def fence(lease: LeaseRecord, identity: str) -> str:
    """Stop the lease's holder and every process below it, when this host can and
    the holder proves to hold the lease (of the store ``identity``); what was done,
    for the takeover note ("" when its process is gone already)."""
    here = pid_space()
    if not here or lease.pid_space != here:
        return UNREACHABLE
    alive = is_process(lease.pid, lease.pid_start)
    if alive is False:
        return ""
    if alive is None:
        return (f"not fenced: its process {lease.pid} is hidden from this run (another user's, with /proc "
                "mounted hidepid): left alone")
    if lease.pid == os.getpid() or lease.pid in ancestors(os.getpid()):
        return "not fenced: it is this process or one above it"
    with _Handle(lease.pid) as root:
        # Looked at again through the pidfd: a pid reused from here on is not it.
        if not root.is_open or process_start(lease.pid) != lease.pid_start:
            return ""  # it ended (and its pid may be another's) between the two looks
        doubt = _untrusted(lease, identity)
        if doubt:
            return doubt
        try:
            killed, spared = _kill_tree(root)
        except PermissionError:
            return f"not fenced: not allowed to signal its process {lease.pid} (another user's)"
    spared_note = f"; left alone below it: {_listed(spared)} (another user's)" if spared else ""
    left = _wait_gone(killed)
    if left:
        return (f"fenced: killed its processes {_listed(killed)}, but {_listed(left)} still ran "
                f"{FENCE_WAIT:g} s later (uninterruptible: a hung file system?); what they do may "
                f"still land{spared_note}")
    return f"fenced: stopped and killed its processes {_listed(killed)} before this run acted{spared_note}"


def _untrusted(lease: LeaseRecord, identity: str) -> str:
    """Why the process the lease names must not be signalled ("" when it is this
    user's and holds the lease's proof)."""
    uids = owner(lease.pid)
    if not uids:
        return f"not fenced: its process {lease.pid} cannot be looked at from this run: left alone"
    if not _mine(uids):
        return (f"not fenced: its process {lease.pid} is another user's (uid {uids[0]}); a run never "
                "signals another user's processes")
    if not proofs.holds(lease.pid, identity, lease.stack_name, lease.token, lease.proof):
        return (f"not fenced: its process {lease.pid} holds no proof of this lease (no run of "
                "hotplay.stacks took it there, or one of a version before lease proofs): left alone")
    return ""


def _mine(uids: tuple[int, ...]) -> bool:
    """All of a process's user ids (real, effective, saved, file system) are this
    process's effective one."""
    return all(uid == os.geteuid() for uid in uids)


def _kill_tree(root: "_Handle") -> tuple[list[int], list[int]]:
    """SIGSTOP the holder and every process below it of this user, then SIGKILL
    them all; the pids killed, and those below it spared (another user's)."""
    pid = root.pid
    root.send(signal.SIGSTOP)
    stopped: set[int] = {pid}
    spared: set[int] = set()
    # Again until nothing new appears: a child may be forking as we look.
    while fresh := descendants(pid) - stopped - spared:
        for child in fresh:
            if _mine(owner(child) or (-1,)):
                _send(child, signal.SIGSTOP)
                stopped.add(child)
            else:
                spared.add(child)
    for child in stopped - {pid}:
        _send(child, signal.SIGKILL)
    root.send(signal.SIGKILL)
    return sorted(stopped), sorted(spared)


class _Handle:
    """A pidfd of the holder where the kernel has them (Linux 5.3): a signal
    sent through it cannot reach another process that reused the pid."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.descriptor: int | None = None
        self.is_open = True

    def __enter__(self) -> "_Handle":
        try:
            self.descriptor = os.pidfd_open(self.pid)
        except ProcessLookupError:
            self.is_open = False
        except (AttributeError, OSError):
            self.descriptor = None  # no pidfds here: plain signals
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.descriptor is not None:
            os.close(self.descriptor)

    def send(self, number: int) -> None:
        if self.descriptor is None:
            _send(self.pid, number)
            return
        try:
            signal.pidfd_send_signal(self.descriptor, number)
        except ProcessLookupError:
            pass


def _send(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass  # gone already


def _wait_gone(pids: list[int]) -> list[int]:
    """The pids still running after FENCE_WAIT (a zombie counts as gone)."""
    deadline = time.monotonic() + FENCE_WAIT
    left = [pid for pid in pids if running(pid)]
    while left and time.monotonic() < deadline:
        time.sleep(POLL)
        left = [pid for pid in left if running(pid)]
    return left


def _listed(pids: list[int]) -> str:
    return ", ".join(str(pid) for pid in pids)
