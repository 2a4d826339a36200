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

import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ...errors import StackValidationFailed, printable, shown_name
from ..base import AttributeSchema, Outcome, PropertySchema, Resource, ResourceState
from ..facades import OPENSTACK_FACADES
from .constraints import check_custom_constraint
from .session import CloudFailure, CloudSession


# The cloud's ids of most things: a UUID (Nova and Neutron give them with dashes).
UUID_SHAPE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Resource data: the unique name (Heat's ``<stack>-<resource>-<12 characters>``) a
# create gave a thing before the cloud answered with its id: what a killed run
# leaves for the next to find the thing by, and delete.
UNANSWERED_NAME = "creating_name"
# Where the services show the project that owns a thing (Cinder's to an admin only;
# Glance's image: its owner).
_OWNER_KEYS = ("project_id", "tenant_id", "os-vol-tenant-attr:tenant_id", "owner")


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
    """A native OpenStack type: it reaches the cloud through ``runtime.cloud``.

    Adoption is Heat's ``handle_adopt``: Heat's physical id and resource data are
    recorded as they are.  Every handler works from the physical id and reads what
    it needs live (a default name, attributes not cached), so nothing more is
    needed; only the few data values whose shape differs here are translated, both
    ways.  Unlike Heat, which trusts its own database, the id is checked first: an
    abandon file is input from elsewhere, and what it names is what this stack's
    updates and delete act on (``check_adopted_id``)."""

    # Property name -> Heat's custom constraint on it, checked against the cloud
    # when the stack is validated; ``list.key`` names a key of each item of a list.
    custom_constraints: ClassVar[Mapping[str, str]] = {}
    adoptable = True
    # Resource data keys Heat keeps as JSON text of ``[{"id": ...}]`` (a server's
    # ``internal_ports``), kept here as a list of ids.
    port_list_data: ClassVar[frozenset[str]] = frozenset()
    # Resource data keys whose value is a secret (a key pair's ``private_key``).
    secret_data: ClassVar[frozenset[str]] = frozenset()

    # Heat's physical ids of this type: their shape, and its words for a message.
    id_shape: ClassVar[tuple[re.Pattern[str], str]] = (UUID_SHAPE, "a UUID")

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        self.check_adopted_id(str(adopted.resource_id), properties)
        data = dict(adopted.data)
        for key in sorted(self.secret_data & set(data)):
            if data[key]:
                self.runtime.secrets.add(data[key])  # before it is recorded
        for key in sorted(self.port_list_data & set(data)):
            try:
                data[key] = _port_ids(data[key])
            except ValueError as error:
                raise self.fail(f"Heat's resource data {key}: {error}") from None
        return Outcome(adopted.resource_id, data)

    def check_adopted_id(self, ident: str, properties: Mapping[str, Any]) -> None:
        """Heat's id names a thing of this type, as the cloud shows it to this
        session, in the session's project (another project's only where the task
        says so: ``other_projects``, for an admin's adoption).  Its shape first, so
        that an id that is a path (``../security-groups/<id>``) reaches no URL."""
        what = f"Heat's physical id '{shown_name(ident)}' of {self.type_name} {self.name}"
        pattern, shape = self.id_shape
        if not pattern.fullmatch(ident):
            raise self.fail(f"{what} is not the shape of such an id: expected {shape}",
                            "StackValidationFailed")
        shown = self.adopted_thing(ident, properties)
        if shown is None:
            raise self.fail(f"{what} names nothing of that type that the cloud shows this "
                            "session", "NotFound")
        owner = next((str(shown[key]) for key in _OWNER_KEYS if shown.get(key)), None)
        if owner is None or self.runtime.adopts_other_projects:
            return  # a member sees only its project's (a key pair, a flavor have none)
        mine = self.cloud.project_id
        if owner != mine:
            raise self.fail(f"{what} is project {printable(owner)}'s, not this session's project "
                            f"{mine}: give other_projects to adopt another project's resources",
                            "Forbidden")

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """What the cloud shows for Heat's id ``ident`` of this type (with the
        project that owns it, when the service shows one); None: no such thing."""
        raise NotImplementedError(f"{self.type_name} cannot check an adopted id")

    @classmethod
    def abandon_data(cls, state: ResourceState) -> dict[str, Any]:
        data = super().abandon_data(state)
        for key in sorted(cls.port_list_data & set(data)):
            data[key] = json.dumps([{"id": ident} for ident in _port_ids(data[key])])
        return data

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

    @contextlib.contextmanager
    def making(self, ident: str) -> Iterator[None]:
        """The calls that make a thing whose id is known before it exists (a key
        pair's name, a router's interface on a subnet): ``ident`` is recorded first, so
        a run killed inside the call still knows what it may have made.  When the cloud
        refuses the call (a 4xx answer: the key pair's name is taken, the router already
        has that interface), nothing was made, and the record lets go of the id: the
        thing is someone else's, which this stack's rollback or delete must not remove
        (Heat records an id only once the stack made the thing).  A call that got no
        answer, or a server error, keeps the id: the thing may exist."""
        self.runtime.claim_physical_id(self.name, ident)
        try:
            yield
        except CloudFailure as error:
            if 400 <= error.status < 500:
                self.runtime.withdraw_physical_id(self.name, ident)
            raise


def _port_ids(value: Any) -> list[str]:
    """The ids of a port list, from Heat's JSON text or from a list (of ids, or of
    Heat's ``{"id": ...}``)."""
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else []  # a JSONDecodeError is a ValueError
    if not isinstance(value, list) or not all(
            isinstance(item, str) or (isinstance(item, Mapping) and "id" in item) for item in value):
        raise ValueError(f"not a list of ports: {value!r}")
    return [str(item["id"]) if isinstance(item, Mapping) else item for item in value]


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
