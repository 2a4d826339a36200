# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tester's comparison itself (no Heat needed): what it forgives and what not."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import RULES, core, documented_keys, verdict  # noqa: E402

CASE = {"template": {}, "files": {}, "environment": None, "parameters": {}, "update": None,
        "mutation": None}


def ok(status="CREATE_COMPLETE", outputs=None, ids=None, changed=True):
    ids = ids or {"r": "0123456789abcdef"}
    return {"verdict": "ok", "stack_status": status, "status_reason": f"Stack {status.split('_')[0]} "
            "completed successfully", "resources": {n: status for n in ids},
            "reasons": {n: "state changed" for n in ids}, "ids": ids, "outputs": outputs or {},
            "changed": changed}


def test_every_rule_is_documented():
    assert set(RULES) <= documented_keys()


def test_a_rule_forgives_only_while_its_key_is_documented():
    hotplay = [{"verdict": "refused", "error": "t.yaml: outputs.o.value.map_merge: The template version "
                "is invalid: The function map_merge is not supported in this version of HOT "
                "(2015-10-15); it is available from heat_template_version 2016-04-08."}]
    heat = [ok()]
    assert verdict(CASE, hotplay, heat, documented_keys())[0] == "documented:later-version-function"
    assert verdict(CASE, hotplay, heat, frozenset())[0] == "diverged"


def test_ids_compare_by_the_resource_they_belong_to():
    mine = [ok(outputs={"o": "id-aaaaaaaaaaaa"}, ids={"r": "id-aaaaaaaaaaaa"})]
    theirs = [ok(outputs={"o": "stack-r-bbbbbbbbbb"}, ids={"r": "stack-r-bbbbbbbbbb"})]
    assert verdict(CASE, mine, theirs, frozenset())[0] == "same"
    other = [ok(outputs={"o": "something else"}, ids={"r": "stack-r-bbbbbbbbbb"})]
    assert verdict(CASE, mine, other, frozenset())[0] == "diverged"


def test_a_replaced_resource_is_a_divergence():
    mine = [ok(ids={"r": "id-aaaaaaaaaaaa"}), ok("UPDATE_COMPLETE", ids={"r": "id-aaaaaaaaaaaa"})]
    theirs = [ok(ids={"r": "stack-r-bbbbbbbbbb"}), ok("UPDATE_COMPLETE", ids={"r": "stack-r-cccccccccc"})]
    found, differences = verdict(CASE, mine, theirs, frozenset())
    assert found == "diverged" and differences[0][0] == "step1.replaced"


def test_error_text_compares_without_file_and_places():
    assert core("/srv/t.yaml: resources.r.properties.value.list_join: Items to join must be string") == \
        core("Property error: resources.r.properties.value: Items to join must be string")
    assert core("outputs.o.value.str_replace: params.x.list_join: [1][1].get_attr: The Referenced "
                "Attribute (r nope) is incorrect.") == "The Referenced Attribute (r nope) is incorrect."


def test_a_cycle_is_forgiven_only_when_heat_names_its_resources():
    mine = [{"verdict": "refused", "error": "/t.yaml: Circular Dependency Found: r0 --> r1 --> r0"}]
    theirs = [{"verdict": "refused", "error": 'Circular Dependency Found: {TestResource "r1": '
               '{TestResource "r0"}, TestResource "r0": {TestResource "r1"}}'}]
    assert verdict(CASE, mine, theirs, documented_keys())[0] == "documented:cycle-named"
    elsewhere = [{"verdict": "refused", "error": 'Circular Dependency Found: {TestResource "r2": '
                  '{TestResource "r2"}}'}]
    assert verdict(CASE, mine, elsewhere, documented_keys())[0] == "diverged"
    not_a_cycle = [{"verdict": "refused", "error": '"r0" "r1" is not a map'}]
    assert verdict(CASE, mine, not_a_cycle, documented_keys())[0] == "diverged"


def test_an_output_reference_is_forgiven_only_when_heat_reports_that_output():
    mine = [{"verdict": "refused", "error": '/t.yaml: outputs.o1.value.get_resource: The specified '
             'reference "r9" (in outputs.o1.value) is incorrect.'}]
    theirs = [ok(outputs={"o1": {"error": 'The specified reference "r9" (in unknown) is incorrect.'}})]
    assert verdict(CASE, mine, theirs, documented_keys())[0] == "documented:output-reference"
    another = [ok(outputs={"o1": {"error": 'The specified reference "r8" (in unknown) is incorrect.'}})]
    assert verdict(CASE, mine, another, documented_keys())[0] == "diverged"
    fine = [ok(outputs={"o1": "x"})]
    assert verdict(CASE, mine, fine, documented_keys())[0] == "diverged"


def test_an_output_reference_is_forgiven_when_heat_met_another_error_of_that_output_first():
    """Heat reports the first error it meets in an output's value (seed 20261128,
    cases 482-485: a ``repeat`` beside the ``get_resource`` of a resource whose
    condition is false): the output is an error in Heat all the same."""
    mine = [{"verdict": "refused", "error": '/t.yaml: outputs.o0.value.map_merge[1].m.get_resource: The '
             'specified reference "r1" (in outputs.o0.value.map_merge[1].m) is incorrect.'}]
    repeat = {"error": 'The values of the "for_each" argument to "repeat" must be lists or maps'}
    theirs = [ok(outputs={"o0": repeat}, ids={"r0": "0123456789abcdef"})]
    assert verdict(CASE, mine, theirs, documented_keys())[0] == "documented:output-reference"
    # The resource is in Heat's stack: the reference would have read it.
    there = [ok(outputs={"o0": repeat}, ids={"r0": "0123456789abcdef", "r1": "fedcba9876543210"})]
    assert verdict(CASE, mine, there, documented_keys())[0] == "diverged"
    # The output has a value in Heat.
    valued = [ok(outputs={"o0": "x"}, ids={"r0": "0123456789abcdef"})]
    assert verdict(CASE, mine, valued, documented_keys())[0] == "diverged"


def test_a_later_function_is_forgiven_in_a_message_the_task_masked():
    """Through ansible-playbook a hidden value "a" masks each "a" of the refusal
    (seed 20261128, case 640): the refusal is still the later-version one."""
    case = dict(CASE, template={"parameters": {"p2": {"type": "comma_delimited_list", "hidden": True}}},
                parameters={"p2": [" c", "a"]})
    masked = ("/tmp/m******in.y******ml: resources.r0.properties.v******lue.m******p_merge: The templ******te "
              "version is inv******lid: The function m******p_merge is not supported in this version of HOT "
              "(2015-04-30); it is ******v******il******ble from he******t_templ******te_version 2016-04-08.")
    heat = [{"verdict": "refused", "error": "Property error: resources.r0.properties.value: Value must be "
             "a string; got {'map_merge': [{'k': False}, 'ax-x--']}"}]
    assert verdict(case, [{"verdict": "refused", "error": masked}], heat,
                   documented_keys())[0] == "documented:later-version-function"
    # Without that hidden value, the masked text is not the later-version refusal.
    assert verdict(CASE, [{"verdict": "refused", "error": masked}], heat, documented_keys())[0] == "diverged"


def _group_case(removal_before, removal_after):
    def group(removal):
        policies = {"removal_policies": [{"resource_list": removal}]} if removal is not None else {}
        return {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 3, **policies, "resource_def": {"type": "OS::Heat::None"}}}
    return dict(CASE, template={"resources": {"g": group(removal_before)}},
                update={"template": {"resources": {"g": group(removal_after)}}})


def _steps(before, after):
    return [ok(ids={p: "0123456789abcdef" for p in before}), ok("UPDATE_COMPLETE",
                                                                ids={p: "0123456789abcdef" for p in after})]


def _with_preview(steps, preview):
    steps[1]["preview"] = preview
    return steps


def test_a_group_preview_is_forgiven_when_it_is_what_heats_update_did():
    """Seed 20261129, case 309: members 1-3 (name 0 removed); removing 1 more adds
    g/4 (Heat's update), where Heat's preview said g/0."""
    case = _group_case(["0"], ["1"])
    before, after = ["g", "g/1", "g/2", "g/3"], ["g", "g/2", "g/3", "g/4"]
    mine = _with_preview(_steps(before, after), {
        "added": ["g/4"], "deleted": ["g/1"], "replaced": [], "updated": ["g"], "unchanged": ["g/2", "g/3"]})
    theirs = _with_preview(_steps(before, after), {
        "added": ["g/0"], "deleted": ["g/1"], "replaced": [], "updated": ["g"], "unchanged": ["g/2", "g/3"]})
    assert verdict(case, mine, theirs, documented_keys())[0] == "documented:preview-group-removed-names"
    # Heat's update did what its preview said: hotplay's preview is wrong.
    heat_as_previewed = _with_preview(_steps(before, ["g", "g/0", "g/2", "g/3"]), theirs[1]["preview"])
    assert verdict(case, mine, heat_as_previewed, documented_keys())[0] == "diverged"
    # Without removal policies nothing explains the difference.
    plain = _group_case(None, None)
    assert verdict(plain, mine, theirs, documented_keys())[0] == "diverged"


def test_nested_resources_known_after_apply_are_forgiven_only_under_a_provider_that_reads():
    """Seed 20261129, case 309: Heat lists p/inner unchanged; hotplay does not list
    the resources of a provider whose properties read a resource the update changes."""
    reads = {"type": "Diff::Prov", "properties": {"x": {"get_attr": ["g", "refs"]}}}
    case = dict(CASE, template={"resources": {"p": reads}}, update={"template": {"resources": {"p": reads}}})
    steps = ["p", "p/inner"]
    mine = _with_preview(_steps(steps, steps), {
        "added": [], "deleted": [], "replaced": [], "updated": ["p"], "unchanged": []})
    theirs = _with_preview(_steps(steps, steps), {
        "added": [], "deleted": [], "replaced": [], "updated": ["p"], "unchanged": ["p/inner"]})
    assert verdict(case, mine, theirs, documented_keys())[0] == "documented:preview-nested-unknown"
    reads_nothing = {"type": "Diff::Prov", "properties": {"x": "constant"}}
    plain = dict(CASE, template={"resources": {"p": reads_nothing}},
                 update={"template": {"resources": {"p": reads_nothing}}})
    assert verdict(plain, mine, theirs, documented_keys())[0] == "diverged"


def test_a_policy_written_out_is_forgiven_only_when_nothing_else_changed():
    before = {"r": {"type": "OS::Heat::TestResource"}}
    case = dict(CASE, template={"resources": before},
                update={"template": {"resources": {"r": {"type": "OS::Heat::TestResource",
                                                         "deletion_policy": "Delete"}}}})
    mine = [ok(), ok("UPDATE_COMPLETE")]
    mine[1]["resources"] = {"r": "CREATE_COMPLETE"}
    theirs = [ok(), ok("UPDATE_COMPLETE")]
    assert verdict(case, mine, theirs, documented_keys())[0] == "documented:same-meaning-unchanged"
    retained = dict(case, update={"template": {"resources": {"r": {"type": "OS::Heat::TestResource",
                                                                   "deletion_policy": "Retain"}}}})
    assert verdict(retained, mine, theirs, documented_keys())[0] == "diverged"


def test_masked_results_are_forgiven_only_for_a_hidden_value():
    template = {"parameters": {"p": {"type": "json", "hidden": True}}}
    case = dict(CASE, template=template, parameters={"p": '{"k": 2}'})
    mine, theirs = [ok(outputs={"o******": {}})], [ok(outputs={"o2": {}})]
    assert verdict(case, mine, theirs, documented_keys())[0] == "documented:hidden-in-messages"
    shown = dict(case, template={"parameters": {"p": {"type": "json"}}})
    assert verdict(shown, mine, theirs, documented_keys())[0] == "diverged"


def test_a_hidden_value_inside_a_field_name_masks_only_heats_answer():
    # A hidden "out" is inside "outputs", the tester's own field name: masking it
    # there made the long run fail with KeyError: 'outputs' (seed 9).
    template = {"parameters": {"p": {"type": "string", "hidden": True}}}
    case = dict(CASE, template=template, parameters={"p": "out"})
    mine, theirs = [ok(outputs={"******put": {}})], [ok(outputs={"output": {}})]
    assert verdict(case, mine, theirs, documented_keys())[0] == "documented:hidden-in-messages"
    assert verdict(case, [ok(outputs={"other": {}})], theirs, documented_keys())[0] == "diverged"


def test_malformed_is_recognised_as_a_message_or_as_a_bodys_explanation():
    mine = [{"verdict": "refused", "error": "/t.yaml: Unrecognized value 'None', acceptable values are: 'no'"}]
    body = ('{"code": 400, "title": "Bad Request", "explanation": "The server could not comply with the '
            'request since it is either malformed or otherwise incorrect.", "error": {"type": "ValueError"}}')
    assert verdict(CASE, mine, [{"verdict": "refused", "error": body}], documented_keys())[0] == \
        "documented:malformed-request"
    other = '{"code": 400, "explanation": "Something else"}'
    assert verdict(CASE, mine, [{"verdict": "refused", "error": other}], documented_keys())[0] == "diverged"


def test_a_piece_of_an_id_compares_by_its_place_in_it():
    mine = [ok(outputs={"o": "48d3"}, ids={"r": "1ebacff7-48d3-4f75-9f7b-16c381ee97f4"})]
    theirs = [ok(outputs={"o": "4632"}, ids={"r": "c8117e33-4632-4917-8d4a-b0fb9140df3e"})]
    assert verdict(CASE, mine, theirs, frozenset())[0] == "same"
    elsewhere = [ok(outputs={"o": "4917"}, ids={"r": "c8117e33-4632-4917-8d4a-b0fb9140df3e"})]
    assert verdict(CASE, mine, elsewhere, frozenset())[0] == "diverged"


def test_a_long_piece_of_an_id_inside_a_message_compares_by_its_place():
    # Seed 71, case 1177: map_merge of str_split('-', <nested stack id>, -1).
    def says(piece, physical):
        message = f"Items to merge must be maps. '{piece}' is type <class 'str'> instead of a dict"
        return [ok(outputs={"o": {"error": message}}, ids={"r": physical})]

    mine = says("16c381ee97f4", "1ebacff7-48d3-4f75-9f7b-16c381ee97f4")
    theirs = says("b0fb9140df3e", "c8117e33-4632-4917-8d4a-b0fb9140df3e")
    assert verdict(CASE, mine, theirs, frozenset())[0] == "same"
    first_piece = says("c8117e33", "c8117e33-4632-4917-8d4a-b0fb9140df3e")
    assert verdict(CASE, mine, first_piece, frozenset())[0] == "diverged"


def test_every_piece_of_an_id_in_one_text_compares_by_the_resource():
    """Seed 20261130, cases 1144-1146: ``list_join`` of a ``str_split`` of a uuid
    gives the JSON of its five pieces; the 4-character ones differ by nature too."""
    def pieces(uuid):
        return json.dumps(uuid.split("-"))

    mine_id, their_id = "12e04f46-12e0-4f46-8a38-0123456789ab", "46a64fe5-46a6-4fe5-9963-ba9876543210"
    mine = [ok(outputs={"o": pieces(mine_id)}, ids={"r": mine_id})]
    theirs = [ok(outputs={"o": pieces(their_id)}, ids={"r": their_id})]
    assert verdict(CASE, mine, theirs, frozenset())[0] == "same"
    shuffled = their_id.split("-")
    shuffled[1], shuffled[2] = shuffled[2], shuffled[1]
    other = [ok(outputs={"o": json.dumps(shuffled)}, ids={"r": their_id})]
    assert verdict(CASE, mine, other, frozenset())[0] == "diverged"


def test_a_later_function_in_a_provider_is_forgiven_by_its_failed_resource():
    failed = ok(ids={"r": "0123456789abcdef"})
    failed.update(stack_status="CREATE_FAILED", resources={"r": "CREATE_FAILED"}, reasons={
        "r": "StackValidationFailed: resources.r: prov.yaml: outputs.b.value.str_split: The template "
             "version is invalid: The function str_split is not supported in this version of HOT "
             "(2015-04-30); it is available from heat_template_version 2016-10-14."})
    assert verdict(CASE, [failed], [ok()], documented_keys())[0] == "documented:later-version-function"
    failed["reasons"]["r"] = "StackValidationFailed: resources.r: something else"
    assert verdict(CASE, [failed], [ok()], documented_keys())[0] == "diverged"


def test_a_resource_first_created_in_the_update_is_not_replaced():
    mine = [ok(ids={"r": "id-aaaaaaaaaaaa"}), ok("UPDATE_COMPLETE", ids={"r": "id-aaaaaaaaaaaa", "n": "id-nnnnnnnnnn"})]
    theirs = [ok(ids={"r": "stack-r-bbbbbbbbbb", "n": ""}),
              ok("UPDATE_COMPLETE", ids={"r": "stack-r-bbbbbbbbbb", "n": "stack-n-cccccccccc"})]
    theirs[0]["resources"]["n"] = "INIT_COMPLETE"
    mine[0]["resources"]["n"] = "INIT_COMPLETE"
    mine[0]["reasons"]["n"] = theirs[0]["reasons"]["n"] = ""
    assert verdict(CASE, mine, theirs, frozenset())[0] == "same"


class _Events:
    """A Heat client answering with recorded listings and events."""

    def __init__(self, events, nested=None):
        self._events, self._nested = events, nested or {}

    def events(self, name, stack_id):
        return self._events

    def resources(self, name, stack_id, depth=3):
        if stack_id not in self._nested:
            from heat_peer import HeatError
            raise HeatError(404, "EntityNotFound", "not a stack")
        return self._nested[stack_id]


def _listed(name, physical, stack, nested=""):
    links = [{"rel": "stack", "href": f"http://h/v1/admin/stacks/s/{stack}"}]
    if nested:
        links.append({"rel": "nested", "href": f"http://h/v1/admin/stacks/n/{nested}"})
    return {"resource_name": name, "physical_resource_id": physical, "resource_status": "CREATE_COMPLETE",
            "resource_status_reason": "state changed", "links": links}


def _event(name, status, physical):
    return {"resource_name": name, "resource_status": status, "physical_resource_id": physical,
            "resource_status_reason": "state changed"}


def test_a_replaced_resource_listed_by_heat_is_taken_as_its_replacement():
    # Seen in Heat 27.0.1 (seed 7, case 755): a failed update keeps the replaced r2
    # (a provider) beside its replacement, and the list shows either.
    from sides import HeatSide

    side = HeatSide("http://unused")
    side.client = _Events([
        _event("s", "CREATE_IN_PROGRESS", "top"), _event("r2", "CREATE_COMPLETE", "old"),
        _event("s", "UPDATE_IN_PROGRESS", "top"), _event("r2", "CREATE_IN_PROGRESS", "s-r2-abc"),
        _event("r2", "CREATE_COMPLETE", "new"), _event("r3", "CREATE_FAILED", ""),
    ])
    listed = [_listed("r2", "old", "top", nested="old"), _listed("inner", "i1", "old"),
              _listed("r0", "r0id", "top")]
    current = side.replacements("s", "top", listed)
    assert sorted((r["resource_name"], r["physical_resource_id"]) for r in current) == [
        ("r0", "r0id"), ("r2", "new")]
    # Listed as the replacement already: unchanged.
    assert side.replacements("s", "top", [_listed("r2", "new", "top")])[0]["physical_resource_id"] == "new"


def _previewed(hotplay_preview, heat_preview, before=None, after=None):
    """A provider r1 updated and r2 reading its output: both sides ran the update
    alike and differ, if at all, in the preview."""
    empty = {k: [] for k in ("added", "deleted", "replaced", "updated", "unchanged")}
    ids = {"r1": "1111111111111111", "r2": "2222222222222222"}
    first = ok(ids=ids)
    second = dict(ok(ids=ids), stack_status="UPDATE_COMPLETE",
                  status_reason="Stack UPDATE completed successfully",
                  resources={"r1": "UPDATE_COMPLETE", "r2": "CREATE_COMPLETE"})
    resources = {"r1": {"type": "Diff::Prov"},
                 "r2": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["r1", "out"]}}}}
    case = dict(CASE, update={"template": {"resources": resources}})
    return (case, [first, dict(second, preview={**empty, **hotplay_preview})],
            [first, dict(second, preview={**empty, **heat_preview})])


def test_heats_preview_of_a_reader_of_an_updated_resource_is_forgiven():
    case, hotplay, heat = _previewed({"updated": ["r1"], "unchanged": ["r2"]}, {"updated": ["r1", "r2"]})
    assert verdict(case, hotplay, heat, documented_keys())[0] == "documented:preview-reads-updated"


def test_a_preview_that_misses_a_deletion_is_a_divergence():
    case, hotplay, heat = _previewed({"updated": ["r1"], "unchanged": ["r2"]}, {"updated": ["r1"], "deleted": ["r2"]})
    assert verdict(case, hotplay, heat, documented_keys())[0] == "diverged"


def _never_created(hotplay_preview, heat_preview):
    """A failed create never started the provider r2 (INIT_COMPLETE on both sides)."""
    empty = {k: [] for k in ("added", "deleted", "replaced", "updated", "unchanged")}
    first = dict(ok(status="CREATE_FAILED", ids={"r1": "1111111111111111", "r2": ""}),
                 resources={"r1": "CREATE_FAILED", "r2": "INIT_COMPLETE"})
    second = dict(first, stack_status="UPDATE_FAILED")
    return ([first, dict(second, preview={**empty, **hotplay_preview})],
            [first, dict(second, preview={**empty, **heat_preview})])


def test_the_nested_resources_of_a_provider_never_created_are_added():
    # Seed 41, case 231: Heat's preview listed r2 updated and nothing inside it.
    hotplay, heat = _never_created({"added": ["r2", "r2/inner"], "replaced": ["r1"]},
                                   {"updated": ["r2"], "replaced": ["r1"]})
    assert verdict(CASE, hotplay, heat, documented_keys())[0] == "documented:preview-not-created"


def test_a_resource_never_created_whose_type_changes_is_added():
    # As seed 20261127's case 1460: the never-created resource's type swapped; Heat's
    # preview listed it replaced, its update then created it.
    hotplay, heat = _never_created({"added": ["r2"], "replaced": ["r1"]}, {"replaced": ["r1", "r2"]})
    assert verdict(CASE, hotplay, heat, documented_keys())[0] == "documented:preview-not-created"


def test_a_never_created_resource_is_forgiven_beside_one_whose_create_raced():
    """Seed 20261130, case 900: hotplay's failed create reached the provider r3
    (with r3/inner), Heat's did not; both previews are judged without it."""
    empty = {k: [] for k in ("added", "deleted", "replaced", "updated", "unchanged")}
    mine_first = dict(ok(status="CREATE_FAILED", ids={"r1": "1111111111111111", "r3": "3333333333333333",
                                                      "r3/inner": "4444444444444444"}),
                      resources={"r1": "CREATE_FAILED", "r3": "CREATE_COMPLETE", "r3/inner": "CREATE_COMPLETE"})
    their_first = dict(ok(status="CREATE_FAILED", ids={"r1": "1111111111111111", "r2": "", "r3": ""}),
                       resources={"r1": "CREATE_FAILED", "r2": "INIT_COMPLETE", "r3": "INIT_COMPLETE"})
    mine = [mine_first, dict(mine_first, stack_status="UPDATE_FAILED", preview={
        **empty, "added": ["r2"], "updated": ["r3"], "unchanged": ["r3/inner"]})]
    theirs = [their_first, dict(their_first, stack_status="UPDATE_FAILED", preview={
        **empty, "updated": ["r3"], "unchanged": ["r2"]})]
    assert verdict(CASE, mine, theirs, documented_keys())[0] == "documented:preview-not-created"


def test_a_replacement_of_a_resource_that_exists_listed_as_added_is_a_divergence():
    hotplay, heat = _never_created({"added": ["r1"]}, {"replaced": ["r1"]})
    assert verdict(CASE, hotplay, heat, documented_keys())[0] == "diverged"


def test_a_nested_resource_added_under_a_resource_that_exists_is_a_divergence():
    hotplay, heat = _never_created({"added": ["r1/inner"], "updated": ["r2"]}, {"updated": ["r2"]})
    assert verdict(CASE, hotplay, heat, documented_keys())[0] == "diverged"


def _with_events(events, status="CREATE_COMPLETE"):
    step = dict(ok(status=status, ids={"r0": "0000000000000000", "r1": "1111111111111111"}),
                needs=[["r0", "r1"]])
    return [dict(step, events=events)]


DEPENDENCY_FIRST = [["", "CREATE_IN_PROGRESS"], ["r0", "CREATE_IN_PROGRESS"], ["r0", "CREATE_COMPLETE"],
                    ["r1", "CREATE_IN_PROGRESS"], ["r1", "CREATE_COMPLETE"], ["", "CREATE_COMPLETE"]]


def test_a_resource_started_before_what_it_needs_is_done_is_a_divergence():
    early = [["", "CREATE_IN_PROGRESS"], ["r0", "CREATE_IN_PROGRESS"], ["r1", "CREATE_IN_PROGRESS"],
             ["r0", "CREATE_COMPLETE"], ["r1", "CREATE_COMPLETE"], ["", "CREATE_COMPLETE"]]
    found, diffs = verdict(CASE, _with_events(early), _with_events(DEPENDENCY_FIRST), documented_keys())
    assert found == "diverged" and diffs[0][0] == "step0.events"


def test_independent_resources_may_interleave_in_any_order():
    mine = _with_events(DEPENDENCY_FIRST)
    mine[0]["needs"] = []
    theirs = _with_events([DEPENDENCY_FIRST[0], DEPENDENCY_FIRST[3], DEPENDENCY_FIRST[1], DEPENDENCY_FIRST[4],
                           DEPENDENCY_FIRST[2], DEPENDENCY_FIRST[5]])
    theirs[0]["needs"] = []
    assert verdict(CASE, mine, theirs, documented_keys())[0] == "same"


def test_a_resource_with_an_event_more_is_a_divergence():
    more = DEPENDENCY_FIRST[:3] + [["r0", "UPDATE_IN_PROGRESS"]] + DEPENDENCY_FIRST[3:]
    assert verdict(CASE, _with_events(more), _with_events(DEPENDENCY_FIRST), documented_keys())[0] == "diverged"


def test_the_events_of_a_failed_step_are_not_compared():
    # What was still running when a resource failed is cancelled at a moment timing
    # decides; Heat then writes no event for it.
    cut = DEPENDENCY_FIRST[:3] + [["", "CREATE_FAILED"]]
    assert verdict(CASE, _with_events(DEPENDENCY_FIRST, "CREATE_FAILED"), _with_events(cut, "CREATE_FAILED"),
                   documented_keys())[0] == "same"


def test_a_message_the_task_masked_throughout_is_heats_masked_so():
    # Seed 71, case 1960, through ansible-playbook: the hidden list ['b', 'a', ' c']
    # masks every "a" and "b" of the message, the file name's too.
    case = dict(CASE, template={"parameters": {"p1": {"type": "comma_delimited_list", "hidden": True}}},
                parameters={"p1": ["b", "a", " c"]})
    said = "Property error: resources.r0.properties.value: Value must be a string; got [',']"
    heat = [{"verdict": "refused", "error": said}]
    played = [{"verdict": "refused", "error": "/tmp/pl******y/m******in.y******ml: Property error: "
               "resources.r0.properties.v******lue: V******lue must ******e ****** string; got [',']"}]
    assert verdict(case, played, heat, documented_keys())[0] == "documented:hidden-in-messages"
    other = [{"verdict": "refused", "error": played[0]["error"].replace("string", "number")}]
    assert verdict(case, other, heat, documented_keys())[0] == "diverged"
