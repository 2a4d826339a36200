# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/stack_lock.py, which reads and writes the state store on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: stack_lock
short_description: Show who holds a stack's lock, or break the lock
version_added: 0.1.0
description:
  - Every run that changes a stack (M(hotplay.stacks.stack),
    M(hotplay.stacks.stack_rollback), M(hotplay.stacks.stack_resource),
    M(hotplay.stacks.store_copy)) holds the stack's lock, a lease that the run
    renews while it lives (every 10 seconds; the lease lasts 30 seconds, see
    C(docs/store.md) for the C(lock_lease) and C(lock_renew) store URL options).
  - With O(state=query) (the default), this module shows the lock (who took it,
    on which host and process, since when, until when the lease runs unless
    renewed, and its fencing token). It changes nothing.
  - With O(state=broken), it ends the lease whoever holds it, and records an
    event on the stack naming who broke it, the O(reason), and whom it was taken
    from. The lock's fencing token grows, so the run that held it, if it still
    lives, writes nothing more to the store and stops (its running modules are
    stopped within one renewal period), its task failing with a message that
    starts C(lost the lock on stack NAME) and names who broke it, when and why. The stack is
    free at once for the next run, which resumes or rolls back from what the
    store recorded.
  - Breaking is for a holder that cannot be reached and must not be waited for.
    A holder that died needs no break; its lease runs out within its length
    (30 seconds by default), then the next run takes the lock over by itself
    (waiting for it with O(hotplay.stacks.stack#module:lock_timeout)).
options:
  name:
    description:
      - Name of the stack whose lock to show or break. The stack need not exist
        (a run killed while it created a stack leaves a lock and no stack).
    type: str
    required: true
  state:
    description:
      - V(query) shows the lock; V(broken) breaks it.
    type: str
    choices: [query, broken]
    default: query
  reason:
    description:
      - Why the lock is broken, recorded in the stack's event and shown to the run
        that held it. Required with O(state=broken).
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
      - In check mode nothing is written; RV(broken) shows the lease that would be
        broken.
  diff_mode:
    support: none
  idempotent:
    support: full
    details:
      - Breaking a lock that is already broken or released changes nothing.
notes:
  - A lease is timed by the store's clock; with SQLite on shared storage, by the
    clocks of the hosts that use it, which must agree (NTP) to well within the
    lease's length.
seealso:
  - module: hotplay.stacks.store_copy
  - module: hotplay.stacks.stack
  - module: hotplay.stacks.stack_info
  - name: The state store, locks
    description: What a lease guarantees, and the 3 a.m. procedure (docs/store.md).
    link: https://github.com/hotplay/stacks/blob/main/docs/store.md#locks
requirements:
  - psycopg >= 3 (Python, on the controller), for a PostgreSQL O(store) only
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: Who holds the web stack's lock
  hotplay.stacks.stack_lock:
    name: web
  register: web_lock

- name: Show it
  ansible.builtin.debug:
    msg: "{{ web_lock.lock.holder }} until {{ web_lock.lock.expires }}"
  when: web_lock.lock.held | default(false)

- name: Break it (the job's node is gone and cannot be reached)
  hotplay.stacks.stack_lock:
    name: web
    state: broken
    reason: "AWX node awx-3 lost power during job 1432 (INC-2291)"
"""

RETURN = r"""
lock:
  description:
    - The stack's lock after the task; null when the stack was never locked.
  returned: success
  type: dict
  contains:
    held:
      description: Whether a run holds it now (its lease has not run out).
      type: bool
      returned: always
      sample: true
    holder:
      description: Who took the lock (or broke it), as its runs name themselves.
      type: str
      returned: always
      sample: "AWX job 1432 (runner@automation-job-1432-x7kq, task 'Apply web')"
    host:
      description: The host name of the holder's process.
      type: str
      returned: always
      sample: automation-job-1432-x7kq
    pid:
      description: The holder's process id (in its own PID namespace).
      type: int
      returned: always
      sample: 24
    since:
      description: When the lock was taken (or broken).
      type: str
      returned: always
      sample: "2026-11-22T03:09:51Z"
    expires:
      description: When the lease runs out unless renewed; empty once released or broken.
      type: str
      returned: always
      sample: "2026-11-22T03:10:21Z"
    token:
      description: The fencing token; it grows with every acquisition and every break.
      type: int
      returned: always
      sample: 17
    note:
      description:
        - How this token began, empty for a free lock; C(took over from ...) when
          the previous holder's lease had run out (or its process was gone), and
          C(broken) followed by the reason after a break.
      type: str
      returned: always
      sample: ""
broken:
  description:
    - With O(state=broken), the lock as it was before the break (keys as RV(lock));
      null when there was nothing to break (never locked, released, or broken already).
  returned: when O(state=broken)
  type: dict
  sample:
    held: true
    holder: "AWX job 1432 (runner@automation-job-1432-x7kq, task 'Apply web')"
    host: automation-job-1432-x7kq
    pid: 24
    since: "2026-11-22T03:09:51Z"
    expires: "2026-11-22T03:10:21Z"
    token: 7
    note: ""
events:
  description:
    - With O(state=broken), the event recorded on the stack (C(LOCK_BROKEN), with
      who broke it, why, and whom it was taken from); empty when nothing was broken
      or the stack does not exist.
  returned: when O(state=broken)
  type: list
  elements: dict
  sample:
    - resource_name: web
      action: LOCK
      status: BROKEN
      reason: "Lock broken by ansible-playbook (ops@bastion, task 'Break'): node lost (it was held by ...)"
      physical_id: ""
      time: "2026-11-22T03:12:00Z"
msg:
  description: Why the task failed.
  returned: on failure
  type: str
  sample: "state=broken needs a reason: say why the lock must go (it is recorded)"
"""
