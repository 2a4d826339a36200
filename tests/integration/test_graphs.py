# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Graph pictures through ansible-playbook: resources named with characters that mean
something to DOT, HTML and Mermaid (Heat accepts them) are drawn as they are, with
their full status and a legend for the kind of graph."""

from __future__ import annotations

import shutil
from xml.etree import ElementTree

import yaml

# Heat refuses only "/" in a resource name.
NAMES = ["c\\", 'say "hi"', "<b>", "a|b", "{x}", "with space", "ünïcødé €"]
SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[str]:
    return [element.text for element in ElementTree.fromstring(svg).iter(f"{SVG}text")]


def test_stack_info_draws_hostile_names_as_svg(tmp_path, run_tasks):
    assert shutil.which("dot"), "this test needs Graphviz's dot: run scripts/test_deps.sh as root"
    resources = {name: {"type": "OS::Heat::None"} for name in NAMES}
    for earlier, later in zip(NAMES, NAMES[1:]):
        resources[later]["depends_on"] = [earlier]
    template = tmp_path / "names.yaml"
    template.write_text(yaml.safe_dump({"heat_template_version": "2018-08-31", "resources": resources},
                                       allow_unicode=True), encoding="utf-8")
    run = run_tasks([
        {"hotplay.stacks.stack": {"name": "names", "template": str(template), "graph": "svg"},
         "check_mode": True, "register": "preview"},
        {"hotplay.stacks.stack": {"name": "names", "template": str(template)}, "register": "created"},
        {"hotplay.stacks.stack_info": {"name": "names", "graph": "svg"}, "register": "info"},
    ])
    assert run.results["created"]["stack_status"] == "CREATE_COMPLETE", run.stdout

    status = _texts(run.results["info"]["stack"]["graph"])
    for name in NAMES:
        assert name in status, status
    assert status.count("CREATE_COMPLETE") == len(NAMES)  # the full status word on every node
    assert "Legend. Colour: the state the resource is in" in status
    assert "*_COMPLETE: its last action finished" in status
    assert "b needs a: a is created first" in status

    plan = _texts(run.results["preview"]["graph"])
    for name in NAMES:
        assert name in plan, plan
    assert plan.count("added") == len(NAMES)
    assert "Legend. Colour: what this run does to the resource" in plan and "added: created" in plan
