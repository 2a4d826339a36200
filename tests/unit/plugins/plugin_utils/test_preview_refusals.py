# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A preview lists what the apply would refuse (plan.refused), nested resources too,
writes nothing, and the apply still refuses."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

MAIN = """\
    heat_template_version: 2018-08-31
    parameters:
      word: {type: string, default: a}
    resources:
      group:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          resource_def:
            type: OS::Heat::TestResource
            properties: {value: {get_param: word}, update_replace: true}
    """
ENVIRONMENT = """\
    resource_registry:
      resources:
        group:
          "0": {restricted_actions: replace}
    """


def test_nested_refusals_listed_and_nothing_written(tmp_path: Path) -> None:
    (tmp_path / "main.yaml").write_text(textwrap.dedent(MAIN))
    (tmp_path / "env.yaml").write_text(textwrap.dedent(ENVIRONMENT))
    store = SqliteStore(str(tmp_path / "store.db"))

    def apply(**options) -> dict:
        request = ApplyRequest(name="s", template=str(tmp_path / "main.yaml"),
                               environment=[str(tmp_path / "env.yaml")], **options)
        return apply_stack(store, request, "test").as_dict()

    try:
        created = apply()
        preview = apply(parameters={"word": "b"}, prevent_destroy=["group/1"], check_mode=True)
        applied = apply(parameters={"word": "b"}, prevent_destroy=["group/1"])
    finally:
        store.close()
    assert preview["failed"] is False and preview["changed"] is True
    assert preview["plan"]["replaced"] == ["group/0", "group/1"]
    assert [(r["resource"], r["action"]) for r in preview["plan"]["refused"]] == [
        ("group/0", "replaced"), ("group/1", "replaced")]
    assert preview["revision"] == created["revision"]
    assert applied["failed"] is True
    assert "resources.group/0: replace is restricted for resource." in applied["msg"]
    assert applied["revision"] == created["revision"]
