# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The suite's leak check (tests/leak_check.py, loaded by scripts/test.sh): a test
that leaks a file fails, whether the file is freed while it runs or only by the
garbage collector later (held in a reference cycle)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

LEAKS = {
    "freed_at_once": "def test_leak(tmp_path):\n    open(tmp_path / 'f', 'w')\n",
    "freed_by_the_collector": (
        "def test_leak(tmp_path):\n"
        "    cycle = {'file': open(tmp_path / 'f', 'w')}\n"
        "    cycle['self'] = cycle\n"),
}


@pytest.mark.parametrize("kind", sorted(LEAKS))
def test_a_test_that_leaks_a_file_fails(tmp_path: Path, kind: str) -> None:
    (tmp_path / "test_leaky.py").write_text(LEAKS[kind])
    (tmp_path / "pytest.ini").write_text((REPO / "pytest.ini").read_text())
    run = subprocess.run([sys.executable, "-X", "dev", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "leak_check", "-n", "0", "test_leaky.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "tests")})
    assert run.returncode == 1, run.stdout + run.stderr
    # Freed at once: the test fails; freed by the collector: an error at its teardown.
    assert ("1 failed" in run.stdout or "1 error" in run.stdout) and "unclosed file" in run.stdout, run.stdout


def test_a_test_that_closes_what_it_opens_passes(tmp_path: Path) -> None:
    (tmp_path / "test_tidy.py").write_text(
        "def test_tidy(tmp_path):\n    with open(tmp_path / 'f', 'w') as f:\n        f.write('x')\n")
    (tmp_path / "pytest.ini").write_text((REPO / "pytest.ini").read_text())
    run = subprocess.run([sys.executable, "-X", "dev", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "leak_check", "-n", "0", "test_tidy.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "tests")})
    assert run.returncode == 0, run.stdout + run.stderr
