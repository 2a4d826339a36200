# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stack names are Heat's (issue 28, item 8): a new stack's name must match Heat's
rule (heat/engine/stack.py), refused with Heat's message before anything is written;
a stack an older version recorded under another name stays readable, updatable and
deletable; messages print such names with their control characters escaped."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    StackNotFound,
    StackValidationFailed,
    invalid_stack_name,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
    describe_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

TEMPLATE = """\
    heat_template_version: 2018-08-31
    resources:
      v: {type: OS::Heat::Value, properties: {value: one}}
    """
HEAT_MESSAGE = ("must contain only alphanumeric or \"_-.\" characters, must start with alpha and "
                "must be 255 characters or less.")


@pytest.fixture
def store(tmp_path: Path):
    opened = SqliteStore(str(tmp_path / "store.db"))
    yield opened
    opened.close()


def template(folder: Path) -> str:
    path = folder / "main.yaml"
    path.write_text(textwrap.dedent(TEMPLATE))
    return str(path)


@pytest.mark.parametrize("name", ["web", "W", "web_1.prod-2", "a" * 255])
def test_names_heat_gives_are_valid(name: str) -> None:
    assert invalid_stack_name(name) is None


@pytest.mark.parametrize("name, shown", [
    ("../etc", "../etc"), ("web\n", "web\\n"), ("\x1b[31mred", "\\x1b[31mred"), ("1web", "1web"),
    ("_web", "_web"), ("web stack", "web stack"), ("a" * 256, "a" * 256), ("", ""),
])
def test_a_new_stack_with_another_name_is_refused_with_heats_message(store, tmp_path: Path,
                                                                     name: str, shown: str) -> None:
    for check_mode in (True, False):
        with pytest.raises(StackValidationFailed) as raised:
            apply_stack(store, ApplyRequest(name=name, template=template(tmp_path), check_mode=check_mode),
                        "test")
        assert str(raised.value) == f"Invalid stack name {shown} {HEAT_MESSAGE}"
    assert store.list_stacks() == []


def test_a_stack_recorded_under_such_a_name_stays_readable_updatable_deletable(store, tmp_path: Path) -> None:
    apply_stack(store, ApplyRequest(name="web", template=template(tmp_path)), "test")
    bad = "../web\x1b[31m"
    with sqlite3.connect(tmp_path / "store.db") as db:  # as an older version recorded it
        db.execute("UPDATE stacks SET name = ? WHERE name = 'web'", (bad,))
    assert describe_stack(store, bad, 0, True, "")["name"] == bad
    again = apply_stack(store, ApplyRequest(name=bad, template=template(tmp_path)), "test").as_dict()
    assert again["changed"] is False, again.get("msg")
    deleted = delete_stack(store, DeleteRequest(name=bad), "test").as_dict()
    assert deleted["changed"] is True and store.list_stacks() == []


def test_a_missing_stack_is_named_with_control_characters_escaped() -> None:
    assert str(StackNotFound.named("x\x1b[2J\ny")) == "The Stack (x\\x1b[2J\\ny) could not be found."
