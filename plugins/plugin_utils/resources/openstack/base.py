# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every native OpenStack type shares: its schema built on Heat 27's facade
data (one source of truth: ``resources.facades.OPENSTACK_FACADES`` holds each
type's property names, types and order, its required properties, attribute names
and hidden spellings; a type adds only what the facade rule does not need:
descriptions, defaults, update_allowed, constraints), and its custom constraints
checked against the run's cloud.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...errors import StackValidationFailed
from ..base import AttributeSchema, PropertySchema, Resource
from ..facades import OPENSTACK_FACADES
from .constraints import check_custom_constraint
from .session import CloudSession


def properties_from_facade(type_name: str,
                           details: Mapping[str, Mapping[str, Any]]) -> dict[str, PropertySchema]:
    """``type_name``'s property schema: Heat's names, types and order from its
    facade, each with the ``PropertySchema`` arguments ``details`` gives it."""
    facade = OPENSTACK_FACADES[type_name]
    unknown = set(details) - set(facade.properties)
    if unknown:
        raise ValueError(f"{type_name}: {sorted(unknown)} are not properties of Heat's type")
    return {name: PropertySchema(kind.lower(), required=name in facade.required,
                                 **details.get(name, {}))
            for name, kind in facade.properties.items()}


def attributes_from_facade(type_name: str,
                           types: Mapping[str, str]) -> dict[str, AttributeSchema]:
    """``type_name``'s attributes, in Heat's order, with Heat's types."""
    return {name: AttributeSchema(type=types.get(name, "string"))
            for name in OPENSTACK_FACADES[type_name].attributes}


class OpenStackResource(Resource):
    """A native OpenStack type: it reaches the cloud through ``runtime.cloud``."""

    # Property name -> Heat's custom constraint on it, checked against the cloud
    # when the stack is validated; ``list.key`` names a key of each item of a list.
    custom_constraints: ClassVar[Mapping[str, str]] = {}

    @property
    def cloud(self) -> CloudSession:
        cloud: CloudSession = self.runtime.cloud
        return cloud

    def validate_with_cloud(self, properties: Mapping[str, Any], path: str) -> None:
        """Heat's custom constraints of these (known) properties, asked of the cloud
        before anything of the stack changes (validation reads, allowed in check
        mode too).  ``path`` is where the properties live."""
        for name, constraint in self.custom_constraints.items():
            for where, value in _values_at(properties, name, path):
                check_custom_constraint(self.cloud, constraint, value, where)

    @staticmethod
    def refuse(message: str, path: str = "") -> StackValidationFailed:
        return StackValidationFailed(message, path=path)


def _values_at(properties: Mapping[str, Any], name: str, path: str) -> list[tuple[str, Any]]:
    """(where, value) of property ``name``, or of ``key`` in each item of the list
    ``name`` is (``fixed_ips.subnet``), as Heat's messages name them
    (``resources.port.properties.fixed_ips[0].subnet``)."""
    if "." not in name:
        return [(f"{path}.{name}", properties.get(name))]
    parent, key = name.split(".", 1)
    items = properties.get(parent) or []
    return [(f"{path}.{parent}[{index}].{key}", item.get(key))
            for index, item in enumerate(items) if isinstance(item, Mapping)]
