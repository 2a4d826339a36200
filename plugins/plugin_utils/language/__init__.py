# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 1, the HOT language: template loading and schema, the one table of
versions, intrinsic functions and conditions, parameters, environments and the
resource registry.  Pure: nothing here touches a store or a host.

May import: the core modules (errors, limits, bounded).
"""
