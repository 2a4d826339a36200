#!/usr/bin/env bash
# The real OpenStack Heat engine the differential tester compares hotplay with
# (tests/differential, docs/heat-differences.md).  It is the team's peer folder
# (../shared/peer/heat beside the clone, or $HOTPLAY_HEAT_PEER); without it this
# says so in one line and does nothing.
#
#   scripts/heat_peer.sh install   the peer's install.sh into a venv kept between clones
#                                  (scripts/venv_cache.sh), .build/heatvenv its link, or
#                                  into $HEAT_VENV (MariaDB from apt when missing), once
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=scripts/venv_cache.sh
source scripts/venv_cache.sh
peer=${HOTPLAY_HEAT_PEER:-$root/../shared/peer/heat}

# install_peer VENV: the peer's install.sh into VENV (MariaDB from apt when missing).
install_peer() {
  local venv=$1 copy=$root/.build/heatpeer
  echo "installing the Heat peer into $venv (a few minutes)"
  # From a copy: the peer's install.sh writes into its own folder, and the shared
  # folder may be read-only (the tests copy the peer again and add what it wrote).
  rm -rf "$copy" && mkdir -p "$root/.build" && cp -r "$peer" "$copy" && chmod -R u+w "$copy"
  HEAT_VENV="$venv" "$copy/install.sh" > "$root/.build/heat_peer_install.log" 2>&1 || {
    tail -20 "$root/.build/heat_peer_install.log" >&2; return 1; }
}

case "${1:-}" in
  install)
    if [ ! -x "$peer/install.sh" ]; then
      echo "no Heat peer at $peer: the differential tests will be skipped (set HOTPLAY_HEAT_PEER)"
      exit 0
    fi
    if [[ -n ${HEAT_VENV:-} ]]; then
      # A venv named by the caller: made here once, kept where it is.
      [[ -x $HEAT_VENV/bin/heat-manage ]] && command -v mariadbd > /dev/null && exit 0
      install_peer "$HEAT_VENV"
      exit
    fi
    # Else a venv kept between clones (scripts/venv_cache.sh), named after the peer's
    # install script and pinned requirements; .build/heatvenv links to it.
    inputs="$(cat "$peer/install.sh" "$peer/requirements.txt" 2> /dev/null || true)
$(${HEAT_PYTHON:-python3} --version 2>&1)"
    cached=$(cached_venv_path heatvenv "$inputs")
    if ! command -v mariadbd > /dev/null; then
      rm -f "$cached/.complete"  # install.sh installs MariaDB too
    fi
    with_cached_venv "$root/.build/heatvenv" "$cached" install_peer "$cached"
    ;;
  *) echo "usage: $0 install" >&2; exit 2 ;;
esac
