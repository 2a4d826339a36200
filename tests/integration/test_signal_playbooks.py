# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/signals.md's pattern with real ansible-playbook runs: one job applies a stack
whose wait condition waits, a second job's stack_signal releases it while the first
holds the stack; stack_signal's check mode and its refusals as a task sees them."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import yaml

from conftest import assert_worker_quiet, dump_task, playbook_command, playbook_environment, write_template

TEMPLATE = """\
    heat_template_version: 2018-08-31
    resources:
      db_ready_handle: {type: OS::Heat::WaitConditionHandle}
      db_ready:
        type: OS::Heat::WaitCondition
        properties: {handle: {get_resource: db_ready_handle}, timeout: 300}
      app_config: {type: OS::Heat::Value, depends_on: [db_ready], properties: {value: ready}}
    outputs:
      schema: {value: {get_attr: [db_ready, data]}}
"""


def _playbook(tmp_path: Path, name: str, tasks: list[dict], check: bool = False) -> Path:
    dump = tmp_path / f"{name}.json"
    registered = "{" + ", ".join(f"'{t['register']}': {t['register']}" for t in tasks) + "}"
    play = [{"hosts": "localhost", "gather_facts": False, "check_mode": check,
             "module_defaults": {"group/hotplay.stacks.stacks": {"store": f"sqlite:///{tmp_path / 's.db'}"}},
             "tasks": tasks + [dump_task(dump, registered)]}]
    path = tmp_path / f"{name}.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    return path


def _results(tmp_path: Path, name: str) -> dict:
    return json.loads((tmp_path / f"{name}.json").read_text())


def _signal_task(register: str, data: object = None, resource: str = "db_ready_handle") -> dict:
    return {"hotplay.stacks.stack_signal": {"name": "app", "resource": resource, "data": data},
            "register": register, "ignore_errors": True}


def _wait_until_waiting(store: Path, deadline: float) -> None:
    """Until the first job's wait condition is waiting (its row CREATE IN_PROGRESS)."""
    import sqlite3  # pylint: disable=import-outside-toplevel

    while time.monotonic() < deadline:
        if store.exists():
            with sqlite3.connect(store) as db:
                try:
                    rows = db.execute("SELECT action, status FROM resources WHERE name = 'db_ready'").fetchall()
                except sqlite3.OperationalError:
                    rows = []
            if rows == [("CREATE", "IN_PROGRESS")]:
                return
        time.sleep(0.2)
    raise AssertionError("the stack's wait condition never started waiting")


def test_a_second_job_releases_the_wait_condition_of_the_first(tmp_path: Path) -> None:
    template = write_template(tmp_path, "app.yaml", TEMPLATE)
    apply = _playbook(tmp_path, "infrastructure", [
        {"hotplay.stacks.stack": {"name": "app", "template": str(template)}, "register": "app"}])
    first = subprocess.Popen(playbook_command(apply), cwd=tmp_path, env=playbook_environment(),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_until_waiting(tmp_path / "s.db", time.monotonic() + 120)
        preview = _playbook(tmp_path, "preview", [_signal_task("checked", {"reason": "dry run"})], check=True)
        second = _playbook(tmp_path, "database", [
            _signal_task("wrong", {"status": "DONE"}),
            _signal_task("not_a_handle", resource="db_ready"),
            _signal_task("released", {"reason": "schema loaded", "data": "v42"}),
        ])
        for playbook in (preview, second):
            done = subprocess.run(playbook_command(playbook), cwd=tmp_path, env=playbook_environment(),
                                  capture_output=True, text=True, timeout=300, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            assert_worker_quiet(done.stdout)
        output = first.communicate(timeout=300)[0]
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 0, output
    assert_worker_quiet(output)

    checked = _results(tmp_path, "preview")["checked"]
    assert checked["changed"] and checked["reason"] == "Signal: status:SUCCESS reason:dry run"
    signals = _results(tmp_path, "database")
    assert signals["wrong"]["msg"] == "ValueError: resources.db_ready_handle: Metadata format invalid"
    assert signals["not_a_handle"]["msg"].startswith(
        "ResourceActionNotSupported: resources.db_ready: signal is not supported for resource.")
    assert signals["released"]["reason"] == "Signal: status:SUCCESS reason:schema loaded"

    app = _results(tmp_path, "infrastructure")["app"]
    assert app["stack_status"] == "CREATE_COMPLETE", app["stack_status_reason"]
    # Only the one signal sent for real counts: the preview and the refused one left nothing.
    assert json.loads(app["outputs"]["schema"]) == {"1": "v42"}
    assert {r["name"]: r["status"] for r in app["resources"]}["app_config"] == "CREATE_COMPLETE"


SCALING = """\
    heat_template_version: 2018-08-31
    resources:
      web:
        type: OS::Heat::AutoScalingGroup
        properties:
          min_size: 1
          max_size: 3
          resource: {type: OS::Heat::Value, properties: {value: web}}
      scale_out:
        type: OS::Heat::ScalingPolicy
        properties:
          auto_scaling_group_id: {get_resource: web}
          adjustment_type: change_in_capacity
          scaling_adjustment: 1
    outputs:
      scale_out_url: {value: {get_attr: [scale_out, signal_url]}}
      size: {value: {get_attr: [web, current_size]}}
"""


def test_a_task_scales_a_group_by_its_policy_in_check_mode_by_name_and_by_url(tmp_path: Path) -> None:
    template = write_template(tmp_path, "web.yaml", SCALING)
    out = {"hotplay.stacks.stack_signal": {"name": "web", "resource": "scale_out"}}
    play = _playbook(tmp_path, "scale", [
        {"hotplay.stacks.stack": {"name": "web", "template": str(template)}, "register": "made"},
        {**out, "check_mode": True, "register": "previewed"},
        {**out, "register": "by_name"},
        {"hotplay.stacks.stack_signal": {"url": "{{ made.outputs.scale_out_url }}"}, "register": "by_url"},
        # At max_size now: Heat's rules change nothing, and the task says why.
        {**out, "register": "at_most"},
        {"hotplay.stacks.stack_info": {"name": "web", "nested_depth": 1}, "register": "info"},
    ])
    done = subprocess.run(playbook_command(play), cwd=tmp_path, env=playbook_environment(),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_worker_quiet(done.stdout)
    results = _results(tmp_path, "scale")
    assert results["made"]["outputs"] == {"scale_out_url": "hotplay://stacks/web/resources/scale_out/signal",
                                          "size": 1}
    previewed = results["previewed"]
    assert previewed["changed"] and previewed["scaled"] == {"web": {"from": 1, "to": 2}}
    assert [p.split("/")[0] for p in previewed["plan"]["added"]] == ["web"]
    assert results["by_name"]["scaled"] == {"web": {"from": 1, "to": 2}}  # the preview wrote nothing
    assert results["by_url"]["outputs"]["size"] == 3 and results["by_url"]["stack"]["status"] == "CREATE_COMPLETE"  # as in Heat
    at_most = results["at_most"]
    assert at_most["changed"] is False and "stays at 3 members" in at_most["msg"]
    members = [r for r in results["info"]["stack"]["resources"] if r.get("parent") == "web"]
    assert len(members) == 3 and {r["status"] for r in members} == {"CREATE_COMPLETE"}


SLOW_MEMBERS = """\
    heat_template_version: 2018-08-31
    resources:
      slow:
        type: OS::Heat::AutoScalingGroup
        properties:
          min_size: 0
          max_size: 4
          resource: {type: OS::Heat::Delay, properties: {min_wait: 60, actions: [CREATE]}}
      grow:
        type: OS::Heat::ScalingPolicy
        properties:
          auto_scaling_group_id: {get_resource: slow}
          adjustment_type: exact_capacity
          scaling_adjustment: 2
    outputs:
      size: {value: {get_attr: [slow, current_size]}}
"""


def test_a_job_killed_while_it_scales_leaves_a_stack_the_next_job_rolls_back(tmp_path: Path) -> None:
    import os  # pylint: disable=import-outside-toplevel
    import signal  # pylint: disable=import-outside-toplevel
    import sqlite3  # pylint: disable=import-outside-toplevel

    template = write_template(tmp_path, "slow.yaml", SLOW_MEMBERS)
    made = _playbook(tmp_path, "made", [
        {"hotplay.stacks.stack": {"name": "slow", "template": str(template)}, "register": "made"}])
    assert subprocess.run(playbook_command(made), cwd=tmp_path, env=playbook_environment(),
                          capture_output=True, text=True, timeout=300, check=False).returncode == 0
    # The group's members wait 60 s once made: the scaling job is killed while they do.
    scale = _playbook(tmp_path, "scale", [
        {"hotplay.stacks.stack_signal": {"name": "slow", "resource": "grow"}, "register": "scaled"}])
    job = subprocess.Popen(playbook_command(scale), cwd=tmp_path, env=playbook_environment(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline, waiting = time.monotonic() + 120, 0
        while waiting < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            with sqlite3.connect(tmp_path / "s.db", timeout=30) as db:
                waiting = db.execute("SELECT count(*) FROM resources WHERE type = 'OS::Heat::Delay' "
                                     "AND status = 'IN_PROGRESS'").fetchone()[0]
        assert waiting == 2, "the two new members never started"
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    # The next job finds the scaling unfinished and rolls it back to the size before.
    after = _playbook(tmp_path, "after", [
        {"hotplay.stacks.stack_info": {"name": "slow", "nested_depth": 1}, "register": "left"},
        {"hotplay.stacks.stack_rollback": {"name": "slow", "lock_timeout": 60}, "register": "back"},
    ])
    done = subprocess.run(playbook_command(after), cwd=tmp_path, env=playbook_environment(),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_worker_quiet(done.stdout)
    results = _results(tmp_path, "after")
    assert results["left"]["stack"]["status"] in ("UPDATE_IN_PROGRESS", "UPDATE_FAILED")  # not finished
    back = results["back"]
    assert back["stack"]["status"] == "ROLLBACK_COMPLETE", back.get("msg")
    assert back["outputs"]["size"] == 0
    assert [r for r in back["resources"] if r.get("parent") == "slow"] == []
