#!/usr/bin/env bash
# The real OpenStack Heat engine the differential tester compares hotplay with
# (tests/differential, docs/heat-differences.md).  It is the team's peer folder
# (../shared/peer/heat beside the clone, or $HOTPLAY_HEAT_PEER); without it this
# says so in one line and does nothing.
#
#   scripts/heat_peer.sh install   the peer's install.sh into .build/heatvenv
#                                  (MariaDB from apt when missing), once
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
peer=${HOTPLAY_HEAT_PEER:-$root/../shared/peer/heat}
venv=${HEAT_VENV:-$root/.build/heatvenv}

case "${1:-}" in
  install)
    if [ ! -x "$peer/install.sh" ]; then
      echo "no Heat peer at $peer: the differential tests will be skipped (set HOTPLAY_HEAT_PEER)"
      exit 0
    fi
    if [ -x "$venv/bin/heat-manage" ] && command -v mariadbd > /dev/null; then
      exit 0
    fi
    echo "installing the Heat peer into $venv (a few minutes)"
    # From a copy: the peer's install.sh writes into its own folder, and the shared
    # folder may be read-only (the tests copy the peer again and add what it wrote).
    copy=$root/.build/heatpeer
    rm -rf "$copy" && mkdir -p "$root/.build" && cp -r "$peer" "$copy" && chmod -R u+w "$copy"
    HEAT_VENV="$venv" "$copy/install.sh" > "$root/.build/heat_peer_install.log" 2>&1 || {
      tail -20 "$root/.build/heat_peer_install.log" >&2; exit 1; }
    ;;
  *) echo "usage: $0 install" >&2; exit 2 ;;
esac
