# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack.py, which runs the stack engine on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack
short_description: Create, update or delete a Heat orchestration stack without a Heat service
version_added: 0.1.0
description:
  - Applies an OpenStack Heat Orchestration Template (HOT) with its environment files
    and parameters as a named stack, or deletes the stack.
  - The engine runs inside C(ansible-playbook) on the controller. It builds the
    resource dependency graph, runs independent resources in parallel and follows
    Heat's update rules for each resource (unchanged, update in place, replace or
    delete).
  - Every apply is recorded as a new revision in the state store (O(store)), with
    the stack's resources and events.
  - Re-running with the same template, environment files and parameters reports
    C(changed=false) and touches no resource.
  - Errors in the template, environment files or parameters fail the task before
    anything is created; the store then holds no trace of the run.
  - A stack that ends in a C(*_FAILED) status fails the task; the result still
    carries the stack's status, resources and events.
  - One line per resource action is shown as it happens.
  - A second apply of the same stack while one is running fails at once, naming
    the holder of the stack's lock.
options:
  name:
    description:
      - Name of the stack, unique within the store.
    type: str
    required: true
  state:
    description:
      - V(present) creates the stack, or updates it to the given template,
        environment files and parameters.
      - V(absent) deletes the stack's resources in reverse dependency order, then
        the stack. Resources whose C(deletion_policy) is C(Retain) are left in place and
        only forgotten. Deleting a stack that does not exist changes nothing.
    type: str
    choices: [present, absent]
    default: present
  template:
    description:
      - Path to the HOT template file on the controller. A relative path is
        looked up as Ansible looks up files (the role's files, then the playbook's
        directory).
      - Files that the template references (C(get_file), provider templates) are
        looked up relative to the template's directory.
      - Required when O(state=present).
    type: path
  environment:
    description:
      - Paths to Heat environment files on the controller, applied in order; later
        files override earlier ones, as with C(openstack stack create -e).
      - Relative paths are looked up as for O(template).
    type: list
    elements: path
    default: []
  parameters:
    description:
      - Values for the template's parameters. They override C(parameters) and
        C(parameter_defaults) from the environment files.
    type: dict
    default: {}
  nested_depth:
    description:
      - How many levels of nested stacks (for example C(OS::Heat::ResourceGroup)
        members or provider templates) to include in RV(resources) and RV(events).
      - V(0) reports only the top-level stack's resources and events.
      - A nested entry is named by its path from the top stack, such as
        C(group/0/server), and has a C(parent) key.
    type: int
    default: 0
extends_documentation_fragment:
  - hotplay.stacks.store
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.actiongroup_stacks
  - hotplay.stacks.attributes.controller
attributes:
  check_mode:
    support: none
    details:
      - An update preview in check mode is planned; until then the task is skipped
        in check mode.
  diff_mode:
    support: none
  idempotent:
    support: full
notes:
  - Resource types use Heat's names (C(OS::Heat::TestResource),
    C(OS::Heat::ResourceGroup), ...) with Heat's properties and attributes; types
    specific to this collection use the C(Hotplay::) prefix.
seealso:
  - module: hotplay.stacks.stack_info
  - name: Heat Orchestration Template (HOT) specification
    description: The template format this module applies.
    link: https://docs.openstack.org/heat/latest/template_guide/hot_spec.html
author:
  - hotplay.stacks contributors (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Create or update a stack from a template, an environment and parameters
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web_tier.yaml"
    environment:
      - "{{ playbook_dir }}/environments/production.yaml"
    parameters:
      server_count: 3
      flavor: m1.small
  register: web_stack

- name: Use an output of the stack
  ansible.builtin.debug:
    msg: "Stack {{ web_stack.stack_id }} is at revision {{ web_stack.revision }}: {{ web_stack.outputs }}"

- name: Apply a stack and report the members of its resource groups too
  hotplay.stacks.stack:
    name: workers
    template: "{{ playbook_dir }}/templates/workers.yaml"
    nested_depth: 2
  register: workers_stack

- name: Keep a stack's state in a chosen SQLite file for every stack task of a block
  module_defaults:
    group/hotplay.stacks.stacks:
      store: sqlite:////var/lib/hotplay/stacks.db
  block:
    - name: Apply the network stack
      hotplay.stacks.stack:
        name: network
        template: "{{ playbook_dir }}/templates/network.yaml"

    - name: Apply the database stack
      hotplay.stacks.stack:
        name: database
        template: "{{ playbook_dir }}/templates/database.yaml"

- name: Delete a stack (resources with deletion_policy Retain are kept)
  hotplay.stacks.stack:
    name: web
    state: absent
"""

RETURN = r"""
stack_id:
  description: Unique identifier of the stack, kept across updates.
  returned: when the stack exists or has just been deleted
  type: str
  sample: 8d6b5b1e-5c1f-4f7e-9a55-2f0b6d3c4a10
stack_status:
  description:
    - The stack's status in Heat's words, C(<ACTION>_<STATUS>), such as
      C(CREATE_COMPLETE), C(UPDATE_COMPLETE), C(UPDATE_FAILED) or C(DELETE_COMPLETE).
    - Not returned when the template, environment files or parameters failed
      validation.
  returned: when the stack exists or has just been deleted
  type: str
  sample: CREATE_COMPLETE
stack_status_reason:
  description: Why the stack is in its status, as Heat words it.
  returned: when the stack exists or has just been deleted
  type: str
  sample: Stack CREATE completed successfully
outputs:
  description:
    - The template's outputs, name to value. Every output of the template is a key.
    - An output whose C(condition) is false, or that could not be resolved, has
      the value V(null); an unresolved one is also listed in RV(output_errors).
  returned: when the stack exists
  type: dict
  sample: {"url": "http://192.0.2.10/", "server_names": ["web-0", "web-1"]}
output_errors:
  description: Outputs that could not be resolved, output name to error message.
  returned: when the stack exists
  type: dict
  sample: {"admin_url": "The Referenced Attribute (lb admin_address) is incorrect."}
resources:
  description:
    - The stack's resources, with nested ones down to O(nested_depth), each
      nested one after its parent.
    - Empty when the task failed before the stack existed.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description:
        - Name of the resource; for a nested resource, its path from the top stack.
      type: str
      returned: always
      sample: group/0/server
    type:
      description: Resource type.
      type: str
      returned: always
      sample: OS::Heat::TestResource
    status:
      description: The resource's status in Heat's words.
      type: str
      returned: always
      sample: CREATE_COMPLETE
    status_reason:
      description: Why the resource is in its status.
      type: str
      returned: always
      sample: state changed
    physical_id:
      description: Identifier of the real resource, empty before it is created.
      type: str
      returned: always
      sample: 3f1c2a64-1d0e-4a43-b1de-6a1f1c7e2b90
    parent:
      description: Path of the resource that owns the nested stack holding this one.
      type: str
      returned: for nested resources only
      sample: group/0
events:
  description:
    - The events produced by this task run, in the order they happened, with
      nested ones down to O(nested_depth).
    - Events about the stack itself use the stack's name as C(resource_name).
    - Empty when the task failed before the stack existed.
  returned: always
  type: list
  elements: dict
  contains:
    resource_name:
      description: Name or nested path of the resource, or the stack's name.
      type: str
      returned: always
      sample: server
    parent:
      description: Path of the resource that owns the nested stack of this event.
      type: str
      returned: for events of nested resources only
      sample: group/0
    action:
      description: The action, such as C(CREATE), C(UPDATE), C(DELETE).
      type: str
      returned: always
      sample: CREATE
    status:
      description: C(IN_PROGRESS), C(COMPLETE) or C(FAILED).
      type: str
      returned: always
      sample: COMPLETE
    reason:
      description: Reason of the event.
      type: str
      returned: always
      sample: state changed
    time:
      description: When the event happened, an ISO 8601 timestamp in UTC.
      type: str
      returned: always
      sample: "2026-01-01T12:00:00Z"
parameters:
  description:
    - The parameter values the stack was applied with, after defaults and
      environment files; values of C(hidden) parameters are shown as C(******).
    - Empty when the task failed before the stack existed.
  returned: always
  type: dict
  sample: {"server_count": 3, "flavor": "m1.small", "db_password": "******"}
revision:
  description: Number of the stack's revision recorded by this run (or the current one when nothing changed).
  returned: when the stack exists
  type: int
  sample: 4
"""
