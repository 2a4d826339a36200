#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: openstack_server_password
short_description: Set the administrator password of a Nova server
version_added: 0.1.0
description:
  - The module behind the C(admin_pass) property of C(OS::Nova::Server) in the
    collection's OpenStack environment (C(hotplay.stacks.openstack)), for which
    M(openstack.cloud.server) has no option.
  - Sets the password with Nova's C(changePassword) server action (openstacksdk's
    C(change_server_password)), the call Heat makes when C(admin_pass) changes. Heat
    gives the password to Nova when it creates the server; here it is set right
    after, so the server runs for a moment with the password Nova chose.
  - Nova never shows a password, so whether it is already set cannot be read. Each
    run sets it, and check mode is not supported.
options:
  server:
    description: The server, by name or id.
    type: str
    required: true
  password:
    description: The new administrator password. It is never logged (C(no_log)).
    type: str
    required: true
extends_documentation_fragment:
  - hotplay.stacks.attributes
  - hotplay.stacks.openstack
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
  idempotent:
    support: none
    details: Nova cannot show the password, so each run sets it again.
requirements:
  - openstacksdk (Python, on the host the module runs on)
seealso:
  - module: hotplay.stacks.stack
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: Set a server's administrator password
  hotplay.stacks.openstack_server_password:
    cloud: mycloud
    server: web-1
    password: "{{ web_admin_password }}"
"""

RETURN = r"""
id:
  description: The server's id.
  returned: success
  type: str
  sample: 7c1e4b9a-2f3d-4e5a-8b6c-9d0e1f2a3b4c
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hotplay.stacks.plugins.module_utils._openstack import (
    CLOUD_OPTION,
    connect,
    sdk_error,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            CLOUD_OPTION,
            server={"type": "str", "required": True},
            password={"type": "str", "required": True, "no_log": True},
        ),
        supports_check_mode=False,
    )
    conn = connect(module)
    try:
        server = conn.compute.find_server(module.params["server"], ignore_missing=True)
        if server is None:
            module.fail_json(msg="No server found with name or id %s" % module.params["server"])
        conn.compute.change_server_password(server, module.params["password"])
    except sdk_error() as error:
        module.fail_json(msg="%s: %s" % (type(error).__name__, error))
    module.exit_json(changed=True, id=server.id)


if __name__ == "__main__":
    main()
