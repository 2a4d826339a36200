# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A task whose ansible-playbook is gone stops its run and lets its worker end.

Ansible runs each task in a worker process of its own session, so a kill of
ansible-playbook's process group (or of ansible-playbook alone: an OOM kill, a lost
container) leaves the worker running.  Nobody reads what the worker sends back any
more: once the pipe to the dead controller is full, every progress line blocks the
thread that writes it, for good (seen: a worker still blocked an hour and a half
later, holding its stack's lock).

So while a task runs, a watcher looks at the worker's parent once a second.  When
it is gone, the watcher empties that pipe from then on (the worker holds its
reading end too, as every worker does), so nothing blocks, and cancels the run: it
stops as an interruption does, records what happened, and the worker ends.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

POLL_SECONDS = 1.0
GONE = "Stopped: the ansible-playbook process that ran this task is gone"


@contextmanager
def watching_controller(final_queue: Any, on_gone: Callable[[str], None]) -> Iterator[None]:
    """Call ``on_gone`` (once) if this process's parent ends while the block runs;
    from then on, drain ``final_queue`` (Ansible's queue to the controller)."""
    parent = os.getppid()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL_SECONDS):
            if os.getppid() != parent:
                _drain_in_background(final_queue)
                on_gone(GONE)
                return

    watcher = threading.Thread(target=watch, name="hotplay-controller-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()


def _drain_in_background(final_queue: Any) -> None:
    reader = getattr(final_queue, "_reader", None)
    if reader is None:
        return
    descriptor = reader.fileno()

    def drain() -> None:
        try:
            while os.read(descriptor, 1 << 16):
                pass
        except OSError:
            return

    threading.Thread(target=drain, name="hotplay-drain", daemon=True).start()
