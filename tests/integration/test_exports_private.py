# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exports that hold hidden values in the clear, through real ansible-playbook
(issue 28): ``stack_info format: heat_abandon`` with ``dest``."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from conftest import write_template

HIDDEN = """\
    heat_template_version: 2018-08-31
    parameters:
      password: {type: string, hidden: true}
    resources:
      v:
        type: OS::Heat::Value
        properties: {value: {get_param: password}}
    """
KEY = {"HOTPLAY_STORE_KEY": "export test store key"}


def test_an_existing_readable_dest_becomes_a_private_file(run_tasks, tmp_path: Path) -> None:
    template = str(write_template(tmp_path, "main.yaml", HIDDEN))
    dest = tmp_path / "web.json"
    dest.write_text("{}\n")
    dest.chmod(0o644)
    previous = os.umask(0)  # inherited by ansible-playbook: "whatever the umask"
    try:
        run = run_tasks([
            {"hotplay.stacks.stack": {"name": "web", "template": template,
                                      "parameters": {"password": "s3cret-Value"}}, "register": "applied"},
            {"hotplay.stacks.stack_info": {"name": "web", "format": "heat_abandon", "dest": str(dest)},
             "register": "exported"},
        ], env=KEY)
    finally:
        os.umask(previous)
    assert run.results["exported"].get("failed") is not True, run.results["exported"]
    assert json.loads(dest.read_text())["environment"]["parameters"] == {"password": "s3cret-Value"}
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".web.json")) == []


def test_exporting_secrets_without_the_store_key_asks_for_it(run_tasks, tmp_path: Path) -> None:
    """Without the key the sealed values read as ****** (the environment's text did not
    parse as YAML, the hidden value would have been exported as ******)."""
    template = str(write_template(tmp_path, "main.yaml", HIDDEN))
    (tmp_path / "env.yaml").write_text("parameter_defaults:\n  password: s3cret-Value\n")
    applied = run_tasks([{"hotplay.stacks.stack": {"name": "web", "template": template,
                                                   "environment": [str(tmp_path / "env.yaml")]},
                          "register": "applied"}], name="apply", env=KEY)
    assert applied.results["applied"]["stack_status"] == "CREATE_COMPLETE"
    dest = tmp_path / "web.json"
    run = run_tasks([{"hotplay.stacks.stack_info": {"name": "web", "format": "heat_abandon",
                                                    "dest": str(dest)}, "register": "exported"}],
                    name="export", env={"HOTPLAY_STORE_KEY": ""})
    exported = run.results["exported"]
    assert exported["failed"] is True and not dest.exists()
    assert exported["msg"] == (
        "stack web keeps secrets in the store, and Heat's abandon data holds them in the clear; the "
        "store keeps secrets only encrypted: give a store key with the HOTPLAY_STORE_KEY environment "
        "variable or the store_key option (from Ansible Vault)")
