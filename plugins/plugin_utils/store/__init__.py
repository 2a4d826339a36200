# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 2, the store: stacks, resources (``ResourceState``), events, revisions,
hooks and locks, in SQLite or PostgreSQL over one SQL core (sql.py); sealing of
secrets (sealed), copying between stores (copy), waiting for locks (locking).

Open a store from its URL (SQLAlchemy's convention): ``sqlite:///...``, ``postgresql://...``.

May import: the core modules (errors, secrets).
"""

from __future__ import annotations

import os

from ..errors import StoreError
from .base import Store
from .sqlite import SqliteStore, default_path

STORE_ENV_VAR = "HOTPLAY_STORE"
POSTGRES_SCHEMES = ("postgresql", "postgres")


def store_path_from_url(url: str) -> str:
    """The file of a ``sqlite:`` URL: four slashes absolute, three relative."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or len(url) == len(prefix):
        raise StoreError(
            f"store URL {url!r} is not supported: expected sqlite:////abs/path.db "
            "or sqlite:///relative/path.db"
        )
    return url[len(prefix):]


def open_store(url: str | None = None) -> Store:
    """The store named by ``url``, else ``$HOTPLAY_STORE``, else the per-user file."""
    url = url or os.environ.get(STORE_ENV_VAR) or ""
    if not url:
        return SqliteStore(default_path())
    if url.startswith("sqlite:"):
        return SqliteStore(store_path_from_url(url))
    scheme = url.split(":", 1)[0]
    if scheme in POSTGRES_SCHEMES and url.startswith(f"{scheme}://"):
        # Imported here: the SQLite path works without psycopg installed.
        from .postgres import PostgresStore  # pylint: disable=import-outside-toplevel

        return PostgresStore(url)
    raise StoreError(
        f"store URL scheme {scheme!r} is not supported "
        "(use sqlite:///... or postgresql://user@host:port/db)"
    )
