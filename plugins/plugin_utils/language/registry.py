# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``resource_registry`` of a Heat environment.

Heat keeps the registry as a nested dict (``heat/engine/environment.py``,
``ResourceRegistry``): top-level keys map a type name to another type name, a
wildcard (``"OS::Networking::*": "OS::Neutron::*"``) or a provider template file
(any value ending in ``.yaml`` or ``.template``); the ``resources`` key holds
per-resource entries (fnmatch patterns on resource names) that carry type mappings,
``hooks`` and ``restricted_actions``, and nested entries for the resources of
nested stacks.  This module keeps the same tree, never mutated after construction.

Builtin type names are just strings here: a type that no entry maps is returned as
it is, and the engine decides whether it knows it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from ..errors import TemplateError

HOOK_TYPES = (
    "pre-create", "pre-update", "pre-delete",
    "post-create", "post-update", "post-delete",
)
RESTRICTED_ACTIONS = ("update", "replace")

RESOURCES = "resources"
HOOKS = "hooks"
RESTRICTED = "restricted_actions"
BASE_URL = "base_url"
TEMPLATE_SUFFIXES = (".yaml", ".template")

# Heat's wording (heat/engine/environment.py: is_hook_definition,
# is_valid_restricted_action); %(types)s is the Python tuple, as Heat prints it.
MESSAGES = {
    HOOKS: ('Invalid hook type "%(value)s" for resource breakpoint, '
            'acceptable hook types are: %(types)s'),
    RESTRICTED: ('Invalid restricted_action type "%(value)s" for resource, '
                 'acceptable restricted_action types are: %(types)s'),
    # Heat has no check of its own (an alias loop ends in a RecursionError there).
    "loop": "Circular resource type mapping in resource_registry: %s",
    # Heat would take a non-string value for a plugin class; users cannot give one.
    "bad_value": 'Invalid resource_registry value "%(value)s" for "%(key)s": '
                 'expected a type name or a template file',
}
ALLOWED_VALUES = {HOOKS: HOOK_TYPES, RESTRICTED: RESTRICTED_ACTIONS}

# An alias chain longer than this is a loop even when each step renames the type
# (a wildcard mapping onto a longer prefix of itself grows the name forever).
_MAX_ALIAS_DEPTH = 64


def is_template_name(name: Any) -> bool:
    """Whether Heat treats this registry key or value as a provider template."""
    return isinstance(name, str) and name.endswith(TEMPLATE_SUFFIXES)


def _is_glob(name: str) -> bool:
    return name.endswith("*")


def _check_item(key: str, value: Any, source: str, path: str) -> None:
    """Heat's validation of ``hooks`` and ``restricted_actions`` values."""
    allowed = ALLOWED_VALUES[key]
    if isinstance(value, str):
        valid = value in allowed
    elif isinstance(value, (list, tuple)):
        valid = all(isinstance(v, str) and v in allowed for v in value)
    else:
        valid = False
    if not valid:
        message = MESSAGES[key] % {"value": value, "types": allowed}
        raise TemplateError(message, source=source, path=path)


def _remove(level: dict[str, Any], name: str) -> None:
    """Heat's ``null`` entry: drop a mapping, or every mapping under a wildcard."""
    if not _is_glob(name):
        level.pop(name, None)
        return
    prefix = name[:-1]
    # As Heat: a wildcard null removes type mappings only, not nested entries.
    for key in [k for k, v in level.items() if isinstance(v, str) and k.startswith(prefix)]:
        del level[key]


def _load_into(level: dict[str, Any], snippet: Mapping[str, Any], source: str, path: str) -> None:
    """Apply one registry snippet onto ``level`` in Heat's order of rules."""
    for key, value in snippet.items():
        key = str(key)
        here = f"{path}.{key}" if path else key
        if value is None:
            _remove(level, key)
        elif key in ALLOWED_VALUES:
            _check_item(key, value, source, here)
            level[key] = list(value) if isinstance(value, (list, tuple)) else value
        elif isinstance(value, Mapping):
            child = level.get(key)
            if not isinstance(child, dict):
                child = level[key] = {}
            _load_into(child, value, source, here)
        elif isinstance(value, str):
            level[key] = value
        else:
            message = MESSAGES["bad_value"] % {"value": value, "key": key}
            raise TemplateError(message, source=source, path=here)


def _copy_tree(tree: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy_tree(v) if isinstance(v, Mapping) else
            (list(v) if isinstance(v, list) else v) for k, v in tree.items()}


def _items_of(value: Any) -> tuple[str, ...]:
    """A hooks/restricted_actions value: a single string or a list."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return ()


@dataclass(frozen=True)
class _Match:
    """One registry entry that applies to a type: where it is and what it says."""

    entry_path: tuple[str, ...]
    name: str
    value: str

    def sort_key(self) -> tuple[int, tuple[str, ...]]:
        # Heat's ResourceInfo.__lt__: longer (per-resource) paths first, then
        # paths in lexicographic order.  So a matching wildcard such as
        # "OS::*" sorts (and wins) before an exact "OS::Foo", since "*" < "F".
        return (-len(self.entry_path), self.entry_path)


@dataclass(frozen=True)
class ResourceRegistry:
    """The resource registry one stack sees.

    ``tree`` is Heat's nested registry dict; build one with ``from_snippet`` or
    ``layered``.  Resource paths are names from this registry's stack down, e.g.
    ``("group", "0", "server")``; each step into a nested stack narrows the
    per-resource ``resources`` entries as Heat's ``remove_resources_except`` does.
    """

    tree: Mapping[str, Any] = field(default_factory=lambda: {RESOURCES: {}})
    # The snippets as written (with their nulls) and their files, in load order,
    # so that a registry can be replayed over another one when files are merged.
    layers: tuple[tuple[Mapping[str, Any], str], ...] = field(default=(), compare=False)

    # -- construction -----------------------------------------------------------

    @classmethod
    def from_snippet(cls, snippet: Mapping[str, Any] | None, source: str = "") -> "ResourceRegistry":
        """The registry of one environment's ``resource_registry`` section."""
        return cls().layered(snippet or {}, source)

    def layered(self, snippet: Mapping[str, Any], source: str = "") -> "ResourceRegistry":
        """This registry with ``snippet`` loaded over it (Heat's ``registry.load``).

        Later entries replace earlier ones key by key; ``null`` removes a mapping
        (a wildcard ``null`` removes every mapping with that prefix).
        """
        if not isinstance(snippet, Mapping):
            raise TemplateError('The "resource_registry" section must be a mapping.',
                                source=source, path="resource_registry")
        tree = _copy_tree(self.tree)
        _load_into(tree, snippet, source, "resource_registry")
        if not isinstance(tree.get(RESOURCES), dict):
            tree[RESOURCES] = {}
        return ResourceRegistry(tree, self.layers + ((_copy_tree(snippet), source),))

    def combined(self, later: "ResourceRegistry") -> "ResourceRegistry":
        """This registry with every snippet of ``later`` loaded over it, in order."""
        result = self
        for snippet, source in later.layers or ((later.as_dict(), ""),):
            result = result.layered(snippet, source)
        return result

    def as_dict(self) -> dict[str, Any]:
        """The registry as an environment's ``resource_registry`` section."""
        return _copy_tree(self.tree)

    # -- type resolution ----------------------------------------------------------

    def resolve(self, type_name: str, resource_path: Sequence[str] = (),
                via_types: Sequence[str] = ()) -> str:
        """The final type name or provider-template file key for a resource.

        Follows aliases and wildcard mappings; a per-resource mapping (exact name,
        as Heat looks it up) beats the top-level ones.  A type with no mapping is
        returned unchanged.  ``via_types`` optionally gives the type names of the
        parent resources along ``resource_path[:-1]`` (as written in their
        templates); with them, Heat's rule that a provider template does not see
        the registry entry that instantiated it is applied at each level.
        """
        scope = self._scoped(resource_path[:-1], via_types)
        name = resource_path[-1] if resource_path else None
        return scope._lookup(type_name, name)[0]

    def nested(self, resource_name: str, type_name: str | None = None) -> "ResourceRegistry":
        """The registry a nested stack created by ``resource_name`` sees.

        Heat's ``get_child_environment``: when ``type_name`` (the resource's type
        as written) resolves to a provider template, the entry that made it a
        template is removed, so the template's own resources of that type resolve
        to the type underneath; then the ``resources`` entries are narrowed to
        those for ``resource_name``.
        """
        tree = _copy_tree(self.tree)
        if type_name is not None:
            value, entry_path = self._lookup(type_name, resource_name)
            if entry_path and is_template_name(value):
                _pop_path(tree, entry_path)
        tree[RESOURCES] = _narrowed(tree.get(RESOURCES, {}), resource_name)
        return ResourceRegistry(tree, ((_copy_tree(tree), ""),))

    def _scoped(self, parents: Sequence[str], via_types: Sequence[str]) -> "ResourceRegistry":
        scope = self
        for index, parent in enumerate(parents):
            via = via_types[index] if index < len(via_types) else None
            scope = scope.nested(parent, via)
        return scope

    def _lookup(self, type_name: str, name: str | None) -> tuple[str, tuple[str, ...] | None]:
        """(final type or template, registry path of the entry that decided it)."""
        seen = [type_name]
        current, decided_by = type_name, None
        while True:
            if is_template_name(current):
                # A template type is its own implementation (Heat registers it
                # dynamically); any entry keyed by it names the same file.
                return current, decided_by or (current,)
            match = self._best_match(current, name)
            if match is None:
                return current, decided_by
            if is_template_name(match.value):
                return match.value, match.entry_path
            current = self._target(match, current)
            decided_by = match.entry_path
            if current in seen or len(seen) > _MAX_ALIAS_DEPTH:
                raise TemplateError(MESSAGES["loop"] % _chain(seen + [current]))
            seen.append(current)

    @staticmethod
    def _target(match: _Match, type_name: str) -> str:
        if _is_glob(match.name) and _is_glob(match.value):
            return match.value[:-1] + type_name[len(match.name) - 1:]
        return match.value

    def _best_match(self, type_name: str, name: str | None) -> _Match | None:
        matches = sorted(self._matches(type_name, name), key=_Match.sort_key)
        return matches[0] if matches else None

    def _matches(self, type_name: str, name: str | None) -> Iterator[_Match]:
        resources = self.tree.get(RESOURCES, {})
        entry = resources.get(name) if name is not None else None
        if name is not None and isinstance(entry, Mapping) and isinstance(entry.get(type_name), str):
            yield _Match((RESOURCES, name, type_name), type_name, entry[type_name])
        exact = self.tree.get(type_name)
        if isinstance(exact, str) and type_name not in (HOOKS, RESTRICTED, BASE_URL):
            yield _Match((type_name,), type_name, exact)
        for key, value in self.tree.items():
            if _glob_applies(key, value, type_name):
                yield _Match((key,), key, value)

    # -- per-resource settings ------------------------------------------------------

    def hooks(self, resource_path: Sequence[str]) -> frozenset[str]:
        """Heat's breakpoints set for the resource at this path."""
        return self._collect(HOOKS, resource_path)

    def restricted_actions(self, resource_path: Sequence[str]) -> frozenset[str]:
        """Heat's ``restricted_actions`` (update, replace) for this resource."""
        return self._collect(RESTRICTED, resource_path)

    def _collect(self, key: str, resource_path: Sequence[str]) -> frozenset[str]:
        if not resource_path:
            return frozenset()
        scope = self._scoped(resource_path[:-1], ())
        name = resource_path[-1]
        found: set[str] = set()
        for pattern, entry in scope.tree.get(RESOURCES, {}).items():
            if isinstance(entry, Mapping) and fnmatch.fnmatchcase(name, pattern):
                found.update(_items_of(entry.get(key)))
        return frozenset(found)


def _chain(names: Sequence[str]) -> str:
    """A loop of type names for a message: a long one shows its ends."""
    shown = [n if len(n) <= 80 else n[:77] + "..." for n in names]
    if len(shown) > 6:
        shown = shown[:3] + [f"... ({len(names) - 5} more) ..."] + shown[-2:]
    return " -> ".join(shown)


def _glob_applies(key: str, value: Any, type_name: str) -> bool:
    """Heat's GlobResourceInfo.matches (a glob onto a template never matches)."""
    if not (_is_glob(key) and isinstance(value, str)) or is_template_name(value):
        return False
    # Heat: a type never matches the glob that maps onto exactly that type,
    # so "OS::*": "OS::Heat::None" does not loop on OS::Heat::None.
    return type_name != value and type_name.startswith(key[:-1])


def _narrowed(resources: Mapping[str, Any], resource_name: str) -> dict[str, Any]:
    """Heat's ``remove_resources_except``: the entries for a nested stack.

    Every pattern that matches the name contributes its entry (a shallow update,
    in order), then the exact name's entry once more so it wins.  Only nested
    mappings mean anything inside the nested stack, so other keys are dropped.
    """
    merged: dict[str, Any] = {}
    for pattern, entry in resources.items():
        if isinstance(entry, Mapping) and fnmatch.fnmatchcase(resource_name, pattern):
            merged.update(entry)
    exact = resources.get(resource_name)
    if isinstance(exact, Mapping):
        merged.update(exact)
    return {k: _copy_tree(v) for k, v in merged.items() if isinstance(v, Mapping)}


def _pop_path(tree: dict[str, Any], path: Sequence[str]) -> None:
    level: Any = tree
    for key in path[:-1]:
        level = level.get(key) if isinstance(level, dict) else None
    if isinstance(level, dict):
        level.pop(path[-1], None)


EMPTY_REGISTRY = ResourceRegistry()
