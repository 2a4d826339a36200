# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pretend OpenStack for the provider-template tests (no cloud is reachable
here).  Each module call is appended to $MOCK_OPENSTACK_LOG; the cloud's objects
live in $MOCK_OPENSTACK_STATE.  Like the real modules, objects are found by id
or name, state=present creates or updates, state=absent deletes."""

from __future__ import annotations

import fcntl
import json
import os
import uuid

from ansible.module_utils.basic import AnsibleModule

COMMON = {"state": {"type": "str", "default": "present", "choices": ["present", "absent"]},
          "cloud": {"type": "raw"}, "wait": {"type": "raw"}, "timeout": {"type": "raw"}}
# module -> (the key its result uses, its options, options it cannot change in place)
MODULES = {
    "server": ("server", ["name", "image", "flavor", "key_name", "nics", "auto_ip", "security_groups",
                          "userdata", "meta", "availability_zone", "config_drive", "scheduler_hints"],
               ["image", "flavor", "key_name", "nics", "userdata", "availability_zone"]),
    "network": ("network", ["name", "admin_state_up", "shared", "port_security_enabled"], []),
    "subnet": ("subnet", ["name", "network_name", "cidr", "ip_version", "gateway_ip", "enable_dhcp",
                          "dns_nameservers", "allocation_pool_start", "allocation_pool_end", "host_routes"],
               ["network_name", "cidr", "ip_version"]),
    "port": ("port", ["name", "network", "fixed_ips", "security_groups", "mac_address", "admin_state_up",
                      "port_security_enabled", "allowed_address_pairs"], ["network", "mac_address"]),
    "router": ("router", ["name", "admin_state_up", "network", "enable_snat", "external_fixed_ips",
                          "interfaces"], []),
    "security_group": ("security_group", ["name", "description", "security_group_rules"], []),
    "resource": ("resource", ["id", "service", "type", "attributes", "non_updateable_attributes",
                              "updateable_attributes"], []),
    # The real module changes nothing of a volume in place but its size (extend),
    # which the provider template replaces instead.
    "volume": ("volume", ["name", "size", "description", "volume_type", "image", "snapshot_id",
                          "availability_zone", "metadata"],
               ["name", "size", "description", "volume_type", "image", "snapshot_id",
                "availability_zone", "metadata"]),
    "server_volume": ("volume", ["server", "volume", "device"], []),
    "networks_info": ("networks", ["name", "filters"], []),
    "server_metadata": ("server", ["name", "metadata"], []),
    "keypair": ("keypair", ["name", "public_key"], ["public_key"]),
}
# A network the pretend cloud has without a stack making it (the floating IPs' own).
EXTERNAL_NETWORKS = {"public": "5f1d6a3e-0000-4000-8000-00000000beef"}


def run(kind: str) -> None:
    key, options, _fixed = MODULES[kind]
    spec = {**COMMON, **{name: {"type": "raw"} for name in options}}
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = {k: v for k, v in module.params.items() if v is not None}
    with _locked_state() as cloud:
        _log({"module": f"openstack.cloud.{kind}", "args": params, "check_mode": module.check_mode})
        if kind == "networks_info":
            module.exit_json(changed=False, networks=_networks(cloud, params.get("name")))
        if kind == "server_metadata":
            changed, found = _set_metadata(cloud, params, module.check_mode)
        elif kind == "resource" and params.get("service") == "block_storage":
            changed, found = _update_volume(cloud, params, module.check_mode)
        else:
            changed, found = _converge(cloud, kind, params, module.check_mode)
    result = {"changed": changed, key: found}
    if found and "id" in found:
        result["id"] = found["id"]
    module.exit_json(**result)


def _converge(cloud: dict, kind: str, params: dict, check: bool) -> tuple[bool, dict | None]:
    objects = cloud.setdefault(kind, {})
    wanted = {k: v for k, v in params.items() if k not in COMMON}
    found = _find(objects, kind, wanted)
    if params["state"] == "absent":
        if found is not None and not check:
            del objects[found["id"]]
        return found is not None, None
    if found is None:
        made = {"id": str(uuid.uuid4()), **wanted, **_computed(cloud, kind, wanted)}
        if not check:
            objects[made["id"]] = made
        return True, made
    changes = {k: v for k, v in wanted.items() if found.get(k) != v and k not in MODULES[kind][2]}
    if changes and not check:
        found.update(changes)
    return bool(changes), {**found, **changes}


def _networks(cloud: dict, name: str | None) -> list[dict]:
    """openstack.cloud.networks_info: the networks with that name or id."""
    known = {**{n: {"id": i, "name": n} for n, i in EXTERNAL_NETWORKS.items()},
             **{o["id"]: o for o in cloud.get("network", {}).values()}}
    return [n for n in known.values() if name in (None, n["id"], n.get("name"))]


def _set_metadata(cloud: dict, params: dict, check: bool) -> tuple[bool, dict | None]:
    """openstack.cloud.server_metadata: keys set on the server named by name or id."""
    server = _find(cloud.setdefault("server", {}), "server", {"name": params["name"]})
    if server is None:
        raise SystemExit(f"mock: no server {params['name']}")
    meta = {**(server.get("meta") or {}), **(params.get("metadata") or {})}
    changed = meta != server.get("meta")
    if changed and not check:
        server["meta"] = meta
    return changed, {**server, "meta": meta}


def _update_volume(cloud: dict, params: dict, check: bool) -> tuple[bool, dict | None]:
    """openstack.cloud.resource on a block_storage volume: its updateable attributes
    set on the volume found by id."""
    attributes = params["attributes"]
    volume = cloud.setdefault("volume", {}).get(attributes["id"])
    if volume is None:
        raise SystemExit(f"mock: no volume {attributes['id']}")
    changes = {k: attributes[k] for k in params.get("updateable_attributes") or attributes
               if k in attributes and volume.get(k) != attributes[k]}
    if changes and not check:
        volume.update(changes)
    return bool(changes), {**volume, **changes}


def _find(objects: dict, kind: str, wanted: dict) -> dict | None:
    if kind == "server_volume":
        return next((o for o in objects.values()
                     if o["server"] == wanted.get("server") and o["volume"] == wanted.get("volume")), None)
    # openstack.cloud.resource names what it finds inside its attributes.
    named = {**(wanted.get("attributes") or {}), **wanted} if kind == "resource" else wanted
    handle = named.get("id") or named.get("name")
    if handle is None:
        return None
    return next((o for o in objects.values() if handle in (o["id"], o.get("name"))), None)


def _computed(cloud: dict, kind: str, wanted: dict) -> dict:
    """What a real cloud adds: addresses, statuses, ids of related things."""
    if kind == "server":
        ports = cloud.get("port", {})
        addresses = {}
        for nic in wanted.get("nics") or []:
            port = ports.get(nic.get("port-id", ""), {})
            ips = [ip.get("ip_address", "10.0.0.99") for ip in port.get("fixed_ips", [])] or ["10.0.0.99"]
            addresses.setdefault("private", []).extend({"addr": ip, "version": 4} for ip in ips)
        first = next((a["addr"] for net in addresses.values() for a in net), "")
        return {"addresses": addresses, "access_ipv4": first, "access_ipv6": "", "status": "ACTIVE",
                "instance_name": f"instance-{len(cloud.get('server', {})):08x}"}
    if kind == "resource":
        return {**wanted.get("attributes", {}), "floating_ip_address": "203.0.113.10", "status": "ACTIVE"}
    if kind == "network":
        return {"status": "ACTIVE", "mtu": 1450, "is_admin_state_up": wanted.get("admin_state_up", True),
                "subnet_ids": [], "project_id": "mock-project"}
    if kind == "port":
        return {"status": "DOWN", "mac_address": wanted.get("mac_address") or "fa:16:3e:00:00:01",
                "network_id": wanted.get("network"), "security_group_ids": wanted.get("security_groups", [])}
    if kind == "volume":
        return {"status": "available", "attachments": []}
    return {"status": "ACTIVE"}


class _locked_state:  # noqa: N801 - used as a context manager
    def __enter__(self) -> dict:
        path = os.environ["MOCK_OPENSTACK_STATE"]
        self.handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        self.handle.seek(0)
        text = self.handle.read()
        self.cloud = json.loads(text) if text.strip() else {}
        return self.cloud

    def __exit__(self, *exc: object) -> None:
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(json.dumps(self.cloud))
        # Closing flushes the write, then drops the lock.  Unlocking first let the next
        # module read the file between the truncate and the flush, and both writes then
        # landed (append mode): "Extra data" for the module after them, under load.
        self.handle.close()


def _log(entry: dict) -> None:
    with open(os.environ["MOCK_OPENSTACK_LOG"], "a", encoding="utf-8") as log:
        fcntl.flock(log, fcntl.LOCK_EX)
        log.write(json.dumps(entry) + "\n")
