# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The progress lines a run prints as it goes (ansible-playbook's and AWX's output):
secrets masked, and control characters written as escapes, so that a resource's
name or a cloud's answer holding an ANSI escape cannot drive the terminal or AWX's
page (issue 40, item 7)."""

from __future__ import annotations

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters import action
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.executor import Event
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import SecretValues
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.base import EventRecord


def test_a_progress_line_escapes_control_characters_and_masks_secrets(
        monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr(action._display, "display", shown.append)  # pylint: disable=protected-access
    secrets = SecretValues()
    secrets.add("Progress-Pw-9")
    record = EventRecord(1, "s", "\x1b[31mred", "CREATE", "FAILED",
                         "Conflict: Progress-Pw-9 taken\n\x1b[2Jcleared", "", "2026-11-28T00:00:00Z")
    action.progress_printer("app", secrets)(Event(record, ("group\x07",)))
    assert shown == ["[app] group\\x07/\\x1b[31mred: CREATE_FAILED Conflict: ****** taken\\n\\x1b[2Jcleared"]
