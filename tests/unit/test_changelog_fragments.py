"""The changelog fragments make a clean release.

Each fragment parses and uses the sections changelogs/config.yaml declares (a second,
so an unquoted ``: `` in a fragment is caught in `make test`); `antsibull-changelog lint`
accepts them; and `antsibull-changelog release` in a throwaway copy of the collection
turns them all into one 1.0.0 entry with no warning, whose CHANGELOG.rst is valid
reStructuredText.  The release consumes the fragments, so it never runs in the tree.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHANGELOGS = ROOT / "changelogs"
FRAGMENTS = sorted((CHANGELOGS / "fragments").glob("*.yml"))
RELEASE = "1.0.0"
# What `antsibull-changelog release` reads: the metadata, the changelog and the plugins
# (their version_added names the new ones, through ansible-doc).
RELEASE_INPUTS = ("galaxy.yml", "meta", "changelogs", "plugins", "roles", "README.md")
# ansible-core 2.21's ansible-doc says this of an internal collection of its own,
# whatever collection it documents; nothing of ours can silence it.
ANSIBLE_CORE_NOISE = "ansible/_internal/ansible_collections/ansible/_protomatter"


def config() -> dict:
    return yaml.safe_load((CHANGELOGS / "config.yaml").read_text(encoding="utf-8"))


def declared_sections() -> set[str]:
    sections = config()
    return {name for name, _title in sections["sections"]} | {
        sections["trivial_section_name"],
        sections["prelude_section_name"],
    }


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
        if section == config()["prelude_section_name"]:
            assert isinstance(entries, str) and entries.strip(), f"{fragment.name}: {section} is not text"
            continue
        assert isinstance(entries, list) and entries, f"{fragment.name}: {section} is not a list"
        assert all(isinstance(entry, str) and entry.strip() for entry in entries), (
            f"{fragment.name}: {section} holds something other than text"
        )


def antsibull_changelog(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent
    tool = bin_dir / "antsibull-changelog"
    if not tool.exists():
        pytest.fail(f"{tool} is missing: requirements-dev.txt has antsibull-changelog (make venv)")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS"}
    }
    # Its ansible-doc is the venv's ansible-core, the one the tests run.
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [str(tool), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_antsibull_changelog_lint_accepts_the_fragments() -> None:
    result = antsibull_changelog("lint", cwd=ROOT)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_a_release_turns_every_fragment_into_one_entry_with_no_warning(tmp_path: Path) -> None:
    copy = tmp_path / "ansible_collections" / "hotplay" / "stacks"
    copy.mkdir(parents=True)
    for name in RELEASE_INPUTS:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, copy / name)

    # The fragments as copied: the tree may gain one while the release runs.
    copied = sorted(path.name for path in (copy / "changelogs" / "fragments").glob("*.yml"))

    result = antsibull_changelog("release", "--version", RELEASE, cwd=copy)

    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    complaints = [
        line
        for line in output.splitlines()
        if ("WARNING" in line or "ERROR" in line) and ANSIBLE_CORE_NOISE not in line
    ]
    assert not complaints, "\n".join(complaints)
    assert not list((copy / "changelogs" / "fragments").glob("*.yml")), "fragments left unreleased"

    changes = yaml.safe_load((copy / "changelogs" / "changelog.yaml").read_text(encoding="utf-8"))
    assert list(changes["releases"]) == [RELEASE]
    entry = changes["releases"][RELEASE]
    assert sorted(entry["fragments"]) == copied
    assert entry["changes"].get("release_summary"), "the 1.0.0 entry has no release summary"

    lint = antsibull_changelog("lint-changelog-yaml", "changelogs/changelog.yaml", cwd=copy)
    assert lint.returncode == 0 and not lint.stdout.strip(), lint.stdout + lint.stderr

    import docutils.core  # antsibull-changelog's dependency

    rst = (copy / "CHANGELOG.rst").read_text(encoding="utf-8")
    assert f"v{RELEASE}\n" in rst
    docutils.core.publish_string(
        rst, writer="null", settings_overrides={"halt_level": 2, "report_level": 5}
    )
