# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The O(store) and O(store_key) options shared by every module that reads or writes stack state."""

from __future__ import annotations


class ModuleDocFragment:
    """Documentation of the C(store) option."""

    DOCUMENTATION = r"""
options:
  store:
    description:
      - Where stack state (revisions, resources, events, locks) is recorded, as a URL
        that follows SQLAlchemy's database URL convention.
      - V(sqlite:////abs/path/stacks.db) (four slashes) is an absolute path to an
        embedded SQLite file; V(sqlite:///relative/stacks.db) (three slashes) is
        relative to the current working directory of C(ansible-playbook).
      - Shared stores for several controllers or AWX/AAP jobs use
        C(postgresql://user@host:port/dbname) URLs.
      - When not set, the value of the E(HOTPLAY_STORE) environment variable on the
        controller is used; when that is not set either, an embedded SQLite file in
        the per-user data directory, C($XDG_DATA_HOME/hotplay/stacks.db), that is
        C(~/.local/share/hotplay/stacks.db) when E(XDG_DATA_HOME) is unset.
      - The store is always opened on the controller, never on a managed host.
      - To set it once for every task of a play, use the C(hotplay.stacks.stacks)
        action group with C(module_defaults), see the examples.
    type: str
    required: false
  store_key:
    description:
      - The passphrase that encrypts the secrets this stack keeps in the store
        (values of C(hidden) parameters, and every stored value that holds one,
        such as resource properties and data, outputs, events, status reasons and
        plan records). The store keeps them only encrypted (AES-256-GCM, key derived
        with scrypt), never in plain text.
      - When not set, the value of the E(HOTPLAY_STORE_KEY) environment variable on
        the controller is used (in AWX or AAP, inject it from a credential).
      - Without a key, a stack that has secrets to keep is refused before anything
        is written, and so is any run (apply, preview, rollback, delete) of a stack
        that keeps encrypted values; reading a stack (M(hotplay.stacks.stack_info))
        shows each encrypted value as V(******).
      - A wrong key fails the task with C(the store key does not open stack NAME's
        secrets), before anything is read or written.
      - Give it from Ansible Vault; it is never logged (C(no_log)).
    type: str
    required: false
"""
