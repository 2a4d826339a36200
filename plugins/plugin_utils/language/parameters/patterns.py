# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``allowed_pattern``: Heat's test, ``re.match`` reaching the end of the value,
under a time limit, in this process and thread.

Python's ``re`` cannot be stopped, and a pattern like ``(a+)+$`` takes exponential
time on some values.  The ``regex`` package can (``timeout=``, in CPU seconds of
the process), but it reads some patterns otherwise than ``re``: ``[[:alpha:]]``
is a POSIX class to it and a set then a ``]`` to ``re``, ``a{e<=1}`` a fuzzy match
and literal text, ``\\w`` includes combining marks, ``\\s`` misses
``\\x1c``-``\\x1f``, ``(?i)`` folds some letters differently.  So the pattern is
parsed by ``re``'s own parser, as Heat's ``re`` reads it, and written out again for
``regex`` in terms that both read alike: every character, set and category
explicit (``\\w`` as ``[\\p{L}\\p{N}_]``, which is ``str.isalnum() or "_"``), case
folding done here, by asking ``re`` which cased characters each item matches.
What ``regex`` cannot hold safely goes to a helper process running ``re``
(``bounded.py``): a pattern that ``regex`` would expand to more than
PATTERN_REGEX_UNITS at compile time (it unrolls counted repeats:
``(?:a{1000}){1000}`` takes it 275 MiB, ``re`` nothing), a backreference under
``(?i)``, and a value longer than PATTERN_IN_PROCESS_CHARS (whose backtracking may
need memory in proportion).

``regex`` knows a newer Unicode than Python 3.12 (15.0): characters assigned
since are letters or digits to it and to nobody else.  That is the one difference
left, the same one Heat has between two versions of Python.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # re's C engine, for its case rules
import functools
import re
from collections.abc import Iterable, Iterator
# re's own parser and the constants of its tree: the one reading of a pattern that
# is Heat's by definition.  Private to re, the same since 3.11 (sre_parse before).
from re import _casefix, _constants as sre, _parser  # type: ignore[attr-defined]
from typing import Any

from ...bounded import Exceeded, run_bounded
from ...limits import PATTERN_ADDRESS_SPACE, PATTERN_IN_PROCESS_CHARS, PATTERN_REGEX_UNITS, PATTERN_SECONDS

_UNICODE_CLASSES = {  # inside a set; Python's str predicates, which re uses
    sre.CATEGORY_WORD: r"\p{L}\p{N}_",  # isalnum() or "_"
    sre.CATEGORY_DIGIT: r"\p{Nd}",  # isdecimal()
    sre.CATEGORY_SPACE: r"\s\x1c-\x1f",  # isspace(), which has the four separators
}
_ASCII_CLASSES = {
    sre.CATEGORY_WORD: "0-9A-Z_a-z",
    sre.CATEGORY_DIGIT: "0-9",
    sre.CATEGORY_SPACE: r"\t-\r\x20",
}
_NEGATED = {
    sre.CATEGORY_NOT_WORD: sre.CATEGORY_WORD,
    sre.CATEGORY_NOT_DIGIT: sre.CATEGORY_DIGIT,
    sre.CATEGORY_NOT_SPACE: sre.CATEGORY_SPACE,
}
_RE_CATEGORIES = {
    sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W",
    sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D",
    sre.CATEGORY_SPACE: r"\s", sre.CATEGORY_NOT_SPACE: r"\S",
}
_ANY_CHARACTER = "(?s:.)"


class Untranslatable(Exception):
    """A pattern that is matched by re in a helper process instead."""


def full_match(pattern: str, value: str) -> bool:
    """Heat's test; ``Exceeded`` if it takes longer than PATTERN_SECONDS."""
    compiled = compiled_pattern(pattern) if len(value) <= PATTERN_IN_PROCESS_CHARS else None
    if compiled is None:
        return bool(run_bounded("match", (pattern, value), PATTERN_SECONDS, PATTERN_ADDRESS_SPACE))
    try:
        match = compiled.match(value, timeout=PATTERN_SECONDS, concurrent=True)
    except TimeoutError:
        raise Exceeded(f"did not finish within {PATTERN_SECONDS:g} seconds") from None
    return match is not None and match.end() == len(value)


@functools.lru_cache(maxsize=256)
def compiled_pattern(pattern: str) -> Any:
    """``pattern`` compiled by ``regex`` to match as ``re`` does, or None if it must
    go to a helper.  ``re.error`` (Heat's words) for a pattern ``re`` refuses."""
    flags = re.compile(pattern).flags
    regex = _regex()
    try:
        return regex.compile(translate(pattern, flags), regex.VERSION0)
    except (Untranslatable, regex.error, OverflowError, RecursionError, MemoryError):
        return None


def _regex() -> Any:
    """The regex package, imported on first use as yaql is (ansible-test's import
    check of the plugins runs without either)."""
    import regex  # type: ignore[import-untyped]  # pylint: disable=import-outside-toplevel

    return regex


def translate(pattern: str, flags: int) -> str:
    """``pattern`` in ``regex``'s syntax, meaning what it means to ``re``."""
    writer = _Writer()
    text = writer.sequence(_parser.parse(pattern), flags, 1)
    if writer.units > PATTERN_REGEX_UNITS:
        raise Untranslatable(f"{writer.units} units")
    return text


class _Writer:
    """Writes one parsed pattern out; counts what regex will build from it."""

    def __init__(self) -> None:
        self.units = 0

    def sequence(self, items: Iterable[tuple[Any, Any]], flags: int, repeat: int) -> str:
        return "".join(self.item(op, av, flags, repeat) for op, av in items)

    def item(self, op: Any, av: Any, flags: int, repeat: int) -> str:
        # regex unrolls counted repeats when it compiles: each item costs as many
        # units as the repeats around it ask for at least.
        self.units += repeat
        if self.units > PATTERN_REGEX_UNITS:
            raise Untranslatable("too large for regex")
        if op in (sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY):
            text = _character(op, av, flags)
            self.units += repeat * (len(text) // 64)
            return text
        if op is sre.AT:
            return _position(av, flags)
        return self._group(op, av, flags, repeat)

    def _group(self, op: Any, av: Any, flags: int, repeat: int) -> str:
        if op is sre.SUBPATTERN:
            group, add_flags, del_flags, items = av
            inner = self.sequence(items, (flags | add_flags) & ~del_flags, repeat)
            return f"({inner})" if group else f"(?:{inner})"
        if op is sre.BRANCH:
            return "(?:" + "|".join(self.sequence(branch, flags, repeat) for branch in av[1]) + ")"
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, high, items = av
            inner = self.sequence(items, flags, repeat * max(low, 1))
            upper = "" if high is sre.MAXREPEAT else str(high)
            suffix = {sre.MAX_REPEAT: "", sre.MIN_REPEAT: "?", sre.POSSESSIVE_REPEAT: "+"}[op]
            return f"(?:{inner}){{{low},{upper}}}{suffix}"
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            direction, items = av
            kind = ("=" if op is sre.ASSERT else "!") if direction == 1 else (
                "<=" if op is sre.ASSERT else "<!")
            return f"(?{kind}{self.sequence(items, flags, repeat)})"
        if op is sre.ATOMIC_GROUP:
            return f"(?>{self.sequence(av, flags, repeat)})"
        if op is sre.GROUPREF:
            if flags & re.IGNORECASE:  # re folds the two texts with its own rules
                raise Untranslatable("backreference under IGNORECASE")
            return f"(?:\\{av})"
        if op is sre.GROUPREF_EXISTS:
            group, yes, no = av
            otherwise = "" if no is None else "|" + self.sequence(no, flags, repeat)
            return f"(?({group}){self.sequence(yes, flags, repeat)}{otherwise})"
        raise Untranslatable(f"{op} is not known")


def _position(at: Any, flags: int) -> str:
    multiline = bool(flags & re.MULTILINE)
    if at is sre.AT_BEGINNING:
        return "(?m:^)" if multiline else r"\A"
    if at is sre.AT_END:
        return r"(?=\n|\Z)" if multiline else r"(?=\n?\Z)"
    if at is sre.AT_BEGINNING_STRING:
        return r"\A"
    if at is sre.AT_END_STRING:
        return r"\Z"
    word = "[" + _classes(flags)[sre.CATEGORY_WORD] + "]"
    if at is sre.AT_BOUNDARY:
        return f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
    if at is sre.AT_NON_BOUNDARY:  # re (3.12): \B never matches an empty text
        return rf"(?!\A\Z)(?:(?<={word})(?={word})|(?<!{word})(?!{word}))"
    raise Untranslatable(f"{at} is not known")


def _character(op: Any, av: Any, flags: int) -> str:
    """One character that the item matches, as a set (or lookarounds and one
    character where a set cannot say it: a negated category among other items)."""
    if op is sre.ANY:
        return _ANY_CHARACTER if flags & re.DOTALL else r"[^\n]"
    items, complements, negated = _set_parts(op, av, flags)
    text = _render(items, complements, negated)
    if flags & re.IGNORECASE:
        text = _case_folded(text, _re_source(op, av), flags & (re.IGNORECASE | re.ASCII))
    return text


def _set_parts(op: Any, av: Any, flags: int) -> tuple[str, list[str], bool]:
    """(items of a set, items of sets whose complement is in it too, negated)."""
    if op is sre.LITERAL:
        return _escape(av), [], False
    if op is sre.NOT_LITERAL:
        return _escape(av), [], True
    classes = _classes(flags)
    items, complements, negated = [], [], False
    for kind, value in av:
        if kind is sre.NEGATE:
            negated = True
        elif kind is sre.LITERAL:
            items.append(_escape(value))
        elif kind is sre.RANGE:
            items.append(f"{_escape(value[0])}-{_escape(value[1])}")
        elif kind is sre.CATEGORY and value in classes:
            items.append(classes[value])
        elif kind is sre.CATEGORY and value in _NEGATED:
            complements.append(classes[_NEGATED[value]])
        else:
            raise Untranslatable(f"{kind} {value} in a set")
    return "".join(items), complements, negated


def _render(items: str, complements: list[str], negated: bool) -> str:
    if not complements:
        if not items:
            return _ANY_CHARACTER if negated else "(?!)"
        return f"[{'^' if negated else ''}{items}]"
    # x is in [A \W] when x is in A or not in \w; a negated one is the opposite.
    if negated:
        return ((f"(?![{items}])" if items else "")
                + "".join(f"(?=[{c}])" for c in complements) + _ANY_CHARACTER)
    either = ([f"(?=[{items}])"] if items else []) + [f"(?![{c}])" for c in complements]
    return f"(?:{'|'.join(either)}){_ANY_CHARACTER}"


def _classes(flags: int) -> dict[Any, str]:
    return _ASCII_CLASSES if flags & re.ASCII else _UNICODE_CLASSES


def _escape(code: int) -> str:
    character = chr(code)
    if character.isascii() and character.isalnum():
        return character
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _re_source(op: Any, av: Any) -> str:
    """The item in re's syntax again, to ask re what it matches."""
    if op is sre.LITERAL:
        return re.escape(chr(av))
    if op is sre.NOT_LITERAL:
        return "[^" + re.escape(chr(av)) + "]"
    parts = []
    for kind, value in av:
        if kind is sre.NEGATE:
            parts.append("^")
        elif kind is sre.LITERAL:
            parts.append(re.escape(chr(value)))
        elif kind is sre.RANGE:
            parts.append(f"{re.escape(chr(value[0]))}-{re.escape(chr(value[1]))}")
        else:
            parts.append(_RE_CATEGORIES[value])
    return "[" + "".join(parts) + "]"


@functools.lru_cache(maxsize=4096)
def _case_folded(text: str, source: str, flags: int) -> str:
    """``text`` (the item, case-sensitive) corrected to match what re matches with
    IGNORECASE: only cased characters can differ, and re is asked about each."""
    by_re = re.compile(source, flags)
    by_text = _regex().compile(text, _regex().VERSION0)
    added: list[int] = []
    removed: list[int] = []
    for code in _cased():
        character = chr(code)
        wanted, got = by_re.fullmatch(character) is not None, by_text.fullmatch(character) is not None
        if wanted != got:
            (added if wanted else removed).append(code)
    if removed:
        text = f"(?![{_ranges(removed)}]){text}"
    if added:
        text = f"(?:[{_ranges(added)}]|{text})"
    return text


@functools.cache
def _cased() -> tuple[int, ...]:
    """The characters that IGNORECASE may change anything for in re: those with a
    simple case mapping, what they map to, and re's extra pairs (_casefix)."""
    codes: set[int] = set()
    for code in range(0x110000):
        if _sre.unicode_iscased(code):
            codes.update((code, _sre.unicode_tolower(code)))
    for lower, extras in _casefix._EXTRA_CASES.items():  # pylint: disable=protected-access
        codes.update((lower, *extras))
    return tuple(sorted(codes))


def _ranges(codes: list[int]) -> str:
    return "".join(_escape(low) if low == high else f"{_escape(low)}-{_escape(high)}"
                   for low, high in _runs(sorted(codes)))


def _runs(codes: list[int]) -> Iterator[tuple[int, int]]:
    start = previous = codes[0]
    for code in codes[1:]:
        if code != previous + 1:
            yield start, previous
            start = code
        previous = code
    yield start, previous
