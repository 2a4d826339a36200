# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Settings a stack keeps between runs, beside its revisions: Heat's tags and
deletion protection.

A task that leaves a setting out keeps the stored value (Heat keeps a stack's tags
through an update that gives none); changing one is a change of the stack even when
no resource changes.  A stack with deletion protection is deleted only by a task
that lifts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import HotplayError
from ..run.guards import Refused
from ..store.base import StackRecord

# Heat keeps a tag in a column of 80 characters, and its API takes the tags as one
# comma-separated text: a comma would split a tag in two.
MAX_TAG_LENGTH = 80


@dataclass(frozen=True)
class StackSettings:
    tags: tuple[str, ...] = ()
    deletion_protection: bool = False


def check_tags(tags: Sequence[str] | None) -> None:
    """Refuse, before anything is written, a tag Heat would not keep as given."""
    for index, tag in enumerate(tags or ()):
        if not tag or "," in tag or len(tag) > MAX_TAG_LENGTH:
            raise HotplayError(
                f"tags[{index}] ({tag!r}) is not a valid tag: a tag is a non-empty text of at most "
                f"{MAX_TAG_LENGTH} characters without a comma (Heat's stack tags)")


def stored_settings(stack: StackRecord | None) -> StackSettings:
    if stack is None:
        return StackSettings()
    return StackSettings(tuple(stack.tags), stack.deletion_protection)


def wanted_settings(stack: StackRecord | None, tags: Sequence[str] | None,
                    deletion_protection: bool | None) -> StackSettings:
    """The settings after the task: what it gives, the stored value for the rest."""
    stored = stored_settings(stack)
    return StackSettings(
        stored.tags if tags is None else tuple(tags),
        stored.deletion_protection if deletion_protection is None else deletion_protection,
    )


def refuse_protected_delete(stack: StackRecord, deletion_protection: bool | None) -> None:
    """A protected stack is deleted only by a task that says ``deletion_protection: false``."""
    if stack.deletion_protection and deletion_protection is not False:
        raise Refused(
            f"Stack {stack.name} has deletion protection: it was not deleted (nothing was changed). "
            "To delete it, lift the protection: give deletion_protection: false on this task, or "
            "apply the stack with deletion_protection: false (existing: true keeps its definition) "
            "before deleting it.")
