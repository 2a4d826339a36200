# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 5, the run: the executor (StackRun: converge or delete one stack, the
runtime the resource types see, hooks, rollback swap-back), the graph walk that
runs resources in parallel (walk), hooks, drift, previews and the refusals an
apply checks first (guards).

May import: core, language, store, resources, model.
"""
