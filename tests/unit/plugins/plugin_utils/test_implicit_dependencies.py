# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's implicit dependencies (the types' add_dependencies): a server waits for the
subnets of its networks, a port for its network's subnets, a floating IP for the router
whose gateway is on its network -- by type name, whatever implements the type."""

from __future__ import annotations

from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.environment import parse_environment
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.loader import (
    TemplateSource,
    load_template_yaml,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.definition import (
    StackDefinition,
    StackIdentity,
)

# The types' behaviour is not what is tested: OS::Heat::None takes any properties.
TYPES = ("OS::Nova::Server", "OS::Neutron::Net", "OS::Neutron::Subnet", "OS::Neutron::Port",
         "OS::Neutron::Router", "OS::Neutron::FloatingIP", "OS::Neutron::RouterInterface",
         "OS::Neutron::FloatingIPAssociation")
ENVIRONMENT = parse_environment({"resource_registry": {t: "OS::Heat::None" for t in TYPES}}, "env.yaml")


def requires(template: str, **parameters: Any) -> dict[str, set[str]]:
    data = load_template_yaml(template, "t.yaml")
    definition = StackDefinition(TemplateSource("t.yaml", data, {}), ENVIRONMENT, parameters,
                                 StackIdentity("s", "s-id"))
    return definition.requires_graph()


NETWORKS = """
heat_template_version: 2018-08-31
parameters:
  existing: {type: string, default: shared-net}
resources:
  net: {type: OS::Neutron::Net}
  other_net: {type: OS::Neutron::Net}
  subnet: {type: OS::Neutron::Subnet, properties: {network: {get_resource: net}}}
  subnet_by_attr: {type: OS::Neutron::Subnet, properties: {network: {get_attr: [net, name]}}}
  other_subnet: {type: OS::Neutron::Subnet, properties: {network: {get_resource: other_net}}}
  existing_subnet: {type: OS::Neutron::Subnet, properties: {network: {get_param: existing}}}
  server:
    type: OS::Nova::Server
    properties: {networks: [{network: {get_resource: net}}]}
  server_on_existing:
    type: OS::Nova::Server
    properties: {networks: [{network: shared-net}]}
  server_on_port:
    type: OS::Nova::Server
    properties: {networks: [{port: some-port}]}
  server_without_networks: {type: OS::Nova::Server}
  port: {type: OS::Neutron::Port, properties: {network: {get_resource: other_net}}}
  router:
    type: OS::Neutron::Router
    properties: {external_gateway_info: {network: public}}
  other_router:
    type: OS::Neutron::Router
    properties: {external_gateway_info: {network: elsewhere}}
  fip: {type: OS::Neutron::FloatingIP, properties: {floating_network: public}}
"""


def test_a_server_waits_for_the_subnets_of_the_networks_it_names() -> None:
    graph = requires(NETWORKS)
    assert graph["server"] == {"net", "subnet", "subnet_by_attr"}
    assert graph["server_on_existing"] == {"existing_subnet"}


def test_a_server_on_ports_alone_waits_for_every_subnet_as_in_heat() -> None:
    graph = requires(NETWORKS)
    assert graph["server_on_port"] == {"subnet", "subnet_by_attr", "other_subnet", "existing_subnet"}
    assert graph["server_without_networks"] == set()


def test_a_port_waits_for_its_networks_subnets() -> None:
    assert requires(NETWORKS)["port"] == {"other_net", "other_subnet"}


def test_a_floating_ip_waits_for_the_router_with_its_gateway_on_its_network() -> None:
    assert requires(NETWORKS)["fip"] == {"router"}


def test_nothing_waits_on_what_it_does_not_need() -> None:
    graph = requires(NETWORKS)
    assert graph["subnet"] == {"net"}
    assert graph["router"] == set()


INTERFACES = """
heat_template_version: 2018-08-31
resources:
  net: {type: OS::Neutron::Net}
  subnet: {type: OS::Neutron::Subnet, properties: {network: {get_resource: net}}}
  other_net: {type: OS::Neutron::Net}
  other_subnet: {type: OS::Neutron::Subnet, properties: {network: {get_resource: other_net}}}
  router: {type: OS::Neutron::Router}
  interface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet_id: {get_resource: subnet}}
  other_interface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: other_subnet}}
  port:
    type: OS::Neutron::Port
    properties:
      network: {get_resource: net}
      fixed_ips: [{subnet_id: {get_resource: subnet}}]
  port_without_ips: {type: OS::Neutron::Port, properties: {network: {get_resource: other_net}}}
  fip: {type: OS::Neutron::FloatingIP, properties: {floating_network: public, port_id: {get_resource: port}}}
  fip_on_network:
    type: OS::Neutron::FloatingIP
    properties: {floating_network: public, port_id: {get_resource: port_without_ips}}
  fip_alone: {type: OS::Neutron::FloatingIP, properties: {floating_network: public}}
  fip_by_attr:
    type: OS::Neutron::FloatingIP
    properties: {floating_network: public, port_id: {get_attr: [port, id]}}
  association:
    type: OS::Neutron::FloatingIPAssociation
    properties: {floatingip_id: {get_resource: fip_alone}, port_id: {get_resource: port}}
  association_on_network:
    type: OS::Neutron::FloatingIPAssociation
    properties: {floatingip_id: {get_resource: fip_alone}, port_id: {get_resource: port_without_ips}}
"""


def test_a_floating_ip_waits_for_the_router_interface_on_its_ports_subnet() -> None:
    """heat-templates' servers_in_new_neutron_net: Neutron refuses the floating IP
    until the port's subnet has a router interface (Heat:
    FloatingIP._add_router_interface_dependencies)."""
    graph = requires(INTERFACES)
    assert graph["fip"] == {"port", "interface"}
    # A port without fixed_ips: the interfaces on a subnet of its network.
    assert graph["fip_on_network"] == {"port_without_ips", "other_interface"}
    assert graph["fip_alone"] == set()


def test_a_floating_ip_association_waits_for_the_router_interface_on_its_ports_subnet() -> None:
    """Heat's FloatingIPAssociation.add_dependencies: no depends_on needed."""
    graph = requires(INTERFACES)
    assert graph["association"] == {"fip_alone", "port", "interface"}
    # Heat looks at the first fixed_ips entry only: a port without one adds nothing.
    assert graph["association_on_network"] == {"fip_alone", "port_without_ips"}
    # A floating IP reading its port's id: the same interface as with get_resource.
    assert graph["fip_by_attr"] == {"port", "interface"}
