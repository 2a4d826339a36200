# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's update rules, written once: what happens to a resource on an update, and why.

A resource is added, left unchanged, updated in place or replaced.  The preview
(model.plan) and the executor (run.executor) both call ``decide``, so a preview
and the apply it promises cannot disagree.  Facts from Heat 27
(heat/engine/resource.py ``_needs_update``, heat/engine/update.py):

- a resource never created (or deleted) is created;
- a change of type, or of the template that implements it, is a replacement;
- a resource that is not COMPLETE is updated, unless its type replaces failed
  resources (``needs_replace_failed``) or it was marked unhealthy;
- otherwise properties, metadata, update_policy, deletion_policy and the
  resources it depends on are compared with the recorded definition: any difference is an update, and the type says
  whether the properties that changed force a replacement;
- with ``converge`` (Heat's ``stack update --converge``), a resource whose real
  thing drifted is updated even when nothing else changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import HotplayError
from ..language.functions.base import resolve
from ..resources.base import Resource, resource_class
from ..store.base import ResourceState, Store

ADDED, UNCHANGED, UPDATED, REPLACED = "added", "unchanged", "updated", "replaced"


@dataclass(frozen=True)
class Decision:
    action: str  # ADDED | UNCHANGED | UPDATED | REPLACED
    reason: str = ""


@dataclass(frozen=True)
class Known:
    """What the preview cannot know yet: properties that read resources not
    applied yet (each with the resources it reads), and the known parts of those
    values (a type can still see which part changes).  The executor knows all."""

    unknown: Mapping[str, set[str]] = field(default_factory=dict)
    partial: Mapping[str, Any] = field(default_factory=dict)
    describe: Callable[[str], str] = str  # how a changed property is named in a reason


EVERYTHING_KNOWN = Known()


def is_new(record: ResourceState | None) -> bool:
    return record is None or record.action == "INIT" or (
        record.action == "DELETE" and record.status == "COMPLETE")


# The status reason of a retired resource that a run left acting when it
# stopped, deleted once and kept for the next run to delete again.
KEPT_AFTER_LOST_RUN = ("deleted; kept until the next run deletes it again: the run that "
                       "stopped while making it may still finish it")


def left_by_lost_run(retired: ResourceState) -> bool:
    """A retired resource that a stopped run left acting (IN_PROGRESS), or kept
    after its first deletion: never swapped back, always deleted again."""
    return retired.status == "IN_PROGRESS" or retired.status_reason == KEPT_AFTER_LOST_RUN


def is_unhealthy(state: ResourceState) -> bool:
    return state.action == "CHECK" and state.status == "FAILED"


def unhealthy_replaces(store: Store, record: ResourceState) -> bool:
    """Heat: an unhealthy resource is replaced, unless it is the parent of a
    nested stack that holds the unhealthy ones (then its members decide)."""
    if not is_unhealthy(record):
        return False
    if record.nested_stack_id:
        child = store.get_stack(record.nested_stack_id)
        return not (child.action == "CHECK" and child.status == "FAILED")
    return True


def recorded_external_id(record: ResourceState) -> str | None:
    """The ``external_id`` a resource was adopted with (None: it was created here)."""
    value = record.data.get("external_id")
    return None if value is None else str(value)


def external_id_change(declared: Any, record: ResourceState | None) -> str | None:
    """Heat's refusal of a changed ``external_id`` (heat/engine/resource.py
    ``update``): adopting, releasing or switching what a resource is, is not an
    update.  The message, or None when the external id stays."""
    if record is None or is_new(record):
        return None
    wanted = None if declared.external_id is None else str(resolve(declared.external_id))
    recorded = recorded_external_id(record)
    # Records of older releases kept no mark: an adopted one is Retain, its id the
    # external one.
    legacy = recorded is None and wanted is not None and "external_id" not in record.data and (
        record.deletion_policy == "Retain" and record.physical_id == wanted)
    if wanted == recorded or legacy:
        return None
    return (f"Update to property external_id of {declared.name} ({declared.type}) "
            "is not supported.")


def decide(store: Store, declared: Any, handler: Resource, record: ResourceState | None,
           properties: Mapping[str, Any], known: Known = EVERYTHING_KNOWN,
           repair: str | None = None, requires_changed: bool = False) -> Decision:
    """What applying ``declared`` (a model.definition.ResourceDefinition) with its
    resolved ``properties`` does to the resource recorded as ``record``.
    ``requires_changed``: the resources it depends on differ from those recorded.

    ``repair``: why the real resource no longer matches its record (Heat's
    ``converge``: the drift found before the update); an otherwise unchanged
    resource is then updated, with the same properties, to put it right."""
    if record is None or is_new(record):
        return Decision(ADDED, "new resource")
    if record.implementation != declared.implementation and not provider_swap(record, declared):
        return Decision(REPLACED, f"type changed from {record.type} to {declared.type}")
    if record.status != "COMPLETE":
        return _not_complete(store, handler, record)
    if getattr(handler, "accepts_any_properties", False):
        # Heat's OS::Heat::None: _needs_update is always False (metadata too).
        return Decision(UNCHANGED)
    if getattr(handler, "replaced_by_every_update", False):
        # Heat's OS::Heat::UpdateWaitConditionHandle: _needs_update always replaces it.
        return Decision(REPLACED, f"{record.type} is replaced by every update of its stack")
    changed = [key for key in sorted(set(properties) | set(record.properties))
               if key in known.unknown or properties.get(key) != record.properties.get(key)]
    other = definition_changes(declared, record) + (["depends_on changed"] if requires_changed else [])
    if not changed and not other:
        return Decision(UPDATED, repair) if repair else Decision(UNCHANGED)
    if "metadata changed" in other and getattr(handler, "replaced_when_metadata_changes", False):
        # Heat's needs_replace_with_tmpl_diff (a launch configuration).
        return Decision(REPLACED, f"metadata changed and {record.type} is replaced when it does")
    described = ", ".join(known.describe(key) for key in changed)
    replace = handler.replacement_reason(record.properties, {**properties, **known.partial}) \
        if changed else None
    if replace is not None:
        return Decision(REPLACED, f"{replace} ({described})" if described else replace)
    parts = ([f"properties changed: {described}"] if changed else []) + other
    return Decision(UPDATED, "; ".join(parts))


def _not_complete(store: Store, handler: Resource, record: ResourceState) -> Decision:
    state = f"{record.action}_{record.status}"
    if unhealthy_replaces(store, record):
        return Decision(REPLACED, f"the resource is {state} (marked unhealthy)")
    if handler.needs_replace_failed(record):
        return Decision(REPLACED, f"the resource is {state}")
    return Decision(UPDATED, f"the resource is {state}")


def resolved_extras(declared: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The declared metadata and update_policy, resolved, as the store records them."""
    return dict(resolve(declared.metadata) or {}), dict(resolve(declared.update_policy) or {})


def provider_swap(record: ResourceState, declared: Any) -> bool:
    """One provider template for another: Heat updates the resource in place (both
    are its TemplateResource: update.py replaces only when the class changes), its
    nested stack updated to the new template, what both have kept."""
    return bool(record.implementation) and resource_class(record.implementation) is None \
        and declared.is_provider


def definition_changes(declared: Any, record: ResourceState) -> list[str]:
    """What changed besides the properties, as a preview names it."""
    found = []
    try:
        metadata, update_policy = resolved_extras(declared)
    except (HotplayError, TypeError, ValueError, KeyError):
        found.append("metadata may change")  # it reads something not known yet
    else:
        if metadata != dict(record.metadata):
            found.append("metadata changed")
        if update_policy != dict(record.update_policy):
            found.append("update_policy changed")
    if declared.implementation != record.implementation:
        found.append(f"provider template changed from {record.implementation} to "
                     f"{declared.implementation}: its nested stack is updated")
    elif declared.type != record.type:
        # Another name for the same type or template (a renamed registry alias):
        # Heat compares what the names resolve to, and updates in place.
        found.append(f"type renamed from {record.type} to {declared.type}")
    if declared.deletion_policy != record.deletion_policy:
        found.append(f"deletion_policy changed to {declared.deletion_policy}")
    return found
