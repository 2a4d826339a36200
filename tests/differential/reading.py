# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a generated template says about its resources' dependencies, read from the
text as the tester wrote it (not through either engine)."""

from __future__ import annotations

from typing import Any


def references(definition: Any, conditions: Any = None, certain: bool = False) -> list[str]:
    """The names a resource definition needs: ``depends_on``, ``get_resource`` and
    ``get_attr`` in its properties and metadata.  ``certain``: leave out what an
    ``if`` whose condition is not known here may drop."""
    if not isinstance(definition, dict):
        return []
    depends = definition.get("depends_on") or []
    names = [depends] if isinstance(depends, str) else [n for n in depends if isinstance(n, str)]

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("get_resource"), str):
                names.append(value["get_resource"])
            target = value.get("get_attr")
            if isinstance(target, list) and target and isinstance(target[0], str):
                names.append(target[0])
            for key, item in value.items():
                if key != "if":
                    walk(item)
                    continue
                kept, known = kept_branch(item, conditions)
                if known or not certain:
                    walk(kept)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk([definition.get("properties"), definition.get("metadata")])
    return names


def kept_branch(arguments: Any, conditions: Any) -> tuple[Any, bool]:
    """An ``if`` is a macro: Heat reads only the branch its condition keeps.  Known
    here when the condition is a boolean or names one (then ``True``); otherwise
    both branches."""
    if not isinstance(arguments, list) or len(arguments) not in (2, 3):
        return arguments, False
    condition = arguments[0]
    if isinstance(condition, str) and isinstance(conditions, dict):
        condition = conditions.get(condition)
    if not isinstance(condition, bool):
        return arguments[1:], False
    return (arguments[1] if condition else arguments[2:]), True


def dependency_pairs(template: Any) -> list[list[str]]:
    """``[needed, needer]`` for each dependency the template states for certain."""
    if not isinstance(template, dict) or not isinstance(template.get("resources"), dict):
        return []
    resources, conditions = template["resources"], template.get("conditions")
    return sorted({(needed, name) for name, entry in resources.items()
                   for needed in references(entry, conditions, certain=True)
                   if needed in resources and needed != name})
