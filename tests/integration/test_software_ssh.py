# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seed scenario's rolling software update over real SSH: hosts are network
namespaces with their own sshd, hostname and /srv (the shared test bed's
netns_hosts.sh), so deployments travel over the play's SSH connection and a host
can really drop off the network in the middle of its deployment.

- three hosts rolled with ``serial: 1``: files land on each host, a re-run changes
  nothing;
- a host cut off while its upgrade script runs: UNREACHABLE, the roll stops there,
  later hosts are untouched, the store does not call that deployment COMPLETE; once
  the host is back, the same run finishes the roll and leaves earlier hosts alone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import BIN, EXAMPLES, INSTALLED, store_rows
from processes import kill_tree
from ssh_hosts import SshHosts, start_hosts, wait_for

SOFTWARE = EXAMPLES / "software" / "app_software.yaml"
PAUSE_SECONDS = 4  # the cut host's upgrade script sleeps this long; the cut lands inside it

# One worker for the module: its module-scoped fixture starts once (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("software-ssh")


@pytest.fixture(scope="module")
def ssh_hosts() -> Iterator[SshHosts]:
    hosts = start_hosts(3)
    try:
        yield hosts
    finally:
        hosts.down()


def paused_template(directory: Path) -> Path:
    """The seed template, with an upgrade that announces itself on the host of
    ``pause_on`` (a file beside the app) and then sleeps before doing its work."""
    template = yaml.safe_load(SOFTWARE.read_text())
    template["parameters"]["pause_on"] = {"type": "string", "default": "",
                                          "description": "Test hook - the upgrade pauses on this host."}
    config = template["resources"]["upgrade_config"]["properties"]
    config["inputs"].append({"name": "pause_on"})
    script = config["config"]
    pause = ('set -eu\nif [ "$pause_on" = "$deploy_server_id" ]; then\n'
             '  touch "$app_root/upgrade-started"\n'
             f'  sleep {PAUSE_SECONDS}\nfi\n')
    assert "set -eu\n" in script
    config["config"] = script.replace("set -eu\n", pause, 1)
    template["resources"]["upgrade"]["properties"]["input_values"]["pause_on"] = {"get_param": "pause_on"}
    path = directory / "app_software_paused.yaml"
    path.write_text(yaml.safe_dump(template, sort_keys=False))
    return path


def roll_playbook(directory: Path, store_url: str, case: str, template: Path) -> Path:
    """One stack per host, rolled one host at a time; any failed or unreachable host stops it."""
    parameters = {"server": "{{ inventory_hostname }}", "app_root": "{{ app_root }}",
                  "version": "{{ version }}", "update_after_time": "{{ update_after_time }}"}
    if template != SOFTWARE:
        parameters["pause_on"] = ("{{ inventory_hostname if inventory_hostname == "
                                  "(pause_host | default('')) else '' }}")
    play = [{
        "name": "Roll the software", "hosts": "nodes", "gather_facts": False,
        "serial": 1, "max_fail_percentage": 0,
        # /srv is each host's own; the case's subdirectory keeps the tests apart.
        "vars": {"app_root": f"/srv/{case}/app", "hotplay_state_dir": f"/srv/{case}/state"},
        "tasks": [{
            "name": "Apply the host's software stack",
            "hotplay.stacks.stack": {"name": "software-{{ inventory_hostname }}",
                                     "template": str(template), "store": store_url,
                                     "parameters": parameters},
            "register": "software",
        }],
    }]
    path = directory / f"roll-{case}.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    return path


def playbook_command(hosts: SshHosts, playbook: Path, **variables: str) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_HOST_KEY_CHECKING": "false",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)  # the installed collection, not the source tree
    # Ansible's defaults (no pipelining): the test's UNREACHABLE verdict depends on them.
    env.pop("ANSIBLE_PIPELINING", None)
    command = [str(BIN / "ansible-playbook"), "-i", str(hosts.inventory), str(playbook),
               "-e", json.dumps(variables)]
    return command, env


def roll(hosts: SshHosts, playbook: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    command, env = playbook_command(hosts, playbook, **variables)
    return subprocess.run(command, cwd=playbook.parent, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def recap(stdout: str) -> dict[str, dict[str, int]]:
    """PLAY RECAP counters per host."""
    counts = {}
    for line in stdout[stdout.rindex("PLAY RECAP"):].splitlines()[1:]:
        match = re.match(r"^(\S+)\s*:\s*(.*)$", line)
        if match:
            counts[match[1]] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match[2])}
    return counts


def host_file(hosts: SshHosts, number: int, case: str, name: str) -> str | None:
    path = hosts.srv(number) / case / "app" / name
    return path.read_text().strip() if path.exists() else None


def stacks(store_url: str) -> dict[str, tuple[str, int]]:
    rows = store_rows(store_url, "SELECT name, action || '_' || status, revision FROM stacks"
                                 " WHERE parent_id IS NULL AND deleted = 0")
    return {name: (status, revision) for name, status, revision in rows}


def upgrade_row(store_url: str, host: str) -> tuple[str, str, str]:
    rows = store_rows(store_url, "SELECT r.action, r.status, r.status_reason FROM resources r"
                                 " JOIN stacks s ON s.id = r.stack_id"
                                 f" WHERE s.name = 'software-{host}' AND s.deleted = 0"
                                 " AND r.name = 'upgrade' AND r.retired_in = 0")
    assert len(rows) == 1, rows
    return rows[0]


def output(run: subprocess.CompletedProcess[str]) -> str:
    return f"rc={run.returncode}\n{run.stdout}\n{run.stderr}"


def test_roll_over_ssh_lands_on_each_host_and_rerun_changes_nothing(ssh_hosts, tmp_path, store_url):
    case = "roll"
    playbook = roll_playbook(tmp_path, store_url, case, SOFTWARE)
    numbers = range(1, ssh_hosts.count + 1)

    created = roll(ssh_hosts, playbook, version="1.0", update_after_time="t0")
    assert created.returncode == 0, output(created)
    assert created.stdout.count("PLAY [Roll the software]") == 3  # one batch per host
    assert {n: host_file(ssh_hosts, n, case, "installed") for n in numbers} == dict.fromkeys(numbers, "1.0")
    assert {n: host_file(ssh_hosts, n, case, "running") for n in numbers} == dict.fromkeys(numbers)
    # Over SSH: each host sees its own /srv, under its own hostname.
    seen = ssh_hosts.ssh(2, f"hostname; cat /srv/{case}/app/installed; ls /srv/{case}/state | wc -l")
    assert seen.stdout.split() == ["node2", "1.0", "1"], seen

    upgraded = roll(ssh_hosts, playbook, version="2.0", update_after_time="t1")
    assert upgraded.returncode == 0, output(upgraded)
    assert {n: host_file(ssh_hosts, n, case, "running") for n in numbers} == dict.fromkeys(numbers, "2.0")
    assert all(c["changed"] == 1 for c in recap(upgraded.stdout).values()), output(upgraded)

    again = roll(ssh_hosts, playbook, version="2.0", update_after_time="t1")
    assert again.returncode == 0, output(again)
    counts = recap(again.stdout)
    assert sorted(counts) == ssh_hosts.names
    assert all(c["changed"] == 0 and c["unreachable"] == 0 and c["failed"] == 0
               for c in counts.values()), output(again)
    # The upgrade ran once per host.
    assert {n: host_file(ssh_hosts, n, case, "upgrades") for n in numbers} == dict.fromkeys(numbers, "t1")
    assert set(stacks(store_url).values()) == {("UPDATE_COMPLETE", 2)}


def test_host_cut_off_mid_deployment_stops_the_roll_and_rerun_finishes(ssh_hosts, tmp_path, store_url):
    case = "cut"
    playbook = roll_playbook(tmp_path, store_url, case, paused_template(tmp_path))
    created = roll(ssh_hosts, playbook, version="1.0", update_after_time="t0")
    assert created.returncode == 0, output(created)

    # The upgrade roll: node2's upgrade pauses; cut node2 off while it sleeps.
    variables = {"version": "2.0", "update_after_time": "t1", "pause_host": "node2"}
    command, env = playbook_command(ssh_hosts, playbook, **variables)
    log = tmp_path / "cut-run.log"
    with log.open("w") as sink:
        process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=sink,
                                   stderr=subprocess.STDOUT, text=True)
        try:
            started = wait_for(ssh_hosts.srv(2) / case / "app" / "upgrade-started", timeout=90)
            if started:
                ssh_hosts.cut(2)
            returncode = process.wait(timeout=180)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    text = log.read_text()
    assert started, f"node2's upgrade never started:\n{text}"
    try:
        assert returncode != 0, text
        counts = recap(text)
        assert counts["node2"]["unreachable"] == 1, text
        assert re.search(r"fatal: \[node2\]: UNREACHABLE!", text), text
        assert counts["node1"]["changed"] == 1 and counts["node1"]["failed"] == 0, text
        # The roll stopped at node2: node3 never ran (no batch, nothing on the host).
        assert "node3" not in counts or counts["node3"]["ok"] == 0, text
        assert host_file(ssh_hosts, 1, case, "running") == "2.0"
        assert host_file(ssh_hosts, 3, case, "running") is None
        state = stacks(store_url)
        assert state["software-node3"] == ("CREATE_COMPLETE", 1), state
        assert state["software-node1"] == ("UPDATE_COMPLETE", 2), state
        assert state["software-node2"][0] != "UPDATE_COMPLETE", state
        # The store never claims a deployment it did not see finish.
        action, status, reason = upgrade_row(store_url, "node2")
        assert action == "UPDATE" and status in ("FAILED", "IN_PROGRESS"), (action, status, reason)
    finally:
        ssh_hosts.heal(2)

    resumed = roll(ssh_hosts, playbook, **variables)
    assert resumed.returncode == 0, output(resumed)
    counts = recap(resumed.stdout)
    assert sorted(counts) == ssh_hosts.names, output(resumed)
    assert counts["node1"]["changed"] == 0, output(resumed)
    assert all(c["unreachable"] == 0 and c["failed"] == 0 for c in counts.values()), output(resumed)
    # (node2's file comes from the interrupted run, which finished on the cut-off host)
    assert {n: host_file(ssh_hosts, n, case, "running") for n in (1, 2, 3)} == dict.fromkeys((1, 2, 3), "2.0")
    assert host_file(ssh_hosts, 1, case, "upgrades") == "t1"  # node1 did not run it again
    assert host_file(ssh_hosts, 3, case, "upgrades") == "t1"
    state = stacks(store_url)
    assert state["software-node1"] == ("UPDATE_COMPLETE", 2), state
    assert all(state[f"software-node{n}"][0] == "UPDATE_COMPLETE" for n in (2, 3)), state
    rows = {h: upgrade_row(store_url, h) for h in ssh_hosts.names}
    # node2's failed deployment runs its UPDATE again on the re-run (not replaced by
    # a CREATE that an UPDATE-only deployment would skip).
    assert all(row[1] == "COMPLETE" for row in rows.values()), rows
    running = {h: json.loads(o).get("running_version") for h, o in store_rows(
        store_url, "SELECT substr(name, 10), outputs FROM stacks WHERE parent_id IS NULL AND deleted = 0")}
    assert running["node1"] == running["node3"] == "2.0\n", running
    # node2's interrupted UPDATE ran again on the re-run and was seen to finish.
    assert running["node2"] == "2.0\n", running


def test_job_killed_mid_deployment_is_never_recorded_done_and_rerun_finishes(ssh_hosts, tmp_path, store_url):
    """SIGKILL the whole ansible-playbook job while node1's upgrade runs on it (an
    AWX job killed, a controller lost): the store says the upgrade is in progress,
    never complete; the next run runs it again and finishes the roll."""
    case = "killed"
    playbook = roll_playbook(tmp_path, store_url, case, paused_template(tmp_path))
    assert roll(ssh_hosts, playbook, version="1.0", update_after_time="t0").returncode == 0
    variables = {"version": "2.0", "update_after_time": "t1", "pause_host": "node1"}
    command, env = playbook_command(ssh_hosts, playbook, **variables)
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        started = wait_for(ssh_hosts.srv(1) / case / "app" / "upgrade-started", timeout=90)
    finally:
        kill_tree(process.pid)  # the job and its workers, as a lost controller
        process.wait()
    assert started, "node1's upgrade never started"
    action, status, _reason = upgrade_row(store_url, "node1")
    assert (action, status) == ("UPDATE", "IN_PROGRESS")
    assert stacks(store_url)["software-node1"][0] == "UPDATE_IN_PROGRESS"

    resumed = roll(ssh_hosts, playbook, **variables)
    assert resumed.returncode == 0, output(resumed)
    assert {n: host_file(ssh_hosts, n, case, "running") for n in (1, 2, 3)} == dict.fromkeys((1, 2, 3), "2.0")
    assert all(upgrade_row(store_url, h)[:2] == ("UPDATE", "COMPLETE") for h in ssh_hosts.names)
    # node1: the killed run's revision, then the re-run's; the others rolled once.
    assert stacks(store_url) == {"software-node1": ("UPDATE_COMPLETE", 3),
                                 "software-node2": ("UPDATE_COMPLETE", 2),
                                 "software-node3": ("UPDATE_COMPLETE", 2)}


GROUP_TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  servers: {type: json}
  version: {type: string}
resources:
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs: [{name: version}]
      config: |
        #!/bin/sh
        set -eu
        mkdir -p /srv/group
        echo "$version" > /srv/group/version
        hostname
  fleet:
    type: OS::Heat::SoftwareDeploymentGroup
    update_policy: {rolling_update: {max_batch_size: 1}}
    properties:
      config: {get_resource: config}
      servers: {get_param: servers}
      input_values: {version: {get_param: version}}
outputs:
  hostnames: {value: {get_attr: [fleet, deploy_stdouts]}}
"""


def test_deployment_group_from_the_controller_reaches_every_ssh_host(ssh_hosts, tmp_path, store_url):
    """One stack applied on localhost deploys to the three SSH hosts, each through
    its own inventory connection, and rolls an update across them."""
    template = tmp_path / "group.yaml"
    template.write_text(GROUP_TEMPLATE)
    play = [{"name": "Deploy to the nodes from the controller", "hosts": "localhost",
             "gather_facts": False, "vars": {"hotplay_state_dir": "/srv/group-state"},
             "tasks": [{"name": "Apply the group stack", "register": "fleet",
                        "hotplay.stacks.stack": {
                            "name": "fleet", "template": str(template), "store": store_url,
                            "parameters": {"servers": {name: name for name in ssh_hosts.names},
                                           "version": "{{ version }}"}}},
                       {"name": "Show", "ansible.builtin.debug": {"var": "fleet.outputs"}}]}]
    playbook = tmp_path / "group.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    for version in ("1.0", "2.0"):
        run = roll(ssh_hosts, playbook, version=version)
        assert run.returncode == 0, output(run)
        landed = {n: (ssh_hosts.srv(n) / "group" / "version").read_text().strip() for n in (1, 2, 3)}
        assert landed == dict.fromkeys((1, 2, 3), version), output(run)
    # Each deployment ran on its own host: the script's `hostname` is that host's.
    hostnames = {name: ssh_hosts.ssh(n, "hostname").stdout for n, name in enumerate(ssh_hosts.names, 1)}
    assert "fleet" in run.stdout
    for name, hostname in hostnames.items():
        assert hostname.strip(), f"no hostname from {name}"
        assert f'"{name}": "{hostname.strip()}\\n"' in run.stdout, output(run)
