# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each action plugin's ARGUMENT_SPEC says what its documentation stub says.

The modules are documentation stubs (plugins/modules/<name>.py) and the action
plugins validate the task's arguments with their own ARGUMENT_SPEC, so nothing in
Ansible compares the two: this test does, option by option (the options of the
doc fragments a stub extends included), for names, types, elements, choices,
defaults, required, no_log, aliases and suboptions.  Documentation has no
``no_log`` key: an option is documented as not logged when its description says
C(no_log).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml

COLLECTION = "ansible_collections.hotplay.stacks"
ACTIONS = sorted(p.stem for p in (Path(__file__).resolve().parents[3] / "plugins" / "action").glob("*.py"))

# Option keys that Ansible fills in when a document or a spec leaves them out.
_UNSET = {"type": "str", "elements": None, "choices": None, "default": None, "required": False,
          "no_log": False, "aliases": []}


def _fragment_options(name: str) -> dict[str, Any]:
    """The options of a fragment named as ``extends_documentation_fragment`` does:
    ``hotplay.stacks.store`` (DOCUMENTATION) or ``hotplay.stacks.attributes.controller``
    (its CONTROLLER variable)."""
    parts = name.split(".")
    assert parts[:2] == ["hotplay", "stacks"], f"a fragment of another collection: {name}"
    fragment = importlib.import_module(f"{COLLECTION}.plugins.doc_fragments.{parts[2]}").ModuleDocFragment
    variable = parts[3].upper() if len(parts) > 3 else "DOCUMENTATION"
    return yaml.safe_load(getattr(fragment, variable)).get("options") or {}


def documented_options(module: str) -> dict[str, Any]:
    """The options of a module's documentation, its fragments' options merged in."""
    document = yaml.safe_load(importlib.import_module(f"{COLLECTION}.plugins.modules.{module}").DOCUMENTATION)
    options: dict[str, Any] = {}
    for fragment in document.get("extends_documentation_fragment") or []:
        options.update(_fragment_options(fragment))
    options.update(document.get("options") or {})
    return options


def _documented_no_log(option: dict[str, Any]) -> bool:
    description = option.get("description") or []
    lines = [description] if isinstance(description, str) else description
    return any("C(no_log)" in line for line in lines)


def _comparable(option: dict[str, Any], nested_key: str) -> dict[str, Any]:
    """The keys the two must agree on, with Ansible's defaults filled in; choices
    as a set, since their order is only presentation."""
    shown = {key: option.get(key, unset) for key, unset in _UNSET.items()}
    if nested_key == "suboptions":
        shown["no_log"] = _documented_no_log(option)
    shown["aliases"] = sorted(shown["aliases"] or [])
    shown["choices"] = sorted(shown["choices"]) if shown["choices"] is not None else None
    shown["options"] = sorted(option.get(nested_key) or {})
    return shown


def disagreements(spec: dict[str, Any], documented: dict[str, Any], where: str = "") -> list[str]:
    """One line per option on which the spec and the documentation differ."""
    found = [f"{where}{name}: in ARGUMENT_SPEC, not documented" for name in spec.keys() - documented.keys()]
    found += [f"{where}{name}: documented, not in ARGUMENT_SPEC" for name in documented.keys() - spec.keys()]
    for name in sorted(spec.keys() & documented.keys()):
        in_spec, in_doc = _comparable(spec[name], "options"), _comparable(documented[name], "suboptions")
        found += [f"{where}{name}.{key}: ARGUMENT_SPEC {in_spec[key]!r}, documentation {in_doc[key]!r}"
                  for key in in_spec if in_spec[key] != in_doc[key]]
        found += disagreements(spec[name].get("options") or {}, documented[name].get("suboptions") or {},
                               f"{where}{name}.")
    return found


@pytest.mark.parametrize("name", ACTIONS)
def test_the_argument_spec_is_what_the_stub_documents(name: str):
    spec = importlib.import_module(f"{COLLECTION}.plugins.action.{name}").ARGUMENT_SPEC
    assert disagreements(spec, documented_options(name)) == []


def test_a_disagreement_is_found():
    documented = {"a": {"type": "int", "default": 1}, "b": {"type": "list", "elements": "str",
                                                            "suboptions": {"c": {"required": True}}},
                  "e": {"description": ["Never logged (C(no_log))."]}}
    spec = {"a": {"type": "int", "default": 2}, "b": {"type": "list", "elements": "str",
                                                      "options": {"c": {"no_log": True}}},
            "d": {"type": "str"}, "e": {"type": "str"}}
    assert sorted(disagreements(spec, documented)) == [
        "a.default: ARGUMENT_SPEC 2, documentation 1",
        "b.c.no_log: ARGUMENT_SPEC True, documentation False",
        "b.c.required: ARGUMENT_SPEC False, documentation True",
        "d: in ARGUMENT_SPEC, not documented",
        "e.no_log: ARGUMENT_SPEC False, documentation True",
    ]
