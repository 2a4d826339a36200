# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The O(cloud) option of the collection's own OpenStack modules (module_utils/_openstack.py)."""

from __future__ import annotations


class ModuleDocFragment:
    """Documentation of the C(cloud) option and openstacksdk requirement."""

    DOCUMENTATION = r"""
options:
  cloud:
    description:
      - The C(clouds.yaml) entry to use. Not given, openstacksdk's defaults
        (E(OS_CLOUD), E(OS_*) variables).
    type: str
requirements:
  - openstacksdk
"""
