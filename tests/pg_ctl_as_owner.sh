#!/usr/bin/env bash
# pg_ctl for tests/postgres_server.py: as root, run as the unprivileged `postgres`
# user (initdb and postgres refuse root); as anyone else, run as is.
# HOTPLAY_PG_BINDIR names the server's bin directory (set by postgres_server.py).
set -euo pipefail
pg_ctl="${HOTPLAY_PG_BINDIR:?the PostgreSQL bin directory}/pg_ctl"
if [[ $(id -u) == 0 ]]; then
  exec runuser -u postgres -- "$pg_ctl" "$@"
fi
exec "$pg_ctl" "$@"
