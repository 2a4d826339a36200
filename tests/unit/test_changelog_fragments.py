"""Changelog fragments parse and use the sections changelogs/config.yaml declares.

ansible-test sanity (changelog, yamllint) checks the same, but only in `make sanity`;
this catches an unquoted ``: `` in a fragment during `make test`, in a second.
"""

from pathlib import Path

import pytest
import yaml

CHANGELOGS = Path(__file__).resolve().parents[2] / "changelogs"
FRAGMENTS = sorted((CHANGELOGS / "fragments").glob("*.yml"))


def declared_sections() -> set[str]:
    config = yaml.safe_load((CHANGELOGS / "config.yaml").read_text(encoding="utf-8"))
    return {name for name, _title in config["sections"]} | {config["trivial_section_name"]}


@pytest.mark.parametrize("fragment", FRAGMENTS, ids=lambda path: path.name)
def test_a_fragment_is_a_mapping_of_known_sections_to_lists_of_text(fragment: Path) -> None:
    try:
        content = yaml.safe_load(fragment.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        pytest.fail(f"{fragment.name} is not valid YAML: {error}")
    assert isinstance(content, dict), f"{fragment.name}: expected a mapping of sections"
    unknown = set(content) - declared_sections()
    assert not unknown, f"{fragment.name}: unknown sections {sorted(unknown)}"
    for section, entries in content.items():
        assert isinstance(entries, list) and entries, f"{fragment.name}: {section} is not a list"
        assert all(isinstance(entry, str) and entry.strip() for entry in entries), (
            f"{fragment.name}: {section} holds something other than text"
        )
