# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a type of Heat's is not run here, said once for every such resource.

A template that names one of Heat 27's types that this collection does not run is
refused before anything is written, in check mode too, with one message naming each
such resource, its type and its service: a service the cloud's catalog does not
list gets Heat's own words (``ResourceTypeUnavailable``: Heat hides such types);
a service the cloud runs says that this collection does not implement the type yet.
Either way the message says how to run it anyway: a provider template over a module
(docs/openstack.md, "Types this collection does not run").  A type that is not
Heat's at all keeps Heat's ``could not be found``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from ..errors import StackValidationFailed
from .heat_types import service_of

MAPPING_HINT = ("an environment can map each such type to a provider template over a module "
                "(docs/openstack.md: \"Types this collection does not run\")")


@dataclass(frozen=True)
class Unrun:
    """A resource of one of Heat's types that this collection does not run."""

    path: str  # resources.<name>, as the template names it
    type_name: str


class TypesNotRun(StackValidationFailed):
    """A template names Heat types this collection does not run (``unrun``: each
    resource, its place in the template's words, and its type)."""

    def __init__(self, unrun: Sequence[Unrun], catalog: Collection[str] | None = None) -> None:
        super().__init__(unrun_message(unrun, catalog))
        self.unrun = tuple(unrun)

    def with_catalog(self, has_service: Callable[[str], bool]) -> "TypesNotRun":
        """The same refusal, each reason as the cloud's catalog decides it
        (``has_service``: whether the catalog lists a service type)."""
        wanted = {service[1] for item in self.unrun if (service := service_of(item.type_name))}
        told = TypesNotRun(self.unrun, {kind for kind in wanted if has_service(kind)})
        told.path = self.path
        return told.located(self.source)  # type: ignore[return-value]


def heat_type_not_run(type_name: str) -> bool:
    """Whether ``type_name`` is one of Heat 27's types (so: not run here, when the
    registry of builtin types does not know it)."""
    return service_of(type_name) is not None


def unrun_message(unrun: Sequence[Unrun], catalog: Collection[str] | None) -> str:
    """One message for every resource of a Heat type not run here; ``catalog``: the
    service types the cloud's catalog lists (None: no cloud was asked)."""
    reasons = [f"{item.path} ({item.type_name}): {_reason(item.type_name, catalog)}" for item in unrun]
    return (f"resources of types hotplay.stacks does not run: {'; '.join(reasons)}; "
            f"nothing was written: {MAPPING_HINT}")


def _reason(type_name: str, catalog: Collection[str] | None) -> str:
    service = service_of(type_name)
    if service is None:
        return f"The Resource Type ({type_name}) could not be found."
    client, service_type = service
    if catalog is not None and service_type not in catalog:
        # Heat's ResourceTypeUnavailable, as Heat says it for a service the cloud lacks.
        return (f"HEAT-E99001 Service {client} is not available for resource type {type_name}, "
                "reason: Service endpoint not in service catalog.")
    if catalog is not None:
        return f"the cloud runs {client} ({service_type}), but hotplay.stacks does not implement {type_name} yet"
    return f"a type of {client} ({service_type}) that hotplay.stacks does not implement yet"
