# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stopping the processes a task started: the modules its resources run.

A time-out or an interruption (SIGTERM from AWX's cancel, Ctrl-C) must stop the
work, not wait for it: a module resource runs its module in a process of its own
(through the connection plugin: the module itself on localhost, an ssh client for
a remote host), so those processes, and theirs, are stopped: asked to end
(SIGTERM), then killed after a grace period.  The task's own process goes on and
records what happened.  Linux only (it reads /proc); elsewhere nothing is stopped
and the run waits for its modules, as before.
"""

from __future__ import annotations

import os
import signal
import threading

from ..store.processes import descendants

GRACE_SECONDS = 5.0


def stop_child_processes(grace: float = GRACE_SECONDS, spared: frozenset[int] = frozenset()) -> None:
    """SIGTERM every descendant of this process now but the ``spared`` ones (their
    own descendants are not spared), SIGKILL those left after ``grace`` seconds
    (in the background: the caller may be a signal handler)."""
    children = descendants(os.getpid()) - spared
    _signal_all(children, signal.SIGTERM)
    if children:
        killer = threading.Timer(grace, _kill_survivors, args=(children,))
        killer.daemon = True
        killer.start()


def _kill_survivors(pids: set[int]) -> None:
    # The first ones' own children (a shell's) were signalled already; what they
    # started since is found again.
    _signal_all(pids | {child for pid in pids for child in descendants(pid)}, signal.SIGKILL)


def _signal_all(pids: set[int], number: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, number)
        except (ProcessLookupError, PermissionError):
            pass  # gone already, or not ours
