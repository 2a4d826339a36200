# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""For the test run's speed only: a bytecode cache for ansible-core's collection loader.

ansible-core's collection loader keeps no ``.pyc``: every ``ansible-playbook`` process
compiles the collection's modules from source again (``compile`` in
``_AnsibleCollectionPkgLoaderBase.get_code``), 0.2-0.3 CPU-seconds a run for this
collection, and the tests start well over a thousand runs on a 2-core machine.

When ``HOTPLAY_TEST_BYTECODE_CACHE`` names a folder (``scripts/test.sh`` sets it), that
one ``compile`` is replaced by one that keeps each code object there under a digest of
the Python's magic number, the optimization level, the file name and the source: the
same source gives the code Python would compile from it, an edited one is compiled
again. Nothing else of ansible-core changes. The project's venv imports this module
at every start (``scripts/venv.sh`` writes the ``.pth`` file); it does nothing until
ansible-core's collection finder is imported, and nothing without the variable.
"""

from __future__ import annotations

import builtins
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

VARIABLE = "HOTPLAY_TEST_BYTECODE_CACHE"
FINDER_MODULE = "ansible.utils.collection_loader._collection_finder"


def cached_compile(folder: Path, source: Any, filename: Any, mode: str = "exec", flags: int = 0,
                   dont_inherit: bool = False, optimize: int = -1) -> CodeType:
    """``compile`` with its result kept in ``folder``; any call this cache does not
    key (not whole-module source code with a name, or with compiler flags) goes
    straight to ``compile``."""
    if mode != "exec" or flags or not isinstance(filename, str) or not isinstance(source, (bytes, str)):
        return builtins.compile(source, filename, mode, flags, dont_inherit, optimize)
    data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    level = sys.flags.optimize if optimize == -1 else optimize
    digest = hashlib.sha256(b"\0".join(
        (importlib.util.MAGIC_NUMBER, str(level).encode(), os.fsencode(filename), data))).hexdigest()
    entry = folder / digest
    try:
        return marshal.loads(entry.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        pass  # not there yet, or a partial file of a writer killed before its rename
    code = builtins.compile(source, filename, mode, flags, dont_inherit, optimize)
    _store(entry, marshal.dumps(code))
    return code


def _store(entry: Path, data: bytes) -> None:
    """Written whole or not at all: runs side by side read and write the same entries."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=entry.parent, prefix=".writing-")
    try:
        with os.fdopen(handle, "wb") as written:
            written.write(data)
        os.replace(temporary, entry)
    except OSError:
        Path(temporary).unlink(missing_ok=True)


def use_cache(finder_module: ModuleType, folder: Path) -> None:
    """The collection loader's ``compile`` (a global name its module looks up before
    the builtin) becomes the caching one."""
    def compile_cached(source: Any, filename: Any, mode: str = "exec", flags: int = 0,
                       dont_inherit: bool = False, optimize: int = -1) -> CodeType:
        return cached_compile(folder, source, filename, mode, flags, dont_inherit, optimize)

    setattr(finder_module, "compile", compile_cached)


class _OnFinderImport(importlib.abc.MetaPathFinder):
    """Finds ansible-core's collection finder module as Python would, and has the
    cache put in place as soon as the module has run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != FINDER_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            use_cache(module, self.folder)

        setattr(loader, "exec_module", exec_module)
        return spec


def install() -> None:
    folder = os.environ.get(VARIABLE)
    if not folder:
        return
    if FINDER_MODULE in sys.modules:
        use_cache(sys.modules[FINDER_MODULE], Path(folder))
    else:
        sys.meta_path.insert(0, _OnFinderImport(Path(folder)))


install()
