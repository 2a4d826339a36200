# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Killing a whole ansible-playbook job, as a lost container or controller does.

Ansible runs each worker in a session of its own, so killing the process group
misses the worker that is doing the task: the tree has to be walked."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import pytest


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and all its descendants at once: first stop them all (so
    none forks or acts in between), then kill them."""
    stopped: set[int] = set()
    while True:
        tree = {pid} | descendants(pid)
        fresh = tree - stopped
        if not fresh:
            break
        for member in fresh:
            _signal(member, signal.SIGSTOP)
        stopped |= fresh
    for member in stopped:
        _signal(member, signal.SIGKILL)


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def wait_until(condition: Callable[[], object], seconds: float, what: str) -> None:
    """Poll ``condition`` every 0.1 s; fail the test after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up after {seconds} s waiting for {what}")
        time.sleep(0.1)
