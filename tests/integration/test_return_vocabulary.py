# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One return vocabulary: stack, stack_rollback and stack_adopt return the stack as
stack_info does (``stack.id``, ``stack.status``, ...), the flat names as deprecated
aliases; prevent_destroy holds for ``state: absent`` as docs/updates.md says."""

from __future__ import annotations

import ast
import json
import uuid
from pathlib import Path

import yaml

from conftest import REPO, write_template

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      v: {type: string, default: one}
    resources:
      value:
        type: OS::Heat::Value
        properties: {value: {get_param: v}}
    """
# What Ansible itself adds to a result: no module documents these.
ANSIBLE_KEYS = {"changed", "failed", "msg", "warnings", "deprecations", "invocation", "exception",
                "diff", "skipped", "skip_reason"}


def documented(module: str) -> dict:
    """The RETURN documentation of a module of the collection."""
    tree = ast.parse((REPO / "plugins" / "modules" / f"{module}.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "RETURN":
            return yaml.safe_load(node.value.value)
    raise AssertionError(f"{module} has no RETURN")


def undocumented(result: dict, returned: dict, where: str = "") -> list[str]:
    """Keys of ``result`` (mappings and lists of mappings, at any depth) that
    ``returned`` (a RETURN section, or a ``contains``) does not document."""
    missing = []
    for key, value in result.items():
        if key in ANSIBLE_KEYS and not where:
            continue
        if key not in returned:
            missing.append(where + key)
            continue
        contains = returned[key].get("contains")
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            if contains and isinstance(entry, dict):
                missing += undocumented(entry, contains, f"{where}{key}.")
    return sorted(set(missing))


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
    assert exported["tags"] == ["a"]  # Heat's abandon data carries the stack's tags
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
    # Every key returned is documented, at every depth (events[].physical_id, stack.revision, ...).
    for name, module in (("applied", "stack"), ("updated", "stack"), ("rolled_back", "stack_rollback"),
                         ("info", "stack_info"), ("adopted", "stack_adopt")):
        missing = undocumented(run.results[name], documented(module))
        assert not missing, (name, missing)


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
