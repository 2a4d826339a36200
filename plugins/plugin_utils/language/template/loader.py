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
import gc
import json
import os
import stat
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import yaml

from ...errors import TemplateError
from ...limits import MAX_DEPTH, MAX_NODES, MAX_TEMPLATE_SIZE

PROVIDER_SUFFIXES = (".yaml", ".template")
# The keys that make a document a template (template/versions.py: HOT's and CFN's).
TEMPLATE_VERSION_KEYS = frozenset({"heat_template_version", "AWSTemplateFormatVersion",
                                   "HeatTemplateFormatVersion"})

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Plain scalars resolved to their implicit tag, by text: templates repeat the same
# keys and types thousands of times, and PyYAML tries its regular expressions on
# each one (a third of the time of loading a large template).
_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_TAGS_MAX = 100_000


class _TooManyNodes(Exception):
    """The document has more values than MAX_NODES before aliases are expanded."""


class _Loader(_SafeLoader):  # type: ignore[misc, valid-type]
    """Safe YAML with every scalar tagged str or timestamp read as a string.

    The composer asks ``resolve`` for the tag of every node it builds (but the
    explicitly tagged ones), so counting there stops a document of millions of
    tiny values before its node tree costs gigabytes (a 6 MB flow sequence is
    3 million nodes).
    """

    nodes = 0

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _TooManyNodes()
        if kind is not yaml.ScalarNode or implicit != (True, False):
            resolved: str = super().resolve(kind, value, implicit)
            return resolved
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
    data: dict[str, Any]
    files: dict[str, str]


# -- one document ---------------------------------------------------------------------------


def load_yaml(text: str, source: str) -> Any:
    """Parse a template (or environment) text; empty text gives ``{}``."""
    if len(text) > MAX_TEMPLATE_SIZE:
        raise _template_too_large(len(text), source)
    try:
        data = _parse(text)
    except RecursionError:
        raise _too_deep(source, "") from None
    except _TooManyNodes:
        raise _too_many(source, "", aliases=False) from None
    except yaml.reader.ReaderError as exc:
        raise TemplateError(_reader_error(exc, text), source=source) from None
    except yaml.YAMLError as exc:
        raise TemplateError(_yaml_error(exc), source=source) from None
    except ValueError as exc:  # a constructor's int() or float() of a scalar
        raise TemplateError(_value_error(exc), source=source) from None
    data = {} if data is None else data
    _check_bounds(data, source)
    return data


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    # Heat: template_format.simple_parse tries JSON first, then YAML.  The
    # cyclic garbage collector is paused meanwhile: the loader makes no garbage
    # cycles, and the collector walking a growing node tree over and over made a
    # document of a million values take 30 seconds instead of 5.
    with collector_paused():
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused meanwhile, then as it was (enabled
    only if it was): for work that builds many long-lived objects and next to no
    cyclic garbage (a large template read, its definition and plan), which each
    full pass of the collector would walk again and again.  What garbage the work
    makes is collected after, as usual."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _yaml_error(exc: yaml.YAMLError) -> str:
    """One line: where and what."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    context = getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    detail = f"{problem} ({context})" if context else problem
    return f"Error parsing template: {where}{detail}"


def _template_too_large(size: int, source: str) -> TemplateError:
    return TemplateError(
        f"Template size ({size} bytes) exceeds maximum allowed size ({MAX_TEMPLATE_SIZE} bytes).",
        source=source)


def _reader_error(exc: yaml.reader.ReaderError, text: str) -> str:
    """A character YAML does not allow, at its line and column."""
    line, column = _line_column(text, exc.position)
    character = exc.character if isinstance(exc.character, int) else ord(exc.character)
    return (f"Error parsing template: line {line}, column {column}: the character "
            f"#x{character:04x} is not allowed in YAML ({exc.reason})")


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _value_error(exc: ValueError) -> str:
    if "integer string conversion" in str(exc):
        return ("Error parsing template: a number has more digits than the maximum of "
                f"{sys.get_int_max_str_digits()}")
    return f"Error parsing template: {exc}"


def _too_deep(source: str, path: str) -> TemplateError:
    return TemplateError(
        f"Template is nested deeper than the maximum of {MAX_DEPTH} levels",
        source=source, path=_short(path),
    )


def _too_many(source: str, path: str, aliases: bool) -> TemplateError:
    how = " once YAML aliases are expanded" if aliases else ""
    return TemplateError(
        f"Template has more than the maximum of {MAX_NODES} values{how}",
        source=source, path=_short(path),
    )


def _short(path: str, limit: int = 120) -> str:
    """A document path fit for a message (a deep one is cut, marked with ...)."""
    return path if len(path) <= limit else path[:limit] + "..."


# Where a node is, as (where its parent is, its key or index): built for every
# node, spelled out only for the one an error names.
_Place = tuple[Any, Any] | None


def _spelled(place: _Place) -> str:
    keys: list[Any] = []
    while place is not None:
        place, key = place
        keys.append(key)
    path = ""
    for key in reversed(keys):
        path += f"[{key}]" if isinstance(key, int) else (f".{key}" if path else str(key))
    return path


def _check_bounds(data: Any, source: str) -> None:
    """Refuse documents too deep, too large once aliases are expanded, or cyclic.

    Sizes are counted once per shared (aliased) node, so a "billion laughs"
    document is refused in time proportional to its text, at the place where the
    expansion first grows past the limit.
    """
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()

    def size(node: Any, depth: int, place: _Place) -> int:
        if not isinstance(node, (dict, list)):
            _check_scalar(node, source, place)
            return 1
        if depth > MAX_DEPTH:
            raise _too_deep(source, _spelled(place))
        key = id(node)
        if key in in_progress:
            raise TemplateError("Template contains a recursive YAML alias", source=source,
                                path=_short(_spelled(place)))
        if key not in sizes:
            in_progress.add(key)
            if isinstance(node, dict):
                for name in node:
                    _check_scalar(name, source, place)
            items = node.items() if isinstance(node, dict) else enumerate(node)
            sizes[key] = 1 + sum(size(child, depth + 1, (place, name)) for name, child in items)
            in_progress.discard(key)
        if sizes[key] > MAX_NODES:
            raise _too_many(source, _spelled(place), aliases=True)
        return sizes[key]

    size(data, 0, None)


# What JSON can say: anything else (YAML's !!set, !!omap, !!binary) is refused.
_SCALARS = (str, int, float, bool, type(None))


def _check_scalar(value: Any, source: str, place: _Place) -> None:
    """A value JSON can hold, and text that is valid Unicode (no lone surrogate,
    which JSON and YAML escapes can make and no store can write)."""
    if isinstance(value, str):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise TemplateError(
                    f"Template text is not valid Unicode: a lone surrogate "
                    f"(\\u{ord(value[exc.start]):04x}) at character {exc.start + 1} of a value",
                    source=source, path=_short(_spelled(place))) from None
        return
    if not isinstance(value, _SCALARS):
        raise TemplateError(
            f"Template has a value of YAML type {type(value).__name__}; only JSON's types "
            "(mapping, list, string, number, boolean, null) are allowed",
            source=source, path=_short(_spelled(place)))


def decode(raw: bytes, source: str) -> str:
    """A template's text; a template that is not UTF-8 is an error naming the file."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TemplateError(
            f"Template is not valid UTF-8 text: {exc.reason} at line {line}, column {column} "
            f"(byte {exc.start})",
            source=source,
        ) from None


def load_template_yaml(text: str, source: str) -> Any:
    """Parse a template's text as Heat does: stripped of the whitespace around it
    first (heat/common/template_format.py ``parse``), so a ``|`` block that ends the
    template keeps no final newline."""
    return load_yaml(text.strip(), source)


def parse_template_text(text: str, source: str) -> dict[str, Any]:
    """A template document: a mapping (Heat's message otherwise)."""
    data = load_template_yaml(text, source)
    if not isinstance(data, dict):
        raise TemplateError("The template is not a JSON object or YAML mapping.", source=source)
    return data


# -- a template and its files ---------------------------------------------------------------


def load_template(path: str, allowed_roots: Sequence[str] = ()) -> TemplateSource:
    """Read ``path`` and collect every file it (and its provider templates) use.

    Files are read only inside the template's directory tree and ``allowed_roots``.
    """
    try:
        raw = read_regular(path)
    except TooLarge as too_large:
        raise _template_too_large(too_large.args[0], path) from None
    except Unreadable as why:
        raise _unreadable(path, str(why), path, "") from None
    data = parse_template_text(decode(raw, path), path)
    collector = _Collector(path, allowed_roots)
    collector.collect(path, data)
    return TemplateSource(path=path, data=data, files=collector.files)


# The name an inline template (the ``template_body`` option) goes by: in messages,
# and as the file its relative references (get_file, provider templates) are read
# beside, in the directory the task gives.
TEMPLATE_BODY = "template_body"


def load_template_body(body: str | Mapping[str, Any], base_dir: str,
                       allowed_roots: Sequence[str] = ()) -> TemplateSource:
    """A template given as text or as a mapping (a playbook's variable), read as
    a template file named ``template_body`` in ``base_dir`` would be."""
    path = os.path.join(os.path.abspath(base_dir), TEMPLATE_BODY)
    if isinstance(body, Mapping):
        # A mapping from the playbook may hold what YAML read as dates
        # (heat_template_version: 2018-08-31): Heat reads them as text.
        body = json.dumps(body, default=str)
    elif not isinstance(body, str):
        raise TemplateError(f"expected the template as text or a mapping, got {type(body).__name__}",
                            source=TEMPLATE_BODY)
    data = parse_template_text(body, path)
    collector = _Collector(path, allowed_roots)
    collector.collect(path, data)
    return TemplateSource(path=path, data=data, files=collector.files)


def load_provider(
    written: str, target: str, roots: Sequence[str], source: str, doc_path: str
) -> dict[str, str]:
    """A provider template an environment names (``written``, found at ``target``)
    and the files it uses in turn, keyed as written; read only inside ``roots``.

    ``source`` and ``doc_path`` say where the environment names it, for messages.
    """
    if is_url(target):  # ``file://`` URLs arrive here as paths
        raise _unreadable(written, "URLs are not read", source, doc_path)
    real = Roots(roots).confine(target, written, source, doc_path)
    text = decode(_read(real, source, doc_path, written), real)
    data = parse_template_text(text, real)
    collector = _Collector(real, roots)
    collector.collect(real, data)
    return {**collector.files, written: text}


class Unreadable(Exception):
    """A file that cannot be read; the text says why."""


class TooLarge(Unreadable):
    """A file larger than MAX_TEMPLATE_SIZE (its size in bytes)."""

    def __str__(self) -> str:
        return (f"its size ({self.args[0]} bytes) exceeds the maximum allowed size "
                f"({MAX_TEMPLATE_SIZE} bytes)")


def read_regular(path: str) -> bytes:
    """The bytes of a regular file of at most MAX_TEMPLATE_SIZE bytes.

    Opened without blocking, so a FIFO named by a hostile template cannot hang
    the run; devices and directories are refused the same way.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file")
        if info.st_size > MAX_TEMPLATE_SIZE:
            raise TooLarge(info.st_size)
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(MAX_TEMPLATE_SIZE + 1)
    finally:
        os.close(fd)


def _read(path: str, source: str, doc_path: str, written: str | None = None) -> bytes:
    try:
        return read_regular(path)
    except Unreadable as why:
        name = written if written is not None else path
        raise _unreadable(name, str(why), source, doc_path) from None


def _unreadable(name: str, why: str, source: str, doc_path: str) -> TemplateError:
    return TemplateError(f"Could not fetch contents for {name}: {why}", source=source, path=doc_path)


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


def is_url(value: str) -> bool:
    """A reference with a scheme and ``://`` (http, https, ftp, file ...)."""
    return bool(urlparse(value).scheme) and "://" in value


class Roots:
    """The directories files may be read from: no path may leave them, neither
    with ``..`` nor through a symbolic link (real paths are compared)."""

    def __init__(self, roots: Sequence[str]) -> None:
        self.paths = [os.path.abspath(r) for r in roots]
        self.real_paths = [os.path.realpath(r) for r in self.paths]

    def confine(self, path: str, written: str, source: str, doc_path: str) -> str:
        """The real path of ``path`` (absolute, or relative to the working
        directory), refused when it leaves the roots."""
        joined = os.path.normpath(os.path.abspath(path))
        real = os.path.realpath(joined)
        if not (_inside(joined, self.paths) and _inside(real, self.real_paths)):
            raise _unreadable(
                written, "the file is outside the template's directory and the allowed roots "
                f"({', '.join(self.paths)})", source, doc_path)
        return real


class _Collector:
    """Walks a template and the templates it references, reading each file once."""

    def __init__(self, top: str, allowed_roots: Sequence[str]) -> None:
        top_dir = os.path.dirname(os.path.abspath(top))
        self.roots = Roots([top_dir, *allowed_roots])
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
        nested = self._as_template(raw, real, is_template)
        self.files[value] = nested[0] if nested else _file_text(raw)
        self.origin[value] = real
        if nested and real not in self.visited:
            self.visited.add(real)
            self.collect(os.path.join(os.path.dirname(source), value), nested[1])

    @staticmethod
    def _as_template(raw: bytes, real: str, is_template: bool) -> tuple[str, dict[str, Any]] | None:
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
        # heatclient's is_template: any of Heat's version keys (CFN's too).
        return (text, data) if TEMPLATE_VERSION_KEYS & set(data) else None

    def _resolve(self, source: str, value: str, doc_path: str) -> str:
        """The real path of a reference, refused when it leaves the roots."""
        if is_url(value):
            raise _unreadable(value, "URLs are not read", source, doc_path)
        base = os.path.dirname(os.path.abspath(source))
        return self.roots.confine(os.path.join(base, value), value, source, doc_path)


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(os.path.commonpath([path, root]) == root for root in roots)


def _file_text(raw: bytes) -> str:
    """Text of a ``get_file`` target; bytes that are not UTF-8 go base64 (heatclient)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return base64.encodebytes(raw).decode("ascii")
