# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The engine: Heat's orchestration model, run inside ansible-playbook.

Stages, lowest first; a stage imports only itself and the stages before it
(tests/unit/plugins/test_import_layers.py holds it, docs/architecture.md draws it):

core (errors, limits, bounded, secrets) → language → store → resources → model →
run → adapters → operations.
"""
