# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module payloads read once per task run, their module_utils shipped compiled.

ansible-core builds a module's AnsiballZ payload once per playbook run (a file in
its local temporary directory) and reads it back for every later call.  The
payload holds sources only: every run of a module on a host compiles
``ansible.module_utils.basic`` and the rest of its module_utils again, about half
the CPU a short module (``stat``, ``copy``) costs.  A playbook pays that once per
task; a stack of module resources once per resource, all in one task.

So a payload is given bytecode for its module_utils once per module and task:
the compiled payload is kept beside ansible-core's cached one (each call of a
stack runs in a process of its own, forked from the task's: the file is what
they share), and reused from memory within a process.  The bytecode is in checked
hash-based ``.pyc`` entries (PEP 552) beside the sources: the host's zipimport
uses one only when its Python is the controller's version (the magic number) and
the source it was compiled from is the one in the payload (the hash), and
compiles the source as before otherwise.  The module file itself stays source
only, so its tracebacks name the payload's path as before.

This reaches into ansible-core's private ``_CachedModule`` (2.19 and later);
where it is not there, or not as expected, payloads are left as they are.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import fcntl
import importlib.util
import io
import marshal
import os
import pickle
import threading
import zipfile
from typing import Any

from ansible.executor import module_common

# Flags of a checked hash-based .pyc (PEP 552): bit 0 hash-based, bit 1 check the source.
_CHECKED_HASH = (0b11).to_bytes(4, "little")

_LOCK = threading.Lock()
_PAYLOADS: dict[str, Any] = {}
# The compiled payload's file, beside ansible-core's cached payload.
COMPILED_SUFFIX = ".hotplay-compiled"


def reuse_compiled_payloads() -> None:
    """From now on in this process, ansible-core's reads of a cached payload
    return it from memory, with its module_utils compiled (patched once)."""
    cached = getattr(module_common, "_CachedModule", None)
    load = getattr(cached, "load", None)
    if cached is None or load is None or getattr(load, "_hotplay_compiled", False):
        return

    def load_compiled(path: str) -> Any:
        with _LOCK:  # one compile per payload, even when twenty calls want it at once
            if path not in _PAYLOADS:
                _PAYLOADS[path] = _read_compiled(path) or _compile_once(path, load)
            return _PAYLOADS[path]

    load_compiled._hotplay_compiled = True  # type: ignore[attr-defined]
    cached.load = staticmethod(load_compiled)


def _compile_once(path: str, load: Any) -> Any:
    """Compile the payload at ``path`` and keep it, unless another process of the
    task does so at the same moment (then wait for it and read what it kept)."""
    try:
        lock = os.open(path + COMPILED_SUFFIX + ".lock", os.O_CREAT | os.O_RDWR, 0o600)
    except OSError:
        return compiled(load(path))
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _read_compiled(path) or _write_compiled(path, compiled(load(path)))
    finally:
        os.close(lock)  # closing releases the lock


def _read_compiled(path: str) -> Any:
    """The compiled payload another process of this task kept, None when there is none."""
    try:
        with open(path + COMPILED_SUFFIX, "rb") as kept:
            # ansible-core's own cache beside it is a pickle of the same kind.
            return pickle.load(kept)  # noqa: S301 - written by this task, in its private temp dir
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        return None


def _write_compiled(path: str, payload: Any) -> Any:
    """Keep ``payload`` for the task's other processes (best effort: the payload
    is still used when the temporary directory cannot be written)."""
    part = f"{path}{COMPILED_SUFFIX}.{os.getpid()}"
    try:
        with open(part, "wb") as kept:
            pickle.dump(payload, kept)
        os.replace(part, path + COMPILED_SUFFIX)
    except (OSError, pickle.PicklingError):
        with contextlib.suppress(OSError):
            os.unlink(part)
    return payload


def compiled(payload: Any) -> Any:
    """The cached payload with bytecode beside its module_utils' sources; the
    payload unchanged when it is not the shape expected, or carries an extension's
    source mapping (coverage, a debugger: they want the sources' paths)."""
    zip_data = getattr(payload, "zip_data", None)
    if not isinstance(zip_data, bytes) or getattr(payload, "source_mapping", None) \
            or not dataclasses.is_dataclass(payload):
        return payload
    try:
        archive = with_bytecode(base64.b64decode(zip_data, validate=True))
    except (binascii.Error, zipfile.BadZipFile, SyntaxError, ValueError):
        return payload  # not what this was written for: the module runs from source as before
    return dataclasses.replace(payload, zip_data=base64.b64encode(archive))  # type: ignore[type-var]


def with_bytecode(archive: bytes) -> bytes:
    """A copy of the zip ``archive`` with a ``.pyc`` beside each ``.py`` of a
    ``module_utils`` package."""
    source = zipfile.ZipFile(io.BytesIO(archive))
    output = io.BytesIO()
    compression = _compression(source)
    with zipfile.ZipFile(output, "w", compression=compression) as target:
        names = set(source.namelist())
        for entry in source.infolist():
            data = source.read(entry)
            target.writestr(entry, data)
            if _is_module_util(entry.filename) and entry.filename + "c" not in names:
                target.writestr(zipfile.ZipInfo(entry.filename + "c", entry.date_time),
                                _bytecode(data, entry.filename), compress_type=compression)
    return output.getvalue()


def _is_module_util(name: str) -> bool:
    return name.endswith(".py") and "/module_utils/" in f"/{name}"


def _bytecode(source: bytes, filename: str) -> bytes:
    code = compile(source, filename, "exec", dont_inherit=True)
    return importlib.util.MAGIC_NUMBER + _CHECKED_HASH + importlib.util.source_hash(source) \
        + marshal.dumps(code)


def _compression(archive: zipfile.ZipFile) -> int:
    methods = {entry.compress_type for entry in archive.infolist()}
    return zipfile.ZIP_DEFLATED if zipfile.ZIP_DEFLATED in methods else zipfile.ZIP_STORED
