# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module payloads ship their module_utils compiled, and a host uses that
bytecode only when it was compiled from the very source in the payload."""

from __future__ import annotations

import base64
import io
import subprocess
import sys
import zipfile
from pathlib import Path

from ansible.executor import module_common

from ansible_collections.hotplay.stacks.plugins.plugin_utils.adapters import module_payloads


def _archive(files: dict[str, str]) -> bytes:
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return output.getvalue()


def _import_from(archive: bytes, folder: Path) -> str:
    """Where ``ansible.module_utils.answer`` was loaded from and its VALUE, as a
    fresh interpreter imports it from the zip (the way AnsiballZ runs a module)."""
    path = folder / "payload.zip"
    path.write_bytes(archive)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import ansible.module_utils.answer as a; "
            "print(a.__file__.rsplit('/', 1)[1], a.VALUE)")
    done = subprocess.run([sys.executable, "-I", "-c", code, str(path)], capture_output=True,
                          text=True, check=True)
    return done.stdout.strip()


PAYLOAD = {"ansible/__init__.py": "", "ansible/module_utils/__init__.py": "",
           "ansible/module_utils/answer.py": "VALUE = 42\n", "ansible/modules/ask.py": "import os\n"}


def test_module_utils_get_bytecode_and_the_module_stays_source(tmp_path: Path) -> None:
    archive = zipfile.ZipFile(io.BytesIO(module_payloads.with_bytecode(_archive(PAYLOAD))))
    names = archive.namelist()
    assert archive.getinfo("ansible/module_utils/answer.pyc").compress_type == zipfile.ZIP_DEFLATED
    assert "ansible/module_utils/answer.pyc" in names
    assert "ansible/module_utils/__init__.pyc" in names
    assert "ansible/modules/ask.pyc" not in names
    assert set(PAYLOAD) <= set(names)


def test_the_host_runs_the_bytecode(tmp_path: Path) -> None:
    assert _import_from(module_payloads.with_bytecode(_archive(PAYLOAD)), tmp_path) == "answer.pyc 42"


def test_bytecode_of_another_source_is_not_used(tmp_path: Path) -> None:
    compiled = zipfile.ZipFile(io.BytesIO(module_payloads.with_bytecode(_archive(PAYLOAD))))
    stale = {name: compiled.read(name) for name in compiled.namelist()}
    stale["ansible/module_utils/answer.py"] = b"VALUE = 7\n"
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w") as archive:
        for name, data in stale.items():
            archive.writestr(name, data)
    assert _import_from(output.getvalue(), tmp_path) == "answer.py 7"


def test_a_cached_payload_is_given_bytecode() -> None:
    payload = module_common._CachedModule(zip_data=base64.b64encode(_archive(PAYLOAD)),
                                          metadata=None, source_mapping={})  # type: ignore[arg-type]
    names = zipfile.ZipFile(io.BytesIO(base64.b64decode(module_payloads.compiled(payload).zip_data))).namelist()
    assert "ansible/module_utils/answer.pyc" in names


def test_a_payload_for_a_debugger_or_coverage_stays_as_it_is() -> None:
    payload = module_common._CachedModule(zip_data=base64.b64encode(_archive(PAYLOAD)), metadata=None,
                                          source_mapping={"/src/answer.py": "ansible/module_utils/answer.py"})  # type: ignore[arg-type]
    assert module_payloads.compiled(payload) is payload
