# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine: Heat's orchestration model, run inside ansible-playbook.

Stages, lowest first; a stage imports only itself and the stages before it
(tests/unit/plugins/test_import_layers.py holds it, docs/architecture.md draws it):

core (errors, limits, bounded, secrets) → language → store → resources → model →
run → adapters → operations.
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

_SOURCE = (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)


class _BytecodeCachingFinder:
    """Imports the engine's modules with Python's own path finder, which keeps their
    compiled bytecode in ``__pycache__``.  ansible-core's collection loader compiles
    every module of a collection from source in each ``ansible-playbook`` run: for
    the engine's 1 MB of source, half of what importing it costs there (0.2 s of
    CPU; issue 30 item 5, benchmarks/bench_preview.py)."""

    def __init__(self, package: str) -> None:
        self.prefix = package + "."

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if path is None or not fullname.startswith(self.prefix):
            return None
        # A FileFinder of our own: sys.path_hooks would hand these folders back to
        # ansible-core's loader.
        for folder in path:
            spec = importlib.machinery.FileFinder(folder, _SOURCE).find_spec(fullname, target)
            if spec is not None and spec.loader is not None:
                return spec
        return None


def _cache_bytecode() -> None:
    """Put the finder first when the collection loader imported this package (run
    from a plain ``sys.path``, Python caches bytecode already)."""
    if isinstance(__spec__.loader, importlib.machinery.SourceFileLoader):
        return
    if not any(isinstance(finder, _BytecodeCachingFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _BytecodeCachingFinder(__name__))


_cache_bytecode()
