# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dependency graph as a picture for change reviews: DOT, Mermaid, or SVG
(through Graphviz's ``dot`` when it is installed).

An arrow ``a -> b`` means b needs a first (creation order).  Nested resources hang
off their parent with a dashed line.  Colours say what the plan does to each
resource, or (for stack_info) the state it is in.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import HotplayError
from ..model.plan import Plan

FORMATS = ("dot", "mermaid", "svg")

COLOURS = {
    # plan actions
    "added": "#2e7d32",
    "updated": "#f9a825",
    "replaced": "#ef6c00",
    "deleted": "#c62828",
    "unchanged": "#9e9e9e",
    # resource states
    "COMPLETE": "#2e7d32",
    "IN_PROGRESS": "#f9a825",
    "FAILED": "#c62828",
    "INIT": "#9e9e9e",
}


@dataclass(frozen=True)
class GraphNode:
    path: str
    type: str
    colour_key: str  # a plan action or a status


def render(nodes: Iterable[GraphNode], requires: Mapping[str, Iterable[str]], fmt: str) -> str:
    """The graph in ``fmt`` (one of FORMATS)."""
    node_list = list(nodes)
    edges = _edges(node_list, requires)
    if fmt == "mermaid":
        return _mermaid(node_list, edges)
    dot = _dot(node_list, edges)
    return _svg(dot) if fmt == "svg" else dot


def _edges(nodes: list[GraphNode], requires: Mapping[str, Iterable[str]]) -> list[tuple[str, str, bool]]:
    """(from, to, nested) pairs: dependencies, and parent-to-child containment."""
    known = {node.path for node in nodes}
    edges = [(needed, path, False) for path, needs in requires.items() if path in known
             for needed in sorted(needs) if needed in known]
    for node in nodes:
        parent = node.path.rpartition("/")[0]
        if parent in known:
            edges.append((parent, node.path, True))
    return edges


def _dot(nodes: list[GraphNode], edges: list[tuple[str, str, bool]]) -> str:
    lines = ["digraph stack {", "  rankdir=LR;", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    for node in nodes:
        colour = COLOURS.get(node.colour_key, "#9e9e9e")
        label = f"{node.path}\\n{node.type}\\n{node.colour_key}"
        lines.append(f'  "{_escape(node.path)}" [label="{_escape(label)}", fillcolor="{colour}"];')
    for source, target, nested in edges:
        style = ' [style=dashed, arrowhead=none]' if nested else ""
        lines.append(f'  "{_escape(source)}" -> "{_escape(target)}"{style};')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid(nodes: list[GraphNode], edges: list[tuple[str, str, bool]]) -> str:
    ids = {node.path: f"n{index}" for index, node in enumerate(nodes)}
    lines = ["flowchart LR"]
    for node in nodes:
        lines.append(f'  {ids[node.path]}["{node.path}<br/>{node.type}<br/>{node.colour_key}"]:::{_css(node.colour_key)}')
    for source, target, nested in edges:
        arrow = "-.-" if nested else "-->"
        lines.append(f"  {ids[source]} {arrow} {ids[target]}")
    for key in sorted({node.colour_key for node in nodes}):
        lines.append(f"  classDef {_css(key)} fill:{COLOURS.get(key, '#9e9e9e')},color:#fff")
    return "\n".join(lines) + "\n"


def _svg(dot: str) -> str:
    binary = shutil.which("dot")
    if binary is None:
        raise HotplayError("graph: svg needs Graphviz's dot command (apt-get install graphviz); "
                           "use graph: dot or graph: mermaid without it")
    done = subprocess.run([binary, "-Tsvg"], input=dot, capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0:
        raise HotplayError(f"graph: dot failed: {done.stderr.strip()}")
    return done.stdout


def _escape(text: str) -> str:
    return text.replace('"', '\\"')


def _css(key: str) -> str:
    return key.lower().replace("_", "")


def plan_nodes(plan: Plan) -> list[GraphNode]:
    """Graph nodes coloured by what the plan does to each resource."""
    return [GraphNode(c.path, c.type, c.action) for c in plan.changes]
