# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine's modules keep their bytecode in ``__pycache__`` under Ansible's
collection loader (which compiles a collection's source on every import): the
first process writes it, the next ones read it back and compile nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
ENGINE = "ansible_collections.hotplay.stacks.plugins.plugin_utils"

# A fresh Python with Ansible's collection finder, as ansible-playbook runs it.
IMPORTER = f"""\
import json, sys
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[sys.argv[1]])._install()
import {ENGINE}.operations.engine
import ansible_collections.hotplay.stacks.plugins.action.stack
engine = {{name: (type(module.__loader__).__name__, getattr(module, "__cached__", None))
          for name, module in sys.modules.items() if name.startswith("{ENGINE}.")}}
others = {{name: type(module.__loader__).__name__ for name, module in sys.modules.items()
          if name.startswith("ansible_collections.hotplay.") and not name.startswith("{ENGINE}")}}
print(json.dumps({{"engine": engine, "others": others}}))
"""


def imported(collections: Path) -> dict[str, dict[str, object]]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    run = subprocess.run([sys.executable, "-c", IMPORTER, str(collections)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def test_engine_bytecode_is_written_once_and_read_back(tmp_path: Path) -> None:
    collection = tmp_path / "ansible_collections" / "hotplay" / "stacks"
    shutil.copytree(REPO / "plugins", collection / "plugins",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "meta", collection / "meta")

    first = imported(tmp_path)
    assert len(first["engine"]) > 50  # the engine, not a module or two
    for name, (loader, cached) in first["engine"].items():
        assert loader == "SourceFileLoader", name
        assert cached and Path(str(cached)).is_file(), f"{name}: no bytecode written"
    # Ansible's loader keeps what is not the engine's (the action plugin's package).
    assert "_AnsibleCollectionLoader" in first["others"].values()

    written = {name: Path(str(cached)).stat().st_mtime_ns for name, (_l, cached) in first["engine"].items()}
    second = imported(tmp_path)
    assert second["engine"].keys() == first["engine"].keys()
    assert {name: Path(str(cached)).stat().st_mtime_ns
            for name, (_l, cached) in second["engine"].items()} == written  # read, not rewritten
