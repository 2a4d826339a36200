# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CloudFormation functions: those of CFN templates, and those HOT 2013-05-23
still accepts.

``Fn::Select`` lives on in HOT until 2015-04-30; the others are removed from
2014-10-16 (see ``template/versions.py``).  ``Fn::GetAtt``, ``Fn::FindInMap``,
``Fn::If`` and the CFN condition functions are in no HOT version's table, so a
HOT template reads them as plain data, as Heat does; the CFN templates
(``AWSTemplateFormatVersion``, ``HeatTemplateFormatVersion``) have them.  Facts
from heat/engine/cfn/functions.py and heat/engine/cfn/template.py.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from .base import resolve
from .conditions import Not as HotNot
from .conditions import enabled
from .hot import (
    GetAttThenSelect,
    GetResource,
    HeatFunction,
    Join as HotJoin,
    Replace as HotReplace,
    invalid_reference,
)
from .hot import ResourceFacade as HotResourceFacade
from .hot import is_list


class GetAZs(HeatFunction):
    """``Fn::GetAZs: region`` -- the availability zones.

    Heat asks Nova; with no Nova here the answer is Heat's own answer when it has
    no stack to ask for: ``["nova"]``.
    """

    def result(self) -> Any:
        return ["nova"]


class Ref(HeatFunction):
    """``Ref: name`` -- a resource's reference id, else a parameter's value.

    Heat (cfn/functions.py Ref) decides once, when the call is parsed, by whether
    a resource of that name exists.
    """

    def check_args(self) -> None:
        self._as_resource: GetResource | None = None
        if isinstance(self.args, str) and self.ctx.has_resource(self.args):
            self._as_resource = GetResource(self.ctx, self.fn_name, self.args, self.path)

    def dependencies(self) -> Any:
        return self._as_resource.dependencies() if self._as_resource else iter(())

    def validate(self) -> None:
        if self._as_resource is not None:
            self._as_resource.validate()

    def result(self) -> Any:
        if self._as_resource is not None:
            return self._as_resource.result()
        name = resolve(self.args)
        pseudo = {
            "OS::stack_name": self.ctx.stack_name,
            "OS::stack_id": self.ctx.stack_id,
            "OS::project_id": self.ctx.project_id,
        }
        if isinstance(name, str) and name in pseudo:
            return pseudo[name]
        if not isinstance(name, str) or not self.ctx.has_param(name):
            raise self.fail(invalid_reference(name, self.where()))
        return self.ctx.param(name)


class Select(HeatFunction):
    """``Fn::Select: [index, list_or_map]`` -- '' when the item is not there."""

    def check_args(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.fail(
                f'Arguments to "{self.fn_name}" must be of the form [index, collection]'
            )

    def result(self) -> Any:
        index = resolve(self.args[0])
        collection = resolve(self.args[1])
        if collection == "":
            # Heat: an unavailable value often resolves to ''; pass it on.
            return ""
        if isinstance(collection, str):
            try:
                collection = json.loads(collection)
            except ValueError as exc:
                raise self.fail(f'"{self.fn_name}": {exc}') from None
        if isinstance(collection, Mapping):
            if not isinstance(index, str):
                raise self.fail(f'Index to "{self.fn_name}" must be a string')
            return collection.get(index, "")
        return self._from_list(index, collection)

    def _from_list(self, index: Any, collection: Any) -> Any:
        try:
            index = int(index)
        except (ValueError, TypeError):
            pass
        if is_list(collection):
            if not isinstance(index, int):
                raise self.fail(f'Index to "{self.fn_name}" must be an integer')
            try:
                return collection[index]
            except IndexError:
                return ""
        if collection is None:
            return ""
        raise self.fail(f"Arguments to {self.fn_name} not fully resolved")


class Join(HotJoin):
    """``Fn::Join: [delim, [strings]]`` -- the 2013-05-23 ``list_join``."""


class Split(HeatFunction):
    """``Fn::Split: [delim, string]``."""

    def check_args(self) -> None:
        example = f'"{self.fn_name}" : [ ",", "str1,str2"]]'
        message = f'Incorrect arguments to "{self.fn_name}" should be: {example}'
        if isinstance(self.args, (str, Mapping)) or not is_list(self.args):
            raise self.fail(message)
        if len(self.args) != 2:
            raise self.fail(message)

    def result(self) -> Any:
        delim = self.args[0]
        text = resolve(self.args[1])
        # Heat checks the delimiter as written, before resolving it.
        if not isinstance(delim, str):
            raise self.fail(f"Delimiter for {self.fn_name} must be string")
        if not isinstance(text, str):
            raise self.fail(f"String to split must be string; got {type(text)}")
        return text.split(delim)


class Replace(HotReplace):
    """``Fn::Replace: [{placeholder: value}, template]``."""

    def split_args(self) -> tuple[Any, Any]:
        example = (
            f'{{"{self.fn_name}": [ {{"$var1": "foo", "%var2%": "bar"}}, ' '"$var1 is %var2%"]}'
        )
        message = f'Incorrect arguments to "{self.fn_name}" should be: {example}'
        if isinstance(self.args, (str, Mapping)) or not is_list(self.args):
            raise self.fail(message)
        if len(self.args) != 2:
            raise self.fail(message)
        return self.args[0], self.args[1]


class Base64(HeatFunction):
    """``Fn::Base64: string`` -- Heat passes the text through unchanged."""

    def result(self) -> Any:
        value = resolve(self.args)
        if not isinstance(value, str):
            raise self.fail(f'"{self.fn_name}" argument must be a string')
        return value


class MemberListToMap(HeatFunction):
    """``Fn::MemberListToMap: [key_name, value_name, ['.member.0.Name=k', ...]]``."""

    correct: ClassVar[str] = (
        "\n            {'Fn::MemberListToMap': ['Name', 'Value',\n"
        "                                     ['.member.0.Name=key',\n"
        "                                      '.member.0.Value=door']]}\n            "
    )

    def check_args(self) -> None:
        if not is_list(self.args) or len(self.args) != 3:
            raise self.fail(f'Wrong Arguments try: "{self.correct}"')
        if not isinstance(self.args[0], str):
            raise self.fail(f"{self.fn_name} Key Name must be a string")
        if not isinstance(self.args[1], str):
            raise self.fail(f"{self.fn_name} Value Name must be a string")

    def result(self) -> Any:
        members = resolve(self.args[2])
        if not isinstance(members, Iterable) or isinstance(members, (str, Mapping)):
            raise self.fail("Member list must be a list")
        pairs: dict[str, str] = {}
        for item in members:
            if not isinstance(item, str):
                raise self.fail("Member list items must be strings")
            key, sep, value = item.partition("=")
            if sep:
                pairs[key] = value
        return _member_pairs(pairs, self.args[0], self.args[1])


_MEMBER = re.compile(r"\.member\.([0-9]+)\.(.*)")


def _member_pairs(pairs: Mapping[str, str], key_name: str, value_name: str) -> dict[str, str]:
    """Heat's aws utils.extract_param_pairs: group ``.member.N.field`` by N."""
    fields = sorted(
        (int(m.group(1)), m.group(2), value)
        for name, value in pairs.items()
        if (m := _MEMBER.match(name))
    )
    result: dict[str, str] = {}
    for _index, group in itertools.groupby(fields, key=lambda f: f[0]):
        member = {field: value for _index, field, value in group}
        if key_name in member and value_name in member:
            result[member[key_name]] = member[value_name]
    return result


class ResourceFacade(HotResourceFacade):
    """``Fn::ResourceFacade: Metadata|DeletionPolicy|UpdatePolicy``."""

    attributes: ClassVar[Mapping[str, str]] = {
        "Metadata": "metadata",
        "DeletionPolicy": "deletion_policy",
        "UpdatePolicy": "update_policy",
    }


# -- the functions only CFN templates have -----------------------------------------------


class ParamRef(HeatFunction):
    """``Ref: parameter`` in a condition: a parameter only (Heat's ParamRef); an
    unknown name is 'in unknown', as Heat words it.  The pseudo parameters are the
    template's own (``AWS::StackName``, ``AWS::StackId``, ``AWS::Region``), which
    the stack context answers for."""

    def result(self) -> Any:
        name = resolve(self.args)
        if not isinstance(name, str) or not self.ctx.has_param(name):
            raise self.fail(invalid_reference(name, "unknown"))
        return self.ctx.param(name)


class CfnRef(Ref):
    """``Ref: name`` in a CFN template: a resource's reference id (decided when the
    call is parsed), else a parameter as ``ParamRef`` reads it."""

    def result(self) -> Any:
        if self._as_resource is not None:
            return self._as_resource.result()
        return ParamRef.result(self)  # type: ignore[arg-type]  # the same reading of ctx and args


class FindInMap(HeatFunction):
    """``Fn::FindInMap: [mapping, key, value]`` -- a value of the ``Mappings`` section.

    Heat unpacks exactly three arguments when the call is parsed, and looks the
    value up when it is resolved (a name that is not there is a KeyError there;
    here a message that says which name).
    """

    def check_args(self) -> None:
        if not is_list(self.args):
            raise self.fail(f'Arguments to "{self.fn_name}" must be a list: [mapping, key, value]')
        try:
            _mapping, _key, _value = self.args
        except ValueError as error:
            # Heat's words are Python's, quoted (a KeyError's text).
            raise self.fail(repr(str(error))) from None

    def result(self) -> Any:
        found: Any = self.ctx.mappings()
        where = "Mappings"
        for step in (resolve(item) for item in self.args):
            if not isinstance(found, Mapping) or not _hashable(step) or step not in found:
                raise self.fail(f'"{self.fn_name}": {where} has no key {json.dumps(step, default=str)}')
            found, where = found[step], f"{where}.{step}"
        return found


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


class GetAtt(GetAttThenSelect):
    """``Fn::GetAtt: [resource, attribute]`` -- exactly two items (no path)."""

    def check_args(self) -> None:
        if not is_list(self.args) or len(self.args) != 2:
            raise self.fail(f'Arguments to "{self.fn_name}" must be of the form '
                            "[resource_name, attribute]")


class Not(HotNot):
    """``Fn::Not: [condition]`` -- a list of exactly one condition."""

    def check_args(self) -> None:
        if not is_list(self.args) or len(self.args) != 1:
            raise self.fail(f'Arguments to "{self.fn_name}" must be of the form: [condition]')

    def result(self) -> Any:
        return not enabled(self.ctx, resolve(self.args[0]), self.path)
