# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One return vocabulary: stack, stack_rollback and stack_adopt return the stack as
stack_info does (``stack.id``, ``stack.status``, ...), the flat names as deprecated
aliases; prevent_destroy holds for ``state: absent`` as docs/updates.md says."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from conftest import write_template

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      v: {type: string, default: one}
    resources:
      value:
        type: OS::Heat::Value
        properties: {value: {get_param: v}}
    """
SUMMARY_KEYS = {"id", "name", "status", "status_reason", "created", "updated", "revision", "tags",
                "deletion_protection"}


def test_every_stack_action_returns_the_stack_as_stack_info_does(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "value.yaml", TEMPLATE))
    abandon = str(tmp_path / "abandon.json")
    run = run_tasks([
        {"hotplay.stacks.stack": {"name": "vocab", "template": template, "tags": ["a"]}, "register": "applied"},
        {"hotplay.stacks.stack": {"name": "vocab", "template": template, "parameters": {"v": "two"}},
         "register": "updated"},
        {"hotplay.stacks.stack_rollback": {"name": "vocab"}, "register": "rolled_back"},
        {"hotplay.stacks.stack_info": {"name": "vocab", "format": "heat_abandon", "dest": abandon},
         "register": "info"},
    ])
    # Adopted as another Heat stack: the same one is refused (managed here already).
    exported = json.loads(Path(abandon).read_text())
    Path(abandon).write_text(json.dumps({**exported, "id": str(uuid.uuid4()), "name": "adopted"}))
    run.results.update(run_tasks([
        {"hotplay.stacks.stack_adopt": {"abandon_file": abandon}, "register": "adopted"},
    ], name="adopt").results)
    info = run.results["info"]["stack"]
    assert SUMMARY_KEYS <= set(info), info
    for name in ("applied", "updated", "rolled_back", "adopted"):
        result = run.results[name]
        assert set(result["stack"]) == SUMMARY_KEYS, (name, result)
        # The deprecated flat names say the same.
        assert result["stack_id"] == result["stack"]["id"]
        assert result["stack_status"] == result["stack"]["status"]
        assert result["stack_status_reason"] == result["stack"]["status_reason"]
    rolled_back = run.results["rolled_back"]["stack"]
    assert rolled_back["status"] == "ROLLBACK_COMPLETE" and rolled_back["revision"] == 3
    assert {k: info[k] for k in SUMMARY_KEYS} == rolled_back
    assert run.results["adopted"]["stack"]["name"] == "adopted", run.results["adopted"]
    assert run.results["adopted"]["stack"]["status"] == "ADOPT_COMPLETE"


def test_prevent_destroy_refuses_a_deletion_of_a_matching_stack(run_tasks, tmp_path):
    template = str(write_template(tmp_path, "value.yaml", TEMPLATE))
    run = run_tasks([
        {"hotplay.stacks.stack": {"name": "kept", "template": template}, "register": "applied"},
        {"hotplay.stacks.stack": {"name": "kept", "state": "absent", "prevent_destroy": ["OS::Heat::*"]},
         "register": "refused"},
        {"hotplay.stacks.stack_info": {"name": "kept"}, "register": "info"},
    ])
    refused = run.results["refused"]
    assert refused["failed"] and refused["changed"] is False
    assert refused["msg"].startswith("Refusing to apply: 1 protected resource(s) would be deleted"), refused
    assert run.results["info"]["stack"]["status"] == "CREATE_COMPLETE"
