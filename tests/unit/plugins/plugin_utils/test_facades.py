# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's facade rule (template_resource.py ``_validate_against_facade``): a provider
template mapped over a type that exists offers that type's interface, checked when
the stack is validated, before anything runs. The bad-input corpus
(providers/facade) has one case per message; here: what passes, and the shipped
OpenStack environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.environment import parse_environment
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.loader import (
    TemplateSource,
    load_template_yaml,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.definition import (
    StackDefinition,
    StackIdentity,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.facades import (
    OPENSTACK_FACADES,
    check_against_facade,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.nested import as_delimited_list

SHIPPED = Path(__file__).resolve().parents[4] / "environments" / "openstack"


def define(template: str, provider: str, mapped: str, defaults: dict[str, Any] | None = None) -> StackDefinition:
    env = parse_environment({"resource_registry": {mapped: "provider.yaml"},
                             "parameter_defaults": defaults or {}}, "env.yaml")
    source = TemplateSource("t.yaml", load_template_yaml(template, "t.yaml"), {"provider.yaml": provider})
    return StackDefinition(source, env, {}, StackIdentity("s", "s-id"))


RANDOM = """
heat_template_version: 2021-04-16
resources:
  pick: {type: OS::Heat::RandomString, properties: {length: 4}}
"""


def test_a_builtin_type_is_a_facade_too():
    """Heat checks against any type it knows: here our OS::Heat::RandomString."""
    without_value = """
heat_template_version: 2021-04-16
parameters:
  length: {type: number, default: 32}
outputs:
  name: {value: x}
"""
    with pytest.raises(StackValidationFailed) as refused:
        define(RANDOM, without_value, "OS::Heat::RandomString")
    assert str(refused.value) == ("t.yaml: resources.pick<provider.yaml>.outputs: Attribute value "
                                  "for facade OS::Heat::RandomString missing in provider")


def test_a_number_parameter_stands_for_an_integer_property():
    """length is an Integer property: Heat's allowed_param_prop_type makes a number
    parameter match it, and a string one not."""
    provider = """
heat_template_version: 2021-04-16
parameters:
  length: {type: %s, default: 32}
outputs:
  value: {value: abcd}
"""
    define(RANDOM, provider % "number", "OS::Heat::RandomString")
    with pytest.raises(StackValidationFailed, match=r"Property length type mismatch between facade "
                       r"OS::Heat::RandomString \(Integer\) and provider \(String\)"):
        define(RANDOM, provider % "string", "OS::Heat::RandomString")


def test_parameter_defaults_make_a_provider_parameter_optional():
    """A parameter without a default that the environment's parameter_defaults give is
    not required (Heat builds the provider's schema with them)."""
    provider = """
heat_template_version: 2021-04-16
parameters:
  length: {type: number, default: 32}
  openstack_cloud: {type: string}
outputs:
  value: {value: abcd}
"""
    with pytest.raises(StackValidationFailed, match="Provider requires property openstack_cloud unknown"):
        define(RANDOM, provider, "OS::Heat::RandomString")
    define(RANDOM, provider, "OS::Heat::RandomString", defaults={"openstack_cloud": "mycloud"})


def test_a_type_nobody_knows_has_no_facade():
    define("""
heat_template_version: 2021-04-16
resources:
  web: {type: Site::Web}
""", "heat_template_version: 2021-04-16\n", "Site::Web")


@pytest.mark.parametrize("mapped", sorted(yaml.safe_load(
    (SHIPPED / "environment.yaml").read_text())["resource_registry"].items()))
def test_the_shipped_provider_templates_pass(mapped):
    type_name, file_name = mapped
    provider = yaml.safe_load((SHIPPED / file_name).read_text())
    check_against_facade(type_name, provider, f"resources.r<{file_name}>", ())


def test_every_mapped_type_has_a_facade():
    registry = yaml.safe_load((SHIPPED / "environment.yaml").read_text())["resource_registry"]
    assert set(registry) <= set(OPENSTACK_FACADES)


def test_a_list_of_maps_reaches_a_provider_as_heat_passes_it():
    """Heat's TemplateResource.child_params for a comma_delimited_list parameter."""
    assert as_delimited_list([{"network": "private", "fixed_ip": "10.0.0.5"}, {"port": "p1"}]) == [
        ".member.0.network=private", ".member.0.fixed_ip=10.0.0.5", ".member.1.port=p1"]
    assert as_delimited_list(["a", None, "b"]) == ["a", "", "b"]
    assert as_delimited_list([]) == []
    assert as_delimited_list("a,b") == "a,b"


PORT_PROVIDER = (SHIPPED / "neutron_port.yaml").read_text()


def _port_properties(template: str, provider: str = PORT_PROVIDER) -> Any:
    definition = define(template, provider, "OS::Neutron::Port")
    return definition.resources["port"].properties


def test_hidden_spellings_reach_a_provider_as_the_properties_that_replaced_them():
    """Heat's translation rules of OS::Neutron::Port: network_id is network, and a
    fixed_ips entry's subnet_id is subnet (heat-templates' servers_in_new_neutron_net
    writes them so)."""
    properties = _port_properties("""
heat_template_version: 2013-05-23
resources:
  port:
    type: OS::Neutron::Port
    properties:
      network_id: private
      fixed_ips: [{subnet_id: private-subnet, ip_address: 10.0.0.5}, {subnet: other}]
""")
    assert properties == {"network": "private",
                          "fixed_ips": [{"subnet": "private-subnet", "ip_address": "10.0.0.5"},
                                        {"subnet": "other"}]}


@pytest.mark.parametrize(("given", "names"), [
    ("{network: a, network_id: b}", "network, network_id"),
    ("{network: a, fixed_ips: [{subnet: s, subnet_id: t}]}", "fixed_ips.subnet, fixed_ips.subnet_id"),
])
def test_both_spellings_are_refused_in_heats_words(given, names):
    with pytest.raises(StackValidationFailed) as refused:
        _port_properties(f"""
heat_template_version: 2013-05-23
resources:
  port: {{type: OS::Neutron::Port, properties: {given}}}
""")
    assert f"Cannot define the following properties at the same time: {names}" in str(refused.value)
    assert "resources.port.properties" in str(refused.value)


def test_a_provider_that_declares_a_hidden_spelling_receives_it_as_written():
    """Heat translates only for its own types: a provider template gets what it declares."""
    provider = PORT_PROVIDER.replace("\nparameters:\n", "\nparameters:\n  network_id: {type: string, default: ''}\n")
    assert "network_id: {type: string" in provider
    properties = _port_properties("""
heat_template_version: 2013-05-23
resources:
  port: {type: OS::Neutron::Port, properties: {network: a, network_id: b}}
""", provider)
    assert properties == {"network": "a", "network_id": "b"}
