# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack_adopt.py, which writes the state store on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack_adopt
short_description: Adopt a stack of a running OpenStack Heat, its resources kept
version_added: 0.1.0
description:
  - Records a stack that a running Heat manages as a new stack of the store, as
    Heat's C(openstack stack adopt) does; as revision 1, status C(ADOPT_COMPLETE),
    every resource with the physical id Heat has and the values Heat generated
    (an C(OS::Heat::RandomString)'s string, a C(OS::Heat::TestResource)'s value),
    nested stacks (provider templates, C(OS::Heat::Stack), C(OS::Heat::ResourceGroup)
    members by their names) to any depth. Nothing is created or changed in the cloud.
  - The stack comes from Heat's abandon data, read from O(abandon_file) (what
    C(openstack stack abandon) or C(openstack stack export) writes) or fetched from
    the cloud O(cloud) (Heat's C(stack export) API, with C(enable_stack_abandon = true)
    in heat.conf). Heat keeps managing the stack; abandon it there afterwards
    (the playbook C(hotplay.stacks.migrate_from_heat) does) so that only one of
    them acts on it.
  - Resources are matched by name with the template's, at every level. A stack
    whose template and Heat's resources do not match, a resource Heat never
    created (no physical id), or a resource of a type this collection cannot
    manage (anything but C(OS::Heat::None), C(Value), C(RandomString),
    C(TestResource), the software configs C(SoftwareConfig), C(StructuredConfig),
    C(CloudConfig) and C(MultipartMime), provider templates, C(OS::Heat::Stack),
    C(OS::Heat::ResourceGroup) and C(ResourceChain), and the native OpenStack types
    C(OS::Nova::*), C(OS::Neutron::*), C(OS::Cinder::*), C(OS::Glance::WebImage))
    refuses the adoption with one message naming them, and nothing is written to the
    store, unless O(unmanaged=read_only).
  - A resource of a native OpenStack type (no O(environment) maps its type) is
    adopted as Heat adopts it, with Heat's physical id and resource data (a
    volume's type, a server's internal ports, a key pair's saved private key, kept
    secret); the cloud is not asked whether it exists, as in Heat. Its attributes,
    and its name when the template gives none, are read from O(cloud) when needed;
    updates in place and deletes act on the same physical resource.
  - A resource of one of Heat's types that O(environment) maps to a provider
    template (the shipped C(hotplay.stacks.openstack) maps C(OS::Nova::Server),
    C(OS::Neutron::*), C(OS::Cinder::Volume) and the others to theirs) is adopted
    into that template; the server, network, volume ... Heat made is read from the
    cloud by its id. Each C(Hotplay::Ansible::Module) resource of the template runs
    its module in check mode first, and a module that would change the real thing
    refuses the adoption, naming it and what differs; then the module runs to return
    the thing's attributes, changing nothing. A module that cannot say in check mode
    whether it would change the thing (no check mode) is never run for real; its
    resource is recorded as the template says, with Heat's id and no attributes.
    Modules run only from the O(template) and O(environment) the task gives, never
    from the abandon data's own template, environment or files. The names of servers, networks,
    subnets, ports, routers, security groups and volumes are read through
    openstacksdk from O(cloud) (also with O(abandon_file)), since the templates find
    what they manage by name.
  - The adoption is run first in a scratch store, then copied into the store in
    one verified transaction.
  - After the adoption, M(hotplay.stacks.stack) with the same O(template),
    O(environment) and O(parameters) changes nothing; a changed template updates
    or replaces the adopted resources as Heat would. M(hotplay.stacks.stack_info)
    with C(format=heat_abandon) gives the abandon data back for C(openstack stack
    adopt).
options:
  name:
    description:
      - Name of the stack in the store. Default the name Heat has.
      - A stack of that name in the store already fails the task.
    type: str
  abandon_file:
    description:
      - A file of Heat's abandon data (JSON), as C(openstack stack abandon) or
        C(openstack stack export) writes it.
      - Data that is not Heat's fails the task naming the file and the place in it,
        and nothing is written; so does data that Heat never writes, since an
        abandon file may come from elsewhere. A resource type Heat does not have
        (C(Hotplay::*), a name no C(resource_registry) mapping of the data renames),
        anywhere in the data (its templates, the templates of its C(files), its
        environments' C(resource_registry), its resources, at any depth); C(NaN) or
        C(Infinity); data nested deeper than 100 levels; a stack name Heat would refuse.
      - Mutually exclusive with O(stack).
    type: path
  cloud:
    description:
      - The C(clouds.yaml) entry of the cloud whose Heat runs the stack (openstacksdk
        on the controller). Needs O(stack), unless O(abandon_file) is given.
      - With O(abandon_file), the cloud whose servers, networks, volumes ... the file
        names; their names are read from it when the O(environment) maps their types
        to provider templates.
      - The cloud of the native OpenStack types, as O(hotplay.stacks.stack#module:cloud)
        is for an apply (their attributes, in the outputs, are read from it). Not
        given, openstacksdk's own choice (E(OS_CLOUD), or the E(OS_*) variables).
      - Each physical id of a native type is checked there before anything is
        recorded, since the abandon data comes from elsewhere and this stack's updates
        and delete act on what it names. The id must have the shape of that type's ids
        (a UUID for most), name a thing of that type the cloud shows to this session,
        and belong to the session's project (see O(other_projects)). Heat itself
        checks none of this.
    type: str
  other_projects:
    description:
      - Whether the physical ids of native OpenStack types may name another project's
        resources (an admin adopting a stack of another project). By default such an
        id refuses the adoption, naming the resource and the project.
    type: bool
    default: false
  stack:
    description:
      - The stack's name in Heat, with O(cloud).
    type: str
  heat_data:
    description:
      - How the stack is read from the cloud's Heat.
      - V(export) asks Heat for its abandon data (C(stack export); heat.conf needs
        C(enable_stack_abandon = true)).
      - V(resources), for a Heat that gives out no abandon data, reads the stack's
        template, environment, files and its resources (every depth) with their
        attributes, and rebuilds each resource's data from its attributes (an
        C(OS::Heat::RandomString)'s C(value), an C(OS::Heat::TestResource)'s
        C(output)). Resource metadata is not read.
    type: str
    choices: [export, resources]
    default: export
  template:
    description:
      - The template file you will apply the stack from, as
        M(hotplay.stacks.stack)'s O(hotplay.stacks.stack#module:template). It must
        be the template Heat runs (the same document); the stack's revision 1
        records it, so that applying it next changes nothing.
      - Default Heat's own template, environment and files from the abandon data
        (then a later apply from your files records a new revision, with no
        resource changed when they are the same).
    type: path
  environment:
    description:
      - Environment files, as M(hotplay.stacks.stack)'s, with O(template); the
        shipped C(hotplay.stacks.openstack) by that name.
    type: list
    elements: path
    default: []
  parameters:
    description:
      - Parameter values, as M(hotplay.stacks.stack)'s. With O(template), the
        resulting values must be those Heat has.
    type: dict
    default: {}
  file_roots:
    description:
      - Directories besides the template's where its files may be read, as
        M(hotplay.stacks.stack)'s.
    type: list
    elements: path
    default: []
  nested_depth:
    description:
      - How deep C(resources) and C(events) go, as M(hotplay.stacks.stack)'s.
    type: int
    default: 0
  unmanaged:
    description:
      - What to do with resources of types this collection cannot manage.
      - V(refuse) refuses the adoption, naming every such resource.
      - V(read_only) keeps them as read-only resources, type C(Hotplay::ReadOnly)
        (each such type mapped to it in the stack's environment, by an environment
        layer the adoption adds unless the O(environment) files map it already).
        Each keeps Heat's physical id and resource data, and C(get_resource) gives
        its id; its attributes are null. It is never created, changed or deleted
        here; a change to its properties fails it, and deleting the stack only
        forgets it. Give the same mapping in an environment file of your later
        applies (its C(resource_registry) mapping C(OS::Nova::Server) to
        C(Hotplay::ReadOnly), for example) so that they find the type.
    type: str
    choices: [refuse, read_only]
    default: refuse
extends_documentation_fragment:
  - hotplay.stacks.store
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.controller
  - hotplay.stacks.attributes.actiongroup_stacks
attributes:
  check_mode:
    support: full
    details:
      - In check mode the adoption is run in a scratch store only; the result shows
        the resources that would be adopted, with their physical ids.
  diff_mode:
    support: none
  idempotent:
    support: none
    details:
      - A stack of the same name in the store already fails the task.
requirements:
  - psycopg >= 3 (Python, on the controller), for a PostgreSQL O(store) only
  - cryptography (Python, on the controller), for a stack that keeps secrets (O(store_key))
  - openstacksdk (with O(cloud) only)
seealso:
  - module: hotplay.stacks.heat_stacks
  - module: hotplay.stacks.stack_rollback
  - module: hotplay.stacks.stack
  - module: hotplay.stacks.stack_info
  - name: Migrating from Heat
    description: The collection's guide (docs/migrating-from-heat.md).
    link: https://github.com/hotplay/stacks/blob/main/docs/migrating-from-heat.md
  - name: Heat's stack abandon and adopt
    description: The commands whose data this module reads.
    link: https://docs.openstack.org/python-openstackclient/latest/cli/plugin-commands/heat.html
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: What would be adopted from an abandon file
  hotplay.stacks.stack_adopt:
    abandon_file: "{{ playbook_dir }}/web.abandon.json"
    template: "{{ playbook_dir }}/templates/web.yaml"
    environment: ["{{ playbook_dir }}/templates/env.yaml"]
  check_mode: true

- name: Adopt the stack web from the cloud's Heat
  hotplay.stacks.stack_adopt:
    cloud: production
    stack: web
    template: "{{ playbook_dir }}/templates/web.yaml"
    environment: ["{{ playbook_dir }}/templates/env.yaml"]

- name: From now on, apply it here (nothing changes)
  hotplay.stacks.stack:
    name: web
    template: "{{ playbook_dir }}/templates/web.yaml"
    environment: ["{{ playbook_dir }}/templates/env.yaml"]
"""

RETURN = r"""
stack:
  description:
    - The stack after the task, in the shape M(hotplay.stacks.stack_info) returns
      it (RV(hotplay.stacks.stack_info#module:stack)), without its resources,
      events and revisions.
    - The preferred names; RV(stack_id), RV(stack_status) and
      RV(stack_status_reason) are deprecated aliases of RV(stack.id),
      RV(stack.status) and RV(stack.status_reason).
  returned: success
  type: dict
  version_added: 1.0.0
  contains:
    id:
      description: Unique identifier of the stack, kept across updates.
      type: str
      returned: always
      sample: 8d6b5b1e-5c1f-4f7e-9a55-2f0b6d3c4a10
    name:
      description: Name of the stack.
      type: str
      returned: always
      sample: web
    status:
      description:
        - The stack's status in Heat's words, C(<ACTION>_<STATUS>), such as
          C(CREATE_COMPLETE), C(UPDATE_FAILED) or C(DELETE_COMPLETE).
      type: str
      returned: always
      sample: ADOPT_COMPLETE
    status_reason:
      description: Why the stack is in its status, as Heat words it.
      type: str
      returned: always
      sample: Stack CREATE completed successfully
    created:
      description: When the stack was created, an ISO 8601 timestamp in UTC.
      type: str
      returned: always
      sample: "2026-01-01T12:00:00Z"
    updated:
      description: When the stack's status or settings last changed, an ISO 8601 timestamp in UTC.
      type: str
      returned: always
      sample: "2026-01-02T08:30:00Z"
    revision:
      description: Number of the stack's current revision (0 before the first is recorded).
      type: int
      returned: always
      sample: 4
    tags:
      description: Heat's stack tags (see O(hotplay.stacks.stack#module:tags)).
      type: list
      elements: str
      returned: always
      sample: [env=prod, team-web]
    deletion_protection:
      description: Whether a deletion of the stack is refused (see O(hotplay.stacks.stack#module:deletion_protection)).
      type: bool
      returned: always
      sample: false
stack_id:
  description:
    - Deprecated alias of RV(stack.id); it will be removed in release 2.0.0.
  returned: success
  type: str
  sample: 8d6b5b1e-5c1f-4f7e-9a55-2f0b6d3c4a10
stack_status:
  description:
    - Deprecated alias of RV(stack.status); it will be removed in release 2.0.0.
    - The stack's status in Heat's words, C(<ACTION>_<STATUS>), such as
      C(CREATE_COMPLETE), C(UPDATE_COMPLETE), C(UPDATE_FAILED) or C(DELETE_COMPLETE).
    - C(ADOPT_COMPLETE), as in Heat.
  returned: success
  type: str
  sample: ADOPT_COMPLETE
stack_status_reason:
  description:
    - Deprecated alias of RV(stack.status_reason); it will be removed in release 2.0.0.
    - Why the stack is in its status, as Heat words it.
  returned: success
  type: str
  sample: Stack CREATE completed successfully
revision:
  description: The stack's revision, 1.
  returned: success
  type: int
  sample: 1
outputs:
  description: The stack's outputs, from the adopted resources.
  returned: success
  type: dict
  sample: {"server_ip": "192.0.2.10"}
resources:
  description:
    - The adopted resources (down to O(nested_depth)), as the C(resources) result of
      M(hotplay.stacks.stack); C(physical_id) is Heat's.
  returned: success
  type: list
  elements: dict
  sample:
    - name: server
      type: OS::Nova::Server
      status: ADOPT_COMPLETE
      status_reason: state changed
      physical_id: 3f1c2a64-1d0e-4a43-b1de-6a1f1c7e2b90
events:
  description:
    - The C(ADOPT) events recorded (none in check mode), with the keys of the
      C(events) result of M(hotplay.stacks.stack).
  returned: success
  type: list
  elements: dict
  sample:
    - resource_name: server
      action: ADOPT
      status: COMPLETE
      reason: state changed
      physical_id: 3f1c2a64-1d0e-4a43-b1de-6a1f1c7e2b90
      time: "2026-11-22T03:09:51Z"
output_errors:
  description: Outputs that could not be resolved, output name to error message.
  returned: success
  type: dict
  sample: {}
parameters:
  description:
    - The parameter values the stack was adopted with (Heat's, or the task's
      O(parameters) with O(template)); values of C(hidden) parameters are shown
      as C(******).
  returned: success
  type: dict
  sample: {"flavor": "m1.small", "db_password": "******"}
hooks_pending:
  description:
    - The breakpoints (Heat's hooks) the stack is paused at after the adoption,
      with the keys of the C(hooks_pending) result of M(hotplay.stacks.stack);
      empty when there are none.
  returned: success
  type: list
  elements: dict
  sample: []
heat_stack_name:
  description: The stack's name in Heat.
  returned: success
  type: str
  sample: web
heat_stack_id:
  description: The stack's id in Heat.
  returned: success
  type: str
  sample: 5a0e5e8e-7d0a-4c65-9f6c-62a0e3b2c001
read_only_types:
  description: With O(unmanaged=read_only), the types kept as read-only resources.
  returned: success
  type: list
  elements: str
  sample: [OS::Nova::Server]
msg:
  description: Why the adoption was refused.
  returned: on failure
  type: str
  sample: "web.json: stack web has resources of types hotplay.stacks cannot adopt: server (OS::Nova::Server); nothing was written"
"""
