# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a lease's holder still lives, as a process that may not see it decides.

With /proc mounted ``hidepid=2`` another user's processes are missing from /proc
(ENOENT), and ``kill(pid, 0)`` answers EPERM; with ``hidepid=1`` their files
cannot be read (EACCES).  Such a holder is "cannot tell", judged by its lease's
expiry, never "gone" (issue 28, item 3).  The same with real users and a real
hidepid mount: tests/integration/test_lease_trust.py."""

from __future__ import annotations

import builtins
import errno
import os

import pytest
from pg_backends import pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackLocked
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store, processes
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.leases import holder_gone
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.processes import is_process, process_start


@pytest.fixture
def hidden(monkeypatch):
    """Make the pids put in the returned set look as another user's processes under
    hidepid: absent from /proc (or unreadable, for hidepid=1), kill(pid, 0) EPERM."""
    pids: dict[int, int] = {}  # pid -> errno of opening its /proc files
    real_open, real_kill = builtins.open, os.kill

    def fake_open(path, *args, **kwargs):
        for pid, number in pids.items():
            if str(path).startswith(f"/proc/{pid}/"):
                raise OSError(number, os.strerror(number), str(path))
        return real_open(path, *args, **kwargs)

    def fake_kill(pid, number):
        if pid in pids:
            raise PermissionError(errno.EPERM, "Operation not permitted")
        return real_kill(pid, number)

    monkeypatch.setattr(processes, "open", fake_open, raising=False)
    monkeypatch.setattr(processes.os, "kill", fake_kill)
    return pids


def test_a_process_hidden_from_this_user_is_cannot_tell_not_gone(hidden):
    me, start = os.getpid(), process_start(os.getpid())
    assert is_process(me, start) is True
    hidden[me] = errno.ENOENT  # hidepid=2: not in /proc, and EPERM from kill(pid, 0)
    assert is_process(me, start) is None
    hidden[me] = errno.EACCES  # hidepid=1: there, but not to be read
    assert is_process(me, start) is None


def test_a_process_that_is_gone_is_gone():
    free = max(int(entry) for entry in os.listdir("/proc") if entry.isdigit()) + 100000
    assert is_process(free, "1") is False  # ESRCH from kill(pid, 0)
    assert is_process(os.getpid(), "not its start") is False  # its pid is another process's
    assert is_process(0, "") is False and is_process(-1, "") is False


def test_a_live_lease_of_a_hidden_holder_is_never_taken_over(store_url, hidden):
    """The attack of issue 28, item 3, with the liveness decision as hidepid makes it:
    another user's live job holds the lease; this one is refused, not "its process is
    gone"; once the lease has run out it is taken over, and the hidden holder is not
    signalled."""
    holder, taker = open_store(f"{store_url}?lock_lease=30"), open_store(store_url)
    try:
        holder.acquire_lock("web", "the other user's job")
        hidden[os.getpid()] = errno.ENOENT  # the holder's process, as the taker sees it
        lease = taker.lock_record("web")
        assert lease.held and not holder_gone(lease)
        with pytest.raises(StackLocked, match=r"^Stack \"web\" is locked by the other user's job "):
            taker.acquire_lock("web", "this job")
        taker._change("UPDATE leases SET expires = expires - 3600 WHERE stack_name = 'web'")  # pylint: disable=protected-access
        assert taker.acquire_lock("web", "this job") == 2
        note = taker.lock_record("web").note
        assert note.endswith(f"its lease ran out at {note.split('its lease ran out at ')[1][:20]}; not fenced: "
                             f"its process {os.getpid()} is hidden from this run (another user's, with /proc "
                             "mounted hidepid): left alone"), note
    finally:
        hidden.clear()
        holder.close()
        taker.close()
