# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runtime port: everything a resource type may ask of the run it is part of.

Types see the run only through ``RuntimeContext``; the run stage implements it
(run.executor.RunRuntime).  So a type never imports the executor or the stack
definition, and a new type can be tested with any object that has these members.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..language.template.loader import TemplateSource
from ..store.base import StackRecord, Store

# The project every stack belongs to (OS::project_id, and the tenant of a stack's ARN).
PROJECT_ID = "hotplay"


class Cancelled(Exception):
    """The run was cancelled (time-out or interruption) while a handler waited."""


@dataclass(frozen=True)
class Declared:
    """A resource as its template declares it, with functions resolved."""

    type: str  # as written, before the registry maps it
    deletion_policy: str = "Delete"
    metadata: Any = None  # as resolved; None when the template has none
    update_policy: Any = None


@dataclass(frozen=True)
class ScaleStep:
    """A scaling policy's signal, for its group: the size it gets, and the cooldown
    that starts when it has it (operations/scale.py, resources/autoscaling.py)."""

    capacity: int
    cooldown: Any  # seconds (the policy's, else the group's), or None
    reason: str  # Heat's words for the cooldown: "change_in_capacity : 1"
    previous: int  # the size before


class ChildStack(Protocol):
    """A nested stack of a resource, run by the same run (same options, store, sink)."""

    @property
    def paused(self) -> bool:
        """The last converge or delete stopped at a hook inside."""

    @property
    def runtime(self) -> RuntimeContext:
        """The runtime of the child stack (to read its members)."""

    def converge(self, template: TemplateSource, parameters: Mapping[str, Any], *,
                 facade: Mapping[str, Any], written_type: str, hold: frozenset[str],
                 action: str, batch_pass: bool = False, registry: Mapping[str, str] | None = None) -> bool:
        """Create or update the child to ``template``; False when it failed or paused.
        Members named in ``hold`` are left as they are; a ``batch_pass`` (of a rolling
        update) updates only the members whose definition changes.  Raises HotplayError when
        the child's definition is invalid, before anything in it is touched.  ``registry``:
        type mappings added to the child's environment."""

    def delete(self) -> bool:
        """Delete every resource of the child; False when it failed or paused."""


class RuntimeContext(Protocol):
    """What handlers may use of the running stack."""

    stack_name: str
    stack_id: str
    cancel_event: threading.Event
    # ``secrets.add(value)``: keep a value learned at run time secret (masked in
    # output, encrypted in the store); see run.executor.RunSecrets.
    secrets: Any

    @property
    def store(self) -> Store:
        """The store the run writes to (nested types keep their child stacks there)."""

    @property
    def preview(self) -> bool:
        """Nothing real may change: the run only shows what it would do (check mode), or
        records what exists (an adoption)."""

    @property
    def host(self) -> Any:
        """The task's host (resources.software_deployment.HostContext), or None."""

    @property
    def adopts_other_projects(self) -> bool:
        """An adoption may record another project's resources (an admin's, asked for
        with stack_adopt's ``other_projects``)."""

    @property
    def files(self) -> Mapping[str, str]:
        """The run's template files (provider templates, get_file contents)."""

    @property
    def cloud(self) -> Any:
        """The run's session with the task's cloud (resources.openstack.session.
        CloudSession): one per run, shared by every stack of it; it connects, and
        authenticates, when a resource first calls it."""

    def physical_name(self, resource_name: str) -> str:
        """A unique physical name: ``<stack>-<resource>-<12 random chars>``, as Heat."""

    def address(self, resource_name: str) -> tuple[str, str]:
        """The top stack's name and the resource's path from it (``group/abc/policy``):
        how hotplay.stacks.stack_signal names the resource."""

    def scaled_size(self, resource_name: str) -> ScaleStep | None:
        """What a signal to a scaling policy asks of this group in this run, or None."""

    def sleep(self, seconds: float) -> None:
        """Wait, but raise ``Cancelled`` at once when the run is cancelled."""

    def warn(self, message: str) -> None:
        """A warning of the task (Ansible shows it): something went wrong that, by
        Heat's rules, does not fail the resource."""

    def note_data(self, resource_name: str, key: str, value: Any) -> None:
        """Record one value of the resource's data while it acts, before anything else:
        what the cloud just answered with (a port made for a server), or the unique
        name a thing is about to be made under, so that what a run killed now may
        have made is found and deleted by the next run (``handle_delete``)."""

    def claim_physical_id(self, resource_name: str, physical_id: str) -> None:
        """Record the physical id a create is about to make, before making it: a
        run killed in between leaves a record of it, so nothing is untracked."""

    def withdraw_physical_id(self, resource_name: str, physical_id: str) -> None:
        """Take back a claimed id (``physical_id``, if it is still the record's): the
        create was refused, so the thing is not this stack's."""

    def note_nested_stack(self, resource_name: str, child_id: str) -> None:
        """Record a child stack before converging it (intent before action)."""

    def declared(self, resource_name: str) -> Declared | None:
        """The resource as this stack's template declares it, or None."""

    def software_config(self, physical_id: str) -> dict[str, Any] | None:
        """A software config of this stack (or a parent's) as Heat's API shows it."""

    def config_by_id(self, physical_id: str) -> str | None:
        """The ``config`` of a software config of this stack."""

    def child(self, stack: StackRecord, resource_name: str, adopt: Any = None) -> ChildStack:
        """The nested stack ``stack`` of this stack's resource ``resource_name``;
        ``adopt`` (language.abandon.AbandonedStack): what it adopts, when an adoption's
        abandon data has no nested stack there (a provider template over Heat's type)."""
