# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine's front door: apply, delete and describe stacks.

Front ends (the action plugins, the benchmark, tests) call these functions with
plain data and get plain data back.  Everything that can be wrong with the input
is found by ``load_definition`` before the store is touched.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .definition import StackDefinition, StackIdentity
from .environment import EMPTY_ENVIRONMENT, Environment, load_environment, merge_environments
from .errors import HotplayError, StackNotFound, TemplateError
from .executor import DEFAULT_WORKERS
from .stack_run import Event, StackRun
from .store.base import StackRecord, Store
from .template.loader import TemplateSource, decode, load_template

ProgressCallback = Callable[[Event], None]


@dataclass(frozen=True)
class ApplyRequest:
    name: str
    template: str
    environment: Sequence[str] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    nested_depth: int = 0
    max_workers: int = DEFAULT_WORKERS


@dataclass
class StackResult:
    """What a task reports; ``as_dict`` is the task result."""

    changed: bool
    failed: bool
    stack: StackRecord | None
    resources: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    msg: str = ""

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"changed": self.changed, "failed": self.failed}
        if self.msg:
            result["msg"] = self.msg
        elif self.failed and self.stack is not None:
            result["msg"] = f"{self.stack.stack_status}: {self.stack.status_reason}"
        if self.stack is not None:
            result.update(
                stack_id=self.stack.id,
                stack_status=self.stack.stack_status,
                stack_status_reason=self.stack.status_reason,
                outputs=dict(self.stack.outputs),
                output_errors=dict(self.stack.output_errors),
                revision=self.stack.revision,
            )
        result.update(resources=self.resources, events=self.events, parameters=self.parameters)
        return result


@dataclass(frozen=True)
class LoadedInputs:
    source: TemplateSource
    environment: Environment
    files: dict[str, str]
    environment_texts: tuple[str, ...]


def load_inputs(template: str, environment_paths: Sequence[str]) -> LoadedInputs:
    """Read the template, its files and the environment files (merged in order)."""
    source = load_template(template)
    environments: list[Environment] = []
    files: dict[str, str] = dict(source.files)
    texts: list[str] = []
    for path in environment_paths:
        environment, provider_paths = load_environment(path)
        environments.append(environment)
        files.update(_provider_files(path, provider_paths))
        with open(path, encoding="utf-8") as handle:
            texts.append(handle.read())
    merged = merge_environments(environments) if environments else EMPTY_ENVIRONMENT
    return LoadedInputs(source, merged, files, tuple(texts))


def _provider_files(env_path: str, provider_paths: Mapping[str, str]) -> dict[str, str]:
    """Provider templates an environment maps types to (keyed as written there),
    with the files they reference in turn."""
    files: dict[str, str] = {}
    for key, path in provider_paths.items():
        if "://" in path:
            raise TemplateError(
                f"provider template {key!r} is a URL: only files next to the environment are allowed",
                source=env_path, path="resource_registry",
            )
        provider = load_template(path)
        files.update(provider.files)
        with open(path, "rb") as handle:
            files[key] = decode(handle.read(), path)
    return files


def definition_digest(inputs: LoadedInputs, parameters: Mapping[str, Any]) -> str:
    """Identifies a definition: equal digests, equal stacks (re-runs change nothing)."""
    document = {
        "template": inputs.source.data,
        "files": inputs.files,
        "environment": inputs.environment_texts,
        "parameters": parameters,
    }
    canonical = json.dumps(document, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def recorded_definition(
    inputs: LoadedInputs, definition: StackDefinition, parameters: Mapping[str, Any]
) -> dict[str, Any]:
    """The revision's copy of the definition; hidden parameter values are left out."""
    hidden = definition.parameters.hidden_names()
    return {
        "template_path": inputs.source.path,
        "template": inputs.source.data,
        "files": inputs.files,
        "environment": list(inputs.environment_texts),
        "parameters": {k: ("******" if k in hidden else v) for k, v in parameters.items()},
    }


def apply_stack(
    store: Store, request: ApplyRequest, holder: str, progress: ProgressCallback | None = None
) -> StackResult:
    """Create the stack, or bring it to the new definition; nothing when unchanged."""
    inputs = load_inputs(request.template, request.environment)
    existing = store.find_stack(request.name)
    stack_id = existing.id if existing else str(uuid.uuid4())
    definition = StackDefinition(
        inputs.source, inputs.environment, request.parameters,
        StackIdentity(request.name, stack_id), inputs.files,
    )
    digest = definition_digest(inputs, request.parameters)
    if existing is not None and _unchanged(store, existing, digest):
        return _result(store, existing, False, [], request.nested_depth, definition)
    events: list[Event] = []
    sink = _sink(events, progress)
    store.acquire_lock(request.name, holder)
    try:
        stack = store.find_stack(request.name) or store.create_stack(request.name, stack_id=stack_id)
        action = "CREATE" if stack.action == "INIT" else "UPDATE"
        revision = store.add_revision(
            stack.id, action, recorded_definition(inputs, definition, request.parameters), digest
        )
        run = StackRun(store, stack, sink, max_workers=request.max_workers)
        ok = run.converge(definition, action)
        store.finish_revision(stack.id, revision, "COMPLETE" if ok else "FAILED",
                              store.get_stack(stack.id).status_reason)
    finally:
        store.release_lock(request.name, holder)
    return _result(store, store.get_stack(stack.id), True, events, request.nested_depth, definition)


def delete_stack(
    store: Store, name: str, holder: str, nested_depth: int = 0,
    progress: ProgressCallback | None = None,
) -> StackResult:
    """Delete a stack (Retain policies honoured); nothing when it does not exist."""
    existing = store.find_stack(name)
    if existing is None:
        return StackResult(changed=False, failed=False, stack=None)
    events: list[Event] = []
    store.acquire_lock(name, holder)
    try:
        run = StackRun(store, existing, _sink(events, progress))
        ok = run.delete()
        if ok:
            store.mark_stack_deleted(existing.id)
    finally:
        store.release_lock(name, holder)
    final = store.get_stack(existing.id)
    result = _result(store, final, True, events, nested_depth, None)
    if ok:
        result.resources = []
    return result


def describe_stack(store: Store, name: str, nested_depth: int = 0, with_events: bool = True) -> dict[str, Any]:
    """What ``stack_info`` shows of one stack."""
    stack = store.find_stack(name)
    if stack is None:
        raise StackNotFound(f"The Stack ({name}) could not be found.")
    revisions = store.revisions(stack.id)
    parameters = revisions[-1].definition.get("parameters", {}) if revisions else {}
    info: dict[str, Any] = {
        "name": stack.name,
        "id": stack.id,
        "status": stack.stack_status,
        "status_reason": stack.status_reason,
        "outputs": dict(stack.outputs),
        "output_errors": dict(stack.output_errors),
        "parameters": parameters,
        "resources": list_resources(store, stack.id, nested_depth),
        "revisions": [
            {"revision": r.revision, "action": r.action, "status": r.status,
             "status_reason": r.status_reason, "created": r.created}
            for r in revisions
        ],
        "created": stack.created,
        "updated": stack.updated,
    }
    if with_events:
        info["events"] = list_events(store, stack.id, nested_depth)
    return info


def summarize_stack(stack: StackRecord) -> dict[str, Any]:
    return {
        "name": stack.name, "id": stack.id, "status": stack.stack_status,
        "status_reason": stack.status_reason, "created": stack.created,
        "updated": stack.updated, "revision": stack.revision,
    }


def list_resources(
    store: Store, stack_id: str, nested_depth: int, parent: str = ""
) -> list[dict[str, Any]]:
    """Resources of a stack, nested ones (down to ``nested_depth``) after their parent."""
    listed: list[dict[str, Any]] = []
    for stored in store.resources(stack_id):
        state = stored.state
        path = f"{parent}/{state.name}" if parent else state.name
        entry: dict[str, Any] = {
            "name": path, "type": state.type, "status": f"{state.action}_{state.status}",
            "status_reason": state.status_reason, "physical_id": state.physical_id,
        }
        if parent:
            entry["parent"] = parent
        listed.append(entry)
        if state.nested_stack_id and nested_depth > 0:
            listed.extend(list_resources(store, state.nested_stack_id, nested_depth - 1, path))
    return listed


def list_events(store: Store, stack_id: str, nested_depth: int) -> list[dict[str, Any]]:
    """Recorded events of a stack and its nested stacks (down to ``nested_depth``),
    in the order they happened."""
    found = _stack_events(store, stack_id, nested_depth, ())
    return [_event_dict(event) for event in sorted(found, key=lambda e: e.record.id)]


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


def _unchanged(store: Store, stack: StackRecord, digest: str) -> bool:
    if stack.status != "COMPLETE" or stack.action not in ("CREATE", "UPDATE"):
        return False
    revisions = store.revisions(stack.id)
    return bool(revisions) and revisions[-1].digest == digest and revisions[-1].status == "COMPLETE"


def _sink(events: list[Event], progress: ProgressCallback | None) -> Callable[[Event], None]:
    def record(event: Event) -> None:
        events.append(event)
        if progress is not None:
            progress(event)

    return record


def _event_dict(event: Event) -> dict[str, Any]:
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


def _result(
    store: Store, stack: StackRecord, changed: bool, events: list[Event], nested_depth: int,
    definition: StackDefinition | None,
) -> StackResult:
    return StackResult(
        changed=changed,
        failed=stack.status == "FAILED",
        stack=stack,
        resources=list_resources(store, stack.id, nested_depth),
        events=[_event_dict(e) for e in events if len(e.path) <= nested_depth],
        parameters=definition.parameters.display() if definition else {},
    )


def stack_or_error(store: Store, name: str) -> StackRecord:
    stack = store.find_stack(name)
    if stack is None:
        raise StackNotFound(f"The Stack ({name}) could not be found.")
    return stack


__all__ = [
    "ApplyRequest", "HotplayError", "StackResult", "apply_stack", "delete_stack",
    "describe_stack", "summarize_stack",
]
