#!/usr/bin/env bash
# Sourced by the scripts that build the tests' large venvs (the test cloud's services,
# the Heat engine): such a venv is kept between clones on this
# machine, under a name made of a digest of what it is built from, and the clone's
# .build/NAME is a link to it.  A change to what it is built from names another venv,
# built anew; a venv whose build did not finish has no .complete file and is built
# again.  HOTPLAY_VENV_CACHE names the folder (default ~/.cache/hotplay/venvs);
# HOTPLAY_VENV_CACHE=off keeps each venv in the clone's .build.

# cached_venv_path NAME INPUTS: where the venv NAME built from INPUTS (text: the
# requirements' contents, the Python's version) lives.
cached_venv_path() {
  local name=$1 inputs=$2 root cache digest
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  cache=${HOTPLAY_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hotplay/venvs}
  if [[ $cache == off ]]; then
    echo "$root/.build/$name"
    return
  fi
  digest=$(printf '%s' "$inputs" | sha256sum | cut -c1-16)
  echo "$cache/$name-$digest"
}

# with_cached_venv LINK VENV BUILD...: unless VENV is complete, runs BUILD (which makes
# VENV; it is removed first), under a lock so that two runs do not build it at once;
# then LINK (the clone's .build path) points at VENV.
with_cached_venv() {
  local link=$1 venv=$2
  shift 2
  mkdir -p "$(dirname "$venv")" "$(dirname "$link")"
  (
    flock 9
    if [[ ! -f $venv/.complete ]]; then
      rm -rf "$venv"
      "$@" || exit 1
      touch "$venv/.complete"
    fi
  ) 9> "$venv.lock" || return 1
  if [[ $link != "$venv" ]]; then
    rm -rf "$link"
    ln -s "$venv" "$link"
  fi
}
