#!/usr/bin/env bash
# Static checks of the collection: `ansible-test sanity`, `ansible-lint`
# (production profile, configured in .ansible-lint) and `mypy` (types, configured
# in mypy.ini: the packages it lists).  `make sanity` runs this.
#
#   scripts/sanity.sh                 all three
#   scripts/sanity.sh ansible-test    only ansible-test sanity
#   scripts/sanity.sh ansible-lint    only ansible-lint
#   scripts/sanity.sh mypy            only mypy
#   SANITY_ARGS="--test validate-modules" scripts/sanity.sh ansible-test
#
# Runs offline apart from PyPI: ansible-test wants to download a pip bootstrap
# script from a site these machines cannot reach, so our stand-in
# (scripts/ansible_test_get_pip.py) is put into ansible-test's cache first.  The first run builds ansible-test's
# per-test virtual environments (about 2-2.5 min); later runs reuse them.
#
# ansible-test must run from a directory named ansible_collections/<ns>/<name>,
# so the working tree (tracked and untracked files, not what .gitignore ignores)
# is copied to a temporary directory of that shape.  Nothing is written to the
# repository; the temporary copy is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
what=${1:-all}
case "$what" in
  all | ansible-test | ansible-lint | mypy) ;;
  *) echo "usage: $0 [all|ansible-test|ansible-lint|mypy]" >&2; exit 2 ;;
esac

export PATH="$root/.venv/bin:$PATH"
python_version=${SANITY_PYTHON:-3.12}

for tool in ansible-test ansible-lint mypy; do
  if [[ $what == all || $what == "$tool" ]] && ! command -v "$tool" > /dev/null; then
    echo "$tool not found in $root/.venv/bin: run 'make venv' (requirements-dev.txt has it)" >&2
    exit 1
  fi
done

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

# --- ansible-test sanity -------------------------------------------------------
run_ansible_test() {
  # The pip version ansible-test bootstraps into its venvs names the cache file.
  local pip_version cache
  pip_version=$(python - <<'EOF'
import importlib.util, pathlib, re
package = pathlib.Path(importlib.util.find_spec('ansible_test').origin).parent
source = (package / '_internal' / 'python_requirements.py').read_text()
print(re.search(r"pip='([0-9.]+)'", source).group(1))
EOF
)
  cache=$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py
  mkdir -p "$(dirname "$cache")"
  cp "$root/scripts/ansible_test_get_pip.py" "$cache"
  # shellcheck disable=SC2086  # SANITY_ARGS is a list of words on purpose
  (cd "$collection" && ansible-test sanity --python "$python_version" --venv \
      --color "$([[ -t 1 ]] && echo yes || echo no)" ${SANITY_ARGS:-})
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

if [[ $what == all || $what == mypy ]]; then
  echo "== mypy"
  run_mypy || status=1
fi
if [[ $what == all || $what == ansible-test ]]; then
  echo "== ansible-test sanity (python $python_version)"
  run_ansible_test || status=1
fi
if [[ $what == all || $what == ansible-lint ]]; then
  echo "== ansible-lint"
  run_ansible_lint || status=1
fi
exit $status
