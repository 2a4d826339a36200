"""The built collection holds what users need and none of the developers' tooling.

galaxy.yml's build_ignore keeps tests, benchmarks, scripts, CI files, tool caches and
build output out of the artifact; a new developer folder that is not listed there
shows up here as an unexpected top-level path.
"""

import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Top-level paths of the artifact.  tests/ holds only tests/sanity (ignore files that an
# importer running ansible-test sanity reads); extensions/ only extensions/awx.
SHIPPED = {
    "COPYING", "FILES.json", "MANIFEST.json", "README.md", "CHANGELOG.rst", "bindep.txt",
    "requirements.txt", "changelogs", "docs", "environments", "extensions", "meta",
    "playbooks", "plugins", "roles", "tests",
}
NEEDED = {
    "plugins/modules/stack.py", "plugins/action/stack.py", "plugins/inventory/stacks.py",
    "meta/runtime.yml", "meta/execution-environment.yml", "requirements.txt", "bindep.txt",
    "changelogs/changelog.yaml", "changelogs/config.yaml", "docs/docsite/links.yml",
    "docs/docsite/extra-docs.yml", "roles/infrastructure/meta/argument_specs.yml",
}


def test_the_artifact_holds_what_users_need_and_no_tooling(tmp_path: Path) -> None:
    galaxy = Path(sys.executable).parent / "ansible-galaxy"
    subprocess.run([str(galaxy), "collection", "build", "--output-path", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True, text=True, timeout=300)
    (artifact,) = tmp_path.glob("hotplay-stacks-*.tar.gz")
    with tarfile.open(artifact) as tarball:
        names = {member.name for member in tarball.getmembers() if member.isfile()}

    assert NEEDED <= names, sorted(NEEDED - names)
    unexpected = sorted({name.split("/")[0] for name in names} - SHIPPED)
    assert not unexpected, f"not for users, add to galaxy.yml build_ignore: {unexpected}"
    tooling = sorted(
        name for name in names
        if (name.startswith("tests/") and not name.startswith("tests/sanity/"))
        or (name.startswith("extensions/") and not name.startswith("extensions/awx/"))
        or name.startswith(("changelogs/fragments/", "docs/requirements"))
        or "__pycache__" in name or name.endswith(".pyc")
    )
    assert not tooling, tooling
