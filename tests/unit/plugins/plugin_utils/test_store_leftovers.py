# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a killed process leaves of SQLite stores is removed by the next one, and the
directories a store creates are private whatever the umask (issue 28, item 8;
store.files)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.files import (
    SCRATCH_LOCK,
    STALE_BUILD_SECONDS,
    make_private_directories,
    remove_abandoned_scratch,
    remove_stale_builds,
    scratch_directory,
)

OLD = time.time() - STALE_BUILD_SECONDS - 60


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def dead_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    return int(finished.stdout)


@pytest.fixture
def open_umask():
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_the_directories_a_store_creates_are_private_under_umask_000(tmp_path: Path, open_umask,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kept").mkdir(mode=0o755)
    make_private_directories(str(tmp_path / "kept" / "a" / "b"))
    assert mode(tmp_path / "kept") == 0o755  # not made here: left as it is
    assert mode(tmp_path / "kept" / "a") == 0o700 and mode(tmp_path / "kept" / "a" / "b") == 0o700
    # The default store: $XDG_DATA_HOME and hotplay/ under it, made here.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "data"))
    monkeypatch.delenv("HOTPLAY_STORE", raising=False)
    open_store(None).close()
    for made in ("home", "home/data", "home/data/hotplay"):
        assert mode(tmp_path / made) == 0o700, made


def test_build_files_of_gone_processes_are_removed(tmp_path: Path) -> None:
    path = tmp_path / "stacks.db"
    gone, young, live = (tmp_path / f"stacks.db.new-{pid}-0a1b2c3d"
                         for pid in (dead_pid(), dead_pid(), os.getpid()))
    # SQLite's files beside a killed build (issue 40, item 8): the build's too.
    companions = [Path(f"{gone}{suffix}") for suffix in ("-wal", "-shm", "-journal")]
    live_wal = Path(f"{live}-wal")
    for left in (gone, young, live, *companions, live_wal):
        left.write_bytes(b"")
        os.utime(left, (OLD, OLD))
    os.utime(young, None)
    other = tmp_path / "stacks.db.new-notapid"
    other.write_bytes(b"")
    assert sorted(remove_stale_builds(str(path))) == sorted(map(str, [gone, *companions]))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([young.name, live.name, live_wal.name,
                                                                 other.name])
    # Opening the store does it.
    os.utime(young, (OLD, OLD))
    open_store(f"sqlite:///{path}").close()
    assert not young.exists() and live.exists() and live_wal.exists()


def test_scratch_directories_nobody_holds_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    killed = subprocess.run(
        [sys.executable, "-c",
         "import os, signal\n"
         "from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.files import scratch_directory\n"
         "with scratch_directory('hotplay-test-') as d:\n"
         "    open(os.path.join(d, 'adopt.db'), 'w').close()\n"
         "    os.kill(os.getpid(), signal.SIGKILL)\n"],
        env={**os.environ, "TMPDIR": str(tmp_path)}, check=False)
    assert killed.returncode == -9
    left = [p for p in tmp_path.iterdir() if p.name.startswith("hotplay-test-")]
    assert len(left) == 1 and (left[0] / SCRATCH_LOCK).exists()
    legacy = tmp_path / "hotplay-test-legacy"
    legacy.mkdir()
    os.utime(legacy, (OLD, OLD))
    fresh = tmp_path / "hotplay-test-fresh"  # no lock file yet: being made right now
    fresh.mkdir()
    with scratch_directory("hotplay-test-") as mine:
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([Path(mine).name, fresh.name])
        assert remove_abandoned_scratch("hotplay-test-") == []  # held: in use
    assert sorted(p.name for p in tmp_path.iterdir()) == [fresh.name]
