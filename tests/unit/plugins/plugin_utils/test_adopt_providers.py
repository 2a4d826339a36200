# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One of Heat's own resources (an OS::Neutron::Net: no nested stack in Heat) adopted
into the provider template an environment maps its type to, in-process: a provider of
the tests' own whose module resource keeps a "network" as a file of the fake host of
test_resources_module (named as the shipped templates name things, <its stack's name
less 12 characters> + <name_suffix>).  The real templates on a real cloud are in
tests/cloud/test_adopt_openstack.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
    AdoptRefused,
    AdoptRequest,
    adopt_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.export import heat_abandon

from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import StoreKey
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import sealed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

from test_resources_module import FakeHosts

NET_ATTRIBUTES = ("status", "name", "subnets", "admin_state_up", "tenant_id",
                  "port_security_enabled", "mtu", "qos_policy_id", "l2_adjacency", "segments")
PROVIDER = {
    "heat_template_version": "2018-08-31",
    "parameters": {"name": {"type": "string", "default": ""},
                   "admin_state_up": {"type": "boolean", "default": True}},
    "conditions": {"named": {"not": {"equals": [{"get_param": "name"}, ""]}}},
    "resources": {
        "name_suffix": {"type": "OS::Heat::RandomString", "properties": {
            "length": 12, "character_classes": [{"class": "lowercase"}, {"class": "digits"}]}},
        "network": {"type": "Hotplay::Ansible::Module", "properties": {
            # The fake "network" is a file whose content is its id.
            "module": "test.fake.file", "physical_id": "info.lines.0",
            "args": {
                "path": {"if": ["named", {"get_param": "name"}, {"list_join": ["", [
                    {"yaql": {"expression": "$.data.substring(0, len($.data) - 12)",
                              "data": {"get_param": "OS::stack_name"}}},
                    {"get_attr": ["name_suffix", "value"]}]]}]},
                "content": "net-1234",
                "mode": {"if": [{"get_param": "admin_state_up"}, "up", "down"]}}}},
    },
    "outputs": {"OS::stack_id": {"value": {"get_attr": ["network", "info", "lines", 0]}},
                "name": {"value": {"get_attr": ["network", "path"]}},
                **{name: {"value": None} for name in NET_ATTRIBUTES if name != "name"}},
}
TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"net": {"type": "OS::Neutron::Net"}},
            "outputs": {"net": {"value": {"get_resource": "net"}},
                        "net_name": {"value": {"get_attr": ["net", "name"]}}}}
HEAT_NAME = "web-net-abcdefghijkl"  # Heat's <stack>-<resource>-<12 random characters>


@pytest.fixture
def store(tmp_path: Path):
    opened = sealed(SqliteStore(str(tmp_path / "store.db")), StoreKey("unit test store key"))
    yield opened
    opened.close()


@pytest.fixture
def hosts() -> FakeHosts:
    return FakeHosts()


def write_inputs(folder: Path) -> tuple[str, str]:
    (folder / "net.yaml").write_text(yaml.safe_dump(PROVIDER))
    (folder / "env.yaml").write_text(yaml.safe_dump({"resource_registry": {"OS::Neutron::Net": "net.yaml"}}))
    (folder / "main.yaml").write_text(yaml.safe_dump(TEMPLATE))
    return str(folder / "main.yaml"), str(folder / "env.yaml")


def heat_data(resource_id: str = "net-1234") -> dict[str, Any]:
    return {"name": "web", "id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "action": "CREATE",
            "status": "COMPLETE", "template": TEMPLATE, "environment": {"parameters": {}},
            "files": {}, "resources": {"net": {
                "name": "net", "resource_id": resource_id, "type": "OS::Neutron::Net",
                "action": "CREATE", "status": "COMPLETE", "metadata": {}, "resource_data": {}}}}


def request(folder: Path, hosts: FakeHosts, **changes: Any) -> AdoptRequest:
    template, environment = write_inputs(folder)
    names = {"net-1234": HEAT_NAME, "net-5678": HEAT_NAME}
    made = AdoptRequest("web", read_abandon(heat_data(), "web.json"), "web.json", template=template,
                        environment=[environment], host=hosts.host(), nested_depth=1,
                        read_name=lambda _type, physical_id: names[physical_id])
    return replace(made, **changes)


def test_heat_resource_adopted_into_its_provider_keeps_name_and_id(store, hosts, tmp_path: Path) -> None:
    hosts.files["play"] = {HEAT_NAME: "net-1234"}  # what Heat made
    adopted = adopt_stack(store, request(tmp_path, hosts), "test").as_dict()
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert adopted["outputs"] == {"net": "net-1234", "net_name": HEAT_NAME}
    listed = {r["name"]: r["physical_id"] for r in adopted["resources"]}
    assert listed["net/network"] == "net-1234"
    # Checked in check mode before it ran; nothing was written to the "cloud".
    modes = [c["check_mode"] for c in hosts.calls if c["module"] == "test.fake.file"]
    assert modes == [True, False] and hosts.files["play"] == {HEAT_NAME: "net-1234"}

    template, environment = write_inputs(tmp_path)
    again = apply_stack(store, ApplyRequest(name="web", template=template, environment=[environment],
                                            host=hosts.host()), "test").as_dict()
    assert again["changed"] is False, again

    # Back to Heat: to Heat the provider is the OS::Neutron::Net it stands for.
    exported = heat_abandon(store, "web")["resources"]["net"]
    assert (exported["type"], exported["resource_id"]) == ("OS::Neutron::Net", "net-1234")
    assert "resources" not in exported


def test_a_thing_unlike_the_template_is_not_adopted(store, hosts, tmp_path: Path) -> None:
    hosts.files["play"] = {HEAT_NAME: "net-9999"}  # not what the template says it holds
    with pytest.raises(AdoptRefused) as refused:
        adopt_stack(store, request(tmp_path, hosts), "test")
    assert "test.fake.file would change the existing net-1234 (content)" in str(refused.value)
    assert store.list_stacks() == [] and hosts.files["play"] == {HEAT_NAME: "net-9999"}


def test_without_a_cloud_to_read_names_from_nothing_is_adopted(store, hosts, tmp_path: Path) -> None:
    with pytest.raises(AdoptRefused) as refused:
        adopt_stack(store, request(tmp_path, hosts, read_name=None), "test")
    assert str(refused.value) == (
        "web.json: stack web: the names of net (OS::Neutron::Net) are on the cloud, not in Heat's "
        "abandon data: give cloud (the clouds.yaml entry) to read them")
    assert store.list_stacks() == [] and not hosts.calls


def test_the_real_thing_must_be_the_one_heat_has(store, hosts, tmp_path: Path) -> None:
    """A module that finds something else by name (the id it returns is not Heat's)."""
    hosts.files["play"] = {HEAT_NAME: "net-1234"}
    req = request(tmp_path, hosts, abandoned=read_abandon(heat_data("net-5678"), "web.json"))
    with pytest.raises(AdoptRefused) as refused:
        adopt_stack(store, req, "test")
    assert "net.yaml found 'net-1234', not the OS::Neutron::Net net-5678 Heat has" in str(refused.value)
    assert store.list_stacks() == []


def test_a_module_without_check_mode_is_not_run_for_real(
        store, hosts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It cannot say whether it would change the thing, and an adoption changes nothing:
    it runs in check mode only, and the resource is recorded as the template says, with
    Heat's id and no attributes (openstack.cloud.network has no check mode).  The same
    files applied next change nothing; exported back, it is Heat's resource with its id."""
    provider = yaml.safe_load(yaml.safe_dump(PROVIDER))
    provider["resources"]["network"]["properties"]["module"] = "test.fake.nocheck"
    monkeypatch.setitem(globals(), "PROVIDER", provider)
    hosts.files["play"] = {HEAT_NAME: "net-1234"}
    adopted = adopt_stack(store, request(tmp_path, hosts), "test").as_dict()
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert [c["check_mode"] for c in hosts.calls] == [True]
    assert adopted["outputs"] == {"net": "net-1234", "net_name": None}
    listed = {r["name"]: r["physical_id"] for r in adopted["resources"]}
    assert listed["net/network"] == "net-1234"

    template, environment = write_inputs(tmp_path)
    again = apply_stack(store, ApplyRequest(name="web", template=template, environment=[environment],
                                            host=hosts.host()), "test").as_dict()
    assert again["changed"] is False, again
    assert [c["check_mode"] for c in hosts.calls] == [True] and hosts.files["play"] == {HEAT_NAME: "net-1234"}
    exported = heat_abandon(store, "web")["resources"]["net"]
    assert (exported["type"], exported["resource_id"]) == ("OS::Neutron::Net", "net-1234")
