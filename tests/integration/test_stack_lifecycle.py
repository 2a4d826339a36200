# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Create, re-run, delete and fail stacks through real ansible-playbook runs."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import yaml

from conftest import BIN, EXAMPLES, HARNESS_ENV, INSTALLED, dump_task, store_rows, write_template

APP = str(EXAMPLES / "app_stack.yaml")
SECRET = "vault-given-Xq81z"


def apply(name: str, template: str, register: str, **extra) -> dict:
    return {"name": f"apply {register}", "hotplay.stacks.stack": {"name": name, "template": template, **extra},
            "register": register}


def test_create_rerun_and_delete_the_example_stack(run_tasks, store_url):
    run = run_tasks([
        apply("app", APP, "created", parameters={"worker_count": 2, "admin_password": SECRET},
              nested_depth=1),
        apply("app", APP, "again", parameters={"worker_count": 2, "admin_password": SECRET}),
        {"hotplay.stacks.stack_info": {"name": "app"}, "register": "info"},
        {"hotplay.stacks.stack": {"name": "app", "state": "absent"}, "register": "deleted"},
        {"hotplay.stacks.stack_info": {}, "register": "listing"},
    ], env={"HOTPLAY_STORE_KEY": "lifecycle-store-key"})  # a hidden value given: kept encrypted
    created, again, info, deleted = (run.results[k] for k in ("created", "again", "info", "deleted"))
    assert created["changed"] and created["stack_status"] == "CREATE_COMPLETE", created
    assert created["outputs"]["endpoint"] == "https://shop.example.com/db-shop"
    assert created["outputs"]["workers"] == ["worker-0", "worker-1"]
    assert created["outputs"]["scale"] == "small"
    assert "database=db-shop workers=worker-0,worker-1" in created["outputs"]["config"]
    names = {r["name"] for r in created["resources"]}
    assert {"secret", "database", "workers", "workers/0", "workers/1", "endpoint"} <= names
    assert next(r for r in created["resources"] if r["name"] == "workers/1")["parent"] == "workers"
    assert created["parameters"]["admin_password"] == "******"
    assert created["revision"] == 1
    # Heat's event shape: stack events named after the stack, resource events in between.
    assert created["events"][0]["resource_name"] == "app"
    assert created["events"][0]["reason"] == "Stack CREATE started"
    assert created["events"][-1]["reason"] == "Stack CREATE completed successfully"
    # The same task again changes nothing and writes nothing.
    assert again["changed"] is False and again["revision"] == 1 and again["events"] == []
    assert info["stack"]["status"] == "CREATE_COMPLETE" and len(info["stack"]["revisions"]) == 1
    assert deleted["changed"] and deleted["stack_status"] == "DELETE_COMPLETE"
    assert run.results["listing"]["stacks"] == []
    # One progress line per resource action, as it happens.
    assert "[app] database: CREATE_COMPLETE" in run.stdout
    # A hidden parameter's value reaches neither the output nor the store.
    assert SECRET not in run.stdout
    assert SECRET.encode() not in Path(store_url[len("sqlite:///"):]).read_bytes()


def test_failed_resource_fails_the_stack_with_heats_reason(run_tasks, tmp_path):
    template = write_template(tmp_path, "failing.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          ok:
            type: OS::Heat::TestResource
            properties:
              value: fine
          bad:
            type: OS::Heat::TestResource
            depends_on: ok
            properties:
              value: doomed
              fail: true
          after_bad:
            type: OS::Heat::TestResource
            depends_on: bad
        outputs:
          ok_value:
            value: {get_attr: [ok, output]}
        """)
    run = run_tasks([apply("failing", str(template), "failed")])
    failed = run.results["failed"]
    assert failed["failed"] is True
    assert failed["stack_status"] == "CREATE_FAILED"
    # What Heat 27 said for this template (../shared/peer/heat/examples/failing_no_rollback.json).
    assert failed["stack_status_reason"] == (
        "Resource CREATE failed: ValueError: resources.bad: Test Resource failed bad")
    statuses = {r["name"]: r["status"] for r in failed["resources"]}
    # The dependant of the failed resource never started: Heat lists it as INIT_COMPLETE.
    assert statuses == {"ok": "CREATE_COMPLETE", "bad": "CREATE_FAILED", "after_bad": "INIT_COMPLETE"}
    assert failed["outputs"] == {"ok_value": "fine"}


def test_validation_error_fails_before_any_stack_exists(run_tasks, tmp_path, store_url):
    template = write_template(tmp_path, "broken.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          web:
            type: OS::Heat::TestResource
            properties:
              value: {get_param: missing}
        """)
    run = run_tasks([apply("broken", str(template), "broken")])
    broken = run.results["broken"]
    assert broken["failed"] is True and "stack_status" not in broken
    assert "broken.yaml" in broken["msg"] and "missing" in broken["msg"]
    assert "Traceback" not in run.stdout
    assert store_rows(store_url, "SELECT count(*) FROM stacks") == [(0,)]
    assert store_rows(store_url, "SELECT count(*) FROM events") == [(0,)]


def test_unknown_resource_type_is_refused_as_heat_does(run_tasks, tmp_path):
    template = write_template(tmp_path, "unknown.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          web:
            type: OS::Nova::NoSuchThing
        """)
    run = run_tasks([apply("unknown", str(template), "unknown")])
    assert "The Resource Type (OS::Nova::NoSuchThing) could not be found." in run.results["unknown"]["msg"]


def test_retained_resource_survives_delete(run_tasks, tmp_path):
    template = write_template(tmp_path, "retain.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          keep:
            type: OS::Heat::TestResource
            deletion_policy: Retain
          drop:
            type: OS::Heat::TestResource
        """)
    run = run_tasks([
        apply("retain", str(template), "created"),
        {"hotplay.stacks.stack": {"name": "retain", "state": "absent"}, "register": "deleted"},
    ])
    events = [(e["resource_name"], e["action"], e["status"]) for e in run.results["deleted"]["events"]]
    assert ("keep", "DELETE", "COMPLETE") in events and ("drop", "DELETE", "COMPLETE") in events
    assert run.results["deleted"]["stack_status"] == "DELETE_COMPLETE"


def test_nested_provider_template_and_environment(run_tasks, tmp_path):
    write_template(tmp_path, "member.yaml", """\
        heat_template_version: 2016-10-14
        parameters:
          greeting: {type: string}
        resources:
          inner:
            type: OS::Heat::TestResource
            properties:
              value: {get_param: greeting}
        outputs:
          said:
            value: {get_attr: [inner, output]}
        """)
    env = write_template(tmp_path, "env.yaml", """\
        resource_registry:
          My::Member: member.yaml
        """)
    template = write_template(tmp_path, "top.yaml", """\
        heat_template_version: 2016-10-14
        resources:
          first:
            type: My::Member
            properties:
              greeting: hello
          second:
            type: My::Member
            properties:
              greeting: {get_attr: [first, said]}
        outputs:
          echoed:
            value: {get_attr: [second, said]}
        """)
    run = run_tasks([apply("nested", str(template), "nested", environment=[str(env)], nested_depth=1)])
    nested = run.results["nested"]
    assert nested["stack_status"] == "CREATE_COMPLETE", nested
    assert nested["outputs"] == {"echoed": "hello"}
    paths = {r["name"]: r.get("parent") for r in nested["resources"]}
    assert paths["first/inner"] == "first" and paths["second/inner"] == "second"


def test_a_truncated_or_foreign_store_file_is_refused_not_taken_for_a_new_store(
        run_tasks, tmp_path, store_url):
    template = write_template(tmp_path, "one.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          thing: {type: OS::Heat::None}
        """)
    path = Path(store_url[len("sqlite:///"):])
    foreign = tmp_path / "other.db"  # some other program's SQLite database
    first = run_tasks([apply("app", str(template), "created")], name="first")
    assert first.results["created"]["stack_status"] == "CREATE_COMPLETE"
    path.write_bytes(b"")  # truncated, as a full disk or a bad copy leaves it
    with sqlite3.connect(foreign) as other:
        other.execute("CREATE TABLE notes (text TEXT)")
    second = run_tasks([
        apply("app", str(template), "again"),
        {"hotplay.stacks.stack_info": {"name": "app"}, "register": "info"},
        {"hotplay.stacks.stack_info": {"name": "app", "store": f"sqlite:///{foreign}"},
         "register": "foreign"},
    ], name="second")
    for name in ("again", "info"):
        assert second.results[name]["failed"], second.results[name]
        assert second.results[name]["msg"].startswith(f"the store {path} is an empty file, not a store")
    assert second.results["foreign"]["failed"]
    assert f"{foreign} is an SQLite database but not a hotplay.stacks store" in second.results["foreign"]["msg"]
    assert path.stat().st_size == 0, "something was written to the truncated store"
    assert "Traceback" not in second.stdout + second.stderr


def test_a_damaged_store_fails_naming_the_store(run_tasks, tmp_path, store_url):
    template = write_template(tmp_path, "one.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          thing: {type: OS::Heat::None}
        """)
    first = run_tasks([apply("app", str(template), "created")], name="first")
    assert first.results["created"]["stack_status"] == "CREATE_COMPLETE"
    path = Path(store_url[len("sqlite:///"):])
    with sqlite3.connect(path) as db:  # every change in the main file, no WAL beside it
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'resources'").fetchone()[0]
    damaged = bytearray(path.read_bytes())
    start = (root - 1) * page  # the resources table's page: the store opens, reading it fails
    damaged[start:start + page] = b"\xff" * page
    path.write_bytes(bytes(damaged))
    second = run_tasks([{"hotplay.stacks.stack_info": {"name": "app"}, "register": "info"},
                        apply("app", str(template), "again")], name="second")
    for name in ("info", "again"):
        result = second.results[name]
        assert result["failed"], result
        assert str(path) in result["msg"] and "malformed" in result["msg"], result["msg"]
    assert "Traceback" not in second.stdout + second.stderr


def test_a_store_on_read_only_media_is_read_and_never_changed(run_tasks, tmp_path):
    media = tmp_path / "media"
    media.mkdir()
    store = f"sqlite:///{media / 'stacks.db'}"
    template = write_template(tmp_path, "one.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          thing: {type: OS::Heat::None}
        """)
    made = run_tasks([apply("app", str(template), "created", store=store)], name="made")
    assert made.results["created"]["stack_status"] == "CREATE_COMPLETE"
    before = (media / "stacks.db").read_bytes()
    two = write_template(tmp_path, "two.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          thing: {type: OS::Heat::None}
          other: {type: OS::Heat::None}
        """)
    dump = tmp_path / "read-only.json"
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"hotplay.stacks.stack_info": {"name": "app", "store": store}, "register": "info"},
        apply("app", str(two), "changed", store=store) | {"ignore_errors": True},
        dump_task(dump, "{'info': info, 'changed': changed}"),
    ]}]
    playbook = tmp_path / "read-only.yml"
    playbook.write_text(yaml.safe_dump(play))
    # The media mounted read-only in a mount namespace of this run's own.
    mount = f"mount --bind {media} {media} && mount -o remount,ro,bind {media} && exec \"$@\""
    unshare = ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
           "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), **HARNESS_ENV}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([*unshare, "sh", "-c", mount, "sh", str(BIN / "ansible-playbook"),
                           "-i", "localhost,", "-c", "local", str(playbook)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(dump.read_text())
    assert results["info"]["stack"]["status"] == "CREATE_COMPLETE", results["info"]
    assert results["changed"]["failed"]
    assert "is read-only (read-only media" in results["changed"]["msg"]
    assert (media / "stacks.db").read_bytes() == before


def test_a_value_from_the_playbook_is_named_by_its_python_type(run_tasks, tmp_path):
    # Differential (seed 81, case 1800, through ansible-playbook): Heat says
    # "-1 is type <class 'int'>"; ansible-core hands the parameter over as a tagged
    # int, and the task said "<class '...._AnsibleTaggedInt'>".
    template = write_template(tmp_path, "merge.yaml", """\
        heat_template_version: 2018-08-31
        parameters:
          p1: {type: number}
        resources:
          r0:
            type: OS::Heat::TestResource
            properties:
              value: {map_merge: [{k: 1}, {get_param: p1}]}
        """)
    run = run_tasks([apply("merge", str(template), "merged", parameters={"p1": -1}) | {"ignore_errors": True}])
    assert run.results["merged"]["msg"].endswith(
        "Incorrect arguments: Items to merge must be maps. -1 is type <class 'int'> instead of a dict")
