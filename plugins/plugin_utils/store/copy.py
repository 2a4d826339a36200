# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Moving stores: copy stacks with their whole history from one store to another.

Rows are copied as stored (JSON as its text), never decoded into records, so
encrypted values stay encrypted and no key is needed.  A unit of the copy is a
top-level stack, live or deleted, with its nested stacks and every row that
hangs off them (revisions, resources live and retired, events, hooks).  The
target is written in one transaction that is verified before it commits: per
table, the copied rows read back from the target must have the source's count
and digest.  Each live stack's lock is held on both stores meanwhile.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..errors import HotplayError, StoreError
from .locking import stack_lock
from .sql import SqlStore
from .postgres import redact_url

# The tables copied, parents first, with the columns that order their rows and the
# column that ties a row to its stack.
TABLES: dict[str, tuple[tuple[str, ...], str]] = {
    "stacks": (("id",), "id"),
    "revisions": (("stack_id", "revision"), "stack_id"),
    "resources": (("stack_id", "name", "retired_in"), "stack_id"),
    "events": (("id",), "stack_id"),
    "hooks": (("stack_id", "resource_name", "hook", "revision"), "stack_id"),
    "signals": (("stack_id", "resource_name", "physical_id", "seq"), "stack_id"),
    # A stack's keyring (salt, key check, secret values): its encrypted values need it.
    "stack_keys": (("stack_id",), "stack_id"),
}
# Not copied as tables: runtime state (locks, leases); meta, each store's own, gets only the
# keys the target lacks (never its schema version).
NOT_COPIED = frozenset({"locks", "leases", "meta"})
SCHEMA_KEY = "schema_version"
# Meta keys each store has for itself: neither compared nor copied.  The salt of
# new keyrings differs from store to store; a copied stack keeps its own keyring.
# The store's id binds lease proofs (leases.py) to the store.
STORE_OWN_KEYS = frozenset({"secrets_salt", "store_id"})
# Events are compared in order, ids aside: ids already used in the target are renumbered.
_DIGEST_SKIPS = {"events": frozenset({"id"})}


class CopyRefused(HotplayError):
    """The copy would overwrite stacks, or the stores do not match: nothing written."""


@dataclass(frozen=True)
class CopyRequest:
    stacks: Sequence[str] = ()  # names to copy; all when empty
    overwrite: bool = False  # replace stacks the target has already
    check_mode: bool = False
    lock_timeout: float = 0
    cancel: threading.Event | None = None


@dataclass
class Unit:
    """One top-level stack (live or deleted) with its nested stacks."""

    name: str
    top_id: str
    stack_ids: list[str]
    live: bool
    status: str
    revisions: int = 0
    replaces: list[str] = field(default_factory=list)  # target stack ids it replaces

    def as_dict(self, action: str) -> dict[str, Any]:
        return {"name": self.name, "id": self.top_id, "deleted": not self.live,
                "status": self.status, "revisions": self.revisions,
                "nested_stacks": len(self.stack_ids) - 1, "action": action}


@dataclass
class CopyResult:
    changed: bool
    stacks: list[dict[str, Any]]
    tables: dict[str, dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"changed": self.changed, "stacks": self.stacks, "tables": self.tables}


def copy_stacks(source: SqlStore, target: SqlStore | None, request: CopyRequest, holder: str) -> CopyResult:
    """Copy the stacks of ``source`` into ``target`` (None: a target that does not
    exist yet, only in check mode)."""
    rows = _source_rows(source, request.stacks)
    units = _units(rows["stacks"])
    missing = sorted(set(request.stacks) - {u.name for u in units})
    if missing:
        raise CopyRefused(f"the source store has no stack named {', '.join(missing)}")
    if target is not None:
        _check_compatible(source, target)
        _find_conflicts(target, units, request.overwrite)
    if request.check_mode or not units:
        return _report(units, rows, request.check_mode, changed=bool(units))
    if target is None:
        raise StoreError("store_copy needs a target store outside check mode")
    with _held(source, target, units, holder, request):
        rows = _source_rows(source, request.stacks)  # as they are under the locks
        units = _units(rows["stacks"])
        _find_conflicts(target, units, request.overwrite)
        with target.transaction():
            target.insert_stored_rows("meta", _meta_to_copy(source, target))
            _write(target, units, rows)
            _verify(target, units, rows)
    return _report(units, rows, check_mode=False, changed=bool(units))


# -- reading --------------------------------------------------------------------------


def _source_rows(source: SqlStore, names: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Every row to copy, per table (the stacks' trees of the chosen names)."""
    all_stacks = source.stored_rows("stacks")
    chosen = _chosen_ids(all_stacks, names)
    rows = {"stacks": sorted((r for r in all_stacks if r["id"] in chosen), key=_depth_key(all_stacks))}
    ids = [r["id"] for r in rows["stacks"]]
    for table, (_order, column) in TABLES.items():
        if table != "stacks":
            rows[table] = source.stored_rows(table, column, ids)
    return rows


def _chosen_ids(stacks: list[dict[str, Any]], names: Sequence[str]) -> set[str]:
    children: dict[str | None, list[str]] = {}
    for row in stacks:
        children.setdefault(row["parent_id"], []).append(row["id"])
    tops = [r["id"] for r in stacks if r["parent_id"] is None and (not names or r["name"] in names)]
    chosen: set[str] = set()
    todo = list(tops)
    while todo:
        current = todo.pop()
        chosen.add(current)
        todo.extend(children.get(current, []))
    return chosen


def _depth_key(stacks: list[dict[str, Any]]) -> Callable[[Mapping[str, Any]], tuple[int, str]]:
    """Parents before their children (inserts satisfy the parent_id reference)."""
    parents = {r["id"]: r["parent_id"] for r in stacks}

    def depth(row: Mapping[str, Any]) -> tuple[int, str]:
        level, current = 0, row["parent_id"]
        while current is not None:
            level, current = level + 1, parents.get(current)
        return level, row["id"]

    return depth


def _units(stacks: list[dict[str, Any]]) -> list[Unit]:
    tops = [r for r in stacks if r["parent_id"] is None]
    units = []
    for top in sorted(tops, key=lambda r: (r["name"], r["created"], r["id"])):
        ids = sorted(_tree(stacks, top["id"]))
        live = not top["deleted"]
        status = f'{top["action"]}_{top["status"]}' if live else "DELETED"
        units.append(Unit(top["name"], top["id"], ids, live, status, int(top["revision"])))
    return units


def _tree(stacks: list[dict[str, Any]], top_id: str) -> set[str]:
    children: dict[str, list[str]] = {}
    for row in stacks:
        if row["parent_id"] is not None:
            children.setdefault(row["parent_id"], []).append(row["id"])
    tree, todo = set(), [top_id]
    while todo:
        current = todo.pop()
        tree.add(current)
        todo.extend(children.get(current, []))
    return tree


# -- checking -------------------------------------------------------------------------


def _check_compatible(source: SqlStore, target: SqlStore) -> None:
    """Same tables and columns, same schema version; what the source keeps in its
    meta table (a key check, say) agrees with the target's."""
    if source.url == target.url:
        raise CopyRefused(f"the source and the target are the same store ({redact_url(source.url)})")
    theirs, ours = source.stored_tables(), target.stored_tables()
    unknown = sorted(set(theirs) - set(TABLES) - NOT_COPIED)
    if unknown:
        raise CopyRefused(f"the source store has tables this collection does not copy: "
                          f"{', '.join(unknown)}; upgrade hotplay.stacks")
    for table in TABLES:
        if sorted(theirs.get(table, [])) != sorted(ours.get(table, [])):
            raise CopyRefused(
                f"the stores' {table} tables differ (source: {', '.join(theirs.get(table, []))}; "
                f"target: {', '.join(ours.get(table, []))}): open both with the same hotplay.stacks")
    source_meta, target_meta = _meta(source), _meta(target)
    for key, value in source_meta.items():
        if key in target_meta and target_meta[key] != value:
            raise CopyRefused(f"the stores differ in {key!r} ({value} in the source, "
                              f"{target_meta[key]} in the target)")


def _meta(store: SqlStore) -> dict[str, str]:
    return {r["key"]: r["value"] for r in store.stored_rows("meta") if r["key"] not in STORE_OWN_KEYS}


def _meta_to_copy(source: SqlStore, target: SqlStore) -> list[dict[str, str]]:
    """What the source keeps about itself and the target lacks (a key check, say,
    that its copied values need), its schema version aside."""
    theirs, ours = _meta(source), _meta(target)
    return [{"key": k, "value": v} for k, v in sorted(theirs.items()) if k != SCHEMA_KEY and k not in ours]


def _find_conflicts(target: SqlStore, units: list[Unit], overwrite: bool) -> None:
    """Mark what each unit would replace; refuse unless ``overwrite``."""
    existing = target.stored_rows("stacks")
    by_id = {r["id"]: r for r in existing}
    live_by_name = {r["name"]: r["id"] for r in existing if r["parent_id"] is None and not r["deleted"]}
    clashes = []
    for unit in units:
        replaced = {i for i in unit.stack_ids if i in by_id}
        if unit.live and unit.name in live_by_name:
            replaced.add(live_by_name[unit.name])
        tops = {_top_of(by_id, i) for i in replaced}
        unit.replaces = sorted(set().union(*(_tree(existing, t) for t in tops)) if tops else set())
        if unit.replaces:
            clashes.append(unit.name)
    if clashes and not overwrite:
        raise CopyRefused(
            f"the target store has the stacks {', '.join(sorted(set(clashes)))} already: nothing "
            "was copied; set overwrite: true to replace them (with their history in the target)")


def _top_of(by_id: Mapping[str, Mapping[str, Any]], stack_id: str) -> str:
    current = stack_id
    while by_id[current]["parent_id"] is not None:
        current = by_id[current]["parent_id"]
    return current


@contextmanager
def _held(source: SqlStore, target: SqlStore, units: list[Unit], holder: str,
          request: CopyRequest) -> Iterator[None]:
    """The locks of the live stacks on both stores: no run writes them meanwhile."""
    names = sorted({u.name for u in units if u.live})
    with ExitStack() as held:
        for store in (source, target):
            for name in names:
                held.enter_context(stack_lock(store, name, holder, request.lock_timeout, request.cancel))
        yield


# -- writing and verifying ------------------------------------------------------------


def _write(target: SqlStore, units: list[Unit], rows: dict[str, list[dict[str, Any]]]) -> None:
    replaced = sorted({i for u in units for i in u.replaces})
    for table in reversed(TABLES):
        target.delete_stored_rows(table, TABLES[table][1], replaced)
    rows["events"] = _events_for(target, rows["events"])
    for table in TABLES:
        ordered = rows[table] if table == "stacks" else sorted(rows[table], key=_order(table))
        target.insert_stored_rows(table, ordered)


def _events_for(target: SqlStore, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with their ids kept, or renumbered after the target's highest id
    when the target uses any of them (in the same order)."""
    if not events:
        return events
    ids = [e["id"] for e in events]
    if not target.stored_rows("events", "id", ids):
        return events
    highest = max((e["id"] for e in target.stored_rows("events")), default=0)
    ordered = sorted(events, key=lambda e: e["id"])
    return [{**event, "id": highest + index} for index, event in enumerate(ordered, 1)]


def _verify(target: SqlStore, units: list[Unit], rows: dict[str, list[dict[str, Any]]]) -> None:
    ids = [i for u in units for i in u.stack_ids]
    for table, (_order_columns, column) in TABLES.items():
        copied = target.stored_rows(table, column, ids)
        expected = table_digest(table, rows[table])
        found = table_digest(table, copied)
        if expected != found:
            raise StoreError(
                f"the copy of table {table} does not match the source ({expected['rows']} rows, "
                f"digest {expected['digest']}; the target has {found['rows']} rows, digest "
                f"{found['digest']}): nothing was copied")


def table_digest(table: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Row count and SHA-256 of a table's rows in a form both stores share:
    booleans as 0 and 1, rows in key order, columns by name."""
    skip = _DIGEST_SKIPS.get(table, frozenset())
    digest = hashlib.sha256()
    for row in sorted(rows, key=_order(table)):
        canonical = {k: int(v) if isinstance(v, bool) else v for k, v in sorted(row.items()) if k not in skip}
        digest.update(json.dumps(canonical, sort_keys=True, default=str).encode())
        digest.update(b"\n")
    return {"rows": len(rows), "digest": digest.hexdigest()}


def _order(table: str) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    columns = TABLES[table][0]
    return lambda row: tuple(row[c] for c in columns)


def _report(units: list[Unit], rows: dict[str, list[dict[str, Any]]], check_mode: bool,
            changed: bool) -> CopyResult:
    def action(unit: Unit) -> str:
        verb = "replace" if unit.replaces else "copy"
        return f"would {verb}" if check_mode else ("replaced" if unit.replaces else "copied")

    return CopyResult(
        changed=changed,
        stacks=[u.as_dict(action(u)) for u in units],
        tables={table: table_digest(table, rows[table]) for table in TABLES},
    )
