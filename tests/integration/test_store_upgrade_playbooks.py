# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Upgrading a store while a job of the older version runs (issue 28, item 4), with a
real ansible-playbook apply of this version: a store at schema version 2 in which
a job of that version holds stack web's lock (its ``locks`` row, and on PostgreSQL
its session's advisory lock) is not upgraded, and the apply does nothing, until
that job lets go; then the next apply upgrades the store and applies.

The old store and the old job: tests/unit/plugins/plugin_utils/old_store.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from conftest import REPO, write_template
from test_lock_leases import TEMPLATE, Job

sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "plugin_utils"))
from old_store import OldJob, make_schema_2_store, schema_version, stored, tables  # noqa: E402 pylint: disable=wrong-import-position
from pg_backends import pg_server, pg_url  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position

from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sql import SCHEMA_VERSION  # noqa: E402 pylint: disable=wrong-import-position


@pytest.fixture(params=["sqlite", "postgresql"])
def old_url(request, tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    make_schema_2_store(url)
    return url


def test_an_apply_waits_for_a_job_of_the_old_version_to_let_go_then_upgrades_and_applies(old_url, tmp_path):
    write_template(tmp_path, "web.yaml", TEMPLATE)
    (tmp_path / "files").mkdir()
    old = OldJob(old_url, "web", "ansible-playbook (root@old-ee, task 'Apply web')")
    try:
        refused = Job(tmp_path, "during", old_url, "new").result()
        assert refused["failed"] and not refused["changed"]
        assert re.search(r"is in use by an older hotplay.stacks \(schema version 2\): stack web is locked by "
                         rf"ansible-playbook \(root@old-ee, task 'Apply web'\) \(pid {old.pid} on \S+, since \S+\), a "
                         "job of that version. Upgrading the store .* so nothing was changed. Let that job finish",
                         refused["msg"]), refused["msg"]
        # It applied nothing, and the old job's lock is still there, in a store left at version 2.
        assert not list((tmp_path / "files").iterdir())
        assert stored(old_url, "SELECT stack_name, pid FROM locks") == [("web", old.pid)]
        assert schema_version(old_url) == 2 and "leases" not in tables(old_url)
        old.release()  # the old job is done with the stack
        applied = Job(tmp_path, "after", old_url, "new").result()
    finally:
        old.end()
    assert not applied["failed"], applied["msg"]
    assert applied["stack_status"] == "CREATE_COMPLETE"
    assert {f.name for f in (tmp_path / "files").iterdir()} == {"marker-new"}
    assert schema_version(old_url) == SCHEMA_VERSION and "locks" not in tables(old_url)
