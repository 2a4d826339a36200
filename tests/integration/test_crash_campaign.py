# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The crash campaign, reduced for CI: a few SIGKILLed runs of each operation
(``HOTPLAY_CRASH_TRIALS``, default 2; seeds from ``HOTPLAY_CRASH_SEED`` or the
clock, printed in any failure), and a few applies under a job of schema version 2
(``oldschema``).  The full campaign, with the slower ``frozen`` and ``worker``
operations: ``bash scripts/crash_campaign.sh``."""

from __future__ import annotations

import os
import sqlite3
import time

import pytest

from crash_campaign import CI_OPERATIONS, Campaign, run_campaign


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> Campaign:
    """How long each operation takes unkilled, measured once per worker for every
    operation's trials (where their kills land is drawn from these figures)."""
    campaign = Campaign(tmp_path_factory.mktemp("calibration"), report=lambda _line: None)
    campaign.calibrate(CI_OPERATIONS)
    return campaign


@pytest.mark.slow
@pytest.mark.parametrize("operation", CI_OPERATIONS)
def test_killed_runs_leave_a_store_that_resumes_with_nothing_untracked(operation, tmp_path, calibrated):
    trials = int(os.environ.get("HOTPLAY_CRASH_TRIALS", "2"))
    seed = int(os.environ.get("HOTPLAY_CRASH_SEED", str(int(time.time()) % 100000)))
    lines: list[str] = []
    results = run_campaign(trials, (operation,), seed, tmp_path, lines.append, calibrated=calibrated)
    assert len(results) == trials
    failed = [t for t in results if t.problems]
    assert not failed, "\n".join(lines) + f"\nreplay: python tests/integration/crash_campaign.py --only {operation}:SEED"


def test_the_checks_find_orphans_ghosts_and_wrong_files(tmp_path):
    """The campaign's checks are not blind: an unrecorded file is an orphan, a
    complete record of a missing file a ghost, and a stale file a wrong state."""
    from crash_campaign import Trial, Workspace, state_problems, tracking_problems

    workspace = Workspace(tmp_path / "w")
    with sqlite3.connect(workspace.store) as db:
        db.executescript(
            "CREATE TABLE stacks (id TEXT, deleted INTEGER);"
            "CREATE TABLE resources (stack_id TEXT, type TEXT, action TEXT, status TEXT,"
            " physical_id TEXT, retired_in INTEGER);"
            "INSERT INTO stacks VALUES ('s', 0);")
        db.execute("INSERT INTO resources VALUES ('s', 'Hotplay::Local::File', 'CREATE', 'COMPLETE', ?, 0)",
                   (str(workspace.files / "gone"),))
    (workspace.files / "stray").write_text("x")
    trial = Trial("create", 0)
    problems = tracking_problems(workspace, trial)
    assert (trial.orphans, trial.ghosts) == (1, 1), problems
    assert any("stray" in p for p in problems) and any("gone" in p for p in problems)
    assert state_problems(workspace, None) == ["left behind after delete: ['stray']"]
