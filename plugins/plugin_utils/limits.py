# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one apply may cost at most: the bounds on hostile or broken input.

Heat's defaults (heat/common/config.py) where Heat has the setting; ours are
larger where a stack of 10,000 resources must fit, and every one is far below
what would exhaust the controller.  docs/security.md lists them.
"""

from __future__ import annotations

# Heat's max_template_size is 524288 characters; 20 times that lets stacks of
# 10,000 resources fit.  Also the largest file get_file or a provider reads.
MAX_TEMPLATE_SIZE = 10 * 1024 * 1024
# Deeper than any real template, far below Python's recursion limit.
MAX_DEPTH = 100
# Values of a document, counted while YAML is read and again once its aliases
# are expanded (a "billion laughs" document is small on disk, huge once walked).
MAX_NODES = 1_000_000
# Heat's max_nested_stack_depth.
MAX_NESTED_DEPTH = 5
# Heat's max_resources_per_stack is 1000.  TripleO-sized stacks and large
# ResourceGroups go far beyond it; 50,000 is the largest stack `make bench`
# measures (it completes in well under 1 GiB).
MAX_RESOURCES_PER_STACK = 50_000
# The largest string or list one intrinsic function may produce (str_replace and
# repeat multiply what they are given).
MAX_VALUE_SIZE = MAX_TEMPLATE_SIZE
# What all the functions of one stack may produce, added up (each validation or
# run counts again): a snippet reused through YAML aliases multiplies.
MAX_PRODUCED_PER_STACK = 20 * MAX_VALUE_SIZE
# yaql: Heat's [yaql] limit_iterators and memory_quota, and ours: a wall-clock
# limit and an address-space budget for the process that evaluates it.
YAQL_LIMIT_ITERATORS = 200
YAQL_MEMORY_QUOTA = 10000
YAQL_SECONDS = 5.0
YAQL_ADDRESS_SPACE = 512 * 1024 * 1024
# Parameter constraints: an allowed_pattern gets this long to match a value (CPU
# seconds, with the regex package in-process).  The regex package unrolls counted
# repeats when it compiles (about 250 bytes a unit); a pattern past this many units,
# and a value past this many characters (backtracking memory grows with it), are
# matched by re in a helper process with the address-space budget instead.
PATTERN_SECONDS = 2.0
PATTERN_REGEX_UNITS = 100_000
PATTERN_IN_PROCESS_CHARS = 64 * 1024
PATTERN_ADDRESS_SPACE = 256 * 1024 * 1024
# Parameter values given from outside (the playbook's parameters, an environment's
# parameters and parameter_defaults, an abandon file's): each at most what Heat's
# whole create request may be (max_json_body_size, 1 MiB), all of them together at
# most a template's size.  Characters of text (a list or a map: of its strings).
MAX_PARAMETER_SIZE = 1024 * 1024
MAX_PARAMETERS_SIZE = MAX_TEMPLATE_SIZE
