"""The documentation site's extra docs (docs/docsite) cover every guide and the action groups.

`make docs` builds the site (scripts/docs.sh); these checks need none of its tools: each
Markdown guide docs/NAME.md has its stand-in page docs/docsite/rst/NAME.rst (overview
for docs/README.md), every page is in extra-docs.yml, and the action groups page lists
the members meta/runtime.yml declares.
"""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCSITE = ROOT / "docs" / "docsite"
STAND_IN = re.compile(r"^\.\. Stand-in for (docs/[^,]+\.md),")


def toctree_entries() -> list[str]:
    index = yaml.safe_load((DOCSITE / "extra-docs.yml").read_text(encoding="utf-8"))
    return [entry for section in index["sections"] for entry in section["toctree"]]


def stand_ins() -> dict[str, str]:
    """Page name -> the guide it stands in for."""
    found = {}
    for page in sorted((DOCSITE / "rst").glob("*.rst")):
        match = STAND_IN.match(page.read_text(encoding="utf-8"))
        if match:
            found[page.stem] = match.group(1)
    return found


def test_every_guide_has_a_stand_in_page_on_the_site() -> None:
    guides = {f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md")}
    assert sorted(stand_ins().values()) == sorted(guides)
    for name, guide in stand_ins().items():
        assert (ROOT / guide).is_file(), f"{name}.rst stands in for a missing {guide}"
        label = f".. _ansible_collections.hotplay.stacks.docsite.{name.replace('-', '_')}:"
        assert label in (DOCSITE / "rst" / f"{name}.rst").read_text(encoding="utf-8")


def test_every_page_is_in_the_extra_docs_index_once() -> None:
    pages = sorted(path.stem for path in (DOCSITE / "rst").glob("*.rst"))
    assert sorted(toctree_entries()) == pages


def test_the_action_groups_page_lists_the_groups_of_meta_runtime() -> None:
    runtime = yaml.safe_load((ROOT / "meta" / "runtime.yml").read_text(encoding="utf-8"))
    page = (DOCSITE / "rst" / "action-groups.rst").read_text(encoding="utf-8")
    for group, members in runtime["action_groups"].items():
        assert f"``group/hotplay.stacks.{group}``" in page
        listed = re.findall(r":ansplugin:`hotplay\.stacks\.([a-z_]+)#module`", page)
        assert listed == members, f"group {group}: the page lists {listed}, meta/runtime.yml {members}"
