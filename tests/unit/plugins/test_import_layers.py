"""The engine's packages import only downwards, and nothing imports in a circle.

docs/architecture.md draws the stages; this test is what holds them.  Every import
of a plugin_utils module counts: at the top of a file, inside a function, or under
``if TYPE_CHECKING`` (a cycle of type hints is a cycle of design all the same).
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PLUGIN_UTILS = Path(__file__).resolve().parents[3] / "plugins" / "plugin_utils"
PREFIX = "ansible_collections.hotplay.stacks.plugins.plugin_utils"

# Lowest first.  A module may import its own stage and the stages before it.
STAGES = ("core", "language", "store", "resources", "model", "run", "adapters", "operations")
CORE = {"errors", "limits", "bounded", "secrets", ""}  # "": the package itself

# Imports inside a function that are there for a reason other than a cycle.
DEFERRED_ON_PURPOSE = {
    # psycopg is only needed (and only installed) by those who use PostgreSQL.
    ("store", "store.postgres"),
    # The OpenStack types are compiled only when a template names one (their modules
    # are deferred): a wait condition handle loads Swift's only when it signals
    # through Swift (TEMP_URL_SIGNAL).
    ("resources.wait_condition", "resources.openstack.swift"),
}
MAX_TOP_LEVEL_FILES = 6


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PLUGIN_UTILS).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in PLUGIN_UTILS.rglob("*.py")}


def stage_of(module: str) -> str:
    head = module.split(".")[0]
    return "core" if head in CORE else head


def imported_modules(module: str) -> Iterator[tuple[str, bool]]:
    """(module imported, whether at the top of the file) for each import of ours."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top_level = {id(node) for node in tree.body}
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[:len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        elif (node.module or "").startswith(PREFIX):
            target = node.module[len(PREFIX):].lstrip(".")
        else:
            continue
        names = [f"{target}.{alias.name}".lstrip(".") for alias in node.names]
        for found in [name for name in names if name in MODULES] or [target]:
            yield found, id(node) in top_level


def import_graph() -> dict[str, set[str]]:
    return {module: {target for target, _at_top in imported_modules(module)} for module in MODULES}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path, or None; iterative depth-first search."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            following = next(stack[-1], None)
            if following is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(following) == 1:
                return path[path.index(following):] + [following]
            elif not state.get(following):
                state[following] = 1
                path.append(following)
                stack.append(iter(sorted(graph.get(following, ()))))
    return None


def test_the_import_graph_has_no_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_stage_imports_a_later_one() -> None:
    upward = [f"{module} ({stage_of(module)}) imports {target} ({stage_of(target)})"
              for module in sorted(MODULES) for target, _at_top in imported_modules(module)
              if STAGES.index(stage_of(target)) > STAGES.index(stage_of(module))]
    assert not upward, "\n".join(upward)


def test_no_import_is_deferred_into_a_function_to_dodge_a_cycle() -> None:
    deferred = [f"{module} imports {target} inside a function"
                for module in sorted(MODULES) for target, at_top in imported_modules(module)
                if not at_top and (module, target) not in DEFERRED_ON_PURPOSE]
    assert not deferred, "\n".join(deferred)


def test_every_stage_is_a_package_that_says_what_it_owns() -> None:
    for stage in STAGES[1:]:
        init = PLUGIN_UTILS / stage / "__init__.py"
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert docstring and "import" in docstring, f"{init}: say what it owns and may import"


def test_few_files_sit_directly_in_plugin_utils() -> None:
    loose = sorted(path.name for path in PLUGIN_UTILS.glob("*.py"))
    assert len(loose) <= MAX_TOP_LEVEL_FILES, loose


@pytest.mark.parametrize("graph, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": set(), "c": {"c"}}, ["c", "c"]),
    ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, None),
])
def test_the_cycle_finder_finds_cycles_and_only_cycles(graph: dict[str, set[str]],
                                                       cycle: list[str] | None) -> None:
    assert find_cycle(graph) == cycle
