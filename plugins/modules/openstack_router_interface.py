#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: openstack_router_interface
short_description: Attach one subnet or port to a Neutron router, leaving its other interfaces alone
version_added: 0.1.0
description:
  - The module behind C(OS::Neutron::RouterInterface) in the collection's OpenStack
    environment (C(hotplay.stacks.openstack)); it can be used on its own too.
  - Adds or removes one interface of a router with openstacksdk's
    C(add_interface_to_router) and C(remove_interface_from_router), as Heat's
    C(OS::Neutron::RouterInterface) does. The router's other interfaces are never
    touched, so interfaces made side by side on one router all stay (the
    C(interfaces) option of M(openstack.cloud.router) sets the router's whole list).
  - Idempotent. It reads the router's interface ports first and changes nothing when
    the interface is already there (present) or already gone (absent).
options:
  router:
    description: The router, by name or id.
    type: str
    required: true
  subnet:
    description: The subnet to attach, by name or id. Give O(subnet) or O(port).
    type: str
  port:
    description: The port to attach, by name or id. Give O(subnet) or O(port).
    type: str
  state:
    description: Whether the interface should be there.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - hotplay.stacks.attributes
  - hotplay.stacks.openstack
attributes:
  check_mode:
    support: full
    details: Reads the router's interfaces and reports whether it would add or remove one.
  diff_mode:
    support: none
  idempotent:
    support: full
requirements:
  - openstacksdk (Python, on the host the module runs on)
seealso:
  - module: hotplay.stacks.stack
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: Attach a subnet to a router
  hotplay.stacks.openstack_router_interface:
    cloud: mycloud
    router: app-router
    subnet: app-subnet

- name: Detach it again
  hotplay.stacks.openstack_router_interface:
    cloud: mycloud
    router: app-router
    subnet: app-subnet
    state: absent
"""

RETURN = r"""
id:
  description:
    - The interface as Heat identifies it, C(<router id>:subnet_id=<subnet id>) or
      C(<router id>:port_id=<port id>).
  returned: when the router and the subnet or port exist
  type: str
  sample: 5e3c7ed4-1a2b-4c5d-8e9f-0a1b2c3d4e5f:subnet_id=0f1e2d3c-4b5a-6978-8a9b-c0d1e2f3a4b5
router_id:
  description: The router's id.
  returned: when the router exists
  type: str
  sample: 5e3c7ed4-1a2b-4c5d-8e9f-0a1b2c3d4e5f
subnet_id:
  description: The subnet's id (the first subnet of the port, for O(port)).
  returned: when the interface exists
  type: str
  sample: 0f1e2d3c-4b5a-6978-8a9b-c0d1e2f3a4b5
port_id:
  description: The id of the router's port on the subnet.
  returned: when the interface exists
  type: str
  sample: 9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.hotplay.stacks.plugins.module_utils._openstack import (
    CLOUD_OPTION,
    connect,
    sdk_error,
)

# Device owners of the ports Neutron makes for a router's interfaces.
INTERFACE_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                    "network:ha_router_replicated_interface")


def _interface_port(conn, router_id, subnet_id=None, port_id=None):
    """The router's port for the subnet (or the port itself), or None."""
    for port in conn.network.ports(device_id=router_id):
        if port.device_owner not in INTERFACE_OWNERS:
            continue
        if port_id is not None and port.id == port_id:
            return port
        if subnet_id is not None and any(ip.get("subnet_id") == subnet_id for ip in port.fixed_ips or ()):
            return port
    return None


def _described(router_id, key, value, port):
    """What the module returns about an interface (``port``: None when absent)."""
    result = {"id": "%s:%s=%s" % (router_id, key, value), "router_id": router_id}
    if port is not None:
        result["port_id"] = port.id
        subnets = [ip.get("subnet_id") for ip in port.fixed_ips or ()]
        result["subnet_id"] = value if key == "subnet_id" else (subnets[0] if subnets else None)
    return result


def _find(conn, module, kind, name_or_id, must_exist):
    finder = getattr(conn.network, "find_" + kind)
    found = finder(name_or_id, ignore_missing=True)
    if found is None and must_exist:
        module.fail_json(msg="No %s found with name or id %s" % (kind, name_or_id))
    return found


def run(module, conn):
    params = module.params
    present = params["state"] == "present"
    router = _find(conn, module, "router", params["router"], present)
    kind = "subnet" if params["subnet"] else "port"
    target = _find(conn, module, kind, params[kind], present)
    if router is None or target is None:  # absent: nothing to remove (Heat ignores not found)
        module.exit_json(changed=False, **({"router_id": router.id} if router is not None else {}))
    key = kind + "_id"
    lookup = {key: target.id}
    port = _interface_port(conn, router.id, **lookup)
    if present == (port is not None):
        module.exit_json(changed=False, **_described(router.id, key, target.id, port))
    if not module.check_mode:
        if present:
            conn.network.add_interface_to_router(router, **lookup)
            port = _interface_port(conn, router.id, **lookup)
        else:
            conn.network.remove_interface_from_router(router, **lookup)
            port = None
    module.exit_json(changed=True, **_described(router.id, key, target.id, port))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            CLOUD_OPTION,
            router={"type": "str", "required": True},
            subnet={"type": "str"},
            port={"type": "str"},
            state={"type": "str", "choices": ["present", "absent"], "default": "present"},
        ),
        mutually_exclusive=[("subnet", "port")],
        required_one_of=[("subnet", "port")],
        supports_check_mode=True,
    )
    conn = connect(module)
    try:
        run(module, conn)
    except sdk_error() as error:
        module.fail_json(msg="%s: %s" % (type(error).__name__, error))


if __name__ == "__main__":
    main()
