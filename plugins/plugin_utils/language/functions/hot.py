# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The native HOT intrinsic functions, one class per behaviour Heat has.

Where Heat changed a function's behaviour between template versions there is one
class per behaviour (``Join`` and ``JoinMultiple``, ``Repeat`` ...); which class a
version uses is data in ``template/versions.py``.  Checks Heat makes when it parses
a call run in ``check_args`` (at parse time), checks of its ``validate`` in
``validate``, the rest when the call is resolved.  Messages are Heat's.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar, cast
from urllib import parse as urlparse

from ...errors import StackValidationFailed
from ...limits import MAX_VALUE_SIZE
from . import base
from .base import Function, resolve

PSEUDO_PARAMETERS = ("OS::stack_name", "OS::stack_id", "OS::project_id")


class HeatFunction(Function):
    """A function whose arguments are checked as soon as the call is parsed."""

    def __init__(self, ctx: base.StackContext, fn_name: str, args: Any, path: str) -> None:
        super().__init__(ctx, fn_name, args, path)
        self.check_args()

    def check_args(self) -> None:
        """Heat's checks in the function's constructor (errors at parse time)."""

    def fail(self, message: str) -> StackValidationFailed:
        """Shorthand for the error of this call, raised by the caller."""
        return self.error(message)

    def where(self) -> str:
        """The path of the snippet that holds this call (Heat's ``key`` of references):
        in a resource, as Heat's dependencies name it (``r1.Properties.value``)."""
        place = self.path.rsplit(".", 1)[0] if "." in self.path else self.path
        in_resource = _RESOURCE_SECTION.match(place)
        if in_resource is None:
            return place
        name, section, rest = in_resource.groups()
        return f"{name}.{section.capitalize()}{rest}"


_RESOURCE_SECTION = re.compile(r"resources\.([^.\[]+)\.(properties|metadata)((?:[.\[].*)?)$")


# -- helpers ----------------------------------------------------------------------------


def is_list(value: Any) -> bool:
    """A sequence that is not a string (Heat's test for "a list")."""
    return isinstance(value, Sequence) and not isinstance(value, str)


def has_functions(snippet: Any) -> bool:
    """True when a parsed snippet still holds a call (cannot be checked early)."""
    return next(base.walk_functions(snippet), None) is not None


def to_json(value: Any) -> str:
    """Heat's ``jsonutils.dumps(value, sort_keys=True)``."""
    return json.dumps(value, sort_keys=True)


def invalid_reference(name: Any, where: str) -> str:
    return f'The specified reference "{name}" (in {where}) is incorrect.'


# -- get_param ----------------------------------------------------------------------------


class GetParam(HeatFunction):
    """``get_param: name`` or ``get_param: [name, path...]``."""

    def _split(self, args: Any) -> tuple[str, list[Any]]:
        if not args:
            raise self.fail(f'Function "{self.fn_name}" must have arguments')
        if isinstance(args, str):
            name, path = args, []
        elif is_list(args):
            name, path = args[0], list(args[1:])
        else:
            raise self.fail(f'Argument to "{self.fn_name}" must be string or list')
        if not isinstance(name, str):
            raise self.fail(f'Parameter name in "{self.fn_name}" must be string')
        return name, path

    def validate(self) -> None:
        if has_functions(self.args):
            return
        name = self._split(self.args)[0]
        self._check_declared(name)

    def _check_declared(self, name: str) -> None:
        if name not in PSEUDO_PARAMETERS and not self.ctx.has_param(name):
            raise self.fail(f"The Parameter ({name}) was not provided.")

    def _value(self, name: str) -> Any:
        pseudo = {
            "OS::stack_name": lambda: self.ctx.stack_name,
            "OS::stack_id": lambda: self.ctx.stack_id,
            "OS::project_id": lambda: self.ctx.project_id,
        }
        if name in pseudo:
            return pseudo[name]()
        self._check_declared(name)
        return self.ctx.param(name)

    def result(self) -> Any:
        name, path = self._split(resolve(self.args))
        value = self._value(name)
        try:
            return functools.reduce(self._step, path, value)
        except (KeyError, IndexError, TypeError):
            # Heat: functions.py GetParam -- a path that does not exist gives ''.
            return ""

    def _step(self, collection: Any, key: Any) -> Any:
        if not isinstance(collection, (Mapping, Sequence)):
            raise TypeError("cannot traverse")
        if not isinstance(key, (str, int)):
            raise TypeError("bad key")
        if isinstance(collection, Sequence) and isinstance(key, str):
            try:
                key = int(key)
            except ValueError as exc:
                raise TypeError("not an index") from exc
        return collection[key]


# -- get_resource / get_attr ------------------------------------------------------------


class ResourceReader(HeatFunction):
    """What ``get_resource`` and ``get_attr`` share: the resource they name."""

    def resource_name_arg(self) -> Any:
        return self.args

    def _literal_name(self) -> str | None:
        name = self.resource_name_arg()
        if isinstance(name, str):
            return name
        if isinstance(name, Function):
            try:
                value = resolve(name)
            except StackValidationFailed:
                return None
            return value if isinstance(value, str) else None
        return None

    def dependencies(self) -> Iterator[str]:
        name = self._literal_name()
        if name is not None:
            yield name

    def _check_exists(self, name: Any) -> base.ResourceRef:
        if not isinstance(name, str) or not self.ctx.has_resource(name):
            raise self.fail(invalid_reference(name, self.where()))
        ref = self.ctx.resource(name)
        # Heat: a resource whose condition is false is not in the stack, so a
        # reference to it is as wrong as one to an undeclared name.
        if not ref.enabled:
            raise self.fail(invalid_reference(name, self.where()))
        return ref

    def resource(self) -> base.ResourceRef:
        return self._check_exists(resolve(self.resource_name_arg()))

    def validate(self) -> None:
        self.check_reference()

    def check_reference(self) -> None:
        if not has_functions(self.resource_name_arg()):
            self.resource()


class GetResource(ResourceReader):
    """``get_resource: name`` -- the resource's reference id."""

    def result(self) -> Any:
        return self.resource().reference_id()


def select_path(value: Any, path: Sequence[Any]) -> Any:
    """Heat's ``attributes.select_from_attribute``: None when the path is missing."""

    def step(collection: Any, key: Any) -> Any:
        if not isinstance(collection, (Mapping, Sequence)):
            raise TypeError("cannot traverse")
        if not isinstance(key, (str, int)):
            raise TypeError("bad key")
        return collection[key]  # type: ignore[index]  # a str key into a list: TypeError, as Heat

    try:
        return functools.reduce(step, path, value)
    except (KeyError, IndexError, TypeError):
        return None


class GetAtt(ResourceReader):
    """``get_attr: [resource, attribute, path...]``.

    Heat has three classes (GetAttThenSelect for 2013-05-23, GetAtt for
    2014-10-16, GetAttAllAttributes from 2015-10-15); they differ only in caching
    and in whether the attribute may be left out, which is ``all_attributes_form``.
    """

    all_attributes_form: ClassVar[bool] = False

    def check_args(self) -> None:
        args = self.args
        if self.all_attributes_form and not args:
            raise self.fail(
                f'Arguments to "{self.fn_name}" can be of the next forms: '
                "[resource_name] or [resource_name, attribute, (path), ...]"
            )
        if not is_list(args):
            raise self.fail(f'Argument to "{self.fn_name}" must be a list')
        if len(args) < 2 and not (self.all_attributes_form and len(args) == 1):
            raise self.fail(
                f'Arguments to "{self.fn_name}" must be of the form '
                "[resource_name, attribute, (path), ...]"
            )

    def resource_name_arg(self) -> Any:
        return self.args[0]

    def _attribute_arg(self) -> Any:
        return self.args[1] if len(self.args) > 1 else None

    def validate(self) -> None:
        super().validate()
        attribute = self._attribute_arg()
        if attribute is None or has_functions(attribute) or has_functions(self.args[0]):
            return
        names = self.resource().attribute_names()
        if names is not None and attribute not in names:
            raise self.fail(f"The Referenced Attribute ({self.args[0]} {attribute}) is incorrect.")

    def result(self) -> Any:
        ref = self.resource()
        if self._attribute_arg() is None:
            return ref.all_attributes()
        name = resolve(self._attribute_arg())
        path = resolve(list(self.args[2:]))
        with_path = getattr(ref, "attribute_with_path", None)
        if path and with_path is not None:
            # Groups apply the path to each member (Heat's get_nested_attrs).
            return with_path(name, path)
        value = ref.attribute(name)
        if value is None:
            return None
        return select_path(value, path)


class GetAttThenSelect(GetAtt):
    """2013-05-23: the attribute, then the path selected from it."""


class GetAttAllAttributes(GetAtt):
    """2015-10-15 and later: ``get_attr: [resource]`` gives every attribute."""

    all_attributes_form = True


# -- get_file ------------------------------------------------------------------------------


class GetFile(HeatFunction):
    """``get_file: key`` -- content of a file the loader collected."""

    def _content(self, key: Any) -> str:
        if not isinstance(key, str):
            raise self.fail(f'Argument to "{self.fn_name}" must be a string')
        content = self.ctx.file(key)
        if content is None:
            raise self.fail(
                'No content found in the "files" section for ' f"{self.fn_name} path: {key}"
            )
        return content

    def validate(self) -> None:
        if not has_functions(self.args):
            self._content(self.args)

    def result(self) -> Any:
        return self._content(resolve(self.args))


# -- list_join ------------------------------------------------------------------------------


class Join(HeatFunction):
    """``list_join: [delim, [strings]]`` up to 2015-04-30 (and ``Fn::Join``)."""

    example = '"{fn}" : [ " ", [ "str1", "str2"]]'

    def _bad_args(self) -> str:
        example = self.example.format(fn=self.fn_name)
        return f'Incorrect arguments to "{self.fn_name}" should be: {example}'

    def check_args(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.fail(self._bad_args())

    def _delimiter(self) -> str:
        delim = resolve(self.args[0])
        if not isinstance(delim, str):
            raise self.fail(f'"{self.fn_name}" delimiter must be a string')
        return delim

    def _as_list(self, value: Any) -> Sequence[Any]:
        if not is_list(value):
            raise self.fail(f'"{self.fn_name}" must operate on a list')
        return cast(Sequence[Any], value)

    def item_text(self, item: Any) -> str:
        if item is None:
            return ""
        if not isinstance(item, str):
            raise self.fail(f"Items to join must be strings not {repr(item)[:200]}")
        return item

    def result(self) -> Any:
        strings = resolve(self.args[1])
        strings = self._as_list([] if strings is None else strings)
        return self.joined(self._delimiter(), strings)

    def joined(self, delim: str, strings: Sequence[Any]) -> str:
        """The items joined; a long delimiter between many items multiplies, so
        the size is checked before the text is built."""
        texts = [self.item_text(s) for s in strings]
        size = sum(map(len, texts)) + len(delim) * max(len(texts) - 1, 0)
        if size > MAX_VALUE_SIZE:
            raise too_large(self, size)
        return delim.join(texts)


class JoinMultiple(Join):
    """``list_join: [delim, [..], [..], ...]`` from 2015-10-15; maps/lists as JSON."""

    example = '"{fn}" : [ " ", [ "str1", "str2"] ...]'

    def check_args(self) -> None:
        if not isinstance(self.args, list) or len(self.args) < 2:
            raise self.fail(self._bad_args())

    def item_text(self, item: Any) -> str:
        if item is None:
            return ""
        if isinstance(item, str):
            return item
        if isinstance(item, (Mapping, Sequence)):
            try:
                return to_json(item)
            except TypeError:
                raise self.fail(
                    "Items to join must be string, map or list. "
                    f"{repr(item)[:200]} failed json serialization"
                ) from None
        raise self.fail(f"Items to join must be string, map or list not {repr(item)[:200]}")

    def result(self) -> Any:
        strings: list[Any] = []
        for joined in resolve(list(self.args[1:])):
            if joined:
                strings += self._as_list(joined)
        return self.joined(self._delimiter(), strings)


# -- str_replace ------------------------------------------------------------------------------


class Replace(HeatFunction):
    """``str_replace: {template, params}`` up to 2015-04-30: scalar values only.

    Longer placeholders win over shorter ones, equal lengths go in alphabetical
    order, and replaced text is never scanned again (Heat: functions.py Replace).
    """

    strict: ClassVar[bool] = False
    allow_empty_value: ClassVar[bool] = True

    def check_args(self) -> None:
        self._mapping, self._template = self.split_args()
        if not isinstance(self._mapping, (Mapping, Function)):
            raise self.fail(f'"{self.fn_name}" parameters must be a mapping')

    def split_args(self) -> tuple[Any, Any]:
        if not isinstance(self.args, Mapping):
            raise self.fail(f'Arguments to "{self.fn_name}" must be a map')
        if "params" not in self.args or "template" not in self.args:
            example = (
                f"{self.fn_name}:\n"
                "              template: This is var1 template var2\n"
                "              params:\n"
                "                var1: a\n"
                "                var2: string"
            )
            raise self.fail(f'"{self.fn_name}" syntax should be {example}')
        return self.args["params"], self.args["template"]

    def value_text(self, value: Any, param: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, (str, int, float, bool)):
            raise self.fail(
                f'"{self.fn_name}" params must be strings or numbers, '
                f"param {param} is not valid"
            )
        return str(value)

    def result(self) -> Any:
        template = resolve(self._template)
        mapping = resolve(self._mapping)
        if not isinstance(template, str):
            raise self.fail(f'"{self.fn_name}" template must be a string')
        if not isinstance(mapping, Mapping):
            raise self.fail(f'"{self.fn_name}" params must be a map')
        if not all(isinstance(key, str) for key in mapping):
            raise self.fail(f'"{self.fn_name}" param placeholders must be strings')
        if "" in mapping:
            raise self.fail(f'"{self.fn_name}" param placeholders must not be empty')
        keys = sorted(sorted(mapping), key=len, reverse=True)
        values = {key: self.value_text(mapping[key], key) for key in keys}
        found: set[str] = set()
        try:
            text = _replace_all([template], keys, values, found)[0]
        except _TooLarge as exc:
            raise too_large(self, exc.args[0]) from None
        missing = set(mapping) - found
        if self.strict and missing:
            listed = ",".join(sorted(sorted(missing), key=len, reverse=True))
            raise self.fail(f"The following params were not found in the template: {listed}")
        return text


def _replace_all(
    strings: list[str], keys: Sequence[str], values: Mapping[str, str], found: set[str]
) -> list[str]:
    """Replace the first key in each string, then the rest inside the pieces.

    Splitting on a key and replacing the remaining keys only inside the pieces is
    what keeps replaced text from being replaced again.  Done key by key over a
    list of pieces (``str`` still to scan, ``_Done`` replaced text), so thousands
    of params need no recursion, and the length of the result is known before
    it is built: at most MAX_VALUE_SIZE characters.
    """
    results = []
    for text in strings:
        pieces: list[Any] = [text]
        size = len(text)
        for key in keys:
            replacement, scanned = values[key], []
            for piece in pieces:
                if isinstance(piece, _Done) or key not in piece:
                    scanned.append(piece)
                    continue
                found.add(key)
                parts = piece.split(key)
                size += (len(parts) - 1) * (len(replacement) - len(key))
                if size > MAX_VALUE_SIZE:
                    raise _TooLarge(size)
                scanned.append(parts[0])
                for part in parts[1:]:
                    scanned += (_Done(replacement), part)
            pieces = scanned
        results.append("".join(pieces))
    return results


class _Done(str):
    """Text a replacement put in: never scanned again."""


class _TooLarge(Exception):
    """A function's result would exceed MAX_VALUE_SIZE (the size it would have)."""


def too_large(function: Function, size: int) -> StackValidationFailed:
    return function.error(
        f'The result of "{function.fn_name}" would be {size} characters or items long, more '
        f"than the maximum of {MAX_VALUE_SIZE}")


class ReplaceJson(Replace):
    """``str_replace`` from 2015-10-15: maps and lists are substituted as JSON."""

    def _empty(self, param: str) -> StackValidationFailed:
        return self.fail(
            f"{self.fn_name} has an undefined or empty value for param {param}, "
            "must be a defined non-empty value"
        )

    def value_text(self, value: Any, param: str) -> str:
        if value is None:
            if self.allow_empty_value:
                return ""
            raise self._empty(param)
        if isinstance(value, (str, int, float, bool)):
            text = str(value)
            if not self.allow_empty_value and not text:
                raise self._empty(param)
            return text
        if isinstance(value, (Mapping, Sequence)):
            if not self.allow_empty_value and len(value) == 0:
                raise self._empty(param)
            try:
                return to_json(value)
            except TypeError:
                raise self.fail(
                    f'"{self.fn_name}" params must be strings, numbers, list or map. '
                    f"Failed to json serialize {value}"
                ) from None
        raise self.fail(f'"{self.fn_name}" params must be strings, numbers, list or map.')


class ReplaceJsonStrict(ReplaceJson):
    """``str_replace_strict`` (2017-02-24): every param must occur in the template."""

    strict = True


class ReplaceJsonVeryStrict(ReplaceJsonStrict):
    """``str_replace_vstrict`` (2017-09-01): ... and no param value may be empty."""

    allow_empty_value = False


# -- str_split ------------------------------------------------------------------------------


class StrSplit(HeatFunction):
    """``str_split: [delimiter, string, (index)]`` (2015-10-15)."""

    def _bad(self, what: str = "arguments") -> str:
        example = f'"{self.fn_name}" : [ ",", "apples,pears", <index>]'
        return f'Incorrect {what} to "{self.fn_name}" should be: {example}'

    def check_args(self) -> None:
        if isinstance(self.args, (str, Mapping)):
            raise self.fail(self._bad())

    def result(self) -> Any:
        args = resolve(self.args)
        if not isinstance(args, list) or len(args) < 2:
            raise self.fail(self._bad())
        delim, text = args[0], args[1]
        if text is None:
            return None
        try:  # Heat calls str.split as it is: its error is the message
            pieces = text.split(delim)
        except (AttributeError, TypeError, ValueError) as error:
            raise self.fail(str(error)) from None
        if not isinstance(pieces, list):  # an object with a split() of its own
            raise self.fail(self._bad())
        if len(args) == 2:
            return pieces
        try:
            index = int(args[2])
        except ValueError:
            raise self.fail(self._bad("index")) from None
        except TypeError as error:  # Heat lets int()'s own error through
            raise self.fail(str(error)) from None
        try:
            return pieces[index]
        except IndexError:
            raise self.fail(
                f'Incorrect index to "{self.fn_name}" should be between 0 and ' f"{len(pieces) - 1}"
            ) from None


# -- repeat ------------------------------------------------------------------------------


class Repeat(HeatFunction):
    """``repeat: {template, for_each}`` (2015-04-30): lists, every combination."""

    # Which for_each values are accepted, and how Heat names them in errors.
    accepts_maps: ClassVar[bool] = False
    has_permutations: ClassVar[bool] = False

    def check_args(self) -> None:
        if not isinstance(self.args, Mapping):
            raise self.fail(f'Arguments to "{self.fn_name}" must be a map')
        # Heat does not reject unknown keys here ("probably too late to change").
        if "for_each" not in self.args or "template" not in self.args:
            example = (
                "repeat:\n"
                "              template: This is %var%\n"
                "              for_each:\n"
                "                %var%: ['a', 'b', 'c']"
            )
            raise self.fail(f'"repeat" syntax should be {example}')
        self.nested = self.args.get("permutations", True) if self.has_permutations else True
        if not isinstance(self.nested, bool):
            raise self.fail(f'"permutations" should be boolean type for {self.fn_name} function.')

    def _for_each_error(self) -> StackValidationFailed:
        return self.fail(f'The "for_each" argument to "{self.fn_name}" must contain a map')

    def validate(self) -> None:
        for_each = self.args["for_each"]
        if not isinstance(for_each, (Function, Mapping)):
            raise self._for_each_error()

    def _check_value(self, value: Any) -> None:
        maps_ok = self.accepts_maps and self.nested
        allowed = (Sequence, Mapping) if maps_ok else (Sequence,)
        if isinstance(value, str) or not isinstance(value, allowed):
            kinds = "lists or maps" if maps_ok else "lists"
            raise self.fail(
                f'The values of the "for_each" argument to "{self.fn_name}" must be {kinds}'
            )

    def result(self) -> Any:
        for_each = resolve(self.args["for_each"])
        if not isinstance(for_each, Mapping) or not for_each:
            raise self._for_each_error()
        keys = list(for_each)
        values: list[Any] = []
        for value in for_each.values():
            if value is not None:
                self._check_value(value)
            values.append([] if value is None else value)
        lengths = {len(v) for v, raw in zip(values, for_each.values()) if raw is not None}
        if not self.nested and len(lengths) > 1:
            raise self.fail(
                f"For {self.fn_name}, the length of for_each values should be equal "
                "if no nested loop."
            )
        template = resolve(self.args["template"])
        combine = itertools.product if self.nested else zip
        count = math.prod(map(len, values)) if self.nested else min(map(len, values))
        if count > MAX_VALUE_SIZE:
            raise too_large(self, count)
        budget = _Budget(self)
        return [self._substitute(keys, combo, template, budget) for combo in combine(*values)]

    def _substitute(self, keys: Sequence[str], values: Sequence[Any], template: Any,
                    budget: "_Budget") -> Any:
        if isinstance(template, str):
            for key, value in zip(keys, values):
                if isinstance(value, str) and key:
                    budget.spend(template.count(key) * max(len(value) - len(key), 0))
                try:
                    template = template.replace(key, value)
                except TypeError as exc:
                    raise self.fail(str(exc)) from None
            budget.spend(len(template))
            return template
        budget.spend(1)
        if isinstance(template, Sequence):
            return [self._substitute(keys, values, item, budget) for item in template]
        if isinstance(template, Mapping):
            return {
                self._substitute(keys, values, k, budget): self._substitute(keys, values, v, budget)
                for k, v in template.items()
            }
        return template


class _Budget:
    """Characters and items one call may still produce (MAX_VALUE_SIZE in all)."""

    def __init__(self, function: Function) -> None:
        self.function = function
        self.spent = 0

    def spend(self, size: int) -> None:
        self.spent += size
        if self.spent > MAX_VALUE_SIZE:
            raise too_large(self.function, self.spent)


class RepeatWithMap(Repeat):
    """2016-10-14: a for_each value may also be a map (its keys are used)."""

    accepts_maps = True


class RepeatWithNestedLoop(RepeatWithMap):
    """2017-09-01: ``permutations: false`` pairs the lists instead (lists only)."""

    has_permutations = True


# -- digest ------------------------------------------------------------------------------


class Digest(HeatFunction):
    """``digest: [algorithm, value]`` (2015-04-30)."""

    def result(self) -> Any:
        args = resolve(self.args)
        if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
            raise self.fail(f'Argument to function "{self.fn_name}" must be a list of strings')
        if len(args) != 2:
            raise self.fail(f'Function "{self.fn_name}" usage: ["<algorithm>", "<value>"]')
        # SHAKE digests have no fixed length: hexdigest() would need one.
        algorithms = sorted(a for a in hashlib.algorithms_available if not a.startswith("shake"))
        if args[0].lower() not in algorithms:
            # Heat names only the allowed ones; the one given is what the user must fix.
            raise self.fail(f'Unknown algorithm "{args[0]}": Algorithm must be one of '
                            f'{", ".join(algorithms)}')
        try:
            digest = hashlib.new(args[0])
            # Heat: functions.py Digest hashes the latin-1 encoding of the value.
            digest.update(args[1].encode("latin-1"))
        except UnicodeEncodeError as exc:
            raise self.fail(str(exc)) from None
        except ValueError as exc:  # listed, but this OpenSSL refuses it
            raise self.fail(f"Algorithm {args[0]} is not usable here: {exc}") from None
        return digest.hexdigest()


# -- resource_facade ------------------------------------------------------------------------


class ResourceFacade(HeatFunction):
    """``resource_facade: metadata|deletion_policy|update_policy`` (provider templates)."""

    # Name as written -> the key the stack context knows.
    attributes: ClassVar[Mapping[str, str]] = {
        "metadata": "metadata",
        "deletion_policy": "deletion_policy",
        "update_policy": "update_policy",
    }

    def check_args(self) -> None:
        if not isinstance(self.args, str) or self.args not in self.attributes:
            allowed = ", ".join(self.attributes)
            raise self.fail(f'Incorrect arguments to "{self.fn_name}" should be one of: {allowed}')

    def result(self) -> Any:
        try:
            return self.ctx.facade(self.attributes[self.args])
        except StackValidationFailed as error:
            raise self.fail(error.message) from None


# -- maps and lists ------------------------------------------------------------------------


class MapMerge(HeatFunction):
    """``map_merge: [map, map, ...]`` (2016-04-08): later keys win."""

    def result(self) -> Any:
        args = resolve(self.args)
        if not isinstance(args, Sequence):
            example = f'"{self.fn_name}" : [ {{ "key1": "val1" }}, {{ "key2": "val2" }} ]'
            raise self.fail(f'Incorrect arguments to "{self.fn_name}" should be: {example}')
        merged: dict[Any, Any] = {}
        for item in args:
            if item is None:
                continue
            if not isinstance(item, Mapping):
                raise self.fail(
                    "Incorrect arguments: Items to merge must be maps. "
                    f"{repr(item)[:200]} is type {type(item)} instead of a dict"
                )
            merged.update(item)
        return merged


class MapReplace(HeatFunction):
    """``map_replace: [map, {keys: {..}, values: {..}}]`` (2016-10-14)."""

    def _example(self) -> str:
        return (
            f'"{self.fn_name}" : [ {{ "key1": "val1" }}, '
            '{"keys": {"key1": "key2"}, "values": {"val1": "val2"}}]'
        )

    def _bad(self) -> StackValidationFailed:
        return self.fail(f'Incorrect arguments to "{self.fn_name}" should be: {self._example()}')

    def _as_map(self, value: Any) -> Mapping[Any, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(
                f'Incorrect arguments: to "{self.fn_name}", arguments must be a list of '
                f"maps. Example:  {self._example()}"
            )
        return value

    def result(self) -> Any:
        args = resolve(self.args)
        if not isinstance(args, list) or len(args) != 2:
            raise self._bad()
        source, replacements = self._as_map(args[0]), self._as_map(args[1])
        if any(k not in ("keys", "values") for k in replacements):
            raise self._bad()
        new_keys = self._as_map(replacements.get("keys", {}))
        new_values = self._as_map(replacements.get("values", {}))
        return self._replace(source, new_keys, new_values)

    def _replace(
        self, source: Mapping[Any, Any], new_keys: Mapping[Any, Any], new_values: Mapping[Any, Any]
    ) -> dict[Any, Any]:
        replaced: dict[Any, Any] = {}
        for key, value in source.items():
            new_key = new_keys.get(key)
            if new_key is None:
                new_key = key
            elif new_key in source and new_key != key:
                raise self.fail(f"key replacement {new_key} collides with a key in the input map")
            elif new_key in replaced:
                raise self.fail(f"key replacement {new_key} collides with a key in the output map")
            try:
                replaced[new_key] = new_values.get(value, value)
            except TypeError:  # an unhashable value is never replaced
                replaced[new_key] = value
        return replaced


class ListConcat(HeatFunction):
    """``list_concat: [list, list, ...]`` (2017-09-01)."""

    unique: ClassVar[bool] = False

    def result(self) -> Any:
        args = resolve(self.args)
        if not is_list(args):
            example = f'"{self.fn_name}" : [ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]'
            raise self.fail(f'Incorrect arguments to "{self.fn_name}" should be: {example}')
        items: list[Any] = []
        for item in args:
            if item is None:
                continue
            if not is_list(item):
                raise self.fail(
                    "Incorrect arguments: Items to concat must be lists. "
                    f"{_dumps(args)} contains an item that is not a list: {_dumps(item)}"
                )
            items.extend(item)
        return _unique(items) if self.unique else items


class ListConcatUnique(ListConcat):
    """``list_concat_unique`` (2017-09-01): first occurrence of each item kept."""

    unique = True


def _unique(items: list[Any]) -> list[Any]:
    """The first occurrence of each item, by equality (maps and lists too), in
    linear time: a list of 100,000 items must not take minutes."""
    seen: set[Any] = set()
    kept: list[Any] = []
    for item in items:
        key = _frozen(item)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _frozen(value: Any) -> Any:
    """A hashable stand-in that is equal exactly when the values are equal."""
    if isinstance(value, Mapping):
        return frozenset((_frozen(k), _frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value)
    except TypeError:
        return repr(value)


class Contains(HeatFunction):
    """``contains: [value, sequence]`` (2017-09-01)."""

    def check_args(self) -> None:
        if not self.args or not isinstance(self.args, list):
            example = f'"{self.fn_name}" : [ "value1", [ "value1", "value2"]]'
            raise self.fail(f'Incorrect arguments to "{self.fn_name}" should be: {example}')
        if len(self.args) != 2:
            raise self.fail(
                f'Arguments to "{self.fn_name}" must be of the form: [value1, [value1, value2]]'
            )

    def result(self) -> Any:
        value, sequence = resolve(self.args[0]), resolve(self.args[1])
        # Heat: a string is a sequence too, so this is also a substring test.
        if not isinstance(sequence, Sequence):
            raise self.fail(f'Second argument to "{self.fn_name}" should be a sequence.')
        if isinstance(sequence, str) and not isinstance(value, str):
            # Python cannot look for anything but text in text (Heat fails here too).
            raise self.fail(f'First argument to "{self.fn_name}" should be a string when the '
                            "second is a string.")
        return value in sequence


class Filter(HeatFunction):
    """``filter: [values, list]`` (2017-02-24): the list without those values."""

    def check_args(self) -> None:
        if not is_list(self.args):
            raise self.fail(f'Argument to "{self.fn_name}" must be a list')
        if len(self.args) != 2:
            raise self.fail(
                f'"{self.fn_name}" expected 2 arguments of the form [values, sequence] '
                f"but got {len(self.args)} arguments instead"
            )

    def result(self) -> Any:
        sequence = resolve(self.args[1])
        if not sequence:
            return sequence
        if not isinstance(sequence, list):
            raise self.fail(f'"{self.fn_name}" only works with lists')
        values = resolve(self.args[0])
        if not values:
            return sequence
        if not isinstance(values, list):
            raise self.fail(f'"{self.fn_name}" filters a list of values')
        dropped = {_frozen(value) for value in values}
        return [item for item in sequence if _frozen(item) not in dropped]


# -- make_url ------------------------------------------------------------------------------


class MakeURL(HeatFunction):
    """``make_url: {scheme, username, password, host, port, path, query, fragment}``."""

    keys: ClassVar[tuple[str, ...]] = (
        "scheme",
        "username",
        "password",
        "host",
        "port",
        "path",
        "query",
        "fragment",
    )

    def validate(self) -> None:
        if not isinstance(self.args, Mapping):
            raise self.fail(f'The arguments to "{self.fn_name}" must be a map')
        invalid = set(self.args) - set(self.keys)
        if invalid:
            raise self.fail(f'Invalid arguments to "{self.fn_name}": {", ".join(invalid)}')
        self._check(self.args)

    def _check(self, args: Mapping[str, Any]) -> None:
        for key in self.keys:
            if key not in args:
                continue
            value = args[key]
            if key == "query":
                if not isinstance(value, (Function, Mapping)):
                    raise self.fail(f'The "query" argument to "{self.fn_name}" must be a map')
                # Heat: functions.py MakeURL stops checking after "query", so
                # "fragment" is not type-checked when a query is given.
                return
            if key == "port":
                self._check_port(value, args)
            elif not isinstance(value, (Function, str)):
                raise self.fail(f'The "{key}" argument to "{self.fn_name}" must be a string')

    def _check_port(self, port: Any, args: Mapping[str, Any]) -> None:
        if isinstance(port, Function):
            return
        if not isinstance(port, int):
            try:
                port = int(port)
            except (TypeError, ValueError):
                raise self.fail(
                    f'Invalid URL port "{port}" for {self.fn_name} called with {dict(args)}'
                ) from None
        if not 0 < port <= 65535:
            raise self.fail(f"Invalid URL port {port}, must be in range 1-65535")

    def result(self) -> Any:
        args = resolve(self.args)
        if not isinstance(args, Mapping):
            raise self.fail(f'The arguments to "{self.fn_name}" must be a map')
        self._check(args)
        scheme = args.get("scheme", "")
        if ":" in scheme:
            raise self.fail("URL \"scheme\" should not contain ':'")
        path = urlparse.quote(args.get("path", ""))
        query = urlparse.urlencode(args.get("query", {})).replace("%2F", "/")
        fragment = urlparse.quote(args.get("fragment", ""))
        return urlparse.urlunsplit((scheme, self._netloc(args), path, query, fragment))

    @staticmethod
    def _netloc(args: Mapping[str, Any]) -> str:
        username = urlparse.quote(args.get("username", ""), safe="")
        password = urlparse.quote(args.get("password", ""), safe="")
        userinfo = ""
        if username or password:
            userinfo = username + (f":{password}" if password else "") + "@"
        host = args.get("host", "")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        host = urlparse.quote(host, safe=":")
        if ":" in host:  # an IPv6 address goes in brackets
            host = f"[{host}]"
        port = args.get("port", "")
        return userinfo + host + (f":{port}" if port else "")


# -- not in this version ------------------------------------------------------------------


class Removed(Function):
    """A function an earlier HOT version had and this one removed (Heat's Removed)."""

    def _unsupported(self) -> StackValidationFailed:
        return self.error(
            "The template version is invalid: "
            f"The function {self.fn_name} is not supported in this version of HOT."
        )

    def validate(self) -> None:
        raise self._unsupported()

    def result(self) -> Any:
        raise self._unsupported()


class NotYetAdded(Removed):
    """A function of a later HOT version (Heat would read it as plain data).

    Subclasses made by ``not_yet_added`` say which version has it first.
    """

    version: ClassVar[str] = ""
    added_in: ClassVar[str] = ""

    def _unsupported(self) -> StackValidationFailed:
        return self.error(
            "The template version is invalid: "
            f"The function {self.fn_name} is not supported in this version of HOT "
            f"({self.version}); it is available from heat_template_version {self.added_in}."
        )


def not_yet_added(version: str, added_in: str) -> type[Function]:
    """The table entry for a function ``version`` does not have yet."""
    return type("NotYetAdded", (NotYetAdded,), {"version": version, "added_in": added_in})


class Invalid(Function):
    """A function of the template that a condition may not use (Heat's Invalid)."""

    def __init__(self, ctx: base.StackContext, fn_name: str, args: Any, path: str) -> None:
        super().__init__(ctx, fn_name, args, path)
        raise self.error(f'The function "{fn_name}" is invalid in this context')

    def result(self) -> Any:  # pragma: no cover - never constructed
        raise NotImplementedError
