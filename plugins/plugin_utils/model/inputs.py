# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What an apply starts from: template, files, environments and parameters.

Read from files for a full update, or from the last revision for a PATCH update
(``existing: true``), and recorded in each revision.  Hidden parameter values are
recorded as they are, and the store keeps every secret among them only encrypted
(``store/sealed.py``), so a PATCH or a rollback needs them no more.  Revisions
recorded before that hold a salted digest instead (``HIDDEN_MARK``): those values
must still be given again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..language.environment import (
    EMPTY_ENVIRONMENT,
    Environment,
    merge_environments,
    parse_environment,
    read_environment,
)
from ..errors import StackValidationFailed
from ..limits import MAX_PARAMETER_SIZE, MAX_PARAMETERS_SIZE
from ..store.base import RevisionRecord
from ..language.template.cfn import sections_of
from ..language.template.loader import TemplateSource, decode, load_template, load_yaml, read_regular

HIDDEN_MARK = "__hidden_sha256__"

# How a digest is made of some bytes: plain SHA-256, or keyed when they hold a
# secret (SealedStore.digest).
Digest = Callable[[Sequence[bytes]], str]


def sha256_digest(parts: Sequence[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


@dataclass(frozen=True)
class LoadedInputs:
    source: TemplateSource
    environment: Environment
    files: dict[str, str]
    # Each environment as (its file name, its text): what a PATCH re-reads.
    environment_texts: tuple[tuple[str, str], ...]


def load_inputs(template: str | TemplateSource, environment_paths: Sequence[str],
                file_roots: Sequence[str] = ()) -> LoadedInputs:
    """Read the template (a path, or one given inline: ``load_template_body``), its
    files and the environment files (merged in order).

    Files are read only inside the template's directory tree, ``file_roots``, and
    for the provider templates an environment names, the environment's directory.
    """
    source = template if isinstance(template, TemplateSource) else load_template(template, file_roots)
    roots = (os.path.dirname(os.path.abspath(source.path)), *file_roots)
    environments: list[Environment] = []
    files: dict[str, str] = dict(source.files)
    texts: list[tuple[str, str]] = []
    for path in environment_paths:
        environment, provider_files = read_environment(path, roots)
        environments.append(environment)
        files.update(provider_files)
        texts.append((path, _environment_text(path)))
    merged = merge_environments(environments) if environments else EMPTY_ENVIRONMENT
    return LoadedInputs(source, merged, files, tuple(texts))


def _environment_text(path: str) -> str:
    return decode(read_regular(path), path)


def patched_inputs(
    last: RevisionRecord, template: str | TemplateSource | None, environment_paths: Sequence[str],
    file_roots: Sequence[str] = (),
) -> LoadedInputs:
    """A PATCH update: the stored template unless a new one is given; the stored
    environments with the new ones merged on top (Heat's ``existing: true``)."""
    stored = last.definition
    if template:
        fresh = load_inputs(template, environment_paths, file_roots)
        source, files = fresh.source, {**stored.get("files", {}), **fresh.files}
    else:
        fresh = load_inputs_from_envs(environment_paths, file_roots)
        files = {**stored.get("files", {}), **fresh.files}
        source = TemplateSource(stored["template_path"], stored["template"], files)
    texts = tuple((name, text) for name, text in stored.get("environment", [])) + fresh.environment_texts
    environments = [parse_environment(load_yaml(text, name), name) for name, text in texts]
    merged = merge_environments(environments) if environments else EMPTY_ENVIRONMENT
    return LoadedInputs(source, merged, files, texts)


def load_inputs_from_envs(environment_paths: Sequence[str],
                          file_roots: Sequence[str] = ()) -> LoadedInputs:
    """Only environments (a PATCH that keeps the stored template)."""
    files: dict[str, str] = {}
    texts: list[tuple[str, str]] = []
    for path in environment_paths:
        files.update(read_environment(path, file_roots)[1])
        texts.append((path, _environment_text(path)))
    empty = TemplateSource("", {}, {})
    return LoadedInputs(empty, EMPTY_ENVIRONMENT, files, tuple(texts))


def check_parameter_sizes(given: Mapping[str, Any], environment: Environment | None = None) -> None:
    """Refuse, before anything is read further or written, a parameter value larger
    than MAX_PARAMETER_SIZE, or values that add up to more than MAX_PARAMETERS_SIZE:
    the task's ``given`` values, the environment's ``parameters`` and
    ``parameter_defaults`` (each environment file is at most a template's size, but
    there may be many).  A value is counted only up to the limit."""
    layers: list[tuple[str, Mapping[str, Any]]] = [("", given)]
    if environment is not None:
        layers += [(f"the environment's {section}", getattr(environment, section))
                   for section in ("parameters", "parameter_defaults")]
    total = 0
    for where, values in layers:
        comes_from = f" (the value comes from {where})" if where else ""
        for name, value in values.items():
            size = value_size(value, MAX_PARAMETER_SIZE)
            if size > MAX_PARAMETER_SIZE:
                raise StackValidationFailed(
                    f"Parameter '{name}' is invalid: its value is larger than the maximum of "
                    f"{MAX_PARAMETER_SIZE} characters{comes_from}: give large content in a file "
                    "the template reads (get_file)", path=f"parameters.{name}")
            total += size
            if total > MAX_PARAMETERS_SIZE:
                raise StackValidationFailed(
                    f"Parameter '{name}' is invalid: the parameter values add up to more than the "
                    f"maximum of {MAX_PARAMETERS_SIZE} characters with it{comes_from}",
                    path=f"parameters.{name}")


def value_size(value: Any, limit: int) -> int:
    """The characters of ``value``'s text (its keys and strings; 1 for any other
    value), counted until past ``limit``: a value from the playbook may be huge."""
    size, pending = 0, [value]
    while pending and size <= limit:
        item = pending.pop()
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, Mapping):
            size += 1
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            size += 1
            pending.extend(item)
        else:
            size += len(str(item)) if isinstance(item, (int, float)) else 1
    return size


def patched_parameters(
    last: RevisionRecord, given: Mapping[str, Any], clear: Sequence[str]
) -> dict[str, Any]:
    """The stored parameters, less the cleared ones, with the given ones on top.

    A hidden value recorded only as a digest (an older revision) must be given again."""
    stored = dict(last.definition.get("parameters", {}))
    for name in clear:
        stored.pop(name, None)
    merged = {**stored, **given}
    missing = sorted(n for n, v in merged.items() if is_hidden_mark(v))
    if missing:
        raise StackValidationFailed(
            "hidden parameters of revisions recorded before secrets were encrypted are not "
            "kept in the store, give them again with "
            f"existing: true: {', '.join(missing)}"
        )
    return merged


def definition_digest(inputs: LoadedInputs, parameters: Mapping[str, Any],
                      digest: Digest = sha256_digest) -> str:
    """Identifies a definition: equal digests, equal stacks (re-runs change nothing).

    ``digest`` is the store's: keyed when the definition holds a secret, since the
    digest is stored in plain text and a plan id made from it is shown."""
    document = {
        "template": inputs.source.data,
        "files": inputs.files,
        "environment": inputs.environment_texts,
        "parameters": parameters,
    }
    canonical = json.dumps(document, sort_keys=True, default=str)
    return digest([canonical.encode()])


def recorded_definition(
    inputs: LoadedInputs, given: Mapping[str, Any], effective: Mapping[str, Any],
    hidden: frozenset[str],
) -> dict[str, Any]:
    """The revision's copy of the definition, hidden values included (the store
    seals the secret ones); ``hidden`` names them for the views that mask them."""
    return {
        "template_path": inputs.source.path,
        "template": inputs.source.data,
        "files": inputs.files,
        "environment": [list(pair) for pair in inputs.environment_texts],
        "parameters": dict(given),
        "effective_parameters": dict(effective),
        "hidden": sorted(hidden),
    }


def hidden_digest(salt: str, name: str, value: Any) -> dict[str, str]:
    """What revisions recorded before secrets were encrypted kept of a hidden
    value: enough to tell it changed."""
    text = json.dumps([salt, name, value], sort_keys=True, default=str)
    return {HIDDEN_MARK: hashlib.sha256(text.encode()).hexdigest()}


def is_hidden_mark(value: Any) -> bool:
    """A hidden value recorded as a digest only (a revision of an older version)."""
    return isinstance(value, Mapping) and HIDDEN_MARK in value


def recorded_hidden(definition: Mapping[str, Any]) -> frozenset[str]:
    """Names of the hidden parameters of a recorded definition (either kind)."""
    marked = {k for k, v in definition.get("effective_parameters", {}).items() if is_hidden_mark(v)}
    return frozenset(definition.get("hidden", ())) | marked


def keep_hidden_secrets(store: Any, parameters: Any, stack_name: str) -> None:
    """The values of hidden parameters are the store's secrets from now on (masked,
    sealed); without a store key, a stack that has some is refused here, before
    anything is written.  ``store``: a SealedStore; ``parameters``: Parameters."""
    secret = parameters.secret_values()
    for value in secret.values():
        store.secrets.add(value)
    for value in parameters.hidden_defaults().values():
        store.shown_only.add(value)
    if secret:
        store.require_key(f"stack {stack_name} has hidden parameters ({', '.join(secret)}) "
                          "whose values the store must keep")


def mask_declared_hidden(store: Any, inputs: LoadedInputs, given: Mapping[str, Any]) -> None:
    """A definition that failed to build: the values given to parameters its
    template declares hidden are masked in the error all the same."""
    data = inputs.source.data
    # A CFN template's NoEcho parameters read as hidden ones (sections_of).
    declared = sections_of(data).get("parameters") if isinstance(data, Mapping) else None
    environment = inputs.environment
    for name, spec in (declared if isinstance(declared, Mapping) else {}).items():
        if isinstance(spec, Mapping) and spec.get("hidden") is True:
            for layer in (given, environment.parameters, environment.parameter_defaults):
                if layer.get(name) is not None:
                    store.secrets.add(layer[name])
