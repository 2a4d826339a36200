# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``OS::Heat::SoftwareDeploymentGroup``: one stack, applied once from the
controller, deploys a config to four inventory hosts; the members run side by side
on create and roll ``max_batch_size`` at a time on update; a failure stops the roll.

The hosts use ``ansible_connection: local`` with a state directory each; the script
writes under ``$root/$deploy_server_id`` and logs when it starts and ends, so the
test reads what ran where, and how many ran at once, from the hosts' own files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml

from conftest import BIN, INSTALLED, store_rows, write_template

HOSTS = ["h1", "h2", "h3", "h4"]

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      servers: {type: json}
      root: {type: string}
      version: {type: string}
      fail_on: {type: string, default: ""}
    resources:
      config:
        type: OS::Heat::SoftwareConfig
        properties:
          group: script
          inputs: [{name: root}, {name: version}, {name: fail_on}, {name: together}]
          outputs: [{name: landed}]
          config: |
            #!/bin/sh
            set -e
            dir="$root/$deploy_server_id"
            mkdir -p "$dir"
            echo "start $deploy_server_id $deploy_action $(date +%s%N)" >> "$root/log"
            touch "$root/started-$deploy_action-$deploy_server_id"
            if [ "$deploy_action" = CREATE ]; then
              # Wait until every member has started: members that ran one after
              # another would never all be here at once.
              for i in $(seq 1 300); do
                [ "$(ls "$root" | grep -c "^started-CREATE-")" -ge "$together" ] && break
                sleep 0.1
              done
              [ "$(ls "$root" | grep -c "^started-CREATE-")" -ge "$together" ]
            else
              sleep 0.3
            fi
            if [ "$deploy_server_id" = "$fail_on" ]; then
              echo "refusing to deploy $version on $deploy_server_id" >&2
              exit 3
            fi
            echo "$version" > "$dir/version"
            echo "end $deploy_server_id $deploy_action $(date +%s%N)" >> "$root/log"
            echo "$deploy_server_id runs $version"
            printf '%s' "$dir/version" > "$heat_outputs_path.landed"
      fleet:
        type: OS::Heat::SoftwareDeploymentGroup
        update_policy:
          rolling_update: {max_batch_size: 2}
        properties:
          config: {get_resource: config}
          servers: {get_param: servers}
          actions: [CREATE, UPDATE]
          input_values:
            root: {get_param: root}
            version: {get_param: version}
            fail_on: {get_param: fail_on}
            together: 4
    outputs:
      stdouts: {value: {get_attr: [fleet, deploy_stdouts]}}
      codes: {value: {get_attr: [fleet, deploy_status_codes]}}
      landed: {value: {get_attr: [fleet, landed]}}
      one: {value: {get_attr: [fleet, landed, h2]}}
"""


def inventory(tmp_path: Path) -> Path:
    hosts = {name: {"ansible_connection": "local",
                    "hotplay_state_dir": str(tmp_path / "state" / name),
                    "ansible_python_interpreter": str(BIN / "python")} for name in HOSTS}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"all": {"children": {"fleet": {"hosts": hosts}}}}))
    return path


def apply(tmp_path: Path, store_url: str, version: str, fail_on: str = "") -> subprocess.CompletedProcess[str]:
    template = write_template(tmp_path, "fleet.yaml", TEMPLATE)
    play = [{"name": "Deploy to the fleet from the controller", "hosts": "localhost",
             "gather_facts": False, "tasks": [
                 {"name": "Apply the fleet stack", "hotplay.stacks.stack": {
                     "name": "fleet", "template": str(template), "store": store_url,
                     "parameters": {"servers": {name: name for name in HOSTS},
                                    "root": str(tmp_path / "hosts"), "version": version,
                                    "fail_on": fail_on}},
                  "register": "fleet"},
                 {"name": "Show the outputs", "ansible.builtin.debug": {
                     "msg": "OUTPUTS {{ fleet.outputs | to_json }}"}},
             ]}]
    playbook = tmp_path / "fleet.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
                   "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"),
                   "ANSIBLE_LOCALHOST_WARNING": "false"}
    environment.pop("PYTHONPATH", None)
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory(tmp_path)), str(playbook)],
                          cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600,
                          check=False)


def outputs(run: subprocess.CompletedProcess[str]) -> dict:
    line = next(line for line in run.stdout.splitlines() if '"msg": "OUTPUTS ' in line)
    return json.loads(json.loads("{" + line.strip().rstrip(",") + "}")["msg"][len("OUTPUTS "):])


def versions(tmp_path: Path) -> dict[str, str | None]:
    found = {}
    for name in HOSTS:
        path = tmp_path / "hosts" / name / "version"
        found[name] = path.read_text().strip() if path.exists() else None
    return found


def most_at_once(tmp_path: Path, action: str) -> int:
    """The most deployments of ``action`` running at the same moment, from the log."""
    edges = []
    for line in (tmp_path / "hosts" / "log").read_text().splitlines():
        what, _host, logged_action, stamp = line.split()
        if logged_action == action:
            edges.append((int(stamp), 1 if what == "start" else -1))
    running = peak = 0
    for _stamp, step in sorted(edges):
        running += step
        peak = max(peak, running)
    return peak


def test_group_deploys_to_every_host_at_once_then_rolls_two_at_a_time(tmp_path, store_url):
    created = apply(tmp_path, store_url, "1.0")
    assert created.returncode == 0, created.stdout + created.stderr
    assert versions(tmp_path) == dict.fromkeys(HOSTS, "1.0")
    # Each member ran on its own host: its marker is in that host's state directory.
    for name in HOSTS:
        assert list((tmp_path / "state" / name).iterdir()), f"no deployment marker on {name}"
    found = outputs(created)
    assert found["stdouts"] == {name: f"{name} runs 1.0\n" for name in HOSTS}
    assert found["codes"] == dict.fromkeys(HOSTS, 0)
    assert found["landed"] == {name: str(tmp_path / "hosts" / name / "version") for name in HOSTS}
    assert found["one"] == str(tmp_path / "hosts" / "h2" / "version")

    updated = apply(tmp_path, store_url, "2.0")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert versions(tmp_path) == dict.fromkeys(HOSTS, "2.0")
    # rolling_update max_batch_size 2: never more than two hosts at once.
    assert most_at_once(tmp_path, "UPDATE") == 2

    again = apply(tmp_path, store_url, "2.0")
    assert again.returncode == 0
    assert "fleet: UPDATE_" not in again.stdout, "nothing changed, nothing may run"


def test_failed_batch_stops_the_roll(tmp_path, store_url):
    assert apply(tmp_path, store_url, "1.0").returncode == 0
    failed = apply(tmp_path, store_url, "2.0", fail_on="h3")
    assert failed.returncode != 0
    assert "refusing to deploy 2.0 on h3" in failed.stdout
    now = versions(tmp_path)
    assert now["h3"] == "1.0"
    # Two batches of two: the batch with h3 failed, so the other batch's hosts
    # either rolled before it or never started; never after the failure.
    started = [line.split()[1] for line in (tmp_path / "hosts" / "log").read_text().splitlines()
               if line.startswith("start") and " UPDATE " in line]
    assert "h3" in started and len(started) <= 4
    assert started.index("h3") >= len(started) - 2, f"a batch started after h3's failed: {started}"
    # Every host that started but h3 got the new version; the rest never started.
    assert sorted(name for name, version in now.items() if version == "2.0") == \
        sorted(name for name in started if name != "h3")
    status = store_rows(store_url, "SELECT action, status FROM stacks WHERE name = 'fleet'")
    assert status == [("UPDATE", "FAILED")]

    fixed = apply(tmp_path, store_url, "2.0")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert versions(tmp_path) == dict.fromkeys(HOSTS, "2.0")
