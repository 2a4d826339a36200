# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's facade rule: a provider template mapped over a type that exists must offer
that type's interface (heat/engine/resources/template_resource.py,
``_validate_against_facade``).

The facade is the type as written in the template (``OS::Nova::Server``) when the
environment maps it to a provider template. Its schema is either a builtin type's
class, or, for the OpenStack types the shipped environment maps (which this
collection has no class for), the data below: property types and attribute names
as Heat 27's resource plugins declare them. The rule, in Heat's order:

- every required property of the facade is a parameter of the provider;
- a property the provider declares has the facade's type (a ``number`` parameter
  stands for an Integer property);
- every parameter the provider requires (no default, none in the environment's
  ``parameter_defaults``) is a property of the facade;
- every attribute of the facade is an output of the provider (``show`` always is).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import StackValidationFailed
from .base import resource_class


@dataclass(frozen=True)
class Facade:
    """What a provider must offer to stand for a type: property name -> Heat's type
    name (``String``, ``Integer``, ``Number``, ``Boolean``, ``List``, ``Map``,
    ``Any``), in Heat's order, the required ones, and the attribute names."""

    properties: Mapping[str, str]
    attributes: tuple[str, ...]
    required: tuple[str, ...] = field(default=())
    # Heat's REPLACE translation rules: a hidden (deprecated) spelling -> the property
    # that replaces it; ``list.key`` names a key of each item of a list property.
    replaced: Mapping[str, str] = field(default_factory=dict)


# Heat 27's schemas of the OS:: types the shipped OpenStack environment maps, and of
# the native types (resources/openstack, which build their schemas on these)
# (heat/engine/resources/openstack/{nova,neutron,cinder}/*.py), hidden ones included:
# Heat checks against all of them.
OPENSTACK_FACADES: dict[str, Facade] = {
    "OS::Nova::Server": Facade(
        properties={
            "name": "String", "image": "String", "block_device_mapping": "List",
            "block_device_mapping_v2": "List", "flavor": "String", "flavor_update_policy": "String",
            "image_update_policy": "String", "key_name": "String", "admin_user": "String",
            "availability_zone": "String", "security_groups": "List", "networks": "List",
            "scheduler_hints": "Map", "metadata": "Map", "user_data_format": "String",
            "software_config_transport": "String", "user_data_update_policy": "String",
            "user_data": "String", "reservation_id": "String", "config_drive": "Boolean",
            "diskConfig": "String", "personality": "Map", "admin_pass": "String", "tags": "List",
            "deployment_swift_data": "Map"},
        required=("flavor",),
        attributes=("name", "addresses", "networks", "first_address", "instance_name",
                    "accessIPv4", "accessIPv6", "console_urls", "tags", "os_collect_config"),
        replaced={"networks.uuid": "networks.network"},
    ),
    "OS::Nova::KeyPair": Facade(
        properties={"name": "String", "save_private_key": "Boolean", "public_key": "String",
                    "type": "String", "user": "String"},
        required=("name",),
        attributes=("public_key", "private_key"),
    ),
    "OS::Neutron::Net": Facade(
        properties={
            "name": "String", "value_specs": "Map", "admin_state_up": "Boolean",
            "tenant_id": "String", "shared": "Boolean", "dhcp_agent_ids": "List",
            "port_security_enabled": "Boolean", "qos_policy": "String", "dns_domain": "String",
            "availability_zone_hints": "List", "tags": "List"},
        attributes=("status", "name", "subnets", "admin_state_up", "tenant_id",
                    "port_security_enabled", "mtu", "qos_policy_id", "l2_adjacency", "segments"),
    ),
    "OS::Neutron::Subnet": Facade(
        properties={
            "network_id": "String", "network": "String", "subnetpool": "String",
            "prefixlen": "Integer", "cidr": "String", "value_specs": "Map", "name": "String",
            "ip_version": "Integer", "dns_nameservers": "List", "gateway_ip": "String",
            "enable_dhcp": "Boolean", "allocation_pools": "List", "tenant_id": "String",
            "host_routes": "List", "ipv6_ra_mode": "String", "ipv6_address_mode": "String",
            "segment": "String", "tags": "List"},
        required=("network",),
        attributes=("name", "network_id", "tenant_id", "allocation_pools", "gateway_ip",
                    "host_routes", "ip_version", "cidr", "dns_nameservers", "enable_dhcp"),
        replaced={"network_id": "network"},
    ),
    "OS::Neutron::Port": Facade(
        properties={
            "name": "String", "network_id": "String", "network": "String", "device_id": "String",
            "device_owner": "String", "fixed_ips": "List", "security_groups": "List",
            "replacement_policy": "String", "dns_name": "String", "tags": "List",
            "value_specs": "Map", "admin_state_up": "Boolean", "mac_address": "String",
            "allowed_address_pairs": "List", "binding:vnic_type": "String",
            "port_security_enabled": "Boolean", "qos_policy": "String",
            "propagate_uplink_status": "Boolean", "no_fixed_ips": "Boolean"},
        required=("network",),
        attributes=("admin_state_up", "device_id", "device_owner", "fixed_ips", "mac_address",
                    "name", "network_id", "security_groups", "status", "tenant_id",
                    "allowed_address_pairs", "subnets", "port_security_enabled", "qos_policy_id",
                    "dns_assignment", "network", "propagate_uplink_status"),
        replaced={"network_id": "network", "fixed_ips.subnet_id": "fixed_ips.subnet"},
    ),
    "OS::Neutron::Router": Facade(
        properties={
            "name": "String", "external_gateway_info": "Map", "value_specs": "Map",
            "admin_state_up": "Boolean", "l3_agent_id": "String", "l3_agent_ids": "List",
            "distributed": "Boolean", "ha": "Boolean", "availability_zone_hints": "List",
            "tags": "List", "tenant_id": "String"},
        attributes=("status", "external_gateway_info", "name", "admin_state_up", "tenant_id"),
    ),
    "OS::Neutron::RouterInterface": Facade(
        properties={"router": "String", "router_id": "String", "subnet_id": "String",
                    "subnet": "String", "port_id": "String", "port": "String"},
        required=("router",),
        attributes=(),
        replaced={"router_id": "router", "subnet_id": "subnet", "port_id": "port"},
    ),
    "OS::Neutron::SecurityGroup": Facade(
        properties={"name": "String", "description": "String", "rules": "List",
                    "stateful": "Boolean"},
        attributes=(),
    ),
    "OS::Neutron::SecurityGroupRule": Facade(
        properties={"security_group": "String", "description": "String", "direction": "String",
                    "ethertype": "String", "port_range_min": "Integer",
                    "port_range_max": "Integer", "protocol": "String", "remote_group": "String",
                    "remote_ip_prefix": "String"},
        required=("security_group",),
        attributes=(),
    ),
    "OS::Neutron::FloatingIP": Facade(
        properties={
            "floating_network_id": "String", "floating_network": "String",
            "floating_subnet": "String", "value_specs": "Map", "port_id": "String",
            "fixed_ip_address": "String", "floating_ip_address": "String", "dns_name": "String",
            "dns_domain": "String"},
        required=("floating_network",),
        attributes=("router_id", "tenant_id", "floating_network_id", "fixed_ip_address",
                    "floating_ip_address", "port_id"),
        replaced={"floating_network_id": "floating_network"},
    ),
    "OS::Cinder::Volume": Facade(
        properties={
            "availability_zone": "String", "size": "Integer", "snapshot_id": "String",
            "backup_id": "String", "name": "String", "description": "String",
            "volume_type": "String", "metadata": "Map", "imageRef": "String", "image": "String",
            "source_volid": "String", "scheduler_hints": "Map", "read_only": "Boolean",
            "multiattach": "Boolean"},
        attributes=("availability_zone", "size", "snapshot_id", "display_name",
                    "display_description", "volume_type", "metadata", "source_volid", "status",
                    "created_at", "bootable", "metadata_values", "encrypted", "attachments",
                    "attachments_list", "multiattach"),
        replaced={"imageRef": "image"},
    ),
    "OS::Cinder::VolumeAttachment": Facade(
        properties={"instance_uuid": "String", "volume_id": "String", "mountpoint": "String"},
        required=("instance_uuid", "volume_id"),
        attributes=(),
    ),
}

# A provider's parameter type as the property type Heat makes of it
# (properties.Schema.from_parameter); anything else is a Map.
PROPERTY_TYPE_OF_PARAMETER = {
    "string": "String", "number": "Number", "comma_delimited_list": "List",
    "json": "Map", "boolean": "Boolean",
    # a CloudFormation-format provider's spelling
    "String": "String", "Number": "Number", "CommaDelimitedList": "List", "Json": "Map",
    "Boolean": "Boolean",
}
# The parameter type that can stand for a facade property (allowed_param_prop_type).
PARAMETER_STANDS_FOR = {"Integer": "Number"}


def facade_of(type_name: str) -> Facade | None:
    """The interface a provider mapped over ``type_name`` must offer (None: the
    type is not one Heat or this collection knows, so there is no facade)."""
    if type_name in OPENSTACK_FACADES:
        return OPENSTACK_FACADES[type_name]
    cls = resource_class(type_name)
    if cls is None:
        return None
    schema = cls.properties_schema
    return Facade(
        properties={name: prop.type.capitalize() for name, prop in schema.items()},
        required=tuple(name for name, prop in schema.items() if prop.required),
        attributes=tuple(cls.attributes_schema),
    )


def check_against_facade(type_name: str, provider: Mapping[str, Any], place: str,
                         parameter_defaults: Collection[str]) -> None:
    """Heat's facade rule for the provider template ``provider`` (its parsed text)
    mapped over ``type_name``. ``place`` names the provider as Heat names places in
    nested stacks (``resources.server<nova_server.yaml>``); the error adds the
    place inside it to change (``.parameters.networks``, ``.outputs``)."""
    facade = facade_of(type_name)
    if facade is None:
        return
    parameters = provider.get("parameters", provider.get("Parameters")) or {}
    outputs = provider.get("outputs", provider.get("Outputs")) or {}
    if not isinstance(parameters, Mapping) or not isinstance(outputs, Mapping):
        return  # the provider's own validation words this

    def refuse(message: str, path: str) -> StackValidationFailed:
        return StackValidationFailed(message, path=f"{place}.{path}")

    for name, facade_type in facade.properties.items():
        if name in facade.required and name not in parameters:
            raise refuse(f"Required property {name} for facade {type_name} missing in provider",
                         "parameters")
        provider_type = _property_type(parameters.get(name))
        if name in parameters and facade_type != "Any" \
                and PARAMETER_STANDS_FOR.get(facade_type, facade_type) != provider_type:
            raise refuse(f"Property {name} type mismatch between facade {type_name} "
                         f"({facade_type}) and provider ({provider_type})", f"parameters.{name}")
    for name, declared in parameters.items():
        if _required(declared) and name not in parameter_defaults \
                and name not in facade.properties:
            raise refuse(f"Provider requires property {name} unknown in facade {type_name}",
                         f"parameters.{name}")
    for attribute in facade.attributes:
        if attribute not in outputs and attribute != "show":
            raise refuse(f"Attribute {attribute} for facade {type_name} missing in provider",
                         "outputs")


def translate_replaced(type_name: str, properties: Any, provider_parameters: Collection[str],
                       path: str) -> Any:
    """Heat's REPLACE translation rules of ``type_name`` applied to the properties a
    template gives a provider template standing for it: a hidden spelling
    (``network_id``, ``fixed_ips: [{subnet_id: ...}]``) becomes the property that
    replaced it, so templates written for Heat's own type run unchanged. A provider
    that declares the hidden spelling as a parameter receives it as written (Heat
    translates only for its own types). Both spellings given fail with Heat's words.
    Keys are renamed in the template's snippets, before any value is resolved; a
    list computed by a function is passed as it is."""
    facade = OPENSTACK_FACADES.get(type_name)
    if facade is None or not facade.replaced or not isinstance(properties, Mapping):
        return properties
    translated = dict(properties)
    for hidden, replacement in facade.replaced.items():
        if "." not in hidden:
            if hidden not in provider_parameters:
                _move(translated, hidden, replacement, path)
            continue
        parent, hidden_key = hidden.split(".", 1)
        key = replacement.split(".", 1)[1]
        items = translated.get(parent)
        if isinstance(items, list):
            translated[parent] = [_moved(item, hidden_key, key, f"{path}.{parent}", f"{parent}.")
                                  if isinstance(item, Mapping) else item for item in items]
    return translated


def _moved(item: Mapping[str, Any], hidden: str, replacement: str, path: str,
           label: str) -> dict[str, Any]:
    moved = dict(item)
    _move(moved, hidden, replacement, path, label)
    return moved


def _move(values: dict[str, Any], hidden: str, replacement: str, path: str, label: str = "") -> None:
    """translation.py's ``replace``: the hidden value wins when the other is not given."""
    if hidden not in values:
        return
    value = values.pop(hidden)
    if value is None:
        return
    if values.get(replacement) not in (None, ""):
        raise StackValidationFailed(
            "Cannot define the following properties at the same time: "
            f"{label}{replacement}, {label}{hidden}", path=path)
    values[replacement] = value


def _property_type(declared: Any) -> str:
    kind = declared.get("type") if isinstance(declared, Mapping) else None
    return PROPERTY_TYPE_OF_PARAMETER.get(str(kind), "Map")


def _required(declared: Any) -> bool:
    if not isinstance(declared, Mapping):
        return True
    return declared.get("default", declared.get("Default")) is None
