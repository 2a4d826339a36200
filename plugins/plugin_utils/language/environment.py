# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat environments: loading, merging several files, what nested stacks see.

Rules from ``heat/common/environment_format.py`` (sections),
``heat/common/environment_util.py`` (merging ``parameters`` and
``parameter_defaults`` with ``parameter_merge_strategies``),
``heat/engine/environment.py`` (registry, child environments) and heatclient's
``template_utils.py`` (which files an environment references).
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping, Sequence
from urllib.parse import urlparse

from ..errors import TemplateError
from .template.loader import Unreadable, decode, load_provider, load_yaml, read_regular
from .parameters import BOOLEAN, JSON, LIST, NUMBER, STRING, ParameterSchema, str_to_num
from .parameters.types import _Invalid
from .registry import (
    BASE_URL, EMPTY_REGISTRY, HOOKS, RESOURCES, RESTRICTED, ResourceRegistry, is_template_name,
)

SECTIONS = (
    PARAMETERS, RESOURCE_REGISTRY, PARAMETER_DEFAULTS,
    ENCRYPTED_PARAM_NAMES, EVENT_SINKS, PARAMETER_MERGE_STRATEGIES,
) = (
    "parameters", "resource_registry", "parameter_defaults",
    "encrypted_param_names", "event_sinks", "parameter_merge_strategies",
)
MAPPING_SECTIONS = (PARAMETERS, RESOURCE_REGISTRY, PARAMETER_DEFAULTS, PARAMETER_MERGE_STRATEGIES)
LIST_SECTIONS = (ENCRYPTED_PARAM_NAMES, EVENT_SINKS)

STRATEGIES = (OVERWRITE, MERGE, DEEP_MERGE) = ("overwrite", "merge", "deep_merge")

MESSAGES = {
    "wrong_section": 'environment has wrong section "%s"',
    "not_mapping": "The environment is not a valid YAML mapping data type.",
    "invalid_strategy": "Invalid merge strategy '%(strategy)s' for parameter '%(param)s'.",
    "conflicting_strategy": ("Conflicting merge strategy '%(strategy)s' for parameter "
                             "'%(param)s' in file '%(env_file)s'."),
    "invalid_in_env": "Invalid parameter in environment %s.",
    # ours: Heat does not check the shape of a section (it fails later, or not)
    "section_mapping": 'The "%s" section must be a mapping.',
    "section_list": 'The "%s" section must be a list.',
    "unreadable": "Could not read environment file: %s",
}


def _load_yaml(text: str, source: str) -> Any:
    """Parse an environment's text with the template loader's rules (Heat's YAML
    reading: JSON first, timestamps kept as strings; size and alias limits)."""
    return load_yaml(text, source)


@dataclass(frozen=True)
class Environment:
    """One environment (or several merged), read-only.

    ``source`` names the file it came from (for messages); it is not a Heat section.
    """

    parameters: Mapping[str, Any] = field(default_factory=dict)
    parameter_defaults: Mapping[str, Any] = field(default_factory=dict)
    encrypted_param_names: tuple[str, ...] = ()
    event_sinks: tuple[Any, ...] = ()
    parameter_merge_strategies: Mapping[str, str] = field(default_factory=dict)
    registry: ResourceRegistry = EMPTY_REGISTRY
    source: str = ""

    def for_nested(self, resource_name: str, type_name: str | None = None,
                   mappings: Mapping[str, str] | None = None) -> "Environment":
        """What a nested stack created by resource ``resource_name`` sees.

        As Heat's ``get_child_environment``: ``parameter_defaults`` and event sinks
        reach nested stacks, ``parameters`` do not (the nested stack gets its
        properties as parameters instead); the registry's ``resources`` entries
        are narrowed to those for ``resource_name``.  ``type_name`` (the resource's
        type as written) lets the registry drop the entry that made it a
        provider template, as Heat does.  ``mappings``: type mappings the nested
        stack's own environment adds (Heat's ``child_params``), loaded last.
        """
        registry = self.registry.nested(resource_name, type_name)
        if mappings:
            registry = registry.layered(dict(mappings), self.source)
        return Environment(
            parameters={},
            parameter_defaults=copy.deepcopy(dict(self.parameter_defaults)),
            event_sinks=self.event_sinks,
            registry=registry,
            source=self.source,
        )


EMPTY_ENVIRONMENT = Environment()


# --- loading -------------------------------------------------------------------------

def _read(path: str) -> str:
    try:
        raw = read_regular(path)
    except Unreadable as why:
        raise TemplateError(MESSAGES["unreadable"] % why, source=path) from None
    return decode(raw, path)


def parse_environment(document: Any, source: str) -> Environment:
    """Validate a parsed environment document and build the Environment."""
    if document is None:
        document = {}
    if not isinstance(document, Mapping):
        raise TemplateError(MESSAGES["not_mapping"], source=source)
    for section in document:
        if section not in SECTIONS:
            raise TemplateError(MESSAGES["wrong_section"] % section, source=source)
    sections = {name: _section(document, name, source) for name in SECTIONS}
    return Environment(
        parameters=sections[PARAMETERS],
        parameter_defaults=sections[PARAMETER_DEFAULTS],
        encrypted_param_names=tuple(sections[ENCRYPTED_PARAM_NAMES]),
        event_sinks=tuple(sections[EVENT_SINKS]),
        parameter_merge_strategies=sections[PARAMETER_MERGE_STRATEGIES],
        registry=ResourceRegistry.from_snippet(sections[RESOURCE_REGISTRY], source),
        source=source,
    )


def _section(document: Mapping[str, Any], name: str, source: str) -> Any:
    """A section's content; an empty section (``parameters:``) is an empty one."""
    value = document.get(name)
    if name in LIST_SECTIONS:
        if value is None:
            return []
        if not isinstance(value, list):
            raise TemplateError(MESSAGES["section_list"] % name, source=source, path=name)
        return copy.deepcopy(value)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TemplateError(MESSAGES["section_mapping"] % name, source=source, path=name)
    return copy.deepcopy(dict(value))


def load_environment(path: str) -> tuple[Environment, dict[str, str]]:
    """Read and validate one environment file.

    Returns the environment and the provider templates its ``resource_registry``
    references: keys as written in the file, values the paths to read them from
    (relative references resolved against the file's directory, or against the
    registry's ``base_url`` when it sets one, as heatclient does).
    """
    environment = parse_environment(_load_yaml(_read(path), path), path)
    snippet = environment.registry.as_dict()
    return environment, referenced_files(snippet, os.path.dirname(os.path.abspath(path)))


def read_environment(path: str, roots: Sequence[str] = ()) -> tuple[Environment, dict[str, str]]:
    """One environment file and the texts of the provider templates it names
    (with the files they use), keyed as written.

    Those files are read only inside the environment file's directory tree and
    ``roots`` (the template's directory and the task's ``file_roots``).
    """
    environment = parse_environment(_load_yaml(_read(path), path), path)
    env_dir = os.path.dirname(os.path.abspath(path))
    allowed = (env_dir, *roots)
    files: dict[str, str] = {}
    for written, target, doc_path in registry_references(environment.registry.as_dict(), env_dir):
        if written not in files:
            files.update(load_provider(written, target, allowed, path, doc_path))
    return environment, files


def referenced_files(registry: Mapping[str, Any], base_dir: str) -> dict[str, str]:
    """Provider template files a ``resource_registry`` section names, keyed as written."""
    return {written: target for written, target, _path in registry_references(registry, base_dir)}


def registry_references(
    registry: Mapping[str, Any], base_dir: str
) -> Iterator[tuple[str, str, str]]:
    """``(as written, path or URL to read, place in the file)`` of each provider
    template a ``resource_registry`` section names.

    heatclient collects the top level and each ``resources.<name>`` level and
    skips ``base_url``, ``hooks``, ``restricted_actions`` and type names; the
    engine treats only ``.yaml``/``.template`` values as templates, so only those
    are collected here (at any depth of ``resources``, which nested stacks use).
    """
    base = registry.get(BASE_URL) or base_dir
    for key, value, level_base, doc_path in _registry_values(registry, base, RESOURCE_REGISTRY):
        if key not in (BASE_URL, HOOKS, RESTRICTED) and is_template_name(value):
            yield value, _resolve_reference(value, level_base), doc_path


def _registry_values(
    level: Mapping[str, Any], base: str, path: str
) -> Iterator[tuple[str, Any, str, str]]:
    for key, value in level.items():
        here = f"{path}.{key}"
        if key == RESOURCES and isinstance(value, Mapping):
            for name, entry in value.items():
                if isinstance(entry, Mapping):
                    yield from _registry_values(entry, entry.get(BASE_URL) or base, f"{here}.{name}")
        elif isinstance(value, Mapping):
            yield from _registry_values(value, base, here)
        else:
            yield key, value, base, here


def _resolve_reference(value: str, base: str) -> str:
    """A path (or URL) to read a referenced template from."""
    parsed = urlparse(value)
    if parsed.scheme == "file":
        return parsed.path
    if parsed.scheme:
        return value  # a remote URL: whoever reads files decides about it
    base_parsed = urlparse(base)
    if base_parsed.scheme == "file":
        base = base_parsed.path
    elif base_parsed.scheme:
        return base.rstrip("/") + "/" + value
    return os.path.normpath(os.path.join(base, value))


# --- merging --------------------------------------------------------------------------

def _strategy_for(strategies: Mapping[str, str], name: str) -> str:
    """Heat's ``get_param_merge_strategy`` (an unknown one falls back to the default)."""
    default = strategies.get("default", OVERWRITE)
    chosen = strategies.get(name, default)
    return chosen if chosen in STRATEGIES else default


def _inferred_type(value: Any) -> str:
    """A parameter's type guessed from a value, when no template schema is known."""
    if isinstance(value, Mapping):
        return JSON
    if isinstance(value, list):
        return LIST
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, (int, float)):
        return NUMBER
    return STRING


def _merge_map(old: Any, new: Mapping[str, Any], deep: bool) -> Any:
    """Heat's ``merge_map``: update (deep: recursively) skipping null values."""
    if not old:
        return copy.deepcopy(new)
    result = copy.deepcopy(dict(old))
    for key, value in new.items():
        if value is None:
            continue
        if deep and isinstance(value, Mapping):
            result[key] = _merge_map(result.get(key), value, deep) if result.get(key) else value
        elif deep and isinstance(value, list):
            result[key] = _merge_list(result.get(key), value) if result.get(key) else value
        elif deep and isinstance(value, str):
            result[key] = str(result.get(key, "")) + value
        else:
            result[key] = copy.deepcopy(value)
    return result


def _merge_list(old: Any, new: Any) -> Any:
    """Heat's ``merge_list``: extend a list, or join comma-delimited strings."""
    if not old:
        return copy.deepcopy(new)
    if isinstance(old, str) and isinstance(new, str):
        return ",".join([old, new])
    # Heat only handles list+list and string+string; mixed ones are split (ours)
    return _as_list(old) + _as_list(new)


def _as_list(value: Any) -> list[Any]:
    return value.split(",") if isinstance(value, str) else list(value)


def _merge_value(name: str, old: Any, new: Any, ptype: str, deep: bool) -> Any:
    """Heat's ``param_merge`` for one parameter; raises ``_Invalid``."""
    if ptype == BOOLEAN:
        # Heat names 'merge' even when deep_merge was asked for
        raise TemplateError(MESSAGES["invalid_strategy"] % {"strategy": MERGE, "param": name})
    if ptype == JSON:
        new_value = _env_json(new)
        old_value = _env_json(old) if old is not None else None
        if isinstance(new_value, Mapping) and (not old_value or isinstance(old_value, Mapping)):
            return _merge_map(old_value, new_value, deep)
        return _merge_list(old_value, new_value)
    if not isinstance(new, (str, list, tuple)):
        # Heat's parse_param wants a sequence for every non-json type
        raise _Invalid(MESSAGES["invalid_in_env"] % "")
    if ptype == LIST:
        return _merge_list(old, new)
    if ptype == NUMBER:
        # Heat's own code adds a string to 0 here (a TypeError); we add numbers
        return str_to_num(old if old is not None else 0) + str_to_num(new)
    if not isinstance(new, str):
        raise _Invalid(MESSAGES["invalid_in_env"] % "")
    return ("" if old is None else str(old)) + new


def _env_json(value: Any) -> Any:
    """Heat's ``parse_param`` for a json parameter in an environment."""
    try:
        text = value if isinstance(value, str) else json.dumps(value)
        return json.loads(text) if text else value
    except (ValueError, TypeError) as exc:
        raise _Invalid(MESSAGES["invalid_in_env"] % exc) from None


@dataclass
class _ParameterMerge:
    """State of Heat's ``merge_environments`` across files: the strategy each
    parameter was first merged with (shared by both parameter sections)."""

    schemas: Mapping[str, ParameterSchema] | None
    strategies: dict[str, str] = field(default_factory=dict)

    def merge(self, old: Mapping[str, Any], env: Environment, section: str) -> dict[str, Any]:
        new = getattr(env, section)
        if not old:
            # As Heat: the first non-empty section is taken whole, strategies unrecorded
            return copy.deepcopy(dict(new))
        result = copy.deepcopy(dict(old))
        recorded: dict[str, str] = {}
        for name, value in new.items():
            if value is None or (self.schemas is not None and name not in self.schemas):
                continue  # as Heat: unknown names in later files are dropped
            strategy = self._strategy(env, name, recorded, section)
            if strategy == OVERWRITE:
                result[name] = copy.deepcopy(value)
                continue
            ptype = self.schemas[name].type if self.schemas is not None else _inferred_type(value)
            try:
                result[name] = _merge_value(name, result.get(name), value, ptype,
                                            strategy == DEEP_MERGE)
            except _Invalid as exc:
                raise TemplateError(str(exc), source=env.source, path=f"{section}.{name}") from None
            except TemplateError as exc:
                exc.path = exc.path or f"{section}.{name}"
                raise exc.located(env.source) from None
        self.strategies.update(recorded)
        return result

    def _strategy(self, env: Environment, name: str, recorded: dict[str, str], section: str) -> str:
        strategy = _strategy_for(env.parameter_merge_strategies, name)
        if name not in self.strategies:
            recorded[name] = strategy
        elif strategy != self.strategies[name]:
            raise TemplateError(MESSAGES["conflicting_strategy"] % {
                "strategy": strategy, "param": name, "env_file": env.source},
                source=env.source, path=f"{section}.{name}")
        return strategy


def merge_environments(envs: Sequence[Environment],
                       schemas: Mapping[str, ParameterSchema] | None = None) -> Environment:
    """Several environments merged in order (later files win).

    ``parameters`` and ``parameter_defaults`` follow Heat's server-side merge with
    each file's ``parameter_merge_strategies`` (``overwrite`` by default,
    ``merge``, ``deep_merge``).  Pass the template's ``schemas`` to merge by the
    declared types and drop names the template does not declare, exactly as
    Heat; without them, types are guessed from the values and nothing is dropped.

    The registry is layered entry by entry as Heat's ``ResourceRegistry.load``
    does (how Heat layers the global and user environments and how heatclient
    merged files): a later entry replaces an earlier one, ``null`` removes it.
    """
    if not envs:
        return EMPTY_ENVIRONMENT
    if len(envs) == 1:
        return replace(envs[0], parameter_merge_strategies={})
    merge = _ParameterMerge(schemas)
    parameters: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    registry = EMPTY_REGISTRY
    names: list[str] = []
    sinks: list[Any] = []
    for env in envs:
        if env.parameters:
            parameters = merge.merge(parameters, env, PARAMETERS)
        if env.parameter_defaults:
            defaults = merge.merge(defaults, env, PARAMETER_DEFAULTS)
        registry = registry.combined(env.registry)
        names.extend(n for n in env.encrypted_param_names if n not in names)
        sinks.extend(env.event_sinks)
    return Environment(parameters, defaults, tuple(names), tuple(sinks), {}, registry,
                       source=envs[-1].source)
