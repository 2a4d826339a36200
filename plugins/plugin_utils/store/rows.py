# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rows of the store's tables turned into records, and a resource into its row,
for every backend.

The tables are the same everywhere; only how JSON columns come back differs
(SQLite: text to decode; PostgreSQL: already decoded), so each backend passes
its ``decode``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .base import ResourceState
from .base import (
    EventRecord,
    HookRecord,
    KeyringRecord,
    RevisionRecord,
    SignalRecord,
    StackRecord,
    StoredResource,
    utc_now,
)

Row = Mapping[str, Any]
Decode = Callable[[Any], Any]
Encode = Callable[[Any], Any]


def stack_record(row: Row, decode: Decode) -> StackRecord:
    return StackRecord(
        id=row["id"],
        name=row["name"],
        action=row["action"],
        status=row["status"],
        status_reason=row["status_reason"],
        created=row["created"],
        updated=row["updated"],
        revision=row["revision"],
        parent_id=row["parent_id"],
        parent_resource=row["parent_resource"],
        outputs=decode(row["outputs"]),
        output_errors=decode(row["output_errors"]),
        tags=tuple(decode(row["tags"])),
        deletion_protection=bool(row["deletion_protection"]),
    )


def revision_record(row: Row, decode: Decode) -> RevisionRecord:
    return RevisionRecord(
        stack_id=row["stack_id"],
        revision=row["revision"],
        action=row["action"],
        status=row["status"],
        status_reason=row["status_reason"],
        created=row["created"],
        definition=decode(row["definition"]),
        digest=row["digest"],
        outcome=decode(row["outcome"]),
        finished=row["finished"],
    )


def stored_resource(row: Row, decode: Decode) -> StoredResource:
    return StoredResource(
        stack_id=row["stack_id"],
        state=ResourceState(
            name=row["name"],
            type=row["type"],
            action=row["action"],
            status=row["status"],
            status_reason=row["status_reason"],
            physical_id=row["physical_id"],
            properties=decode(row["properties"]),
            data=decode(row["data"]),
            nested_stack_id=row["nested_stack_id"],
            deletion_policy=row["deletion_policy"],
            implementation=row["implementation"],
            metadata=decode(row["metadata"]),
            update_policy=decode(row["update_policy"]),
        ),
        requires=tuple(decode(row["requires"])),
        position=row["position"],
        retired_in=row["retired_in"],
        keep_until=row["keep_until"],
    )


def event_record(row: Row) -> EventRecord:
    return EventRecord(
        int(row["id"]), row["stack_id"], row["resource_name"], row["action"],
        row["status"], row["reason"], row["physical_id"], row["time"],
    )


def hook_record(row: Row) -> HookRecord:
    return HookRecord(row["stack_id"], row["resource_name"], row["hook"], row["revision"],
                      row["status"], row["created"])


def signal_record(row: Row, decode: Callable[[Any], Any]) -> SignalRecord:
    return SignalRecord(row["stack_id"], row["resource_name"], row["physical_id"], int(row["seq"]),
                        decode(row["body"]), row["received"])


def keyring_record(row: Row) -> KeyringRecord:
    return KeyringRecord(row["stack_id"], row["salt"], row["key_check"], row["secrets"], row["updated"])


def resource_values(stack_id: str, state: ResourceState, requires: Sequence[str], position: int,
                    retired_in: int, encode: Encode) -> tuple[Any, ...]:
    """A resource's row in column order, ``keep_until`` (always reset) left out:
    each backend encodes JSON columns its own way."""
    return (
        stack_id, state.name, state.type, state.action, state.status, state.status_reason,
        state.physical_id, encode(state.properties), encode(state.data), state.nested_stack_id,
        state.deletion_policy, state.implementation, encode(state.metadata),
        encode(state.update_policy), encode(list(requires)), position, retired_in, utc_now(),
    )
