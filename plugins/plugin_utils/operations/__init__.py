# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 7, operations: what the action plugins ask for, front to back — apply,
preview and delete a stack (engine), roll it back (rollback), mark resources
(un)healthy (health), read or break a stack's lock (locks).  Each takes plain data and returns plain data.

May import: every other stage.
"""
