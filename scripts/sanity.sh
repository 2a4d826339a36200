#!/usr/bin/env bash
# Static checks of the collection, on every ansible-core version it declares:
# `ansible-test sanity` under each version of the matrix (SANITY_VERSIONS, each in a
# throwaway venv of its own cached in .build/sanity), the unit tests under the
# oldest, then `ansible-lint` (production profile, configured in .ansible-lint) and
# `mypy` (types, configured in mypy.ini: the packages it lists) once, from .venv.
# `make sanity` runs this.
#
#   scripts/sanity.sh                 all of it
#   scripts/sanity.sh ansible-test    only ansible-test sanity, every version
#   scripts/sanity.sh unit            only the unit tests under the oldest version
#   scripts/sanity.sh ansible-lint    only ansible-lint
#   scripts/sanity.sh mypy            only mypy
#   SANITY_VERSIONS="2.21" SANITY_ARGS="--test validate-modules" scripts/sanity.sh ansible-test
#   SANITY_FULL=1 scripts/sanity.sh ansible-test   pylint under every version too
#
# pylint takes most of a run's time (13 of 30 minutes for 2.20 on a loaded 2-core machine) and
# checks the same code with nearly the same rules on every version, so it runs under
# the newest version only unless SANITY_FULL=1; every other test (validate-modules,
# ansible-doc, import, runtime-metadata, yamllint, ...) runs under every version.
#
# The matrix: the oldest version must be the one meta/runtime.yml's requires_ansible
# names, and each version needs its tests/sanity/ignore-<version>.txt (ansible-test
# reads only the file of its own version).  A version's venv holds that ansible-core
# (the newest patch release when the venv was made); the oldest's also holds
# requirements-dev.txt, for the unit tests.  A venv is made again when what it was
# made from changes; `make clean` removes them.
#
# Runs offline apart from PyPI: ansible-test wants to download a pip bootstrap
# script from a site these machines cannot reach, so our stand-in
# (scripts/ansible_test_get_pip.py) is put into ansible-test's cache first.  The first
# run of a version builds ansible-test's per-test virtual environments (in
# ~/.ansible/test/venv; about 2-2.5 min each); later runs reuse them.
#
# ansible-test must run from a directory named ansible_collections/<ns>/<name>,
# so the working tree (tracked and untracked files, not what .gitignore ignores)
# is copied to a temporary directory of that shape.  Nothing is written to the
# repository but .build; the temporary copy is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
what=${1:-all}
case "$what" in
  all | ansible-test | unit | ansible-lint | mypy) ;;
  *) echo "usage: $0 [all|ansible-test|unit|ansible-lint|mypy]" >&2; exit 2 ;;
esac

matrix=(2.19 2.20 2.21)
read -ra versions <<< "${SANITY_VERSIONS:-${matrix[*]}}"
python_version=${SANITY_PYTHON:-3.12}
export PATH="$root/.venv/bin:$PATH"

for tool in ansible-lint mypy; do
  if [[ $what == all || $what == "$tool" ]] && ! command -v "$tool" > /dev/null; then
    echo "$tool not found in $root/.venv/bin: run 'make venv' (requirements-dev.txt has it)" >&2
    exit 1
  fi
done

# --- the matrix agrees with meta/runtime.yml and has its ignore files ----------
declared=$(sed -n 's/^requires_ansible: *"*>= *\([0-9]*\.[0-9]*\).*/\1/p' meta/runtime.yml)
oldest=$(printf '%s\n' "${matrix[@]}" | sort -V | head -n 1)
newest=$(printf '%s\n' "${matrix[@]}" | sort -V | tail -n 1)
if [[ $oldest != "$declared" ]]; then
  echo "sanity: the matrix starts at $oldest, meta/runtime.yml requires ansible-core >= $declared" >&2
  exit 1
fi
for version in "${versions[@]}"; do
  if [[ ! -f tests/sanity/ignore-$version.txt ]]; then
    echo "sanity: tests/sanity/ignore-$version.txt is missing" >&2
    exit 1
  fi
done

# --- a venv per ansible-core version, cached in .build/sanity --------------------
core_venv() {
  local version=$1 venv=$root/.build/sanity/ansible-core-$1 stamp inputs log
  inputs="ansible-core==$version.* $python_version"
  [[ $version == "$oldest" ]] && inputs+=" $(sha256sum requirements.txt requirements-dev.txt)"
  stamp=$(sha256sum <<< "$inputs" | cut -c1-16)
  if [[ ! -f $venv/.installed-$stamp ]]; then
    echo "== venv: ansible-core $version" >&2
    rm -rf "$venv"
    mkdir -p "$root/.build/sanity"
    log=$root/.build/sanity/ansible-core-$version.log
    local packages=("ansible-core==$version.*")
    [[ $version == "$oldest" ]] && packages+=(-r requirements-dev.txt -c /dev/stdin)
    { "$(bash scripts/find_python.sh "python$python_version")" -m venv "$venv" \
        && "$venv/bin/pip" install --upgrade pip \
        && echo "ansible-core==$version.*" | "$venv/bin/pip" install "${packages[@]}"; } \
      > "$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }
    touch "$venv/.installed-$stamp"
  fi
  echo "$venv"
}

# --- the collection, copied under ansible_collections/hotplay/stacks -----------
work=$(mktemp -d "${TMPDIR:-/tmp}/hotplay-sanity.XXXXXX")
trap 'rm -rf "$work"' EXIT
collection=$work/ansible_collections/hotplay/stacks
mkdir -p "$collection"
tar -C "$root" -cf - \
    --exclude=./.git --exclude=./.venv --exclude=./.build --exclude=./tests/output \
    --exclude=./.ansible --exclude=__pycache__ --exclude=.pytest_cache \
    --exclude=.hypothesis --exclude='*.pyc' . \
  | tar -C "$collection" -xf -
# ansible-test and ansible-lint take their file lists from git: a fresh repository
# whose files are all untracked lists the working tree minus what .gitignore ignores.
git -C "$collection" init --quiet

status=0

# --- ansible-test sanity, one version ------------------------------------------------
run_ansible_test() {
  local venv=$1 pip_version cache skip=()
  [[ $2 == newest || ${SANITY_FULL:-0} == 1 ]] || skip=(--skip-test pylint)
  # The pip version ansible-test bootstraps into its venvs names the cache file.
  pip_version=$("$venv/bin/python" - <<'PY'
import importlib.util, pathlib, re
package = pathlib.Path(importlib.util.find_spec('ansible_test').origin).parent
source = (package / '_internal' / 'python_requirements.py').read_text()
print(re.search(r"pip='([0-9.]+)'", source).group(1))
PY
)
  cache=$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py
  mkdir -p "$(dirname "$cache")"
  cp "$root/scripts/ansible_test_get_pip.py" "$cache"
  rm -rf "$collection/tests/output"
  # shellcheck disable=SC2086  # SANITY_ARGS is a list of words on purpose
  (cd "$collection" && PATH="$venv/bin:$PATH" ansible-test sanity --python "$python_version" \
      --venv --color "$([[ -t 1 ]] && echo yes || echo no)" "${skip[@]}" ${SANITY_ARGS:-})
}

# --- the unit tests, under the oldest version -------------------------------------
run_unit() {
  local venv=$1
  # As scripts/test.sh runs them (dev mode, leak check), from the source tree.
  mkdir -p "$root/.build/collections/ansible_collections/hotplay"
  ln -sfn "$root" "$root/.build/collections/ansible_collections/hotplay/stacks"
  (cd "$root" && PATH="$venv/bin:$PATH" HOTPLAY_REPO="$root" \
      PYTHONPATH="$root/.build/collections" PYTHONDEVMODE=1 \
      "$venv/bin/python" -X dev -m pytest -q -rs -p leak_check -p no:cacheprovider \
      -n "${PYTEST_WORKERS:-2}" tests/unit)
}

# --- ansible-lint --------------------------------------------------------------
run_ansible_lint() {
  # The copy's own ansible_collections tree puts hotplay.stacks on the collections
  # path, so playbooks that use its modules resolve them.
  (cd "$collection" && ANSIBLE_COLLECTIONS_PATH="$work" ansible-lint --offline --nocolor)
}

# --- mypy ------------------------------------------------------------------------
run_mypy() {
  # From above ansible_collections/, so the modules have their collection names.
  (cd "$work" && mypy --config-file "$collection/mypy.ini" --cache-dir "$work/.mypy_cache")
}

took() { echo "-- $((SECONDS - started)) s" >&2; }

if [[ $what == all || $what == mypy ]]; then
  echo "== mypy"
  started=$SECONDS
  run_mypy || status=1
  took
fi
if [[ $what == all || $what == ansible-test ]]; then
  for version in "${versions[@]}"; do
    venv=$(core_venv "$version")
    echo "== ansible-test sanity: ansible-core $("$venv/bin/python" -c 'import ansible; print(ansible.__version__)'), python $python_version"
    started=$SECONDS
    run_ansible_test "$venv" "$([[ $version == "$newest" ]] && echo newest || echo older)" || status=1
    took
  done
fi
# SANITY_UNIT=0 leaves the unit run out of `all` (.ci/run: CI's time).
if [[ $what == unit || ($what == all && ${SANITY_UNIT:-1} != 0) ]]; then
  venv=$(core_venv "$oldest")
  echo "== unit tests: ansible-core $("$venv/bin/python" -c 'import ansible; print(ansible.__version__)')"
  started=$SECONDS
  run_unit "$venv" || status=1
  took
fi
if [[ $what == all || $what == ansible-lint ]]; then
  echo "== ansible-lint"
  started=$SECONDS
  run_ansible_lint || status=1
  took
fi
exit $status
