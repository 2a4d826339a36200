# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack_resource.py, which writes the state store on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack_resource
short_description: Mark a stack's resource unhealthy (or healthy again), as Heat's mark unhealthy
version_added: 0.1.0
description:
  - Records a resource of a stack as unhealthy, C(CHECK_FAILED) with O(reason)
    and an event, as Heat's C(openstack stack resource mark unhealthy) does. The
    next apply of the stack (M(hotplay.stacks.stack)) replaces it, even when the
    template and parameters did not change; its preview lists it under
    C(replaced).
  - With O(healthy=true), a resource marked unhealthy is recorded
    C(CHECK_COMPLETE) again and will not be replaced; any other resource is left
    as it is (no change).
  - A resource of a nested stack is named by its path from the top stack
    (C(group/0), C(group/0/server)). Its nested stack and the resources above
    it are marked too (C(CHECK_FAILED), as Heat's stack check marks them), so the
    next apply goes down to it; those parents are updated, not replaced. Marking
    a parent itself unhealthy replaces its whole nested stack, as in Heat.
  - The last part of O(resource) may also be the resource's physical id, as Heat
    allows.
  - Takes the stack's lock while it writes; a stack that another task is applying
    fails the task naming the holder.
  - Marking rewrites the resource's record, so a stack that keeps secrets needs the
    store key (O(store_key) or E(HOTPLAY_STORE_KEY)), as an apply does.
options:
  name:
    description:
      - Name of the stack. A stack that is not in the store fails the task with
        "The Stack (<name>) could not be found."
    type: str
    required: true
  resource:
    description:
      - The resource, by its path from the top stack, such as C(config) or
        C(group/0/server). A path the stack does not have fails the task, naming
        the resources it has at that level.
    type: str
    required: true
  healthy:
    description:
      - V(false) marks the resource unhealthy, V(true) marks it healthy again.
      - A deleted resource is never marked unhealthy (Heat leaves it alone).
    type: bool
    required: true
  reason:
    description:
      - Why, recorded as the resource's status reason and in its event.
      - Default Heat's C(state changed by resource_mark_unhealthy api).
    type: str
    default: ""
extends_documentation_fragment:
  - hotplay.stacks.store
  - hotplay.stacks.cloud.unused
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.actiongroup_stacks
  - hotplay.stacks.attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - In check mode nothing is written; C(changed) says whether the resource's
        health would change.
  diff_mode:
    support: none
  idempotent:
    support: full
    details:
      - Marking a resource unhealthy again with the same O(reason), or healthy
        when it is not marked unhealthy, reports no change.
seealso:
  - module: hotplay.stacks.stack
  - module: hotplay.stacks.stack_info
  - name: Heat's mark unhealthy
    description: The command this module follows.
    link: https://docs.openstack.org/python-openstackclient/latest/cli/plugin-commands/heat.html
requirements:
  - psycopg >= 3 (Python, on the controller), for a PostgreSQL O(store) only
  - cryptography (Python, on the controller), for a stack that keeps secrets (O(store_key))
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: Ask whether the app's files drifted from the stack
  hotplay.stacks.stack_info:
    name: app
    drift: true
    events: false
  register: app_info

- name: Mark every drifted resource unhealthy
  hotplay.stacks.stack_resource:
    name: app
    resource: "{{ item }}"
    healthy: false
    reason: changed outside the stack
  loop: "{{ app_info.drifted }}"

- name: The next apply replaces them
  hotplay.stacks.stack:
    name: app
    template: "{{ playbook_dir }}/templates/app.yaml"

- name: Take the mark off a member of a resource group
  hotplay.stacks.stack_resource:
    name: web
    resource: workers/1
    healthy: true
    reason: repaired by hand
"""

RETURN = r"""
resource:
  description:
    - The resource after this task, with the keys of the C(resources) result of
      M(hotplay.stacks.stack).
  returned: success
  type: dict
  sample:
    name: config
    type: Hotplay::Ansible::Module
    status: CHECK_FAILED
    status_reason: changed outside the stack
    physical_id: /srv/app/app.conf
events:
  description:
    - The event this task recorded for the resource (action C(CHECK), status
      C(FAILED) or C(COMPLETE)), empty when nothing changed; same keys as the
      C(events) result of M(hotplay.stacks.stack).
  returned: success
  type: list
  elements: dict
  sample:
    - resource_name: config
      action: CHECK
      status: FAILED
      reason: changed outside the stack
      physical_id: /srv/app/app.conf
      time: "2026-01-01T12:00:00Z"
msg:
  description: Why the task failed.
  returned: on failure
  type: str
  sample: "The Resource (conf) could not be found in stack app (its resources: config, service)."
"""
