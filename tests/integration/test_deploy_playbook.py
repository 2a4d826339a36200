# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped deploy playbook by FQCN, and the roles' molecule scenarios."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import BIN, EXAMPLES, INSTALLED, REPO, store_rows

SOFTWARE = str(EXAMPLES / "software" / "app_software.yaml")


def test_deploy_playbook_rolls_the_software_plays(tmp_path, store_url):
    hosts = {}
    for name in ("app1", "app2", "app3"):
        hosts[name] = {"ansible_connection": "local", "host_root": str(tmp_path / name),
                       "hotplay_state_dir": str(tmp_path / name / "state"),
                       "ansible_python_interpreter": str(BIN / "python")}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"hotplay_software": {"hosts": hosts}}}}))
    variables = {"software_template": SOFTWARE, "hotplay_serial": 2, "hotplay_store": store_url,
                 "hotplay_bootstrap_hosts": "app3",
                 "software_parameters": {"app_root": "{{ host_root }}/app", "version": "1.0"}}
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), "hotplay.stacks.deploy",
                           "-e", json.dumps(variables)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "To resume the roll from here" in done.stdout
    # The bootstrap host is rolled in a play of its own, before the others.
    bootstrap = done.stdout.index("PLAY [Software stacks of the bootstrap hosts first")
    batches = done.stdout.index("PLAY [Software stacks, a batch at a time]")
    assert "software-app3" in done.stdout[bootstrap:batches]
    assert "software-app1" not in done.stdout[bootstrap:batches]
    rows = store_rows(store_url, "SELECT name, action || '_' || status FROM stacks"
                                 " WHERE parent_id IS NULL ORDER BY name")
    assert rows == [(f"software-app{i}", "CREATE_COMPLETE") for i in (1, 2, 3)]
    assert all((tmp_path / f"app{i}" / "app" / "installed").read_text().strip() == "1.0" for i in (1, 2, 3))


def test_a_wrong_store_key_stops_the_deploy_instead_of_rolling_onto_no_host(tmp_path, store_url):
    """ansible-core only warns when the stacks inventory fails (here: a wrong store
    key) and runs on no hosts; the deploy playbook refuses that, saying why."""
    infra = tmp_path / "infra.yaml"
    infra.write_text(yaml.safe_dump({
        "heat_template_version": "2018-08-31",
        "parameters": {"token": {"type": "string", "hidden": True}},
        "resources": {"app": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "token"}}}},
        "outputs": {"hosts": {"value": [
            {"name": "app1", "groups": ["hotplay_software"], "vars": {"ansible_connection": "local"}}]}},
    }))
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "HOTPLAY_STORE_KEY": "the right key", "ANSIBLE_INVENTORY_ENABLED": "hotplay.stacks.stacks,host_list"}
    env.pop("PYTHONPATH", None)
    created = subprocess.run([str(BIN / "ansible"), "localhost", "-i", "localhost,", "-c", "local",
                              "-m", "hotplay.stacks.stack", "-a", json.dumps({
                                  "name": "infra", "template": str(infra), "store": store_url,
                                  "parameters": {"token": "s3cret"}})],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert created.returncode == 0, created.stdout + created.stderr
    source = tmp_path / "inventory.stacks.yml"
    source.write_text(f"plugin: hotplay.stacks.stacks\nstore: {store_url}\nstacks: [infra]\n")
    variables = {"software_template": SOFTWARE, "hotplay_store": store_url}
    done = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(source), "hotplay.stacks.deploy",
                           "-e", json.dumps(variables)], cwd=tmp_path,
                          env={**env, "HOTPLAY_STORE_KEY": "a wrong key"}, capture_output=True,
                          text=True, timeout=600, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "does not open stack infra's secrets" in output  # the inventory's own warning
    assert "No host is in group hotplay_software" in output


@pytest.mark.parametrize("scenario", sorted(p.name for p in (REPO / "extensions" / "molecule").iterdir()
                                            if (p / "molecule.yml").exists()))
def test_molecule_scenario(scenario, tmp_path):
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}", "MOLECULE_NO_LOG": "false",
           "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(BIN / "molecule"), "test", "-s", scenario], cwd=REPO / "extensions",
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


__all__ = ["Path"]
