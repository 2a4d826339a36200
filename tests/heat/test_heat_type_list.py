# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The list of Heat 27's resource types checked into the collection
(plugins/plugin_utils/resources/heat_types.py: what the refusal of a type not run here
and the count of native types read) is the real Heat engine's registry: the types its
global environment registers, hidden ones left out.  Skipped with one line without
the Heat peer's venv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from heat_peer import peer_venv

from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.heat_types import HEAT27_TYPES

LIST_TYPES = """
import json
from heat.engine import resources
resources.initialise()
print(json.dumps(sorted(resources.global_env().get_types(support_status=None))))
"""


def test_the_checked_in_list_is_heats_registry() -> None:
    venv = peer_venv()
    if venv is None:
        pytest.skip("the real Heat engine is not installed: `make heat-peer` installs it")
    shown = subprocess.run([str(Path(venv) / "bin" / "python"), "-c", LIST_TYPES], capture_output=True,
                           text=True, timeout=300, check=True)
    heats = set(json.loads(shown.stdout.strip().splitlines()[-1]))
    ours = {name for names in HEAT27_TYPES.values() for name in names}
    assert ours == heats, (sorted(heats - ours), sorted(ours - heats))
