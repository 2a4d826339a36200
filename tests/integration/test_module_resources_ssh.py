# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module resources over real SSH (the test bed's network-namespace hosts, each
with its own sshd and /srv): 20 copy resources on the play host run side by side,
each file gets exactly its own content, and neither the host's remote tmp nor the
controller's local tmp keeps a temporary file; a resource with ``host`` reaches
another inventory host from the play host's task."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from concurrency_checks import concurrent_files_template, expected_content, most_at_once
from conftest import BIN, HARNESS_ENV, INSTALLED, dump_task, every_registered
from ssh_hosts import SshHosts, start_hosts

CASE = "module-resources"  # this test's directory under each host's /srv

# One worker for the module: its module-scoped fixture starts once (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("module-resources-ssh")


@pytest.fixture(scope="module")
def ssh_hosts() -> Iterator[SshHosts]:
    hosts = start_hosts(2)
    try:
        yield hosts
    finally:
        hosts.down()


def play_on_node1(hosts: SshHosts, directory: Path, name: str, tasks: list[dict[str, Any]],
                  local_tmp: Path) -> dict[str, Any]:
    """Run ``tasks`` in a play on node1 (its /srv/CASE/rtmp as remote tmp); the
    registered results, read back through a file on the controller."""
    dump = directory / f"{name}-results.json"
    play = [{"name": name, "hosts": "node1", "gather_facts": False,
             "vars": {"ansible_remote_tmp": f"/srv/{CASE}/rtmp"},
             "module_defaults": {"group/hotplay.stacks.stacks": {
                 "store": f"sqlite:///{directory / 'store.db'}"}},
             "tasks": [{**task, "ignore_errors": True} for task in tasks] + [dump_task(dump, every_registered(tasks))]}]
    playbook = directory / f"{name}.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_HOST_KEY_CHECKING": "false", "ANSIBLE_LOCAL_TEMP": str(local_tmp), **HARNESS_ENV,
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)  # the installed collection, not the source tree
    # Delegated to localhost (the implicit one): the controller, with its own Python.
    command = [str(BIN / "ansible-playbook"), "-i", str(hosts.inventory), str(playbook)]
    done = subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert dump.exists(), done.stdout + done.stderr
    return json.loads(dump.read_text())


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def test_twenty_module_resources_over_ssh_run_side_by_side_and_leave_no_temporary_files(
        ssh_hosts, tmp_path):
    files, remote_tmp = ssh_hosts.srv(1) / CASE / "files", ssh_hosts.srv(1) / CASE / "rtmp"
    files.mkdir(parents=True, exist_ok=True)
    local_tmp = tmp_path / "local-tmp"
    local_tmp.mkdir()
    template = tmp_path / "many.yaml"
    template.write_text(concurrent_files_template(20))
    stack = {"name": "many", "template": str(template), "parameters": {"root": f"/srv/{CASE}/files"}}
    results = play_on_node1(ssh_hosts, tmp_path, "many", [
        {"name": "Apply", "hotplay.stacks.stack": stack, "register": "created"},
        {"name": "Controller temporary files", "delegate_to": "localhost", "ansible.builtin.find": {
            "paths": str(local_tmp), "recurse": True, "file_type": "file", "hidden": True},
         "register": "local_files"},
    ], local_tmp)
    created = results["created"]
    assert created["stack_status"] == "CREATE_COMPLETE", created.get("msg")
    assert most_at_once(created["events"], "many") > 1
    assert sorted(p.name for p in files.iterdir()) == sorted(f"file{i}.txt" for i in range(20))
    for index in range(20):
        assert (files / f"file{index}.txt").read_text() == expected_content(index)
    assert created["outputs"]["checksums"] == [sha1(expected_content(i)) for i in range(20)]
    assert [f["path"] for f in results["local_files"]["files"]
            if "/ansiballz_cache/" not in f["path"]] == []
    assert list(remote_tmp.iterdir()) == []
    assert list(local_tmp.iterdir()) == []

    deleted = play_on_node1(ssh_hosts, tmp_path, "delete", [
        {"name": "Delete", "hotplay.stacks.stack": {"name": "many", "state": "absent"},
         "register": "deleted"}], local_tmp)["deleted"]
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted.get("msg")
    assert list(files.iterdir()) == [] and list(remote_tmp.iterdir()) == []
    assert list(local_tmp.iterdir()) == []


def test_a_module_resource_reaches_another_host_from_the_play_host(ssh_hosts, tmp_path):
    local_tmp = tmp_path / "local-tmp"
    local_tmp.mkdir()
    for number in (1, 2):
        (ssh_hosts.srv(number) / CASE / "other").mkdir(parents=True, exist_ok=True)
    template = tmp_path / "other.yaml"
    template.write_text(concurrent_files_template(3, host="node2"))
    stack = {"name": "other", "template": str(template), "parameters": {"root": f"/srv/{CASE}/other"}}
    results = play_on_node1(ssh_hosts, tmp_path, "other", [
        {"name": "Apply", "hotplay.stacks.stack": stack, "register": "created"},
        {"name": "Drift", "hotplay.stacks.stack_info": {"name": "other", "drift": True, "events": False},
         "register": "clean"},
        {"name": "Edit by hand on node2", "delegate_to": "node2", "ansible.builtin.copy": {
            "dest": f"/srv/{CASE}/other/file1.txt", "content": "edited\n"}},
        {"name": "Drift again", "hotplay.stacks.stack_info": {"name": "other", "drift": True,
                                                              "events": False},
         "register": "drifted"},
    ], local_tmp)
    assert results["created"]["stack_status"] == "CREATE_COMPLETE", results["created"].get("msg")
    assert sorted(p.name for p in (ssh_hosts.srv(2) / CASE / "other").iterdir()) == [
        "file0.txt", "file1.txt", "file2.txt"]
    assert list((ssh_hosts.srv(1) / CASE / "other").iterdir()) == []  # nothing on the play host
    assert results["clean"]["drifted"] == []
    assert results["drifted"]["drifted"] == ["file1"]
    assert results["drifted"]["drift"]["file1"]["changed_keys"] == ["content"]
    # node2 ran the modules; node1 (the play host) may have run nothing at all.
    assert list((ssh_hosts.srv(2) / CASE / "rtmp").iterdir()) == []
    play_host_tmp = ssh_hosts.srv(1) / CASE / "rtmp"
    assert not play_host_tmp.exists() or list(play_host_tmp.iterdir()) == []
