# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``yaql: {expression, data}`` (2016-10-14), evaluated by the ``yaql`` library.

The limits are Heat's defaults ([yaql] limit_iterators = 200, memory_quota =
10000 bytes), so an expression that Heat refuses as too large is refused here too.
Those do not bound time (``range(0, 10000000000).len()`` counts for hours) nor
every use of memory, so the expression is evaluated in a helper process with a
time limit and an address-space budget (``bounded.py``, ``limits.py``); it is
parsed here first, for Heat's ``Bad expression`` at validation.
"""

from __future__ import annotations

# yaql 3.x reads ``collections.abc`` without importing it; Python 3.12 no longer
# imports it as a side effect of ``collections``.
import collections.abc  # noqa: F401 pylint: disable=unused-import
import threading
from collections.abc import Mapping
from typing import Any, Callable

from ...bounded import Exceeded, Failed, run_bounded
from ...limits import YAQL_ADDRESS_SPACE, YAQL_LIMIT_ITERATORS, YAQL_MEMORY_QUOTA, YAQL_SECONDS
from .base import Function, resolve
from .hot import HeatFunction

LIMIT_ITERATORS = YAQL_LIMIT_ITERATORS
MEMORY_QUOTA = YAQL_MEMORY_QUOTA

_lock = threading.Lock()
_parser: Callable[[str], Any] | None = None


def _yaql() -> Callable[[str], Any]:
    """The parser, built once; the helper process evaluates (bounded_helper.py)."""
    global _parser
    with _lock:
        if _parser is None:
            import yaql

            options = {"yaql.limitIterators": LIMIT_ITERATORS, "yaql.memoryQuota": MEMORY_QUOTA}
            _parser = yaql.YaqlFactory().create(options)
        return _parser


def _yaql_errors() -> tuple[type[Exception], ...]:
    from yaql.language import exceptions

    return (exceptions.YaqlException,)


class Yaql(HeatFunction):
    """Evaluate a yaql expression on ``data`` (the expression sees ``$.data``)."""

    def check_args(self) -> None:
        if not isinstance(self.args, Mapping):
            raise self.fail(f'Arguments to "{self.fn_name}" must be a map.')
        if "expression" not in self.args or set(self.args) - {"expression", "data"}:
            example = (
                f"{self.fn_name}:\n"
                "              expression: $.data.var1.sum()\n"
                "              data:\n"
                "                var1: [3, 2, 1]"
            )
            raise self.fail(f'"{self.fn_name}" syntax should be {example}')

    def validate(self) -> None:
        expression = self.args["expression"]
        if not isinstance(expression, Function):
            self._parse(expression)

    def _parse(self, expression: Any) -> Any:
        if not isinstance(expression, str):
            raise self.fail(f'The "expression" argument to {self.fn_name} must contain a string.')
        parser = _yaql()
        try:
            # The ply lexer and parser behind yaql keep state: one parse at a time.
            with _lock:
                return parser(expression)
        except _yaql_errors() as exc:
            raise self.fail(f"Bad expression {exc}.") from None

    def result(self) -> Any:
        expression = resolve(self.args["expression"])
        self._parse(expression)
        data = _plain(resolve(self.args.get("data", {})))
        try:
            return run_bounded("yaql", (expression, data, LIMIT_ITERATORS, MEMORY_QUOTA),
                               YAQL_SECONDS, YAQL_ADDRESS_SPACE)
        except Failed as exc:  # a user's expression can raise anything
            raise self.fail(str(exc)) from None
        except Exceeded as exc:
            raise self.fail(f"The expression {exc}.") from None


def _plain(value: Any) -> Any:
    """``value`` in the builtin types it derives from: the helper imports only yaql
    and the standard library, so a class of ours could not be unpickled there."""
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_plain(item) for item in value]
        return tuple(items) if isinstance(value, tuple) else items
    for builtin in (bool, str, int, float):
        if isinstance(value, builtin):
            return builtin(value)
    return value
