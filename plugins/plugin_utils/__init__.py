# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine: Heat's orchestration model, run inside ansible-playbook.

Stages, lowest first; a stage imports only itself and the stages before it
(tests/unit/plugins/test_import_layers.py holds it, docs/architecture.md draws it):

core (errors, limits, bounded, secrets) → language → store → resources → model →
run → adapters → operations.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import SOURCE_SUFFIXES, FileFinder, ModuleSpec, SourceFileLoader
from types import ModuleType


class _CachedBytecodeFinder:
    """Imports the engine's modules (this package and below, nothing else) with
    Python's own file finder and source loader, which keep their bytecode in
    ``__pycache__`` as they do for any installed package.

    Ansible's collection loader compiles a collection's source on every import and
    caches nothing: the engine's 30,000 lines cost every ``ansible-playbook`` that
    runs one of this collection's tasks about 0.2 s of compiling.  Where the
    collection's folder is read-only Python just does not write the cache."""

    def __init__(self, package: str) -> None:
        self.prefix = package + "."
        self._folders: dict[str, FileFinder] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if path is None or not fullname.startswith(self.prefix):
            return None
        for folder in path:
            spec = self._finder(folder).find_spec(fullname, target)
            if spec is not None:
                return spec
        return None

    def _finder(self, folder: str) -> FileFinder:
        # Not PathFinder: Ansible's path hook would hand the folder back to its loader.
        if folder not in self._folders:
            self._folders[folder] = FileFinder(folder, (SourceFileLoader, SOURCE_SUFFIXES))
        return self._folders[folder]


def _install_finder() -> None:
    """Once per process, ahead of Ansible's collection finder."""
    if not any(isinstance(finder, _CachedBytecodeFinder) and finder.prefix == __name__ + "."
               for finder in sys.meta_path):
        sys.meta_path.insert(0, _CachedBytecodeFinder(__name__))


_install_finder()
