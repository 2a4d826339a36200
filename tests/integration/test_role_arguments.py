# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' variables are checked by Ansible from meta/argument_specs.yml before
the role's first task, and documented by ``ansible-doc -t role``."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import BIN, EXAMPLES, INSTALLED, store_rows

SOFTWARE_TEMPLATE = str(EXAMPLES / "software" / "app_software.yaml")
INFRASTRUCTURE_TEMPLATE = str(EXAMPLES / "software" / "infrastructure.yaml")


@pytest.mark.parametrize(("role", "variables", "refusal"), [
    ("infrastructure", {}, "missing required arguments: infrastructure_template"),
    ("infrastructure", {"infrastructure_template": INFRASTRUCTURE_TEMPLATE, "infrastructure_parameters": 3},
     "infrastructure_parameters"),
    ("infrastructure", {"infrastructure_template": INFRASTRUCTURE_TEMPLATE, "infrastructure_environment": {"a": 1}},
     "infrastructure_environment"),
    ("software", {}, "missing required arguments: software_template"),
    ("software", {"software_template": SOFTWARE_TEMPLATE, "software_rollback": "perhaps"}, "software_rollback"),
    ("software", {"software_template": SOFTWARE_TEMPLATE, "software_parameters": ["a"]}, "software_parameters"),
], ids=["infrastructure-no-template", "infrastructure-parameters-not-a-dict", "infrastructure-environment-not-a-list",
        "software-no-template", "software-rollback-not-a-bool", "software-parameters-not-a-dict"])
def test_a_wrong_role_variable_is_refused_naming_it_before_any_stack_is_touched(
        tmp_path, store_url, run_tasks, role, variables, refusal):
    run = run_tasks([{"ansible.builtin.include_role": {"name": f"hotplay.stacks.{role}"},
                      "vars": {**variables, "hotplay_store": store_url}}])
    assert run.rc != 0
    assert "Validating arguments against arg spec 'main'" in run.stdout, run.stdout
    assert refusal in run.stdout, run.stdout
    assert not (tmp_path / "store.db").exists() or store_rows(store_url, "SELECT count(*) FROM stacks") == [(0,)]


def test_right_role_variables_pass_the_check(tmp_path, store_url, run_tasks):
    run = run_tasks([{"ansible.builtin.include_role": {"name": "hotplay.stacks.infrastructure"},
                      "vars": {"infrastructure_template": INFRASTRUCTURE_TEMPLATE,
                               "infrastructure_parameters": {"count": 2}, "hotplay_store": store_url}}])
    assert run.rc == 0, run.stdout
    assert ("infrastructure", "CREATE", "COMPLETE") in store_rows(store_url, "SELECT name, action, status FROM stacks")


@pytest.mark.parametrize(("role", "variables"), [
    ("infrastructure", ["infrastructure_template", "infrastructure_environment", "infrastructure_parameters",
                        "infrastructure_stack_name", "infrastructure_hosts_output", "infrastructure_group",
                        "infrastructure_store"]),
    ("software", ["software_template", "software_environment", "software_parameters", "software_stack_name",
                  "software_rollback", "software_store"]),
])
def test_ansible_doc_documents_every_role_variable(role, variables):
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED)}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(BIN / "ansible-doc"), "-t", "role", "--json", f"hotplay.stacks.{role}"],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    main = json.loads(done.stdout)[f"hotplay.stacks.{role}"]["entry_points"]["main"]
    assert sorted(main["options"]) == sorted(variables)
    assert main["options"][f"{role}_template"]["required"] is True
    assert all(option["description"] for option in main["options"].values())
