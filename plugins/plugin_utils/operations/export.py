# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stack of the store as Heat's abandon data: what ``openstack stack adopt``
takes, so a stack can go (back) to Heat with its resources.

The format is Heat's ``Stack.prepare_abandon``; the template, environment and
files are the last revision's, each resource's ``resource_data`` is what its type
keeps that Heat keeps too (``Resource.abandon_data``).  A nested stack is given
as its own abandon data (name, id, resources), without a template: Heat's adopt
makes a nested stack's template from its parent's, as for a create.  A provider
template mapped over one of Heat's OpenStack types (``OS::Nova::Server``) is, to Heat,
that type's resource: it is given as one, with the id of the thing it manages.
"""

from __future__ import annotations

from typing import Any

from ..errors import HotplayError, StackNotFound
from ..language.environment import merge_environments, parse_environment
from ..language.template.loader import load_yaml
from ..resources.base import resource_class
from ..resources.facades import OPENSTACK_FACADES
from ..resources.nested import ADOPTED_ID
from ..secrets import key_missing
from ..store.base import ResourceState, StackRecord, Store
from ..store.sealed import SealedStore


def heat_abandon(store: Store, name: str) -> dict[str, Any]:
    """The abandon data of the stack ``name`` (its secrets in the clear: Heat needs
    them; write it only where the store key would be safe)."""
    stack = store.find_stack(name)
    if stack is None:
        raise StackNotFound.named(name)
    if isinstance(store, SealedStore):
        store.unlock(name, stack, run=False)  # a wrong key is told here
        if store.key is None and store.keyring(stack.id) is not None:
            # Its sealed values would read as ******, where Heat needs them.
            raise key_missing(f"stack {name} keeps secrets in the store, and Heat's abandon "
                              "data holds them in the clear")
    revisions = store.revisions(stack.id)
    if not revisions:
        raise HotplayError(f"stack {name} has no recorded revision to export")
    definition = revisions[-1].definition
    data = _stack_data(store, stack)
    data.update(template=dict(definition.get("template") or {}),
                environment=_environment(definition), files=dict(definition.get("files") or {}))
    return data


def _environment(definition: Any) -> dict[str, Any]:
    """The merged environment files, with the task's parameters in ``parameters``
    (where Heat keeps a create's ``-P`` values)."""
    environments = [parse_environment(load_yaml(text, name), name)
                    for name, text in definition.get("environment") or ()]
    merged = merge_environments(environments) if environments else parse_environment({}, "")
    return {
        "parameters": {**merged.parameters, **dict(definition.get("parameters") or {})},
        "parameter_defaults": dict(merged.parameter_defaults),
        "resource_registry": merged.registry.as_dict(),
        "event_sinks": list(merged.event_sinks),
    }


def _facade_data(store: Store, state: ResourceState) -> dict[str, Any]:
    """A provider template standing for one of Heat's OpenStack types: to Heat it is
    that type's resource, whose id is the thing's (the template's OS::stack_id)."""
    outputs = store.get_stack(state.nested_stack_id or "").outputs
    # Adopted with a module that could not say in check mode, so not run: Heat's id.
    thing = outputs.get("OS::stack_id") or state.data.get(ADOPTED_ID) or ""
    return {"name": state.name, "resource_id": thing, "type": state.type,
            "action": state.action, "status": state.status, "metadata": dict(state.metadata),
            "resource_data": {}}


def _stack_data(store: Store, stack: StackRecord) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for stored in store.resources(stack.id):
        state = stored.state
        if state.nested_stack_id and state.type in OPENSTACK_FACADES:
            resources[state.name] = _facade_data(store, state)
            continue
        if state.nested_stack_id:
            resources[state.name] = _stack_data(store, store.get_stack(state.nested_stack_id))
            continue
        cls = resource_class(state.implementation or state.type)
        metadata = cls.exported_metadata(store, stack.id, state) if cls is not None else dict(state.metadata)
        resources[state.name] = {
            "name": state.name, "resource_id": state.physical_id, "type": state.type,
            "action": state.action, "status": state.status, "metadata": metadata,
            "resource_data": cls.abandon_data(state) if cls is not None else {},
        }
    return {"name": stack.name, "id": stack.id, "action": stack.action, "status": stack.status,
            "resources": resources, "project_id": "", "stack_user_project_id": "",
            "tags": list(stack.tags)}
