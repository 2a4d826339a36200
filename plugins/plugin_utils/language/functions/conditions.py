# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Condition functions (``equals``, ``not``, ``and``, ``or``) and the ``if`` macro.

A condition is written as ``true``/``false``, as the name of a condition of the
``conditions`` section, or as a call of a condition function; all three resolve
to a bool through ``enabled``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...errors import StackValidationFailed
from . import base
from .base import OMIT, Function, FunctionTable, resolve
from .hot import HeatFunction, is_list


def enabled(ctx: base.StackContext, value: Any, path: str) -> bool:
    """The truth of a resolved condition: a bool, or the name of a condition.

    Heat (conditions.py is_enabled): ``None`` counts as true and anything but a
    bool or a declared condition's name is 'Invalid condition'.
    """
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and ctx.has_condition(value):
        return bool(ctx.condition(value))
    raise StackValidationFailed(f'Invalid condition "{value}"', path=path)


class ConditionReference(Function):
    """A bare condition name where a condition is expected (``condition: is_prod``)."""

    def validate(self) -> None:
        if not self.ctx.has_condition(self.args):
            raise self.error(f'Invalid condition "{self.args}"')

    def result(self) -> Any:
        return enabled(self.ctx, self.args, self.path)


class Equals(HeatFunction):
    """``equals: [value_1, value_2]``."""

    def check_args(self) -> None:
        if not self.args or not isinstance(self.args, list) or len(self.args) != 2:
            raise self.fail(
                f'Arguments to "{self.fn_name}" must be of the form: [value_1, value_2]'
            )

    def result(self) -> Any:
        return resolve(self.args[0]) == resolve(self.args[1])


class Not(HeatFunction):
    """``not: condition``."""

    def check_args(self) -> None:
        if self.args is None:
            raise self.fail(f'Argument to "{self.fn_name}" must be a condition')

    def result(self) -> Any:
        return not enabled(self.ctx, resolve(self.args), self.path)


class And(HeatFunction):
    """``and: [condition, condition, ...]`` (at least two)."""

    def check_args(self) -> None:
        if not is_list(self.args):
            raise self.fail(f'Arguments to "{self.fn_name}" must be a list of conditions')
        if len(self.args) < 2:
            raise self.fail(f'The minimum number of condition arguments to "{self.fn_name}" is 2.')

    def values(self) -> list[bool]:
        return [enabled(self.ctx, cond, self.path) for cond in resolve(self.args)]

    def result(self) -> Any:
        return all(self.values())


class Or(And):
    """``or: [condition, condition, ...]`` (at least two)."""

    def result(self) -> Any:
        return any(self.values())


class If(Function):
    """``if: [condition, value_if_true, value_if_false]`` (2016-10-14), a macro.

    The condition is parsed with the version's condition functions
    (``condition_table``, set per version by ``template/versions.py``) and
    evaluated when the snippet is parsed, so only the branch kept is parsed.
    """

    is_macro: ClassVar[bool] = True
    condition_table: ClassVar[FunctionTable] = {}
    # 2021-04-16: the false value may be left out; the item then disappears.
    nullable: ClassVar[bool] = False

    def _branches(self) -> tuple[Any, Any, Any]:
        args = self.args
        counts = (2, 3) if self.nullable else (3,)
        if not args or not is_list(args) or len(args) not in counts:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form: '
                "[condition_name, value_if_true, value_if_false]"
            )
        if len(args) == 2:
            return args[0], args[1], OMIT
        return args[0], args[1], args[2]

    def expand(self) -> Any:
        condition, if_true, if_false = self._branches()
        parsed = parse_condition(self.condition_table, self.ctx, condition, self.path)
        base.validate(parsed)
        return if_true if enabled(self.ctx, resolve(parsed), self.path) else if_false

    def result(self) -> Any:  # pragma: no cover - a macro is replaced when parsed
        raise NotImplementedError


class IfNullable(If):
    """``if: [condition, value_if_true]`` allowed (2021-04-16)."""

    nullable = True


def parse_condition(table: FunctionTable, ctx: base.StackContext, snippet: Any, path: str) -> Any:
    """Parse a condition; a bare string becomes a reference to that condition."""
    if isinstance(snippet, str):
        return ConditionReference(ctx, "condition", snippet, path)
    return base.parse(table, ctx, snippet, path)


def check_definition(name: str, parsed: Any, path: str) -> None:
    """Heat's check of a ``conditions`` entry: a bool or a condition function."""
    if not isinstance(parsed, (bool, Function)):
        raise StackValidationFailed(
            "Condition validation error: "
            f'The definition of condition "{name}" is invalid: {parsed}',
            path=path,
        )
