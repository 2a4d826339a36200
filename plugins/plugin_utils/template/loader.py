# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading a template and the files it needs, as Heat and its client do, safely.

YAML is read as Heat reads it (heat/common/template_format.py): JSON first, then
safe YAML in which timestamps stay strings (``heat_template_version: 2013-05-23``
is the string, not a date).  The files are those python-heatclient collects
(heatclient/common/template_utils.py): every ``get_file: <string>`` and every
``type: <string ending .yaml or .template>``, recursively through the templates
found that way; a file that is not UTF-8 is sent base64 encoded, as the client
does.  Unlike the client, nothing outside the template's directory tree (or the
allowed roots) is read, and URLs are refused.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import yaml

from ..errors import TemplateError

# Heat's default [DEFAULT] max_template_size is 524288 characters, and its
# max_resources_per_stack 1000; ours is 20 times larger so that stacks of 10,000
# resources fit, and still bounds what a hostile document can cost.
MAX_TEMPLATE_SIZE = 10 * 1024 * 1024
# Ours: deeper than any real template, far below Python's recursion limit.
MAX_DEPTH = 100
# Ours: nodes after expanding YAML aliases (a "billion laughs" document is small
# on disk and huge once walked).
MAX_NODES = 1_000_000

PROVIDER_SUFFIXES = (".yaml", ".template")

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Plain scalars resolved to their implicit tag, by text: templates repeat the same
# keys and types thousands of times, and PyYAML tries its regular expressions on
# each one (a third of the time of loading a large template).
_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_TAGS_MAX = 100_000


class _Loader(_SafeLoader):  # type: ignore[misc, valid-type]
    """Safe YAML with every scalar tagged str or timestamp read as a string."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is not yaml.ScalarNode or implicit != (True, False):
            return super().resolve(kind, value, implicit)
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_PLAIN_TAGS) < _PLAIN_TAGS_MAX:
                _PLAIN_TAGS[value] = tag
        return tag


def _as_string(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return loader.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:str", _as_string)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _as_string)


@dataclass(frozen=True)
class TemplateSource:
    """A template as read from disk, with every file it references."""

    path: str
    data: dict
    files: dict[str, str]


# -- one document ---------------------------------------------------------------------------


def load_yaml(text: str, source: str) -> Any:
    """Parse a template (or environment) text; empty text gives ``{}``."""
    if len(text) > MAX_TEMPLATE_SIZE:
        raise TemplateError(
            f"Template size ({len(text)} bytes) exceeds maximum allowed size "
            f"({MAX_TEMPLATE_SIZE} bytes).",
            source=source,
        )
    try:
        data = _parse(text)
    except RecursionError:
        raise _too_deep(source) from None
    except yaml.YAMLError as exc:
        raise TemplateError(_yaml_error(exc), source=source) from None
    data = {} if data is None else data
    _check_bounds(data, source)
    return data


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        # Heat: template_format.simple_parse tries JSON first, then YAML.
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


def _yaml_error(exc: yaml.YAMLError) -> str:
    """One line: where and what."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    context = getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    detail = f"{problem} ({context})" if context else problem
    return f"Error parsing template: {where}{detail}"


def _too_deep(source: str) -> TemplateError:
    return TemplateError(
        f"Template is nested deeper than the maximum of {MAX_DEPTH} levels", source=source
    )


def _check_bounds(data: Any, source: str) -> None:
    """Refuse documents too deep, too large once aliases are expanded, or cyclic."""
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()

    def size(node: Any, depth: int) -> int:
        if not isinstance(node, (dict, list)):
            return 1
        if depth > MAX_DEPTH:
            raise _too_deep(source)
        key = id(node)
        if key in in_progress:
            raise TemplateError("Template contains a recursive YAML alias", source=source)
        if key not in sizes:
            in_progress.add(key)
            children = node.values() if isinstance(node, dict) else node
            sizes[key] = 1 + sum(size(child, depth + 1) for child in children)
            in_progress.discard(key)
        if sizes[key] > MAX_NODES:
            raise TemplateError(
                f"Template expands to more than {MAX_NODES} values (YAML aliases)",
                source=source,
            )
        return sizes[key]

    total = size(data, 0)
    if total > MAX_NODES:  # many shared aliases, each small
        raise TemplateError(
            f"Template expands to more than {MAX_NODES} values (YAML aliases)", source=source
        )


def decode(raw: bytes, source: str) -> str:
    """A template's text; a template that is not UTF-8 is an error naming the file."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TemplateError(
            f"Template is not valid UTF-8 text: {exc.reason} at byte {exc.start}",
            source=source,
        ) from None


def parse_template_text(text: str, source: str) -> dict:
    """A template document: a mapping (Heat's message otherwise)."""
    data = load_yaml(text, source)
    if not isinstance(data, dict):
        raise TemplateError("The template is not a JSON object or YAML mapping.", source=source)
    return data


# -- a template and its files ---------------------------------------------------------------


def load_template(path: str, allowed_roots: Sequence[str] = ()) -> TemplateSource:
    """Read ``path`` and collect every file it (and its provider templates) use."""
    data = parse_template_text(decode(_read(path, path, ""), path), path)
    collector = _Collector(path, allowed_roots)
    collector.collect(path, data)
    return TemplateSource(path=path, data=data, files=collector.files)


def _read(path: str, source: str, doc_path: str, written: str | None = None) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        name = written if written is not None else path
        raise TemplateError(
            f"Could not fetch contents for {name}: {exc.strerror}", source=source, path=doc_path
        ) from None


def references(data: Any, path: str = "") -> Iterator[tuple[str, str, bool]]:
    """``(value, document path, is_template)`` of each file reference, as the client finds them."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            here = f"{path}.{key}" if path else str(key)
            if key == "get_file" and isinstance(value, str):
                yield value, here, False
            elif key == "type" and isinstance(value, str) and value.endswith(PROVIDER_SUFFIXES):
                yield value, here, True
            else:
                yield from references(value, here)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield from references(item, f"{path}[{index}]")


class _Collector:
    """Walks a template and the templates it references, reading each file once."""

    def __init__(self, top: str, allowed_roots: Sequence[str]) -> None:
        top_dir = os.path.dirname(os.path.abspath(top))
        self.roots = [top_dir, *(os.path.abspath(r) for r in allowed_roots)]
        self.real_roots = [os.path.realpath(r) for r in self.roots]
        self.files: dict[str, str] = {}
        self.origin: dict[str, str] = {}  # key -> real path it was read from
        self.visited: set[str] = {os.path.realpath(top)}

    def collect(self, source: str, data: Any) -> None:
        for value, doc_path, is_template in references(data):
            self._fetch(source, value, doc_path, is_template)

    def _fetch(self, source: str, value: str, doc_path: str, is_template: bool) -> None:
        real = self._resolve(source, value, doc_path)
        known = self.origin.get(value)
        if known is not None and known != real:
            raise TemplateError(
                f'File "{value}" names two different files ({known} and {real}); '
                "the files of a stack are keyed by the name written in the template",
                source=source,
                path=doc_path,
            )
        raw = _read(real, source, doc_path, value)
        nested = self._as_template(raw, real, source, doc_path, is_template)
        self.files[value] = nested[0] if nested else _file_text(raw)
        self.origin[value] = real
        if nested and real not in self.visited:
            self.visited.add(real)
            self.collect(os.path.join(os.path.dirname(source), value), nested[1])

    def _as_template(
        self, raw: bytes, real: str, source: str, doc_path: str, is_template: bool
    ) -> tuple[str, dict] | None:
        """The text and data of a template file; None for other files.

        A provider template must parse; a ``get_file`` target is followed only when
        it happens to be a template (heatclient's is_template).
        """
        if is_template:
            text = decode(raw, real)
            return text, parse_template_text(text, real)
        try:
            text = raw.decode("utf-8")
            data = parse_template_text(text, real)
        except (TemplateError, UnicodeDecodeError):
            return None
        return (text, data) if "heat_template_version" in data else None

    def _resolve(self, source: str, value: str, doc_path: str) -> str:
        """The real path of a reference, refused when it leaves the roots."""
        if urlparse(value).scheme and "://" in value:
            raise self._refused(source, value, doc_path, "URLs are not read")
        base = os.path.dirname(os.path.abspath(source))
        joined = os.path.normpath(os.path.join(base, value))
        real = os.path.realpath(joined)
        # Both tests: ``..`` may not climb out, and no symlink may lead out.
        if not (_inside(joined, self.roots) and _inside(real, self.real_roots)):
            raise self._refused(
                source,
                value,
                doc_path,
                "the file is outside the template's directory and the allowed roots",
            )
        return real

    @staticmethod
    def _refused(source: str, value: str, doc_path: str, why: str) -> TemplateError:
        return TemplateError(
            f"Could not fetch contents for {value}: {why}", source=source, path=doc_path
        )


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(os.path.commonpath([path, root]) == root for root in roots)


def _file_text(raw: bytes) -> str:
    """Text of a ``get_file`` target; bytes that are not UTF-8 go base64 (heatclient)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return base64.encodebytes(raw).decode("ascii")
