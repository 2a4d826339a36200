# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

# Documentation only: the module is implemented by the action plugin
# plugins/action/store_copy.py, which opens both stores on the controller.

from __future__ import annotations

DOCUMENTATION = r"""
---
module: store_copy
short_description: Copy stacks with their whole history from one state store to another
version_added: 0.1.0
description:
  - Copies stacks from the store O(source) to the store O(target), for example from
    the embedded SQLite file of a workstation to the shared PostgreSQL store of
    AWX, or from one SQLite file to another.
  - Each stack comes with its whole history, so that it can be updated and rolled
    back from the target as from the source, namely its nested stacks, every
    revision, its resources (live ones and those kept retired for a rollback),
    events and hooks. Stacks that were deleted are copied too, as history.
  - Rows are copied as they are stored, not read and written again, so values the
    store keeps encrypted stay encrypted and no key is needed to copy them.
  - The target is written in one transaction, verified before it is committed.
    For every table, the copied rows read back from the target must have the
    source's row count and content digest (SHA-256), otherwise nothing is
    written. RV(tables) reports both figures.
  - A stack that the target has already (a live stack of the same name, or the
    same stack copied before) is not overwritten. The task fails, names those
    stacks and writes nothing, unless O(overwrite=true).
  - While it copies, the task holds each live stack's lock in both stores, so no
    run changes the stack in the source or starts on it in the target
    meanwhile (see O(lock_timeout)).
  - In check mode the task reports what it would copy (RV(stacks), RV(tables))
    and the conflicts, and writes nothing. A SQLite target that does not exist
    is not created then; a PostgreSQL target gets its (empty) tables if it has none.
  - See C(docs/store.md) in the collection.
options:
  source:
    description:
      - URL of the store to copy from, as the O(hotplay.stacks.stack#module:store)
        option takes it (V(sqlite:////abs/path.db), V(postgresql://user@host/db)).
      - A SQLite source file that does not exist fails the task (it is not
        created empty).
      - The source is only read (and its stacks locked while they are copied).
    type: str
    required: true
  target:
    description:
      - URL of the store to copy to. Its tables are created on first use.
      - When not set, the E(HOTPLAY_STORE) environment variable on the controller,
        as an AWX credential of the C(hotplay.stacks store) type sets it (see
        C(docs/awx.md)); when that is not set either, the task fails.
      - Must be another store than O(source).
    type: str
  stacks:
    description:
      - Names of the stacks to copy (with the deleted stacks of the same name, as
        history). All the stacks of the source when empty.
    type: list
    elements: str
    default: []
  overwrite:
    description:
      - Replace the stacks that the target has already. The target's stack of the
        same name, with its nested stacks and its history in the target, is
        deleted and the source's is copied in its place.
      - The physical resources are not touched, only what the store records
        about them.
    type: bool
    default: false
extends_documentation_fragment:
  - hotplay.stacks.lock
  - hotplay.stacks.attributes
  - hotplay.stacks.attributes.controller
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  idempotent:
    support: none
    details:
      - Run again, the copy finds the stacks it copied in the target and fails,
        unless O(overwrite=true), which copies them again and reports
        C(changed=true).
notes:
  - The module is not in the C(hotplay.stacks.stacks) action group, since it has
    two stores and no O(hotplay.stacks.stack#module:store) option.
  - Event ids are kept, unless the target uses them already; then the copied
    events are numbered after the target's, in the same order.
  - Both stores must have been opened by the same version of this collection (the
    same tables and columns); a source whose tables this version does not know is
    refused.
  - What a store records about itself besides its schema version (in its C(meta)
    table) is copied when the target does not have it, and must be the same when
    both have it; otherwise the copy is refused.
seealso:
  - module: hotplay.stacks.stack_lock
  - module: hotplay.stacks.stack
  - module: hotplay.stacks.stack_info
requirements:
  - psycopg >= 3 (Python, on the controller), when O(source) or O(target) is a PostgreSQL store
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: Preview moving the workstation's stacks to the shared store
  hotplay.stacks.store_copy:
    source: sqlite:////home/ops/.local/share/hotplay/stacks.db
    target: postgresql://hotplay@db.example.com/hotplay
  check_mode: true
  register: preview

- name: Move them
  hotplay.stacks.store_copy:
    source: sqlite:////home/ops/.local/share/hotplay/stacks.db
    target: postgresql://hotplay@db.example.com/hotplay
    lock_timeout: 300

- name: Copy one stack again, replacing the copy made before
  hotplay.stacks.store_copy:
    source: sqlite:////srv/hotplay/stacks.db
    target: sqlite:////srv/hotplay/backup.db
    stacks:
      - web
    overwrite: true

# In AWX, the store credential sets HOTPLAY_STORE: the target is the shared store.
- name: Copy a SQLite file kept in the project into the AWX store
  hotplay.stacks.store_copy:
    source: "sqlite:///{{ playbook_dir }}/state/stacks.db"
"""

RETURN = r"""
stacks:
  description:
    - The stacks copied (or that would be copied, in check mode), by name; a
      name that was deleted and created again has one entry per incarnation.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: Name of the stack.
      type: str
      sample: web
    id:
      description: The stack's id, the same in both stores.
      type: str
      sample: 3f1c9a52-5d7e-4c0e-9c52-1b7d2f0e8a11
    deleted:
      description: Whether the stack was deleted (copied as history).
      type: bool
      sample: false
    status:
      description: The stack's status, or C(DELETED).
      type: str
      sample: UPDATE_COMPLETE
    revisions:
      description: The number of its last revision.
      type: int
      sample: 4
    nested_stacks:
      description: How many nested stacks came with it.
      type: int
      sample: 2
    action:
      description:
        - V(copied), or V(replaced) when it replaced the target's stack
          (O(overwrite)); in check mode V(would copy) or V(would replace).
      type: str
      sample: copied
tables:
  description:
    - Per table of the store, the rows copied and the SHA-256 digest of their
      content, the same in the source and in the target. Events are compared in
      order, their ids aside.
  returned: success
  type: dict
  sample:
    stacks: {rows: 3, digest: 9b0e6f0c1d...}
    revisions: {rows: 7, digest: 52c1a4d0f3...}
    resources: {rows: 12, digest: 0de58a9e77...}
    events: {rows: 61, digest: e3b86a15c4...}
    hooks: {rows: 0, digest: e3b0c44298...}
msg:
  description: What was done, in a sentence, with the store URLs without passwords.
  returned: always
  type: str
  sample: copied 3 stacks, 1 of them deleted (history) with 7 revisions from sqlite:////srv/s.db to postgresql://hotplay:***@db/hotplay
"""
