# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stack settings (tags, deletion protection) kept in a PostgreSQL store, through
real ansible-playbook runs (a throwaway server, as the store suite starts it)."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO, write_template

sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "plugin_utils"))
from pg_backends import pg_server, pg_url  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position

TEMPLATE = """\
    heat_template_version: 2018-08-31
    resources:
      value: {type: OS::Heat::Value, properties: {value: one}}
    """


@pytest.fixture
def store_url(pg_url):  # pylint: disable=redefined-outer-name
    """The store of ``run_tasks``: a fresh PostgreSQL database."""
    return pg_url


def test_tags_and_deletion_protection_in_a_postgresql_store(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "value.yaml", TEMPLATE))
    run = run_tasks([
        {"hotplay.stacks.stack": {"name": "pg", "template": template, "tags": ["env=prod"],
                                  "deletion_protection": True}, "register": "applied"},
        {"hotplay.stacks.stack": {"name": "pg", "state": "absent"}, "register": "refused"},
        {"hotplay.stacks.stack_info": {"name": "pg"}, "register": "info"},
        {"hotplay.stacks.stack": {"name": "pg", "state": "absent", "deletion_protection": False},
         "register": "deleted"},
    ])
    applied, refused, info, deleted = (run.results[k] for k in ("applied", "refused", "info", "deleted"))
    assert applied["stack"]["tags"] == ["env=prod"] and applied["stack"]["deletion_protection"], applied
    assert refused["failed"] and "has deletion protection" in refused["msg"]
    assert info["stack"]["tags"] == ["env=prod"] and info["stack"]["deletion_protection"] is True
    assert deleted["stack"]["status"] == "DELETE_COMPLETE", deleted
