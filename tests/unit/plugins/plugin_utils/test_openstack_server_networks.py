# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a change of a server's ``networks`` detaches and attaches in place, as
Heat 27's ServerNetworkMixin.calculate_networks decides it (server_networks.py);
the calls the server makes for it: test_openstack_nova.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.server_networks import (
    NetworksChange,
    best_match,
    calculate_networks,
    can_update_port_extras,
    interface_entry,
    port_extra_body,
)

INTERFACES = [interface_entry({"port_id": "p1", "net_id": "n1",
                               "fixed_ips": [{"ip_address": "10.0.0.5", "subnet_id": "s1"}]}),
              interface_entry({"port_id": "p2", "net_id": "n2",
                               "fixed_ips": [{"ip_address": "10.1.0.5", "subnet_id": "s2"}]})]


def network_of(entry: Mapping[str, Any]) -> str | None:
    return entry.get("network") or {"s1": "n1", "s2": "n2"}.get(entry.get("subnet") or "")


def calculate(old: list[dict[str, Any]] | None, new: list[dict[str, Any]] | None,
              internal: tuple[str, ...] = ()) -> NetworksChange:
    return calculate_networks(old, new, INTERFACES, list(internal), network_of)


def test_an_interface_is_matched_by_port_then_fixed_ip_then_most_shared_keys() -> None:
    assert best_match(INTERFACES, {"port": "p2"}) is INTERFACES[1]
    assert best_match(INTERFACES, {"port": "p2", "network": "n1"}) is None
    assert best_match(INTERFACES, {"fixed_ip": "10.0.0.5"}) is INTERFACES[0]
    assert best_match(INTERFACES, {"network": "n2", "subnet": "s2"}) is INTERFACES[1]
    assert best_match(INTERFACES, {}) is None  # nothing shared


def test_unchanged_entries_are_kept_and_only_the_new_one_attached() -> None:
    change = calculate([{"network": "n1"}, {"port": "p2"}],
                       [{"network": "n1"}, {"port": "p2"}, {"network": "n3"}])
    assert change.detach == [] and [e["network"] for e in change.attach] == ["n3"]


def test_an_entry_taken_out_detaches_its_interface_and_lets_its_floating_ip_go() -> None:
    change = calculate([{"network": "n1"}, {"port": "p2", "floating_ip": "f"}], [{"network": "n1"}])
    assert (change.detach, change.attach, change.disassociate) == (["p2"], [], ["f"])


def test_a_tag_changed_on_the_same_port_detaches_and_attaches_that_port() -> None:
    change = calculate([{"port": "p1"}], [{"port": "p1", "tag": "web"}])
    assert change.detach == ["p1"] and change.attach[0]["port"] == "p1"


def test_a_subnet_entry_matches_the_interface_on_its_subnets_network() -> None:
    assert calculate([{"subnet": "s1"}, {"port": "p2"}], [{"subnet": "s1"}]).detach == ["p2"]


def test_every_entry_taken_out_attaches_one_nova_chooses() -> None:
    change = calculate([{"network": "n1"}, {"network": "n2"}], [])
    assert change.detach == ["p1", "p2"] and change.attach == [{}]


def test_a_server_made_without_networks_gives_up_what_nova_chose() -> None:
    change = calculate(None, [{"network": "n3"}])
    assert change.detach == ["p1", "p2"] and change.attach[0]["network"] == "n3"
    assert calculate(None, []).empty


def test_allocate_network_detaches_everything() -> None:
    assert calculate([{"network": "n1"}], [{"allocate_network": "none"}]).detach == ["p1", "p2"]
    auto = calculate([{"network": "n1"}], [{"allocate_network": "auto"}])
    assert auto.attach == [{"allocate_network": "auto"}]
    back = calculate([{"allocate_network": "none"}], [{"network": "n1"}])
    assert back.detach == ["p1", "p2"] and back.attach[0]["network"] == "n1"


def test_port_extra_properties_change_in_place_only_on_a_port_the_server_made() -> None:
    old = [{"subnet": "s1", "port_extra_properties": {"admin_state_up": True}}]
    new = [{"subnet": "s1", "port_extra_properties": {"admin_state_up": False}}]
    made = calculate(old, new, internal=("p1",))
    assert made.update_ports == [("p1", {"admin_state_up": False})] and not made.detach and not made.attach
    assert calculate(old, new).detach == ["p1"]  # not the server's port: detached and attached
    assert not can_update_port_extras({}, {"mac_address": "fa:16:3e:00:00:01"})
    assert not can_update_port_extras({"admin_state_up": True}, None)


def test_port_extra_properties_are_sent_as_heat_builds_them() -> None:
    assert port_extra_body({"value_specs": {"x": 1}, "admin_state_up": False, "no_fixed_ips": True,
                            "allowed_address_pairs": [{"ip_address": "10.0.0.9", "mac_address": None}]}) == {
        "x": 1, "admin_state_up": False, "allowed_address_pairs": [{"ip_address": "10.0.0.9"}]}
