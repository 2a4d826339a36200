# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack_rollback.py, which runs the stack engine on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack_rollback
short_description: Roll a stack back to a recorded revision
version_added: 0.1.0
description:
  - Brings a stack back to a revision recorded in the state store (O(store)). The
    revision's template, environment files and parameters are applied again, from
    whatever state the stack is in, C(*_COMPLETE) or C(*_FAILED), including
    C(ROLLBACK_FAILED).
  - The target is the previous good revision by default, that is the latest
    revision older than the stack's current one whose action completed. O(revision)
    names another one; O(before) picks the last good revision finished before a
    time. O(max_age) refuses a target superseded too long ago.
  - The rollback is recorded as a new revision whose action is C(ROLLBACK); the
    stack ends C(ROLLBACK_COMPLETE) or C(ROLLBACK_FAILED), and a failed rollback
    fails the task. Since it is a revision of its own, a rollback can be rolled
    back too.
  - Resources are brought to the target's definition with the rules of an update,
    except for replaced ones. A resource that an update replaced and that is still
    kept in the store (retired) is swapped back in when it has exactly the
    properties the target needs and passes its type's health check (for
    C(Hotplay::Local::File), the file exists and holds what it was given); the
    live one is retired in its place and deleted once the rollback has succeeded.
    A retired resource that fails the check is not used; a new one is created and
    RV(rollback.recreated) says why.
  - An update keeps what it replaced until it has succeeded, so a rollback from
    C(UPDATE_FAILED) swaps the old resources back. After a successful update they
    are deleted, unless the update kept them with
    O(hotplay.stacks.stack#module:keep_replaced).
  - In check mode the task previews the rollback (RV(plan)) and writes nothing.
  - See C(docs/rollback.md) in the collection for when to roll back, targets,
    swap-back, recovering from C(ROLLBACK_FAILED), and an AWX job template.
options:
  name:
    description:
      - Name of the stack to roll back. A stack that is not in the store fails the
        task with "The Stack (<name>) could not be found."
    type: str
    required: true
  revision:
    description:
      - Number of the revision to go back to, as listed by
        M(hotplay.stacks.stack_info) in C(stack.revisions).
      - The revision must have completed (its C(status) is C(COMPLETE)), and it
        may not be the stack's current revision when the stack is C(*_COMPLETE),
        since there would be nothing to roll back. Either refusal fails the task and
        changes nothing.
      - When neither O(revision) nor O(before) is given, the target is the
        previous good revision, the latest revision older than the current one
        that completed. A stack with no such revision is refused ("nothing to
        roll back to (delete the stack instead)").
      - Mutually exclusive with O(before).
    type: int
  before:
    description:
      - Roll back to the last good revision (older than the current one, and
        completed) that finished at or before this time.
      - An ISO 8601 time, such as V(2026-11-22T03:00:00Z) or
        V(2026-11-22T04:00:00+01:00); a time without a time zone is taken as UTC.
      - Mutually exclusive with O(revision).
    type: str
  max_age:
    description:
      - Refuse a target that was superseded more than this many seconds ago,
        counted from when the next revision after it was created, since the world it
        describes may have moved on (addresses, images, data).
      - The refusal fails the task, changes nothing and says
        "Revision <n> was superseded <time> ago (at <time>), more than max_age
        (<time>) ...".
      - V(0) means no limit.
    type: int
    default: 3600
  skip:
    description:
      - Paths of resources of the target (C(server), or C(group/0/server) in a
        nested stack; exact paths, no patterns) to accept as they are. They are
        neither updated, replaced nor swapped back.
      - A skipped resource whose last action failed is marked C(ROLLBACK_COMPLETE)
        with the reason "accepted as it is (skip)", so that a stack in
        C(ROLLBACK_FAILED) can complete its rollback once someone has dealt with
        those resources by hand (as CloudFormation's C(ResourcesToSkip)).
      - The paths are recorded with the revision (C(accepted_as_is) in
        M(hotplay.stacks.stack_info)'s C(stack.revisions)) and returned in
        RV(rollback.accepted_as_is).
    type: list
    elements: str
    default: []
  parameters:
    description:
      - Not needed for revisions recorded since secrets are encrypted, since the
        store keeps the values of C(hidden) parameters encrypted with
        O(store_key) and the target revision's values are used.
      - For a target recorded before secrets were encrypted (it kept only a digest
        of each hidden value), the values of its C(hidden) parameters, as the
        target revision had them. A hidden value that does not match the target's
        digest is refused with C(The values of hidden parameters are not kept in
        the store for revisions recorded before secrets were encrypted; ...) naming
        the parameters. A missing one without a default fails with Heat's
        "The Parameter (<name>) was not provided."
      - Not logged (C(no_log)).
    type: dict
    default: {}
  nested_depth:
    description:
      - How many levels of nested stacks to include in RV(resources) and
        RV(events), as for M(hotplay.stacks.stack).
    type: int
    default: 0
  timeout:
    description:
      - Time limit of the rollback in seconds; V(0) means no limit. When it is
        reached, no further resource starts and the stack ends
        C(ROLLBACK_FAILED) with the reason C(Timed out).
      - Interrupting C(ansible-playbook) (SIGTERM, as an AWX job cancel sends, or
        SIGINT) stops the rollback in the same way.
    type: int
    default: 0
  keep_replaced:
    description:
      - Seconds to keep the resources this rollback replaces (creates anew in place
        of the live one) before they are deleted, as
        O(hotplay.stacks.stack#module:keep_replaced) does for an update, so that
        the rollback itself can be rolled back by swapping them back in.
      - V(0) deletes them once the rollback has succeeded.
      - A live resource displaced by a swap-back is deleted once the rollback has
        succeeded, whatever this option says.
    type: int
    default: 0
  parallelism:
    description:
      - At most this many resources of a stack are acted on at once, as
        O(hotplay.stacks.stack#module:parallelism); lower it to stay within an
        API's rate limits.
    type: int
    default: 128
    version_added: 1.0.0
  return_resources:
    description:
      - Which resources RV(resources) lists, as
        O(hotplay.stacks.stack#module:return_resources) does; V(all), only those
        the rollback acted on or would act on (V(changed)), or V(none).
      - With V(changed) or V(none), RV(plan)'s C(unchanged) list is empty too.
    type: str
    choices: [all, changed, none]
    default: all
    version_added: 1.0.0
  events_limit:
    description:
      - Return at most this many of the run's events, the last ones; RV(events_omitted)
        says how many were left out. Every event is returned when not given.
    type: int
    version_added: 1.0.0
extends_documentation_fragment:
  - hotplay.stacks.store
  - hotplay.stacks.cloud
  - hotplay.stacks.lock
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.actiongroup_stacks
  - hotplay.stacks.attributes.controller
attributes:
  check_mode:
    support: full
    details:
      - Check mode previews the rollback. It chooses the target (with the same
        refusals as a real run), returns RV(plan), RV(plan_id) and the target's
        RV(parameters), warns for each resource that would be deleted or replaced,
        and writes nothing. A swap-back is planned as C(replaced) with the reason
        C(swaps back <physical id>, replaced in revision <n>); a retired resource
        that fails its health check is said to be recreated.
      - The preview does not return RV(rollback).
      - C(changed) is true when the plan changes a resource or the stack is not
        C(*_COMPLETE).
  diff_mode:
    support: full
    details:
      - One diff per resource that is added, updated, replaced or deleted, with its
        properties before and after, as for M(hotplay.stacks.stack).
  idempotent:
    support: none
    details:
      - Every run records a new C(ROLLBACK) revision and reports C(changed=true).
      - Run again with the default target, it rolls the rollback back (to the
        revision before it).
notes:
  - The task holds the stack's lock while it runs; a rollback of a stack that
    another run holds fails, naming the holder, at once or after waiting up to
    O(lock_timeout) seconds.
  - Use O(hotplay.stacks.stack#module:rollback_on_failure) to roll back
    automatically when an apply fails.
  - C(playbooks/rollback.yml), run as C(ansible-playbook hotplay.stacks.rollback -e
    stack=<name>), wraps this module for operators and AWX job templates.
seealso:
  - module: hotplay.stacks.stack_hook
  - module: hotplay.stacks.stack
  - module: hotplay.stacks.stack_info
requirements:
  - psycopg >= 3 (Python, on the controller), for a PostgreSQL O(store) only
  - cryptography (Python, on the controller), for a stack that keeps secrets (O(store_key))
  - openstacksdk (Python, on the controller), for O(cloud) and OpenStack resource types only
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: Roll the web stack back to its previous good revision
  hotplay.stacks.stack_rollback:
    name: web
  register: web_rollback

- name: Say what was swapped back and what had to be recreated
  ansible.builtin.debug:
    msg:
      - "{{ web_rollback.stack_status }}: back to revision {{ web_rollback.rollback.target_revision }}"
      - "swapped back: {{ web_rollback.rollback.restored }}"
      - "recreated: {{ web_rollback.rollback.recreated }}"

- name: Preview a rollback to revision 4, with a diff of each resource
  hotplay.stacks.stack_rollback:
    name: web
    revision: 4
  check_mode: true
  diff: true
  register: web_preview

- name: Roll back to how the stack was before last night's change, however long ago that was superseded
  hotplay.stacks.stack_rollback:
    name: web
    before: "2026-11-21T22:00:00Z"
    max_age: 0

- name: Roll back a stack with hidden parameters (their values come from the store)
  hotplay.stacks.stack_rollback:
    name: web
    store_key: "{{ vault_hotplay_store_key }}"

# A rollback ended ROLLBACK_FAILED because a resource could not be restored;
# someone dealt with it by hand, and the rollback is run again, accepting it.
- name: Complete the rollback to revision 3, accepting the database as it is
  hotplay.stacks.stack_rollback:
    name: web
    revision: 3
    skip:
      - database

- name: Roll back within a block that sets the store once
  module_defaults:
    group/hotplay.stacks.stacks:
      store: sqlite:////var/lib/hotplay/stacks.db
  block:
    - name: Show the revisions first
      hotplay.stacks.stack_info:
        name: web
        events: false
      register: web_info

    - name: Roll back
      hotplay.stacks.stack_rollback:
        name: web
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
  returned: when the stack exists
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
      sample: CREATE_COMPLETE
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
  returned: when the stack exists
  type: str
  sample: 8d6b5b1e-5c1f-4f7e-9a55-2f0b6d3c4a10
stack_status:
  description:
    - Deprecated alias of RV(stack.status); it will be removed in release 2.0.0.
    - The stack's status in Heat's words, C(<ACTION>_<STATUS>), such as
      C(CREATE_COMPLETE), C(UPDATE_COMPLETE), C(UPDATE_FAILED) or C(DELETE_COMPLETE).
    - C(ROLLBACK_COMPLETE) or C(ROLLBACK_FAILED) after a rollback; as it was
      before in check mode and when the rollback was refused.
  returned: when the stack exists
  type: str
  sample: CREATE_COMPLETE
stack_status_reason:
  description:
    - Deprecated alias of RV(stack.status_reason); it will be removed in release 2.0.0.
    - Why the stack is in its status, as Heat words it.
  returned: when the stack exists
  type: str
  sample: Stack CREATE completed successfully
outputs:
  description:
    - The template's outputs, name to value, as for M(hotplay.stacks.stack); after
      a rollback, those of the target revision's template.
  returned: when the stack exists
  type: dict
  sample: {"url": "http://192.0.2.10/"}
output_errors:
  description: Outputs that could not be resolved, output name to error message.
  returned: when the stack exists
  type: dict
  sample: {}
resources:
  description:
    - The stack's resources, with nested ones down to O(nested_depth), with the
      keys of the C(resources) result of M(hotplay.stacks.stack).
    - A swapped-back resource is C(ROLLBACK_COMPLETE) with its old physical id; a
      resource accepted with O(skip) is C(ROLLBACK_COMPLETE) with the reason
      "accepted as it is (skip)".
    - In check mode and when the rollback was refused, the resources as they are
      stored.
    - Only those the rollback acted on with O(return_resources=changed); none
      with O(return_resources=none).
  returned: when the stack exists
  type: list
  elements: dict
  sample:
    - name: config
      type: Hotplay::Local::File
      status: ROLLBACK_COMPLETE
      status_reason: state changed
      physical_id: /srv/app/app-1.conf
events:
  description:
    - The events of this run, in order, with the keys of the C(events) result of
      M(hotplay.stacks.stack). The stack's own events have the action
      C(ROLLBACK); a swap-back is a C(ROLLBACK) event of the resource whose reason
      says C(swapping back <physical id>, replaced in revision <n>).
    - Empty in check mode and when the rollback was refused.
    - At most O(events_limit) of them, the last ones.
  returned: when the stack exists
  type: list
  elements: dict
  sample:
    - resource_name: config
      action: ROLLBACK
      status: IN_PROGRESS
      reason: swapping back /srv/app/app-1.conf, replaced in revision 2
      physical_id: /srv/app/app-1.conf
      time: "2026-11-22T03:09:51Z"
events_omitted:
  description: How many of the run's events O(events_limit) left out of RV(events).
  returned: when O(events_limit) left events out
  type: int
  sample: 120
  version_added: 1.0.0
parameters:
  description:
    - The target revision's parameter values; C(hidden) ones are shown as
      C(******).
    - Empty when the rollback was refused.
  returned: when the stack exists
  type: dict
  sample: {"release": "1", "db_password": "******"}
revision:
  description:
    - Number of the C(ROLLBACK) revision this run recorded; the stack's current
      revision in check mode and when the rollback was refused.
  returned: when the stack exists
  type: int
  sample: 5
plan:
  description:
    - What the rollback does (in check mode, would do) to each resource, with the
      keys of the C(plan) result of M(hotplay.stacks.stack) (C(added),
      C(deleted), C(replaced), C(updated), C(unchanged), C(reasons)).
    - A swap-back is listed as C(replaced) with the reason C(swaps back <physical
      id>, replaced in revision <n>).
    - Resources named in O(skip) are planned as the rollback would treat them
      without O(skip).
  returned: when the target was chosen and its definition loaded
  type: dict
  sample:
    added: []
    deleted: []
    replaced: [config]
    updated: [check]
    unchanged: []
    reasons:
      config: swaps back /srv/app/app-1.conf, replaced in revision 2
      check: "properties changed: value (reads config, which will be replaced)"
plan_id:
  description: Identifies the plan (the stack as it is stored and the target's definition).
  returned: when RV(plan) is returned
  type: str
  sample: 4c888923270314627d6b793bdd7d3342
rollback:
  description: What the rollback did.
  returned: when a rollback ran (not in check mode, not when refused)
  type: dict
  contains:
    target_revision:
      description: The revision rolled back to.
      type: int
      returned: always
      sample: 1
    status:
      description: The stack's status after the rollback.
      type: str
      returned: always
      sample: ROLLBACK_COMPLETE
    status_reason:
      description: Why the stack is in that status.
      type: str
      returned: always
      sample: Stack ROLLBACK completed successfully
    restored:
      description: Paths of the resources swapped back in (retired resources made live again).
      type: list
      elements: str
      returned: always
      sample: [config]
    recreated:
      description:
        - Resources for which a retired resource of the target was found but not
          used, path to why ("the resource replaced in revision <n> (<physical
          id>) is gone or changed"); a new one was created instead.
        - Resources recreated because nothing was kept of them are not listed.
      type: dict
      returned: always
      sample: {"config": "the resource replaced in revision 2 (/srv/app/app-1.conf) is gone or changed"}
    accepted_as_is:
      description: The paths given in O(skip), sorted.
      type: list
      elements: str
      returned: always
      sample: []
    succeeded:
      description: Whether the rollback completed.
      type: bool
      returned: always
      sample: true
hooks_pending:
  description:
    - The breakpoints (Heat's hooks) the stack is paused at after the rollback,
      with the keys of the C(hooks_pending) result of M(hotplay.stacks.stack);
      empty when there are none.
  returned: when a rollback ran (not in check mode, not when refused)
  type: list
  elements: dict
  sample: []
msg:
  description:
    - 'Why the task failed: a refusal (no such revision, a target that did not
      complete, O(max_age), hidden parameters), or the stack''s failure
      (C(ROLLBACK_FAILED: <reason>)).'
  returned: on failure
  type: str
  sample: >-
    Revision 3 was superseded 4 h 10 min ago (at 2026-11-21T23:02:11Z), more than
    max_age (1 h 0 min): the world it describes may have moved on. Set max_age to 0
    (or a longer time) to roll back to it anyway.
"""
