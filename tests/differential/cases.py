# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Draw cases from the strategies: Hypothesis's generation phase only (no shrinking,
no example database), seeded, so a run can be repeated case for case."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings

from strategies import cases


def generate(count: int, seed_value: int) -> list[dict[str, Any]]:
    drawn: dict[str, dict[str, Any]] = {}  # by its JSON text: Hypothesis repeats itself

    @seed(seed_value)
    @settings(max_examples=count * 3, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(cases())
    def collect(case: dict[str, Any]) -> None:
        text = json.dumps(case, sort_keys=True)
        drawn.setdefault(text, json.loads(text))
        if len(drawn) >= count:
            raise Enough  # stops the run: generation is the slow part of a big one

    try:
        collect()
    except Enough:
        pass
    return list(drawn.values())[:count]


class Enough(Exception):
    """Enough cases are drawn."""
