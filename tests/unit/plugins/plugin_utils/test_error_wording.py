# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Messages Heat words one way are worded once, in errors.py."""

from __future__ import annotations

import pytest
from pg_backends import backend_store, pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackLocked, StackNotFound

MISSING = "The Stack (nowhere) could not be found."


def test_a_missing_stack_is_worded_as_heat_does():
    assert str(StackNotFound.named("nowhere")) == MISSING


def test_a_held_lock_names_its_holder():
    refusal = StackLocked.held_by("web", "job 1", 42, "ctl", "2026-11-24T00:00:00Z")
    assert str(refusal) == 'Stack "web" is locked by job 1 (pid 42 on ctl, since 2026-11-24T00:00:00Z)'


def test_every_backend_refuses_a_missing_stack_in_heats_words(backend_store):
    with pytest.raises(StackNotFound) as caught:
        backend_store.get_stack("nowhere")
    assert str(caught.value) == MISSING
