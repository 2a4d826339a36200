# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seed scenario: five hosts, a software stack per host, an UPDATE-only
deployment rolled with ``serial: 2``; a failure on host 4 rolls that host back and
stops the roll; the re-run finishes hosts 4 and 5 and leaves 1 to 3 alone.

The hosts use ``ansible_connection: local`` with a root directory each, so the
deployments' scripts and markers really run and land per host."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml

from conftest import BIN, EXAMPLES, INSTALLED, store_rows

SOFTWARE = str(EXAMPLES / "software" / "app_software.yaml")
HOSTS = [f"app{i}" for i in range(1, 6)]


def inventory(tmp_path: Path) -> Path:
    hosts = {}
    for name in HOSTS:
        root = tmp_path / "hosts" / name
        root.mkdir(parents=True)
        hosts[name] = {"ansible_connection": "local", "app_root": str(root / "app"),
                       "hotplay_state_dir": str(root / "state"),
                       "ansible_python_interpreter": str(BIN / "python")}
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"all": {"children": {"app": {"hosts": hosts}}}}))
    return path


def roll_play(store_url: str) -> list[dict]:
    stack_task = {
        "name": "Apply the host's software stack",
        "hotplay.stacks.stack": {
            "name": "software-{{ inventory_hostname }}",
            "template": SOFTWARE,
            "store": store_url,
            "parameters": {"server": "{{ inventory_hostname }}", "app_root": "{{ app_root }}",
                           "version": "{{ version }}", "update_after_time": "{{ update_after_time }}",
                           # The failure is injected on one host's stack only.
                           "fail_on": "{{ inventory_hostname if inventory_hostname == "
                                      "(broken_host | default('')) else '' }}"},
        },
        "register": "software",
    }
    rescue = [
        {"name": "Roll this host's stack back", "register": "rolled",
         "hotplay.stacks.stack_rollback": {"name": "software-{{ inventory_hostname }}",
                                           "store": store_url}},
        {"name": "Stop the roll", "ansible.builtin.fail": {
            "msg": "{{ inventory_hostname }}: {{ software.msg }}; rolled back: {{ rolled.stack_status }}"}},
    ]
    return [{"name": "Roll the software", "hosts": "app", "gather_facts": False, "serial": 2,
             "max_fail_percentage": 0, "tasks": [{"block": [stack_task], "rescue": rescue}]}]


def roll(tmp_path: Path, store_url: str, **variables: str) -> subprocess.CompletedProcess[str]:
    playbook = tmp_path / "roll.yml"
    playbook.write_text(yaml.safe_dump(roll_play(store_url), sort_keys=False))
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_HOST_KEY_CHECKING": "false"}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(inventory_path(tmp_path)), str(playbook),
         "-e", json.dumps(variables)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)


def inventory_path(tmp_path: Path) -> Path:
    path = tmp_path / "inventory.yml"
    return path if path.exists() else inventory(tmp_path)


def app_file(tmp_path: Path, host: str, name: str) -> str | None:
    path = tmp_path / "hosts" / host / "app" / name
    return path.read_text().strip() if path.exists() else None


def stacks(store_url: str) -> dict[str, tuple[str, int]]:
    rows = store_rows(store_url, "SELECT name, action || '_' || status, revision FROM stacks"
                                 " WHERE parent_id IS NULL AND deleted = 0")
    return {name: (status, revision) for name, status, revision in rows}


def test_rolling_update_stops_at_a_failed_batch_and_resumes(tmp_path, store_url):
    created = roll(tmp_path, store_url, version="1.0", update_after_time="t0")
    assert created.returncode == 0, created.stdout + created.stderr
    assert {h: app_file(tmp_path, h, "installed") for h in HOSTS} == dict.fromkeys(HOSTS, "1.0")
    # The UPDATE-only deployment does not run on create.
    assert {h: app_file(tmp_path, h, "running") for h in HOSTS} == dict.fromkeys(HOSTS)

    failed = roll(tmp_path, store_url, version="2.0", update_after_time="t1", broken_host="app4")
    assert failed.returncode != 0
    assert "app4: UPDATE_FAILED: Resource UPDATE failed: Error: resources.upgrade: Deployment to " \
           "server failed" in failed.stdout
    assert "upgrade to 2.0 failed on app4" in failed.stdout
    running = {h: app_file(tmp_path, h, "running") for h in HOSTS}
    # app4's rollback ran its upgrade deployment again with the previous inputs: 1.0.
    assert running == {"app1": "2.0", "app2": "2.0", "app3": "2.0", "app4": "1.0", "app5": None}
    state = stacks(store_url)
    assert state["software-app4"][0] == "ROLLBACK_COMPLETE"
    assert state["software-app5"] == ("CREATE_COMPLETE", 1)  # never reached
    assert all(state[f"software-app{i}"] == ("UPDATE_COMPLETE", 2) for i in (1, 2, 3))

    fixed = roll(tmp_path, store_url, version="2.0", update_after_time="t1")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert {h: app_file(tmp_path, h, "running") for h in HOSTS} == dict.fromkeys(HOSTS, "2.0")
    after = stacks(store_url)
    assert all(after[f"software-app{i}"] == ("UPDATE_COMPLETE", 2) for i in (1, 2, 3))
    assert after["software-app5"][0] == "UPDATE_COMPLETE"
    # Hosts 1 to 3 ran their upgrade once: the markers kept the re-run from repeating it.
    assert app_file(tmp_path, "app1", "upgrades") == "t1"
    recap = fixed.stdout[fixed.stdout.index("PLAY RECAP"):]
    for host in ("app1", "app2", "app3"):
        assert f"{host}" in recap and "changed=0" in recap.split(host)[1].split("\n")[0]
