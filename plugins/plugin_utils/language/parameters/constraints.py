# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parameter constraints (heat/engine/constraints.py): range, length, modulo, allowed values and
patterns, custom constraints; each says what is wrong in Heat's words."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from ...bounded import Exceeded
from .patterns import full_match
from .types import (
    BOOLEAN,
    HIDDEN_TEXT,
    JSON,
    LIST,
    MESSAGES,
    NUMBER,
    STRING,
    _Invalid,
    str_to_num,
    to_schema_type,
)


@dataclass(frozen=True)
class Constraint:
    """Base of the constraint objects; ``kind`` is Heat's class name."""

    description: str | None = None
    kind: ClassVar[str] = "Constraint"
    valid_types: ClassVar[tuple[str, ...]] = ()

    def validate(self, value: Any, ptype: str, hidden: bool = False) -> None:
        """Raise ``_Invalid`` with the description, or Heat's message (a hidden
        parameter's value shown as Heat shows it: ``******``)."""
        if not self._is_valid(value, ptype):
            raise _Invalid(self.description or self._err_msg(HIDDEN_TEXT if hidden else value))

    def _is_valid(self, value: Any, ptype: str) -> bool:
        raise NotImplementedError

    def _err_msg(self, value: Any) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Range(Constraint):
    min: int | float | None = None
    max: int | float | None = None
    kind = "Range"
    valid_types: ClassVar[tuple[str, ...]] = (NUMBER,)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        number = str_to_num(value)
        return not ((self.min is not None and number < self.min)
                    or (self.max is not None and number > self.max))

    def _err_msg(self, value: Any) -> str:
        return MESSAGES["out_of_range"] % (value, self.min, self.max)


@dataclass(frozen=True)
class Length(Range):
    kind = "Length"
    valid_types = (STRING, LIST, JSON)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        return Range._is_valid(self, len(value), ptype)

    def validate(self, value: Any, ptype: str, hidden: bool = False) -> None:
        # The length is said, never the value: nothing to hide.
        super().validate(value, ptype)

    def _err_msg(self, value: Any) -> str:
        return MESSAGES["length_out_of_range"] % (len(value), self.min, self.max)


@dataclass(frozen=True)
class Modulo(Constraint):
    step: int = 1
    offset: int = 0
    kind = "Modulo"
    valid_types: ClassVar[tuple[str, ...]] = (NUMBER,)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        return str_to_num(value) % self.step == self.offset

    def _err_msg(self, value: Any) -> str:
        return MESSAGES["not_multiple"] % (value, self.step, self.offset)


@dataclass(frozen=True)
class AllowedValues(Constraint):
    allowed: tuple[Any, ...] = ()
    kind = "AllowedValues"
    valid_types = (STRING, NUMBER, BOOLEAN, LIST)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        # As Heat: list items are compared as they are, scalars after conversion.
        if isinstance(value, list):
            return all(item in self.allowed for item in value)
        allowed = tuple(to_schema_type(a, ptype) for a in self.allowed)
        return to_schema_type(value, ptype) in allowed

    def _err_msg(self, value: Any) -> str:
        # Heat 27 writes both as JSON: "a" is not an allowed value ["b", "c"]
        allowed = "[%s]" % ", ".join(json.dumps(a, default=str) for a in self.allowed)
        return MESSAGES["not_allowed"] % (json.dumps(value, default=str), allowed)


@dataclass(frozen=True)
class AllowedPattern(Constraint):
    pattern: str = ""
    kind = "AllowedPattern"
    valid_types = (STRING,)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        if not isinstance(value, str):
            raise TypeError(f"expected string or bytes-like object, got '{type(value).__name__}'")
        try:
            return _full_match(self.pattern, value)
        except Exceeded as exc:
            # Never the value: it may be hidden.
            raise _Invalid(f'matching the pattern "{self.pattern}" {exc} '
                           "(a pattern that backtracks catastrophically?)") from None

    def _err_msg(self, value: Any) -> str:
        return MESSAGES["no_match"] % (value, self.pattern)


@functools.lru_cache(maxsize=1024)
def _full_match(pattern: str, value: str) -> bool:
    """Heat's test (``re.match`` up to the end), with a time limit: a pattern
    like ``(a+)+$`` takes exponential time on some values (``patterns.py``)."""
    return full_match(pattern, value)


@dataclass(frozen=True)
class CustomConstraint(Constraint):
    """A named OpenStack-backed check (``nova.flavor``, ``glance.image``, ...).

    There is no OpenStack here to ask, so the value is accepted unchecked.
    """

    name: str = ""
    kind = "CustomConstraint"
    valid_types = (STRING, NUMBER, BOOLEAN, LIST)

    def _is_valid(self, value: Any, ptype: str) -> bool:
        return True
