# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a task gives is checked before anything is written, through real
ansible-playbook (issue 28): parameter values are capped, stack names are Heat's."""

from __future__ import annotations

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
