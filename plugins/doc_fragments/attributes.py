# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared descriptions of the attributes every module of this collection documents.

A module lists the fragments it needs and states its own C(support) level for each
attribute, for example::

    extends_documentation_fragment:
      - hotplay.stacks.attributes
      - hotplay.stacks.attributes.actiongroup_stacks
      - hotplay.stacks.attributes.controller
    attributes:
      check_mode:
        support: full
      diff_mode:
        support: none
      idempotent:
        support: full
"""

from __future__ import annotations


class ModuleDocFragment:
    """Attribute descriptions; the modules state the support levels."""

    # check_mode, diff_mode, idempotent: every module documents these three.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description:
      - Can run in C(check_mode) and return a changed status prediction without
        modifying the stack, its resources or the store.
  diff_mode:
    description:
      - Will return details on what has changed (or would change in C(check_mode))
        when run in diff mode.
  idempotent:
    description:
      - When run twice in a row outside check mode with the same arguments and the
        same inputs (templates, environments, parameters), the second run reports
        no change and changes nothing.
"""

    # Membership of the collection's action group, for module_defaults.
    ACTIONGROUP_STACKS = r"""
options: {}
attributes:
  action_group:
    description:
      - Use C(group/hotplay.stacks.stacks) in C(module_defaults) to set default
        values for the options of this module, typically O(store).
    support: full
    membership:
      - hotplay.stacks.stacks
"""

    # Modules implemented entirely by an action plugin on the controller.
    CONTROLLER = r"""
options: {}
attributes:
  action:
    description:
      - Implemented by an action plugin that runs on the Ansible controller.
    support: full
  async:
    description:
      - Supports being used with the C(async) keyword.
    support: none
  platform:
    description:
      - The engine and the store run on the Ansible controller, so the module
        works whatever the target host's platform.
    support: full
    platforms: all
"""
