# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack_hook.py, which reads and writes the state store on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack_hook
short_description: List, clear or step the breakpoints (Heat's hooks) a stack run stopped at
version_added: 0.1.0
description:
  - A run of M(hotplay.stacks.stack) stops at a breakpoint (a hook, in Heat's
    words) set by the environment's C(resource_registry) or by the task's
    O(hotplay.stacks.stack#module:breakpoints) option. It records the hook as
    pending, lets every branch that does not depend on the hooked resource
    finish, and returns with the stack C(*_IN_PROGRESS) and
    RV(hotplay.stacks.stack#module:hooks_pending).
  - This module lists those pending hooks, clears them, or clears them and steps
    through the rest of the run one resource at a time. It does not run the
    stack; running the same M(hotplay.stacks.stack) task again (same template,
    environment files and parameters) carries on past the cleared hooks, in the
    same revision, without redoing what is done. A task waiting with
    O(hotplay.stacks.stack#module:wait_for_hooks) goes on by itself once every
    pending hook is cleared.
  - It does not take the stack's lock, so it can clear hooks while another task
    or job waits for them.
  - Unlike Heat's C(openstack stack hook clear), which clears only C(pre-*)
    hooks, this module clears C(post-*) hooks too.
  - See C(docs/breakpoints.md) in the collection for the hook points, stepping,
    and an AWX workflow with an approval node.
options:
  name:
    description:
      - Name of the stack. A stack that is not in the store fails the task with
        "The Stack (<name>) could not be found."
    type: str
    required: true
  action:
    description:
      - V(list) returns the pending hooks and changes nothing.
      - V(clear) clears the pending hooks that match O(resource) and O(hook); the
        next run of the stack goes past them. It also turns stepping off (see
        V(step)), whatever it matched.
      - V(step) clears as V(clear) does and turns stepping on; the stack's next
        runs then pause before each resource that is about to be created, updated
        or deleted (a C(pre-create), C(pre-update) or C(pre-delete) hook on every
        resource), so that each run moves one step further. Stepping stays on,
        for later runs and later updates of the stack too, until a V(clear).
    type: str
    choices: [list, clear, step]
    default: list
  resource:
    description:
      - Which hooks, by the path of their resource from the top stack (C(server),
        C(group/0/server) inside nested stacks, C(group/1) for a
        C(OS::Heat::ResourceGroup) member).
      - A shell-style pattern, as Python's C(fnmatch), case-sensitive, matched
        against the whole path; C(*) also matches C(/), so C(group/*) matches
        C(group/1) and C(group/0/server).
      - The default V(*) matches every hook.
    type: str
    default: "*"
  hook:
    description:
      - Which kinds of hook; an empty list, the default, means all six.
    type: list
    elements: str
    choices: [pre-create, pre-update, pre-delete, post-create, post-update, post-delete]
    default: []
extends_documentation_fragment:
  - hotplay.stacks.store
  - hotplay.stacks.cloud.unused
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.actiongroup_stacks
  - hotplay.stacks.attributes.controller
attributes:
  check_mode:
    support: partial
    details:
      - In check mode nothing is written; RV(hooks) lists the pending hooks that
        O(action=clear) or O(action=step) would clear.
      - The task reports C(changed=false) in check mode, even when it would clear
        hooks.
  diff_mode:
    support: none
  idempotent:
    support: partial
    details:
      - A second V(clear) with the same options finds nothing to clear and reports
        no change.
      - V(step) reports C(changed=true) every time.
notes:
  - Clearing a hook records Heat's event C(Hook <hook> is cleared) on the
    resource, which keeps its status.
  - A pending hook belongs to the revision that stopped at it. Once cleared, it no
    longer stops that revision; a new revision (a different definition, after the
    paused one has completed) stops at its breakpoints again.
seealso:
  - module: hotplay.stacks.stack
  - module: hotplay.stacks.stack_info
  - module: hotplay.stacks.stack_rollback
  - name: Heat environment, hooks (breakpoints)
    description: Heat's description of hooks in the environment's resource_registry.
    link: https://docs.openstack.org/heat/latest/template_guide/environment.html
requirements:
  - psycopg >= 3 (Python, on the controller), for a PostgreSQL O(store) only
  - cryptography (Python, on the controller), for a stack that keeps secrets (O(store_key))
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: List the hooks the web stack is stopped at
  hotplay.stacks.stack_hook:
    name: web
  register: web_hooks

- name: Show them
  ansible.builtin.debug:
    msg: "{{ web_hooks.hooks_pending | map(attribute='resource') | list }}"

- name: Let the database be created (clear its pre-create hook)
  hotplay.stacks.stack_hook:
    name: web
    action: clear
    resource: database
    hook:
      - pre-create

- name: Clear every hook of the members of a resource group
  hotplay.stacks.stack_hook:
    name: web
    action: clear
    resource: "workers/*"

# The same stack task as the one that paused: it goes on past the cleared hooks.
- name: Resume the run
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    breakpoints:
      - resource: database
        hook: [pre-create]
  register: web_stack

- name: Clear all hooks and stop before each resource from now on
  hotplay.stacks.stack_hook:
    name: web
    action: step

- name: Stop stepping, and clear what is pending
  hotplay.stacks.stack_hook:
    name: web
    action: clear
"""

RETURN = r"""
hooks:
  description:
    - With O(action=clear) or O(action=step), the hooks this task cleared (in check
      mode, those it would clear).
    - With O(action=list), the pending hooks that match O(resource) and O(hook).
  returned: success
  type: list
  elements: dict
  contains:
    resource:
      description: Path of the resource from the top stack.
      type: str
      returned: always
      sample: database
    hook:
      description: The hook, such as C(pre-create).
      type: str
      returned: always
      sample: pre-create
  sample:
    - resource: database
      hook: pre-create
hooks_pending:
  description:
    - Every hook of the stack (nested stacks included) still pending after this
      task, with the keys of RV(hooks), whatever O(resource) and O(hook) say.
  returned: success
  type: list
  elements: dict
  sample:
    - resource: workers/1
      hook: post-create
msg:
  description: Why the task failed, such as C(The Stack (web) could not be found.)
  returned: on failure
  type: str
  sample: The Stack (web) could not be found.
"""
