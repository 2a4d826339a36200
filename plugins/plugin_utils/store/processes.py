# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Facts about processes on this host, from /proc (Linux): who is below whom,
when a process started, who owns it, and which PID namespace this process sees.

Used to stop a task's own modules (adapters/child_processes.py) and to fence the
holder of a lease this run takes over (fencing.py); lease rows record these facts
of their holder (leases.py).  Elsewhere /proc is missing and every answer is
"nothing known".

A process this one may not look at is not a process that is gone: with /proc
mounted ``hidepid=2`` (usual on shared controllers) another user's processes are
missing from /proc altogether, and with ``hidepid=1`` their files cannot be read.
``is_process`` says "cannot tell" then, never "gone".
"""

from __future__ import annotations

import os
from pathlib import Path


def descendants(root: int) -> set[int]:
    """Every process below ``root`` (empty where there is none)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # ended while listed
        # The command name may hold spaces and parentheses: fields follow the last ')'.
        fields = text[text.rfind(")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def ancestors(pid: int) -> set[int]:
    """The processes above ``pid`` (its parent, theirs, ... up to the namespace's init)."""
    found: set[int] = set()
    while pid > 1:
        fields = _stat_fields(pid)
        if len(fields) < 2 or int(fields[1]) in found:
            break
        pid = int(fields[1])
        found.add(pid)
    return found


def pid_space() -> str:
    """The boot id and PID namespace of this process ("" when /proc cannot tell,
    or shows another namespace's processes): two processes with the same value
    see each other's pids."""
    try:
        if os.readlink("/proc/self") != str(os.getpid()):
            return ""  # /proc was mounted for another PID namespace
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as boot:
            boot_id = boot.read().strip()
        return f"{boot_id} {os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return ""


def process_start(pid: int) -> str:
    """Start time of a process (clock ticks since boot), '' when it is gone: a
    reused pid is not taken for the holder."""
    fields = _stat_fields(pid)
    # A killed process nobody has reaped yet (a zombie) holds nothing any more.
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return ""
    return fields[19]


def is_process(pid: int, start: str) -> bool | None:
    """Whether ``pid`` is still the process that started at ``start``: True; False
    when it has ended (or is a zombie, or its pid is another process's now); None
    when this process cannot tell (it may not look at it: another user's process
    under ``hidepid``)."""
    if pid <= 0:
        return False  # no process (and kill(0) would mean this process group)
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return _unseen(pid)  # gone, or hidden from this user (hidepid=2)
    except (OSError, IndexError):
        return None  # there, but not to be read by this user (hidepid=1)
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return False  # a killed process nobody has reaped yet holds nothing any more
    return fields[19] == start


def _unseen(pid: int) -> bool | None:
    """A pid /proc does not show: False when no process has it, None when one
    does (the kernel says so: this user may not signal it, or /proc hides it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return None  # EPERM: another user's process, hidden from this one
    return None


def owner(pid: int) -> tuple[int, ...]:
    """The real, effective, saved and file-system user ids of a process (() when
    it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Uid:"):
                    return tuple(int(uid) for uid in line.split()[1:5])
    except (OSError, ValueError):
        pass
    return ()


def running(pid: int) -> bool:
    """The process exists and is not a zombie (a killed process not reaped yet)."""
    return bool(process_start(pid))


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat after the command name: state, ppid, ... ([] when gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []
