# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Heat ``ansible`` config that is a playbook (one play with ``connection``,
``hosts`` and ``tasks`` in ``key=value`` form, reading ``{{ foo }}`` and writing
``{{ heat_outputs_path }}.result``, as heat-templates' ansible example does),
deployed through ``OS::Heat::SoftwareDeploymentGroup`` to two inventory hosts: each
host runs the play, and its ``result`` output is the file it wrote, as Heat's
ansible hook reads it.  An undefined variable fails the deployment naming the task
and the variable (it was a raw ``ValueError``, then a ``TypeError``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import BIN, HARNESS_ENV, INSTALLED, assert_worker_quiet, dump_task, write_template

HOSTS = ("h1", "h2")
TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      servers: {type: json}
      root: {type: string}
      foo: {type: string, default: fooooo}
    resources:
      config:
        type: OS::Heat::SoftwareConfig
        properties:
          group: ansible
          inputs: [{name: foo}, {name: root}]
          outputs: [{name: result}]
          config: |
            ---
            - name: Write what the stack says
              connection: local
              hosts: localhost
              tasks:
              - name: Leave a mark on the server
                copy: content="{{ foo }} on {{ deploy_server_id }}" dest={{ root }}/{{ deploy_server_id }}.txt
              - name: Say what was done
                copy: content="{{ foo }}" dest={{ heat_outputs_path }}.result
      fleet:
        type: OS::Heat::SoftwareDeploymentGroup
        properties:
          config: {get_resource: config}
          servers: {get_param: servers}
          input_values: {foo: {get_param: foo}, root: {get_param: root}}
    outputs:
      results: {value: {get_attr: [fleet, result]}}
      codes: {value: {get_attr: [fleet, deploy_status_codes]}}
    """


@pytest.fixture
def scratch() -> Iterator[Path]:
    """The hosts' temporary directory, the test's own: what is left in it is this run's
    and no other test's (tests beside it make scratch directories in /tmp too).  A short
    path: ansible-playbook's RPC server puts its Unix socket there (108 bytes at most)."""
    folder = Path(tempfile.mkdtemp(prefix="hotplay-scratch-"))
    yield folder
    shutil.rmtree(folder)


def apply(tmp_path: Path, store_url: str, template: Path, name: str,
          scratch: Path) -> subprocess.CompletedProcess[str]:
    hosts = {host: {"ansible_connection": "local", "hotplay_state_dir": str(tmp_path / "state" / host),
                    "ansible_python_interpreter": str(BIN / "python")} for host in HOSTS}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"fleet": {"hosts": hosts}}}}))
    play = [{"name": "Deploy the playbook to the fleet", "hosts": "localhost", "gather_facts": False,
             "tasks": [
                 {"hotplay.stacks.stack": {
                     "name": name, "template": str(template), "store": store_url,
                     "parameters": {"servers": {host: host for host in HOSTS},
                                    "root": str(tmp_path / "hosts")}},
                  "register": "fleet", "ignore_errors": True},
                 dump_task(tmp_path / f"{name}.json", "fleet"),
             ]}]
    playbook = tmp_path / f"{name}.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
                   "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), "PYTHONDEVMODE": "1",
                   "ANSIBLE_LOCALHOST_WARNING": "false", "TMPDIR": str(scratch),
                   **HARNESS_ENV}
    environment.pop("PYTHONPATH", None)
    run = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook)],
                         cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600,
                         check=False)
    assert_worker_quiet(run.stdout)
    return run


def test_playbook_config_runs_on_every_server_of_the_group(tmp_path: Path, store_url: str,
                                                           scratch: Path) -> None:
    (tmp_path / "hosts").mkdir()
    template = write_template(tmp_path, "fleet.yaml", TEMPLATE)
    run = apply(tmp_path, store_url, template, "fleet", scratch)
    result = json.loads((tmp_path / "fleet.json").read_text())
    assert result["stack_status"] == "CREATE_COMPLETE", result.get("msg") or run.stdout
    assert result["outputs"]["results"] == {"h1": "fooooo", "h2": "fooooo"}
    assert result["outputs"]["codes"] == {"h1": 0, "h2": 0}
    for host in HOSTS:
        assert (tmp_path / "hosts" / f"{host}.txt").read_text() == f"fooooo on {host}"
    # The outputs' scratch directory is gone from the hosts.
    assert not list(scratch.glob("hotplay-outputs-*"))


def test_undefined_variable_is_named_with_its_task(tmp_path: Path, store_url: str, scratch: Path) -> None:
    (tmp_path / "hosts").mkdir()
    text = TEMPLATE.replace('content="{{ foo }}" dest={{ heat_outputs_path }}',
                            'content="{{ bar }}" dest={{ heat_outputs_path }}')
    template = write_template(tmp_path, "fleet.yaml", text)
    apply(tmp_path, store_url, template, "broken", scratch)
    result = json.loads((tmp_path / "broken.json").read_text())
    assert result["stack_status"] == "CREATE_FAILED"
    message = result["stack_status_reason"]
    assert "task 1 (Say what was done): 'bar' is undefined" in message, message
    assert "TypeError" not in message and "ValueError" not in message
