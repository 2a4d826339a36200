# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stack settings (tags, deletion protection) kept by each backend, and a store of
schema version 5 (before them) upgraded with its stacks kept."""

from __future__ import annotations

import pytest

from pg_backends import backend_store, pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sql import SCHEMA_VERSION


def test_settings_round_trip(backend_store):
    stack = backend_store.create_stack("web")
    assert (stack.tags, stack.deletion_protection) == ((), False)
    backend_store.set_stack_settings(stack.id, ("env=prod", "team-a"), True)
    kept = backend_store.find_stack("web")
    assert kept.tags == ("env=prod", "team-a") and kept.deletion_protection is True
    assert backend_store.list_stacks()[0] == kept
    backend_store.set_stack_settings(stack.id, (), False)
    assert backend_store.get_stack(stack.id).tags == () and not backend_store.get_stack(stack.id).deletion_protection


def _as_schema_5(url: str) -> None:
    """The store as version 5 left it: no settings columns, marker 5."""
    store = open_store(url)
    try:
        with store.transaction():
            store._write("ALTER TABLE stacks DROP COLUMN tags", ())  # pylint: disable=protected-access
            store._write("ALTER TABLE stacks DROP COLUMN deletion_protection", ())  # pylint: disable=protected-access
            store._write("DROP TABLE signals", ())  # pylint: disable=protected-access
            store._write("UPDATE meta SET value = '5' WHERE key = 'schema_version'", ())  # pylint: disable=protected-access
    finally:
        store.close()


@pytest.mark.parametrize("store_url", ["sqlite", "postgresql"], indirect=True)
def test_a_schema_5_store_is_upgraded_with_its_stacks(store_url):
    first = open_store(store_url)
    made = first.create_stack("web")
    first.close()
    _as_schema_5(store_url)
    upgraded = open_store(store_url)
    try:
        assert upgraded.schema_version() == SCHEMA_VERSION
        stack = upgraded.get_stack(made.id)
        assert (stack.name, stack.tags, stack.deletion_protection) == ("web", (), False)
        upgraded.set_stack_settings(made.id, ("kept",), True)
        assert upgraded.find_stack("web").deletion_protection is True
    finally:
        upgraded.close()
