# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input through real ansible-playbook: one message, a failed task, no traceback,
nothing in the store; and ``file_roots`` widening where files may be read from."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO, run_playbook, store_rows, write_template

sys.path.insert(0, str(REPO / "tests" / "corpus"))

# pylint: disable=wrong-import-position
import bad_input_corpus as corpus  # noqa: E402

CASES = {case.id: case for case in corpus.load_cases()}
# One of each kind: a YAML bomb, nested recursion, an endless yaql expression, an
# escape from the template's tree, a hidden value, a broken environment, bad UTF-8.
THROUGH_ANSIBLE = ("yaml-billion-laughs", "cycle-provider-self", "fn-yaql-endless",
                   "confine-get-file-dotdot", "hidden-allowed-values", "env-merge-boolean",
                   "utf8-latin1-byte", "confine-env-provider-dotdot")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copied = corpus.copy_corpus(tmp_path_factory.mktemp("corpus"))
    for name in THROUGH_ANSIBLE:
        corpus.materialize(CASES[name], copied)
    return copied


def stack_task(case: corpus.Case, root: Path, **extra: Any) -> dict[str, Any]:
    return {"name": case.id, "register": case.id.replace("-", "_"), "hotplay.stacks.stack": {
        "name": case.id, "template": str(root / case.template),
        "environment": [str(root / e) for e in case.environment],
        "parameters": dict(case.parameters), **extra}}


def assert_one_clear_error(case: corpus.Case, root: Path, result: dict[str, Any]) -> None:
    assert result["failed"] is True and result["changed"] is False, result
    assert "stack_status" not in result, result
    message = result["msg"]
    named = f"{root / case.file}: "
    assert message.startswith(named), message
    assert case.message in message, message
    if case.path is not None:
        assert case.path in message[len(named):], message
    if case.secret:
        assert case.secret not in message


def test_bad_input_fails_the_task_with_one_message(run_tasks, store_url, root) -> None:
    tasks = [stack_task(CASES[name], root) for name in THROUGH_ANSIBLE]
    hidden = CASES["hidden-allowed-values"]
    # As a user gives a secret: from elsewhere than the playbook's text (Ansible
    # shows the lines of a failed task's source).
    tasks[THROUGH_ANSIBLE.index(hidden.id)]["hotplay.stacks.stack"]["parameters"] = {
        "password": "{{ lookup('ansible.builtin.env', 'CORPUS_SECRET') }}"}
    run = run_tasks(tasks, name="corpus", env={"CORPUS_SECRET": hidden.parameters["password"]})
    for name in THROUGH_ANSIBLE:
        assert_one_clear_error(CASES[name], root, run.results[name.replace("-", "_")])
    assert "Traceback" not in run.stdout + run.stderr
    assert CASES["hidden-allowed-values"].secret not in run.stdout + run.stderr
    assert store_rows(store_url, "SELECT count(*) FROM stacks") == [(0,)]
    assert store_rows(store_url, "SELECT count(*) FROM events") == [(0,)]


@pytest.mark.parametrize("name", ["yaml-billion-laughs", "confine-get-file-dotdot"])
def test_the_playbook_fails(name: str, root: Path, store_url: str, tmp_path: Path) -> None:
    case = CASES[name]
    task = stack_task(case, root, store=store_url)
    del task["register"]
    playbook = tmp_path / "fails.yml"
    play = {"hosts": "localhost", "gather_facts": False, "tasks": [task]}
    playbook.write_text(yaml.safe_dump([play]))
    completed = run_playbook(playbook, tmp_path)
    assert completed.returncode != 0
    output = completed.stdout + completed.stderr
    assert f"{root / case.file}: " in output and case.message in output
    assert "Traceback" not in output
    assert store_rows(store_url, "SELECT count(*) FROM stacks") == [(0,)]


def test_file_roots_allow_a_directory_outside_the_template(run_tasks, tmp_path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "motd.txt").write_text("welcome from the shared tree\n")
    (tmp_path / "outside.txt").write_text("not shared\n")
    tree = tmp_path / "templates"
    tree.mkdir()
    template = write_template(tree, "motd.yaml", """\
        heat_template_version: 2021-04-16
        resources:
          motd:
            type: OS::Heat::Value
            properties:
              value: {get_file: ../shared/motd.txt}
        outputs:
          motd: {value: {get_attr: [motd, value]}}
        """)
    escape = write_template(tree, "escape.yaml", """\
        heat_template_version: 2021-04-16
        resources:
          other:
            type: OS::Heat::Value
            properties:
              value: {get_file: ../outside.txt}
        """)
    run = run_tasks([
        {"hotplay.stacks.stack": {"name": "motd", "template": str(template)}, "register": "refused"},
        # A relative root is looked up as the template is: from the playbook's directory.
        {"hotplay.stacks.stack": {"name": "motd", "template": str(template),
                                  "file_roots": ["shared"]}, "register": "allowed"},
        {"hotplay.stacks.stack": {"name": "escape", "template": str(escape),
                                  "file_roots": [str(shared)]}, "register": "elsewhere"},
    ], name="roots")
    refused, allowed, elsewhere = (run.results[k] for k in ("refused", "allowed", "elsewhere"))
    assert refused["failed"] and refused["msg"] == (
        f"{template}: resources.motd.properties.value.get_file: Could not fetch contents for "
        "../shared/motd.txt: the file is outside the template's directory and the allowed "
        f"roots ({tree})")
    assert allowed["stack_status"] == "CREATE_COMPLETE", allowed
    assert allowed["outputs"]["motd"] == "welcome from the shared tree\n"
    assert elsewhere["failed"] and "outside the template's directory" in elsewhere["msg"]
    assert "Traceback" not in run.stdout + run.stderr
