# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options a play sets once for the action group (``module_defaults:
group/hotplay.stacks.stacks``) are accepted by every action of the group: Ansible
gives the group's defaults to each of its actions, and an action that does not
know one fails with ``Unsupported parameters``."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml

RUNTIME = Path(__file__).resolve().parents[3] / "meta" / "runtime.yml"
GROUP = yaml.safe_load(RUNTIME.read_text())["action_groups"]["stacks"]


@pytest.mark.parametrize("action", GROUP)
@pytest.mark.parametrize("option", ["store", "store_key", "cloud"])
def test_every_action_of_the_group_accepts_the_groups_options(action: str, option: str) -> None:
    spec = importlib.import_module(f"ansible_collections.hotplay.stacks.plugins.action.{action}").ARGUMENT_SPEC
    assert option in spec
