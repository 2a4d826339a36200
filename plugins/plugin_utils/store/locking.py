# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stack's lock held for a run, waiting for it when asked (``lock_timeout``),
and kept alive while the run lasts.

The stores only try a lock (``Store.acquire_lock`` takes it or raises
``StackLocked`` naming the holder); waiting is the same for every backend: try
again with a growing pause until the time is up or the run is cancelled.  Only
the one stack's lock is tried, so a wait never holds up another stack.

A held lock is a lease (leases.py): a heartbeat thread renews it every
``renew_every`` seconds.  When the lease was taken over or broken, or cannot be
renewed before it runs out (the store unreachable), the heartbeat tells the run
(``on_lost``: the run is cancelled and the modules it runs are stopped); the run's
next write fails with ``LockLost`` in any case.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import LockLost, StackLocked, StoreBusy, StoreError
from .base import Store

# First pause between two tries, and the longest: short enough that a freed lock
# is taken within half a second, long enough that waiters cost the store little.
FIRST_PAUSE = 0.05
LONGEST_PAUSE = 0.5


# After a failed renewal, the next try comes sooner than the period.
RETRY_PAUSE = 1.0


@contextmanager
def stack_lock(store: Store, name: str, holder: str, wait: float = 0,
               cancel: threading.Event | None = None,
               on_lost: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the stack's lock for the ``with`` block; wait up to ``wait`` seconds
    for it.  Raises ``StackLocked`` naming the holder when it cannot be had.
    ``on_lost`` is told (once, from the heartbeat thread) why the lock was lost."""
    acquire_waiting(store, name, holder, wait, cancel)
    heartbeat = Heartbeat(store, name, on_lost or _ignore)
    try:
        yield
    finally:
        heartbeat.stop()
        store.release_lock(name, holder)


def _ignore(_reason: str) -> None:
    """Nothing to stop: the run's next write fails with LockLost."""


class Heartbeat:
    """Renews a held lease in a daemon thread until stopped or the lease is lost."""

    def __init__(self, store: Store, name: str, on_lost: Callable[[str], None]) -> None:
        self._store = store
        self._name = name
        self._on_lost = on_lost
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease {name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def _beat(self) -> None:
        terms = self._store.lease_terms
        renewed = time.monotonic()  # acquired just now
        pause = terms.renew_every
        while not self._stopped.wait(pause):
            try:
                self._store.renew_lock(self._name)
            except LockLost as lost:
                self._on_lost(str(lost))
                return
            except StoreError as error:
                # A lease renewed at ``renewed`` lasts ``length`` by the store's
                # clock; give up a renewal period before that (counting the
                # next try's pause), so the run stops its work while no one else
                # can hold the lock yet.
                pause = min(RETRY_PAUSE, terms.renew_every)
                if time.monotonic() - renewed + pause >= terms.length - terms.renew_every:
                    self._on_lost(f"lost the lock on stack {self._name}: could not renew its lease "
                                  f"before it ran out: {error}")
                    return
                continue
            renewed, pause = time.monotonic(), terms.renew_every


def acquire_waiting(store: Store, name: str, holder: str, wait: float = 0,
                    cancel: threading.Event | None = None) -> None:
    """Take the lock, trying again until ``wait`` seconds have passed (also while
    another process holds the whole store's write lock: a job stopped inside a
    write, which lets go when it goes on or dies)."""
    deadline = time.monotonic() + max(0.0, wait)
    pause = FIRST_PAUSE
    while True:
        try:
            store.acquire_lock(name, holder)
            return
        except (StackLocked, StoreBusy) as refusal:
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


def _after_waiting(refusal: StackLocked | StoreBusy, wait: float) -> StackLocked | StoreBusy:
    if wait <= 0:
        return refusal
    return type(refusal)(f"{refusal}; still locked after waiting {_seconds(wait)} (lock_timeout)")


def _seconds(value: float) -> str:
    return f"{value:g} s"
