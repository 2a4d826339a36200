# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The long test-infrastructure scripts end through their clean-up when stopped: a
SIGTERM, or a SIGINT to a script a shell started in the background, runs their
``finally`` blocks; a Heat peer that fails (or is stopped) while starting is stopped."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "differential"))

from heat_peer import HeatPeer  # noqa: E402

SCRIPT = """\
import sys, time
sys.path.insert(0, sys.argv[1])
from clean_stop import stop_cleanly_on_signals
stop_cleanly_on_signals()
try:
    print("ready", flush=True)
    time.sleep(60)
finally:
    open(sys.argv[2], "w").write("cleaned up")
"""


def ignore_sigint() -> None:
    """As a non-interactive shell does for the jobs it starts with ``&``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_script_runs_its_clean_up(tmp_path: Path, signum: signal.Signals) -> None:
    marker = tmp_path / "marker"
    with subprocess.Popen([sys.executable, "-c", SCRIPT, str(TESTS), str(marker)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=ignore_sigint) as script:
        assert script.stdout is not None and script.stdout.readline() == "ready\n"
        script.send_signal(signum)
        _out, err = script.communicate(timeout=30)
    assert script.returncode == 1
    assert f"stopped by {signum.name}" in err
    assert marker.read_text() == "cleaned up"


def test_a_peer_that_fails_to_start_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in peer folder (no Heat is needed to check the tester's own clean-up):
    its start.sh fails after starting something; its stop.sh must then run."""
    peer, stopped = tmp_path / "peer", tmp_path / "stopped"
    (peer / "etc").mkdir(parents=True)
    (peer / "etc" / "api-paste.ini").write_text("")
    (peer / "heat_standalone.py").write_text("")
    (peer / "start.sh").write_text("#!/bin/sh\necho 'database up, engine refused' >&2\nexit 1\n")
    (peer / "stop.sh").write_text(f"#!/bin/sh\necho \"$HEAT_STATE\" > {stopped}\n")
    for script in ("start.sh", "stop.sh"):
        (peer / script).chmod(0o755)
    state = tmp_path / "state"
    monkeypatch.delenv("HEAT_PORT", raising=False)

    with pytest.raises(RuntimeError, match="database up, engine refused"):
        HeatPeer.start(peer, tmp_path / "venv", state)

    assert stopped.read_text().strip() == str(state)
    assert not Path(f"{state}-peer").exists()  # the runnable copy is gone too
