#!/usr/bin/env bash
# Build the collection's documentation site as Ansible collections are documented:
# antsibull-docs writes the reStructuredText of every module, the inventory plugin, the
# roles (from their meta/argument_specs.yml) and the extra docs (docs/docsite), and
# Sphinx makes HTML of it in .build/docs/html, with warnings as errors.  `make docs`
# runs this.
#
# The tools (docs/requirements.txt) live in a venv of their own, .build/docs-venv,
# made again only when docs/requirements.txt changes.  The guides are Markdown
# (docs/*.md); each has a stand-in page in docs/docsite/rst that names it, and the
# Markdown is rendered in its place here (MyST), so links between guides work.
# Offline: references into the Ansible docsite resolve through a local inventory
# (scripts/docs_inventory.py).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$root/.build/docs
venv=$root/.build/docs-venv

# --- the tools -------------------------------------------------------------------
stamp=$(sha256sum docs/requirements.txt | cut -c1-16)
if [[ ! -f $venv/.installed-$stamp ]]; then
  echo "docs: installing docs/requirements.txt into $venv"
  rm -rf "$venv"
  "$(bash scripts/find_python.sh)" -m venv "$venv"
  log=$root/.build/docs-venv.log
  { "$venv/bin/pip" install --upgrade pip && "$venv/bin/pip" install -r docs/requirements.txt; } \
    > "$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }
  touch "$venv/.installed-$stamp"
fi
export PATH="$venv/bin:$PATH"
unset PYTHONPATH ANSIBLE_COLLECTIONS_PATHS

# --- the collection on a collections path of its own -----------------------------
rm -rf "$build"
mkdir -p "$build/collections/ansible_collections/hotplay" "$build/sphinx"
ln -s "$root" "$build/collections/ansible_collections/hotplay/stacks"
export ANSIBLE_COLLECTIONS_PATH=$build/collections
export ANSIBLE_LOCAL_TEMP=$build/tmp ANSIBLE_HOME=$build/ansible-home

# --- lint: the plugins' documentation markup and the extra docs -------------------
[[ ${DOCS_LINT:-1} == 0 ]] || antsibull-docs lint-collection-docs --plugin-docs --check-extra-docs-refs "$root"

# --- Sphinx project (antsibull-docs sphinx-init) ----------------------------------
cd "$build/sphinx"
antsibull-docs sphinx-init --use-current --squash-hierarchy --fail-on-error \
    --no-add-antsibull-docs-version --dest-dir . \
    --project hotplay.stacks --title hotplay.stacks \
    --copyright "hotplay.stacks maintainers" hotplay.stacks > /dev/null
cat >> conf.py <<'CONF'

# --- added by scripts/docs.sh ---
# Offline: the Ansible docsite's labels the pages use come from a local inventory
# (scripts/docs_inventory.py); nothing is fetched.
intersphinx_mapping = {
    'ansible_devel': ('https://docs.ansible.com/projects/ansible/devel/', '../ansible_devel.inv'),
}
# Code blocks of Mermaid diagrams (docs/architecture.md) are shown as text.
from pygments.lexers.special import TextLexer
from sphinx.highlighting import lexers
lexers['mermaid'] = TextLexer()
# The guides are Markdown (docs/*.md), rendered by MyST in their stand-ins' place.
extensions.append('myst_parser')
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
myst_heading_anchors = 4
CONF

# --- reStructuredText of the collection -------------------------------------------
mkdir -p rst
chmod og-w rst
antsibull-docs --config-file antsibull-docs.cfg collection --cleanup everything \
    --fail-on-error --use-current --squash-hierarchy --no-add-antsibull-docs-version \
    --dest-dir rst hotplay.stacks > /dev/null

# Each stand-in names its guide in its first line: ".. Stand-in for docs/NAME.md, ..."
for page in rst/docsite/*.rst; do
  guide=$(sed -n '1s/^\.\. Stand-in for \(docs\/[^,]*\.md\),.*/\1/p' "$page")
  [[ -n $guide ]] || continue
  cp "$root/$guide" "${page%.rst}.md"
  rm "$page"
done

python "$root/scripts/docs_inventory.py" rst ansible_devel.inv

# --- HTML --------------------------------------------------------------------------
sphinx-build -W --keep-going -q -b html -c . rst "$build/html"
echo "docs: $build/html/index.html"
