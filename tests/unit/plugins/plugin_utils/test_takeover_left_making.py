# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run that takes a stack over from a killed one: a resource the killed run left
being created, with data it recorded on the way (a server's ports made for it, the
unique name it asked Nova for) but no id yet, is deleted first, before anything is
made again (a server the killed run made may hold the port its replacement needs),
then deleted once more by the next run (the killed run may still finish it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.update_rules import KEPT_AFTER_LOST_RUN
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState, register, resource_class
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.heat_misc import TestResource
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  made:
    type: OS::Heat::TestResource
    properties: {value: v}
"""


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = open_store(f"sqlite:///{tmp_path / 's.db'}")
    yield opened
    opened.close()


@pytest.fixture
def killed_job(tmp_path: Path) -> Any:
    """The store as the killed job had it open (its lease stays until taken over)."""
    opened = open_store(f"sqlite:///{tmp_path / 's.db'}")
    yield opened
    opened.close()


def apply(store: Any, tmp_path: Path, job: str) -> Any:
    template = tmp_path / "t.yaml"
    template.write_text(TEMPLATE)
    return apply_stack(store, ApplyRequest(name="web", template=str(template)), job)


def killed_while_making(store: Any, data: dict[str, Any], status: str = "IN_PROGRESS") -> None:
    """The stack as a run killed inside ``made``'s create leaves it: the row of the
    intent with what it recorded, the lock still its (its process gone)."""
    stack = store.find_stack("web")
    [stored] = [s for s in store.resources(stack.id) if s.state.name == "made"]
    left = ResourceState("made", "OS::Heat::TestResource", "CREATE", status=status,
                         properties=stored.state.properties, data=data)
    store.save_resource(stack.id, left, stored.requires, stored.position)
    store.acquire_lock("web", "job killed")
    store._change("UPDATE leases SET pid_start = 'not this process' WHERE stack_name = 'web'")  # pylint: disable=protected-access


def made_events(store: Any) -> list[tuple[str, str]]:
    stack = store.find_stack("web")
    return [(e.action, e.status) for e in store.events(stack.id) if e.resource_name == "made"]


def test_what_a_killed_create_recorded_is_deleted_before_it_is_made_again_and_once_more_by_the_next_run(
        store: Any, killed_job: Any, tmp_path: Path) -> None:
    apply(store, tmp_path, "job 1")
    killed_while_making(killed_job, {"internal_ports": ["port-made-before-the-kill"]})
    before = len(made_events(store))
    result = apply(store, tmp_path, "job 2").as_dict()
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert made_events(store)[before:] == [("DELETE", "IN_PROGRESS"), ("DELETE", "COMPLETE"),
                                           ("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]
    stack = store.find_stack("web")
    [kept] = store.retired_resources(stack.id)
    assert kept.state.status_reason == KEPT_AFTER_LOST_RUN
    assert kept.state.data == {"internal_ports": ["port-made-before-the-kill"]}
    apply(store, tmp_path, "job 3")
    assert store.retired_resources(stack.id) == []  # deleted again, then forgotten


def test_what_a_run_killed_in_its_delete_left_retired_is_deleted_before_it_is_made_again(
        store: Any, killed_job: Any, tmp_path: Path) -> None:
    """The run that took over retired the killed create's thing and was killed in
    its delete: the retired row is all there is of it, and the next run deletes it
    before it makes the resource again (the campaign's subnet: one made beside it
    overlaps it, "Requested subnet ... overlaps with another subnet")."""
    apply(store, tmp_path, "job 1")
    killed_while_making(killed_job, {"creating_name": "web-made-abcdefghijkl"})
    stack = killed_job.find_stack("web")
    killed_job.retire_resource(stack.id, "made", stack.revision)  # job 2, killed then
    before = len(made_events(store))
    result = apply(store, tmp_path, "job 3").as_dict()
    assert result["stack_status"] == "UPDATE_COMPLETE", result["stack_status_reason"]
    assert made_events(store)[before:][:3] == [("DELETE", "IN_PROGRESS"), ("DELETE", "COMPLETE"),
                                               ("CREATE", "IN_PROGRESS")]
    apply(store, tmp_path, "job 4")
    assert store.retired_resources(stack.id) == []  # deleted again, then forgotten


def test_a_create_aborted_with_notes_and_no_id_is_deleted_before_it_is_made_again(
        store: Any, killed_job: Any, tmp_path: Path) -> None:
    """A run that lived on long enough to record its create aborted (FAILED) while the
    cloud was answering left what it noted and no id: that is what finds the thing,
    so it is deleted first, as a create left in progress (a port named as the new
    one's would be, and made as recently, is told apart only that way)."""
    apply(store, tmp_path, "job 1")
    killed_while_making(killed_job, {"creating_port": {"name": "made-port-0"}}, status="FAILED")
    killed_job.release_lock("web", "job killed")  # it lived to let go: no takeover
    before = len(made_events(store))
    apply(store, tmp_path, "job 2")
    assert made_events(store)[before:] == [("DELETE", "IN_PROGRESS"), ("DELETE", "COMPLETE"),
                                           ("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE")]


def test_a_create_killed_before_it_recorded_anything_is_replaced_as_a_failed_one(
        store: Any, killed_job: Any, tmp_path: Path) -> None:
    apply(store, tmp_path, "job 1")
    killed_while_making(killed_job, {})
    before = len(made_events(store))
    apply(store, tmp_path, "job 2")
    # Nothing to find of it: Heat's replacement of a failed resource, the new one first.
    assert made_events(store)[before:] == [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE"),
                                           ("DELETE", "IN_PROGRESS"), ("DELETE", "COMPLETE")]
    assert store.retired_resources(store.find_stack("web").id) == []


def test_a_stack_delete_takes_what_was_retired_down_before_the_stacks_own_resources(
        store: Any, killed_job: Any, tmp_path: Path) -> None:
    """As Heat deletes the backup stack first: a retired server holds the port that
    the stack's own port resource is."""
    apply(store, tmp_path, "job 1")
    killed_while_making(killed_job, {"internal_ports": ["port-made-before-the-kill"]})
    apply(store, tmp_path, "job 2")  # the killed run's resource kept retired, deleted once
    stack = store.find_stack("web")
    live = next(s.state.physical_id for s in store.resources(stack.id) if s.state.name == "made")
    before = len(store.events(stack.id))
    result = delete_stack(store, DeleteRequest(name="web"), "job 3").as_dict()
    assert result["stack_status"] == "DELETE_COMPLETE"
    deletes = [(e.status, e.physical_id) for e in store.events(stack.id)[before:] if e.resource_name == "made"]
    assert deletes == [("IN_PROGRESS", ""), ("COMPLETE", ""), ("IN_PROGRESS", live), ("COMPLETE", live)]


class NotesThenFails(TestResource):
    """Notes a value of its data as it goes (as a server notes the ports made for it),
    then fails."""

    type_name = "Hotplay::Test::NotesThenFails"

    def handle_create(self, properties: Any) -> Any:
        self.runtime.note_data(self.name, "internal_ports", ["port-made-first"])
        raise self.fail("the server went to ERROR")


if resource_class(NotesThenFails.type_name) is None:
    register(NotesThenFails)


def test_a_failed_create_keeps_what_it_noted_as_it_went(store: Any, tmp_path: Path) -> None:
    template = tmp_path / "fails.yaml"
    template.write_text("heat_template_version: 2018-08-31\n"
                        "resources: {made: {type: Hotplay::Test::NotesThenFails}}\n")
    result = apply_stack(store, ApplyRequest(name="web", template=str(template)), "job 1").as_dict()
    assert result["stack_status"] == "CREATE_FAILED"
    [stored] = store.resources(store.find_stack("web").id)
    assert (stored.state.status, stored.state.data) == ("FAILED", {"internal_ports": ["port-made-first"]})
