# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollback through real ansible-playbook runs, with real files as resources."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import yaml

from conftest import BIN, INSTALLED, run_playbook, store_rows, write_template
from processes import kill_tree

FILES = """\
    heat_template_version: 2018-08-31
    parameters:
      dir: {type: string}
      name: {type: string, default: first.conf}
      content: {type: string, default: v1}
      fail: {type: boolean, default: false}
      wait: {type: number, default: 0}
    resources:
      config:
        type: Hotplay::Local::File
        properties:
          directory: {get_param: dir}
          name: {get_param: name}
          content: {get_param: content}
      check:
        type: OS::Heat::TestResource
        properties:
          value: {get_attr: [config, path]}
          fail: {get_param: fail}
      slow:
        type: OS::Heat::TestResource
        properties:
          value: {get_param: content}
          wait_secs: {get_param: wait}
    outputs:
      path: {value: {get_attr: [config, path]}}
    """


def files_in(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())} if folder.exists() else {}


def apply(register: str, template: str, folder: Path, name: str = "files", **options) -> dict:
    parameters = {"dir": str(folder), **options.pop("parameters", {})}
    return {"hotplay.stacks.stack": {"name": name, "template": template, "parameters": parameters,
                                     **options}, "register": register}


def rollback(register: str, check: bool = False, name: str = "files", **options) -> dict:
    task = {"hotplay.stacks.stack_rollback": {"name": name, **options}, "register": register}
    if check:
        task["check_mode"] = True
    return task


def setup(tmp_path: Path) -> tuple[str, Path]:
    folder = tmp_path / "files"
    folder.mkdir()
    return str(write_template(tmp_path, "files.yaml", FILES)), folder


def test_automatic_rollback_of_failed_create_and_update(run_tasks, tmp_path):
    template, folder = setup(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    run = run_tasks([
        apply("created", template, folder),
        apply("update_failed", template, folder, rollback_on_failure=True,
              parameters={"name": "second.conf", "content": "v2", "fail": True}),
        apply("create_failed", template, other, name="doomed", rollback_on_failure=True,
              parameters={"fail": True}),
    ])
    created, update, create = (run.results[k] for k in ("created", "update_failed", "create_failed"))
    # The failed update: old physical ids back, new ones gone, the task failed naming it.
    assert update["failed"] and update["stack_status"] == "ROLLBACK_COMPLETE"
    assert "resources.check: Test Resource failed" in update["msg"]
    assert update["rollback"]["restored"] == ["config"]
    assert {r["name"]: r["physical_id"] for r in update["resources"]}["config"] == (
        created["outputs"]["path"])
    assert files_in(folder) == {"first.conf": "v1"}
    # The failed create: everything it made deleted.
    assert create["failed"] and create["stack_status"] == "ROLLBACK_COMPLETE"
    assert create["resources"] == [] and files_in(other) == {}


def test_stack_rollback_from_failed_and_successful_updates(run_tasks, tmp_path, store_url):
    template, folder = setup(tmp_path)
    first = run_tasks([
        apply("v1", template, folder),
        apply("failed", template, folder, parameters={"name": "second.conf", "fail": True}),
        rollback("preview", check=True),
        rollback("rolled"),
        apply("v2", template, folder, parameters={"content": "v2"}),
        apply("v3", template, folder, parameters={"content": "v3"}),
        rollback("two_back", revision=4),
        rollback("undo", check=False),
    ], name="first")
    r = first.results
    assert r["failed"]["stack_status"] == "UPDATE_FAILED"
    # The file is swapped back; the check that failed is replaced, as Heat replaces
    # a failed resource.
    assert sorted(r["preview"]["plan"]["replaced"]) == ["check", "config"]
    assert "swaps back" in r["preview"]["plan"]["reasons"]["config"]
    assert r["preview"]["plan"]["reasons"]["check"] == "the resource is UPDATE_FAILED"
    assert r["rolled"]["stack_status"] == "ROLLBACK_COMPLETE"
    assert r["rolled"]["rollback"]["restored"] == ["config"]
    assert r["two_back"]["rollback"]["target_revision"] == 4
    assert r["two_back"]["parameters"]["content"] == "v2"
    # Rolling back that rollback (revision 6) returns to revision 5 (v3).
    assert r["undo"]["rollback"]["target_revision"] == 5
    assert files_in(folder) == {"first.conf": "v3"}
    # Beyond max_age: the default target now is revision 6, superseded by revision 7;
    # back-date revision 7 as if that change were years old.
    _sql(store_url, "UPDATE revisions SET created = '2020-01-01T00:00:00Z' WHERE revision = 7")
    later = run_tasks([
        rollback("too_old"),
        rollback("forced", max_age=0),
    ], name="later")
    assert later.results["too_old"]["failed"] and "more than max_age" in later.results["too_old"]["msg"]
    assert later.results["forced"]["stack_status"] == "ROLLBACK_COMPLETE"
    assert files_in(folder) == {"first.conf": "v2"}


def test_retained_resource_deleted_meanwhile_and_failing_rollback_recovered(run_tasks, tmp_path):
    template, folder = setup(tmp_path)
    run_tasks([
        apply("v1", template, folder),
        apply("failed", template, folder, parameters={"name": "second.conf", "fail": True}),
    ], name="setup")
    (folder / "first.conf").unlink()  # someone removed the retained file by hand
    recreated = run_tasks([rollback("preview", check=True), rollback("rolled")], name="recreate")
    reasons = recreated.results["preview"]["plan"]["reasons"]
    assert "is gone or changed, so it is recreated" in reasons["config"]
    summary = recreated.results["rolled"]["rollback"]
    assert summary["restored"] == [] and "gone or changed" in summary["recreated"]["config"]
    assert files_in(folder) == {"first.conf": "v1"}
    # A rollback that fails (the directory is gone), then accepted as it is.
    run_tasks([apply("v2", template, folder, parameters={"content": "v2"})], name="v2")
    shutil.rmtree(folder)
    failing = run_tasks([rollback("failed"), rollback("again"),
                         rollback("skipped", skip=["config"])], name="failing")
    assert failing.results["failed"]["stack_status"] == "ROLLBACK_FAILED"
    assert failing.results["again"]["stack_status"] == "ROLLBACK_FAILED"
    skipped = failing.results["skipped"]
    assert skipped["stack_status"] == "ROLLBACK_COMPLETE"
    assert skipped["rollback"]["accepted_as_is"] == ["config"]


def _sql(store_url: str, statement: str) -> None:
    import sqlite3

    with sqlite3.connect(store_url[len("sqlite:///"):]) as db:
        db.execute(statement)


def test_rollback_from_a_run_killed_in_progress(run_tasks, tmp_path, store_url):
    template, folder = setup(tmp_path)
    run_tasks([apply("v1", template, folder)], name="v1")
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"hotplay.stacks.stack": {"name": "files", "template": template, "store": store_url,
                                  "parameters": {"dir": str(folder), "name": "second.conf",
                                                 "content": "v2", "wait": 60}}}]}]
    playbook = tmp_path / "killed.yml"
    playbook.write_text(yaml.safe_dump(play))
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
           "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python")}
    env.pop("PYTHONPATH", None)
    killed = subprocess.Popen([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                               str(playbook)], env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(store_url, "SELECT count(*) FROM resources WHERE name = 'slow'"
                             " AND action = 'UPDATE' AND status = 'IN_PROGRESS'")
        _wait_for(store_url, "SELECT count(*) FROM resources WHERE name = 'config'"
                             " AND physical_id LIKE '%second.conf' AND status = 'COMPLETE'")
    finally:
        kill_tree(killed.pid)  # the whole job: ansible's workers run in sessions of their own
        killed.wait()
    assert store_rows(store_url, "SELECT action, status FROM stacks WHERE parent_id IS NULL") == [
        ("UPDATE", "IN_PROGRESS")]
    assert files_in(folder) == {"first.conf": "v1", "second.conf": "v2"}
    run = run_tasks([rollback("rolled")], name="after-kill")
    rolled = run.results["rolled"]
    assert rolled["stack_status"] == "ROLLBACK_COMPLETE", rolled
    assert rolled["rollback"]["restored"] == ["config"]
    assert files_in(folder) == {"first.conf": "v1"}


def _wait_for(store_url: str, query: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if Path(store_url[len("sqlite:///"):]).exists() and store_rows(store_url, query)[0][0]:
            return
        time.sleep(0.1)
    raise AssertionError(f"the store never showed: {query}")


def test_shipped_rollback_playbook(run_tasks, tmp_path, store_url):
    template, folder = setup(tmp_path)
    run_tasks([apply("v1", template, folder),
               apply("v2", template, folder, parameters={"content": "v2"})], name="setup")
    env = {"HOTPLAY_STORE": store_url}
    playbook = "hotplay.stacks.rollback"
    preview = run_playbook_fqcn(playbook, tmp_path, {"stack": "files", "preview": True}, env)
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert files_in(folder) == {"first.conf": "v2"}
    done = run_playbook_fqcn(playbook, tmp_path, {"stack": "files", "target_revision": ""}, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ROLLBACK_COMPLETE" in done.stdout
    assert files_in(folder) == {"first.conf": "v1"}
    missing = run_playbook_fqcn(playbook, tmp_path, {}, env)
    assert missing.returncode != 0 and "stack" in missing.stdout


def run_playbook_fqcn(playbook: str, cwd: Path, extra: dict, env: dict) -> subprocess.CompletedProcess[str]:
    import json

    environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
                   "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), **env}
    environment.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", playbook,
         "-e", json.dumps(extra)],
        cwd=cwd, env=environment, capture_output=True, text=True, timeout=300, check=False)


__all__ = ["run_playbook"]
