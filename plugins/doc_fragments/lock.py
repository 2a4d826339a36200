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
        2026-11-22T03:09:51Z)); after a wait it adds C(still locked after waiting
        N s (lock_timeout)).
      - Only this stack's lock is waited for; runs of other stacks go on meanwhile.
      - When the stack changed while the task waited (the holder applied its own
        update), the task plans again from what the holder left before it goes on,
        so its refusals (for a stale O(hotplay.stacks.stack#module:plan_id), for
        example) and its plan are checked against the stack as it is.
      - An interruption (SIGTERM or SIGINT, as an AWX cancel sends) ends the waiting. The
        C(timeout) of a run starts once the lock is held.
      - The lock of a run whose process died is free at once. With PostgreSQL its
        database session ends; with SQLite the holder's process is found gone.
    type: int
    default: 0
"""
