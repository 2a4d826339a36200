# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare what hotplay and Heat did with one case.

Compared, step by step: the verdict (refused or run) and the error's text, the stack's
status and reason, every resource's status (nested ones by path), the outputs and
output errors, which resources kept their physical id across the update, and before
the update, what check mode said it would do against Heat's preview of it.
Physical ids differ by nature: in outputs and reasons each is replaced by the path of
the resource that has it, so ``get_resource`` compares by what it points at.

Differences that hotplay keeps on purpose are listed in ``docs/heat-differences.md``,
each with a ``Tester key``; a divergence is forgiven only when the rule for it below
recognises it *and* the document still lists its key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DIFFERENCES = REPO / "docs" / "heat-differences.md"

_FILE = re.compile(r"^(?:/[^:]*?\.(?:yaml|yml|template|json)): ")
_LOCATION = re.compile(r"^(?:Property error: )?(?:(?:resources|outputs|parameters|conditions|"
                       r"parameter_groups)(?:\.[^ :]+|\[\d+\])*|(?:[A-Za-z0-9_]+\.)?[Pp]roperties"
                       r"(?:\.[^ :]+)*): ")
# Inside a reason: "StackValidationFailed: resources.r1: Property error: <place>: ..."
_INNER_LOCATION = re.compile(r"(Property error: )(?:(?:resources)(?:\.[^ :]+)*|(?:[A-Za-z0-9_]+\.)?"
                             r"[Pp]roperties(?:\.[^ :]+)*): ")
_PIECE = re.compile(r"^(?:[A-Za-z0-9_%<>-]+(?:\.[^ :]+|\[\d+\])+|(?:\[\d+\])+(?:\.[^ :]+)*|"
                    r"(?:get_attr|get_resource|get_param|list_join|str_replace|str_split|repeat|"
                    r"map_merge|if)): ")
# A provider's failing output read through get_attr: hotplay names the place in it.
_NESTED_OUTPUT = re.compile(r"(Error in [^ ]+ output [^ :]+: )outputs\.[^ :]+: ")
# A reference to no resource in an output: Heat says "(in unknown)", hotplay the place.
_OUTPUT_REFERENCE = re.compile(r'(The specified reference "[^"]*" )\(in outputs\.[^)\s]*\)( is incorrect\.)')
MALFORMED = ("The server could not comply with the request since it is either malformed or "
             "otherwise incorrect.")


def documented_keys(path: Path = DIFFERENCES) -> frozenset[str]:
    """The ``Tester key: `name``` lines of the documented differences."""
    if not path.exists():
        return frozenset()
    return frozenset(re.findall(r"Tester key: `([a-z0-9-]+)`", path.read_text()))


KEYS = documented_keys()


def core(message: str) -> str:
    """An error's text without hotplay's file name and either side's location prefix
    (hotplay names the place down to the function; Heat the property)."""
    text = _FILE.sub("", message.strip())
    if "error-location" not in KEYS:
        return text
    located = _LOCATION.match(text) is not None
    previous = None
    while previous != text:
        previous, text = text, _LOCATION.sub("", text)
        if located:  # Heat splits some places in pieces: "str_replace: params.x: [1].get_attr: "
            text = _PIECE.sub("", text)
    text = _OUTPUT_REFERENCE.sub(r"\1(in unknown)\2", text)
    return _NESTED_OUTPUT.sub(r"\1", _INNER_LOCATION.sub(r"\1", text))


# A nested stack's ARN (a provider resource's get_resource): its project and its
# stack name (``<stack>-<resource>-<random>``) differ by nature, like physical ids.
_ARN = re.compile(r"arn:openstack:heat::[^:/\s]*:stacks/[^/\s]+/<id:([^>]+)>")


def tokenised(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with every physical id replaced by ``<id:path>`` (``<arn:path>``
    for a nested stack's ARN)."""
    if isinstance(value, str):
        whole = value
        for physical, path in ids.items():
            if physical in value:
                value = value.replace(physical, f"<id:{path}>")
        if value == whole and value:
            # Pieces of an id cut at its dashes (str_split of a uuid, or of a name
            # <stack>-<resource>-<suffix>): by which pieces they are, of the first
            # resource by path that has them (the stack's name is in several).
            for physical, path in sorted(ids.items(), key=lambda item: item[1]):
                pieces = physical.split("-")
                for start in range(len(pieces)):
                    for end in range(start + 1, len(pieces) + 1):
                        if "-".join(pieces[start:end]) == value and (start, end) != (0, len(pieces)):
                            return f"<id:{path}#{start}:{end}>"
            # Every piece of an id, in order, in one text (the JSON of a str_split
            # of a uuid joined by list_join): each piece by which it is.
            for physical, path in sorted(ids.items(), key=lambda item: item[1]):
                value = _pieces_in_order(value, physical, path)
            # Or inside a message ("'3d313fadb3e3' is type <class 'str'>"): the long
            # pieces only (a uuid's 8 and 12 characters), the shorter ones are words.
            for physical, path in sorted(ids.items(), key=lambda item: item[1]):
                for place, piece in enumerate(physical.split("-")):
                    if len(piece) >= 8 and piece != physical and piece in value:
                        value = value.replace(piece, f"<id:{path}#{place}:{place + 1}>")
        return _ARN.sub(r"<arn:\1>", value)
    if isinstance(value, list):
        return [tokenised(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: tokenised(v, ids) for k, v in value.items()}
    return value


def _pieces_in_order(value: str, physical: str, path: str) -> str:
    """``value`` with the pieces of ``physical`` (cut at its dashes) tokenised, when
    all of them are in it, in order; else ``value`` as it is."""
    pieces = physical.split("-")
    if len(pieces) < 3:
        return value
    out, position = [], 0
    for place, piece in enumerate(pieces):
        found = value.find(piece, position)
        if found < 0:
            return value
        out.append(value[position:found] + f"<id:{path}#{place}:{place + 1}>")
        position = found + len(piece)
    return "".join(out) + value[position:]


def _id_map(observed: list[dict[str, Any]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for step in observed:
        for path, physical in step.get("ids", {}).items():
            if physical and len(str(physical)) >= 8:
                found.setdefault(str(physical), path)
    # Longest first: a nested stack's id may hold a shorter one.
    return dict(sorted(found.items(), key=lambda item: -len(item[0])))


def settled(step: dict[str, Any], other: dict[str, Any]) -> dict[str, str]:
    """Resource statuses without those timing decides.  When a resource fails, an
    independent one that had not started yet stays INIT_COMPLETE (Heat stops
    starting new work) -- or had started and finished: which, is a race on either
    side; so is whether an update reached an independent resource.  A resource
    INIT_COMPLETE on one side is left out on both (with its nested resources)."""
    if not str(step.get("stack_status", "")).endswith("FAILED"):
        return dict(step["resources"])
    waiting = [p for s in (step, other) for p, st in s.get("resources", {}).items()
               if st in ("INIT_COMPLETE", "CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS")]
    # A resource one side never started is not listed there at all.
    waiting += [p for p in step["resources"] if other.get("verdict") == "ok" and p not in other["resources"]]
    # In a failed update, one side may have updated an independent resource before
    # the failure stopped new work, the other not yet.
    theirs = other.get("resources", {}) if other.get("verdict") == "ok" else {}
    waiting += [p for p, st in step["resources"].items()
                if {st, theirs.get(p)} == {"UPDATE_COMPLETE", "CREATE_COMPLETE"}]
    # A replacement the failure abandoned before it was made: Heat lists that row,
    # DELETE_COMPLETE with no physical id, in place of the resource that still
    # exists (the same every time); whether it got that far is a race too.
    waiting += [p for s in (step, other) for p, st in s.get("resources", {}).items()
                if st == "DELETE_COMPLETE" and not s.get("ids", {}).get(p)]
    return {p: st for p, st in step["resources"].items()
            if not any(p == w or p.startswith(w + "/") for w in waiting)}


def view(observed: list[dict[str, Any]], other: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The comparable part of each step."""
    ids = _id_map(observed)
    steps = []
    for index, step in enumerate(observed):
        if step["verdict"] == "refused":
            steps.append({"verdict": "refused", "error": core(step["error"])})
            continue
        outputs = {k: ({"error": core(v["error"])} if isinstance(v, dict) and set(v) == {"error"} else v)
                   for k, v in step["outputs"].items()}
        counterpart = (other or [])[index] if other and index < len(other) else {}
        resources = settled(step, counterpart)
        failed = {p: core(tokenised(r, ids)) for p, r in step["reasons"].items()
                  if p in resources and step["resources"][p].endswith("FAILED")}
        reason = core(tokenised(step["status_reason"], ids))
        if step["stack_status"].endswith("FAILED") and reason.startswith("Resource "):
            # Which of several failing resources fails the stack first is a race on
            # either side; each failed resource's reason is compared below.
            reason = " ".join(reason.split(" ")[:3])
        shown = {"verdict": "ok", "stack_status": step["stack_status"], "status_reason": reason,
                 "resources": resources, "failed_reasons": failed,
                 "outputs": tokenised(outputs, ids)}
        if step.get("pauses") or counterpart.get("pauses"):
            # Where the step stopped at hooks, one stop after the other.
            shown["pauses"] = step.get("pauses", [])
        if _events_comparable(step, counterpart):
            # The dependencies the template states: Heat's side carries them.
            shown["events"] = _event_view(step, step.get("needs") or counterpart.get("needs") or [])
        if "preview" in step and "preview" in counterpart:
            # What check mode said the update would do, and Heat's preview; not for
            # a resource whose create raced (started on one side only).
            raced = _raced(observed[0], (other or [{}])[0])
            shown["preview"] = {category: [p for p in paths if p not in raced]
                                for category, paths in step["preview"].items()}
        if index > 0 and observed[0]["verdict"] == "ok":
            before = observed[0]["ids"]
            # A resource that had no physical id (never created: INIT_COMPLETE) and
            # gets one is created, not replaced.
            shown["replaced"] = sorted(p for p, i in step["ids"].items()
                                       if p in resources and p in before and before[p] and before[p] != i)
        steps.append(shown)
    return steps


def _events_comparable(step: dict[str, Any], other: dict[str, Any]) -> bool:
    """Events are compared where their order is defined: a step both sides
    completed, without breakpoints.  In a failed step, what was still running is
    cancelled at a moment timing decides (Heat writes no event for it then)."""
    return (other.get("verdict") == "ok" and "events" in step and "events" in other
            and not step.get("pauses") and not other.get("pauses")
            and all(str(s["stack_status"]).endswith("_COMPLETE") for s in (step, other)))


def _event_view(step: dict[str, Any], needs: list[list[str]]) -> dict[str, Any]:
    """Each resource's events in order (the stack's own under ``""``), and, for each
    dependency the template states, whether the resource needed was done before the
    one needing it started.  The order of independent resources is not defined."""
    sequences: dict[str, list[str]] = {}
    done: dict[str, int] = {}
    started: dict[str, int] = {}
    for index, (name, status) in enumerate(step["events"]):
        sequences.setdefault(name, []).append(status)
        action, state = status.partition("_")[::2]
        if action in ("CREATE", "UPDATE"):
            if state == "IN_PROGRESS":
                started.setdefault(name, index)
            else:
                done.setdefault(name, index)
    ordered = sorted(f"{needed} before {needer}" for needed, needer in needs
                     if needed in done and needer in started and done[needed] < started[needer])
    return {"sequences": sequences, "dependencies_first": ordered}


def _raced(first: dict[str, Any], other: dict[str, Any]) -> set[str]:
    """Resources a failed create reached on one side and not on the other (the
    race ``settled`` leaves out), with their nested resources."""
    if first.get("verdict") != "ok" or other.get("verdict") != "ok":
        return set()
    mine, theirs = first.get("resources", {}), other.get("resources", {})
    never = ("INIT_COMPLETE", None)
    tops = {p for p in set(mine) | set(theirs)
            if (mine.get(p) in never) != (theirs.get(p) in never)}
    return {p for p in set(mine) | set(theirs) if any(p == t or p.startswith(t + "/") for t in tops)}


def differences(hotplay: list[dict[str, Any]], heat: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """(what, hotplay's, Heat's) for every field that differs."""
    found: list[tuple[str, Any, Any]] = []
    mine, theirs = view(hotplay, heat), view(heat, hotplay)
    if len(mine) != len(theirs):
        found.append(("steps", len(mine), len(theirs)))
    for index, (a, b) in enumerate(zip(mine, theirs)):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                found.append((f"step{index}.{key}", a.get(key), b.get(key)))
        if a["verdict"] != b["verdict"]:
            break
    return found


# ------------------------------------------------------- documented differences
Rule = Callable[[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]], bool]


def _later_version_function(case: dict[str, Any], hotplay: list[dict[str, Any]],
                            heat: list[dict[str, Any]]) -> bool:
    # hotplay refuses a function of a later template version; Heat reads it as data.
    # In a provider's template, the provider resource fails with that refusal.
    # Through ansible-playbook a hidden value masks its pieces in the message too.
    later = _as_the_task_masks(case, _LATER)
    return any((s["verdict"] == "refused" and any(text in s["error"] for text in later)) or (
        s["verdict"] == "ok" and any(text in str(r) for r in s.get("reasons", {}).values() for text in later))
        for s in hotplay)


def _as_the_task_masks(case: dict[str, Any], text: str) -> set[str]:
    """``text``, and ``text`` as the task shows it when the case's hidden values
    mask their pieces in it (a hidden "a" masks each "a")."""
    return {text, _task_secrets(case).mask_text(text)}


def _task_secrets(case: dict[str, Any], steps: int = 2) -> Any:
    """The masking the task does with the hidden values of the case's first
    ``steps`` steps (the collection's own ``SecretValues``)."""
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import SecretValues

    secrets = SecretValues()
    for value in _hidden_values(case, steps):
        secrets.add(value)
    return secrets


_LATER = "it is available from heat_template_version"


def _unchanged_update(case: dict[str, Any], hotplay: list[dict[str, Any]],
                      heat: list[dict[str, Any]]) -> bool:
    # The same definition again changes nothing and writes nothing (changed: false):
    # the stack and its resources keep their statuses, where Heat runs an update
    # (UPDATE_COMPLETE, nested stacks updated) that replaces nothing.
    if len(hotplay) != 2 or hotplay[1]["verdict"] != "ok" or hotplay[1].get("changed"):
        return False
    if len(heat) != 2 or heat[1]["verdict"] != "ok" or heat[1]["stack_status"] != "UPDATE_COMPLETE":
        return False
    mine, theirs = view(hotplay)[1], view(heat)[1]
    return (mine["outputs"] == theirs["outputs"] and mine["replaced"] == theirs["replaced"] == []
            and set(mine["resources"]) == set(theirs["resources"]))


def _hidden_in_messages(case: dict[str, Any], hotplay: list[dict[str, Any]],
                        heat: list[dict[str, Any]]) -> bool:
    # hotplay writes ****** for a hidden value Heat quotes: the rest must match.
    if _hidden_in_results(case, hotplay, heat):
        return True
    for index, (mine, theirs) in enumerate(zip(hotplay, heat)):
        if mine["verdict"] == "refused" and theirs["verdict"] == "refused" and "******" in mine["error"]:
            if _masked_as_the_task_masks(case, index, mine["error"], theirs["error"]):
                return len(hotplay) == len(heat)
            # Heat's JSON quoting differs too: "******" stands for false, -1 or "text".
            text = core(mine["error"]).replace('"******"', "******")
            pattern = '"?.+"?'.join(re.escape(part) for part in text.split("******"))
            if re.fullmatch(pattern, core(theirs["error"]), re.DOTALL):
                return len(hotplay) == len(heat)
    return False


def _masked_as_the_task_masks(case: dict[str, Any], index: int, mine: str, theirs: str) -> bool:
    """Through ansible-playbook, the task masks every piece of a hidden value in
    its whole message, as Ansible does with no_log values (a value "a" masks each
    "a", the template's file name too): Heat's message masked so, after the file."""
    expected = _task_secrets(case, index + 1).mask_text(theirs)
    return mine == expected or mine.endswith(": " + expected)


def _hidden_values(case: dict[str, Any], steps: int = 2) -> list[Any]:
    """The values of the case's hidden parameters (given or default, in its first
    ``steps`` steps), as given and as a json parameter parses them."""
    found: list[Any] = []
    for step in ([case] + ([case["update"]] if case.get("update") else []))[:steps]:
        for name, schema in (step["template"].get("parameters") or {}).items():
            if isinstance(schema, dict) and schema.get("hidden"):
                value = step["parameters"].get(name, schema.get("default"))
                found.append(value)
                if isinstance(value, str):
                    try:
                        found.append(json.loads(value))
                    except ValueError:
                        pass
    return [value for value in found if value is not None]


def _hidden_in_results(case: dict[str, Any], hotplay: list[dict[str, Any]],
                       heat: list[dict[str, Any]]) -> bool:
    # hotplay masks every piece of a hidden value in what it shows (output and
    # resource names, values, ids), as Ansible does with no_log values: Heat's answer
    # masked the same way must then be hotplay's.
    if not _hidden_values(case) or not any(s["verdict"] == "ok" for s in heat):
        return False
    # Everything the task returns is masked so (resource names and ids too), with
    # the hidden values known by then (a step's, and the earlier steps'); the
    # step's own field names are the tester's, not Heat's answer: a hidden value
    # such as "out" must not mask "outputs".
    masked = []
    for index, step in enumerate(heat):
        secrets = _task_secrets(case, index + 1)
        masked.append({field: value if field == "verdict" else secrets.mask(value)
                       for field, value in step.items()})
    return not differences(hotplay, masked)


def _malformed_request(case: dict[str, Any], hotplay: list[dict[str, Any]],
                       heat: list[dict[str, Any]]) -> bool:
    # Heat's validation failed inside (a TypeError, ValueError): its API says only
    # "malformed" (as the message, or as the explanation of a body with no message).
    return any(mine["verdict"] == theirs["verdict"] == "refused" and _malformed(theirs["error"])
               for mine, theirs in zip(hotplay, heat))


def _malformed(message: str) -> bool:
    if message == MALFORMED:
        return True
    try:
        body = json.loads(message)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("explanation") == MALFORMED


def _cycle_named(case: dict[str, Any], hotplay: list[dict[str, Any]],
                 heat: list[dict[str, Any]]) -> bool:
    # Both refuse a dependency cycle: hotplay names the cycle ("r0 --> r1 --> r0"),
    # Heat prints what is left of its graph ({TestResource "r0": {...}}), whose
    # order is a Python set's.  Each resource of hotplay's cycle must be in Heat's.
    prefix = "Circular Dependency Found: "
    for mine, theirs in zip(hotplay, heat):
        if mine["verdict"] == theirs["verdict"] == "refused" and prefix in mine["error"]:
            mentioned = set(re.findall(r'"([^"]+)"', core(theirs["error"])))
            cycle = core(mine["error"]).removeprefix(prefix).split(" --> ")
            return (len(hotplay) == len(heat) and core(theirs["error"]).startswith(prefix)
                    and set(cycle) <= mentioned)
    return False


def _output_reference(case: dict[str, Any], hotplay: list[dict[str, Any]],
                      heat: list[dict[str, Any]]) -> bool:
    # hotplay refuses an output naming a resource that does not exist (or whose
    # condition is false); Heat creates the stack and the output reads as the error
    # "(in unknown)" (it refuses the same output in an update).
    for index, (mine, theirs) in enumerate(zip(hotplay, heat)):
        if mine["verdict"] == "refused" and theirs["verdict"] == "ok":
            named = re.search(r'The specified reference "([^"]*)" \(in outputs\.([^.)\s]+)', mine["error"])
            if named is None or differences(hotplay[:index], heat[:index]):
                return False
            error = theirs["outputs"].get(named.group(2))
            if not isinstance(error, dict) or "error" not in error:
                return False
            expected = f'The specified reference "{named.group(1)}" (in unknown) is incorrect.'
            said = core(str(error["error"]))
            if said == expected:
                return True
            # Heat reports the first error it meets in the value: another function of
            # the same output may fail before the reference is read (not another
            # reference).  The output is an error in Heat all the same, and the
            # resource is not in its stack.
            return "The specified reference" not in said and named.group(1) not in theirs.get("resources", {})
    return False


def _policy(definition: dict[str, Any]) -> str:
    return str(definition.get("deletion_policy") or "Delete").lower()


def _same_meaning(case: dict[str, Any], hotplay: list[dict[str, Any]],
                  heat: list[dict[str, Any]]) -> bool:
    # An update that writes a resource's deletion_policy differently with the same
    # meaning (the default Delete written out, or left out) changes nothing in
    # hotplay; Heat compares the written text and updates it (UPDATE_COMPLETE).
    if not case.get("update") or len(hotplay) != 2 or len(heat) != 2 or any(
            s["verdict"] != "ok" for s in hotplay + heat):
        return False
    mine, theirs = view(hotplay, heat)[1], view(heat, hotplay)[1]
    if {k: v for k, v in mine.items() if k not in ("resources", "preview", "events")} != {
            k: v for k, v in theirs.items() if k not in ("resources", "preview", "events")}:
        return False
    before = case["template"].get("resources") or {}
    after = case["update"]["template"].get("resources") or {}
    differing = {p for p in set(mine["resources"]) | set(theirs["resources"])
                 if mine["resources"].get(p) != theirs["resources"].get(p)}
    # Heat's events have the update of those resources; the rest must be the same.
    if _events_without(mine.get("events"), differing) != _events_without(theirs.get("events"), differing):
        return False
    # Heat's preview lists the same resources updated; check mode unchanged.
    previewed = _preview_pairs(mine.get("preview"), theirs.get("preview"))
    if any(path not in differing or pair != ("unchanged", "updated") for path, pair in previewed.items()):
        return False
    for path in differing:
        old, new = before.get(path), after.get(path)
        if (old is None or new is None or theirs["resources"].get(path) != "UPDATE_COMPLETE"
                or mine["resources"].get(path) != hotplay[0]["resources"].get(path)
                or _policy(old) != _policy(new) or old.get("deletion_policy") == new.get("deletion_policy")):
            return False
        if {k: v for k, v in old.items() if k != "deletion_policy"} != {
                k: v for k, v in new.items() if k != "deletion_policy"}:
            return False
    return bool(differing)


def _events_without(events: dict[str, Any] | None, paths: set[str]) -> dict[str, Any] | None:
    """An event view without the resources ``paths``."""
    if events is None:
        return None
    return {"sequences": {n: e for n, e in events["sequences"].items() if n not in paths},
            "dependencies_first": [o for o in events["dependencies_first"]
                                   if not set(o.split(" before ")) & paths]}


def _preview_only(hotplay: list[dict[str, Any]], heat: list[dict[str, Any]]) -> dict[str, tuple[str, str]] | None:
    """When the two sides differ only in the update's preview: each resource whose
    category differs, as (hotplay's, Heat's); else None."""
    found = differences(hotplay, heat)
    if not found or any(field != "step1.preview" for field, _mine, _theirs in found):
        return None
    mine, theirs = hotplay[1]["preview"], heat[1]["preview"]
    if "refused" in mine or "refused" in theirs:
        return None
    # Not a resource whose create raced (the comparison leaves it out too).
    raced = _raced(hotplay[0], heat[0])
    return {path: pair for path, pair in _preview_pairs(mine, theirs).items() if path not in raced}


def _preview_pairs(mine: dict[str, list[str]] | None, theirs: dict[str, list[str]] | None) -> dict[str, tuple[str, str]]:
    """Each resource the two previews put in different categories: (hotplay's, Heat's)."""
    where = [{path: category for category, paths in (side or {}).items() for path in paths}
             for side in (mine, theirs)]
    return {path: (where[0].get(path, ""), where[1].get(path, ""))
            for path in set(where[0]) | set(where[1]) if where[0].get(path) != where[1].get(path)}


def _reads(definition: Any) -> set[str]:
    """The resources a definition's properties read (get_attr, get_resource)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            target = value.get("get_attr")
            if isinstance(target, list) and target and isinstance(target[0], str):
                found.add(target[0])
            if isinstance(value.get("get_resource"), str):
                found.add(value["get_resource"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(definition.get("properties") if isinstance(definition, dict) else None)
    return found


def _preview_reads_updated(case: dict[str, Any], hotplay: list[dict[str, Any]],
                           heat: list[dict[str, Any]]) -> bool:
    # Heat's preview lists a resource that reads another resource as updated (or
    # replaced), and its update then leaves it as it is (what it reads did not
    # change); hotplay's check mode says unchanged.
    differing = _preview_only(hotplay, heat)
    if not differing or not case.get("update"):
        return False
    resources = case["update"]["template"]["resources"]
    # A nested resource: what its top resource reads reaches it as a parameter.
    return all(
        pair in (("unchanged", "updated"), ("unchanged", "replaced"))
        and _reads(resources.get(path.split("/")[0]))
        and heat[1]["resources"].get(path) == heat[0]["resources"].get(path)
        and heat[1]["ids"].get(path) == heat[0]["ids"].get(path)
        for path, pair in differing.items())


def _preview_not_created(case: dict[str, Any], hotplay: list[dict[str, Any]],
                         heat: list[dict[str, Any]]) -> bool:
    # A resource the failed create never started (INIT_COMPLETE in Heat, not listed
    # by hotplay): Heat's preview lists it unchanged (its definition is the same),
    # updated, or replaced (its type changed), and the update then creates it;
    # hotplay's check mode says added.
    # Removed from the template, Heat's preview lists it deleted; hotplay, with
    # nothing to delete, does not list it.  The nested resources of a provider it
    # will create are added too: Heat's preview does not list them.
    differing = _preview_only(hotplay, heat)
    never = ("INIT_COMPLETE", None)

    def forgiven(path: str, pair: tuple[str, str]) -> bool:
        if pair == ("added", "") and "/" in path:
            return heat[0]["resources"].get(path.split("/")[0]) in never
        return pair in (("added", "unchanged"), ("added", "updated"), ("added", "replaced"), ("", "deleted"))

    return bool(differing) and all(
        forgiven(path, pair) and heat[0]["resources"].get(path) in never
        and hotplay[0]["resources"].get(path) in never for path, pair in differing.items())


def _preview_external_id(case: dict[str, Any], hotplay: list[dict[str, Any]],
                         heat: list[dict[str, Any]]) -> bool:
    # A changed external_id: Heat's preview lists the resource unchanged and its
    # update then fails (NotSupported); check mode lists it updated, saying so.
    differing = _preview_only(hotplay, heat)
    if not differing or not case.get("update"):
        return False
    before = case["template"].get("resources") or {}
    after = case["update"]["template"].get("resources") or {}
    return all(pair == ("updated", "unchanged") and path in before and path in after
               and before[path].get("external_id") != after[path].get("external_id")
               for path, pair in differing.items())


PathRule = Callable[[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], str, tuple[str, str]], bool]


def _members(step: dict[str, Any], group: str) -> set[str]:
    return {path for path in step["resources"] if path.startswith(f"{group}/") and path.count("/") == 1}


def _removed_names_path(case: dict[str, Any], hotplay: list[dict[str, Any]], heat: list[dict[str, Any]],
                        path: str, pair: tuple[str, str]) -> bool:
    # Heat's preview of a ResourceGroup forgets the names its removal_policies have
    # removed (it numbers the members from 0 again), and its update keeps them
    # removed: hotplay's check mode lists what the update does, which must be what
    # Heat's update did to the group's members.
    group, member = path.partition("/")[::2]
    if not member or "/" in member:
        return False
    steps = (case["template"], case["update"]["template"])
    definitions = [(step.get("resources") or {}).get(group) or {} for step in steps]
    if definitions[1].get("type") != "OS::Heat::ResourceGroup" or not any(
            isinstance(d.get("properties"), dict) and d["properties"].get("removal_policies")
            for d in definitions):
        return False
    preview = hotplay[1]["preview"]
    before, after = _members(heat[0], group), _members(heat[1], group)
    added = {p for p in preview["added"] if p.startswith(f"{group}/") and p.count("/") == 1}
    return (before - set(preview["deleted"])) | added == after


def _nested_unknown_path(case: dict[str, Any], hotplay: list[dict[str, Any]], heat: list[dict[str, Any]],
                         path: str, pair: tuple[str, str]) -> bool:
    # The nested resources of a provider (or nested stack) whose properties read a
    # resource the update changes: what they get is known only after apply, and
    # hotplay's check mode does not list them; Heat lists them unchanged.
    top, rest = path.partition("/")[::2]
    resources = case["update"]["template"].get("resources") or {}
    return (pair == ("", "unchanged") and bool(rest) and top in hotplay[1]["preview"]["updated"]
            and top in heat[1]["preview"]["updated"] and bool(_reads(resources.get(top))))


def _preview_paths(case: dict[str, Any], hotplay: list[dict[str, Any]], heat: list[dict[str, Any]],
                   own: PathRule) -> bool:
    """The previews differ only by resources ``own`` forgives, at least one, or
    the other path rule (a case may hold both)."""
    differing = _preview_only(hotplay, heat)
    if not differing or not case.get("update"):
        return False
    return any(own(case, hotplay, heat, path, pair) for path, pair in differing.items()) and all(
        any(rule(case, hotplay, heat, path, pair) for rule in (_removed_names_path, _nested_unknown_path))
        for path, pair in differing.items())


def _preview_group_removed_names(case: dict[str, Any], hotplay: list[dict[str, Any]],
                                 heat: list[dict[str, Any]]) -> bool:
    return _preview_paths(case, hotplay, heat, _removed_names_path)


def _preview_nested_unknown(case: dict[str, Any], hotplay: list[dict[str, Any]],
                            heat: list[dict[str, Any]]) -> bool:
    return _preview_paths(case, hotplay, heat, _nested_unknown_path)


_RESTRICTED = "UPDATE_FAILED: Resource UPDATE failed: ResourceActionRestricted: "


def _restricted_refused(case: dict[str, Any], hotplay: list[dict[str, Any]],
                        heat: list[dict[str, Any]]) -> bool:
    # hotplay refuses an update that would do a restricted action before touching
    # anything (the stack keeps its status); Heat updates what it reaches first and
    # fails at the restricted resource with the same message.
    if len(hotplay) != 2 or len(heat) != 2 or differences(hotplay[:1], heat[:1]):
        return False
    mine, theirs = hotplay[1], heat[1]
    message = str(mine.get("message", ""))
    return (mine["verdict"] == theirs["verdict"] == "ok" and message.startswith(_RESTRICTED)
            and theirs["stack_status"] == "UPDATE_FAILED"
            and core(theirs["status_reason"]) == message.removeprefix("UPDATE_FAILED: ")
            and mine["resources"] == hotplay[0]["resources"] and mine["ids"] == hotplay[0]["ids"])


RULES: dict[str, Rule] = {
    "later-version-function": _later_version_function,
    "unchanged-update": _unchanged_update,
    "hidden-in-messages": _hidden_in_messages,
    "malformed-request": _malformed_request,
    "cycle-named": _cycle_named,
    "output-reference": _output_reference,
    "same-meaning-unchanged": _same_meaning,
    "preview-reads-updated": _preview_reads_updated,
    "preview-not-created": _preview_not_created,
    "preview-external-id": _preview_external_id,
    "preview-group-removed-names": _preview_group_removed_names,
    "preview-nested-unknown": _preview_nested_unknown,
    "restricted-refused": _restricted_refused,
}


def verdict(case: dict[str, Any], hotplay: list[dict[str, Any]], heat: list[dict[str, Any]],
            keys: frozenset[str]) -> tuple[str, list[tuple[str, Any, Any]]]:
    """``("same", [])``, ``("documented:<key>", [...])`` or ``("diverged", [...])``."""
    found = differences(hotplay, heat)
    if not found:
        return "same", []
    for key, rule in RULES.items():
        if key in keys and rule(case, [dict(s) for s in hotplay], heat):
            return f"documented:{key}", found
    return "diverged", found
