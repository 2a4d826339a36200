# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A CloudFormation-format template (``AWSTemplateFormatVersion: 2010-09-09`` or
``HeatTemplateFormatVersion: 2012-12-12``), read into the shape the engine reads.

Heat reads CFN's sections (``Resources``, ``Outputs``, ``Mappings``, ...) and keys
(``Type``, ``Properties``, ``DependsOn``, ...) where HOT has its own names
(heat/engine/cfn/template.py); the engine reads HOT's, so ``CfnTemplate`` keeps
the sections under HOT's names and translates the places its errors name back
(``Resources.web.Properties.ImageId``, as Heat names them).  The document itself
is kept as written: it is what the store records and ``heat_abandon`` gives back.

Structure checks are Heat's (heat/engine/template.py ``validate``,
template_common.py ``_parse_resource_field`` and ``outputs``), with its words;
beyond Heat, a key a resource or output does not have is refused (Heat ignores
it, so a misspelt ``Propertes`` would be lost silently).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ...errors import HotplayError, TemplateError
from ..parameters import HOT_NAME, ParameterSchema, parse_cfn_parameter_schemas
from .hot import HotTemplate, check_names
from .versions import CFN_VERSION_KEYS, HotVersion

# CFN's names -> HOT's, for the sections, resource keys and output keys.
SECTIONS = {"Description": "description", "Mappings": "mappings", "Parameters": "parameters",
            "Resources": "resources", "Outputs": "outputs", "Conditions": "conditions"}
RESOURCE_KEYS = {"Type": "type", "Properties": "properties", "Metadata": "metadata",
                 "DependsOn": "depends_on", "DeletionPolicy": "deletion_policy",
                 "UpdatePolicy": "update_policy", "Description": "description", "Condition": "condition"}
OUTPUT_KEYS = {"Description": "description", "Value": "value", "Condition": "condition"}


class CfnTemplate(HotTemplate):
    """A CFN template: checked with Heat's CFN rules, kept under HOT's names."""

    # heat/engine/cfn/parameters.py CfnParameters.
    pseudo_parameters = ("AWS::StackId", "AWS::StackName", "AWS::Region")

    def _read(self, data: dict[str, Any]) -> None:
        try:
            check_structure(data, self.version, self.source.path)
            shaped = hot_shaped(data)
            check_names(shaped, self.source.path)
        except HotplayError as error:
            raise self.in_own_words(error) from None
        self.description: str = data.get("Description") or "No description"
        # Kept as CFN writes them: parameter_schemas reads them with CFN's rules.
        self.parameters_section: dict[str, Any] = data.get("Parameters") or {}
        self.parameter_groups: list[Any] = []
        self.conditions_section: dict[str, Any] = shaped.get("conditions") or {}
        self.resources_section: dict[str, Any] = shaped.get("resources") or {}
        self.outputs_section: dict[str, Any] = shaped.get("outputs") or {}
        self.mappings: dict[str, Any] = data.get("Mappings") or {}

    def parameter_schemas(self, replaced_defaults: Collection[str] = (),
                          check_defaults: bool = True) -> dict[str, ParameterSchema]:
        return parse_cfn_parameter_schemas(self.parameters_section, self.source.path,
                                           replaced_defaults=replaced_defaults, check_defaults=check_defaults)

    def in_own_words(self, error: HotplayError) -> HotplayError:
        if error.source and error.source != self.source.path:
            return error  # another file's (a provider template's): its own words
        error.path = cfn_places(error.path)
        error.message = cfn_places(error.message)
        return error

    def place(self, path: str) -> str:
        return cfn_places(path)


# -- places: HOT's spelling -> CFN's -------------------------------------------------------

_SECTION_NAME = {hot: cfn for cfn, hot in SECTIONS.items()}
_ENTRY_KEY = {"resources": {hot: cfn for cfn, hot in RESOURCE_KEYS.items()},
              "outputs": {hot: cfn for cfn, hot in OUTPUT_KEYS.items()},
              # A parameter's default; the constraints are its own keys in CFN.
              "parameters": {"default": "Default", "constraints": ""}}
_PLACE = re.compile(r"(?<![\w.:])(resources|outputs|parameters|conditions|mappings)\.([^\s.:\[\]<>]+)"
                    r"(?:\.(\w+))?")


def cfn_places(text: str) -> str:
    """``text`` with every place the engine names in HOT's words (``resources.web.
    properties``) in CFN's (``Resources.web.Properties``)."""
    return _PLACE.sub(_cfn_place, text) if text else text


def _cfn_place(found: re.Match[str]) -> str:
    section, name, key = found.group(1), found.group(2), found.group(3)
    place = f"{_SECTION_NAME[section]}.{name}"
    if key is None:
        return place
    renamed = _ENTRY_KEY.get(section, {}).get(key, key)
    return f"{place}.{renamed}" if renamed else place


# -- the structure, as Heat checks it ------------------------------------------------------

def check_structure(data: Mapping[str, Any], version: HotVersion, source: str) -> None:
    """Raise a ``TemplateError`` for the first structural mistake, in Heat's words:
    sections, then resources, then outputs."""
    allowed = {*CFN_VERSION_KEYS, *(cfn for cfn, hot in SECTIONS.items() if hot in version.sections)}
    for key in data:
        if key not in allowed:
            raise TemplateError(f"The template section is invalid: {key}", source=source)
    for section in ("Resources", "Outputs", "Mappings"):
        if data.get(section) and not isinstance(data[section], Mapping):
            raise TemplateError(f'The "{section}" section must be a map. Found a [{type(data[section])}] '
                                "instead", source=source, path=section)
    if data.get("Conditions") and not isinstance(data["Conditions"], Mapping):
        raise TemplateError("Condition validation error: Condition definitions must be a map. "
                            f"Found a {type(data['Conditions']).__name__} instead",
                            source=source, path="Conditions")
    resources = data.get("Resources") or {}
    for name, entry in resources.items():
        _check_resource(str(name), entry, version, source)
    for name, entry in resources.items():
        _check_resource_fields(str(name), entry, version, source)
    for name, entry in (data.get("Outputs") or {}).items():
        _check_output(str(name), entry, version, source)


def _check_resource(name: str, entry: Any, version: HotVersion, source: str) -> None:
    path = f"Resources.{name}"
    if not isinstance(entry, Mapping):
        raise TemplateError(f"Resources must contain Resource. Found a [{type(entry)}] instead",
                            source=source, path=path)
    if not entry.get("Type"):
        raise TemplateError("Each Resource must contain a Type key.", source=source, path=path)
    for key in entry:
        if RESOURCE_KEYS.get(key) not in version.resource_keys:
            raise TemplateError(f'"{key}" is not a valid keyword inside a resource definition',
                                source=source, path=path)


def _check_resource_fields(name: str, entry: Mapping[str, Any], version: HotVersion,
                           source: str) -> None:
    """Heat's ``_parse_resource_field``: each key's type, a function allowed where
    Heat parses the key (its result is checked when it is resolved)."""
    kinds = {
        "Type": (_is_text, "string"),
        "Properties": (_is_map, "object"),
        "Metadata": (_is_map, "object"),
        "DependsOn": (_is_sequence, "list or string"),
        "DeletionPolicy": (lambda value: _is_text(value) or _is_call(value, version), "string"),
        "UpdatePolicy": (_is_map, "object"),
        "Description": (_is_text, "string"),
        "Condition": (lambda value: isinstance(value, (str, bool)) or _is_call(value, version, True),
                      "string or boolean"),
    }
    for key, value in entry.items():
        fits, kind = kinds[key]
        if not fits(value):
            raise TemplateError(f"Resource {name} {key} type must be {kind}", source=source,
                                path=f"Resources.{name}.{key}")
    depends_on = entry.get("DependsOn")
    if isinstance(depends_on, list) and not all(isinstance(item, str) for item in depends_on):
        raise TemplateError(f"Resource {name} DependsOn must be a list of strings", source=source,
                            path=f"Resources.{name}.DependsOn")


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_map(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (str, list))


def _is_call(value: Any, version: HotVersion, condition: bool = False) -> bool:
    table = version.condition_functions if condition else version.functions
    return isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in table


def _check_output(name: str, entry: Any, version: HotVersion, source: str) -> None:
    """Heat's words name the place themselves (``Output validation error: Outputs.o: ...``)."""
    where = f"Output validation error: Outputs.{name}:"
    if not isinstance(entry, Mapping):
        raise TemplateError(f"{where} Output definitions must be a map. Found a {type(entry).__name__} "
                            "instead", source=source)
    if "Value" not in entry:
        raise TemplateError(f"{where} Each output definition must contain a Value key.", source=source)
    for key in entry:
        if OUTPUT_KEYS.get(key) not in version.output_keys:
            raise TemplateError(f'"{key}" is not a valid keyword inside an output definition',
                                source=source, path=f"Outputs.{name}")


# -- a CFN document in HOT's shape, for code that reads a template's sections --------------

def sections_of(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A template's sections under HOT's names, whatever its format: a HOT document
    as it is, a CFN one renamed (``hot_shaped``).  For code that reads a stored or
    provider template's resources, parameters or outputs."""
    if not any(key in data for key in CFN_VERSION_KEYS):
        return data
    return hot_shaped(data)


def hot_shaped(data: Mapping[str, Any]) -> dict[str, Any]:
    """A CFN document's sections, resources and outputs under HOT's names, and its
    parameters declared as HOT declares them (type, default, description, label,
    hidden; the constraints are left out).  Anything not understood is kept as it is."""
    shaped: dict[str, Any] = {}
    for key, value in data.items():
        section = SECTIONS.get(key)
        if section == "resources":
            value = _entries(value, RESOURCE_KEYS)
        elif section == "outputs":
            value = _entries(value, OUTPUT_KEYS)
        elif section == "parameters":
            value = {name: _hot_parameter(spec) for name, spec in value.items()} \
                if isinstance(value, Mapping) else value
        if section is not None:
            shaped[section] = value
    return shaped


def _entries(section: Any, names: Mapping[str, str]) -> Any:
    if not isinstance(section, Mapping):
        return section
    return {name: {names.get(key, key): value for key, value in entry.items()}
            if isinstance(entry, Mapping) else entry
            for name, entry in section.items()}


def _hot_parameter(spec: Any) -> Any:
    if not isinstance(spec, Mapping):
        return spec
    written = spec.get("Type")
    declared: dict[str, Any] = {"type": HOT_NAME.get(written, written) if isinstance(written, str) else written}
    for cfn, hot in (("Default", "default"), ("Description", "description"), ("Label", "label")):
        if cfn in spec:
            declared[hot] = spec[cfn]
    if str(spec.get("NoEcho", "false")).lower() == "true":
        declared["hidden"] = True
    return declared
