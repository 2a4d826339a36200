# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The graph writers (DOT, SVG through Graphviz, Mermaid): resource names with any
character Heat accepts come out as they are; every node's text is readable
(WCAG AA); every picture has a legend for its kind of graph."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from xml.etree import ElementTree

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters.render import (
    PLAN, STATUS, GraphNode, render)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.plan import PLAN_KEYS

# Names Heat accepts as resource names that mean something in DOT, HTML, SVG or Mermaid.
NAMES = ["c\\", "a\\N", 'say "hi"', "<b>x</b>", "a|b", "{x}", "with space", "ünïcødé €", "#35;",
         "back`tick", "a&amp;b", "%%note"]
SVG = "{http://www.w3.org/2000/svg}"


def _chain(state: str) -> tuple[list[GraphNode], dict[str, list[str]]]:
    """The names as a chain: each needs the one before it; and one nested resource."""
    nodes = [GraphNode(name, "OS::Heat::None", state) for name in NAMES]
    nodes.append(GraphNode(f"{NAMES[0]}/inner {NAMES[2]}", "OS::Heat::None", state))
    requires = {later: [earlier] for earlier, later in zip(NAMES, NAMES[1:])}
    return nodes, requires


def _dot_binary() -> str:
    binary = shutil.which("dot")
    assert binary, "these tests need Graphviz's dot: run scripts/test_deps.sh as root (apt-get install graphviz)"
    return binary


def _parsed_by_dot(source: str) -> dict:
    done = subprocess.run([_dot_binary(), "-Tjson"], input=source, capture_output=True, text=True,
                          encoding="utf-8", timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# -- names ------------------------------------------------------------------------------


def test_dot_parses_with_one_node_per_name():
    nodes, requires = _chain("added")
    parsed = _parsed_by_dot(render(nodes, requires, "dot"))
    legend = _parsed_by_dot(render([], {}, "dot"))
    assert len(parsed["objects"]) == len(nodes) + len(legend["objects"])
    assert len(parsed["edges"]) == len(requires) + 1 + len(legend["edges"])  # + the nested one


def test_svg_draws_every_name_as_it_is_and_every_edge():
    nodes, requires = _chain("CREATE_COMPLETE")
    svg = ElementTree.fromstring(render(nodes, requires, "svg", STATUS))
    drawn = {}  # Graphviz's name of each node -> its text lines
    for group in svg.iter(f"{SVG}g"):
        if group.get("class") == "node":
            drawn[group.find(f"{SVG}title").text] = [text.text for text in group.iter(f"{SVG}text")]
    assert sorted(lines for lines in drawn.values() if len(lines) == 3) == sorted(
        [node.path, "OS::Heat::None", "CREATE_COMPLETE"] for node in nodes)
    first_line = {name: lines[0] for name, lines in drawn.items()}
    edges = set()
    for group in svg.iter(f"{SVG}g"):
        if group.get("class") == "edge":
            tail, head = group.find(f"{SVG}title").text.split("->")
            edges.add((first_line[tail], first_line[head]))
    assert {(earlier, later) for later, (earlier,) in requires.items()} <= edges
    assert (NAMES[0], f"{NAMES[0]}/inner {NAMES[2]}") in edges


def test_mermaid_keeps_its_syntax_and_every_name():
    nodes, requires = _chain("updated")
    mermaid = render(nodes, requires, "mermaid")
    labels = _mermaid_node_labels(mermaid)
    assert [labels[f"n{index}"] for index in range(len(nodes))] == [
        [node.path, node.type, "updated"] for node in nodes]
    assert "  n0 -.- n12" in mermaid.splitlines()  # the nested resource under its parent
    assert all(f"  n{i} --> n{i + 1}" in mermaid.splitlines() for i in range(len(NAMES) - 1))


# Mermaid's flowchart statements this writer uses, each on its own line.  A quoted
# label runs to the next '"'; "#...;" are entity codes; '<', '>' and '&' would be
# HTML, a backtick Markdown, "%%" a comment: none of them may appear raw.
_LABEL = r'"(?P<label>[^"]*)"'
_STATEMENTS = [
    r"flowchart LR", r"end", r"direction TB",
    r'subgraph legend \["[^"]*"\]',
    rf"(?P<id>n\d+|legend\d+)\[{_LABEL}\]:::[a-z]+",
    r"n\d+ (-->|-\.-) n\d+",
    r'legend_\w+\["[^"]*"\]:::legendtext (-->|-\.-)\|"[^"]*"\| legend_\w+\["[^"]*"\]:::legendtext',
    r"classDef [a-z]+ fill:(#[0-9a-f]{6}|none),(color:#[0-9a-f]{6}|stroke:none)",
]
_ENTITIES = {"#37;": "%", "#quot;": '"', "#lt;": "<", "#gt;": ">", "#amp;": "&", "#35;": "#", "#96;": "`"}


def _mermaid_node_labels(mermaid: str) -> dict[str, list[str]]:
    labels: dict[str, list[str]] = {}
    for line in mermaid.splitlines():
        match = next(filter(None, (re.fullmatch(rf"\s*{pattern}", line) for pattern in _STATEMENTS)), None)
        assert match, f"not Mermaid flowchart syntax: {line!r}"
        if "label" in match.groupdict():
            labels[match["id"]] = [_mermaid_decoded(part) for part in match["label"].split("<br/>")]
    return labels


def _mermaid_decoded(text: str) -> str:
    raw = re.sub(r"#\w+;", "", text)
    assert not set(raw) & set("<>&`#") and "%%" not in raw, f"unescaped in a Mermaid label: {text!r}"
    return re.sub(r"#\w+;", lambda entity: _ENTITIES[entity.group()], text)


# -- readable by everyone ----------------------------------------------------------------


def _wcag_luminance(colour: str) -> float:
    def linear(channel: int) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(int(colour[i:i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def _contrast(one: str, other: str) -> float:
    high, low = sorted((_wcag_luminance(one), _wcag_luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_every_plan_action_has_its_own_colour_and_meaning():
    assert set(PLAN.colours) == set(PLAN_KEYS)
    assert len({colour.fill for colour in PLAN.colours.values()}) == len(PLAN_KEYS)


@pytest.mark.parametrize("palette", [PLAN, STATUS], ids=["plan", "status"])
def test_every_fill_meets_wcag_aa_in_dot_and_mermaid(palette):
    states = list(palette.colours)
    nodes = [GraphNode(f"r{index}", "OS::Heat::None", state) for index, state in enumerate(states)]
    dot = render(nodes, {}, "dot", palette)
    pairs = set(re.findall(r'fillcolor="(#[0-9a-f]{6})", fontcolor="(#[0-9a-f]{6})"', dot))
    assert {pair[0] for pair in pairs} == {colour.fill for colour in palette.colours.values()}
    mermaid = render(nodes, {}, "mermaid", palette)
    pairs |= set(re.findall(r"fill:(#[0-9a-f]{6}),color:(#[0-9a-f]{6})", mermaid))
    for fill, text in pairs:
        assert _contrast(fill, text) >= 4.5, (fill, text, _contrast(fill, text))


def test_the_legends_say_what_arrows_and_colours_mean_for_each_kind_of_graph():
    plan = render([GraphNode("web", "OS::Heat::None", "added")], {}, "svg", PLAN)
    status = render([GraphNode("web", "OS::Heat::None", "CREATE_COMPLETE")], {}, "svg", STATUS)
    plan_texts = {element.text for element in ElementTree.fromstring(plan).iter(f"{SVG}text")}
    status_texts = {element.text for element in ElementTree.fromstring(status).iter(f"{SVG}text")}
    for texts in (plan_texts, status_texts):
        assert "b needs a: a is created first" in texts
        assert "a resource of a nested stack, under its parent" in texts
    assert "added: created" in plan_texts and "*_COMPLETE: its last action finished" not in plan_texts
    assert "*_COMPLETE: its last action finished" in status_texts and "added: created" not in status_texts
    assert "Legend. Colour: what this run does to the resource" in plan_texts
    assert "Legend. Colour: the state the resource is in" in status_texts
    mermaid = render([GraphNode("web", "OS::Heat::None", "FAILED")], {}, "mermaid", STATUS)
    assert '"*_FAILED: its last action failed"]:::failed' in mermaid
    assert '-->|"b needs a: a is created first"|' in mermaid


@pytest.mark.parametrize(("state", "fill"), [
    ("CREATE_COMPLETE", "#2e7d32"), ("UPDATE_IN_PROGRESS", "#f9a825"), ("DELETE_FAILED", "#c62828"),
    ("INIT_COMPLETE", "#9e9e9e"), ("ROLLBACK_COMPLETE", "#2e7d32")])
def test_a_status_node_names_its_full_status_coloured_by_how_it_ends(state, fill):
    dot = render([GraphNode("web", "OS::Heat::None", state)], {}, "dot", STATUS)
    assert f'"web" [label="web\\nOS::Heat::None\\n{state}", fillcolor="{fill}"' in dot
