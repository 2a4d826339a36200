# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's software config types: SoftwareConfig, StructuredConfig, CloudConfig,
MultipartMime.

Heat stores a config through its software_configs API and uses the config's
uuid as the physical id; configs are immutable, so none of these properties is
update_allowed and any change replaces the resource (Heat 27,
``heat/engine/resources/openstack/heat/{software_config,structured_config,
cloud_config,multi_part}.py`` and ``heat/engine/software_config_io.py``).

Here the stored config is the resource's own data: ``data["software_config"]``
holds what Heat's API would show (``id``, ``name``, ``group``, ``config``,
``inputs``, ``outputs``, ``options``); ``software_config_record(state)`` reads it.

Optional runtime capability: ``runtime.config_by_id(physical_id) -> str | None``.
MultipartMime parts may name another config by its id (``get_resource`` of a
config resource); when the runtime offers ``config_by_id`` the part is that
config's text, as Heat does with its API.  Without it, or when it answers None
(Heat: NotFound is ignored), the part is the literal text given.
"""

from __future__ import annotations

import email
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from email.message import Message
from email.mime import multipart, text
from typing import Any, cast

import yaml

from .base import AttributeSchema, Outcome, PropertySchema, Resource, ResourceState, register
from .properties import allowed_values

DATA_KEY = "software_config"
DEFAULT_GROUP = "Heat::Ungrouped"
IO_TYPES = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")

INPUT_SCHEMA = {
    "name": PropertySchema("string", "Name of the input.", required=True),
    "description": PropertySchema("string", "Description of the input."),
    "type": PropertySchema("string", "Type of the value of the input.",
                           default="String", constraints=(allowed_values(*IO_TYPES),)),
    "default": PropertySchema("any", "Default value for the input if none is specified."),
    "replace_on_change": PropertySchema(
        "boolean", "Replace the deployment instead of updating it when the input "
        "value changes.", default=False),
}

OUTPUT_SCHEMA = {
    "name": PropertySchema("string", "Name of the output.", required=True),
    "description": PropertySchema("string", "Description of the output."),
    "type": PropertySchema("string", "Type of the value of the output.",
                           default="String", constraints=(allowed_values(*IO_TYPES),)),
    "error_output": PropertySchema(
        "boolean", "Denotes that the deployment is in an error state if this "
        "output has a value.", default=False),
}

_GROUP = PropertySchema(
    "string", "Namespace to group this software config by when delivered to a "
    "server. This may imply what configuration tool is going to perform the "
    "configuration.", default=DEFAULT_GROUP)
_OPTIONS = PropertySchema(
    "map", "Map containing options specific to the configuration management "
    "tool used by this resource.")
_INPUTS = PropertySchema(
    "list", "Schema representing the inputs that this software config is expecting.",
    schema=PropertySchema("map", schema=INPUT_SCHEMA))
_OUTPUTS = PropertySchema(
    "list", "Schema representing the outputs that this software config will produce.",
    schema=PropertySchema("map", schema=OUTPUT_SCHEMA))


def software_config_record(state: ResourceState) -> Mapping[str, Any] | None:
    """The config a config resource stored (None for other resources)."""
    return state.data.get(DATA_KEY)


def _io_as_dict(item: Mapping[str, Any], is_input: bool) -> dict[str, Any]:
    """Heat's ``IOConfig.as_dict``: unset keys dropped, and for an input
    ``replace_on_change`` only when true."""
    result = {key: value for key, value in item.items() if value is not None}
    if is_input and not result.get("replace_on_change"):
        result.pop("replace_on_change", None)
    return result


@register
class SoftwareConfig(Resource):
    """OS::Heat::SoftwareConfig: a stored config script and its I/O schema."""

    type_name = "OS::Heat::SoftwareConfig"
    properties_schema = {
        "group": _GROUP,
        "config": PropertySchema(
            "string", "Configuration script or manifest which specifies what "
            "actual configuration is performed."),
        "options": _OPTIONS,
        "inputs": _INPUTS,
        "outputs": _OUTPUTS,
    }
    attributes_schema = {
        "config": AttributeSchema("The config value of the software config.", type="string"),
    }
    # A config is made from its properties alone: adopted, it is made again with
    # the id Heat gave it (what deployments and get_resource name it by).
    adoptable = True

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        made = self.handle_create(properties)
        record = {**made.data[DATA_KEY], "id": adopted.resource_id}
        return Outcome(adopted.resource_id, {**made.data, DATA_KEY: record})

    @classmethod
    def abandon_data(cls, state: ResourceState) -> dict[str, Any]:
        return {}  # Heat keeps a config in its own table, not in resource data

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        return self._store(
            config=properties.get("config"),
            group=properties.get("group") or DEFAULT_GROUP,
            inputs=properties.get("inputs") or [],
            outputs=properties.get("outputs") or [],
            options=properties.get("options") or {},
        )

    def _store(self, config: Any, group: str, inputs: Sequence[Mapping[str, Any]] = (),
               outputs: Sequence[Mapping[str, Any]] = (),
               options: Mapping[str, Any] | None = None) -> Outcome:
        config_id = str(uuid.uuid4())
        record = {
            "id": config_id,
            "name": self.runtime.physical_name(self.name),
            "group": group,
            "config": config,
            "inputs": [_io_as_dict(item, True) for item in inputs],
            "outputs": [_io_as_dict(item, False) for item in outputs],
            "options": dict(options or {}),
        }
        return Outcome(config_id, {DATA_KEY: record, "attributes": {"config": config}})


@register
class StructuredConfig(SoftwareConfig):
    """OS::Heat::StructuredConfig: a SoftwareConfig whose config is a map."""

    type_name = "OS::Heat::StructuredConfig"
    properties_schema = {
        **SoftwareConfig.properties_schema,
        "config": PropertySchema(
            "map", "Map representing the configuration data structure which "
            "will be serialized to JSON format."),
    }


def _yaml_dumper() -> type:
    # Heat: yaml.dump with its SafeDumper (the C one when there is one).
    return getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def render_cloud_config(cloud_config: Any) -> str:
    """The config text Heat stores for a CloudConfig."""
    return "#cloud-config\n" + yaml.dump(cloud_config, Dumper=_yaml_dumper())


@register
class CloudConfig(SoftwareConfig):
    """OS::Heat::CloudConfig: a cloud-config map stored as ``#cloud-config`` YAML."""

    type_name = "OS::Heat::CloudConfig"
    properties_schema = {
        "cloud_config": PropertySchema(
            "map", "Map representing the cloud-config data structure which will "
            "be formatted as YAML."),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        return self._store(render_cloud_config(properties.get("cloud_config")), DEFAULT_GROUP)


@register
class MultipartMime(SoftwareConfig):
    """OS::Heat::MultipartMime: configs assembled as one multi-part MIME message."""

    type_name = "OS::Heat::MultipartMime"
    properties_schema = {
        "group": PropertySchema(
            "string", "Namespace to group this multi-part configs by when "
            "delivered to a server. This may imply what configuration tool is "
            "going to perform the configuration.", default=DEFAULT_GROUP),
        "parts": PropertySchema(
            "list", "Parts belonging to this message.", default=[],
            schema=PropertySchema("map", schema={
                "config": PropertySchema(
                    "string", "Content of part to attach, either inline or by "
                    "referencing the ID of another software config resource.",
                    required=True),
                "filename": PropertySchema(
                    "string", "Optional filename to associate with part."),
                "type": PropertySchema(
                    "string", "Whether the part content is text or multipart.",
                    default="text", constraints=(allowed_values("text", "multipart"),)),
                "subtype": PropertySchema(
                    "string", "Optional subtype to specify with the type."),
            })),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        message = build_message(properties.get("parts") or [], self._lookup)
        return self._store(message, properties.get("group") or DEFAULT_GROUP)

    def _lookup(self, config_id: str) -> str | None:
        lookup = getattr(self.runtime, "config_by_id", None)
        if lookup is None:
            return None
        found = lookup(config_id)
        if found is not None and not isinstance(found, str):
            # A StructuredConfig's map: Heat would fail here; JSON is kinder.
            found = json.dumps(found)
        return None if found is None else str(found)


def build_message(parts: list[Mapping[str, Any]], lookup: Any = lambda _id: None) -> str:
    """Heat's ``MultipartMime.get_message``: a MIME multipart of the parts."""
    subparts: list[Any] = []
    for item in parts:
        content = item.get("config")
        if _is_uuid_like(content):
            found = lookup(content)
            if found is not None:
                content = found
        if (item.get("type") or "text") == "multipart":
            _append_multiparts(subparts, content)
        else:
            _append_part(subparts, content, item.get("subtype") or "", item.get("filename") or "")
    return multipart.MIMEMultipart(_subparts=subparts).as_string()


def _append_multiparts(subparts: list[Any], message_text: Any) -> None:
    # A part that is itself a multipart message is split into its parts.
    message = email.message_from_string(message_text)
    if not message or not message.is_multipart():
        return
    for part in cast(list[Message], message.get_payload()):  # a multipart's parts
        _append_part(subparts, part.get_payload(), part.get_content_subtype(),
                     part.get_filename())


def _append_part(subparts: list[Any], content: Any, subtype: str, filename: str | None) -> None:
    if not subtype and filename:
        subtype = os.path.splitext(filename)[0]
    charset = "us-ascii"
    try:
        content.encode(charset)
    except UnicodeEncodeError:
        charset = "utf-8"
    if subtype:
        part = text.MIMEText(content, _subtype=subtype, _charset=charset)
    else:
        part = text.MIMEText(content, _charset=charset)
    if filename:
        part.add_header("Content-Disposition", "attachment", filename=filename)
    subparts.append(part)


def _is_uuid_like(value: Any) -> bool:
    """oslo's ``is_uuid_like``: a uuid in any of its usual spellings."""
    if not isinstance(value, str):
        return False
    try:
        canonical = str(uuid.UUID(value)).replace("-", "")
    except ValueError:
        return False
    plain = value.replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "").lower()
    return canonical == plain
