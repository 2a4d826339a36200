# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hotplay::Ansible::Module with real ansible-playbook and real modules
(ansible.builtin.file, copy, lineinfile, template, shell) managing real files on
the play host: create, update in place, replacement, delete, rollback of a failed
update, the check-mode preview, drift after a manual change, mark unhealthy and
the replacement that follows, secrets, and 20 module resources side by side
without collisions or temporary files left behind.  Over real SSH:
test_module_resources_ssh.py."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import store_rows, write_template

FILES = """\
    heat_template_version: 2021-04-16
    parameters:
      root: {type: string}
      file_name: {type: string, default: app.conf}
      content: {type: string, default: v1}
      mode: {type: string, default: "0644"}
      port: {type: string, default: "80"}
      page_template: {type: string}
    resources:
      dir:
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.builtin.file
          args: {path: {get_param: root}, state: directory, mode: "0755"}
      conf:
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.builtin.copy
          args:
            dest: {list_join: ["/", [{get_attr: [dir, path]}, {get_param: file_name}]]}
            content: {get_param: content}
            mode: {get_param: mode}
          # copy has no state option: another module deletes what it wrote.
          delete_module: ansible.builtin.file
          delete_args:
            path: {list_join: ["/", [{get_attr: [dir, path]}, {get_param: file_name}]]}
            state: absent
      setting:
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.builtin.lineinfile
          args:
            path: {list_join: ["/", [{get_attr: [dir, path]}, settings.ini]]}
            regexp: "^port="
            line: {list_join: ["", ["port=", {get_param: port}]]}
            create: true
            mode: "0644"
      page:
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.builtin.template
          args:
            src: {get_param: page_template}
            dest: {list_join: ["/", [{get_attr: [dir, path]}, index.html]]}
            mode: "0644"
          delete_module: ansible.builtin.file
          delete_args: {path: {list_join: ["/", [{get_attr: [dir, path]}, index.html]]}, state: absent}
    outputs:
      checksum: {value: {get_attr: [conf, checksum]}}
      conf_id: {value: {get_resource: conf}}
      conf_mode: {value: {get_attr: [conf, mode]}}
      dir_mode: {value: {get_attr: [dir, mode]}}
    """


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def stack_task(template: Path, register: str, check_mode: bool = False, name: str = "files",
               **parameters: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "name": f"Apply {name}",
        "hotplay.stacks.stack": {"name": name, "template": str(template), "parameters": parameters},
        "register": register,
    }
    if check_mode:
        task["check_mode"] = True
    return task


def events(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["resource_name"], e["action"], e["status"]) for e in result["events"]]


def resource(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in result["resources"] if r["name"] == name)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Any]:
    page = tmp_path / "index.html.j2"
    page.write_text("hello from {{ inventory_hostname }}\n")
    return {"template": write_template(tmp_path, "files.yaml", FILES), "root": tmp_path / "root",
            "page_template": str(page)}


@pytest.mark.slow
def test_create_update_in_place_replace_and_delete_real_files(run_tasks, files):
    root: Path = files["root"]
    given = {"root": str(root), "page_template": files["page_template"]}
    created = run_tasks([stack_task(files["template"], "out", **given)], "create").results["out"]
    assert created["stack_status"] == "CREATE_COMPLETE", created.get("msg")
    assert (root / "app.conf").read_text() == "v1"
    assert (root / "settings.ini").read_text() == "port=80\n"
    assert (root / "index.html").read_text() == "hello from localhost\n"
    assert created["outputs"] == {"checksum": sha1("v1"), "conf_id": str(root / "app.conf"),
                                  "conf_mode": "0644", "dir_mode": "0755"}

    # content, mode and the line change in place: the module runs again, same physical id.
    updated = run_tasks([stack_task(files["template"], "out", content="v2", mode="0600", port=8080,
                                    **given)], "update").results["out"]
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated.get("msg")
    assert ("conf", "UPDATE", "COMPLETE") in events(updated)
    assert ("setting", "UPDATE", "COMPLETE") in events(updated)
    assert ("dir", "UPDATE", "IN_PROGRESS") not in events(updated)
    assert (root / "app.conf").read_text() == "v2"
    assert oct((root / "app.conf").stat().st_mode & 0o777) == "0o600"
    assert (root / "settings.ini").read_text() == "port=8080\n"  # the line replaced, not added
    assert updated["outputs"]["checksum"] == sha1("v2")

    # dest names the file: a new name replaces it, and the old file is deleted after.
    replaced = run_tasks([stack_task(files["template"], "out", file_name="other.conf", content="v2",
                                     mode="0600", port=8080, **given)], "replace").results["out"]
    assert replaced["stack_status"] == "UPDATE_COMPLETE", replaced.get("msg")
    assert events(replaced).index(("conf", "CREATE", "COMPLETE")) < \
        events(replaced).index(("conf", "DELETE", "COMPLETE"))
    assert sorted(p.name for p in root.iterdir()) == ["index.html", "other.conf", "settings.ini"]
    assert resource(replaced, "conf")["physical_id"] == str(root / "other.conf")

    deleted = run_tasks([{"name": "Delete", "hotplay.stacks.stack": {"name": "files", "state": "absent"},
                          "register": "out"}], "delete").results["out"]
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted.get("msg")
    assert not root.exists()  # the directory (state: absent) went last, after what was in it


def test_a_replacement_that_is_the_same_file_does_not_delete_it(run_tasks, tmp_path):
    target = tmp_path / "motd"
    template = write_template(tmp_path, "same.yaml", f"""\
        heat_template_version: 2021-04-16
        parameters:
          content: {{type: string}}
        resources:
          motd:
            type: Hotplay::Ansible::Module
            properties:
              module: ansible.builtin.copy
              args: {{dest: {target}, content: {{get_param: content}}}}
              update_in_place: []  # every change replaces
              delete_module: ansible.builtin.file
              delete_args: {{path: {target}, state: absent}}
        """)
    run = run_tasks([stack_task(template, "first", name="same", content="one"),
                     stack_task(template, "second", name="same", content="two")], "same")
    second = run.results["second"]
    assert ("motd", "CREATE", "COMPLETE") in events(second)
    assert ("motd", "DELETE", "COMPLETE") in events(second)  # the old record goes...
    assert target.read_text() == "two"  # ...but the file is the new one: not deleted


GATED = """\
    heat_template_version: 2021-04-16
    parameters:
      root: {type: string}
      content: {type: string}
      gate_path: {type: string}  # not "gate", a resource's name (Heat: Duplicate names)
    resources:
      conf:
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.builtin.copy
          args: {dest: {list_join: ["/", [{get_param: root}, app.conf]]}, content: {get_param: content}}
          delete_args: {}
      gate:
        # state: file only checks that the file exists: a missing one fails the module.
        type: Hotplay::Ansible::Module
        depends_on: conf
        properties:
          module: ansible.builtin.file
          args: {path: {get_param: gate_path}, state: file}
          delete_args: {}
    """


def test_rollback_of_a_failed_update_restores_the_previous_file_contents(run_tasks, tmp_path):
    root = tmp_path / "gated"
    root.mkdir()
    (root / "open").write_text("")
    template = write_template(tmp_path, "gated.yaml", GATED)
    good = {"root": str(root), "gate_path": str(root / "open")}
    run = run_tasks([
        stack_task(template, "created", name="gated", content="release 1", **good),
        stack_task(template, "failed", name="gated", content="release 2", root=str(root),
                   gate_path=str(root / "missing")),
    ], "gated")
    assert run.results["created"]["stack_status"] == "CREATE_COMPLETE"
    failed = run.results["failed"]
    assert failed["failed"] and failed["stack_status"] == "UPDATE_FAILED"
    assert resource(failed, "gate")["status_reason"] == (
        f"Error: resources.gate: ansible.builtin.file on localhost: file ({root}/missing) is absent, "
        "cannot continue")
    assert (root / "app.conf").read_text() == "release 2"  # conf was updated before gate failed

    rolled = run_tasks([{"name": "Roll back", "hotplay.stacks.stack_rollback": {"name": "gated"},
                         "register": "out"}], "rollback").results["out"]
    assert rolled["stack_status"] == "ROLLBACK_COMPLETE", rolled.get("msg")
    assert (root / "app.conf").read_text() == "release 1"
    assert rolled["rollback"]["restored"] == ["gate"]  # the old gate swapped back (still healthy)


def test_the_preview_asks_each_module_in_check_mode_and_changes_nothing(run_tasks, files):
    root: Path = files["root"]
    given = {"root": str(root), "page_template": files["page_template"]}
    run = run_tasks([stack_task(files["template"], "created", **given),
                     stack_task(files["template"], "preview", check_mode=True, content="v2",
                                port=8080, **given)], "preview")
    plan = run.results["preview"]["plan"]
    assert sorted(plan["updated"]) == ["conf", "setting"] and sorted(plan["unchanged"]) == ["dir", "page"]
    assert plan["checks"]["conf"]["changed"] is True
    assert plan["checks"]["conf"]["changed_keys"] == ["content"]
    assert plan["checks"]["conf"]["diff"][0]["before"] == "v1"
    assert plan["checks"]["setting"]["changed"] is True
    assert set(plan["checks"]) == {"conf", "setting"}  # unchanged resources are not asked
    assert (root / "app.conf").read_text() == "v1" and (root / "settings.ini").read_text() == "port=80\n"


def test_a_module_without_check_mode_is_previewed_as_unknown(run_tasks, tmp_path):
    template = write_template(tmp_path, "stamp.yaml", f"""\
        heat_template_version: 2021-04-16
        parameters:
          text: {{type: string}}
        resources:
          stamp:
            type: Hotplay::Ansible::Module
            properties:
              module: ansible.builtin.shell
              args: {{cmd: {{list_join: ["", ["echo ", {{get_param: text}}, " > {tmp_path}/stamp"]]}}}}
        """)
    run = run_tasks([stack_task(template, "created", name="stamp", text="one"),
                     stack_task(template, "preview", name="stamp", check_mode=True, text="two")], "stamp")
    check = run.results["preview"]["plan"]["checks"]["stamp"]
    assert check["changed"] is None and check["msg"]
    assert (tmp_path / "stamp").read_text() == "one\n"


@pytest.mark.slow
def test_drift_after_a_manual_change_then_mark_unhealthy_and_the_next_apply_replaces(
        run_tasks, files, store_url):
    root: Path = files["root"]
    given = {"root": str(root), "page_template": files["page_template"]}
    run_tasks([stack_task(files["template"], "created", **given)], "create")
    (root / "app.conf").write_text("edited by hand\n")
    (root / "settings.ini").chmod(0o600)
    rows_before = store_rows(store_url, "SELECT count(*) FROM events")

    info = run_tasks([{"name": "Drift", "hotplay.stacks.stack_info": {"name": "files", "drift": True,
                                                                      "events": False},
                       "register": "info"}], "drift").results["info"]
    assert info["drifted"] == ["conf", "setting"]
    assert info["drift"]["conf"]["drifted"] is True
    assert info["drift"]["conf"]["changed_keys"] == ["content"]
    assert info["drift"]["conf"]["diff"][0]["before"] == "edited by hand\n"
    assert info["drift"]["setting"]["changed_keys"] == ["mode"]
    assert info["drift"]["dir"] == {"drifted": False}
    assert info["drift"]["page"] == {"drifted": False}
    assert not info["changed"]
    assert store_rows(store_url, "SELECT count(*) FROM events") == rows_before  # nothing written
    assert (root / "app.conf").read_text() == "edited by hand\n"

    marked = run_tasks([{"name": "Mark", "hotplay.stacks.stack_resource": {
        "name": "files", "resource": "conf", "healthy": False, "reason": "edited by hand"},
        "register": "marked"}], "mark").results["marked"]
    assert marked["changed"] and marked["resource"]["status"] == "CHECK_FAILED"
    assert [(e["action"], e["status"], e["reason"]) for e in marked["events"]] == [
        ("CHECK", "FAILED", "edited by hand")]

    run = run_tasks([stack_task(files["template"], "preview", check_mode=True, **given),
                     stack_task(files["template"], "applied", **given),
                     stack_task(files["template"], "again", **given)], "replace")
    assert run.results["preview"]["plan"]["replaced"] == ["conf"]
    applied = run.results["applied"]
    assert applied["changed"] and ("conf", "CREATE", "COMPLETE") in events(applied)
    assert resource(applied, "conf")["status"] == "CREATE_COMPLETE"
    assert (root / "app.conf").read_text() == "v1"  # made again, and not deleted afterwards
    assert not run.results["again"]["changed"]


def test_secret_arguments_stay_out_of_output_events_and_attributes(run_tasks, tmp_path, store_url):
    secret = "pa55-w0rd-for-the-test"
    target = tmp_path / "token"
    template = write_template(tmp_path, "secret.yaml", f"""\
        heat_template_version: 2021-04-16
        parameters:
          secret_token: {{type: string, hidden: true}}  # not the resource's name
          fail: {{type: boolean, default: false}}
        resources:
          token:
            type: Hotplay::Ansible::Module
            properties:
              module: ansible.builtin.copy
              args: {{dest: {target}, content: {{get_param: secret_token}}, mode: "0600",
                      validate: {{if: [{{get_param: fail}}, "grep -q nothing-like-it %s", null]}}}}
              no_log: [content]
        outputs:
          shown: {{value: {{get_attr: [token, show]}}}}
        """)
    task = stack_task(template, "created", name="secret", secret_token=secret)
    failing = stack_task(template, "failed", name="secret", secret_token=secret + "-2", fail=True)
    run = run_tasks([task, failing], "secret", env={"HOTPLAY_STORE_KEY": "integration test store key"})
    assert target.read_text() == secret
    assert run.results["created"]["outputs"]["shown"]["args"]["content"] == "******"
    assert run.results["failed"]["stack_status"] == "UPDATE_FAILED"
    assert secret not in run.stdout and secret not in str(run.results)
    # Declared secret (no_log), so the store keeps them only encrypted.
    for table in ("events", "resources", "revisions"):
        assert secret not in str(store_rows(store_url, f"SELECT * FROM {table}"))


def test_a_module_that_is_not_installed_fails_the_task_and_writes_nothing(run_tasks, tmp_path, store_url):
    template = write_template(tmp_path, "typo.yaml", """\
        heat_template_version: 2021-04-16
        resources:
          conf:
            type: Hotplay::Ansible::Module
            properties:
              module: ansible.builtin.coppy
              args: {dest: /tmp/never, content: x}
        """)
    run = run_tasks([stack_task(template, "out", name="typo")], "typo")
    out = run.results["out"]
    assert out["failed"] and "stack_status" not in out
    assert out["msg"] == (f"{template}: resources.conf.properties.module: The module ansible.builtin.coppy "
                          "was not found: install the collection that has it (ansible-galaxy collection "
                          "install), or correct the name")
    assert "Traceback" not in run.stdout
    assert store_rows(store_url, "SELECT count(*) FROM stacks") == [(0,)]


@pytest.mark.slow
def test_twenty_module_resources_on_one_host_run_side_by_side_and_leave_no_temporary_files(
        run_tasks, tmp_path):
    from concurrency_checks import concurrent_files_template, expected_content, most_at_once

    root, remote_tmp, local_tmp = tmp_path / "many", tmp_path / "remote-tmp", tmp_path / "local-tmp"
    root.mkdir()
    local_tmp.mkdir()
    template = write_template(tmp_path, "many.yaml", concurrent_files_template(20))
    env = {"ANSIBLE_REMOTE_TMP": str(remote_tmp), "ANSIBLE_LOCAL_TEMP": str(local_tmp)}
    run = run_tasks([
        stack_task(template, "created", name="many", root=str(root)),
        # While the controller still runs: what the stack's module calls left in its local tmp.
        {"name": "Controller temporary files", "ansible.builtin.find": {
            "paths": str(local_tmp), "recurse": True, "file_type": "file", "hidden": True},
         "register": "local_files"},
    ], "many", env=env)
    created = run.results["created"]
    assert created["stack_status"] == "CREATE_COMPLETE", created.get("msg")
    assert most_at_once(created["events"], "many") > 1  # they did run side by side
    # No collision: each file holds exactly its own content, and its own checksum came back.
    assert sorted(p.name for p in root.iterdir()) == sorted(f"file{i}.txt" for i in range(20))
    for index in range(20):
        assert (root / f"file{index}.txt").read_text() == expected_content(index)
    assert created["outputs"]["checksums"] == [sha1(expected_content(i)) for i in range(20)]
    # No temporary file left: nothing in the remote tmp, only Ansible's module cache
    # in the controller's local tmp while it runs, and nothing there after.
    leftovers = [f["path"] for f in run.results["local_files"]["files"]
                 if "/ansiballz_cache/" not in f["path"]]
    assert leftovers == []
    assert list(remote_tmp.iterdir()) == []
    assert list(local_tmp.iterdir()) == []

    # The 20 deletes run side by side too.
    deleted = run_tasks([{"name": "Delete", "hotplay.stacks.stack": {"name": "many", "state": "absent"},
                          "register": "deleted"}], "delete", env=env).results["deleted"]
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted.get("msg")
    assert most_at_once(deleted["events"], "many", "DELETE") > 1
    assert list(root.iterdir()) == []
    assert list(remote_tmp.iterdir()) == [] and list(local_tmp.iterdir()) == []


def test_a_module_that_raises_fails_the_resource_saying_what_it_raised(run_tasks, tmp_path):
    # Since ansible-core 2.19 a module that raises returns no msg, only an error summary.
    library = tmp_path / "library"
    library.mkdir()
    (library / "cloud_probe.py").write_text(
        "from ansible.module_utils.basic import AnsibleModule\n\n\n"
        "def main():\n"
        "    AnsibleModule(argument_spec={'name': {'type': 'str'}})\n"
        "    raise ConnectionError('the probe could not reach its cloud')\n\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n")
    template = write_template(tmp_path, "probe.yaml", """\
        heat_template_version: 2021-04-16
        resources:
          probe:
            type: Hotplay::Ansible::Module
            properties: {module: ansible.legacy.cloud_probe, args: {name: db}}
        """)
    run = run_tasks([{"hotplay.stacks.stack": {"name": "probe", "template": str(template)},
                      "register": "applied"}], env={"ANSIBLE_LIBRARY": str(library)})
    applied = run.results["applied"]
    assert applied["stack_status"] == "CREATE_FAILED"
    assert "ansible.legacy.cloud_probe on localhost: the probe could not reach its cloud" \
        in applied["stack_status_reason"], applied["stack_status_reason"]


def test_a_time_out_stops_the_running_module_and_fails_the_stack(run_tasks, tmp_path):
    """Heat's timeout fails the stack; the module running then is stopped, not
    waited for (it would otherwise finish, and write ``finished``, 20 s later)."""
    template = write_template(tmp_path, "slow.yaml", f"""\
        heat_template_version: 2021-04-16
        resources:
          slow:
            type: Hotplay::Ansible::Module
            properties:
              module: ansible.builtin.shell
              args:
                cmd: echo $$ > {tmp_path}/pid && sleep 20 && touch {tmp_path}/finished
              physical_id: cmd
        """)
    run = run_tasks([{"hotplay.stacks.stack": {"name": "slow", "template": str(template), "timeout": 2},
                      "register": "slow"}])
    slow = run.results["slow"]
    assert slow["failed"] and slow["stack_status"] == "CREATE_FAILED", slow
    assert slow["msg"].startswith("CREATE_FAILED: Timed out"), slow["msg"]
    assert (tmp_path / "pid").exists(), "the module never started"
    assert not (tmp_path / "finished").exists()
    # The stop reaches the module's process group as the job's helpers end (their
    # parent-death signals), a moment after the task returns on a loaded machine:
    # allowed 10 s, half of what the module would otherwise still sleep.
    shell = Path(f"/proc/{int((tmp_path / 'pid').read_text())}/stat")
    deadline = time.monotonic() + 10
    while (state := _process_state(shell)) not in ("gone", "Z") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert state in ("gone", "Z"), f"the module's process outlived the task by 10 s ({state})"
    assert not (tmp_path / "finished").exists()


def _process_state(stat: Path) -> str:
    """The scheduler state of a process from its ``/proc/PID/stat``, "gone" once it is."""
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_a_looped_stack_task_runs_module_resources_for_every_item(run_tasks, tmp_path):
    """From a loop's second item on, ansible-core leaves the connection's module path in
    ``ansible_connection``: the module resources must still find their connection."""
    template = write_template(tmp_path, "one.yaml", """\
        heat_template_version: 2018-08-31
        resources:
          file:
            type: Hotplay::Ansible::Module
            properties:
              module: ansible.builtin.copy
              args:
                dest: {list_join: ["", ["%s/", {get_param: OS::stack_name}, ".txt"]]}
                content: written
              delete_module: ansible.builtin.file
              delete_args:
                path: {list_join: ["", ["%s/", {get_param: OS::stack_name}, ".txt"]]}
                state: absent
        """ % (tmp_path, tmp_path))
    names = ["first", "second", "third"]
    run = run_tasks([
        {"name": "Apply each", "hotplay.stacks.stack": {"name": "{{ item }}", "template": str(template)},
         "loop": names, "register": "applied"},
    ])
    assert [r.get("failed", False) for r in run.results["applied"]["results"]] == [False] * 3, run.stdout
    assert sorted(p.name for p in tmp_path.glob("*.txt")) == sorted(f"{n}.txt" for n in names)
    run = run_tasks([
        {"name": "Delete each", "hotplay.stacks.stack": {"name": "{{ item }}", "state": "absent"},
         "loop": names, "register": "deleted"},
    ], name="delete")
    assert [r.get("failed", False) for r in run.results["deleted"]["results"]] == [False] * 3, run.stdout
    assert not list(tmp_path.glob("*.txt"))


def test_a_null_argument_is_not_given_to_the_module(run_tasks, tmp_path):
    """``{if: [cond, value, null]}`` is how a template says "not given": the module must
    not count the null as given (lineinfile: insertbefore and insertafter are mutually
    exclusive, and openstack.cloud.volume's image, snapshot and volume)."""
    target = tmp_path / "settings.ini"
    template = write_template(tmp_path, "line.yaml", f"""\
        heat_template_version: 2018-08-31
        parameters:
          before: {{type: string, default: ""}}
        conditions:
          has_before: {{not: {{equals: [{{get_param: before}}, ""]}}}}
        resources:
          line:
            type: Hotplay::Ansible::Module
            properties:
              module: ansible.builtin.lineinfile
              args:
                path: {target}
                line: port=8080
                create: true
                insertbefore: {{if: [has_before, {{get_param: before}}, null]}}
                insertafter: EOF
        """)
    run = run_tasks([{"name": "Apply", "hotplay.stacks.stack": {"name": "line", "template": str(template)},
                      "register": "applied"}])
    assert not run.results["applied"].get("failed"), run.results["applied"].get("msg")
    assert target.read_text() == "port=8080\n"
