# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 6, the Ansible adapters: the action plugins' shared skeleton (action),
reaching inventory hosts (play_hosts), and what a task shows: results, views of
the store, graphs (render).  The only engine code that imports Ansible.

May import: core, language, store, resources, model, run.
"""
