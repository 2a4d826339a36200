# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SQLite store's files are private to the user, whatever the umask.

The database holds templates, parameter values and resource data; its WAL and
shared-memory files hold the same pages.  All three, and the directory made for
them, must be readable by the user alone, also under the common umask 022 and a
careless 000.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


@pytest.fixture(params=[0o022, 0o002, 0o000], ids=["umask-022", "umask-002", "umask-000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    yield request.param
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_database_wal_and_shm_files_are_private(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "state" / "stacks.db"
    store = SqliteStore(str(path))
    try:
        store.create_stack("private")  # a write: the WAL and shared-memory files exist now
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        assert all(f.exists() for f in files), [f.name for f in files if not f.exists()]
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
        assert mode(path.parent) == 0o700
    finally:
        store.close()


def test_the_default_store_is_private(tmp_path: Path, umask: int,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("HOTPLAY_STORE", raising=False)
    store = open_store(None)
    try:
        store.create_stack("private")
        database = tmp_path / "data" / "hotplay" / "stacks.db"
        assert mode(database) == 0o600 and mode(Path(f"{database}-wal")) == 0o600
        assert mode(database.parent) == 0o700
    finally:
        store.close()
