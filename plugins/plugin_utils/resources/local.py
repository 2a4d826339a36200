# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``Hotplay::Local::File``: a file on the controller, managed as a resource.

The smallest real physical resource: it exists or not, someone can delete or
change it behind the stack's back, and a replaced one can be swapped back.  Its
physical id is the file's path.  Changing ``directory`` or ``name`` replaces it;
``content`` and ``mode`` are updated in place.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .base import (
    AttributeSchema,
    Outcome,
    PropertySchema,
    Resource,
    ResourceState,
    register,
)


@register
class LocalFile(Resource):
    type_name = "Hotplay::Local::File"
    properties_schema = {
        "directory": PropertySchema("string", "Existing directory the file is written in.",
                                    required=True),
        "name": PropertySchema("string", "File name; the physical name when not given."),
        "content": PropertySchema("string", "What the file holds.", default="", update_allowed=True),
        "mode": PropertySchema("string", "Octal permissions, e.g. 0640.", default="0600",
                               update_allowed=True),
    }
    attributes_schema = {
        "path": AttributeSchema("Absolute path of the file.", "string"),
        "content": AttributeSchema("What the file held when last written.", "string"),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        name = properties.get("name") or self.runtime.physical_name(self.name)
        path = os.path.join(os.path.abspath(properties["directory"]), name)
        self.runtime.claim_physical_id(self.name, path)
        self._write(path, properties)
        return Outcome(path, {"attributes": {"path": path, "content": properties["content"]}})

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        self._write(current.physical_id, properties)
        return Outcome(current.physical_id,
                       {"attributes": {"path": current.physical_id, "content": properties["content"]}})

    def handle_delete(self, current: ResourceState) -> None:
        if current.physical_id:
            for path in (current.physical_id, _temporary(current.physical_id)):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass  # already gone: what a delete wants

    def check_healthy(self, state: ResourceState) -> bool:
        """Exists and still holds what it was given."""
        try:
            with open(state.physical_id, encoding="utf-8") as handle:
                return bool(handle.read() == state.properties.get("content", ""))
        except OSError:
            return False

    @staticmethod
    def _write(path: str, properties: Mapping[str, Any]) -> None:
        """Write atomically: a killed run never leaves half a file.  The temporary
        file's name is fixed per path, so one a killed run left behind is reused by
        the next write and removed by a delete (only this resource writes there)."""
        temporary = _temporary(path)
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(properties["content"])
            os.chmod(temporary, int(str(properties["mode"]), 8))
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise


def _temporary(path: str) -> str:
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}.hotplay-tmp")
