# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Copying rows between stores (store_copy.py): both directions between SQLite and
PostgreSQL, event ids that clash, a copy that does not verify, stores that differ."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
# PostgreSQL on a throwaway server (not a conftest.py: tests/integration has the
# project's conftest module).
from pg_backends import pg_server, pg_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StoreError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.copy import (
    TABLES,
    CopyRefused,
    CopyRequest,
    copy_stacks,
    table_digest,
)

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string}
    resources:
      r: {type: OS::Heat::TestResource, properties: {value: {get_param: value}}}
    outputs:
      out: {value: {get_attr: [r, output]}}
    """


@pytest.fixture
def template(tmp_path: Path) -> str:
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(TEMPLATE))
    return str(path)


def _apply(store, template: str, name: str, value: str) -> None:
    result = apply_stack(store, ApplyRequest(name=name, template=template, parameters={"value": value}), "t")
    assert not result.failed


def _digests(store, ids: list[str]) -> dict[str, dict]:
    return {t: table_digest(t, store.stored_rows(t, column, ids)) for t, (_o, column) in TABLES.items()}


def _ids(store) -> list[str]:
    return [row["id"] for row in store.stored_rows("stacks")]


@pytest.mark.parametrize("direction", ["sqlite-to-postgresql", "postgresql-to-sqlite"])
def test_rows_cross_backends_unchanged_and_clashing_event_ids_are_renumbered(
        direction, tmp_path, pg_url, template):
    sqlite_url = f"sqlite:///{tmp_path}/s.db"
    source_url, target_url = (sqlite_url, pg_url) if direction.startswith("sqlite") else (pg_url, sqlite_url)
    source, target = open_store(source_url), open_store(target_url)
    for value in ("a", "b"):
        _apply(source, template, "web", value)
    _apply(target, template, "mine", "x")  # the target's own events use ids 1, 2, ...
    theirs = _ids(source)

    result = copy_stacks(source, target, CopyRequest(), "copier")

    assert [s["action"] for s in result.stacks] == ["copied"]
    assert _digests(target, theirs) == _digests(source, theirs) == result.tables
    copied = target.events(target.find_stack("web").id)
    original = source.events(source.find_stack("web").id)
    assert [(e.resource_name, e.status, e.time) for e in copied] == [
        (e.resource_name, e.status, e.time) for e in original]
    mine = target.events(target.find_stack("mine").id)
    assert min(e.id for e in copied) > max(e.id for e in mine)  # renumbered after the target's
    web = target.find_stack("web")
    assert web.outputs == {"out": "b"} and web.revision == 2
    assert target.resources(web.id) == source.resources(source.find_stack("web").id)
    assert target.revisions(web.id) == source.revisions(web.id)
    _apply(target, template, "web", "c")  # the copy goes on where the source stopped
    assert target.find_stack("web").revision == 3
    source.close()
    target.close()


class _DropsAnEvent:
    """A target that loses a row on the way: the verification must catch it."""

    def __init__(self, store) -> None:
        self._store = store

    def __getattr__(self, name):
        return getattr(self._store, name)

    def insert_stored_rows(self, table, rows):
        self._store.insert_stored_rows(table, rows[:-1] if table == "events" else rows)


def test_a_copy_that_does_not_verify_writes_nothing(tmp_path, template):
    source = open_store(f"sqlite:///{tmp_path}/a.db")
    target = open_store(f"sqlite:///{tmp_path}/b.db")
    _apply(source, template, "web", "a")
    with pytest.raises(StoreError, match="the copy of table events does not match the source"):
        copy_stacks(source, _DropsAnEvent(target), CopyRequest(), "copier")
    assert target.stored_rows("stacks") == [] and target.stored_rows("events") == []


def test_stores_that_disagree_are_refused(tmp_path, template):
    source = open_store(f"sqlite:///{tmp_path}/a.db")
    target = open_store(f"sqlite:///{tmp_path}/b.db")
    _apply(source, template, "web", "a")
    # What a store keeps about itself (a key check, say) must agree.
    source.insert_stored_rows("meta", [{"key": "key_check", "value": "one"}])
    target.insert_stored_rows("meta", [{"key": "key_check", "value": "two"}])
    with pytest.raises(CopyRefused, match="the stores differ in 'key_check'"):
        copy_stacks(source, target, CopyRequest(), "copier")
    target.delete_stored_rows("meta", "key", ["key_check"])
    # A table this version does not know of is refused rather than left behind.
    source._write("CREATE TABLE secrets (id TEXT)")  # pylint: disable=protected-access
    with pytest.raises(CopyRefused, match="tables this collection does not copy: secrets"):
        copy_stacks(source, target, CopyRequest(), "copier")
    assert target.stored_rows("stacks") == []


def test_check_mode_and_names_choose_what_is_reported(tmp_path, template):
    source = open_store(f"sqlite:///{tmp_path}/a.db")
    for name in ("web", "db"):
        _apply(source, template, name, "a")
    preview = copy_stacks(source, None, CopyRequest(stacks=["db"], check_mode=True), "copier")
    assert preview.changed and [(s["name"], s["action"]) for s in preview.stacks] == [("db", "would copy")]
    assert preview.tables["stacks"]["rows"] == 1
    with pytest.raises(CopyRefused, match="the source store has no stack named nope"):
        copy_stacks(source, None, CopyRequest(stacks=["db", "nope"], check_mode=True), "copier")
    empty = open_store(f"sqlite:///{tmp_path}/empty.db")
    nothing = copy_stacks(empty, source, CopyRequest(), "copier")
    assert not nothing.changed and nothing.stacks == []


def test_what_the_source_keeps_about_itself_comes_along(tmp_path, template):
    source = open_store(f"sqlite:///{tmp_path}/a.db")
    target = open_store(f"sqlite:///{tmp_path}/b.db")
    _apply(source, template, "web", "a")
    source.insert_stored_rows("meta", [{"key": "key_check", "value": "one"}])
    before = {r["key"]: r["value"] for r in target.stored_rows("meta")}
    copy_stacks(source, target, CopyRequest(), "copier")
    after = {r["key"]: r["value"] for r in target.stored_rows("meta")}
    # The target's own id (made when the copy took its locks: lease proofs are bound to it) is not the source's.
    assert after.pop("store_id") != {r["key"]: r["value"] for r in source.stored_rows("meta")}["store_id"]
    assert after == {**before, "key_check": "one"}
