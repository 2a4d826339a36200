# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order recheck (no Heat needed: Heat's answer is written here, as a Heat process
gave it, and hotplay runs in-process).  Heat validates independent resources, then the
outputs, in the order of a Python set, so of several problems it names one that
depends on its hash seed; the recheck forgives hotplay's other choice only when
hotplay, asked again in Heat's order, names Heat's problem itself."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import documented_keys, verdict  # noqa: E402
from run import _fronts, needed_by, recheck_order  # noqa: E402
from sides import HotplaySide  # noqa: E402

# Seed 61, case 1801, cut down: o0 reads r0, whose condition is false; o2 reads an
# attribute r3 lacks.  hotplay checks o0 first; a Heat process (PYTHONHASHSEED 1 to 3)
# checked o2 first.
OUTPUTS_CASE = {
    "template": {
        "heat_template_version": "2018-08-31",
        "conditions": {"c0": False},
        "resources": {"r0": {"type": "OS::Heat::None", "condition": "c0"},
                      "r3": {"type": "OS::Heat::Value", "properties": {"value": "a"}}},
        "outputs": {"o0": {"value": {"get_attr": ["r0", "nope"]}},
                    "o1": {"value": "plain"},
                    "o2": {"value": {"str_replace": {"template": "a-x",
                                                     "params": {"a": {"get_attr": ["r3", "nope"]}}}}}},
    },
    "files": {}, "environment": None, "parameters": {}, "update": None, "mutation": None,
}
HEAT_NAMED_O2 = [{"verdict": "refused", "error": "The Referenced Attribute (r3 nope) is incorrect."}]


def recheck(case: dict, heat: list[dict]) -> str:
    keys = documented_keys()
    hotplay = HotplaySide()
    mine = hotplay.run(case)
    first = verdict(case, mine, heat, keys)
    assert first[0] == "diverged", first
    return recheck_order(hotplay, case, mine, heat, keys, first)[0]


def test_an_output_heat_checked_first_is_checked_first_again():
    assert recheck(OUTPUTS_CASE, HEAT_NAMED_O2) == "documented:resource-order"


def test_a_problem_hotplay_does_not_find_in_any_order_stays_a_divergence():
    fixed = copy.deepcopy(OUTPUTS_CASE)
    fixed["template"]["outputs"]["o2"] = {"value": {"get_attr": ["r3", "value"]}}
    assert recheck(fixed, HEAT_NAMED_O2) == "diverged"


def test_a_resource_heat_named_comes_first_after_only_what_it_reads():
    # Seed 62, case 280: r3's `if` keeps its get_param (missing), not its
    # get_resource r0; Heat validated r2 and r3 before r0 (PYTHONHASHSEED 2).
    template = {"heat_template_version": "2021-04-16", "resources": {
        "r0": {"type": "OS::Heat::RandomString", "deletion_policy": "Snapshot"},
        "r2": {"type": "OS::Heat::None"},
        "r3": {"type": "OS::Heat::TestResource", "properties": {"value": {"list_join": [",", [
            {"if": [True, {"get_param": "missing"}, {"get_resource": "r0"}]},
            {"get_resource": "r2"}]]}}}}}
    assert needed_by(template["resources"], "r3") == ["r2"]
    assert ("resources", ["r2", "r3"]) in _fronts(template, "resources.r3.properties: x")
    heat = [{"verdict": "refused",
             "error": "Property error: resources.r3.properties.value: The Parameter (missing) was not provided."}]
    assert recheck(dict(OUTPUTS_CASE, template=template), heat) == "documented:resource-order"


def test_an_error_naming_no_resource_tries_each_resource_and_each_later_output():
    fronts = _fronts(OUTPUTS_CASE["template"], "The Referenced Attribute (r3 nope) is incorrect.")
    assert fronts == [("resources", ["r3"]), ("outputs", ["o1"]), ("outputs", ["o2"])]


def test_the_dependencies_compared_in_events_are_the_certain_ones():
    from reading import dependency_pairs

    template = {"conditions": {"on": True, "asked": {"equals": [{"get_param": "p"}, "x"]}}, "resources": {
        "a": {"type": "OS::Heat::None"},
        "b": {"type": "OS::Heat::None", "depends_on": ["a"]},
        "c": {"type": "OS::Heat::None", "properties": {"x": {"if": ["on", {"get_attr": ["b", "x"]}, "n"]}}},
        "d": {"type": "OS::Heat::None", "properties": {"x": {"if": ["asked", {"get_resource": "a"}, "n"]}}},
        "e": {"type": "OS::Heat::None", "metadata": {"m": {"get_resource": "gone"}}}}}
    assert dependency_pairs(template) == [("a", "b"), ("b", "c")]
