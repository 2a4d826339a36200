# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Previews: the plan (model.plan) of a stack, made through a run in preview mode.

The handlers a plan asks (does this change replace? what does this module say in
check mode?) read the store through a run's runtime, as they do when applying;
a run in preview mode writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.definition import StackDefinition
from ..model.plan import Plan, plan_stack, unsaved_stack
from ..resources.openstack.session import CloudSession
from ..resources.runtime import ScaleStep
from ..store.base import StackRecord, Store
from .executor import RunOptions, StackRun


def preview(store: Store, stack: StackRecord | None, definition: StackDefinition,
            skip_restricted: bool = False, restore: bool = False,
            accepted: frozenset[str] = frozenset(), host: Any = None, probe: bool = False,
            repairs: Mapping[str, str] | None = None,
            previous_depends_on: Mapping[str, tuple[str, ...]] | None = None,
            cloud: CloudSession | None = None,
            scale: Mapping[str, ScaleStep] | None = None) -> Plan:
    """The plan of applying ``definition`` to ``stack`` (None: a new stack); the
    options are model.plan.plan_stack's, and ``host`` is where probes ask.
    Heat's custom constraints are asked of ``cloud`` (the operation's session)
    first: a definition they refuse is not planned.  ``scale``: the sizes a scaling
    signal gives its groups (operations.scale)."""
    record = stack or unsaved_stack(definition.identity)
    run = StackRun(store, record, lambda event: None, options=RunOptions(
        preview=True, host=host, previous_depends_on=previous_depends_on,
        cloud=cloud or CloudSession(), scale=dict(scale or {})))
    run.definition = definition
    run.runtime.check_with_cloud(definition)
    return plan_stack(run, definition, skip_restricted, restore, accepted, probe, repairs)
