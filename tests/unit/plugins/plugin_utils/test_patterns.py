# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""allowed_pattern with the regex package (patterns.py) answers as Heat's
``re.match(pattern, value)`` reaching the end, where the two libraries differ too."""

from __future__ import annotations

import re
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.parameters import patterns


def heat(pattern: str, value: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # re's "possible nested set"
        match = re.match(pattern, value)
    return match is not None and match.end() == len(value)


def ours(pattern: str, value: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return patterns.full_match(pattern, value)


# Each reads differently to regex (its own syntax, or Unicode and case rules) than to re.
DIFFERENCES = [
    ("[[:alpha:]]+", ["abc", "a]", "[]"]),  # a POSIX class to regex; a set and "]" to re
    ("a{e<=1}", ["a{e<=1}", "b", "a"]),  # fuzzy matching to regex; text to re
    ("(?:abc){e<=1}", ["abd", "abc{e<=1}"]),
    ("[[a]]", ["a]", "[]", "a"]),
    (r"\w+", ["e\u0301", "a\u200d", "\u00b2", "\u2160"]),  # combining marks are \w to regex
    (r"\s", ["\x1c", "\x1f", " "]),  # isspace(), which re uses, has the separators
    (r"(?i)\u0130", ["i", "I", "\u0131"]),  # re's case rules
    (r"(?i)k", ["\u212a", "K"]),
    (r"(?i)[a-z]+", ["\u212a\u017f", "\u0130"]),
    (r"(?i)[^a]", ["A", "b"]),
    (r"(?i)(a)\1", ["aA", "ab"]),  # matched by re in a helper
    (r"\B", [""]),  # re 3.12: never on an empty text
    (r"[^\W\d]+", ["ab", "a1", "_"]),
    (r"[\W_]", ["_", "a", "!"]),
    (r"(?a)\w+", ["\u00e9", "abc"]),
    (r"(?m)a$\n^b", ["a\nb"]),
    (r"a$", ["a\n", "a"]),
    (".", ["\n"]),
    (r"(?s).", ["\n"]),
    (r"(a)(?(1)b|c)", ["ab", "c"]),
    (r"a++b", ["aab"]),
]


@pytest.mark.parametrize("pattern, values", DIFFERENCES, ids=[case[0] for case in DIFFERENCES])
def test_patterns_that_regex_reads_otherwise_answer_as_re(pattern: str, values: list[str]) -> None:
    for value in values:
        assert ours(pattern, value) == heat(pattern, value), value


TOKENS = ["a", "b", "K", "\u212a", "\u00df", "\u00e9", "_", "1", r"\w", r"\W", r"\d", r"\D", r"\s",
          r"\S", r"\b", r"\B", ".", "^", "$", r"\A", r"\Z", "[a-z]", "[^a]", r"[\W_]", r"[^\W\d]",
          "[[:alpha:]]", "(", ")", "(?:", "(?i)", "(?i:", "(?s:", "(?m:", "(?a:", "|", "*", "+", "?",
          "{2}", "{1,3}", "{e<=1}", "*?", "++", "(?=", "(?!", "(?<=a)", "(?>", r"\1", "(?(1)a|b)",
          "\n", " ", "\x1c", "-", "]", "["]
CHARACTERS = "abAKk\u212a\u00df\u00e9_1 \n\x1c-]\u0130\u0131\u017f!\u0301\u00b2"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=7).map("".join),
       st.lists(st.text(CHARACTERS, max_size=6), min_size=1, max_size=4))
def test_any_pattern_re_accepts_answers_as_re(pattern: str, values: list[str]) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            re.compile(pattern)
    except (re.error, OverflowError):
        return
    for value in values:
        assert ours(pattern, value) == heat(pattern, value), (pattern, value)


@pytest.mark.parametrize("pattern", [
    "(a{1000}){1000}", "(?:(?:a{1000}){1000}){1000}", "(a{65535}){65535}", "a{4294967294}",
    "(x|y{1000}){1000}",
])
def test_a_pattern_regex_would_unroll_at_compile_is_matched_by_re_in_a_helper(pattern: str) -> None:
    # regex.compile takes 275 MiB for the first and dies for the others; re nothing.
    started = time.monotonic()
    assert patterns.compiled_pattern(pattern) is None
    assert ours(pattern, "aaa") is heat(pattern, "aaa")
    assert time.monotonic() - started < 60


def test_a_pattern_within_the_units_is_compiled_in_process() -> None:
    assert patterns.compiled_pattern("[0-9a-f]{64}|(?:[a-z]{1,63}\\.){1,8}[a-z]{2,}") is not None


def test_a_pattern_re_refuses_says_so_in_res_words() -> None:
    with pytest.raises(re.error, match="unterminated character set"):
        patterns.full_match("[a-", "a")
    with pytest.raises(re.error, match="bad escape"):
        patterns.full_match(r"\p{L}", "a")  # a property to regex, an error to re
