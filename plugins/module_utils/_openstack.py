# -*- coding: utf-8 -*-
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What this collection's own OpenStack modules share: the ``cloud`` option and an
openstacksdk connection made from it, as the openstack.cloud modules make theirs
(a clouds.yaml entry; without one, openstacksdk's defaults: ``OS_CLOUD``, ``OS_*``)."""

from __future__ import annotations

import traceback

from ansible.module_utils.basic import missing_required_lib

try:
    import openstack
    IMPORT_ERROR = None
except ImportError:
    openstack = None
    IMPORT_ERROR = traceback.format_exc()

CLOUD_OPTION = {"cloud": {"type": "str"}}


def connect(module):
    """An openstacksdk connection for ``module`` (fails the module when
    openstacksdk is missing or the cloud cannot be reached)."""
    if openstack is None:
        module.fail_json(msg=missing_required_lib("openstacksdk"), exception=IMPORT_ERROR)
    cloud = module.params.get("cloud")
    try:
        return openstack.connect(cloud=cloud) if cloud else openstack.connect()
    except openstack.exceptions.SDKException as error:
        module.fail_json(msg="Cannot connect to the cloud %s: %s" % (cloud or "(openstacksdk defaults)", error))


def sdk_error():
    """openstacksdk's base exception (a placeholder class when it is missing)."""
    return openstack.exceptions.SDKException if openstack is not None else Exception
