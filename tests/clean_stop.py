# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Long test-infrastructure scripts (the stress campaign, the differential tester) end
through their clean-up when stopped: what they started (a throwaway PostgreSQL, SSH
hosts' namespaces, CPU hogs, a Heat peer and its MariaDB) must not outlive them."""
from __future__ import annotations

import signal
from typing import Any


def stop_cleanly_on_signals() -> None:
    """SIGTERM, and SIGINT even when a shell started the script in the background
    (which ignores SIGINT for it), raise SystemExit: ``finally`` blocks and context
    managers run as they do on a normal exit."""
    def stop(signum: int, _frame: Any) -> None:
        raise SystemExit(f"stopped by {signal.Signals(signum).name}")

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
