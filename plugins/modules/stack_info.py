# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack_info.py, which reads the state store on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack_info
short_description: Read stacks recorded in the state store
version_added: 0.1.0
description:
  - Without O(name), lists every stack recorded in the store.
  - With O(name), returns that stack's status, outputs, parameters, resources,
    events and the list of its recorded revisions.
  - Only reads the store; never changes a stack.
  - A stack paused at breakpoints is C(*_IN_PROGRESS), with its pending hooks in
    RV(stack.hooks_pending).
options:
  name:
    description:
      - Name of the stack to describe. Without it, all stacks are listed.
    type: str
  nested_depth:
    description:
      - How many levels of nested stacks to include in the resources and events of
        RV(stack). V(0) reports only the top-level stack's.
    type: int
    default: 0
  events:
    description:
      - Whether to include the stack's recorded events in RV(stack.events).
      - Set to V(false) for long-lived stacks with many events when they are not needed.
    type: bool
    default: true
  graph:
    description:
      - Also return the stack's recorded dependency graph as RV(stack.graph), each
        resource labelled with its full status and coloured by how the status ends
        (C(*_COMPLETE) green, C(*_IN_PROGRESS) yellow, C(*_FAILED) red,
        C(INIT_COMPLETE), not created yet, grey), with the resources of nested
        stacks down to O(nested_depth) under their parent.
      - Text is black or white, whichever reads better on its fill (WCAG AA
        contrast); a legend says what each colour, an arrow and a dashed line mean.
        Any resource name Heat accepts is drawn as it is written.
      - V(dot) is Graphviz source, V(mermaid) a Mermaid flowchart, V(svg) an image
        made by Graphviz's C(dot) command, which must be installed on the
        controller (otherwise the task fails saying so).
      - Ignored without O(name).
    type: str
    choices: [dot, mermaid, svg]
  compare_revisions:
    description:
      - Two revision numbers of the stack, V([from, to]), to compare; the
        differences are returned as RV(revision_diff).
      - Any two recorded revisions can be compared, in either order, including
        failed ones and rollbacks.
      - A number the stack does not have fails the task with "Stack <name> has no
        revision <n> (it has ...)"; a list that is not two numbers fails with
        C(compare_revisions takes two revision numbers).
      - Ignored without O(name).
    type: list
    elements: int
  drift:
    description:
      - Also ask every C(Hotplay::Ansible::Module) resource of the stack (nested
        stacks included, whatever O(nested_depth) is) whether the real thing still
        matches what the stack recorded. Its module runs in check mode, with diff,
        on its host, with the recorded arguments. A change it would make is drift.
      - The answers are in RV(drift), the drifted resources in RV(drifted).
        Nothing is written to the store and nothing is changed on the hosts.
      - Modules that do not support check mode cannot tell (C(drifted=null)).
      - Native OpenStack resources (C(OS::Neutron::Net), ...) are read from the
        cloud named by O(cloud). A property the template set that the cloud now
        holds otherwise, or the thing gone, is drift.
      - Ignored without O(name).
    type: bool
    default: false
  format:
    description:
      - V(heat_abandon) also gives the stack as Heat's abandon data, in
        RV(heat_abandon), the JSON that C(openstack stack adopt --adopt-file) takes
        (Heat needs C(enable_stack_adopt = true) in heat.conf), so that the stack
        can go to Heat with its resources. Needs O(name).
      - The data holds the stack's parameter values, hidden ones included, in the
        clear (Heat needs them); in the task result they are masked.
    type: str
    choices: [heat_abandon]
  dest:
    description:
      - With O(format=heat_abandon), also write the abandon data to this file on
        the controller (hidden values in the clear), always as a new file of mode 0600,
        whatever the umask, written beside it and renamed over it, so a file that
        was there (whatever its mode) is replaced, never rewritten in place.
    type: path
extends_documentation_fragment:
  - hotplay.stacks.store
  - hotplay.stacks.cloud
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.actiongroup_stacks
  - hotplay.stacks.attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - The module only reads, so it runs normally in check mode.
  diff_mode:
    support: none
  idempotent:
    support: full
seealso:
  - module: hotplay.stacks.stack_adopt
  - module: hotplay.stacks.stack_resource
  - module: hotplay.stacks.stack
  - module: hotplay.stacks.stack_rollback
  - module: hotplay.stacks.stack_hook
requirements:
  - psycopg >= 3 (Python, on the controller), for a PostgreSQL O(store) only
  - cryptography (Python, on the controller), for a stack that keeps secrets (O(store_key))
  - openstacksdk (Python, on the controller), for O(drift) of OpenStack resource types only
  - Graphviz C(dot) command (on the controller), for O(graph=svg) only
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: List all stacks of the default store
  hotplay.stacks.stack_info:
  register: all_stacks

- name: Show their names and statuses
  ansible.builtin.debug:
    msg: "{{ all_stacks.stacks | map(attribute='name') | zip(all_stacks.stacks | map(attribute='status')) | list }}"

- name: Describe one stack, with the members of its resource groups, without events
  hotplay.stacks.stack_info:
    name: web
    nested_depth: 1
    events: false
    store: sqlite:////var/lib/hotplay/stacks.db
  register: web_info

- name: Draw a stack's resources, coloured by their state, as a Mermaid flowchart
  hotplay.stacks.stack_info:
    name: web
    nested_depth: 1
    events: false
    graph: mermaid
  register: web_graph

- name: Show what changed between revision 3 and revision 4 of a stack
  hotplay.stacks.stack_info:
    name: web
    events: false
    compare_revisions: [3, 4]
  register: web_changes

- name: Show the template diff and the changed parameters
  ansible.builtin.debug:
    msg:
      - "{{ web_changes.revision_diff.template }}"
      - "{{ web_changes.revision_diff.parameters.changed }}"

- name: List the revisions a rollback could go back to (completed ones)
  ansible.builtin.debug:
    msg: "{{ web_info.stack.revisions | selectattr('status', 'eq', 'COMPLETE') | map(attribute='revision') | list }}"

- name: Act only when the stack exists
  ansible.builtin.debug:
    msg: "web is {{ web_info.stack.status }} at revision {{ web_info.stack.revisions[-1].revision }}"
  when: web_info.exists
"""

RETURN = r"""
heat_abandon:
  description:
    - With O(format=heat_abandon), the stack as Heat's abandon data (Heat's
      C(prepare_abandon) format; nested stacks as their own abandon data).
  returned: when O(name) and O(format) are given and the stack exists
  type: dict
  sample:
    name: web
    id: 0b1a6c1e-0ab5-4d3f-9f5e-d2f0c6a1e001
    action: ADOPT
    status: COMPLETE
    template: {heat_template_version: "2018-08-31", resources: {}}
    environment: {parameters: {}, resource_registry: {}}
    files: {}
    resources:
      password:
        name: password
        resource_id: web-password-3nqs8bp2xk1c
        type: OS::Heat::RandomString
        action: ADOPT
        status: COMPLETE
        metadata: {}
        resource_data: {value: K9vQ2mX7pL4z}
drift:
  description:
    - With O(drift=true), per module resource (by its path from the top stack),
      what its module said in check mode.
  returned: when O(name) and O(drift) are given and the stack exists
  type: dict
  sample:
    config:
      drifted: true
      changed_keys: [content]
      diff:
        - before: "port = 80\n"
          after: "port = 8080\n"
    service_user:
      drifted: false
  contains:
    drifted:
      description:
        - V(true) when the module would change something, V(false) when not,
          V(null) when it cannot tell (no check mode, the host is unreachable, or
          the module failed; then RV(drift.msg) says why).
      type: bool
      returned: always
    changed_keys:
      description:
        - What the module's diff shows changing. The keys of a structured diff
          (C(mode), C(owner) for M(ansible.builtin.file)), or C(content) for a
          text diff (M(ansible.builtin.copy), M(ansible.builtin.template)).
      type: list
      elements: str
      returned: when the module returned a diff
    diff:
      description:
        - The module's diff, as it gave it; the values of the arguments the
          resource lists in C(no_log) are masked.
      type: list
      elements: dict
      returned: when the module returned a diff
    msg:
      description: Why RV(drift.drifted) is V(null).
      type: str
      returned: when the module could not tell
drifted:
  description: The paths of the resources of RV(drift) that drifted.
  returned: when O(name) and O(drift) are given and the stack exists
  type: list
  elements: str
  sample: [config]
exists:
  description: Whether the stack named O(name) is recorded in the store.
  returned: when O(name) is given
  type: bool
  sample: true
revision_diff:
  description:
    - What changed from the first revision of O(compare_revisions) to the second.
  returned: when O(name) and O(compare_revisions) are given and the stack exists
  type: dict
  contains:
    from:
      description: The first revision number of O(compare_revisions).
      type: int
      returned: always
      sample: 3
    to:
      description: The second revision number of O(compare_revisions).
      type: int
      returned: always
      sample: 4
    template:
      description:
        - A unified diff of the two revisions' templates, empty when they are the
          same. The templates are compared as parsed, written out again as YAML,
          so comments and formatting do not show. Environment files are not
          compared.
      type: str
      returned: always
      sample: |
        --- revision 3
        +++ revision 4
        @@ -2,7 +2,7 @@
         parameters:
           flavor:
             type: string
        -    default: m1.small
        +    default: m1.large
         resources:
           server:
             type: OS::Nova::Server
    parameters:
      description:
        - The parameter values (after defaults and environment files) that were
          added, removed or changed; C(hidden) values are shown as C(******) (a
          changed hidden value is listed, its values are not shown).
        - C(added) and C(removed) map names to values, C(changed) maps names to
          C({before, after}).
      type: dict
      returned: always
      sample:
        added: {}
        removed: {}
        changed: {"release": {"before": "1", "after": "2"}}
    resources:
      description:
        - The resources each revision left (nested ones by path), as C(added),
          C(removed) and C(changed), each resource with its C(type), C(status) and
          C(physical_id) (C({before, after}) for C(changed)).
      type: dict
      returned: always
      sample:
        added: {}
        removed: {}
        changed:
          config:
            before: {"type": "Hotplay::Local::File", "status": "CREATE_COMPLETE", "physical_id": "/srv/app/app-1.conf"}
            after: {"type": "Hotplay::Local::File", "status": "CREATE_COMPLETE", "physical_id": "/srv/app/app-2.conf"}
stacks:
  description: Every stack recorded in the store, sorted by name.
  returned: when O(name) is not given
  type: list
  elements: dict
  contains:
    name:
      description: Name of the stack.
      type: str
      returned: always
      sample: web
    id:
      description: Unique identifier of the stack.
      type: str
      returned: always
      sample: 8d6b5b1e-5c1f-4f7e-9a55-2f0b6d3c4a10
    status:
      description: The stack's status in Heat's words.
      type: str
      returned: always
      sample: UPDATE_COMPLETE
    status_reason:
      description: Why the stack is in its status.
      type: str
      returned: always
      sample: Stack UPDATE completed successfully
    created:
      description: When the stack was created, an ISO 8601 timestamp in UTC.
      type: str
      returned: always
      sample: "2026-01-01T12:00:00Z"
    updated:
      description: When the stack was last changed, an ISO 8601 timestamp in UTC; its creation time if it was never updated.
      type: str
      returned: always
      sample: "2026-01-02T08:30:00Z"
    revision:
      description: Number of the stack's current revision.
      type: int
      returned: always
      sample: 4
    tags:
      description: Heat's stack tags (O(hotplay.stacks.stack#module:tags)).
      type: list
      elements: str
      returned: always
      sample: [env=prod, team-web]
      version_added: 1.0.0
    deletion_protection:
      description:
        - Whether a deletion of the stack is refused until the protection is lifted
          (O(hotplay.stacks.stack#module:deletion_protection)).
      type: bool
      returned: always
      sample: false
      version_added: 1.0.0
stack:
  description:
    - The stack named O(name).
    - M(hotplay.stacks.stack), M(hotplay.stacks.stack_rollback) and
      M(hotplay.stacks.stack_adopt) return the same C(stack) mapping (without
      its resources, events and revisions); this is the collection's one shape
      of a stack (their flat C(stack_id), C(stack_status) and
      C(stack_status_reason) are deprecated aliases).
  returned: when O(name) is given and the stack exists
  type: dict
  contains:
    name:
      description: Name of the stack.
      type: str
      returned: always
      sample: web
    id:
      description: Unique identifier of the stack.
      type: str
      returned: always
      sample: 8d6b5b1e-5c1f-4f7e-9a55-2f0b6d3c4a10
    status:
      description: The stack's status in Heat's words.
      type: str
      returned: always
      sample: CREATE_COMPLETE
    status_reason:
      description: Why the stack is in its status.
      type: str
      returned: always
      sample: Stack CREATE completed successfully
    outputs:
      description:
        - The template's outputs, name to value. An output whose C(condition) is
          false, or that could not be resolved, has the value V(null).
      type: dict
      returned: always
      sample: {"url": "http://192.0.2.10/"}
    output_errors:
      description: Outputs that could not be resolved, output name to error message.
      type: dict
      returned: always
      sample: {}
    parameters:
      description: The parameter values of the current revision; C(hidden) ones are shown as C(******).
      type: dict
      returned: always
      sample: {"server_count": 3, "db_password": "******"}
    resources:
      description:
        - The stack's resources, with nested ones down to O(nested_depth), with
          the same keys as the C(resources) result of M(hotplay.stacks.stack),
          C(name), C(type), C(status), C(status_reason), C(physical_id) and, for
          nested resources, C(parent).
      type: list
      elements: dict
      returned: always
      sample:
        - name: server
          type: OS::Heat::TestResource
          status: CREATE_COMPLETE
          status_reason: state changed
          physical_id: 3f1c2a64-1d0e-4a43-b1de-6a1f1c7e2b90
    events:
      description:
        - The stack's recorded events in the order they happened, then those of
          its nested stacks down to O(nested_depth), with the same keys as the C(events) result of
          M(hotplay.stacks.stack), C(resource_name), C(action), C(status),
          C(reason), C(physical_id), C(time) and, for nested resources, C(parent).
      type: list
      elements: dict
      returned: when O(events=true)
      sample:
        - resource_name: server
          action: CREATE
          status: COMPLETE
          reason: state changed
          physical_id: 3f1c2a64-1d0e-4a43-b1de-6a1f1c7e2b90
          time: "2026-01-01T12:00:01Z"
    revisions:
      description:
        - The stack's recorded revisions, oldest first. Every create, update and
          rollback (C(hotplay.stacks.stack_rollback), or the automatic rollback of
          C(rollback_on_failure)) records one.
        - A revision whose C(status) is C(COMPLETE) can be the target of a rollback.
      type: list
      elements: dict
      returned: always
      contains:
        revision:
          description: Number of the revision.
          type: int
          returned: always
          sample: 1
        action:
          description: The stack action that produced the revision, such as C(CREATE), C(UPDATE), C(ROLLBACK).
          type: str
          returned: always
          sample: CREATE
        status:
          description: How that action ended, such as C(COMPLETE) or C(FAILED).
          type: str
          returned: always
          sample: COMPLETE
        status_reason:
          description: Why the action ended so.
          type: str
          returned: always
          sample: Stack CREATE completed successfully
        created:
          description: When the revision was recorded, an ISO 8601 timestamp in UTC.
          type: str
          returned: always
          sample: "2026-01-01T12:00:00Z"
        finished:
          description:
            - When the revision's action ended, an ISO 8601 timestamp in UTC; empty
              while it is in progress.
          type: str
          returned: always
          sample: "2026-01-01T12:00:42Z"
        rolled_back_to:
          description:
            - For a C(ROLLBACK) revision, the number of the revision it went back
              to; V(null) for other revisions.
          type: int
          returned: always
          sample: 2
        accepted_as_is:
          description:
            - For a C(ROLLBACK) revision, the resource paths it accepted as they
              were (the C(skip) option of M(hotplay.stacks.stack_rollback)); empty
              otherwise.
          type: list
          elements: str
          returned: always
          sample: []
    created:
      description: When the stack was created, an ISO 8601 timestamp in UTC.
      type: str
      returned: always
      sample: "2026-01-01T12:00:00Z"
    updated:
      description: When the stack was last changed, an ISO 8601 timestamp in UTC; its creation time if it was never updated.
      type: str
      returned: always
      sample: "2026-01-02T08:30:00Z"
    revision:
      description:
        - Number of the stack's current revision, the last one recorded (see
          RV(stack.revisions)).
      type: int
      returned: always
      sample: 4
    tags:
      description: Heat's stack tags (O(hotplay.stacks.stack#module:tags)).
      type: list
      elements: str
      returned: always
      sample: [env=prod, team-web]
      version_added: 1.0.0
    deletion_protection:
      description:
        - Whether a deletion of the stack is refused until the protection is lifted
          (O(hotplay.stacks.stack#module:deletion_protection)).
      type: bool
      returned: always
      sample: false
      version_added: 1.0.0
    hooks_pending:
      description:
        - The breakpoints (Heat's hooks) the stack's last run paused at and that
          are not cleared yet, in the stack and its nested stacks (whatever
          O(nested_depth) is); empty when there are none.
        - The same list as the C(hooks_pending) result of M(hotplay.stacks.stack)
          and M(hotplay.stacks.stack_hook); clear them with
          M(hotplay.stacks.stack_hook).
      type: list
      elements: dict
      returned: always
      contains:
        resource:
          description: Path of the resource from the top stack.
          type: str
          returned: always
          sample: group/1
        hook:
          description: The hook, such as C(pre-create).
          type: str
          returned: always
          sample: pre-create
      sample:
        - resource: database
          hook: pre-create
    graph:
      description:
        - The recorded dependency graph in the format O(graph) asks for, each
          resource labelled with its path, type and full status and coloured by
          its status, with a legend (shortened in the sample). An arrow goes from a
          resource to the one that needs it; resources of nested stacks hang off
          their parent with a dashed line.
      type: str
      returned: when O(graph) is set
      sample: |
        digraph stack {
          rankdir=LR;
          node [shape=box, style="rounded,filled", fontname="Helvetica"];
          "network" [label="network\nOS::Heat::None\nCREATE_COMPLETE", fillcolor="#2e7d32", fontcolor="#ffffff"];
          "server" [label="server\nOS::Heat::TestResource\nCREATE_FAILED", fillcolor="#c62828", fontcolor="#ffffff"];
          "network" -> "server";
          subgraph cluster_legend {
            label="Legend. Colour: the state the resource is in"; fontname="Helvetica"; style=dashed;
            "/legend/COMPLETE" [label="*_COMPLETE: its last action finished", fillcolor="#2e7d32", fontcolor="#ffffff"];
            "/legend/a" [label="a", shape=plaintext, style=""];
            "/legend/b" [label="b", shape=plaintext, style=""];
            "/legend/a" -> "/legend/b" [label="b needs a: a is created first"];
          }
        }
"""
