# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/heat_stacks.py, which talks to Heat from the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: heat_stacks
short_description: List a running Heat's stacks, and abandon stacks there
version_added: 0.1.0
description:
  - Lists the stacks of the project of O(cloud) in its OpenStack Heat (top-level
    stacks, as C(openstack stack list)).
  - With O(abandon), Heat abandons those stacks, as C(openstack stack abandon)
    does. Heat forgets each of them and deletes none of its resources; its
    abandon data (every resource with its physical id) is kept in O(dest). Heat
    needs C(enable_stack_abandon = true) in heat.conf.
  - Abandon a stack in Heat only once it is adopted (M(hotplay.stacks.stack_adopt));
    the playbook C(hotplay.stacks.migrate_from_heat) does both, in that order.
options:
  cloud:
    description:
      - The C(clouds.yaml) entry of the cloud (openstacksdk on the controller).
    type: str
    required: true
  abandon:
    description:
      - Names of stacks for Heat to abandon. A name Heat does not have fails the
        task before any stack is abandoned.
    type: list
    elements: str
    default: []
  dest:
    description:
      - Folder on the controller for each abandoned stack's abandon data,
        C(<name>.json), what C(openstack stack adopt) needs to take it back, as a
        new file of mode 0600 renamed over any file of that name. Required with O(abandon).
    type: path
extends_documentation_fragment:
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - In check mode the stacks are listed and nothing is abandoned.
  diff_mode:
    support: none
  idempotent:
    support: none
    details:
      - A stack abandoned already is no longer Heat's; naming it again fails the task.
requirements:
  - openstacksdk
seealso:
  - module: hotplay.stacks.stack_info
  - module: hotplay.stacks.stack_adopt
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: The stacks Heat runs
  hotplay.stacks.heat_stacks:
    cloud: production
  register: heat

- name: Heat forgets web (after it was adopted), keeping its resources
  hotplay.stacks.heat_stacks:
    cloud: production
    abandon: [web]
    dest: "{{ playbook_dir }}/heat-abandoned"
"""

RETURN = r"""
stacks:
  description: The project's stacks in Heat before anything was abandoned.
  returned: success
  type: list
  elements: dict
  sample:
    - name: web
      id: 5a0e5e8e-7d0a-4c65-9f6c-62a0e3b2c001
      stack_status: CREATE_COMPLETE
abandoned:
  description: The stacks Heat abandoned (none in check mode).
  returned: success
  type: list
  elements: str
  sample: [web, database]
abandon_files:
  description: The files written with each abandoned stack's abandon data.
  returned: success
  type: list
  elements: str
  sample: [/srv/heat-abandon/web.json, /srv/heat-abandon/database.json]
"""
