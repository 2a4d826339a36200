# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the action plugins share: store opening, progress lines, lock holder
names and error results.  The only engine-side file that imports Ansible."""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ansible.utils.display import Display

from .errors import HotplayError
from .stack_run import Event
from .store import open_store
from .store.base import Store

_display = Display()


@contextmanager
def open_task_store(url: str | None) -> Iterator[Store]:
    store = open_store(url)
    try:
        yield store
    finally:
        store.close()


def lock_holder(task: Any) -> str:
    """Who holds a stack's lock, as people will read it in a refusal."""
    job = os.environ.get("JOB_ID") or os.environ.get("AWX_JOB_ID")
    who = f"{getpass.getuser()}@{socket.gethostname()}"
    where = f"AWX job {job}" if job else "ansible-playbook"
    return f"{where} ({who}, task '{task.get_name()}')"


def progress_printer(stack_name: str) -> Callable[[Event], None]:
    """One line per resource action as it happens (ansible-playbook and AWX output)."""

    def show(event: Event) -> None:
        record = event.record
        line = f"[{stack_name}] {event.resource_name}: {record.action}_{record.status}"
        if record.status == "FAILED" or record.reason not in ("state changed", ""):
            line += f" {record.reason}"
        _display.display(line)

    return show


def engine_failure(error: HotplayError) -> dict[str, Any]:
    """A task failure for a user's mistake or a refusal: one message, no traceback."""
    return {"failed": True, "changed": False, "msg": str(error)}
