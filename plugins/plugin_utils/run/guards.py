# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Refusals checked before anything is touched: immutable parameters, restricted
actions (Heat), destructive changes the task forbids, and stale reviewed plans.

Each raises ``Refused``: the task fails, nothing is written, the stack stays as
it was.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import HotplayError
from ..model.inputs import hidden_digest, is_hidden_mark
from ..model.plan import Change, Plan, Refusal
from ..store.base import RevisionRecord


class Refused(HotplayError):
    """An update refused before it started."""


def check_immutable(
    last: RevisionRecord | None, effective: Mapping[str, Any],
    immutable: frozenset[str], salt: str,
) -> None:
    """Heat: an immutable parameter the stack already had keeps its value, whether
    the update gives it or lets it fall back to a default.  ``salt``: of the digests
    older revisions kept of hidden values."""
    if last is None:
        return
    before = last.definition.get("effective_parameters", {})
    changed = []
    for name in sorted(set(effective) & immutable):
        old = before.get(name)
        new = hidden_digest(salt, name, effective[name]) if is_hidden_mark(old) else effective.get(name)
        if name in before and old != new:
            changed.append(name)
    if changed:
        raise Refused(
            "The following parameters are immutable and may not be updated: " + ", ".join(changed)
        )


def restricted_changes(plan: Plan) -> list[Change]:
    """Changes the environment's ``restricted_actions`` forbid."""
    return [change for change in plan.changes if change.restricted]


def refuse_restricted(changes: Sequence[Change]) -> None:
    """Heat's refusal, for the first restricted change (Heat stops at the first)."""
    if changes:
        first = changes[0]
        action = "update" if first.action == "updated" else "replace"
        raise Refused(
            "UPDATE_FAILED: Resource UPDATE failed: ResourceActionRestricted: "
            f"resources.{first.path}: {action} is restricted for resource."
        )


def refuse_destruction(plan: Plan, patterns: Sequence[str]) -> None:
    """Fail when the plan deletes or replaces a resource matching ``patterns``
    (fnmatch on the resource path or its type)."""
    hits = protected_changes(plan, patterns)
    if hits:
        listed = "; ".join(f"{c.path} ({c.type}) would be {c.action}: {c.reason}" for c in hits)
        raise Refused(
            f"Refusing to apply: {len(hits)} protected resource(s) would be deleted or "
            f"replaced (prevent_destroy): {listed}"
        )


def protected_changes(plan: Plan, patterns: Sequence[str]) -> list[Change]:
    """The deletions and replacements ``prevent_destroy`` forbids."""
    if not patterns:
        return []
    return [c for c in plan.changes if c.destructive and _matching(c, patterns)]


def _matching(change: Change, patterns: Sequence[str]) -> list[str]:
    return [p for p in patterns
            if fnmatch.fnmatchcase(change.path, p) or fnmatch.fnmatchcase(change.type, p)]


def refusals(plan: Plan, on_restricted: str, prevent_destroy: Sequence[str]) -> list[Refusal]:
    """Every change an apply of ``plan`` would refuse, each with why: what a preview
    lists where the apply fails (at the first restricted change, as Heat does, or at
    all the protected ones)."""
    found = []
    if on_restricted != "skip":
        for change in restricted_changes(plan):
            action = "update" if change.action == "updated" else "replace"
            found.append(Refusal(change.path, change.type, change.action,
                                 f"{action} is restricted for resource (the environment's "
                                 "restricted_actions): the apply fails with "
                                 "ResourceActionRestricted (on_restricted: fail)"))
    for change in protected_changes(plan, prevent_destroy):
        patterns = ", ".join(_matching(change, prevent_destroy))
        found.append(Refusal(change.path, change.type, change.action,
                             f"prevent_destroy protects it ({patterns}), and {change.reason}: "
                             "the apply is refused"))
    return found


def refusal_warnings(plan: Plan) -> list[str]:
    """One loud line per change a preview found the apply would refuse."""
    return [f"REFUSED: {r.path} ({r.type}) would be {r.action.upper()}: {r.reason}"
            for r in plan.refused]


def refuse_stale_plan(given: str | None, current: str, already_applied: bool = False) -> None:
    """A reviewed plan applies only to the state and definition it was made for.

    Running the apply again after it succeeded is not stale: there is nothing to do."""
    if given and given != current and not already_applied:
        raise Refused(
            f"The reviewed plan {given} is stale: the stack or the definition changed since "
            f"it was made (the plan now is {current}). Preview again and review the new plan."
        )
