# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""MOCK openstack.cloud.networks_info for hotplay.stacks' tests (see module_utils/mock_cloud.py)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: networks_info
short_description: MOCK of openstack.cloud.networks_info for tests
description: [A pretend cloud; see module_utils/mock_cloud.py.]
options:
  name: {type: str, description: [a name or id]}
author: [hotplay.stacks tests]
"""

from ansible_collections.openstack.cloud.plugins.module_utils.mock_cloud import run

if __name__ == "__main__":
    run("networks_info")
