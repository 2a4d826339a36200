# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only views of the store, as task results show them: resources and events
named by their path from the top stack (``group/0/server``), stacks, revisions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import StackNotFound
from ..model.inputs import recorded_hidden
from ..resources.base import ResourceState
from ..run.executor import Event
from ..store.base import StackRecord, Store
from ..store.sealed import sealed
from ..run.hooks import pending_hooks
from .render import STATUS, GraphNode, render


def describe_stack(
    store: Store, name: str, nested_depth: int = 0, with_events: bool = True, graph: str = ""
) -> dict[str, Any]:
    """What ``stack_info`` shows of one stack (secrets in it: mask the result with
    the store's ``secrets``; without a key, sealed values read as ``******``)."""
    store = sealed(store)
    stack = store.find_stack(name)
    if stack is None:
        raise StackNotFound.named(name)
    store.unlock(name, stack, run=False)
    revisions = store.revisions(stack.id)
    last = revisions[-1].definition if revisions else {}
    info: dict[str, Any] = {
        **summarize_stack(stack),
        "outputs": dict(stack.outputs),
        "output_errors": dict(stack.output_errors),
        "parameters": _shown_parameters(last.get("effective_parameters", {}), recorded_hidden(last)),
        "resources": list_resources(store, stack.id, nested_depth),
        "revisions": [
            {"revision": r.revision, "action": r.action, "status": r.status,
             "status_reason": r.status_reason, "created": r.created, "finished": r.finished,
             "rolled_back_to": r.definition.get("rolled_back_to"),
             "accepted_as_is": r.definition.get("accepted_as_is", [])}
            for r in revisions
        ],
    }
    info["hooks_pending"] = [hook.as_dict() for hook in pending_hooks(store, stack)]
    if with_events:
        info["events"] = list_events(store, stack.id, nested_depth)
    if graph:
        info["graph"] = state_graph(store, stack.id, nested_depth, graph)
    return info


def state_graph(store: Store, stack_id: str, nested_depth: int, fmt: str) -> str:
    """The recorded dependency graph, coloured by each resource's state; each node
    names its full status (``CREATE_COMPLETE``, ``INIT_COMPLETE`` when not created)."""
    nodes: list[GraphNode] = []
    requires: dict[str, list[str]] = {}
    _graph_of(store, stack_id, nested_depth, "", nodes, requires)
    return render(nodes, requires, fmt, STATUS)


def _graph_of(store: Store, stack_id: str, depth: int, prefix: str, nodes: list[Any],
              requires: dict[str, list[str]]) -> None:
    for stored in store.resources(stack_id):
        state = stored.state
        path = prefix + state.name
        nodes.append(GraphNode(path, state.type, f"{state.action}_{state.status}"))
        requires[path] = [prefix + needed for needed in stored.requires]
        if state.nested_stack_id and depth > 0:
            _graph_of(store, state.nested_stack_id, depth - 1, f"{path}/", nodes, requires)


def _shown_parameters(values: Mapping[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    return {k: ("******" if k in hidden else v) for k, v in dict(values or {}).items()}


def summarize_stack(stack: StackRecord) -> dict[str, Any]:
    return {
        "name": stack.name, "id": stack.id, "status": stack.stack_status,
        "status_reason": stack.status_reason, "created": stack.created,
        "updated": stack.updated, "revision": stack.revision,
        "tags": list(stack.tags), "deletion_protection": stack.deletion_protection,
    }


def list_resources(
    store: Store, stack_id: str, nested_depth: int, parent: str = ""
) -> list[dict[str, Any]]:
    """Resources of a stack, nested ones (down to ``nested_depth``) after their parent."""
    listed: list[dict[str, Any]] = []
    for stored in store.resources(stack_id):
        state = stored.state
        entry = resource_entry(state, parent)
        listed.append(entry)
        if state.nested_stack_id and nested_depth > 0:
            listed.extend(list_resources(store, state.nested_stack_id, nested_depth - 1, entry["name"]))
    return listed


def resource_entry(state: ResourceState, parent: str = "") -> dict[str, Any]:
    """One resource as results show it."""
    entry: dict[str, Any] = {
        "name": f"{parent}/{state.name}" if parent else state.name,
        "type": state.type, "status": f"{state.action}_{state.status}",
        "status_reason": state.status_reason, "physical_id": state.physical_id,
    }
    if parent:
        entry["parent"] = parent
    return entry


def list_events(store: Store, stack_id: str, nested_depth: int) -> list[dict[str, Any]]:
    """Recorded events of a stack and its nested stacks (down to ``nested_depth``),
    in the order they happened."""
    found = _stack_events(store, stack_id, nested_depth, ())
    return [event_dict(event) for event in sorted(found, key=lambda e: e.record.id)]


def _stack_events(store: Store, stack_id: str, depth: int, path: tuple[str, ...]) -> list[Event]:
    stack = store.get_stack(stack_id)
    found = [
        Event(record, path) for record in store.events(stack_id)
        # A nested stack's own events repeat its parent resource's.
        if not (path and record.resource_name == stack.name)
    ]
    if depth > 0:
        for stored in store.resources(stack_id):
            child_id = stored.state.nested_stack_id
            if child_id:
                found += _stack_events(store, child_id, depth - 1, path + (stored.state.name,))
    return found


def event_dict(event: Event) -> dict[str, Any]:
    record = event.record
    entry: dict[str, Any] = {
        "resource_name": event.resource_name,
        "action": record.action,
        "status": record.status,
        "reason": record.reason,
        "physical_id": record.physical_id,
        "time": record.time,
    }
    if event.path:
        entry["parent"] = "/".join(event.path)
    return entry


EVERY_LEVEL = 1000  # nested_depth of a listing with every nested stack


def outcome_of(store: Store, stack_id: str) -> dict[str, Any]:
    """What a revision left: every resource (nested ones by path) with its state."""
    return outcome_from(list_resources(store, stack_id, nested_depth=EVERY_LEVEL))


def outcome_from(listed: list[dict[str, Any]]) -> dict[str, Any]:
    """``outcome_of`` from a listing of every level (``list_resources``)."""
    return {entry["name"]: {"type": entry["type"], "status": entry["status"],
                            "physical_id": entry["physical_id"]} for entry in listed}


def down_to(listed: list[dict[str, Any]], nested_depth: int) -> list[dict[str, Any]]:
    """The entries of a listing of every level that a listing down to
    ``nested_depth`` has (resource names never hold ``/``: Heat refuses them)."""
    return [entry for entry in listed
            if (entry["parent"].count("/") + 1 if "parent" in entry else 0) <= nested_depth]


def revision_diff(store: Store, name: str, first: int, second: int) -> dict[str, Any]:
    """What changed from revision ``first`` to ``second``: the template (a unified
    diff), the parameters, and the resources each left."""
    store = sealed(store)
    stack = store.find_stack(name)
    if stack is None:
        raise StackNotFound.named(name)
    store.unlock(name, stack, run=False)
    revisions = {r.revision: r for r in store.revisions(stack.id)}
    for number in (first, second):
        if number not in revisions:
            known = ", ".join(str(n) for n in sorted(revisions))
            raise StackNotFound(f"Stack {name} has no revision {number} (it has {known})")
    old, new = revisions[first], revisions[second]
    return {
        "from": first,
        "to": second,
        "template": _text_diff(old.definition.get("template"), new.definition.get("template"),
                               f"revision {first}", f"revision {second}"),
        "parameters": _mapping_diff(old.definition.get("effective_parameters", {}),
                                    new.definition.get("effective_parameters", {}),
                                    recorded_hidden(old.definition) | recorded_hidden(new.definition)),
        "resources": _mapping_diff(old.outcome, new.outcome),
    }


def _text_diff(old: Any, new: Any, old_name: str, new_name: str) -> str:
    import difflib

    import yaml

    before = yaml.safe_dump(old, sort_keys=False).splitlines(keepends=True)
    after = yaml.safe_dump(new, sort_keys=False).splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, old_name, new_name))


def _mapping_diff(old: Any, new: Any, hidden: frozenset[str] = frozenset()) -> dict[str, Any]:
    """added / removed / changed keys; hidden values stay hidden."""
    old, new = dict(old or {}), dict(new or {})
    shown, was = _shown_parameters(new, hidden), _shown_parameters(old, hidden)
    return {
        "added": {k: shown[k] for k in sorted(set(new) - set(old))},
        "removed": {k: was[k] for k in sorted(set(old) - set(new))},
        "changed": {k: {"before": was[k], "after": shown[k]}
                    for k in sorted(set(old) & set(new)) if old[k] != new[k]},
    }
