# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin: hosts from an infrastructure stack's outputs."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import BIN, INSTALLED, write_template

INFRA = """\
    heat_template_version: 2018-08-31
    parameters:
      count: {type: number, default: 3}
    resources:
      servers:
        type: OS::Heat::ResourceGroup
        properties:
          count: {get_param: count}
          resource_def:
            type: OS::Heat::Value
            properties:
              type: json
              value:
                name: web-%index%
                groups: [web]
                vars: {ansible_host: "127.0.0.%index%", role: frontend}
    outputs:
      hosts: {value: {get_attr: [servers, value]}}
    """


def test_hosts_come_from_the_stack_outputs(run_tasks, tmp_path, store_url):
    template = str(write_template(tmp_path, "infra.yaml", INFRA))
    applied = run_tasks([{"hotplay.stacks.stack": {"name": "infra", "template": template},
                          "register": "infra"}])
    assert applied.results["infra"]["stack_status"] == "CREATE_COMPLETE"
    source = tmp_path / "inventory.stacks.yml"
    source.write_text(f"plugin: hotplay.stacks.stacks\nstore: {store_url}\nstacks: [infra]\n"
                      "keyed_groups:\n  - key: role\n    prefix: role\n")
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
           "ANSIBLE_INVENTORY_ENABLED": "hotplay.stacks.stacks"}
    env.pop("PYTHONPATH", None)
    listed = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(source), "--list"],
                            env=env, capture_output=True, text=True, check=False)
    assert listed.returncode == 0, listed.stderr
    inventory = json.loads(listed.stdout)
    assert sorted(inventory["web"]["hosts"]) == ["web-0", "web-1", "web-2"]
    assert sorted(inventory["stack_infra"]["hosts"]) == ["web-0", "web-1", "web-2"]
    assert sorted(inventory["role_frontend"]["hosts"]) == ["web-0", "web-1", "web-2"]
    hostvars = {k: _plain(v) for k, v in inventory["_meta"]["hostvars"]["web-1"].items()}
    assert hostvars["ansible_host"] == "127.0.0.1" and hostvars["hotplay_stack"] == "infra"


def _plain(value):
    """Values from the store are data, never templates: Ansible marks them unsafe."""
    return value.get("__ansible_unsafe", value) if isinstance(value, dict) else value
