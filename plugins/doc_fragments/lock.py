# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The O(lock_timeout) option of every module that takes a stack's lock."""

from __future__ import annotations


class ModuleDocFragment:
    """Documentation of the C(lock_timeout) option."""

    DOCUMENTATION = r"""
options:
  lock_timeout:
    description:
      - Seconds to wait for the stack's lock when another run (another task, job or
        controller using the same store) holds it.
      - V(0) fails at once. Otherwise the task tries again, with pauses of at most
        half a second, until it gets the lock or the time is up; then it fails with
        C(changed=false) and writes nothing.
      - The refusal names the holder, for example C(Stack "web" is locked by AWX job
        42 (awx@ee-7f9c, task 'Apply web') (pid 31 on ee-7f9c, since
        2026-11-22T03:09:51Z); its lease runs until 2026-11-22T03:10:21Z unless
        renewed); after a wait it adds C(still locked after waiting N s
        (lock_timeout)).
      - Only this stack's lock is waited for; runs of other stacks go on meanwhile.
      - When the stack changed while the task waited (the holder applied its own
        update), the task plans again from what the holder left before it goes on,
        so its refusals (for a stale O(hotplay.stacks.stack#module:plan_id), for
        example) and its plan are checked against the stack as it is.
      - An interruption (SIGTERM or SIGINT, as an AWX cancel sends) ends the waiting. The
        C(timeout) of a run starts once the lock is held.
      - The lock is a lease that a live run renews. The lock of a run that died is
        taken over once its lease runs out (30 seconds by default, the C(lock_lease)
        option of the store URL), or at once when the run ran on this machine, in
        the same PID namespace, and its process is gone. A value of 60 or more
        rides out a dead job's lease. M(hotplay.stacks.stack_lock) breaks a lock.
    type: int
    default: 0
"""
