# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run one case on each side and say what happened, in the same words.

A side's answer is a list of observations, one per step (create, then update):

    {"verdict": "ok" | "refused", "error": text, "stack_status": ..., "status_reason": ...,
     "resources": {path: status}, "ids": {path: physical id}, "outputs": {key: value |
     {"error": text}}}

Nested resources are named by their path (``group/0/inner``), as hotplay lists them.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from heat_peer import HeatClient, HeatError, stack_name
from reading import dependency_pairs

NESTED_DEPTH = 3
# Heat's preview-update categories (resource_changes), check mode's plan keys too.
PREVIEW_CATEGORIES = ("added", "deleted", "replaced", "updated", "unchanged")
# Breakpoints a step may stop at, one after the other (each is cleared and the run
# goes on); a generated case has at most a few.
MAX_PAUSES = 8
# Hidden parameters are kept encrypted: the store needs a key (a test one).
STORE_KEY = "differential-tester-store-key"


def write_step(folder: Path, step: dict[str, Any]) -> tuple[Path, list[str]]:
    """The step's template, provider files and environment as files, as a user has them."""
    folder.mkdir(parents=True, exist_ok=True)
    template = folder / "main.yaml"
    template.write_text(yaml.safe_dump(step["template"], sort_keys=False))
    for name, body in step["files"].items():
        (folder / name).write_text(yaml.safe_dump(body, sort_keys=False))
    environments: list[str] = []
    if step["environment"] is not None:
        env = folder / "env.yaml"
        env.write_text(yaml.safe_dump(step["environment"], sort_keys=False))
        environments.append(str(env))
    return template, environments


def has_hooks(case: dict[str, Any]) -> bool:
    """Whether a step's environment sets breakpoints, on a resource or on a nested
    one (under its parent's name)."""
    def sets_hooks(entries: Any) -> bool:
        return isinstance(entries, dict) and any(
            isinstance(entry, dict) and ("hooks" in entry or sets_hooks(entry)) for entry in entries.values())

    return any(sets_hooks(((step.get("environment") or {}).get("resource_registry") or {}).get("resources"))
               for step in steps(case))


def steps(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [case] + ([case["update"]] if case.get("update") else [])


# --------------------------------------------------------------------- hotplay
class HotplaySide:
    """The engine in-process (the action plugin's code path, without Ansible), on a
    SQLite store of its own."""

    def __init__(self) -> None:
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import StoreKey
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import sealed
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

        self.folder = Path(tempfile.mkdtemp(prefix="hotplay-differential-"))
        # The key given to the store, not to the process: an environment variable
        # set here would reach every ansible-playbook a test starts after it.
        self.store = sealed(SqliteStore(str(self.folder / "store.db")), StoreKey(STORE_KEY))
        self.count = 0

    def run(self, case: dict[str, Any]) -> list[dict[str, Any]]:
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
            ApplyRequest, apply_stack)

        self.count += 1
        name = f"case{self.count}"
        observed: list[dict[str, Any]] = []
        for index, step in enumerate(steps(case)):
            template, environments = write_step(self.folder / name / str(index), step)
            request = ApplyRequest(name=name, template=str(template), environment=environments,
                                   parameters=step["parameters"], nested_depth=NESTED_DEPTH)
            # Before the update: what check mode says it would do (Heat's preview).
            preview = self.preview(replace(request, check_mode=True)) if index else None
            try:
                result, pauses = self.apply(request)
            except HotplayError as refused:
                observed.append(refusal(str(refused)))
                if index == 0:
                    break
                continue
            observed.append(from_hotplay(result) | ({"preview": preview} if preview else {})
                            | ({"pauses": pauses} if pauses else {}))
        return observed

    def apply(self, request: Any) -> tuple[dict[str, Any], list[list[str]]]:
        """The step's result, and where it paused at hooks: each time, every
        pending hook is cleared (stack_hook) and the same task runs again."""
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import apply_stack
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.hooks import clear_hooks

        result = apply_stack(self.store, request, "differential").as_dict()
        pauses: list[list[str]] = []
        while result.get("hooks_pending") and len(pauses) < MAX_PAUSES:
            pauses.append(sorted(f"{h['resource']}:{h['hook']}" for h in result["hooks_pending"]))
            clear_hooks(self.store, request.name)
            result = apply_stack(self.store, request, "differential").as_dict()
        return result, pauses

    def preview(self, request: Any) -> dict[str, list[str]]:
        """The changes check mode lists, by Heat's preview categories (nested
        resources by path); ``{"refused": []}`` when check mode refuses."""
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
        from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import apply_stack

        try:
            plan = apply_stack(self.store, request, "differential").as_dict()["plan"]
        except HotplayError:
            return {"refused": []}
        return {category: sorted(plan.get(category, [])) for category in PREVIEW_CATEGORIES}


def from_hotplay(result: dict[str, Any]) -> dict[str, Any]:
    if "stack_status" not in result:
        return refusal(str(result.get("msg", "")))
    outputs: dict[str, Any] = dict(result["outputs"])
    for key, error in result["output_errors"].items():
        outputs[key] = {"error": error}
    return {"verdict": "ok", "stack_status": result["stack_status"],
            "status_reason": result["stack_status_reason"],
            "resources": {r["name"]: r["status"] for r in result["resources"]},
            "reasons": {r["name"]: r["status_reason"] for r in result["resources"]},
            "ids": {r["name"]: r["physical_id"] for r in result["resources"]},
            "outputs": outputs, "changed": result["changed"],
            "events": top_events(result.get("events") or [], result.get("stack_id")),
            # The task's failure message (a refusal that left the stack as it was).
            "message": str(result.get("msg", "")) if result.get("failed") else ""}


def top_events(events: list[dict[str, Any]], stack_id: Any) -> list[list[str]]:
    """``[resource, "ACTION_STATUS"]`` for each event of the stack's own resources,
    in order; the stack's own events under ``""``."""
    return [["" if e["physical_id"] == stack_id else e["resource_name"], f"{e['action']}_{e['status']}"]
            for e in events if not e.get("parent")]


def heat_top_events(events: list[dict[str, Any]], stack_id: str) -> list[list[str]]:
    return [["" if e["physical_resource_id"] == stack_id else e["resource_name"], e["resource_status"]]
            for e in events]


def refusal(message: str) -> dict[str, Any]:
    return {"verdict": "refused", "error": message}


# -------------------------------------------------------------------- ansible
def run_playbook(case: dict[str, Any], folder: Path, bin_dir: Path, collections: Path) -> list[dict[str, Any]]:
    """The same case through real ``ansible-playbook`` and the installed collection.
    A step that pauses at hooks goes on as an operator's play does: a
    ``stack_hook`` task clears them and the same stack task runs again."""
    store = f"sqlite:///{folder / 'store.db'}"
    tasks: list[dict[str, Any]] = []
    names: list[list[str]] = []
    for index, step in enumerate(steps(case)):
        template, environments = write_step(folder / str(index), step)
        stack = {"name": "case", "template": str(template), "environment": environments,
                 "parameters": step["parameters"], "nested_depth": NESTED_DEPTH, "store": store}
        runs = [f"step{index}_{attempt}" for attempt in range(MAX_PAUSES + 1)]
        names.append(runs)
        tasks.append({"hotplay.stacks.stack": stack, "register": runs[0], "ignore_errors": True})
        for earlier, run in zip(runs, runs[1:]):
            paused = f"{earlier}.hooks_pending | default([]) | length > 0"
            tasks.append({"hotplay.stacks.stack_hook": {"name": "case", "action": "clear", "store": store},
                          "when": paused})
            tasks.append({"hotplay.stacks.stack": stack, "register": run, "ignore_errors": True,
                          "when": paused})
    dump = folder / "results.json"
    every = ", ".join("[" + ", ".join(f"{n} | default(None)" for n in runs) + "]" for runs in names)
    tasks.append({"ansible.builtin.copy": {"dest": str(dump), "mode": "0600",
                                           "content": "{{ [" + every + "] | to_json }}"}})
    playbook = folder / "play.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "ANSIBLE_COLLECTIONS_PATH": str(collections),
           "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
           "HOME": str(folder), "HOTPLAY_STORE_KEY": STORE_KEY}
    subprocess.run([str(bin_dir / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)],
                   env=env, capture_output=True, text=True, timeout=300, check=False)
    observed: list[dict[str, Any]] = []
    for runs in json.loads(dump.read_text()):
        ran = [r for r in runs if r is not None and not r.get("skipped")]
        if not ran:
            break
        result = ran[-1]
        observed.append(from_hotplay(result) if not result.get("failed") or "stack_status" in result
                        else refusal(str(result.get("msg", ""))))
        pauses = [sorted(f"{h['resource']}:{h['hook']}" for h in r["hooks_pending"]) for r in ran[:-1]]
        if pauses:
            observed[-1]["pauses"] = pauses
        if observed[-1]["verdict"] == "refused" and len(observed) == 1:
            break
    return observed


# ----------------------------------------------------------------------- Heat
class HeatSide:
    """The real engine through its REST API; every stack is deleted after its case."""

    def __init__(self, endpoint: str) -> None:
        self.client = HeatClient(endpoint)

    def run(self, case: dict[str, Any]) -> list[dict[str, Any]]:
        client = self.client
        name = stack_name()
        stack_id = ""
        observed: list[dict[str, Any]] = []
        hooked = has_hooks(case)
        seen = 0  # Heat's events of the earlier steps
        try:
            for index, step in enumerate(steps(case)):
                fields = heat_fields(step)
                try:
                    if index == 0:
                        stack_id = client.create(name, fields)
                    else:
                        preview = self.preview(name, stack_id, fields)
                        client.update(name, stack_id, fields)
                except HeatError as refused:
                    observed.append(refusal(refused.message))
                    if index == 0:
                        break
                    continue
                action = "CREATE" if index == 0 else "UPDATE"
                # Only a case with breakpoints can stand still at one: the others wait
                # on the stack's status alone.
                shown, pauses = (self.settle(name, stack_id, action) if hooked
                                 else (client.wait(name, stack_id, action), []))
                observed.append(self.observe(name, stack_id, shown) | ({"preview": preview} if index else {})
                                | ({"pauses": pauses} if pauses else {})
                                # What the template says depends on what (events' order).
                                | {"needs": [list(pair) for pair in dependency_pairs(step["template"])]})
                if not hooked:  # with breakpoints, the events of one step are not compared
                    events = client.events(name, stack_id)
                    observed[-1]["events"] = heat_top_events(events[seen:], stack_id)
                    seen = len(events)
        finally:
            if stack_id:
                client.delete(name, stack_id)
        return observed

    def settle(self, name: str, stack_id: str, action: str) -> tuple[dict[str, Any], list[list[str]]]:
        """The stack once its action is over, and where it paused at hooks: each
        time, the pending hooks are cleared (a signal ``unset_hook`` to the
        resource, in its own stack: nested resources too)."""
        pauses: list[list[str]] = []
        while True:
            shown, pending = self.until_paused(name, stack_id, action)
            if not pending or len(pauses) >= MAX_PAUSES:
                return shown, pauses
            pauses.append(sorted(f"{path}:{hook}" for path, hook in pending))
            for (path, hook), (stack, resource) in pending.items():
                self.client.call("POST", f"/stacks/{stack}/resources/{resource}/signal",
                                 {"unset_hook": hook})

    def until_paused(self, name: str, stack_id: str,
                     action: str) -> tuple[dict[str, Any], dict[tuple[str, str], tuple[str, str]]]:
        """Wait until the action is over, or stands still at hooks: some pending and
        no resource in progress but those a pending hook inside holds, twice in a row
        (a provider whose nested stack has not started its resources yet is busy).
        The hooks pending: (path, hook) -> (its stack as "name/id", resource name)."""
        client, still = self.client, 0
        deadline = time.monotonic() + client.timeout
        while True:
            shown = client.show(name, stack_id)
            status = str(shown["stack_status"])
            if (status.startswith(action) and not status.endswith("IN_PROGRESS")) or time.monotonic() > deadline:
                return shown, {}
            listed = client.resources(name, stack_id, NESTED_DEPTH)
            paths = resource_paths(stack_id, listed)
            pending = self.pending(name, stack_id, listed, paths)
            busy = any(r["resource_status"].endswith("IN_PROGRESS")
                       and not any(path.startswith(paths[id(r)] + "/") for path, _hook in pending)
                       for r in listed)
            still = still + 1 if pending and not busy else 0
            if still >= 2:
                return shown, pending
            time.sleep(client.poll)

    def pending(self, name: str, stack_id: str, listed: list[dict[str, Any]],
                paths: dict[int, str]) -> dict[tuple[str, str], tuple[str, str]]:
        """The hooks pending in the stack and its nested stacks, by resource path
        (``listed``: the resources at every level, ``paths`` theirs)."""
        events = self.client.call(
            "GET", f"/stacks/{name}/{stack_id}/events?sort_dir=asc&limit=10000&nested_depth={NESTED_DEPTH}")
        by_stack: dict[str, list[dict[str, Any]]] = {}
        for event in events["events"]:
            by_stack.setdefault(_stack_ref(event), []).append(event)
        path_of = {(_stack_ref(r).rsplit("/", 1)[-1], r["resource_name"]): paths[id(r)] for r in listed}
        found: dict[tuple[str, str], tuple[str, str]] = {}
        for stack, stack_events in by_stack.items():
            owner, nested_id = stack.partition("/")[::2]
            for resource, hook in pending_hooks(owner, stack_events):
                path = path_of.get((nested_id, resource), resource)
                found[(path, hook)] = (stack, resource)
        return found

    def preview(self, name: str, stack_id: str, fields: dict[str, Any]) -> dict[str, list[str]]:
        """Heat's preview of the update, nested stacks shown, resources by path."""
        try:
            changes = self.client.preview_update(name, stack_id, fields, show_nested=True)
        except HeatError:
            return {"refused": []}
        return {category: sorted(preview_path(name, change) for change in changes.get(category, []))
                for category in PREVIEW_CATEGORIES}

    def observe(self, name: str, stack_id: str, shown: dict[str, Any]) -> dict[str, Any]:
        listed = self.client.resources(name, stack_id, NESTED_DEPTH)
        # A failed stack's status is final while resources started before the
        # failure still finish: wait for them (a few seconds at most).
        for _attempt in range(50):
            if not any(r["resource_status"].endswith("IN_PROGRESS") for r in listed):
                break
            time.sleep(0.2)
            listed = self.client.resources(name, stack_id, NESTED_DEPTH)
        if str(shown["stack_status"]).startswith("UPDATE"):  # a create replaces nothing
            listed = self.replacements(name, stack_id, listed)
        paths = resource_paths(stack_id, listed)
        outputs: dict[str, Any] = {}
        for output in shown.get("outputs") or []:
            key = output["output_key"]
            outputs[key] = ({"error": output["output_error"]} if output.get("output_error")
                            else output.get("output_value"))
        return {"verdict": "ok", "stack_status": shown["stack_status"],
                "status_reason": shown["stack_status_reason"],
                "resources": {paths[id(r)]: r["resource_status"] for r in listed},
                "reasons": {paths[id(r)]: r["resource_status_reason"] for r in listed},
                "ids": {paths[id(r)]: r["physical_resource_id"] for r in listed},
                "outputs": outputs}

    def replacements(self, name: str, stack_id: str, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The listing with each resource replaced in the last update shown as its
        replacement.  Until an update completes, Heat keeps the replaced resource
        beside its replacement and lists either (its list keys them by name in the
        database's order: seen both ways for the same case); the update's events say
        which one the stack now has."""
        created = self.created_in_last_update(name, stack_id)
        for resource in [r for r in listed if _link(r, "stack") == stack_id]:
            event = created.get(resource["resource_name"])
            if event is None or event["physical_resource_id"] == resource["physical_resource_id"]:
                continue
            listed = [r for r in _without_nested(listed, _link(resource, "nested")) if r is not resource]
            listed += self.replacement(resource, event)
        return listed

    def replacement(self, old: dict[str, Any], event: dict[str, Any]) -> list[dict[str, Any]]:
        """The replacement as Heat's list shows a resource, then its nested resources."""
        physical = event["physical_resource_id"]
        new = dict(old, physical_resource_id=physical, resource_status=event["resource_status"],
                   resource_status_reason=event["resource_status_reason"],
                   links=[link for link in old.get("links", []) if link.get("rel") == "stack"])
        try:  # a nested stack is named as the replacement's first event names it
            nested = self.client.resources(event["nested_name"], physical, NESTED_DEPTH - 1)
        except HeatError:  # not a stack
            return [new]
        new["links"].append({"rel": "nested", "href": f"{event['nested_name']}/{physical}"})
        return [new, *nested]

    def created_in_last_update(self, name: str, stack_id: str) -> dict[str, dict[str, Any]]:
        """Each top-level resource created during the stack's last update: its last
        ``CREATE_COMPLETE`` event (and the name its nested stack got, if any)."""
        events = self.client.events(name, stack_id)
        starts = [i for i, e in enumerate(events) if e["resource_name"] == name
                  and e["resource_status"] == "UPDATE_IN_PROGRESS"]
        created: dict[str, dict[str, Any]] = {}
        started: dict[str, str] = {}
        for event in events[starts[-1]:] if starts else []:
            if event["resource_name"] == name:
                continue
            if event["resource_status"] == "CREATE_IN_PROGRESS":
                started[event["resource_name"]] = event["physical_resource_id"]
            elif event["resource_status"] == "CREATE_COMPLETE":
                created[event["resource_name"]] = dict(event, nested_name=started.get(event["resource_name"], ""))
        return created


def _without_nested(listed: list[dict[str, Any]], nested_id: str) -> list[dict[str, Any]]:
    """The listing without the resources of a nested stack, at any depth."""
    gone = {nested_id} if nested_id else set()
    while True:
        more = {_link(r, "nested") for r in listed if _link(r, "stack") in gone} - gone - {""}
        if not more:
            return [r for r in listed if _link(r, "stack") not in gone]
        gone |= more


_PAUSED = re.compile(r"paused until Hook (\S+) is cleared")
_CLEARED = re.compile(r"^Hook (\S+) is cleared")


def pending_hooks(name: str, events: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(resource, hook) paused at and not cleared since the stack's last action began."""
    starts = [i for i, e in enumerate(events) if e["resource_name"] == name
              and str(e["resource_status"]).endswith("IN_PROGRESS")]
    pending: set[tuple[str, str]] = set()
    for event in events[starts[-1]:] if starts else events:
        reason = str(event.get("resource_status_reason") or "")
        paused, cleared = _PAUSED.search(reason), _CLEARED.search(reason)
        if paused:
            pending.add((event["resource_name"], paused.group(1)))
        elif cleared:
            pending.discard((event["resource_name"], cleared.group(1)))
    return pending


def preview_path(top: str, change: dict[str, Any]) -> str:
    """A resource of Heat's preview by its path.  A nested stack is named
    ``<parent stack>-<resource>-<12 random characters>`` (no random part when the
    preview adds it): its name, less the top stack's, gives the path."""
    parents = str(change.get("stack_name") or top).removeprefix(top).split("-")
    names = [part for part in parents if part and not _RANDOM_PART.fullmatch(part)]
    return "/".join([*names, str(change["resource_name"])])


_RANDOM_PART = re.compile(r"[a-z0-9]{12}")


def heat_fields(step: dict[str, Any]) -> dict[str, Any]:
    """What ``openstack stack create`` sends: the texts, the files by the names the
    environment uses, the environment as data."""
    return {"template": yaml.safe_dump(step["template"], sort_keys=False),
            "files": {n: yaml.safe_dump(b, sort_keys=False) for n, b in step["files"].items()},
            "environment": step["environment"] or {}, "parameters": step["parameters"]}


def _stack_ref(item: dict[str, Any]) -> str:
    """"name/id" of the stack an event or a resource belongs to (its ``stack`` link)."""
    for link in item.get("links", []):
        if link.get("rel") == "stack":
            return "/".join(str(link["href"]).rstrip("/").split("/")[-2:])
    return ""


def _link(resource: dict[str, Any], rel: str) -> str:
    for link in resource.get("links", []):
        if link.get("rel") == rel:
            return str(link["href"]).rstrip("/").rsplit("/", maxsplit=1)[-1]
    return ""


def resource_paths(top_id: str, listed: list[dict[str, Any]]) -> dict[int, str]:
    """Each listed resource's path, from the ``stack`` and ``nested`` links."""
    prefix = {top_id: ""}
    paths: dict[int, str] = {}
    pending = list(listed)
    while pending:
        waiting = []
        for resource in pending:
            owner = _link(resource, "stack")
            if owner not in prefix:
                waiting.append(resource)
                continue
            path = prefix[owner] + resource["resource_name"]
            paths[id(resource)] = path
            nested = _link(resource, "nested")
            if nested:
                prefix[nested] = path + "/"
        if len(waiting) == len(pending):  # orphans: name them by their own stack
            for resource in waiting:
                paths[id(resource)] = "?/" + resource["resource_name"]
            break
        pending = waiting
    return paths
