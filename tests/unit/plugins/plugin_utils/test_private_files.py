# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exports with secrets in the clear are new private files renamed into place
(issue 28, item 7): 0600 whatever the umask and whatever the file they replace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.private_files import write_private
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError


@pytest.fixture
def open_umask():
    previous = os.umask(0)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_an_existing_readable_file_is_replaced_by_a_private_one(tmp_path: Path, open_umask) -> None:
    dest = tmp_path / "web.json"
    dest.write_text("old")
    dest.chmod(0o644)
    old_inode = dest.stat().st_ino
    write_private(str(dest), "secret")
    assert dest.read_text() == "secret" and mode(dest) == 0o600
    assert dest.stat().st_ino != old_inode  # a new file, not the old one rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["web.json"]  # no temporary left


def test_a_new_file_is_private_whatever_the_umask(tmp_path: Path, open_umask) -> None:
    write_private(str(tmp_path / "new.json"), "secret")
    assert mode(tmp_path / "new.json") == 0o600


def test_a_symbolic_link_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("theirs")
    link = tmp_path / "web.json"
    link.symlink_to(target)
    write_private(str(link), "secret")
    assert not link.is_symlink() and link.read_text() == "secret"
    assert target.read_text() == "theirs"


def test_a_destination_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    with pytest.raises(HotplayError, match=rf"^cannot write {tmp_path}/missing/web.json: "):
        write_private(str(tmp_path / "missing" / "web.json"), "secret")
    (tmp_path / "dir").mkdir()
    with pytest.raises(HotplayError, match=rf"^cannot write {tmp_path}/dir: "):
        write_private(str(tmp_path / "dir"), "secret")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir"]
