# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The garbage collector is paused while a stack is prepared, and left as it was."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.loader import collector_paused
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


@pytest.fixture(autouse=True)
def _collector_enabled_after() -> Iterator[None]:
    yield
    gc.enable()


def test_paused_then_as_it_was() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()  # not enabled by a pause that did not disable it


def test_enabled_again_after_an_error() -> None:
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_preview_and_a_refused_template_leave_it_enabled(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::None}\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::None, bogus: 1}\n")
    store = SqliteStore(str(tmp_path / "store.db"))
    try:
        gc.enable()
        apply_stack(store, ApplyRequest(name="s", template=str(good), check_mode=True), "test")
        assert gc.isenabled()
        with pytest.raises(HotplayError, match='"bogus" is not a valid keyword inside a resource definition'):
            apply_stack(store, ApplyRequest(name="s", template=str(bad), check_mode=True), "test")
        assert gc.isenabled()
    finally:
        store.close()
