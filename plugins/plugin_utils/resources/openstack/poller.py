# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Status waits that share their polls.

Twenty servers waiting for ACTIVE are twenty questions about one collection: a
``Poller`` asks them as one list call (``GET /servers/detail?...``, ``GET
/networks?id=a&id=b``) and gives each waiter its own item.  Every waiter reads
the answer of every poll that asked about it, whoever made the poll: a waiter
looks at once, then waits for the next poll's answer, and makes a poll itself
only when its own delay (``FIRST_DELAY`` growing by ``BACKOFF`` up to
``MAX_DELAY``) has passed since its last answer with no poll under way.  So the
waits of one collection keep in step: their polls come at the pace of the most
eager of them, each poll answers all of them at once (a thing ready is seen at
the next poll, whoever asked), and a long wait beside others costs no calls of
its own.  A poll made for another waiter before this one's delay is up is
fresher than the one it would make, never older: it started after this waiter's
last answer and asked about its id.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# How long a poll waits for other waits to join it before it asks.
GATHER = 0.05
FIRST_DELAY = 0.1
BACKOFF = 1.5
# A thing ready is seen at most this long after (plus a poll's own time): each
# step of a chain of waits (a server ACTIVE, then its volume attached) is late by
# up to that much.  Heat looks at each resource every second; a shared poll asks
# about all of them for the cost of one look, and one poll of a collection at a
# time is ever under way, so a slow cloud slows the polls down by itself.  At 1 s,
# the 20-server benchmark's attachments were sent a median 2.05 s after their
# server and volume were ready (a poll on a busy Nova takes 0.5-1.7 s itself), and
# a create or delete is a chain of three or four such waits; at 0.25 s then 0.5 s,
# a one-server create saw its server ACTIVE up to 0.7 s late (bench_small.py),
# where a client polling every 0.1 s sees it within 0.2 s.
MAX_DELAY = 0.3
# Ids per list call: query strings stay well under what proxies accept.
IDS_PER_CALL = 40
# How often a waiter waiting for a poll checks that its run was not cancelled.
CANCEL_CHECK = 0.5
# The HTTP statuses of a poll that failed for now (Heat's ``fetch_server`` logs
# OverLimit, 500 and 503 and checks again): the waits go on, the poll is made again.
TRANSIENT = (413, 500, 502, 503, 504)

# Lists the items of ``ids`` (each item a mapping with an ``id``); items that do
# not exist are simply not in the answer.
Lister = Callable[[Sequence[str]], list[Mapping[str, Any]]]
Item = Mapping[str, Any] | None


class Poller:
    """The shared polls of one kind of thing (one collection of one cloud)."""

    def __init__(self, lister: Lister, first_delay: float = FIRST_DELAY, max_delay: float = MAX_DELAY,
                 ids_per_call: int | None = IDS_PER_CALL) -> None:
        """``ids_per_call``: None for a lister that names no ids in its call (it lists
        the whole collection and picks the ids out): one call asks about them all."""
        self._lister = lister
        self._ids_per_call = ids_per_call
        self._first_delay, self._max_delay = first_delay, max_delay
        self._changed = threading.Condition()
        self._waiting: Counter[str] = Counter()
        # Polls are numbered when they take their ids: a poll numbered above what a
        # waiter has seen began after it, and asked about every id then waited for.
        self._started = 0
        self._finished = 0  # the number of the last poll that finished
        self._polling = False
        self._answers: dict[str, Mapping[str, Any]] = {}
        self.polls = 0  # list calls made, for the figures

    def wait(self, ident: str, done: Callable[[Item], bool], sleep: Callable[[float], None]) -> Item:
        """Poll until ``done(item)`` (``item`` is None once the thing is gone);
        returns that item.  ``sleep`` is the run's: ``sleep(0)`` raises when the run
        is cancelled, and is called while the wait waits."""
        delay = self._first_delay
        with self._changed:
            self._waiting[ident] += 1
            seen = self._started
        try:
            due = time.monotonic()  # the first look is at once
            while True:
                item, seen = self._answer_after(ident, seen, due, sleep)
                if done(item):
                    return item
                due = time.monotonic() + delay
                delay = min(delay * BACKOFF, self._max_delay)
        finally:
            with self._changed:
                self._waiting[ident] -= 1
                if not self._waiting[ident]:
                    del self._waiting[ident]

    def _answer_after(self, ident: str, seen: int, due: float, sleep: Callable[[float], None]) -> tuple[Item, int]:
        """The item in the first poll numbered above ``seen`` to end, and its number:
        any waiter's poll that ends first; from ``due`` on, when none is under way,
        one this waiter makes."""
        while True:
            with self._changed:
                if self._finished > seen:
                    return self._answers.get(ident), self._finished
                now = time.monotonic()
                if now >= due and not self._polling:
                    answered = self._poll(ident)
                    if answered is not None:
                        return answered
                    due = time.monotonic() + self._max_delay
                    continue
                self._changed.wait(min(due - now, CANCEL_CHECK) if now < due else CANCEL_CHECK)
            sleep(0)

    def _poll(self, ident: str) -> tuple[Item, int] | None:
        """Make the poll for every id waited for (called with the lock held; the
        lock is released while the poll gathers its waiters and the cloud answers).
        The poll starts when it takes the ids: waits that begin while it gathers
        (the other resources of a wave, acting at the same moment) are in it.
        None when the cloud failed it for now (``TRANSIENT``): no answer, not even
        "gone", and the waits wait for the next poll."""
        self._polling = True
        self._changed.release()
        try:
            time.sleep(GATHER)
            with self._changed:
                self._started += 1
                number, ids = self._started, sorted(self._waiting)
            answers: dict[str, Mapping[str, Any]] | None = self._list(ids)
        finally:
            self._changed.acquire()
            self._polling = False
            self._changed.notify_all()
        if answers is None:
            return None
        self._answers, self._finished = answers, number
        return answers.get(ident), number

    def _list(self, ids: Sequence[str]) -> dict[str, Mapping[str, Any]] | None:
        answers: dict[str, Mapping[str, Any]] = {}
        try:
            step = self._ids_per_call or max(1, len(ids))
            for start in range(0, len(ids), step):
                self.polls += 1
                answers.update((str(item["id"]), item) for item in self._lister(ids[start:start + step]))
        except Exception as failure:  # noqa: BLE001 - the session's CloudFailure (imported by it: no import here)
            if getattr(failure, "status", None) in TRANSIENT:
                return None
            raise
        return answers
