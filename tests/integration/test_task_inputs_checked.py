# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a task gives is checked before anything is written, through real
ansible-playbook (issue 28): parameter values are capped, stack names are Heat's."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_template

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      p: {type: string, default: ""}
    resources:
      v:
        type: OS::Heat::Value
        properties: {value: {get_param: p}}
    """


def test_a_parameter_value_too_large_from_the_playbook_is_refused(run_tasks, tmp_path: Path) -> None:
    template = str(write_template(tmp_path, "main.yaml", TEMPLATE))
    run = run_tasks([
        {"hotplay.stacks.stack": {"name": "big", "template": template,
                                  "parameters": {"p": "{{ 'A' * 2097152 }}"}}, "register": "big"},
        {"hotplay.stacks.stack_info": {}, "register": "listed"},
    ])
    big = run.results["big"]
    assert big["failed"] is True and "Traceback" not in run.stdout
    assert big["msg"] == ("parameters.p: Parameter 'p' is invalid: its value is larger than the maximum "
                          "of 1048576 characters: give large content in a file the template reads "
                          "(get_file)")
    assert run.results["listed"]["stacks"] == []


def test_stack_names_heat_would_refuse_are_refused(run_tasks, tmp_path: Path) -> None:
    template = str(write_template(tmp_path, "main.yaml", TEMPLATE))
    names = {"climb": "../../etc/x", "newline": "web\nINJECTED", "colour": "\x1b[31mred"}
    abandon = tmp_path / "web.json"
    abandon.write_text(json.dumps({"name": "web", "id": "eeeeeeee-0000-0000-0000-000000000005",
                                   "template": {"heat_template_version": "2018-08-31", "resources": {}},
                                   "resources": {}}))
    run = run_tasks([
        *({"hotplay.stacks.stack": {"name": name, "template": template}, "register": key}
          for key, name in names.items()),
        {"hotplay.stacks.stack_adopt": {"abandon_file": str(abandon), "name": "../adopted"},
         "register": "adopt"},
        {"hotplay.stacks.stack_info": {}, "register": "listed"},
    ], name="names")
    shown = {"climb": "../../etc/x", "newline": "web\\nINJECTED", "colour": "\\x1b[31mred",
             "adopt": "../adopted"}
    for key in shown:
        assert run.results[key]["failed"] is True
        assert run.results[key]["msg"] == (
            f"Invalid stack name {shown[key]} must contain only alphanumeric or \"_-.\" characters, "
            "must start with alpha and must be 255 characters or less.")
    assert run.results["listed"]["stacks"] == []
    assert "\x1b[31m" not in run.stdout and "Traceback" not in run.stdout
