# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 4, the stack model: a template and environment become a validated
definition (definition), its dependency graph (graph), the inputs an apply
records (inputs), Heat's update rules (update_rules) and the plan of an update
(plan).  Decides; never acts: a plan is made through a PlanContext the run
stage gives it (run.preview).

May import: core, language, store, resources.
"""
