# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a stack reads of a ResourceGroup's members, checked before anything exists.

Heat's ``ResourceGroup.validate_nested_stack`` validates a one-member stack (the
first member's name, removal policies applied) whose outputs are what the rest of
the stack reads of the group (``_nested_output_defns``): a member attribute its type
does not have fails validation, in the words of Heat's ``get_attr``:
``The Referenced Attribute (0 nope) is incorrect.``  A group with no member is not
checked, nor are members whose type reads attributes only when asked (provider
templates, nested groups).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import StackValidationFailed
from ..language.functions.base import walk_functions
from ..language.functions.hot import GetAtt, has_functions

# The group's own attributes: nothing of a member is read through them.
_GROUP_ATTRIBUTES = ("refs", "refs_map", "attributes", "removed_rsrc_list")


def group_reads(group: str, snippets: Iterable[Any]) -> Iterator[tuple[GetAtt, str, list[Any]]]:
    """Each ``get_attr`` of ``group`` written out in ``snippets``: the call, the
    attribute and the path after it."""
    for snippet in snippets:
        for call in walk_functions(snippet):
            if not isinstance(call, GetAtt) or has_functions(call.args):
                continue
            args = list(call.args)
            if len(args) >= 2 and args[0] == group and isinstance(args[1], str):
                yield call, args[1], args[2:]


def member_attribute(first: str, key: str, path: list[Any]) -> Any:
    """The attribute of member ``first`` a read of the group asks for, or None."""
    if key.startswith("resource."):
        parts = key.split(".", 2)
        rest = parts[2:] + path
        return rest[0] if parts[1] == first and rest else None
    if key == "attributes":
        return path[0] if path else None
    return None if key in _GROUP_ATTRIBUTES else key


def check_member_reads(group: str, first: str, names: frozenset[str],
                       reads: Iterable[tuple[GetAtt, str, list[Any]]]) -> None:
    """Fail as Heat does when a read asks member ``first`` for an attribute not in
    ``names`` (its type's attribute names)."""
    for call, key, path in reads:
        attribute = member_attribute(first, key, path)
        if attribute is not None and attribute not in names:
            raise StackValidationFailed(
                f"The Referenced Attribute ({first} {attribute}) is incorrect.", path=call.path)
