# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the generated part of the bad-input corpus: wrong types at every level.

Each table row puts one wrong value at one place of an otherwise valid template
and says the error Heat's rules give there.  The output (bad_input/generated/:
one template per case and cases.yaml) is committed; the unit tests check that
running this again changes nothing, so edit the tables, not the output:

    .venv/bin/python tests/corpus/generate.py
"""

from __future__ import annotations

import copy
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).resolve().parent / "bad_input" / "generated"

BASE: dict[str, Any] = {
    "heat_template_version": "2021-04-16",
    "description": "a valid template; each case breaks one place of it",
    "parameter_groups": [{"label": "all", "parameters": ["p"]}],
    "parameters": {"p": {"type": "string", "default": "x",
                         "constraints": [{"length": {"min": 1}}]}},
    "conditions": {"c": True},
    "resources": {
        "r": {"type": "OS::Heat::TestResource", "properties": {"value": "v"},
              "metadata": {}, "update_policy": {}, "depends_on": [], "deletion_policy": "Delete",
              "description": "r", "condition": "c"},
        "v": {"type": "OS::Heat::Value", "properties": {"value": "v"}},
    },
    "outputs": {"o": {"value": 1, "description": "o", "condition": "c"}},
}

# Values of each JSON type but the one a place wants (non-empty: an empty value
# is often the same as an absent one).
WRONG = {
    "list": ["a"],
    "string": "text",
    "number": 42,
    "boolean": True,
    "mapping": {"a": 1},
}


def _shown(value: Any) -> str:
    """How Heat's messages name a Python type: ``[<class 'list'>]``."""
    return f"[{type(value)}]"


def _sections() -> Iterator[tuple[str, list[str], Any, str, str | None]]:
    """(case name, place, wrong value, message fragment, path) for sections."""
    for kind in ("list", "string", "number", "boolean"):
        value = WRONG[kind]
        yield f"document-{kind}", [], value, "The template is not a JSON object or YAML mapping.", None
        for section in ("parameters", "resources", "outputs"):
            yield (f"{section}-section-{kind}", [section], value,
                   f'The "{section}" section must be a map. Found a {_shown(value)} instead', section)
        yield (f"conditions-section-{kind}", ["conditions"], value,
               "Condition validation error: Condition definitions must be a map. Found a "
               f"{type(value).__name__} instead", "conditions")
    for kind in ("mapping", "string", "number", "boolean"):
        yield (f"parameter-groups-section-{kind}", ["parameter_groups"], WRONG[kind],
               "Parameter Groups error: The parameter_groups should be a list.", "parameter_groups")


RESOURCE_FIELDS = {  # field: (kinds that are wrong, the type Heat names)
    "type": (("list", "number", "boolean", "mapping"), "string"),
    "properties": (("list", "string", "number", "boolean"), "object"),
    "metadata": (("list", "string", "number", "boolean"), "object"),
    "update_policy": (("list", "string", "number", "boolean"), "object"),
    "depends_on": (("number", "boolean", "mapping"), "list or string"),
    "description": (("list", "number", "boolean", "mapping"), "string"),
    "external_id": (("list", "number", "boolean"), "string"),
    "condition": (("list", "number"), "string_or_boolean"),
}


def _entries() -> Iterator[tuple[str, list[str], Any, str, str | None]]:
    for kind in ("list", "string", "number", "boolean"):
        value = WRONG[kind]
        yield (f"resource-{kind}", ["resources", "r"], value,
               f'"resources" must contain a map of resource maps. Found a {_shown(value)} instead',
               "resources.r")
        yield (f"output-{kind}", ["outputs", "o"], value,
               f'"outputs" must contain a map of output maps. Found a {_shown(value)} instead',
               "outputs.o")
        yield (f"parameter-{kind}", ["parameters", "p"], value,
               "Invalid parameter (p), expected a mapping", "parameters.p")
    for field, (kinds, wanted) in RESOURCE_FIELDS.items():
        for kind in kinds:
            yield (f"resource-{field.replace('_', '-')}-{kind}", ["resources", "r", field],
                   WRONG[kind], f"Resource r {field} type must be {wanted}", f"resources.r.{field}")
    for kind in ("list", "number"):
        yield (f"output-condition-{kind}", ["outputs", "o", "condition"], WRONG[kind],
               "Output o condition type must be string_or_boolean", "outputs.o.condition")
    for kind in ("list", "number", "boolean", "mapping"):
        value = WRONG[kind]
        yield (f"parameter-type-{kind}", ["parameters", "p", "type"], value,
               f"Invalid type ({value})", "parameters.p.type")
    for kind in ("mapping", "string", "number"):
        yield (f"parameter-constraints-{kind}", ["parameters", "p", "constraints"], WRONG[kind],
               "Invalid parameter constraints for parameter p, expected a list",
               "parameters.p.constraints")
    for kind in ("list", "string", "number"):
        yield (f"parameter-constraint-entry-{kind}", ["parameters", "p", "constraints", 0],
               WRONG[kind], "Invalid parameter constraints, expected a mapping",
               "parameters.p.constraints[0]")
    for kind in ("string", "number"):
        yield (f"parameter-group-entry-{kind}", ["parameter_groups", 0], WRONG[kind],
               "Each parameter group should be a mapping.", "parameter_groups[0]")
    yield ("parameter-group-entry-without-parameters", ["parameter_groups", 0], WRONG["mapping"],
           "The parameters must be provided for each parameter group.", "parameter_groups.:")
    for kind in ("list", "number"):
        yield (f"condition-definition-{kind}", ["conditions", "c"], WRONG[kind],
               "The definition of condition is invalid", "conditions.c")


PROPERTIES = {  # TestResource property: {wrong kind: message fragment}
    "value": {"list": "Value must be a string", "mapping": "Value must be a string"},
    "wait_secs": {"string": "could not convert string to float: 'text'",
                  "list": "must be a string, a bytes-like object or a real number, not 'list'",
                  "mapping": "must be a string, a bytes-like object or a real number, not 'dict'"},
    "fail": {"string": '"text" is not a valid boolean', "list": "is not a valid boolean",
             "number": "is not a valid boolean"},
    "action_wait_secs": {"string": '"text" is not a map', "list": "is not a map",
                         "number": '"42" is not a map'},
    "update_replace": {"string": '"text" is not a valid boolean', "mapping": "is not a valid boolean"},
}


def _properties() -> Iterator[tuple[str, list[str], Any, str, str | None]]:
    for prop, wrong in PROPERTIES.items():
        for kind, message in wrong.items():
            yield (f"property-{prop.replace('_', '-')}-{kind}", ["resources", "r", "properties", prop],
                   WRONG[kind], message, f"resources.r.properties.{prop}")


FUNCTION_ARGS = [  # (function, arguments, message fragment)
    ("get_param", 42, 'Argument to "get_param" must be string or list'),
    ("get_param", {"a": 1}, 'Argument to "get_param" must be string or list'),
    ("get_param", [42], 'Parameter name in "get_param" must be string'),
    ("get_resource", 42, 'The specified reference "42"'),
    ("get_resource", ["r"], "The specified reference \"['r']\""),
    ("get_attr", 42, 'Argument to "get_attr" must be a list'),
    ("get_attr", [], 'Arguments to "get_attr" can be of the next forms'),
    ("get_attr", ["nothere", "x"], 'The specified reference "nothere"'),
    ("get_file", 42, 'Argument to "get_file" must be a string'),
    ("get_file", {"a": 1}, 'Argument to "get_file" must be a string'),
    ("list_join", 42, 'Incorrect arguments to "list_join" should be'),
    ("list_join", [","], 'Incorrect arguments to "list_join" should be'),
    ("list_join", [",", 5], '"list_join" must operate on a list'),
    ("str_replace", 42, 'Arguments to "str_replace" must be a map'),
    ("str_replace", {"template": 5, "params": {}}, '"str_replace" template must be a string'),
    ("str_replace", {"template": "x", "params": 5}, '"str_replace" parameters must be a mapping'),
    ("str_replace_strict", 42, 'Arguments to "str_replace_strict" must be a map'),
    ("str_replace_vstrict", ["a"], 'Arguments to "str_replace_vstrict" must be a map'),
    ("str_split", [",", 5], "'int' object has no attribute 'split'"),  # Heat 27: str.split's error
    ("str_split", 42, 'Incorrect arguments to "str_split" should be'),
    ("repeat", 42, 'Arguments to "repeat" must be a map'),
    ("repeat", {"template": "x", "for_each": {"a": 5}},
     'The values of the "for_each" argument to "repeat" must be lists or maps'),
    ("digest", 42, 'Argument to function "digest" must be a list of strings'),
    ("digest", ["sha256"], 'Function "digest" usage: ["<algorithm>", "<value>"]'),
    ("map_merge", 42, 'Incorrect arguments to "map_merge" should be'),
    ("map_merge", [5], "Incorrect arguments: Items to merge must be maps."),
    ("map_replace", 42, 'Incorrect arguments to "map_replace" should be'),
    ("map_replace", [5, {}], 'Incorrect arguments: to "map_replace", arguments must be a list of maps'),
    ("yaql", 42, 'Arguments to "yaql" must be a map.'),
    ("yaql", {"expression": 5}, 'The "expression" argument to yaql must contain a string.'),
    ("if", 42, 'Arguments to "if" must be of the form'),
    ("if", ["c"], 'Arguments to "if" must be of the form'),
    ("filter", 42, 'Argument to "filter" must be a list'),
    ("filter", [["a"], 5], '"filter" only works with lists'),
    ("make_url", 42, 'The arguments to "make_url" must be a map'),
    ("make_url", {"scheme": 5}, 'The "scheme" argument to "make_url" must be a string'),
    ("list_concat", 42, 'Incorrect arguments to "list_concat" should be'),
    ("list_concat", [5], "Incorrect arguments: Items to concat must be lists."),
    ("list_concat_unique", [[1], "a"], "Incorrect arguments: Items to concat must be lists."),
    ("contains", 42, 'Incorrect arguments to "contains" should be'),
    ("contains", ["a"], 'Arguments to "contains" must be of the form: [value1, [value1, value2]]'),
    ("resource_facade", 42, 'Incorrect arguments to "resource_facade" should be one of'),
]

CONDITION_ARGS = [  # (condition function, arguments, message fragment)
    ("equals", 42, 'Arguments to "equals" must be of the form: [value_1, value_2]'),
    ("equals", ["a"], 'Arguments to "equals" must be of the form: [value_1, value_2]'),
    ("not", 42, 'Invalid condition "42"'),
    ("and", 42, 'Arguments to "and" must be a list of conditions'),
    ("and", [True], 'The minimum number of condition arguments to "and" is 2.'),
    ("or", "c", 'Arguments to "or" must be a list of conditions'),
    ("or", [True, 5], 'Invalid condition "5"'),
    ("get_param", "nothere", "The Parameter (nothere) was not provided."),
    ("contains", 42, 'Incorrect arguments to "contains" should be'),
    ("get_resource", "r", 'The function "get_resource" is invalid in this context'),
    ("list_join", [",", ["a"]], 'The function "list_join" is invalid in this context'),
]


def _functions() -> Iterator[tuple[str, list[str], Any, str, str | None]]:
    seen: dict[str, int] = {}
    for name, args, message in FUNCTION_ARGS:
        seen[name] = seen.get(name, 0) + 1
        slug = name.replace("_", "-")
        yield (f"function-{slug}-{seen[name]}", ["resources", "v", "properties", "value"],
               {name: args}, message, f"resources.v.properties.value.{name}")
    seen.clear()
    for name, args, message in CONDITION_ARGS:
        seen[name] = seen.get(name, 0) + 1
        slug = name.replace("_", "-")
        yield (f"condition-{slug}-{seen[name]}", ["conditions", "c"], {name: args}, message,
               f"conditions.c.{name}")


def rows() -> Iterator[tuple[str, list[str], Any, str, str | None]]:
    yield from _sections()
    yield from _entries()
    yield from _properties()
    yield from _functions()


def _broken(place: list[Any], value: Any) -> Any:
    if not place:
        return value
    document = copy.deepcopy(BASE)
    holder = document
    for key in place[:-1]:
        holder = holder[key]
    holder[place[-1]] = value
    return document


def write(out: Path = OUT) -> int:
    """Write every case under ``out``; the number of cases."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    entries = []
    for name, place, value, message, path in rows():
        text = yaml.safe_dump(_broken(place, value), sort_keys=False, default_flow_style=False)
        (out / f"{name}.yaml").write_text(text, encoding="utf-8")
        entries.append({"id": f"generated-{name}", "template": f"{name}.yaml",
                        "expect": {"message": message, "path": path}})
    header = ("# Written by tests/corpus/generate.py: edit its tables, then run it again.\n")
    manifest = yaml.safe_dump({"cases": entries}, sort_keys=False, width=120)
    (out / "cases.yaml").write_text(header + manifest, encoding="utf-8")
    return len(entries)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    print(f"{write(target)} cases written to {target}")
