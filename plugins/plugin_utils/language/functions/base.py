# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Intrinsic functions: the parsed form of a template snippet and how it resolves.

A template snippet is parsed once into plain data in which every function call
(a one-key mapping whose key is in the version's function table) is replaced by a
``Function`` object.  Resolving walks that tree and asks each function for its
result, reading what it needs from a ``StackContext``: parameter values, other
resources, files, conditions.  Nothing here knows about Ansible or the store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Protocol

from ...errors import StackValidationFailed

# What a function returns to ask the enclosing list or mapping to drop the item it
# stands in (the two-argument ``if`` of 2021-04-16, Heat's ``Ellipsis``).
OMIT = Ellipsis


class ResourceRef(Protocol):
    """What functions may read of a resource of the same stack."""

    name: str

    @property
    def enabled(self) -> bool:
        """False when the resource's condition is false (it does not exist)."""

    def attribute_names(self) -> frozenset[str] | None:
        """Attribute names of the type, or None when any name is allowed."""

    def reference_id(self) -> Any:
        """The value of ``get_resource`` (Heat's FnGetRefId)."""

    def attribute(self, name: str) -> Any:
        """The value of one attribute (Heat's FnGetAtt)."""

    def all_attributes(self) -> dict[str, Any]:
        """Every attribute, for the ``get_attr: [name]`` form."""


class StackContext(Protocol):
    """What functions may read of the stack being evaluated."""

    stack_name: str
    stack_id: str
    project_id: str

    def has_param(self, name: str) -> bool:
        """True when the template declares parameter ``name``."""

    def param(self, name: str) -> Any:
        """The converted value of a declared parameter."""

    def has_resource(self, name: str) -> bool:
        """True when the template declares resource ``name`` (any condition)."""

    def resource(self, name: str) -> ResourceRef:
        """A resource of this stack."""

    def file(self, key: str) -> str | None:
        """Content of ``get_file`` target ``key`` (None when not provided)."""

    def condition(self, name: str) -> bool:
        """The value of a named condition of the template."""

    def has_condition(self, name: str) -> bool:
        """True when the template declares condition ``name``."""

    def facade(self, key: str) -> Any:
        """``metadata``/``deletion_policy``/``update_policy`` of the parent resource."""

    def mappings(self) -> Mapping[str, Any]:
        """A CFN template's ``Mappings`` section (``Fn::FindInMap``; empty in HOT)."""

    # Optional: ``charge(function, value)`` counts what functions produce and
    # raises when a stack's functions produce too much (definition.Scope).


class Function:
    """One call of an intrinsic function inside a parsed snippet.

    Subclasses set ``name`` (for documentation) and override ``result``; those that
    reference resources override ``dependencies``; ``validate`` checks arguments
    that can be checked without resolving anything.
    """

    # A macro is replaced by ``expand()`` when the snippet is parsed (Heat's
    # ``function.Macro``): ``if`` picks its branch once conditions are known, so
    # the branch not taken adds no dependency.
    is_macro: ClassVar[bool] = False

    def __init__(self, ctx: StackContext, fn_name: str, args: Any, path: str) -> None:
        self.ctx = ctx
        self.fn_name = fn_name
        self.args = args
        self.path = path

    def validate(self) -> None:
        """Raise ``StackValidationFailed`` for arguments that can never work."""

    def check_reference(self) -> None:
        """Raise when the call names a resource the stack does not have (Heat finds
        these while building the dependency graph, before validating resources)."""

    def result(self) -> Any:
        """The resolved value (functions inside the arguments resolved too)."""
        raise NotImplementedError

    def dependencies(self) -> Iterator[str]:
        """Names of resources this call needs, beyond those of its arguments."""
        return iter(())

    def expand(self) -> Any:
        """For macros: the raw snippet that stands in place of this call.

        ``parse`` parses it with the same table (``OMIT`` passes through).  A
        macro's ``args`` are the raw, unparsed arguments.
        """
        raise NotImplementedError

    def error(self, message: str) -> StackValidationFailed:
        """An error located at this call."""
        return StackValidationFailed(message, path=self.path)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.fn_name}: {self.args!r}>"


FunctionTable = Mapping[str, type[Function]]

# The exact types of a snippet's leaves: neither a call nor a container.  Tested
# first: every leaf of every snippet is walked, and isinstance against the Mapping
# ABC is several times slower than a set lookup (a subclass takes the long way).
_LEAVES = frozenset({str, int, float, bool, type(None)})


def parse(table: FunctionTable, ctx: StackContext, snippet: Any, path: str) -> Any:
    """Replace every function call in ``snippet`` by a ``Function`` object.

    ``path`` is where ``snippet`` sits in its document, used by error messages.
    """
    if type(snippet) in _LEAVES:
        return snippet
    if isinstance(snippet, Mapping):
        if len(snippet) == 1:
            key, value = next(iter(snippet.items()))
            fn_class = table.get(key) if isinstance(key, str) else None
            if fn_class is not None:
                fn_path = f"{path}.{key}" if path else key
                if fn_class.is_macro:
                    # A macro gets its raw arguments and parses only what it keeps
                    # (Heat's Macro.parse_args): the branch ``if`` drops is never
                    # parsed, so it raises no error and adds no dependency.
                    chosen = fn_class(ctx, key, value, fn_path).expand()
                    return parse(table, ctx, chosen, fn_path)
                return fn_class(ctx, key, parse(table, ctx, value, fn_path), fn_path)
        parsed = ((k, parse(table, ctx, v, _join(path, k))) for k, v in snippet.items())
        return {k: v for k, v in parsed if v is not OMIT}
    if isinstance(snippet, list):
        parsed_items = (parse(table, ctx, v, f"{path}[{i}]") for i, v in enumerate(snippet))
        return [v for v in parsed_items if v is not OMIT]
    return snippet


def resolve(snippet: Any) -> Any:
    """The plain value of a parsed snippet: every function replaced by its result."""
    if type(snippet) in _LEAVES:
        return snippet
    if isinstance(snippet, Function):
        value = resolve(snippet.result())
        charge = getattr(snippet.ctx, "charge", None)
        if charge is not None:
            charge(snippet, value)
        return value
    if isinstance(snippet, Mapping):
        resolved = ((k, resolve(v)) for k, v in snippet.items())
        return {k: v for k, v in resolved if v is not OMIT}
    if isinstance(snippet, list):
        return [v for v in (resolve(item) for item in snippet) if v is not OMIT]
    return snippet


def walk_functions(snippet: Any) -> Iterator[Function]:
    """Every function call in a parsed snippet, outer calls before inner ones."""
    if type(snippet) in _LEAVES:
        return
    if isinstance(snippet, Function):
        yield snippet
        yield from walk_functions(snippet.args)
    elif isinstance(snippet, Mapping):
        for value in snippet.values():
            yield from walk_functions(value)
    elif isinstance(snippet, list):
        for item in snippet:
            yield from walk_functions(item)


def validate(snippet: Any, skip: tuple[type, ...] = ()) -> None:
    """Run every function's own argument checks (but those of the ``skip`` types)."""
    for fn in walk_functions(snippet):
        if not isinstance(fn, skip):
            fn.validate()


def check_references(snippet: Any) -> None:
    """Every call's ``check_reference``."""
    for fn in walk_functions(snippet):
        fn.check_reference()


def dependencies(snippet: Any) -> set[str]:
    """Names of the resources a parsed snippet reads."""
    names: set[str] = set()
    for fn in walk_functions(snippet):
        names.update(fn.dependencies())
    return names


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)
