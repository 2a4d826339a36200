# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The names a cloud shows for the physical resources of a Heat stack, read by id
through openstacksdk (on the controller) when the stack is adopted.

The shipped provider templates find what they manage by name, and the default
name of a server, network, ... is Heat's ``<stack>-<resource>-<12 random
characters>``: an adopted resource keeps the name Heat gave it only when the
provider template is told that name (resources.nested.TemplateResource adopts
it).  Heat's abandon data has the ids, not the names; the cloud has both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import HotplayError
from .heat_api import connect

# Heat's types whose physical resource has a name, and the openstacksdk proxy
# and getter that read it by id.  A key pair's id is its name already.
NAMED_TYPES: dict[str, tuple[str, str]] = {
    "OS::Nova::Server": ("compute", "get_server"),
    "OS::Neutron::Net": ("network", "get_network"),
    "OS::Neutron::Subnet": ("network", "get_subnet"),
    "OS::Neutron::Port": ("network", "get_port"),
    "OS::Neutron::Router": ("network", "get_router"),
    "OS::Neutron::SecurityGroup": ("network", "get_security_group"),
    "OS::Cinder::Volume": ("block_storage", "get_volume"),
}

NameReader = Callable[[str, str], str]


class CloudReadError(HotplayError):
    """A physical resource could not be read from the cloud."""


@contextmanager
def name_reader(cloud: str) -> Iterator[NameReader]:
    """``read(type, id)``: the name the cloud ``cloud`` (a clouds.yaml entry) shows
    for the physical resource ``id`` of Heat's type ``type``."""
    connection = connect(cloud, CloudReadError, "reading the cloud's resources")

    def read(type_name: str, physical_id: str) -> str:
        proxy, getter = NAMED_TYPES[type_name]
        try:
            found: Any = getattr(getattr(connection, proxy), getter)(physical_id)
        except Exception as error:  # noqa: BLE001 - NotFound, HTTP errors, ...
            raise CloudReadError(f"cloud {cloud} has no {type_name} {physical_id} "
                                 f"({type(error).__name__}: {error})") from None
        return str(found.name or "")

    try:
        yield read
    finally:
        connection.close()
