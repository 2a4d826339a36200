# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures: a throwaway PostgreSQL server (once per test session), and a store of
each backend with a fresh database per test."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]


def _shared_dir() -> Path:
    return Path(os.environ.get("HOTPLAY_SHARED") or REPO.parent / "shared")


def _parse_exports(text: str) -> dict[str, str]:
    exported = {}
    for line in text.splitlines():
        match = re.match(r"^export ([A-Z_][A-Z0-9_]*)=(.*)$", line.strip())
        if match:
            exported[match.group(1)] = shlex.split(match.group(2))[0] if match.group(2) else ""
    return exported


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway PostgreSQL cluster (../shared/testbed/pg_throwaway.sh): its PG* variables."""
    script = _shared_dir() / "testbed" / "pg_throwaway.sh"
    if not script.is_file():
        pytest.fail(f"cannot start PostgreSQL for the store tests: {script} not found "
                    "(set HOTPLAY_SHARED to the shared folder)", pytrace=False)
    started = subprocess.run(["bash", str(script), "start"], capture_output=True, text=True,
                             check=False, timeout=300)
    exported = _parse_exports(started.stdout)
    if started.returncode != 0 or "DATABASE_URL" not in exported:
        if exported.get("PGTB_DIR"):
            subprocess.run(["bash", str(script), "stop", exported["PGTB_DIR"]], check=False)
        pytest.fail(
            "cannot start PostgreSQL for the store tests (CI installs Debian's postgresql): "
            f"{script} start exited {started.returncode}\n{started.stderr[-2000:]}",
            pytrace=False,
        )
    try:
        yield exported
    finally:
        subprocess.run(["bash", str(script), "stop", exported["PGTB_DIR"]], check=False,
                       capture_output=True, timeout=120)


@pytest.fixture
def pg_url(pg_server):
    """The URL of a fresh, empty database on the throwaway server, dropped afterwards."""
    import psycopg  # pylint: disable=import-outside-toplevel

    admin_url = pg_server["DATABASE_URL"]
    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield admin_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """A store URL of each backend, fresh for the test."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/s.db"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def backend_store(store_url):
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store  # pylint: disable=import-outside-toplevel

    opened = open_store(store_url)
    yield opened
    opened.close()
