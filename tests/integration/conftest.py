# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run real ansible-playbook against the collection as users install it.

`make test` builds the collection with ansible-galaxy and installs it into
.build/installed; each test gets its own SQLite store file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(os.environ.get("HOTPLAY_REPO", Path(__file__).resolve().parents[2]))
INSTALLED = REPO / ".build" / "installed"
EXAMPLES = REPO / "playbooks" / "templates"
BIN = REPO / ".venv" / "bin"
# The harness's own action plugin (dump_registered: a playbook's results to a file),
# for every playbook a test runs.
HARNESS_PLUGINS = Path(__file__).resolve().parent / "harness_plugins"
HARNESS_ENV = {"ANSIBLE_ACTION_PLUGINS": str(HARNESS_PLUGINS / "action")}


@dataclass
class PlaybookRun:
    rc: int
    stdout: str
    results: dict[str, Any]
    stderr: str = ""


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def run_tasks(tmp_path: Path, store_url: str):
    """Run a play of ``tasks`` on localhost; registered results come back by name.

    Every task registers under its ``register`` name; failures are kept
    (ignore_errors) so the test can assert on them.
    """

    def run(tasks: list[dict[str, Any]], name: str = "play", env: dict[str, str] | None = None) -> PlaybookRun:
        for task in tasks:
            task.setdefault("ignore_errors", True)
        dump = tmp_path / f"{name}-results.json"
        play = [{
            "name": name, "hosts": "localhost", "gather_facts": False,
            "module_defaults": {"group/hotplay.stacks.stacks": {"store": store_url}},
            "tasks": tasks + [dump_task(dump, every_registered(tasks))],
        }]
        playbook = tmp_path / f"{name}.yml"
        playbook.write_text(yaml.safe_dump(play, sort_keys=False))
        completed = run_playbook(playbook, tmp_path, env)
        results = json.loads(dump.read_text()) if dump.exists() else {}
        return PlaybookRun(completed.returncode, completed.stdout, results, completed.stderr)

    return run


def every_registered(tasks: list[dict[str, Any]]) -> str:
    """A Jinja expression of what ``tasks`` registered, by name (None where skipped)."""
    return "{" + ", ".join(f"'{t['register']}': {t['register']} | default(None)"
                           for t in tasks if "register" in t) + "}"


def dump_task(dest: Path, expression: str) -> dict[str, Any]:
    """A task writing the JSON of ``expression`` (what the play registered) to ``dest``,
    with the harness's dump_registered (HARNESS_ENV): it runs no module."""
    return {"name": "Dump results",
            "dump_registered": {"dest": str(dest), "content": "{{ " + expression + " | to_json }}"}}


def run_playbook(playbook: Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        playbook_command(playbook), cwd=cwd, env=playbook_environment(env), capture_output=True,
        text=True, timeout=600, check=False,
    )
    assert_worker_quiet(completed.stdout)
    return completed


def playbook_command(playbook: Path) -> list[str]:
    return [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)]


def playbook_environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """What every test's ansible-playbook runs with (``env`` on top)."""
    environment = {
        **os.environ,
        "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
        "ANSIBLE_NOCOLOR": "1",
        # Modules on localhost run with the venv's Python, not whatever discovery finds.
        "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"),
        "ANSIBLE_FORCE_COLOR": "0",
        **HARNESS_ENV,
        "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
        # Python's dev mode shows every warning and unclosed resource (scripts/test.sh);
        # without its allocator debug hooks, a tenth of the run's CPU.
        "PYTHONDEVMODE": "1",
        "PYTHONMALLOC": "default",
        **(env or {}),
    }
    environment.pop("PYTHONPATH", None)  # the installed collection, not the source tree
    return environment


def assert_worker_quiet(output: str) -> None:
    """The collection's code runs in Ansible's worker, whose stderr Ansible
    captures: anything written there (a warning of Python's dev mode, about
    forking a multi-threaded process, an unclosed file) comes back as this."""
    if "errantly sent data" in output:
        start = output.index("errantly sent data")
        pytest.fail(f"the worker wrote behind Ansible's back: {output[start - 200:start + 800]}")


def write_template(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def store_rows(store_url: str, sql: str) -> list[tuple]:
    path = store_url[len("sqlite:///"):]
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()
