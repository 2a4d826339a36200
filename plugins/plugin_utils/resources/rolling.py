# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Batch arithmetic of Heat's rolling updates and batched creates of groups.

Pure functions, no store and no templates: which sizes the group goes through
and, for one batch, which members get the new definition.  Facts from Heat 27:

- ``heat/scaling/rolling_update.py``: ``needs_update`` and ``next_batch``;
- ``heat/engine/resources/openstack/heat/resource_group.py``: ``_get_batches``
  (the list of ``(capacity, updates)`` passes), ``_assemble_for_rolling_update``
  (the order members are replaced in: a member whose name is no longer wanted
  first, then the highest index first, members beyond the target size last);
- ``heat/scaling/template.py``: ``member_definitions`` (keep the last
  ``capacity`` members of that order, create the missing ones with the new
  definition, and give the new definition to at most ``updates`` members
  counting the created ones; members that already have it do not count).

A batched create is the same with a group of 0 members and ``min_in_service`` 0.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# What a member gets in one pass.
NEW = "new"  # the new definition (created, or updated to it)
KEEP = "keep"  # the definition it has now (left alone)


def needs_update(target: int, current: int, up_to_date: int) -> bool:
    """Whether another batch is needed (Heat's ``needs_update``)."""
    return not (up_to_date >= current == target)


def next_batch(target: int, current: int, up_to_date: int, batch_size: int,
               min_in_service: int) -> tuple[int, int]:
    """The group's size during the next batch, and how many members may get the
    new definition in it, created ones included (Heat's ``next_batch``)."""
    if up_to_date > current:
        raise ValueError("more members up to date than the group holds")
    effective_min = min(min_in_service, target, current)
    effective_batch = min(batch_size, max(target - up_to_date, 0))
    capacity = effective_batch + max(min(current, target - effective_batch), effective_min)
    return capacity, effective_batch


def batches(target: int, current: int, batch_size: int,
            min_in_service: int) -> list[tuple[int, int]]:
    """Every pass of the update: ``(capacity, updates)``, Heat's ``_get_batches``.

    ``current`` counts the members as Heat does (failed ones included, those a
    removal policy lists left out)."""
    return list(_batches(target, current, batch_size, min_in_service))


def _batches(target: int, current: int, batch_size: int,
             min_in_service: int) -> Iterator[tuple[int, int]]:
    updated = 0
    while needs_update(target, current, updated):
        capacity, updates = next_batch(target, current, updated, batch_size, min_in_service)
        yield capacity, updates
        # Members created beyond the larger of both sizes are temporary: their
        # new definition does not count as progress.
        updated += updates - max(capacity - max(current, target), 0)
        current = capacity


def batch_members(names: Sequence[str], target: int, capacity: int, updates: int,
                  existing: Sequence[tuple[str, bool]]) -> list[tuple[str, str]]:
    """The members of one pass and what each gets (``NEW`` or ``KEEP``).

    ``names``: the first ``capacity`` member names (skip list applied);
    ``existing``: the members there now that count (not failed, not on the skip
    list) with whether each already has the new definition, oldest first.
    Members of ``existing`` missing from the result are deleted by the pass.
    The result is in Heat's replacement order (see the module doc)."""
    index = {name: i for i, name in enumerate(names)}

    def priority(member: tuple[str, bool]) -> int:
        position = index.get(member[0])
        if position is None:
            return 0  # not wanted any more: goes first
        if position < target:
            return target - position  # higher indexes are replaced first
        return capacity  # beyond the target size: last

    ordered = sorted(existing, key=priority)  # stable: ties stay oldest first
    kept = ordered[-capacity:] if capacity else []
    known = {name for name, _current in existing}
    new_names = iter([name for name in names if name not in known])
    to_change = updates - (capacity - len(kept))
    result: list[tuple[str, str]] = []
    for position in range(capacity):
        if position < len(kept):
            name, current = kept[position]
            if not current and to_change > 0:
                to_change -= 1
                result.append((name, NEW))
            else:
                result.append((name, KEEP))
        else:
            result.append((next(new_names), NEW))
    return result


# -- autoscaling groups (Heat's InstanceGroup and its subclasses) ------------------------

def scaling_group_batches(target: int, current: int, batch_size: int,
                          min_in_service: int) -> list[tuple[int, int]]:
    """Every pass of an autoscaling group's rolling update: ``(capacity, updates)``,
    Heat's ``InstanceGroup._get_batches`` (unlike a ResourceGroup's, every member
    given the new definition counts as progress, temporary ones too)."""
    passes = []
    updated = 0
    while needs_update(target, current, updated):
        current, updates = next_batch(target, current, updated, batch_size, min_in_service)
        passes.append((current, updates))
        updated += updates
    return passes


def scaled_members(existing: Sequence[tuple[str, bool]], size: int, updates: int,
                   new_names: Iterator[str]) -> list[tuple[str, str]]:
    """The members of one pass of a scaling group and what each gets (``NEW`` or
    ``KEEP``), Heat's ``member_definitions``: the last ``size`` of ``existing``
    (members and whether each has the new definition, the first to go first: failed
    ones, then the oldest) are kept, new members (named from ``new_names``) fill up
    to ``size``, and at most ``updates`` members get the new definition, the new
    ones counted first."""
    kept = list(existing[-size:]) if size else []
    to_change = updates - (size - len(kept))
    result: list[tuple[str, str]] = []
    for name, current in kept:
        if not current and to_change > 0:
            to_change -= 1
            result.append((name, NEW))
        else:
            result.append((name, KEEP))
    result.extend((next(new_names), NEW) for _new in range(size - len(kept)))
    return result
