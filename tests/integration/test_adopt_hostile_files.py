# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28, item 1, through real ansible-playbook: an abandon file is input from
elsewhere, and a hostile one must not run commands on the controller.  A module
resource in the file's template, or in a provider template the file carries in its
``files``, is refused with one message naming the file, the place and the type, and
the store keeps no trace; a module of the task's own provider template that cannot
say in check mode whether it would change anything is not run for real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import write_template

STACK_ID = "dddddddd-0000-0000-0000-000000000004"


def steal(target: Path) -> dict[str, Any]:
    """The attack: a module resource whose command copies the job's store URL and key."""
    return {"type": "Hotplay::Ansible::Module",
            "properties": {"module": "ansible.builtin.shell",
                           "args": {"cmd": f"env | grep ^HOTPLAY_STORE > {target}"}}}


def abandon(template: dict[str, Any], resources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": "web", "id": STACK_ID, "action": "CREATE", "status": "COMPLETE",
            "template": template, "environment": {"parameters": {}}, "files": {},
            "resources": {name: {"name": name, "resource_id": f"web-{name}-x", "type": type_name,
                                 "action": "CREATE", "status": "COMPLETE", "metadata": {},
                                 "resource_data": {}}
                          for name, type_name in resources.items()},
            "project_id": "admin", "stack_user_project_id": "x", "tags": [], **extra}


def adopt_and_list(run_tasks, store_url: str, path: Path, name: str, **options: Any):
    return run_tasks([
        {"hotplay.stacks.stack_adopt": {"abandon_file": str(path), **options}, "register": "adopted"},
        {"hotplay.stacks.stack_info": {}, "register": "listed"},
    ], name=name, env={"HOTPLAY_STORE": store_url, "HOTPLAY_STORE_KEY": "a key worth stealing"})


def test_a_module_resource_in_the_abandon_files_template_is_refused(
        run_tasks, store_url: str, tmp_path: Path) -> None:
    stolen = tmp_path / "stolen"
    template = {"heat_template_version": "2018-08-31", "resources": {"x": steal(stolen)}}
    path = tmp_path / "web.json"
    path.write_text(json.dumps(abandon(template, {"x": "Hotplay::Ansible::Module"})))
    run = adopt_and_list(run_tasks, store_url, path, "template")
    adopted = run.results["adopted"]
    assert adopted["failed"] is True and not stolen.exists()
    assert adopted["msg"] == (
        f"{path}: resource types Heat does not have: template.resources.x.type "
        "(Hotplay::Ansible::Module), resources.x.type (Hotplay::Ansible::Module); Heat's abandon "
        "data holds only Heat's own types (OS::*, AWS::*) and provider templates, so this data "
        "was not written by Heat: nothing was adopted, nothing written")
    assert run.results["listed"]["stacks"] == [] and "Traceback" not in run.stdout


def test_a_module_resource_in_a_provider_template_of_the_files_is_refused(
        run_tasks, store_url: str, tmp_path: Path) -> None:
    stolen = tmp_path / "stolen"
    provider = {"heat_template_version": "2018-08-31", "resources": {"run": steal(stolen)}}
    template = {"heat_template_version": "2018-08-31", "resources": {"server": {"type": "OS::Nova::Server"}}}
    url = f"file://{tmp_path / 'server.yaml'}"
    data = abandon(template, {"server": "OS::Nova::Server"},
                   files={url: json.dumps(provider)})
    data["environment"]["resource_registry"] = {"OS::Nova::Server": url}
    path = tmp_path / "web.json"
    path.write_text(json.dumps(data))
    run = adopt_and_list(run_tasks, store_url, path, "provider")
    adopted = run.results["adopted"]
    assert adopted["failed"] is True and not stolen.exists()
    assert adopted["msg"].startswith(
        f"{path}: resource types Heat does not have: files.{url}.resources.run.type "
        "(Hotplay::Ansible::Module); ")
    assert run.results["listed"]["stacks"] == []


PROVIDER = """\
    heat_template_version: 2018-08-31
    resources:
      run:
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.builtin.shell
          args: {{cmd: "touch {target}"}}
    """


def test_a_module_that_cannot_check_is_not_run_for_real(run_tasks, store_url: str, tmp_path: Path) -> None:
    """The task's own environment maps a Heat type to a provider template whose module
    (shell: no check mode without creates/removes) cannot tell: recorded, not run."""
    touched = tmp_path / "touched"
    write_template(tmp_path, "thing.yaml", PROVIDER.format(target=touched))
    template = {"heat_template_version": "2018-08-31", "resources": {"thing": {"type": "OS::Heat::None"}}}
    (tmp_path / "main.yaml").write_text(json.dumps(template))
    (tmp_path / "env.yaml").write_text("resource_registry:\n  OS::Heat::None: thing.yaml\n")
    path = tmp_path / "web.json"
    path.write_text(json.dumps(abandon(template, {"thing": "OS::Heat::None"})))
    run = adopt_and_list(run_tasks, store_url, path, "cannot_check", template=str(tmp_path / "main.yaml"),
                         environment=[str(tmp_path / "env.yaml")], nested_depth=1)
    adopted = run.results["adopted"]
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert not touched.exists()
    ids = {r["name"]: r["physical_id"] for r in adopted["resources"]}
    assert ids["thing/run"] == "web-thing-x"


IDENTIFIED_PROVIDER = """\
    heat_template_version: 2018-08-31
    resources:
      run:
        type: Hotplay::Ansible::Module
        properties:
          module: ansible.builtin.shell
          args: {{cmd: "touch {target}"}}
    outputs:
      OS::stack_id:
        value: {{get_attr: [run, result, stdout]}}
    """


def test_a_provider_adopted_without_its_module_run_keeps_heat_s_id_through_updates(
        run_tasks, store_url: str, tmp_path: Path) -> None:
    """The provider's module did not run on adoption, so its template has no id: what
    other resources get from it is Heat's id, at adoption and in every apply after
    (an update of the nested stack does not lose it)."""
    touched = tmp_path / "touched"
    write_template(tmp_path, "thing.yaml", IDENTIFIED_PROVIDER.format(target=touched))
    user = {"list_join": ["/", [{"get_resource": "thing"}, {"get_param": "suffix"}]]}
    template = {"heat_template_version": "2018-08-31",
                "parameters": {"suffix": {"type": "string", "default": "a"}},
                "resources": {"thing": {"type": "OS::Heat::None"},
                              "user": {"type": "OS::Heat::Value", "properties": {"value": user}}},
                "outputs": {"thing_id": {"value": {"get_attr": ["user", "value"]}}}}
    main = tmp_path / "main.yaml"
    main.write_text(json.dumps(template))
    environment = tmp_path / "env.yaml"
    environment.write_text("resource_registry:\n  OS::Heat::None: thing.yaml\n")
    path = tmp_path / "web.json"
    data = abandon(template, {"thing": "OS::Heat::None", "user": "OS::Heat::Value"})
    data["resources"]["user"]["resource_data"] = {"value": "web-thing-x/a"}
    path.write_text(json.dumps(data))
    apply = {"name": "web", "template": str(main), "environment": [str(environment)]}
    run = run_tasks([
        {"hotplay.stacks.stack_adopt": {"abandon_file": str(path), "template": str(main),
                                        "environment": [str(environment)]}, "register": "adopted"},
        {"hotplay.stacks.stack": apply, "register": "again"},
        {"hotplay.stacks.stack": {**apply, "parameters": {"suffix": "b"}}, "register": "updated"},
        {"hotplay.stacks.stack": {**apply, "parameters": {"suffix": "c"}}, "register": "third"},
    ], name="keeps_id", env={"HOTPLAY_STORE": store_url})
    results = run.results
    assert results["adopted"]["outputs"]["thing_id"] == "web-thing-x/a", results["adopted"].get("msg")
    assert results["again"]["changed"] is False, results["again"].get("msg")
    for step, suffix in (("updated", "b"), ("third", "c")):
        assert results[step]["stack_status"] == "UPDATE_COMPLETE", results[step].get("msg")
        assert results[step]["outputs"]["thing_id"] == f"web-thing-x/{suffix}", step
    assert not touched.exists()


def test_a_lone_surrogate_in_the_abandon_file_is_refused_and_nothing_written(
        run_tasks, store_url: str, tmp_path: Path) -> None:
    """Half a surrogate pair (a JSON escape) was adopted, then exported as ``?``:
    refused with one message naming the file and the place."""
    template = {"heat_template_version": "2018-08-31", "resources": {"v": {"type": "OS::Heat::Value"}}}
    data = abandon(template, {"v": "OS::Heat::Value"})
    data["resources"]["v"]["resource_data"] = {"value": "left-\ud800"}
    path = tmp_path / "web.json"
    path.write_text(json.dumps(data))  # ensure_ascii: written as the escape \ud800
    run = adopt_and_list(run_tasks, store_url, path, "surrogate")
    adopted = run.results["adopted"]
    assert adopted["failed"] is True and "Traceback" not in run.stdout
    assert adopted["msg"] == (
        f"{path}: resources.v.resource_data.value: text that is not valid Unicode: a lone "
        "surrogate (\\ud800) at character 6 of a value: expected the JSON that openstack stack "
        "abandon writes (Heat writes UTF-8 text)")
    assert run.results["listed"]["stacks"] == []
