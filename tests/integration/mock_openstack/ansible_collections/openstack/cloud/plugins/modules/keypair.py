# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MOCK openstack.cloud.keypair for hotplay.stacks' tests (see module_utils/mock_cloud.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: keypair
short_description: MOCK of openstack.cloud.keypair for tests
description: [A pretend cloud; see module_utils/mock_cloud.py.]
options:
  state: {type: str, choices: [present, absent], default: present, description: [present or absent]}
author: [hotplay.stacks tests]
"""

from ansible_collections.openstack.cloud.plugins.module_utils.mock_cloud import run

if __name__ == "__main__":
    run("keypair")
