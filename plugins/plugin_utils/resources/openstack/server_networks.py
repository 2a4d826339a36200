# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a change of a server's ``networks`` does in place, as Heat 27's
``ServerNetworkMixin.calculate_networks`` decides it
(heat/engine/resources/openstack/nova/server_network_mixin.py): pure, given the
old and new entries (names already resolved to ids, as Heat's RESOLVE rules
make them), the server's interfaces as Nova lists them, and the ports the
server made itself (``internal_ports``).

- The old entries are first matched with the server's interfaces (an entry
  naming no port takes the port, network, first address and subnet of its
  interface), then each new entry with an old one: one whose keys all hold the
  same values (a port or fixed_ip compared first) is kept as it is.  Anything
  else of an entry that changes (its ``floating_ip``, ``tag``,
  ``port_extra_properties`` of a port the server did not make) detaches its
  interface and attaches one as the new entry says, even on the same port.
- ``port_extra_properties`` of a port the server made change on that port
  when Neutron can change each of them (Heat's ``_can_update_internal_port``).
- The ports of the old entries left over are detached, their floating IPs let
  go; the new entries left over are attached in their order (a port, a port
  made for a subnet, or a network, Nova making the port).
- No entry left at all: an interface Nova chooses is attached, as when a server
  is created without networks; ``allocate_network`` detaches every interface
  (and ``auto`` attaches the project's one network).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Heat's _IFACE_MANAGED_KEYS and _NETWORK_KEYS.
IFACE_MANAGED_KEYS = ("port", "network", "fixed_ip", "subnet")
NETWORK_KEYS = ("uuid", "network", "fixed_ip", "port", "subnet", "port_extra_properties",
                "floating_ip", "allocate_network", "tag")
# OS::Neutron::Port's extra properties Neutron changes on a port (update_allowed in
# Heat's Port.extra_properties_schema; mac_address is not).
UPDATABLE_PORT_EXTRAS = frozenset({"value_specs", "admin_state_up", "allowed_address_pairs",
                                   "binding:vnic_type", "qos_policy", "port_security_enabled",
                                   "propagate_uplink_status", "no_fixed_ips"})

Entry = dict[str, Any]


@dataclass
class NetworksChange:
    """What to do, in Heat's order: ``update_ports`` (a port the server made, its
    extra properties changed in place), ``disassociate`` (floating IPs of entries
    that go), then ``detach`` (ports), then ``attach`` (new entries, in order;
    their index names a port made for them)."""

    detach: list[str] = field(default_factory=list)
    attach: list[Entry] = field(default_factory=list)
    disassociate: list[str] = field(default_factory=list)
    update_ports: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.detach or self.attach or self.disassociate or self.update_ports)


def interface_entry(interface: Mapping[str, Any]) -> Entry:
    """An interface (Nova's ``os-interface``) as an entry: its port, network, and its
    first address and subnet (Heat's ``get_iface_props``)."""
    fixed = interface.get("fixed_ips") or []
    first = fixed[0] if fixed else {}
    return {"port": interface.get("port_id"), "network": interface.get("net_id"),
            "fixed_ip": first.get("ip_address"), "subnet": first.get("subnet_id")}


def allocate_string(networks: Sequence[Mapping[str, Any]] | None) -> str | None:
    """Heat's ``_str_network``: an entry's ``allocate_network``."""
    for entry in networks or []:
        if entry.get("allocate_network"):
            return str(entry["allocate_network"])
    return None


def _is_subset(subset: Mapping[str, Any], superset: Mapping[str, Any]) -> bool:
    return all(key in superset and superset[key] == value for key, value in subset.items())


def _matching_items(specified: Mapping[str, Any], candidate: Mapping[str, Any]) -> int:
    return sum(1 for key, value in specified.items() if key in candidate and candidate[key] == value)


def best_match(candidates: Sequence[Entry], specified: Mapping[str, Any]) -> Entry | None:
    """Heat's ``_find_best_match``: the candidate with the same port, else with the
    same fixed_ip, holding every value ``specified`` gives; without either, the
    candidate holding them that shares the most keys (none shared: no match)."""
    for key in ("port", "fixed_ip"):
        if specified.get(key) is not None:
            return next((c for c in candidates
                         if c.get(key) == specified[key] and _is_subset(specified, c)), None)
    best, most = None, 0
    for candidate in candidates:
        if _is_subset(specified, candidate):
            shared = _matching_items(specified, candidate)
            if shared > most:
                best, most = candidate, shared
    return best


def match_interfaces(old_nets: list[Entry], interfaces: Sequence[Entry],
                     network_of: Callable[[Mapping[str, Any]], str | None]) -> None:
    """Heat's ``update_networks_matching_iface_port``: each old entry takes the
    port, network, address and subnet of the interface it was made as."""
    left = list(interfaces)
    for old in old_nets:
        if old.get("port") is None:
            old["network"] = network_of(old)
        reduced = {k: v for k, v in old.items() if k in IFACE_MANAGED_KEYS and v is not None}
        match = best_match(left, reduced)
        if match is not None:
            old.update(match)
            left.remove(match)


def can_update_port_extras(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Heat's ``_can_update_internal_port``: every changed extra property is one
    Neutron changes in place (taking them all out is not)."""
    if new is None:
        return False
    old = old or {}
    return all(key in UPDATABLE_PORT_EXTRAS
               for key in set(old) | set(new) if old.get(key) != new.get(key))


def _exclude_kept(old_nets: list[Entry], new_nets: list[Entry], interfaces: Sequence[Entry],
                  internal_ports: Sequence[str], change: NetworksChange,
                  network_of: Callable[[Mapping[str, Any]], str | None]) -> list[Entry]:
    """Heat's ``_exclude_not_updated_networks``: the entries that stay, taken out of
    both lists."""
    kept: list[Entry] = []
    match_interfaces(old_nets, interfaces, network_of)
    for entry in (*new_nets, *old_nets):
        for key in NETWORK_KEYS:
            entry[key] = entry.get(key) or None  # '' is None
    for new in list(new_nets):
        reduced = {k: v for k, v in new.items() if k not in IFACE_MANAGED_KEYS or v is not None}
        match = best_match(old_nets, reduced)
        if match is None:
            # The same interface but other port_extra_properties: a port the
            # server made is changed in place when Neutron can.
            match = best_match(old_nets, {k: v for k, v in reduced.items() if k != "port_extra_properties"})
            port = match.get("port") if match is not None else None
            if match is None or not port or port not in internal_ports or \
                    not can_update_port_extras(match.get("port_extra_properties"),
                                               new.get("port_extra_properties")):
                continue
            change.update_ports.append((str(port), new["port_extra_properties"]))
        kept.append(match)
        new_nets.remove(new)
        old_nets.remove(match)
    return kept


def calculate_networks(old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]] | None,
                       interfaces: Sequence[Entry], internal_ports: Sequence[str],
                       network_of: Callable[[Mapping[str, Any]], str | None]) -> NetworksChange:
    """Heat's ``calculate_networks``.  ``network_of`` is Heat's ``_get_network_id``
    (an entry's network, or its subnet's); an ``allocate_network: auto`` entry
    comes back as it is, for the caller to find the network."""
    change = NetworksChange()
    old_nets: list[Entry] = [copy.deepcopy(dict(e)) for e in old or []]
    new_nets: list[Entry] = [copy.deepcopy(dict(e)) for e in new or []]
    if allocate_string(new_nets):
        change.detach = [str(i["port"]) for i in interfaces if i.get("port")]
        if allocate_string(new_nets) == "auto":
            change.attach = [{"allocate_network": "auto"}]
        return change
    if not old_nets and not new_nets:
        return change  # the server kept the interface Nova chose
    kept: list[Entry] = []
    if not old_nets or allocate_string(old_nets):
        change.detach = [str(i["port"]) for i in interfaces if i.get("port")]
    else:
        kept = _exclude_kept(old_nets, new_nets, interfaces, internal_ports, change, network_of)
        for gone in old_nets:
            if gone.get("port"):
                change.detach.append(str(gone["port"]))
            if gone.get("floating_ip"):
                change.disassociate.append(str(gone["floating_ip"]))
    if not new_nets and not kept:
        change.attach = [{}]  # Nova chooses, as for a server created without networks
    else:
        change.attach = new_nets
    return change


def port_extra_body(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Heat's ``_build_port_extra_kwargs``: a port's extra properties as Neutron
    takes them (value_specs merged in; ``no_fixed_ips`` is not sent; an address
    pair's empty mac_address left out)."""
    extra = copy.deepcopy(dict(extra or {}))
    body: dict[str, Any] = dict(extra.pop("value_specs", None) or {})
    pairs = extra.pop("allowed_address_pairs", None)
    extra.pop("no_fixed_ips", None)
    body.update({key: value for key, value in extra.items() if value is not None})
    if pairs is not None:
        body["allowed_address_pairs"] = [
            {k: v for k, v in pair.items() if not (k == "mac_address" and v is None)} for pair in pairs]
    return body
