# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dependency graph as a picture for change reviews: DOT, Mermaid, or SVG
(through Graphviz's ``dot`` when it is installed).

An arrow ``a -> b`` means b needs a first (creation order).  Nested resources hang
off their parent with a dashed line.  Colours say what the plan does to each
resource (a plan graph), or the state it is in (a status graph); every picture
carries a legend saying so, because green means "added" in one and "COMPLETE" in
the other.  Each node's text is black or white, whichever contrasts more with its
fill, so every node meets WCAG AA (4.5:1).

Resource names may hold any character Heat accepts (quotes, backslashes, ``<``,
``{``, ``|``, non-ASCII): each writer escapes them the way its format reads them.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import HotplayError
from ..model.plan import Plan

FORMATS = ("dot", "mermaid", "svg")

BLACK = "#000000"
WHITE = "#ffffff"
# The legend's nodes are named by paths no resource can have: a resource path never
# starts with "/" (Heat refuses "/" in a resource name).
_LEGEND = "/legend/"


@dataclass(frozen=True)
class Colour:
    """A node fill and what it means, as the legend says it."""

    fill: str
    meaning: str


@dataclass(frozen=True)
class Palette:
    """The colours of one kind of graph, keyed by what a node's state is."""

    title: str
    colours: Mapping[str, Colour]
    fallback: str  # the key of a state the palette does not name

    def key_of(self, state: str) -> str:
        """The colour key of a node's state: a plan action as it is; a Heat status
        (``UPDATE_IN_PROGRESS``) by how it ends, ``INIT_*`` as not created yet."""
        if state in self.colours:
            return state
        if state.startswith("INIT_"):
            return "INIT" if "INIT" in self.colours else self.fallback
        return next((key for key in self.colours if state.endswith(f"_{key}")), self.fallback)


PLAN = Palette(
    title="Colour: what this run does to the resource",
    colours={
        "added": Colour("#2e7d32", "added: created"),
        "updated": Colour("#f9a825", "updated: changed in place"),
        "replaced": Colour("#ef6c00", "replaced: a new one created, the old one deleted"),
        "deleted": Colour("#c62828", "deleted: removed with the stack or from it"),
        "unchanged": Colour("#9e9e9e", "unchanged: left as it is"),
    },
    fallback="unchanged",
)

STATUS = Palette(
    title="Colour: the state the resource is in",
    colours={
        "COMPLETE": Colour("#2e7d32", "*_COMPLETE: its last action finished"),
        "IN_PROGRESS": Colour("#f9a825", "*_IN_PROGRESS: an action is running, paused or was cut off"),
        "FAILED": Colour("#c62828", "*_FAILED: its last action failed"),
        "INIT": Colour("#9e9e9e", "INIT_COMPLETE: not created yet"),
    },
    fallback="INIT",
)

ARROW_MEANING = "b needs a: a is created first"
NESTED_MEANING = "a resource of a nested stack, under its parent"


@dataclass(frozen=True)
class GraphNode:
    path: str
    type: str
    state: str  # a plan action ("added") or a Heat status ("CREATE_COMPLETE")


def render(nodes: Iterable[GraphNode], requires: Mapping[str, Iterable[str]], fmt: str,
           palette: Palette = PLAN) -> str:
    """The graph in ``fmt`` (one of FORMATS), coloured by ``palette``."""
    node_list = list(nodes)
    edges = _edges(node_list, requires)
    if fmt == "mermaid":
        return _mermaid(node_list, edges, palette)
    dot = _dot(node_list, edges, palette)
    return _svg(dot) if fmt == "svg" else dot


def text_colour(fill: str) -> str:
    """Black or white, whichever contrasts more with ``fill``."""
    return max((BLACK, WHITE), key=lambda text: contrast_ratio(text, fill))


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2's contrast ratio of two ``#rrggbb`` colours, 1 to 21."""
    lighter, darker = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _luminance(colour: str) -> float:
    """WCAG 2's relative luminance of an sRGB ``#rrggbb`` colour."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    red, green, blue = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


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


# -- DOT -------------------------------------------------------------------------------


def _dot(nodes: list[GraphNode], edges: list[tuple[str, str, bool]], palette: Palette) -> str:
    lines = ["digraph stack {", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    for node in nodes:
        label = _dot_label([node.path, node.type, node.state])
        lines.append(f"  {_dot_id(node.path)} [label={label}, {_dot_colours(palette, node.state)}];")
    for source, target, nested in edges:
        style = " [style=dashed, arrowhead=none]" if nested else ""
        lines.append(f"  {_dot_id(source)} -> {_dot_id(target)}{style};")
    lines.extend(_dot_legend(palette))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_colours(palette: Palette, state: str) -> str:
    fill = palette.colours[palette.key_of(state)].fill
    return f'fillcolor="{fill}", fontcolor="{text_colour(fill)}"'


def _dot_legend(palette: Palette) -> list[str]:
    """A cluster of one node per colour, and an arrow and a dashed line saying what they mean."""
    lines = ["  subgraph cluster_legend {",
             f'    label={_dot_label(["Legend. " + palette.title])}; fontname="Helvetica"; style=dashed;']
    for key, colour in palette.colours.items():
        lines.append(f"    {_dot_id(_LEGEND + key)} [label={_dot_label([colour.meaning])}, "
                     f"{_dot_colours(palette, key)}];")
    plain = 'shape=plaintext, style=""'
    for name in ("a", "b", "parent", "parent/child"):
        lines.append(f"    {_dot_id(_LEGEND + name)} [label={_dot_label([name])}, {plain}];")
    lines.append(f"    {_dot_id(_LEGEND + 'a')} -> {_dot_id(_LEGEND + 'b')} "
                 f"[label={_dot_label([ARROW_MEANING])}];")
    lines.append(f"    {_dot_id(_LEGEND + 'parent')} -> {_dot_id(_LEGEND + 'parent/child')} "
                 f"[label={_dot_label([NESTED_MEANING])}, style=dashed, arrowhead=none];")
    lines.append("  }")
    return lines


def _dot_id(name: str) -> str:
    """A node name as a DOT quoted ID.  DOT's lexer reads only ``\\"`` as an escape;
    doubling backslashes too keeps a name ending in one from swallowing the
    closing quote, and keeps the mapping one-to-one."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_label(lines: list[str]) -> str:
    """Lines as a DOT label: Graphviz reads backslash escapes (``\\n``, ``\\N``,
    ``\\l``) and HTML entities (``&amp;``) in labels, so a name's own backslashes
    are doubled and its ``&`` written ``&amp;``; ``\\n`` ends a line."""
    return '"' + "\\n".join(_dot_label_text(line) for line in lines) + '"'


def _dot_label_text(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")
    return text.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")


# -- Mermaid ---------------------------------------------------------------------------


def _mermaid(nodes: list[GraphNode], edges: list[tuple[str, str, bool]], palette: Palette) -> str:
    ids = {node.path: f"n{index}" for index, node in enumerate(nodes)}
    lines = ["flowchart LR"]
    for node in nodes:
        label = "<br/>".join(_mermaid_text(part) for part in (node.path, node.type, node.state))
        lines.append(f'  {ids[node.path]}["{label}"]:::{_css(palette.key_of(node.state))}')
    for source, target, nested in edges:
        arrow = "-.-" if nested else "-->"
        lines.append(f"  {ids[source]} {arrow} {ids[target]}")
    lines.extend(_mermaid_legend(palette))
    for key, colour in palette.colours.items():
        lines.append(f"  classDef {_css(key)} fill:{colour.fill},color:{text_colour(colour.fill)}")
    lines.append("  classDef legendtext fill:none,stroke:none")
    return "\n".join(lines) + "\n"


def _mermaid_legend(palette: Palette) -> list[str]:
    lines = [f'  subgraph legend ["{_mermaid_text("Legend. " + palette.title)}"]', "    direction TB"]
    for index, (key, colour) in enumerate(palette.colours.items()):
        lines.append(f'    legend{index}["{_mermaid_text(colour.meaning)}"]:::{_css(key)}')
    lines.append(f'    legend_a["a"]:::legendtext -->|"{_mermaid_text(ARROW_MEANING)}"| legend_b["b"]:::legendtext')
    lines.append(f'    legend_parent["parent"]:::legendtext -.-|"{_mermaid_text(NESTED_MEANING)}"| '
                 'legend_child["parent/child"]:::legendtext')
    lines.append("  end")
    return lines


# Mermaid reads a quoted label up to the next '"', decodes "#name;" and "#123;" entity
# codes, renders the rest as HTML, reads "`...`" as Markdown and "%%" as a comment
# at the start of a line (escaped anywhere, to be sure): each of those
# characters becomes an entity code.
_MERMAID_ENTITIES = {"#": "#35;", "%": "#37;", '"': "#quot;", "&": "#amp;", "<": "#lt;", ">": "#gt;", "`": "#96;"}


def _mermaid_text(text: str) -> str:
    escaped = "".join(_MERMAID_ENTITIES.get(char, char) for char in text)
    return escaped.replace("\r\n", "<br/>").replace("\n", "<br/>").replace("\r", "<br/>")


def _css(key: str) -> str:
    return key.lower().replace("_", "")


# -- SVG -------------------------------------------------------------------------------


def _svg(dot: str) -> str:
    binary = shutil.which("dot")
    if binary is None:
        raise HotplayError("graph: svg needs Graphviz's dot command (apt-get install graphviz); "
                           "use graph: dot or graph: mermaid without it")
    # UTF-8 both ways, whatever the controller's locale: names may be non-ASCII.
    done = subprocess.run([binary, "-Tsvg"], input=dot, capture_output=True, text=True,
                          encoding="utf-8", timeout=60, check=False)
    if done.returncode != 0:
        raise HotplayError(f"graph: dot failed: {done.stderr.strip()}")
    return done.stdout


def plan_nodes(plan: Plan) -> list[GraphNode]:
    """Graph nodes coloured by what the plan does to each resource."""
    return [GraphNode(c.path, c.type, c.action) for c in plan.changes]
