# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's custom constraints that ask the cloud (``neutron.network``, ...), and the
lookups by name or id they share with Heat's RESOLVE translation rules.

A lookup is neutronclient's ``find_resource``, which Heat's Neutron constraints
and finders call: a value shaped like a UUID is first looked for as an id (``GET
/networks?id=...``), then any value as a name (``GET /networks?name=...``); one
match is the answer, several or none fail with neutronclient's words. A failed
constraint is Heat's property error::

    Property error: resources.subnet.properties.network: Error validating value
    'nope': Unable to find network with name or id 'nope'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import StackValidationFailed
from .session import CloudFailure, CloudSession

# neutronclient's UUID_PATTERN: only such values are looked for as ids.
_UUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")


@dataclass(frozen=True)
class NeutronKind:
    """A kind of Neutron thing as the API lists it: its name in messages (Heat's
    ``RES_TYPE_*``), its collection's path and the key of the list answer."""

    name: str
    path: str
    key: str


NEUTRON_KINDS: Mapping[str, NeutronKind] = {kind.name: kind for kind in (
    NeutronKind("network", "/networks", "networks"),
    NeutronKind("subnet", "/subnets", "subnets"),
    NeutronKind("port", "/ports", "ports"),
    NeutronKind("router", "/routers", "routers"),
    NeutronKind("subnetpool", "/subnetpools", "subnetpools"),
    NeutronKind("security_group", "/security-groups", "security_groups"),
    NeutronKind("policy", "/qos/policies", "policies"),
)}

# Heat's custom constraint names (heat/engine/clients/os/neutron/neutron_constraints.py)
# -> what they look for.
CUSTOM_CONSTRAINTS: Mapping[str, NeutronKind] = {
    "neutron.network": NEUTRON_KINDS["network"],
    "neutron.subnet": NEUTRON_KINDS["subnet"],
    "neutron.port": NEUTRON_KINDS["port"],
    "neutron.router": NEUTRON_KINDS["router"],
    "neutron.subnetpool": NEUTRON_KINDS["subnetpool"],
    "neutron.security_group": NEUTRON_KINDS["security_group"],
    "neutron.qos_policy": NEUTRON_KINDS["policy"],
}


class NotFoundByNameOrId(CloudFailure):
    """No match, or several, for a name or id (neutronclient's NotFound and
    NeutronClientNoUniqueMatch)."""

    def __init__(self, message: str, error_type: str) -> None:
        super().__init__(message, 404 if error_type == "NotFound" else 409)
        self.error_type = error_type


def find_neutron_id(session: CloudSession, kind: NeutronKind, name_or_id: str) -> str:
    """The id of the ``kind`` thing named or identified by ``name_or_id``."""
    def find() -> str:
        found = _by_id(session, kind, name_or_id) if _UUID.match(name_or_id) else None
        return found if found is not None else _by_name(session, kind, name_or_id)

    return session.remember(("neutron", kind.name, name_or_id), find)


def _by_id(session: CloudSession, kind: NeutronKind, ident: str) -> str | None:
    listed = session.request("network", "GET", kind.path, params={"id": ident, "fields": "id"})
    items = listed.get(kind.key) or []
    return str(items[0]["id"]) if items else None


def _by_name(session: CloudSession, kind: NeutronKind, name: str) -> str:
    listed = session.request("network", "GET", kind.path, params={"name": name, "fields": "id"})
    items = listed.get(kind.key) or []
    if len(items) > 1:
        raise NotFoundByNameOrId(f"Multiple {kind.name} matches found for name '{name}', "
                                 "use an ID to be more specific.", "NeutronClientNoUniqueMatch")
    if not items:
        raise NotFoundByNameOrId(f"Unable to find {kind.name} with name or id '{name}'", "NotFound")
    return str(items[0]["id"])


def check_custom_constraint(session: CloudSession, constraint: str, value: Any, path: str) -> None:
    """Heat's ``CustomConstraint(constraint)`` on ``value`` (the property at
    ``path``).  A constraint not listed here (``nova.flavor``, ...: those of types
    not native yet) is not checked."""
    kind = CUSTOM_CONSTRAINTS.get(constraint)
    if kind is None or value is None:
        return
    try:
        find_neutron_id(session, kind, str(value))
    except NotFoundByNameOrId as error:
        raise StackValidationFailed(
            f"Property error: {path}: Error validating value '{value}': {error.message}") from None
