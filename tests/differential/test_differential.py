# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A short differential run: generated cases through hotplay and through the real
Heat engine, compared (``make differential`` is the long run; see
docs/heat-differences.md).

The engine runs in-process for most cases (the action plugin's code path without
Ansible, for speed); a few go through real ``ansible-playbook`` and the installed
collection.  Heat is the team's peer folder (``../shared/peer/heat`` beside the clone,
or ``$HOTPLAY_HEAT_PEER``) with its venv (``make heat-peer``); without them this module
is skipped with one line.  ``HOTPLAY_HEAT_ENDPOINT`` names a Heat already running.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cases import generate  # noqa: E402
from heat_peer import HeatPeer, peer_folder, peer_venv  # noqa: E402
from run import run_cases  # noqa: E402
from sides import has_hooks  # noqa: E402

CASES = int(os.environ.get("HOTPLAY_DIFFERENTIAL_SHORT", "50"))
SEED = int(os.environ.get("HOTPLAY_DIFFERENTIAL_SEED", "17"))

if not os.environ.get("HOTPLAY_HEAT_ENDPOINT") and (peer_folder() is None or peer_venv() is None):
    pytest.skip("the Heat peer is not there: put the team's shared/ folder beside the clone (or set "
                "HOTPLAY_HEAT_PEER) and run make heat-peer", allow_module_level=True)

# One worker for the module: its module-scoped fixture starts once (tests/conftest.py).
pytestmark = pytest.mark.xdist_group("differential")


@pytest.fixture(scope="module")
def endpoint():
    named = os.environ.get("HOTPLAY_HEAT_ENDPOINT")
    if named:
        yield named
        return
    folder, venv = peer_folder(), peer_venv()
    assert folder is not None and venv is not None
    peer = HeatPeer.start(folder, venv)
    try:
        yield peer.endpoint
    finally:
        peer.stop()


def divergent(outcomes: list[dict]) -> list[str]:
    """The cases where hotplay and Heat disagree in a way docs/heat-differences.md
    does not list.  Which of several invalid resources or outputs Heat names depends
    on its hash seed (a Python set's order, drawn anew in each Heat process): run_cases
    asks hotplay again in Heat's order (recheck_order), and only the same answer then
    is forgiven (tester key resource-order); no other error text is."""
    return [json.dumps({k: o[k] for k in ("index", "side", "differences", "case", "hotplay", "heat")},
                       default=str)
            for o in outcomes if o["verdict"] == "diverged"]


def test_generated_cases_do_what_heat_does(endpoint):
    outcomes = run_cases(generate(CASES, SEED), endpoint)
    assert len(outcomes) == CASES
    found = divergent(outcomes)
    assert not found, "\n".join(found)


def test_a_sample_through_ansible_playbook_does_what_heat_does(endpoint):
    drawn = generate(40, SEED + 1)
    # Two cases, and one that stops at breakpoints in its update: the play clears
    # them with stack_hook and runs the stack task again, as an operator's does.
    cases = [case for case in drawn if not has_hooks(case)][:2] + [
        case for case in drawn if has_hooks(case) and case["mutation"] == "hooks"][:1]
    outcomes = run_cases(cases, endpoint, playbook_every=1)
    played = [o for o in outcomes if o["side"] == "ansible-playbook"]
    assert len(played) == 3
    # The playbook really ran: every case has its create step back from it.
    assert all(o["hotplay"] for o in played)
    assert played[2]["hotplay"][1]["pauses"], "the update did not stop at its hooks"
    found = divergent(outcomes)
    assert not found, "\n".join(found)
