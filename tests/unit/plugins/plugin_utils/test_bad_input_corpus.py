# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every case of the bad-input corpus (tests/corpus) ends in one clear error.

Each case runs through ``engine.apply_stack`` as the stack action plugin calls it,
with a real SQLite store, in a forked child with a limited address space and a
hard time cap.  It must end in exactly one HotplayError whose text starts with the
file, names the place in it and says what was expected; no other exception; no
row in any table of the store; no hidden value in the message.
"""

from __future__ import annotations

import filecmp
import os
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

CORPUS_DIR = Path(__file__).resolve().parents[3] / "corpus"
sys.path.insert(0, str(CORPUS_DIR))

# pylint: disable=wrong-import-position
import bad_input_corpus as corpus  # noqa: E402
import generate  # noqa: E402

CASES = corpus.load_cases()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return corpus.copy_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_ends_in_one_clear_error(case: corpus.Case, root: Path, tmp_path: Path) -> None:
    corpus.materialize(case, root)
    store = tmp_path / "store.db"
    outcome = corpus.run_isolated(case, root, store)
    found = corpus.problems(case, root, outcome, corpus.store_rows(store))
    assert not found, "\n".join(found)


def test_the_corpus_covers_every_kind_of_bad_input() -> None:
    kinds = Counter(case.id.removeprefix("generated-").split("-")[0] for case in CASES)
    assert len(CASES) >= 200
    for kind in ("yaml", "utf8", "version", "resource", "param", "value", "hidden", "fn",
                 "function", "condition", "cycle", "provider", "env", "confine", "limit"):
        assert kinds[kind] >= 2, f"no {kind} cases: {kinds}"


def test_generated_cases_are_what_the_generator_writes(tmp_path: Path) -> None:
    generate.write(tmp_path)
    committed = corpus.CORPUS / "generated"
    comparison = filecmp.dircmp(tmp_path, committed)
    assert not (comparison.left_only or comparison.right_only or comparison.diff_files), (
        "run tests/corpus/generate.py and commit its output")


def test_every_expected_file_exists() -> None:
    made = {name for case in CASES for name in (*case.synthesized, *case.symlinks, *case.fifos)}
    for case in CASES:
        for name in (case.template, *case.environment):
            if name not in made and "not_there" not in name:
                assert (corpus.CORPUS / name).is_file(), f"{case.id}: {name}"


# -- the harness itself can fail ----------------------------------------------------------


def _sleeps(case: corpus.Case, root: Path, store: Path) -> corpus.Outcome:
    time.sleep(60)
    return corpus.Outcome("error", "", "")


def _allocates(case: corpus.Case, root: Path, store: Path) -> corpus.Outcome:
    hoard = [bytearray(64 * 1024 * 1024) for _chunk in range(64)]  # 4 GiB
    return corpus.Outcome("error", "", str(len(hoard)))


def test_a_hang_is_reported_not_waited_for(root: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    outcome = corpus.run_isolated(CASES[0], root, tmp_path / "s.db", cap=1, runner=_sleeps)
    assert outcome.kind == "hang" and time.monotonic() - started < 30


def test_memory_beyond_the_budget_fails_the_case(root: Path, tmp_path: Path) -> None:
    outcome = corpus.run_isolated(CASES[0], root, tmp_path / "s.db", runner=_allocates)
    assert outcome.kind == "exception" and outcome.type == "MemoryError", outcome.describe()


def test_a_valid_template_is_not_taken_for_an_error(root: Path, tmp_path: Path) -> None:
    valid = tmp_path / "valid.yaml"
    valid.write_text("heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::None}\n")
    case = corpus.Case(id="valid", template=os.path.relpath(valid, root), message="", file="",
                       path=None)
    outcome = corpus.run_isolated(case, root, tmp_path / "s.db")
    assert outcome.kind == "result" and "CREATE_COMPLETE" in outcome.text, outcome.describe()
    assert corpus.problems(case, root, outcome, corpus.store_rows(tmp_path / "s.db"))
