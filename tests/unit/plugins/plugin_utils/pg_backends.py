# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures: a throwaway PostgreSQL server (once per test session and xdist worker,
tests/postgres_server.py), and a store of each backend with a fresh database per test."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "tests"))
from postgres_server import ServerMissing, throwaway_postgres  # noqa: E402 pylint: disable=wrong-import-position


@pytest.fixture(scope="session")
def pg_server():
    """The admin URL of a throwaway PostgreSQL server, as ``{"DATABASE_URL": url}``."""
    try:
        with throwaway_postgres() as url:
            yield {"DATABASE_URL": url}
    except ServerMissing as missing:
        pytest.fail(f"cannot start PostgreSQL for the store tests: {missing}", pytrace=False)


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
