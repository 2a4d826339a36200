# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollback: automatic on failure, and stack_rollback from any state, in-process
with real files on disk (Hotplay::Local::File) as the physical resources."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.rollback import (
    RollbackRequest,
    rollback_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.inputs import hidden_digest
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import StoreKey, StoreKeyError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import SealedStore, sealed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

# A file replaced when its name changes, an in-place content, and a test resource
# that fails on demand after the replacement.
FILES = """\
    heat_template_version: 2018-08-31
    parameters:
      dir: {type: string}
      name: {type: string, default: first.conf}
      content: {type: string, default: v1}
      fail: {type: boolean, default: false}
    resources:
      config:
        type: Hotplay::Local::File
        properties:
          directory: {get_param: dir}
          name: {get_param: name}
          content: {get_param: content}
      check:
        type: OS::Heat::TestResource
        properties:
          value: {get_attr: [config, path]}
          fail: {get_param: fail}
    outputs:
      path: {value: {get_attr: [config, path]}}
    """


@pytest.fixture
def store(tmp_path: Path):
    opened = SqliteStore(str(tmp_path / "store.db"))
    yield opened
    opened.close()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    return folder


class Stack:
    def __init__(self, store: SqliteStore, folder: Path, files: Path) -> None:
        self.store, self.files = store, files
        self.template = folder / "files.yaml"
        self.template.write_text(textwrap.dedent(FILES))

    def apply(self, **parameters: Any) -> dict[str, Any]:
        options = {k: parameters.pop(k) for k in ("rollback_on_failure", "keep_replaced")
                   if k in parameters}
        request = ApplyRequest(name="s", template=str(self.template),
                               parameters={"dir": str(self.files), **parameters}, **options)
        return apply_stack(self.store, request, "test").as_dict()

    def rollback(self, **options: Any) -> dict[str, Any]:
        return rollback_stack(self.store, RollbackRequest(name="s", **options), "test").as_dict()

    def on_disk(self) -> dict[str, str]:
        return {p.name: p.read_text() for p in sorted(self.files.iterdir())}


@pytest.fixture
def stack(store, tmp_path, files) -> Stack:
    return Stack(store, tmp_path, files)


def test_failed_create_rolls_back_by_deleting_what_it_made(stack):
    result = stack.apply(fail=True, rollback_on_failure=True)
    assert result["failed"] and result["stack_status"] == "ROLLBACK_COMPLETE"
    assert "resources.check: Test Resource failed" in result["msg"]
    assert "automatic rollback: ROLLBACK_COMPLETE" in result["msg"]
    assert stack.on_disk() == {} and result["resources"] == []


def test_failed_update_swaps_the_old_file_back_and_deletes_the_new(stack):
    first = stack.apply()
    failed = stack.apply(name="second.conf", content="v2", fail=True, rollback_on_failure=True)
    assert failed["failed"] and failed["stack_status"] == "ROLLBACK_COMPLETE"
    assert failed["rollback"]["restored"] == ["config"]
    assert failed["outputs"]["path"] == first["outputs"]["path"]
    assert stack.on_disk() == {"first.conf": "v1"}
    physical = {r["name"]: r["physical_id"] for r in failed["resources"]}
    assert physical["config"] == first["outputs"]["path"]


def test_stack_rollback_from_update_failed_without_automatic_rollback(stack):
    stack.apply()
    failed = stack.apply(name="second.conf", fail=True)
    assert failed["stack_status"] == "UPDATE_FAILED"
    assert stack.on_disk() == {"first.conf": "v1", "second.conf": "v1"}  # old one retained
    rolled = stack.rollback()
    assert rolled["stack_status"] == "ROLLBACK_COMPLETE", rolled
    assert rolled["rollback"]["target_revision"] == 1 and rolled["rollback"]["restored"] == ["config"]
    assert stack.on_disk() == {"first.conf": "v1"}
    assert rolled["revision"] == 3


def test_rollback_after_success_within_and_beyond_max_age(stack, store):
    stack.apply()
    stack.apply(name="second.conf", keep_replaced=600)
    assert stack.on_disk() == {"first.conf": "v1", "second.conf": "v1"}  # kept for a rollback
    preview = stack.rollback(check_mode=True)
    assert preview["plan"]["replaced"] == ["config"]
    assert "swaps back" in preview["plan"]["reasons"]["config"]
    assert stack.on_disk() == {"first.conf": "v1", "second.conf": "v1"}  # previews change nothing
    store._write("UPDATE revisions SET created = '2020-01-01T00:00:00Z' WHERE revision = 2")
    refused = stack.rollback()
    assert refused["failed"] and "more than max_age (1 h 0 min)" in refused["msg"]
    assert stack.rollback(max_age=0)["rollback"]["restored"] == ["config"]
    assert stack.on_disk() == {"first.conf": "v1"}


def test_rollback_to_a_numbered_revision_two_back(stack):
    stack.apply(content="v1")
    stack.apply(content="v2")
    stack.apply(content="v3")
    rolled = stack.rollback(revision=1)
    assert rolled["stack_status"] == "ROLLBACK_COMPLETE"
    assert stack.on_disk() == {"first.conf": "v1"}
    assert rolled["parameters"]["content"] == "v1"


def test_a_retired_resource_deleted_meanwhile_is_recreated_and_said(stack):
    stack.apply()
    stack.apply(name="second.conf", fail=True)
    os.unlink(stack.files / "first.conf")  # someone removed it by hand
    preview = stack.rollback(check_mode=True)
    assert "is gone or changed, so it is recreated" in preview["plan"]["reasons"]["config"]
    rolled = stack.rollback()
    assert rolled["stack_status"] == "ROLLBACK_COMPLETE"
    assert rolled["rollback"]["restored"] == []
    assert "gone or changed" in rolled["rollback"]["recreated"]["config"]
    assert stack.on_disk() == {"first.conf": "v1"}


def test_rollback_of_a_rollback(stack):
    stack.apply(content="v1")
    stack.apply(content="v2")
    stack.rollback()
    assert stack.on_disk() == {"first.conf": "v1"}
    again = stack.rollback()
    assert again["rollback"]["target_revision"] == 2
    assert stack.on_disk() == {"first.conf": "v2"} and again["revision"] == 4


def test_failing_rollback_then_recovered_with_skip(stack, store):
    stack.apply(content="v1")
    stack.apply(content="v2")
    # The world moved on: the file's directory is gone, so restoring v1 fails.
    shutil.rmtree(stack.files)
    failed = stack.rollback()
    assert failed["stack_status"] == "ROLLBACK_FAILED" and failed["failed"]
    statuses = {r["name"]: r["status"] for r in failed["resources"]}
    assert statuses["config"] == "UPDATE_FAILED"
    assert "No such file or directory" in failed["stack_status_reason"]
    # Re-running fails the same way; accepting the file as it is completes it.
    recovered = stack.rollback(revision=1, skip=["config"])
    assert recovered["stack_status"] == "ROLLBACK_COMPLETE", recovered["stack_status_reason"]
    assert recovered["rollback"]["accepted_as_is"] == ["config"]
    config = next(r for r in recovered["resources"] if r["name"] == "config")
    assert (config["status"], config["status_reason"]) == ("ROLLBACK_COMPLETE", "accepted as it is (skip)")
    revisions = {r.revision: r for r in store.revisions(store.find_stack("s").id)}
    assert revisions[recovered["revision"]].definition["accepted_as_is"] == ["config"]


def test_nothing_to_roll_back_to_is_said_clearly(stack):
    stack.apply()
    refused = stack.rollback()
    assert refused["failed"] and "no earlier revision that completed" in refused["msg"]


def test_revisions_are_listed_and_compared(stack, store):
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.views import (
        describe_stack,
        revision_diff,
    )

    stack.apply(content="v1")
    stack.apply(name="second.conf", content="v2")
    stack.rollback()
    listed = describe_stack(store, "s")["revisions"]
    assert [(r["revision"], r["action"], r["status"], r["rolled_back_to"]) for r in listed] == [
        (1, "CREATE", "COMPLETE", None), (2, "UPDATE", "COMPLETE", None),
        (3, "ROLLBACK", "COMPLETE", 1)]
    diff = revision_diff(store, "s", 1, 2)
    assert diff["parameters"]["changed"] == {
        "content": {"before": "v1", "after": "v2"},
        "name": {"before": "first.conf", "after": "second.conf"}}
    assert diff["resources"]["changed"]["config"]["after"]["physical_id"].endswith("second.conf")
    assert diff["template"] == ""  # same template, other parameters


def test_retrying_a_failed_rollback_keeps_its_target_and_previews_skip(stack):
    stack.apply(content="v1")
    stack.apply(content="v2")
    stack.apply(content="v3")
    shutil.rmtree(stack.files)
    failed = stack.rollback(revision=1)
    assert failed["stack_status"] == "ROLLBACK_FAILED"
    preview = stack.rollback(check_mode=True, skip=["config"])
    assert preview["rollback"]["target_revision"] == 1  # not revision 3, which it was leaving
    assert preview["plan"]["reasons"]["config"] == "accepted as it is (skip)"
    unknown = stack.rollback(skip=["no_such_resource"])
    assert unknown["failed"] and "does not have: no_such_resource" in unknown["msg"]


SECRET_TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      password: {type: string, hidden: true, default: public-default}
      size: {type: string, default: "1"}
    resources:
      r:
        type: OS::Heat::TestResource
        properties: {value: {list_join: [":", [{get_param: password}, {get_param: size}]]}}
    """


def test_a_rollback_opens_hidden_values_with_the_store_key(tmp_path):
    template = tmp_path / "secret.yaml"
    template.write_text(textwrap.dedent(SECRET_TEMPLATE))
    path = str(tmp_path / "keyed.db")

    def keyed(key: str | None) -> SealedStore:
        return sealed(SqliteStore(path), StoreKey(key) if key else None)

    for size in (1, 2):
        request = ApplyRequest(name="h", template=str(template),
                               parameters={"password": "s3cret-pw", "size": str(size)})
        apply_stack(keyed("k1"), request, "t")
    without_key = keyed(None)
    with pytest.raises(StoreKeyError, match="stack h keeps secrets in the store; .*HOTPLAY_STORE_KEY"):
        rollback_stack(without_key, RollbackRequest(name="h"), "t")
    with pytest.raises(StoreKeyError, match="the store key does not open stack h's secrets"):
        rollback_stack(keyed("wrong"), RollbackRequest(name="h"), "t")
    rolled = rollback_stack(keyed("k1"), RollbackRequest(name="h"), "t")  # nothing given again
    assert rolled.stack.stack_status == "ROLLBACK_COMPLETE", rolled.stack.status_reason
    values = {s.state.name: s.state.properties["value"] for s in keyed("k1").resources(rolled.stack.id)}
    assert values == {"r": "s3cret-pw:1"}
    assert not any(b"s3cret-pw" in f.read_bytes() for f in tmp_path.glob("keyed.db*"))


def test_revisions_that_kept_digests_still_need_the_hidden_values(store, tmp_path):
    """Revisions recorded before secrets were encrypted hold a salted digest."""
    template = tmp_path / "secret.yaml"
    template.write_text(textwrap.dedent(SECRET_TEMPLATE))
    keyed = sealed(store, StoreKey("k1"))
    for size in (1, 2):
        apply_stack(keyed, ApplyRequest(name="h", template=str(template), parameters={"size": str(size)}), "t")
    stack = keyed.find_stack("h")
    old_style = json.dumps(hidden_digest(stack.id, "password", "older-secret"))
    store._write(  # pylint: disable=protected-access
        "UPDATE revisions SET definition = json_set(json_set(json_remove(definition, '$.hidden'),"
        " '$.parameters.password', json(?)), '$.effective_parameters.password', json(?))",
        (old_style, old_style))
    refused = rollback_stack(keyed, RollbackRequest(name="h"), "t").as_dict()
    assert refused["failed"] and "recorded before secrets were encrypted" in refused["msg"]
    assert "password" in refused["msg"]
    wrong = rollback_stack(keyed, RollbackRequest(name="h", parameters={"password": "nope"}), "t")
    assert wrong.failed and "hidden parameters" in wrong.msg
    rolled = rollback_stack(keyed, RollbackRequest(name="h", parameters={"password": "older-secret"}), "t")
    assert rolled.stack.stack_status == "ROLLBACK_COMPLETE"
    assert not any(b"older-secret" in f.read_bytes() for f in tmp_path.glob("store.db*"))


def test_rolling_back_a_killed_delete_restores_the_last_good_update(stack, store):
    stack.apply()
    stack.apply(content="v2")
    stack_id = store.find_stack("s").id
    # What a delete killed midway leaves: the stack DELETE_IN_PROGRESS, the file
    # deleted and its resource recorded so, the run gone before recording more.
    store.set_stack_status(stack_id, "DELETE", "IN_PROGRESS", "Stack DELETE started")
    config = next(r for r in store.resources(stack_id) if r.state.name == "config")
    store.save_resource(stack_id, replace(config.state, action="DELETE", status="IN_PROGRESS"))
    (stack.files / "first.conf").unlink()
    rolled = stack.rollback()
    assert rolled["rollback"]["target_revision"] == 2, rolled
    assert rolled["stack_status"] == "ROLLBACK_COMPLETE"
    assert stack.on_disk() == {"first.conf": "v2"}
