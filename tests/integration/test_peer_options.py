# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What users of the peer modules (cloud.terraform, amazon.aws.cloudformation,
openstack.cloud.stack) rely on, through real ansible-playbook runs: parallelism,
stack tags, an inline template, deletion protection, small results."""

from __future__ import annotations

from pathlib import Path

from conftest import store_rows, write_template

WAITING = """\
heat_template_version: 2018-08-31
resources:
{resources}
"""
ONE_WAITING = """\
  r{index}:
    type: OS::Heat::TestResource
    properties:
      value: v{index}
      action_wait_secs: {{create: 0.3, delete: 0.3}}
"""


def waiting_template(directory: Path, count: int) -> str:
    """``count`` independent resources that each take 0.3 s to create and delete."""
    resources = "".join(ONE_WAITING.format(index=i) for i in range(count))
    return str(write_template(directory, "waiting.yaml", WAITING.format(resources=resources)))


def most_in_progress(events: list[dict]) -> int:
    """The most resources that were in progress at once, told by the events."""
    running: set[str] = set()
    most = 0
    for event in events:
        if event.get("parent") or event["resource_name"].startswith("stack-"):
            continue
        if event["status"] == "IN_PROGRESS":
            running.add(event["resource_name"])
        else:
            running.discard(event["resource_name"])
        most = max(most, len(running))
    return most


def stack_task(register: str, **options) -> dict:
    return {"hotplay.stacks.stack": {"name": "stack-peer", **options}, "register": register}


def test_parallelism_caps_resources_acted_on_at_once(run_tasks, tmp_path):
    template = waiting_template(tmp_path, 4)
    run = run_tasks([
        stack_task("serial", template=template, parallelism=1),
        stack_task("deleted", state="absent", parallelism=2),
        stack_task("parallel", template=template),
        stack_task("zero", template=template, parallelism=0),
    ])
    serial, deleted, parallel, zero = (run.results[k] for k in ("serial", "deleted", "parallel", "zero"))
    assert serial["stack"]["status"] == "CREATE_COMPLETE", serial
    assert most_in_progress(serial["events"]) == 1
    assert deleted["stack"]["status"] == "DELETE_COMPLETE", deleted
    assert 1 < most_in_progress(deleted["events"]) <= 2
    # The default (128) does not hold independent resources back.
    assert most_in_progress(parallel["events"]) > 2
    assert zero["failed"] and "parallelism must be at least 1" in zero["msg"]


def test_tags_are_kept_returned_and_shown(run_tasks, tmp_path, store_url):
    template = waiting_template(tmp_path, 1)
    run = run_tasks([
        stack_task("tagged", template=template, tags=["env=prod", "team-a"]),
        stack_task("kept", template=template),  # no tags given: the stored ones stay
        {"hotplay.stacks.stack_info": {"name": "stack-peer"}, "register": "info"},
        {**stack_task("preview", template=template, tags=["env=test"]), "check_mode": True},
        stack_task("retagged", template=template, tags=["env=test"]),
        stack_task("comma", template=template, tags=["a,b"]),
    ])
    tagged, kept, info, retagged, comma = (
        run.results[k] for k in ("tagged", "kept", "info", "retagged", "comma"))
    assert tagged["stack"]["tags"] == ["env=prod", "team-a"], tagged
    assert kept["changed"] is False and kept["stack"]["tags"] == ["env=prod", "team-a"]
    assert info["stack"]["tags"] == ["env=prod", "team-a"]
    # A preview of new tags says it would change, and writes nothing.
    assert run.results["preview"]["changed"] is True
    assert run.results["preview"]["stack"]["tags"] == ["env=prod", "team-a"]
    # Only the tags change: the task says so, and no revision is added for it.
    assert retagged["changed"] is True and retagged["stack"]["tags"] == ["env=test"]
    assert retagged["stack"]["revision"] == 1 and retagged["events"] == []
    assert comma["failed"] and "tags[0] ('a,b') is not a valid tag" in comma["msg"]
    assert store_rows(store_url, "SELECT tags FROM stacks WHERE parent_id IS NULL") == [('["env=test"]',)]


INLINE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"greeting": {"type": "string"}},
    "resources": {"note": {"type": "OS::Heat::Value",
                           "properties": {"value": {"get_file": "files/note.txt"}}}},
    "outputs": {"said": {"value": {"str_replace": {
        "template": "$g $n",
        "params": {"$g": {"get_param": "greeting"}, "$n": {"get_attr": ["note", "value"]}}}}}},
}


def test_template_body_as_mapping_text_or_lookup(run_tasks, tmp_path):
    # Relative files of an inline template are read beside the playbook.
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "note.txt").write_text("world")
    write_template(tmp_path, "inline.yaml.j2", "heat_template_version: {{ '2018-08-31' }}\n"
                   "resources:\n  v:\n    type: OS::Heat::Value\n    properties: {value: templated}\n"
                   "outputs:\n  v: {value: {get_attr: [v, value]}}\n")
    run = run_tasks([
        stack_task("mapping", template_body=INLINE, parameters={"greeting": "hello"}),
        {"hotplay.stacks.stack": {"name": "stack-text", "template_body": "{{ lookup('template', 'inline.yaml.j2') }}"},
         "register": "looked_up"},
        stack_task("both", template_body=INLINE, template=str(tmp_path / "inline.yaml.j2")),
        {"hotplay.stacks.stack": {"name": "stack-bad", "template_body": "resources: [unclosed"},
         "register": "bad"},
        {"hotplay.stacks.stack": {"name": "stack-list", "template_body": [1, 2]}, "register": "listed"},
    ])
    mapping, looked_up, both, bad = (run.results[k] for k in ("mapping", "looked_up", "both", "bad"))
    assert run.results["listed"]["msg"] == "template_body: expected the template as text or a mapping, got list"
    assert mapping["outputs"] == {"said": "hello world"}, mapping
    assert looked_up["stack"]["status"] == "CREATE_COMPLETE", looked_up
    assert looked_up["outputs"] == {"v": "templated"}
    assert both["failed"] and "mutually exclusive: template|template_body" in both["msg"]
    assert bad["failed"] and bad["msg"].startswith(f"{tmp_path}/template_body: Error parsing template: line 2"), bad
    assert "stack" not in bad


def test_deletion_protection_refuses_an_ad_hoc_delete_until_lifted(run_tasks, tmp_path, store_url):
    template = waiting_template(tmp_path, 1)
    run = run_tasks([
        stack_task("protected", template=template, deletion_protection=True),
        stack_task("refused", state="absent"),
        {**stack_task("previewed", state="absent"), "check_mode": True},
        stack_task("still", template=template),  # left out: the protection stays
        stack_task("lifted", state="absent", deletion_protection=False),
    ])
    protected, refused, still, lifted = (
        run.results[k] for k in ("protected", "refused", "still", "lifted"))
    assert protected["stack"]["deletion_protection"] is True, protected
    assert refused["failed"] and refused["changed"] is False
    assert "Stack stack-peer has deletion protection: it was not deleted" in refused["msg"]
    assert "deletion_protection: false" in refused["msg"]
    assert refused["stack"]["status"] == "CREATE_COMPLETE"
    # A preview fails where the deletion would.
    assert run.results["previewed"]["failed"] and "has deletion protection" in run.results["previewed"]["msg"]
    assert still["changed"] is False and still["stack"]["deletion_protection"] is True
    assert lifted["stack"]["status"] == "DELETE_COMPLETE", lifted


def test_deletion_protection_lifted_by_an_apply_then_deleted(run_tasks, tmp_path):
    template = waiting_template(tmp_path, 1)
    run = run_tasks([
        stack_task("protected", template=template, deletion_protection=True),
        stack_task("lift", existing=True, deletion_protection=False),
        stack_task("deleted", state="absent"),
    ])
    assert run.results["lift"]["changed"] is True, run.results["lift"]
    assert run.results["lift"]["stack"]["deletion_protection"] is False
    assert run.results["deleted"]["stack"]["status"] == "DELETE_COMPLETE", run.results["deleted"]


def test_small_results_on_a_big_stack(run_tasks, tmp_path):
    many = WAITING.format(resources="".join(
        f"  r{i}:\n    type: OS::Heat::Value\n    properties: {{value: v{i}}}\n" for i in range(30)))
    template = str(write_template(tmp_path, "many.yaml", many))
    fewer = str(write_template(tmp_path, "fewer.yaml", many.replace("value: v3}", "value: changed}")))
    run = run_tasks([
        stack_task("created", template=template, return_resources="none", events_limit=5),
        stack_task("noop", template=template, return_resources="changed"),
        stack_task("one", template=fewer, return_resources="changed", events_limit=0),
        stack_task("all", template=fewer),
    ])
    created, noop, one, every = (run.results[k] for k in ("created", "noop", "one", "all"))
    assert created["resources"] == [] and len(created["events"]) == 5, created
    assert created["events_omitted"] == 62 - 5
    assert created["events"][-1]["reason"] == "Stack CREATE completed successfully"
    assert noop["changed"] is False and noop["resources"] == []
    assert noop["plan"]["unchanged"] == []  # as long a list as resources, left out too
    assert [r["name"] for r in one["resources"]] == ["r3"], one["resources"]
    assert one["events"] == [] and one["events_omitted"] == 4
    assert len(every["resources"]) == 30 and "events_omitted" not in every
    assert len(every["plan"]["unchanged"]) == 30  # applied already: all unchanged
