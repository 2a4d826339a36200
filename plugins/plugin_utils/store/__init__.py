# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 2, the store: stacks, resources (``ResourceState``), events, revisions,
hooks and locks, in SQLite or PostgreSQL over one SQL core (sql.py); sealing of
secrets (sealed), copying between stores (copy), waiting for locks (locking),
the SQLite files' directories and what killed processes left of them (files).

Open a store from its URL (SQLAlchemy's convention): ``sqlite:///...``, ``postgresql://...``;
``?lock_lease=30&lock_renew=10`` sets how locks are leased (leases.py).

May import: the core modules (errors, secrets).
"""

from __future__ import annotations

import os

from ..errors import StoreError
from .base import LeaseTerms, Store
from .files import make_private_directories, remove_stale_builds
from .sqlite import SqliteStore, default_path

STORE_ENV_VAR = "HOTPLAY_STORE"
POSTGRES_SCHEMES = ("postgresql", "postgres")
# URL query options of this collection (the others are the driver's).
LEASE_OPTIONS = ("lock_lease", "lock_renew")


def lease_terms_of(url: str) -> tuple[str, LeaseTerms]:
    """The URL without ``lock_lease`` and ``lock_renew`` (seconds), and the lease
    terms they set: the renewal every third of the lease unless told."""
    base, _mark, query = url.partition("?")
    items = [item.partition("=") for item in query.split("&")] if query else []
    given = {key: _seconds(key, value) for key, _eq, value in items if key in LEASE_OPTIONS}
    if not given:
        return url, LeaseTerms()
    kept = "&".join(key + eq + value for key, eq, value in items if key not in LEASE_OPTIONS)
    length = given.get("lock_lease", LeaseTerms.length)
    renew = given.get("lock_renew", min(LeaseTerms.renew_every, length / 3))
    if renew >= length:
        raise StoreError(f"store URL options: lock_renew ({renew:g}) must be less than lock_lease "
                         f"({length:g}), or a live run's lease may run out between two renewals")
    return base + ("?" + kept if kept else ""), LeaseTerms(length, renew)


def _seconds(option: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise StoreError(f"store URL option {option}={text!r} is not valid: expected a number of "
                         "seconds above 0")
    return value


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
    url, terms = lease_terms_of(url or os.environ.get(STORE_ENV_VAR) or "")
    if not url:
        return _sqlite(default_path(), terms)
    if url.startswith("sqlite:"):
        return _sqlite(store_path_from_url(url), terms)
    scheme = url.split(":", 1)[0]
    if scheme in POSTGRES_SCHEMES and url.startswith(f"{scheme}://"):
        # Imported here: the SQLite path works without psycopg installed.
        from .postgres import PostgresStore  # pylint: disable=import-outside-toplevel

        return PostgresStore(url, lease_terms=terms)
    raise StoreError(
        f"store URL scheme {scheme!r} is not supported "
        "(use sqlite:///... or postgresql://user@host:port/db)"
    )


def _sqlite(path: str, terms: LeaseTerms) -> SqliteStore:
    """A SQLite store: the directories it needs made private first (whatever the
    umask), and what a killed process left beside it removed (store.files)."""
    path = os.path.abspath(path)
    make_private_directories(os.path.dirname(path))
    remove_stale_builds(path)
    return SqliteStore(path, terms)
