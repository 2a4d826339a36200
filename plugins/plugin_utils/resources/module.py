# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``Hotplay::Ansible::Module``: any Ansible module as a stack resource.

Create runs the module with ``args`` on the resource's host (the play host, or
``host``) as a task would, through the module's action plugin when it has one;
an update in place runs it again with the new arguments; a delete runs it with
the delete arguments (``state: absent`` for modules that follow that convention).
The module's return values are the resource's attributes, and one of them its
physical id.  Each call gets a connection of its own (``runtime.host``), so
independent module resources run side by side.

A replacement creates the new thing before the old one is deleted; when both
are the same physical thing (same host, same physical id: the same path or name)
the engine asks ``same_physical`` and only forgets the old record, because
deleting it would destroy the new one.

Check mode asks the module itself: ``check_change`` (the preview) and
``check_drift`` (``stack_info`` with ``drift``) run it in check mode.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import HotplayError, StackValidationFailed
from .base import (
    MASK,
    Outcome,
    PropertySchema,
    Resource,
    ResourceState,
    register,
)
from .properties import allowed_pattern

FQCN_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){2,}"
# Arguments that name the thing a module manages: by default a change of one of
# them replaces the resource (a rerun would make a second thing and orphan the
# first); every other argument is updated in place.
NAMING_ARGUMENTS = frozenset({"name", "path", "dest", "id"})
# Where the default physical id is found: the module's result, then its arguments.
IDENTITY_KEYS = ("id", "path", "dest", "name")
# Keys of a result that are not return values of the module.
NOT_RETURNED = frozenset({"invocation", "diff"})
CHECK_MODE_UNSUPPORTED = "does not support check mode"


class ModuleHost(Protocol):
    """What the Ansible side gives the engine to run modules (``PlayHost``)."""

    name: str  # the inventory hostname

    def on(self, hostname: str) -> ModuleHost:
        """The same, for another inventory host (``delegate_to`` semantics)."""

    def run_module(self, module: str, arguments: Mapping[str, Any], *, check_mode: bool = False,
                   diff: bool = False, no_log: bool = False) -> dict[str, Any]:
        """Run one module as a task would; its result (``failed`` included)."""


@dataclass(frozen=True)
class ModuleCall:
    module: str
    arguments: Mapping[str, Any]


def _string_list(description: str) -> PropertySchema:
    return PropertySchema("list", description, update_allowed=True, schema=PropertySchema("string"))


@register
class AnsibleModule(Resource):
    type_name = "Hotplay::Ansible::Module"
    properties_schema = {
        "module": PropertySchema(
            "string", "The module, by its fully qualified collection name.", required=True,
            constraints=(allowed_pattern(FQCN_PATTERN, "module must be a fully qualified collection "
                                                       "name, such as ansible.builtin.copy"),)),
        "args": PropertySchema("map", "The module's arguments; a null value leaves the argument out.",
                               default={}, update_allowed=True),
        "delete_args": PropertySchema(
            "map", "Arguments merged over args to delete (a null value drops that argument); "
                   "not given: {state: absent} when the module follows that convention; "
                   "null or {}: deleting only forgets the resource.", update_allowed=True),
        "delete_module": PropertySchema(
            "string", "Another module that deletes the thing; then delete_args are its whole "
                      "arguments.", update_allowed=True,
            constraints=(allowed_pattern(FQCN_PATTERN, "delete_module must be a fully qualified "
                                                       "collection name"),)),
        "delete_by_id": PropertySchema(
            "string", "An argument (a dotted path into args, such as attributes.id) set to the "
                      "recorded physical id to delete (for modules that find what they manage by "
                      "name or id: a replacement may have the same name).",
            update_allowed=True),
        "update_by_id": PropertySchema(
            "string", "An argument (a dotted path into args) set to the recorded physical id "
                      "when the module reruns on what it made (update, preview, drift), for "
                      "modules that find what they manage by the arguments an update changes.",
            update_allowed=True),
        "update_in_place": _string_list(
            "Names (or fnmatch patterns) of arguments whose change reruns the module in place; a "
            "change of any other replaces the resource. Not given: every argument but name, "
            "path, dest and id."),
        "host": PropertySchema("string", "The inventory host the module runs on; default the "
                                         "play host."),
        "physical_id": PropertySchema(
            "string", "Dotted path into the module's return values that is the physical id; "
                      "default the first of id, path, dest, name returned (or given).",
            update_allowed=True),
        "attributes": _string_list("Which return values become attributes; default all."),
        "dropped_returns": _string_list(
            "Dotted paths into the module's return values that are never kept (such as a "
            "password the cloud generates and the template does not read)."),
        "no_log": PropertySchema(
            "list", "Names of arguments whose values are secret.", default=[], update_allowed=True,
            schema=PropertySchema("string")),
        "adopt_run": PropertySchema(
            "boolean", "Accepted for templates written for earlier versions; no effect: a module "
                       "that cannot say in check mode whether it would change what Heat made is "
                       "never run on adoption (the resource is recorded as the template says).",
            update_allowed=True),
    }
    attributes_schema = {}
    # Only inside a provider template that stands for a resource Heat made (see
    # handle_adopt): Heat's stacks have no module resources of their own.
    adoptable = True

    # -- validation ----------------------------------------------------------------------
    def validate(self, properties: Mapping[str, Any]) -> None:
        path = properties.get("physical_id")
        if isinstance(path, str) and path and not all(path.split(".")):
            raise StackValidationFailed(
                f"Property error: resources.{self.name}.properties.physical_id: \"{path}\" is not "
                "a dotted path into the module's return values (e.g. user.id)")
        if properties.get("delete_module") and properties.get("delete_args") in (None, {}):
            raise StackValidationFailed(
                f"Property error: resources.{self.name}.properties.delete_args: delete_module "
                "needs delete_args (the arguments it deletes with)")

    def preflight(self, properties: Mapping[str, Any]) -> None:
        """Before anything is written: the modules named are installed on the
        controller (when the run can tell)."""
        play = getattr(self.runtime, "host", None)
        exists = getattr(play, "module_exists", None)
        if exists is None:
            return
        for key in ("module", "delete_module"):
            name = properties.get(key)
            if isinstance(name, str) and name and not exists(name):
                raise StackValidationFailed(
                    f"The module {name} was not found: install the collection that has it "
                    "(ansible-galaxy collection install), or correct the name",
                    path=f"resources.{self.name}.properties.{key}")

    # -- life cycle ------------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        self._claim(properties)
        return self._converge(properties)

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        """Rerun the module with the new arguments (only the in-place ones changed)."""
        return self._converge(properties, current.physical_id)

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        """The thing Heat made (``adopted.resource_id``), as this module manages it: the
        module in check mode must change nothing (else the template does not describe
        the thing, and adopting it would change it on the next apply); then it runs to
        return what it returns after a create (its attributes), changing nothing
        (in check mode too: it is a read once its check mode said so).
        A module that cannot tell in check mode is never run for real on adoption (an
        abandon file is input from elsewhere, and such a module might act): the
        resource is recorded as the template says, with Heat's id and no attributes
        until an update runs it.  ``adopt_run`` is accepted and has no effect."""
        host = self._host(properties)
        call = self._call(properties, adopted.resource_id)
        verdict = _verdict(self._run(host, call, properties, check=True))
        if verdict.get("failed"):
            raise self.fail(f"{call.module} on {host.name}, reading {adopted.resource_id}: "
                            f"{verdict.get('msg')}", "Error")
        if verdict["changed"] is None:
            # Not run: check mode could not tell whether it would act.
            return Outcome(adopted.resource_id, {"host": host.name, "attributes": {}})
        if verdict["changed"]:
            keys = ", ".join(verdict.get("changed_keys") or ()) or "it does not say what"
            raise self.fail(f"{call.module} would change the existing {adopted.resource_id} "
                            f"({keys}): the template does not describe what Heat made, so it "
                            "cannot be adopted as it is", "Error")
        result = self._run(host, call, properties)
        if result.get("changed"):
            raise self.fail(f"{call.module} changed {adopted.resource_id} on adoption (its check "
                            "mode said it would not, or could not say)", "Error")
        return self._outcome(host, properties, result)

    def _converge(self, properties: Mapping[str, Any], physical_id: str = "") -> Outcome:
        host = self._host(properties)
        call = self._call(properties, physical_id)
        result = self._run(host, call, properties)
        return self._outcome(host, properties, result)

    @staticmethod
    def _call(properties: Mapping[str, Any], physical_id: str = "") -> ModuleCall:
        """The module and its arguments; a null argument is left out, as ``omit``
        leaves it out of a task: a template's ``{if: [cond, value, null]}`` means
        "not given", and modules count a given null as given (mutually_exclusive).
        On what the module made (``physical_id``), ``update_by_id`` names it by its id."""
        arguments = _without_nulls(properties.get("args") or {})
        by_id = properties.get("update_by_id")
        if by_id and physical_id:
            arguments = _with_id(arguments, str(by_id), physical_id)
        return ModuleCall(str(properties["module"]), arguments)

    def _claim(self, properties: Mapping[str, Any]) -> None:
        """Record the thing's identity before the module makes it, when the
        arguments name it (path, dest, name): a run killed while the module ran
        leaves a record of what it may have made, never an untracked thing."""
        if properties.get("physical_id"):
            return  # an id the module returns: not known before it runs
        args = properties.get("args") or {}
        for key in IDENTITY_KEYS:
            value = args.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
                self.runtime.claim_physical_id(self.name, str(value))
                return

    def handle_delete(self, current: ResourceState) -> None:
        properties = current.properties
        if not properties.get("module"):
            return  # never got as far as running
        call = self.delete_call(properties, current.physical_id)
        if call is None:
            return  # the module has no delete: the resource is only forgotten
        self._run(self._recorded_host(current), call, properties)

    def delete_call(self, properties: Mapping[str, Any], physical_id: str = "") -> ModuleCall | None:
        """The module call that deletes the thing, or None when there is none."""
        module = str(properties["module"])
        args = dict(properties.get("args") or {})
        delete_args = properties.get("delete_args")
        delete_module = properties.get("delete_module")
        by_id = properties.get("delete_by_id")
        if delete_module:
            arguments = _without_nulls(delete_args or {})
        else:
            if delete_args is None:
                if not self.follows_absent(module, args):
                    return None
                delete_args = {"state": "absent"}
            elif not delete_args:
                return None
            arguments = _without_nulls({**args, **delete_args})
        if by_id and physical_id:
            # The recorded id, not the name: the replacement may carry the same name.
            arguments = _with_id(arguments, str(by_id), physical_id)
        return ModuleCall(str(delete_module or module), arguments)

    def follows_absent(self, module: str, args: Mapping[str, Any]) -> bool:
        """Whether ``state: absent`` deletes what the module made: its documented
        ``state`` option has the choice ``absent`` (read from the module's docs on
        the controller); without docs, when ``args`` sets ``state``."""
        play = getattr(self.runtime, "host", None)
        lookup = getattr(play, "module_options", None)
        options = lookup(module) if lookup is not None else None
        if options is None:
            return "state" in args
        choices = (options.get("state") or {}).get("choices") or ()
        return "absent" in choices

    # -- updates and replacement --------------------------------------------------------
    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        if old.get("module") != new.get("module"):
            return "property module changed and cannot be updated in place"
        if self._host_name(old) != self._host_name(new):
            return "property host changed and cannot be updated in place"
        before, after = old.get("args"), new.get("args")
        if not isinstance(after, Mapping) or not isinstance(before, Mapping):
            return "args are known only after apply, so a replacement cannot be ruled out"
        patterns = new.get("update_in_place")
        for key in sorted(set(before) | set(after)):
            if before.get(key) != after.get(key) and not _in_place(key, patterns):
                return (f"argument {key} changed and cannot be updated in place "
                        "(it is not in update_in_place)")
        return None

    def same_physical(self, retired: ResourceState, live: ResourceState) -> bool:
        """Same physical id on the same host (a thing on another host is another)."""
        if retired.physical_id != live.physical_id:
            return False
        where = live.data.get("host")
        # A record whose create never finished (a killed run) names no host yet:
        # it was made, if at all, where its properties say.
        was = retired.data.get("host") or self._host_name(retired.properties)
        return where is None or where == was

    # -- check mode -----------------------------------------------------------------------
    def check_change(self, current: ResourceState | None,
                     properties: Mapping[str, Any]) -> dict[str, Any]:
        """The preview: would running the module with these arguments change
        anything?  ``changed`` is None when the module cannot tell (no check mode)."""
        call = self._call(properties, current.physical_id if current is not None else "")
        try:
            host = self._recorded_host(current) if current is not None else self._host(properties)
            result = self._run(host, call, properties, check=True)
        except HotplayError as error:
            return {"changed": None, "msg": str(error)}
        return _verdict(result)

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        """Does the real thing still match what was recorded?  The module in check
        mode with the recorded arguments: a change it would make is drift."""
        if state.action == "INIT" or not state.properties.get("module"):
            return {"drifted": None, "msg": "nothing was created yet"}
        if MASK in self.secret_values(state.properties):
            return {"drifted": None, "msg": "its no_log arguments are sealed in the store: give "
                                            "the store key to check it"}
        verdict = self.check_change(state, state.properties)
        verdict["drifted"] = verdict.pop("changed")
        return verdict

    def check_healthy(self, state: ResourceState) -> bool:
        """A replaced resource a rollback could swap back is healthy only when the
        module (in check mode) would change nothing."""
        return self.check_drift(state).get("drifted") is False

    # -- attributes -------------------------------------------------------------------------
    def attribute(self, state: ResourceState, name: str) -> Any:
        if name == "show":
            return self.masked_properties(state.properties)
        return state.data.get("attributes", {}).get(name)

    def attribute_names(self) -> frozenset[str] | None:
        return None  # whatever the module returns

    # -- secrets ----------------------------------------------------------------------------
    def secret_paths(self, properties: Mapping[str, Any]) -> list[tuple[str, ...]]:
        names = properties.get("no_log") or []
        paths: list[tuple[str, ...]] = []
        for section in ("args", "delete_args"):
            values = properties.get(section)
            if isinstance(values, Mapping):
                paths += [(section, str(name)) for name in names if name in values]
        return paths

    def module_secret_values(self, properties: Mapping[str, Any]) -> list[str]:
        """Values of arguments the module's own argument spec marks ``no_log``
        (``get_url``'s ``url_password``), listed in ``no_log`` or not."""
        lookup = getattr(getattr(self.runtime, "host", None), "module_no_log", None)
        if lookup is None:
            return []
        values = []
        for section, module in (("args", properties.get("module")),
                                ("delete_args", properties.get("delete_module") or properties.get("module"))):
            arguments = properties.get(section)
            if not isinstance(arguments, Mapping) or not isinstance(module, str) or not module:
                continue
            values += [str(arguments[name]) for name in sorted(lookup(module) & set(arguments))
                       if arguments[name] is not None and str(arguments[name])]
        return values

    # -- running ----------------------------------------------------------------------------
    def _run(self, host: ModuleHost, call: ModuleCall, properties: Mapping[str, Any],
             check: bool = False) -> dict[str, Any]:
        """One module call, its result as plain data with the secrets masked; a
        failed call (outside check mode) fails the resource with the module's msg."""
        secrets = list(self.secret_values(properties)) + self.module_secret_values(properties)
        raw = host.run_module(call.module, call.arguments, check_mode=check, diff=check,
                              no_log=bool(secrets))
        result: dict[str, Any] = _masked(_plain(raw), secrets)
        if result.get("failed") and not check:
            raise self.fail(f"{call.module} on {host.name}: {failure_text(result)}", "Error")
        return result

    def _outcome(self, host: ModuleHost, properties: Mapping[str, Any],
                 result: Mapping[str, Any]) -> Outcome:
        returned = {k: v for k, v in result.items() if k not in NOT_RETURNED}
        for path in properties.get("dropped_returns") or ():
            returned = _without(returned, str(path).split("."))
        wanted = properties.get("attributes")
        attributes = returned if wanted is None else {name: returned.get(name) for name in wanted}
        return Outcome(self._physical_id(properties, returned),
                       {"host": host.name, "attributes": attributes})

    def _physical_id(self, properties: Mapping[str, Any], result: Mapping[str, Any]) -> str:
        path = properties.get("physical_id")
        if path:
            value = _dig(result, str(path))
            if value is None or isinstance(value, (Mapping, list)):
                raise self.fail(f"physical_id {path} is not a value the module returned "
                                f"(it returned: {', '.join(sorted(result))})", "Error")
            return str(value)
        args = properties.get("args") or {}
        for source in (result, args):
            for key in IDENTITY_KEYS:
                value = source.get(key)
                if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
                    return str(value)
        return self.runtime.physical_name(self.name)

    def _host(self, properties: Mapping[str, Any]) -> ModuleHost:
        play = getattr(self.runtime, "host", None)
        if play is None:
            raise self.fail(f"{properties.get('module')} needs a host to run on: apply this stack "
                            "from a playbook task", "Error")
        wanted = properties.get("host")
        host: ModuleHost = play.on(str(wanted)) if wanted else play
        return host

    def _recorded_host(self, state: ResourceState) -> ModuleHost:
        """Where the thing was made (a default host is the play host of that run)."""
        recorded = state.data.get("host") or state.properties.get("host")
        return self._host({**state.properties, "host": recorded})

    def _host_name(self, properties: Mapping[str, Any]) -> str:
        play = getattr(self.runtime, "host", None)
        return str(properties.get("host") or (play.name if play is not None else ""))


def _in_place(key: str, patterns: Any) -> bool:
    if patterns is None:
        return key not in NAMING_ARGUMENTS
    return any(fnmatch.fnmatchcase(key, str(pattern)) for pattern in patterns)


def _without_nulls(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in arguments.items() if value is not None}


def _with_id(arguments: Mapping[str, Any], path: str, physical_id: str) -> dict[str, Any]:
    """``arguments`` with the dotted ``path`` (``attributes.id``) set to the id."""
    head, _dot, rest = path.partition(".")
    if not rest:
        return {**arguments, head: physical_id}
    inner = arguments.get(head)
    return {**arguments, head: _with_id(inner if isinstance(inner, Mapping) else {}, rest, physical_id)}


def _plain(result: Mapping[str, Any]) -> dict[str, Any]:
    """The result as plain JSON data (ansible-core tags its strings), without
    Ansible's private keys."""
    data = json.loads(json.dumps(dict(result), default=str))
    return {key: value for key, value in data.items() if not key.startswith("_ansible")}


def _masked(value: Any, secrets: list[str]) -> Any:
    """``value`` with every secret replaced by MASK inside its strings."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in sorted(secrets, key=len, reverse=True):
            value = value.replace(secret, MASK)
        return value
    if isinstance(value, Mapping):
        return {key: _masked(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item, secrets) for item in value]
    return value


def failure_text(result: Mapping[str, Any]) -> str:
    """What a failed module result says went wrong: its msg, else what it printed,
    else its return code and its keys (a failure never reads as an empty message)."""
    parts = [_tail(str(result[key])) for key in ("msg", "module_stderr", "module_stdout", "stderr")
             if str(result.get(key) or "").strip()]
    if "rc" in result:
        parts.append(f"rc={result['rc']}")
    return "; ".join(parts) or f"failed, with nothing said (result keys: {', '.join(sorted(result))})"


def _tail(text: str, limit: int = 1500) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def _without(values: Mapping[str, Any], keys: list[str]) -> dict[str, Any]:
    """A copy of ``values`` without the value at ``keys`` (maps only; nothing when
    it is not there)."""
    kept = dict(values)
    head, rest = keys[0], keys[1:]
    if head not in kept:
        return kept
    if not rest:
        del kept[head]
    elif isinstance(kept[head], Mapping):
        kept[head] = _without(kept[head], rest)
    return kept


def _dig(value: Any, path: str) -> Any:
    """``a.b.0.c`` into nested maps and lists; None when something is missing."""
    for key in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(key)
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value


def _verdict(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a check-mode run says: changed (None when the module cannot tell),
    which keys its diff shows changing, and the diff."""
    message = str(result.get("msg") or "")
    if result.get("skipped") or CHECK_MODE_UNSUPPORTED in message:
        return {"changed": None, "msg": message or "the module cannot run in check mode"}
    if result.get("failed"):
        return {"changed": None, "failed": True, "msg": message or "the module failed"}
    verdict: dict[str, Any] = {"changed": bool(result.get("changed"))}
    diffs = _diff_list(result.get("diff"))
    if diffs and verdict["changed"]:
        verdict["changed_keys"] = _changed_keys(diffs)
        verdict["diff"] = diffs
    return verdict


def _diff_list(diff: Any) -> list[dict[str, Any]]:
    if isinstance(diff, Mapping):
        return [dict(diff)] if diff else []
    if isinstance(diff, list):
        return [dict(item) for item in diff if isinstance(item, Mapping) and item]
    return []


def _changed_keys(diffs: list[dict[str, Any]]) -> list[str]:
    """Keys a module's diff shows changing: those of before/after maps that
    differ (file, user), or ``content`` for a text diff (copy, template)."""
    keys: set[str] = set()
    for diff in diffs:
        before, after = diff.get("before"), diff.get("after")
        if isinstance(before, Mapping) or isinstance(after, Mapping):
            before, after = dict(before or {}), dict(after or {})
            keys |= {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        elif before != after:
            keys.add("content")
    return sorted(keys)
