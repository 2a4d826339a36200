# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The crash campaign, reduced for CI: a few SIGKILLed runs of each operation
(``HOTPLAY_CRASH_TRIALS``, default 2; seeds from ``HOTPLAY_CRASH_SEED`` or the
clock, printed in any failure).  The full campaign: ``bash scripts/crash_campaign.sh``."""

from __future__ import annotations

import os
import time

import pytest

from crash_campaign import OPERATIONS, run_campaign


@pytest.mark.parametrize("operation", OPERATIONS)
def test_killed_runs_leave_a_store_that_resumes_with_nothing_untracked(operation, tmp_path):
    trials = int(os.environ.get("HOTPLAY_CRASH_TRIALS", "2"))
    seed = int(os.environ.get("HOTPLAY_CRASH_SEED", str(int(time.time()) % 100000)))
    lines: list[str] = []
    results = run_campaign(trials, (operation,), seed, tmp_path, lines.append)
    assert len(results) == trials
    failed = [t for t in results if t.problems]
    assert not failed, "\n".join(lines) + f"\nreplay: python tests/integration/crash_campaign.py --only {operation}:SEED"
