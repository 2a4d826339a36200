# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Status waits that share their polls.

Twenty servers waiting for ACTIVE are twenty questions about one collection: a
``Poller`` asks them as one list call (``GET /servers/detail?...``, ``GET
/networks?id=a&id=b``) and gives each waiter its own item. A waiter that needs a
fresh answer takes the next poll that starts after it asked: when a poll is under
way it waits for it to end and for the one after; when none is, it makes the poll,
for every id being waited for at that moment. Each waiter backs off on its own
(``FIRST_DELAY`` growing by ``BACKOFF`` up to ``MAX_DELAY``), so a long wait costs
few calls, and many waits cost about as many calls as one.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# How long a poll waits for other waits to join it before it asks.
GATHER = 0.05
FIRST_DELAY = 0.25
BACKOFF = 1.6
MAX_DELAY = 4.0
# Ids per list call: query strings stay well under what proxies accept.
IDS_PER_CALL = 40

# Lists the items of ``ids`` (each item a mapping with an ``id``); items that do
# not exist are simply not in the answer.
Lister = Callable[[Sequence[str]], list[Mapping[str, Any]]]


class Poller:
    """The shared polls of one kind of thing (one collection of one cloud)."""

    def __init__(self, lister: Lister) -> None:
        self._lister = lister
        self._changed = threading.Condition()
        self._waiting: Counter[str] = Counter()
        self._started = 0  # polls started so far
        self._finished = 0  # the number of the last poll that finished
        self._polling = False
        self._answers: dict[str, Mapping[str, Any]] = {}
        self.polls = 0  # list calls made, for the figures

    def wait(self, ident: str, done: Callable[[Mapping[str, Any] | None], bool],
             sleep: Callable[[float], None]) -> Mapping[str, Any] | None:
        """Poll until ``done(item)`` (``item`` is None once the thing is gone);
        returns that item.  ``sleep`` is the run's (a cancelled run stops it)."""
        delay = FIRST_DELAY
        with self._changed:
            self._waiting[ident] += 1
        try:
            while True:
                item = self._fresh(ident)
                if done(item):
                    return item
                sleep(delay)
                delay = min(delay * BACKOFF, MAX_DELAY)
        finally:
            with self._changed:
                self._waiting[ident] -= 1
                if not self._waiting[ident]:
                    del self._waiting[ident]

    def _fresh(self, ident: str) -> Mapping[str, Any] | None:
        """The item from a poll that started after this call."""
        with self._changed:
            wanted = self._started + 1
            while self._finished < wanted:
                if not self._polling:
                    return self._poll(ident)
                self._changed.wait()
            return self._answers.get(ident)

    def _poll(self, ident: str) -> Mapping[str, Any] | None:
        """Make the poll for every id waited for (called with the lock held; the
        lock is released while the poll gathers its waiters and the cloud answers).
        The poll starts when it takes the ids: waits that begin while it gathers
        (the other resources of a wave, acting at the same moment) are in it."""
        self._polling = True
        self._changed.release()
        try:
            time.sleep(GATHER)
            with self._changed:
                self._started += 1
                number, ids = self._started, sorted(self._waiting)
            answers: dict[str, Mapping[str, Any]] = {}
            for start in range(0, len(ids), IDS_PER_CALL):
                self.polls += 1
                answers.update((str(item["id"]), item) for item in self._lister(ids[start:start + IDS_PER_CALL]))
        finally:
            self._changed.acquire()
            self._polling = False
            self._changed.notify_all()
        self._answers, self._finished = answers, number
        return answers.get(ident)
