# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The integration tests' harness (tests/integration/conftest.py: real
ansible-playbook runs against the installed collection), for the other test folders
that run playbooks too (tests/cloud, tests/heat)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

_INTEGRATION = Path(__file__).resolve().parent / "integration" / "conftest.py"
_REPO = Path(os.environ.get("HOTPLAY_REPO", Path(__file__).resolve().parents[1]))


def load() -> ModuleType:
    """tests/integration/conftest.py as a module (loaded once)."""
    loaded = sys.modules.get("integration_conftest")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("integration_conftest", _INTEGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def helper(name: str) -> ModuleType:
    """A helper module of tests/integration (``processes``: killing a job's whole
    tree), loaded once, for the other test folders."""
    key = f"integration_{name}"
    loaded = sys.modules.get(key)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(key, _INTEGRATION.parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def optional_folder(variable: str, shared_name: str) -> Path | None:
    """A folder of others' files the project does not ship (a corpus, a checkout):
    the environment variable ``variable`` when set (asked for by name: a missing
    folder is then an error of the test, not a skip), else ``../shared/<shared_name>``
    beside the clone; None when neither is there."""
    named = os.environ.get(variable)
    if named:
        return Path(named)
    beside = _REPO.parent / "shared" / shared_name
    return beside if beside.is_dir() else None
