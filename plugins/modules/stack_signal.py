# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack_signal.py, which writes the signal to the state store on the controller
# (a wait condition handle), or runs the stack to resize a group (a scaling policy).

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack_signal
short_description: Signal a resource of a stack (Heat's resource signal)
version_added: 1.0.0
description:
  - Sends a signal to one resource of a stack, as Heat's C(openstack stack resource
    signal) does, with Heat's checks and messages. The resource types that take a
    signal are the wait condition handles (C(OS::Heat::WaitConditionHandle),
    C(OS::Heat::UpdateWaitConditionHandle),
    C(AWS::CloudFormation::WaitConditionHandle)) and the scaling policies
    (C(OS::Heat::ScalingPolicy)); any other type is refused with Heat's C(signal is
    not supported for resource.)
  - A signal to a handle is recorded in the store at once, with Heat's C(SIGNAL)
    event on the handle. It does not take the stack's lock, so that it reaches a
    C(OS::Heat::WaitCondition) that a M(hotplay.stacks.stack) task of another job
    (another C(ansible-playbook), an AWX job) is waiting on, as a signal reaches a
    wait condition in Heat while its stack is C(CREATE_IN_PROGRESS). Signals sent at
    the same moment are all kept, in the order the store took them.
  - A signal to a scaling policy resizes its C(OS::Heat::AutoScalingGroup) by the
    policy's adjustment, as Heat's does, and as an update of the stack does here. The
    task takes the stack's lock (O(lock_timeout)), records a revision with the events
    of the group and its members, stops at hooks, and in check mode previews the
    members it would add or delete. The group's size stays within its C(min_size)
    and C(max_size); a signal that would not change it, or that comes before the
    cooldown of the group's last scaling has passed, changes nothing
    (C(changed=false), RV(msg) says why), as Heat ignores it.
    M(hotplay.stacks.stack_rollback) gives a scaled group back the size it had in
    the revision it goes back to.
  - There is no Heat API here, so the handles' C(curl_cli), C(endpoint) and C(token)
    attributes are null. A server's configuration cannot signal by itself yet; a
    play or job that configured it signals with this module.
  - See C(docs/signals.md) in the collection for the wait-condition pattern with
    two jobs.
options:
  name:
    description:
      - Name of the stack. A stack that is not in the store fails the task with
        "The Stack (<name>) could not be found."
      - Required unless O(url) is given.
    type: str
  resource:
    description:
      - The resource to signal, by its path from the top stack (C(handle), or
        C(group/0/handle) inside nested stacks), or its physical id.
      - A resource the stack has not created yet is refused with Heat's
        C(The Resource (<name>) is not available.); one that is being deleted with
        C(Signal resource during DELETE is not supported.)
      - Required unless O(url) is given.
    type: str
  url:
    description:
      - A scaling policy's C(signal_url) (or C(alarm_url)) attribute,
        C(hotplay://stacks/<stack>/resources/<path>/signal), names the stack and
        the resource in one value, as a stack's output can hand it to the job that
        scales. Mutually exclusive with O(name) and O(resource).
    type: str
  timeout:
    description:
      - For a scaling policy, the time limit of the run that resizes the group, in
        seconds, as O(hotplay.stacks.stack#module:timeout); V(0) means none.
    type: int
    default: 0
  data:
    description:
      - The signal's body, Heat's signal C(details).
      - For C(OS::Heat::WaitConditionHandle), a map with any of C(status)
        (V(SUCCESS), the default, or V(FAILURE)), C(reason) (default
        C(Signal <n> received)), C(data) (default null) and C(id) (default C(<n>), the
        number of signals the handle holds, plus one); no other key. Omitted, a
        V(SUCCESS) signal with those defaults.
      - For C(AWS::CloudFormation::WaitConditionHandle) and
        C(OS::Heat::UpdateWaitConditionHandle), a map with exactly C(Status),
        C(Reason), C(Data) and C(UniqueId); omitted, the signal changes nothing.
      - A later signal with the C(id) (C(UniqueId)) of an earlier one replaces it, as
        in Heat. A body of another shape is refused with Heat's
        C(Metadata format invalid) and nothing is recorded.
      - For C(OS::Heat::ScalingPolicy), anything or nothing. It only makes the
        reason of the policy's C(SIGNAL) event, in Heat's words (C(No signal details
        provided); for an alarm's C(previous), C(current) and C(reason), C(alarm
        state changed from <previous> to <current> (<reason>))).
    type: raw
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
      - In check mode the signal is checked as it would be sent (the same refusals)
        and nothing is recorded; RV(reason) says what the event would say. For a
        scaling policy, RV(plan) previews the group's new members (or the ones that
        would go) and RV(scaled) the sizes.
  diff_mode:
    support: none
  idempotent:
    support: none
    details:
      - Each run sends one more signal, as each C(openstack stack resource signal) does;
        a scaling policy's cooldown makes a signal soon after the last scaling change
        nothing.
notes:
  - The wait condition's C(data) attribute (C(Data) for the CFN form) is the JSON of
    each signal's C(data) by its id, as Heat gives it.
seealso:
  - module: hotplay.stacks.stack
  - module: hotplay.stacks.stack_info
  - module: hotplay.stacks.stack_rollback
  - name: Heat's OS::Heat::ScalingPolicy
    description: The resource type reference.
    link: https://docs.openstack.org/heat/latest/template_guide/openstack.html#OS::Heat::ScalingPolicy
  - name: Heat's OS::Heat::WaitCondition
    description: The resource type reference.
    link: https://docs.openstack.org/heat/latest/template_guide/openstack.html#OS::Heat::WaitCondition
requirements:
  - psycopg >= 3 (Python, on the controller), for a PostgreSQL O(store) only
  - cryptography (Python, on the controller), for a stack that keeps secrets (O(store_key))
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
# Job 1 runs the stack; its wait condition waits until a later job signals it.
- name: Tell the web stack that the database is configured
  hotplay.stacks.stack_signal:
    name: web
    resource: db_ready_handle
    data:
      status: SUCCESS
      reason: schema loaded
      data: "{{ schema_version }}"

- name: Fail the wait condition instead (the stack task fails with the reason)
  hotplay.stacks.stack_signal:
    name: web
    resource: db_ready_handle
    data:
      status: FAILURE
      reason: the schema migration failed

- name: Signal the handle of a CloudFormation template
  hotplay.stacks.stack_signal:
    name: legacy
    resource: WaitHandle
    data:
      Status: SUCCESS
      Reason: configured
      UniqueId: "{{ inventory_hostname }}"
      Data: ok

- name: Scale the web tier out by one member (its scale_out policy)
  hotplay.stacks.stack_signal:
    name: web
    resource: scale_out
    lock_timeout: 120

- name: Scale by the policy URL a stack output handed to this job
  hotplay.stacks.stack_signal:
    url: "{{ web_stack.outputs.scale_in_url }}"
"""

RETURN = r"""
resource:
  description: The signalled resource as it was when signalled, with the keys of the
    entries of RV(hotplay.stacks.stack#module:resources).
  returned: success
  type: dict
  sample:
    name: db_ready_handle
    type: OS::Heat::WaitConditionHandle
    status: CREATE_COMPLETE
reason:
  description: The reason of the C(SIGNAL) event recorded on the resource, in Heat's
    words.
  returned: success
  type: str
  sample: "Signal: status:SUCCESS reason:schema loaded"
scaled:
  description: For a scaling policy, each group the signal resized, by its path,
    with its size before and after.
  returned: when a scaling policy's signal resized its group (in check mode, would)
  type: dict
  sample: {web_group: {from: 2, to: 3}}
stack:
  description: For a scaling policy, the stack after the run, as
    RV(hotplay.stacks.stack#module:stack) gives it; with it the other results of
    M(hotplay.stacks.stack) (RV(hotplay.stacks.stack#module:resources),
    RV(hotplay.stacks.stack#module:events), RV(hotplay.stacks.stack#module:outputs)).
  returned: when a scaling policy's signal ran the stack
  type: dict
  sample: {name: web, status: UPDATE_COMPLETE}
plan:
  description: For a scaling policy in check mode, the plan of the run, as
    RV(hotplay.stacks.stack#module:plan) gives it.
  returned: check mode, for a scaling policy
  type: dict
  sample: {added: [web_group/k2x7aqk5xgia], updated: [web_group]}
msg:
  description: Why the task failed, such as C(The Stack (web) could not be found.);
    or, for a scaling policy whose signal changed nothing, why (its cooldown, or
    the group's bounds).
  returned: on failure; for a scaling policy, when the signal changed nothing
  type: str
  sample: The Stack (web) could not be found.
"""
