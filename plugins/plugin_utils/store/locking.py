# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stack's lock held for a run, waiting for it when asked (``lock_timeout``).

The stores only try a lock (``Store.acquire_lock`` takes it or raises
``StackLocked`` naming the holder); waiting is the same for every backend: try
again with a growing pause until the time is up or the run is cancelled.  Only
the one stack's lock is tried, so a wait never holds up another stack.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import StackLocked
from .base import Store

# First pause between two tries, and the longest: short enough that a freed lock
# is taken within half a second, long enough that waiters cost the store little.
FIRST_PAUSE = 0.05
LONGEST_PAUSE = 0.5


@contextmanager
def stack_lock(store: Store, name: str, holder: str, wait: float = 0,
               cancel: threading.Event | None = None) -> Iterator[None]:
    """Hold the stack's lock for the ``with`` block; wait up to ``wait`` seconds
    for it.  Raises ``StackLocked`` naming the holder when it cannot be had."""
    acquire_waiting(store, name, holder, wait, cancel)
    try:
        yield
    finally:
        store.release_lock(name, holder)


def acquire_waiting(store: Store, name: str, holder: str, wait: float = 0,
                    cancel: threading.Event | None = None) -> None:
    """Take the lock, trying again until ``wait`` seconds have passed."""
    deadline = time.monotonic() + max(0.0, wait)
    pause = FIRST_PAUSE
    while True:
        try:
            store.acquire_lock(name, holder)
            return
        except StackLocked as refusal:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _after_waiting(refusal, wait) from None
            # Jitter: waiters that started together do not all try at once.
            nap = min(pause * random.uniform(0.5, 1.0), left)
            if cancel is not None and cancel.wait(nap):
                raise StackLocked(f"{refusal}; stopped waiting for the lock: the run was interrupted") from None
            if cancel is None:
                time.sleep(nap)
            pause = min(pause * 2, LONGEST_PAUSE)


def _after_waiting(refusal: StackLocked, wait: float) -> StackLocked:
    if wait <= 0:
        return refusal
    return StackLocked(f"{refusal}; still locked after waiting {_seconds(wait)} (lock_timeout)")


def _seconds(value: float) -> str:
    return f"{value:g} s"
