# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``Hotplay::ReadOnly``: a resource adopted from Heat whose type this collection
cannot manage (``stack_adopt`` with ``unmanaged: read_only`` maps such types to it
in the stack's environment).

It is recorded with Heat's physical id and resource data, and others may read its
id (``get_resource``); it is never created, changed or deleted here: a change to
its properties, or a replacement, fails the resource naming it read-only, and
deleting the stack (or dropping the resource) only forgets it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .base import Outcome, Resource, ResourceState, register

READ_ONLY_TYPE = "Hotplay::ReadOnly"


@register
class ReadOnly(Resource):
    """An adopted resource kept as it is: its properties are the template's, its
    attributes unknown (None)."""

    type_name = READ_ONLY_TYPE
    adoptable = True
    # Its own type's schema is not known here: any properties, kept as written so
    # that a change to them is seen (and refused).
    keeps_any_properties: ClassVar[bool] = True

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        return Outcome(adopted.resource_id, dict(adopted.data))

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        raise self._refusal("created")

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        raise self._refusal("changed")

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        return None  # never replaced: an update is refused instead (handle_update)

    def handle_delete(self, current: ResourceState) -> None:
        """Forgotten only: the resource stays in the cloud."""

    def attribute(self, state: ResourceState, name: str) -> Any:
        return None

    def attribute_names(self) -> frozenset[str] | None:
        return None

    def _refusal(self, verb: str) -> Exception:
        declared = self.runtime.declared(self.name)
        written = declared.type if declared is not None else "its type"
        return self.fail(f"{self.name} ({written}) is read-only here: it was adopted from Heat "
                         f"and hotplay.stacks cannot manage a {written}, so it cannot be {verb}",
                         "NotSupported")
