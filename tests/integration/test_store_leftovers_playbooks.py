# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Through real ansible-playbook (issue 28, item 8): what killed processes left of
SQLite stores (an adoption's scratch store, a store's build file) is removed by the
next run, and the directories the default store creates are private under umask 000."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import run_playbook

STALE = time.time() - 3600


def killed_adoption_scratch(tmp: Path) -> Path:
    """A process killed (SIGKILL) while it held an adoption's scratch store."""
    code = ("import os, signal\n"
            "from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import SCRATCH_PREFIX\n"
            "from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.files import scratch_directory\n"
            "with scratch_directory(SCRATCH_PREFIX) as d:\n"
            "    open(os.path.join(d, 'adopt.db'), 'w').close()\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n")
    killed = subprocess.run([sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(tmp)}, check=False)
    assert killed.returncode == -signal.SIGKILL
    [left] = [p for p in tmp.iterdir() if p.name.startswith("hotplay-adopt-")]
    return left


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A TMPDIR with a short path: ansible-core puts its controller's RPC socket there,
    and a socket path beyond 107 bytes (pytest's tmp_path can make one) cannot be bound,
    which ansible-playbook reports as "Local RPC server did not start"."""
    made = Path(tempfile.mkdtemp(prefix="hp-"))
    yield made
    shutil.rmtree(made, ignore_errors=True)


def test_what_killed_jobs_left_is_removed_by_the_next_run(run_tasks, store_url: str, tmp_path: Path,
                                                          short_tmp: Path) -> None:
    tmp = short_tmp
    scratch = killed_adoption_scratch(tmp)
    store = Path(store_url[len("sqlite:///"):])
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    build = store.with_name(f"{store.name}.new-{int(finished.stdout)}-0badf00d")
    build.write_bytes(b"")
    os.utime(build, (STALE, STALE))
    abandon = tmp_path / "web.json"
    abandon.write_text(json.dumps({"name": "web", "id": "ffffffff-0000-0000-0000-000000000006",
                                   "template": {"heat_template_version": "2018-08-31",
                                                "resources": {"v": {"type": "OS::Heat::None"}}},
                                   "resources": {"v": {"name": "v", "resource_id": "web-v-x",
                                                       "type": "OS::Heat::None"}}}))
    run = run_tasks([{"hotplay.stacks.stack_adopt": {"abandon_file": str(abandon)}, "register": "adopted"}],
                    env={"TMPDIR": str(tmp)})
    assert "adopted" in run.results, run.stdout + run.stderr
    assert run.results["adopted"]["stack_status"] == "ADOPT_COMPLETE", run.results["adopted"].get("msg")
    assert not scratch.exists() and not build.exists()
    assert [p.name for p in tmp.iterdir() if p.name.startswith("hotplay-adopt-")] == []


def test_the_default_store_directories_are_private_under_umask_000(tmp_path: Path) -> None:
    playbook = tmp_path / "info.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"hotplay.stacks.stack_info": {}, "register": "listed"},
        {"ansible.builtin.assert": {"that": ["listed.stacks == []"]}}]}]))
    environment = {"XDG_DATA_HOME": str(tmp_path / "home" / "data"), "HOTPLAY_STORE": ""}
    previous = os.umask(0)  # inherited by ansible-playbook
    try:
        run = run_playbook(playbook, tmp_path, environment)
    finally:
        os.umask(previous)
    assert run.returncode == 0, run.stdout + run.stderr
    for made in ("home", "home/data", "home/data/hotplay"):
        assert stat.S_IMODE((tmp_path / made).stat().st_mode) == 0o700, made
    assert stat.S_IMODE((tmp_path / "home/data/hotplay/stacks.db").stat().st_mode) == 0o600
