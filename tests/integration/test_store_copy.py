# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hotplay.stacks.store_copy with real ansible-playbook: SQLite to PostgreSQL and
SQLite to SQLite, the whole history, verified; nothing overwritten unless asked."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import psycopg

from conftest import REPO, write_template

sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "plugin_utils"))
from pg_backends import pg_server, pg_url  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string}
      generation: {type: string, default: one}
    resources:
      app:
        type: OS::Heat::TestResource
        properties: {value: {get_param: value}}
      volume:
        type: OS::Heat::TestResource
        properties: {value: kept, update_replace_value: {get_param: generation}}
      group:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          resource_def: {type: OS::Heat::TestResource, properties: {value: member}}
    outputs:
      app: {value: {get_attr: [app, output]}}
    """

TABLES = ("stacks", "revisions", "resources", "events", "hooks")
KEYS = {"stacks": "id", "revisions": "stack_id, revision", "resources": "stack_id, name, retired_in",
        "events": "id", "hooks": "stack_id, resource_name, hook, revision"}


def _history(run_tasks, template: Path) -> None:
    """A source store with every kind of row: revisions, a retired (replaced)
    resource kept for rollback, nested stacks, a paused stack's pending hook, a
    deleted stack."""
    apply = {"name": "web", "template": str(template)}
    tasks = [
        {"hotplay.stacks.stack": {**apply, "parameters": {"value": "v1"}}, "register": "first"},
        {"hotplay.stacks.stack": {**apply, "parameters": {"value": "v2", "generation": "two"},
                                  "keep_replaced": 86400}, "register": "second"},
        {"hotplay.stacks.stack": {"name": "paused", "template": str(template), "parameters": {"value": "p"},
                                  "breakpoints": [{"resource": "app", "hook": ["pre-create"]}]},
         "register": "paused"},
        {"hotplay.stacks.stack": {"name": "gone", "template": str(template), "parameters": {"value": "g"}}},
        {"hotplay.stacks.stack": {"name": "gone", "state": "absent"}, "register": "gone"},
    ]
    made = run_tasks(tasks, name="history")
    assert made.rc == 0, made.stdout
    assert made.results["second"]["revision"] == 2 and not made.results["second"]["failed"]
    assert made.results["paused"]["hooks_pending"] == [{"resource": "app", "hook": "pre-create"}]
    assert made.results["gone"]["stack_status"] == "DELETE_COMPLETE"


def _sqlite_rows(path: str, table: str, json_columns: set[str]) -> list[dict[str, Any]]:
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        rows = [dict(r) for r in db.execute(f"SELECT * FROM {table} ORDER BY {KEYS[table]}")]
    return [{k: json.loads(v) if k in json_columns else v for k, v in row.items()} for row in rows]


def _pg_rows(url: str, table: str) -> list[dict[str, Any]]:
    with psycopg.connect(url) as connection:
        cursor = connection.execute(f"SELECT * FROM {table} ORDER BY {KEYS[table]}")
        names = [c.name for c in cursor.description]
        return [{k: int(v) if isinstance(v, bool) else v for k, v in zip(names, row)}
                for row in cursor.fetchall()]


def _pg_json_columns(url: str) -> dict[str, set[str]]:
    with psycopg.connect(url) as connection:
        rows = connection.execute("SELECT table_name, column_name FROM information_schema.columns"
                                  " WHERE table_schema = current_schema() AND data_type = 'json'").fetchall()
    columns: dict[str, set[str]] = {t: set() for t in TABLES}
    for table, column in rows:
        columns.setdefault(table, set()).add(column)
    return columns


def _copy(run_tasks, name: str, check: bool = False, **options) -> dict[str, Any]:
    task = {"hotplay.stacks.store_copy": options, "register": "copied"}
    if check:
        task["check_mode"] = True
    done = run_tasks([task], name=name)
    assert done.rc == 0, done.stdout
    return done.results["copied"]


def test_sqlite_to_postgresql_keeps_the_whole_history(run_tasks, store_url, tmp_path, pg_url):
    template = write_template(tmp_path, "site.yaml", TEMPLATE)
    _history(run_tasks, template)
    source_path = store_url[len("sqlite:///"):]

    preview = _copy(run_tasks, "preview", check=True, source=store_url, target=pg_url)
    assert not preview["failed"] and preview["changed"]
    assert [(s["name"], s["deleted"], s["action"]) for s in preview["stacks"]] == [
        ("gone", True, "would copy"), ("paused", False, "would copy"), ("web", False, "would copy")]
    assert _pg_rows(pg_url, "stacks") == []  # a preview writes nothing

    copied = _copy(run_tasks, "copy", source=store_url, target=pg_url)
    assert not copied["failed"] and copied["changed"], copied["msg"]
    assert copied["msg"].startswith("copied 3 stacks")
    assert copied["tables"] == preview["tables"]
    # Checked here without the module's digests: every row, JSON compared as values.
    json_columns = _pg_json_columns(pg_url)
    for table in TABLES:
        source = _sqlite_rows(source_path, table, json_columns[table])
        assert _pg_rows(pg_url, table) == source, table
        assert copied["tables"][table]["rows"] == len(source)
    assert copied["tables"]["resources"]["rows"] > 0 and copied["tables"]["hooks"]["rows"] > 0
    assert [row["retired_in"] for row in _pg_rows(pg_url, "resources") if row["retired_in"]] == [2]

    # The copy works as the original did: the paused stack's hook is pending there,
    # and a rollback swaps the kept (replaced) resource back in.
    target = [
        {"hotplay.stacks.stack_hook": {"name": "paused", "store": pg_url}, "register": "hooks"},
        {"hotplay.stacks.stack_rollback": {"name": "web", "store": pg_url}, "register": "rolled"},
        {"hotplay.stacks.stack_info": {"store": pg_url}, "register": "listed"},
    ]
    used = run_tasks(target, name="use-target")
    assert used.results["hooks"]["hooks_pending"] == [{"resource": "app", "hook": "pre-create"}]
    rolled = used.results["rolled"]
    assert not rolled["failed"], rolled["msg"]
    assert rolled["rollback"]["target_revision"] == 1 and rolled["rollback"]["restored"] == ["volume"]
    assert rolled["revision"] == 3 and rolled["outputs"] == {"app": "v1"}
    assert [s["name"] for s in used.results["listed"]["stacks"]] == ["paused", "web"]


def test_a_second_copy_is_refused_unless_asked_to_overwrite(run_tasks, store_url, tmp_path):
    template = write_template(tmp_path, "site.yaml", TEMPLATE)
    _history(run_tasks, template)
    target = f"sqlite:///{tmp_path / 'other' / 'copy.db'}"

    preview = _copy(run_tasks, "preview", check=True, source=store_url, target=target, stacks=["web"])
    assert preview["changed"] and [s["name"] for s in preview["stacks"]] == ["web"]
    assert not (tmp_path / "other" / "copy.db").exists()  # check mode creates no store

    first = _copy(run_tasks, "first", source=store_url, target=target, stacks=["web"])
    assert [(s["name"], s["action"], s["revisions"]) for s in first["stacks"]] == [("web", "copied", 2)]
    counts = {t: first["tables"][t]["rows"] for t in TABLES}
    assert counts["stacks"] == 2  # web and the nested stack of its group

    again = _copy(run_tasks, "again", source=store_url, target=target)
    assert again["failed"] and not again["changed"]
    assert again["msg"] == (
        "the target store has the stacks web already: nothing was copied; set overwrite: true "
        "to replace them (with their history in the target)")
    target_path = str(tmp_path / "other" / "copy.db")
    assert [len(_sqlite_rows(target_path, t, set())) for t in TABLES] == [counts[t] for t in TABLES]

    # The target's own update of web is replaced by the source's history.
    changed = run_tasks([{"hotplay.stacks.stack": {"name": "web", "template": str(template), "store": target,
                                                   "parameters": {"value": "v9"}}, "register": "updated"}],
                        name="update-target")
    assert changed.results["updated"]["revision"] == 3
    replaced = _copy(run_tasks, "replace", source=store_url, target=target, overwrite=True)
    assert not replaced["failed"], replaced["msg"]
    assert {s["name"]: s["action"] for s in replaced["stacks"]} == {
        "gone": "copied", "paused": "copied", "web": "replaced"}
    for table in TABLES:  # SQLite to SQLite: every row the same, JSON as its text
        assert _sqlite_rows(target_path, table, set()) == _sqlite_rows(
            store_url[len("sqlite:///"):], table, set()), table


def test_bad_input_is_one_clear_error(run_tasks, store_url, tmp_path):
    missing = f"sqlite:///{tmp_path / 'nowhere.db'}"
    refused = _copy(run_tasks, "missing", source=missing, target=store_url)
    assert refused["failed"] and refused["msg"] == f"the source store {missing} does not exist"
    assert not (tmp_path / "nowhere.db").exists()
    same = run_tasks([{"hotplay.stacks.stack_info": {}},  # the store exists from here on
                      {"hotplay.stacks.store_copy": {"source": store_url, "target": store_url},
                       "register": "copied"}], name="same").results["copied"]
    assert same["failed"] and "the source and the target are the same store" in same["msg"]
    no_target = run_tasks([{"hotplay.stacks.store_copy": {"source": store_url}, "register": "copied"}],
                          name="no-target", env={"HOTPLAY_STORE": ""})
    assert no_target.results["copied"]["msg"] == (
        "store_copy needs a target store: the target option, or HOTPLAY_STORE")
