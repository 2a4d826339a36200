# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory plugin with a wrong store key (issue 28, item 9), through real
ansible-inventory and ansible-playbook: the source fails with an error naming the
file, the cause and the setting that makes it fatal; ansible-core only warns unless
that setting is given, and then the run fails instead of running on no host."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from conftest import BIN, INSTALLED, write_template

INFRA = """\
    heat_template_version: 2018-08-31
    parameters:
      password: {type: string, hidden: true}
    resources:
      v:
        type: OS::Heat::Value
        properties:
          value: [{name: web-0, groups: [web]}]
    outputs:
      hosts: {value: {get_attr: [v, value]}}
    """
EXPECTED = ("the store key does not open stack infra's secrets; this source gives no hosts, and the "
            "play runs without them unless ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED=true (or "
            "[inventory] any_unparsed_is_failed) makes this failure stop it")


def run(command: list[str], cwd: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCALHOST_WARNING": "false", "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
           "HOTPLAY_STORE_KEY": "the wrong key", **settings}
    env.pop("PYTHONPATH", None)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def prepared(run_tasks, tmp_path: Path, store_url: str) -> tuple[Path, Path]:
    template = str(write_template(tmp_path, "infra.yaml", INFRA))
    applied = run_tasks([{"hotplay.stacks.stack": {"name": "infra", "template": template,
                                                   "parameters": {"password": "s3cret-Value"}},
                          "register": "infra"}], env={"HOTPLAY_STORE_KEY": "the right key"})
    assert applied.results["infra"]["stack_status"] == "CREATE_COMPLETE"
    source = tmp_path / "inventory.stacks.yml"
    source.write_text(f"plugin: hotplay.stacks.stacks\nstore: {store_url}\n")
    playbook = tmp_path / "web.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "web", "gather_facts": False,
                                         "tasks": [{"ansible.builtin.ping": {}}]}]))
    return source, playbook


def test_a_wrong_store_key_fails_the_source_and_the_setting_makes_it_fatal(run_tasks, tmp_path: Path,
                                                                           store_url: str) -> None:
    source, playbook = prepared(run_tasks, tmp_path, store_url)
    playbook_cmd = [str(BIN / "ansible-playbook"), "-i", str(source), str(playbook)]

    # ansible-core's default: a warning naming the file, the cause and the setting; rc 0.
    warned = run(playbook_cmd, tmp_path)
    assert warned.returncode == 0 and "skipping: no hosts matched" in warned.stdout
    assert f"{source}: {EXPECTED}" in " ".join((warned.stdout + warned.stderr).split())

    # With the setting the documentation gives, the run fails.
    for setting in ("ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED", "ANSIBLE_INVENTORY_UNPARSED_FAILED"):
        failed = run(playbook_cmd, tmp_path, **{setting: "true"})
        assert failed.returncode != 0, setting
        assert f"{source}: {EXPECTED}" in " ".join(failed.stderr.split()), setting

    # Beside a static inventory only the "any" setting fails it.
    static = tmp_path / "hosts.ini"
    static.write_text("other ansible_connection=local\n")
    both = [str(BIN / "ansible-inventory"), "-i", str(static), "-i", str(source), "--list"]
    assert run(both, tmp_path).returncode == 0
    fatal = run(both, tmp_path, ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true")
    assert fatal.returncode != 0 and "Completely failed to parse inventory source" in fatal.stderr
