# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two ansible-playbook processes on one stack; the shipped demo playbook by FQCN."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

import yaml

from conftest import BIN, HARNESS_ENV, INSTALLED, dump_task, run_playbook, store_rows, write_template

# Long enough for the second ansible-playbook to start and reach the lock on a loaded
# machine (its start-up alone took over 4 s at load 60, and the first had finished).
SLOW = """\
    heat_template_version: 2018-08-31
    resources:
      slow:
        type: OS::Heat::TestResource
        properties:
          wait_secs: 30
    """


def _play(tmp_path: Path, name: str, template: Path, store_url: str) -> Path:
    dump = tmp_path / f"{name}.json"
    play = [{
        "hosts": "localhost", "gather_facts": False,
        "tasks": [
            {"hotplay.stacks.stack": {"name": "shared", "template": str(template), "store": store_url},
             "register": "result", "ignore_errors": True},
            dump_task(dump, "result"),
        ],
    }]
    path = tmp_path / f"{name}.yml"
    path.write_text(yaml.safe_dump(play))
    return path


@pytest.mark.slow
def test_second_apply_of_a_running_stack_is_refused_naming_the_holder(tmp_path, store_url):
    template = write_template(tmp_path, "slow.yaml", SLOW)
    first = subprocess.Popen(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
         str(_play(tmp_path, "first", template, store_url))],
        cwd=tmp_path, env={**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
                           "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), **HARNESS_ENV},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        db = Path(store_url[len("sqlite:///"):])
        try:
            if db.exists() and store_rows(store_url, "SELECT count(*) FROM leases WHERE expires > 0") == [(1,)]:
                break
        except sqlite3.OperationalError:
            pass  # the file is there, its tables not yet
        time.sleep(0.1)
    second = run_playbook(_play(tmp_path, "second", template, store_url), tmp_path)
    first.communicate(timeout=120)
    refused = json.loads((tmp_path / "second.json").read_text())
    done = json.loads((tmp_path / "first.json").read_text())
    assert second.returncode == 0  # the failure was ignored so both results are kept
    assert refused["failed"] and "is locked by ansible-playbook" in refused["msg"], refused
    assert done["stack_status"] == "CREATE_COMPLETE"
    assert store_rows(store_url, "SELECT count(*) FROM revisions") == [(1,)]


def test_demo_playbook_runs_by_fqcn(tmp_path, store_url):
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "HOTPLAY_STORE": store_url,
           "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), "ANSIBLE_NOCOLOR": "1"}
    env.pop("PYTHONPATH", None)
    demo = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", "hotplay.stacks.demo"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "https://shop.example.com/db-shop" in demo.stdout
    assert "CREATE_COMPLETE" in demo.stdout
    assert store_rows(store_url, "SELECT name, action, status FROM stacks WHERE parent_id IS NULL") == [
        ("hotplay-demo", "CREATE", "COMPLETE")]
