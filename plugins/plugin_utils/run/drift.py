# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift: does each real thing still match what the stack recorded?

Only types that can ask their own tool answer (``check_drift``: module resources
run their module in check mode with the recorded arguments); the questions run
side by side, every nested stack included.  Nothing is written to the store.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..resources.base import Resource, ResourceState
from ..resources.openstack.session import CloudSession
from ..store.base import StackRecord, Store
from .executor import RunOptions, StackRun, handler_for_record

WORKERS = 16


def detect_drift(store: Store, stack: StackRecord, host: Any,
                 cloud: CloudSession | None = None) -> dict[str, dict[str, Any]]:
    """Resource path -> ``{drifted: true/false/null, changed_keys, diff, msg}``
    for every resource of the stack tree whose type can tell; OpenStack types
    read the real things through ``cloud`` (the operation's session)."""
    options = RunOptions(host=host, cloud=cloud or CloudSession())
    asked = list(_askable(store, stack, options, ()))
    if not asked:
        return {}
    with ThreadPoolExecutor(max_workers=min(WORKERS, len(asked))) as pool:
        answers = pool.map(_ask, asked)
        return {path: answer for (path, _handler, _state), answer in zip(asked, answers)}


def drifted(report: dict[str, dict[str, Any]]) -> list[str]:
    """Paths of the resources that drifted."""
    return [path for path, answer in report.items() if answer.get("drifted")]


def repairs(report: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Heat's ``converge``: what an update must put right, by resource path, and
    why -- each drifted resource, and the nested stacks that hold one (their
    stacks are walked again to reach it)."""
    found: dict[str, str] = {}
    for path in drifted(report):
        keys = report[path].get("changed_keys")
        found[path] = "converge: the real resource drifted" + (
            f" ({', '.join(map(str, keys))} changed)" if keys else "")
        parts = path.split("/")
        for depth in range(1, len(parts)):
            found.setdefault("/".join(parts[:depth]), f"converge: {path} drifted")
    return found


def _askable(store: Store, stack: StackRecord, options: RunOptions,
             path: tuple[str, ...]) -> Iterator[tuple[str, Resource, ResourceState]]:
    run = StackRun(store, stack, lambda event: None, path=path, options=options)
    for name, state in sorted(run.records.items(), key=lambda item: run.positions.get(item[0], 0)):
        handler = handler_for_record(state, run.runtime)
        if callable(getattr(handler, "check_drift", None)):
            yield "/".join(path + (name,)), handler, state
        if state.nested_stack_id:
            yield from _askable(store, store.get_stack(state.nested_stack_id), options, path + (name,))


def _ask(asked: tuple[str, Resource, ResourceState]) -> dict[str, Any]:
    _path, handler, state = asked
    try:
        answer: dict[str, Any] = handler.check_drift(state)  # type: ignore[attr-defined]
        return answer
    except Exception as error:  # noqa: BLE001 - one resource's question must not hide the others
        return {"drifted": None, "msg": f"{type(error).__name__}: {error}"}
