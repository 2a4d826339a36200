# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test run's bytecode cache for ansible-core's collection loader
(tests/startup/hotplay_bytecode_cache.py) never serves code of a source that changed,
and is in place in every Python of the project's venv that has its variable."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

STARTUP = Path(__file__).resolve().parents[1] / "startup"
sys.path.insert(0, str(STARTUP))

# pylint: disable=wrong-import-position
import hotplay_bytecode_cache as cache  # noqa: E402

IMPORT_THROUGH_ANSIBLE = textwrap.dedent("""
    import sys
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
    _AnsibleCollectionFinder(paths=[sys.argv[1]])._install()
    from ansible_collections.ns.col.plugins.module_utils.answer import ANSWER
    print(ANSWER)
""")


def run_python(code: str, *args: str, folder: Path | None) -> str:
    environment = {key: value for key, value in os.environ.items() if key != cache.VARIABLE}
    if folder is not None:
        environment[cache.VARIABLE] = str(folder)
    environment.pop("PYTHONPATH", None)  # as the tests' ansible-playbook runs have it
    completed = subprocess.run([sys.executable, "-c", code, *args], env=environment,
                               capture_output=True, text=True, check=True, timeout=120)
    return completed.stdout.strip()


def test_the_same_source_is_read_back_and_an_edited_one_compiled_again(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    first = cache.cached_compile(folder, b"RESULT = 1\n", "/x/answer.py", "exec", 0, True)
    again = cache.cached_compile(folder, b"RESULT = 1\n", "/x/answer.py", "exec", 0, True)
    edited = cache.cached_compile(folder, b"RESULT = 2\n", "/x/answer.py", "exec", 0, True)
    assert len(list(folder.iterdir())) == 2
    assert again is not first and again == first
    scope: dict[str, object] = {}
    exec(edited, scope)  # pylint: disable=exec-used
    assert scope["RESULT"] == 2


def test_a_partial_entry_is_compiled_again(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    cache.cached_compile(folder, b"RESULT = 1\n", "/x/answer.py")
    [entry] = folder.iterdir()
    entry.write_bytes(entry.read_bytes()[:5])  # a writer killed mid-write, were it not renamed
    scope: dict[str, object] = {}
    exec(cache.cached_compile(folder, b"RESULT = 1\n", "/x/answer.py"), scope)  # pylint: disable=exec-used
    assert scope["RESULT"] == 1


@pytest.mark.parametrize("with_variable", [True, False])
def test_the_venv_puts_the_cache_in_place_only_with_its_variable(tmp_path: Path, with_variable: bool) -> None:
    probe = ("import builtins, ansible.utils.collection_loader._collection_finder as finder;"
             " print(getattr(finder, 'compile', builtins.compile) is builtins.compile)")
    replaced = run_python(probe, folder=tmp_path if with_variable else None) == "False"
    assert replaced == with_variable


def test_a_collection_module_edited_between_runs_is_loaded_as_edited(tmp_path: Path) -> None:
    collections = tmp_path / "collections"
    answer = collections / "ansible_collections/ns/col/plugins/module_utils/answer.py"
    answer.parent.mkdir(parents=True)
    (collections / "ansible_collections/ns/col/galaxy.yml").write_text("namespace: ns\nname: col\nversion: 1.0.0\n")
    folder = tmp_path / "cache"
    answer.write_text("ANSWER = 'first'\n")
    assert run_python(IMPORT_THROUGH_ANSIBLE, str(collections), folder=folder) == "first"
    assert any(folder.iterdir()), "the collection loader's compile did not go through the cache"
    assert run_python(IMPORT_THROUGH_ANSIBLE, str(collections), folder=folder) == "first"
    answer.write_text("ANSWER = 'edited'\n")
    assert run_python(IMPORT_THROUGH_ANSIBLE, str(collections), folder=folder) == "edited"
