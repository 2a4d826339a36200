# -*- coding: utf-8 -*-
# Copyright: hotplay.stacks contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The O(cloud) option of the stack actions: the cloud of native OpenStack types."""

from __future__ import annotations


class ModuleDocFragment:
    """Documentation of the stack actions' C(cloud) option."""

    DOCUMENTATION = r"""
options:
  cloud:
    description:
      - The OpenStack cloud of the stack's native OpenStack resource types, such
        as C(OS::Neutron::Net) and C(OS::Neutron::Subnet). An entry of
        C(clouds.yaml). Not given, openstacksdk's own choice (E(OS_CLOUD), or the
        E(OS_*) variables).
      - The task opens one session with the cloud, the first time a resource
        needs it, and authenticates once for the whole task, nested stacks
        included; the token is never stored, shown or returned.
      - Every call to the cloud, the authentication included, waits at most the
        entry's C(api_timeout) (clouds.yaml) to connect and between two reads of
        the answer, 60 seconds when the entry sets none. A task with a
        O(hotplay.stacks.stack#module:timeout) also ends the calls in flight when it
        is reached, and a cancelled task (time-out, SIGTERM, its controller gone)
        sends no further call; so a cloud that accepts connections and never answers
        cannot hold the task, or the stack's lock, beyond them.
      - Set it once per play for every stack action with C(module_defaults)
        (C(group/hotplay.stacks.stacks)).
      - Needs the Python package C(openstacksdk) on the controller, only when the
        stack has such resources.
    type: str
"""

    # The stack actions that never reach a cloud: the option is there for the group.
    UNUSED = r"""
options:
  cloud:
    description:
      - Not used by this action. Accepted so that C(module_defaults) can set
        O(hotplay.stacks.stack#module:cloud) once for every action of the group
        C(group/hotplay.stacks.stacks).
    type: str
"""
