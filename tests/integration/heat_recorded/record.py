# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Records the abandon data of this folder with the real Heat engine (the peer).

    .venv/bin/python tests/integration/heat_recorded/record.py http://127.0.0.1:PORT/v1/admin

The Heat must have ``enable_stack_abandon`` (tests/heat/heat-adopt.conf).  Each
``<name>.yaml`` listed below is created with its parameters, then abandoned; Heat's
answer is written to ``<name>.abandon.json``, as ``openstack stack abandon`` writes it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "differential"))
from heat_peer import HeatClient  # noqa: E402  (tests/differential)

RECORDINGS = {"adopt_group_of_n": ("moved", {"n": 2})}


def record(endpoint: str) -> None:
    heat = HeatClient(endpoint)
    for name, (stack, parameters) in RECORDINGS.items():
        template = (HERE / f"{name}.yaml").read_text(encoding="utf-8")
        stack_id = heat.create(stack, {"template": template, "parameters": parameters})
        status = heat.wait(stack, stack_id, "CREATE")["stack_status"]
        if status != "CREATE_COMPLETE":
            raise SystemExit(f"{name}: Heat says {status}")
        data = heat.call("DELETE", f"/stacks/{stack}/{stack_id}/abandon")
        (HERE / f"{name}.abandon.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n",
                                                   encoding="utf-8")


if __name__ == "__main__":
    record(sys.argv[1])
