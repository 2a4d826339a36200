# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inventory from the outputs of stacks recorded in the store."""

from __future__ import annotations

DOCUMENTATION = r"""
---
name: stacks
short_description: Hosts from the outputs of hotplay.stacks stacks
version_added: 0.1.0
description:
  - Reads stacks from the store that M(hotplay.stacks.stack) writes and turns one
    output of each into inventory hosts. This is how an infrastructure stack applied
    in one play (or one AWX job) feeds the later plays that roll software across its
    hosts.
  - The output named by O(hosts_output) is a list. Each item is either a host name,
    or a mapping with C(name) and optionally C(groups) (list of group names) and
    C(vars) (host variables, for example C(ansible_host)).
  - Every host also joins a group named after its stack (C(stack_<name>), with
    characters not valid in group names replaced by C(_)), and gets the variable
    C(hotplay_stack) with the stack's name.
  - Stacks whose status is not C(*_COMPLETE) are skipped with a warning, so a
    failed infrastructure run never half-populates the inventory.
notes:
  - A wrong O(store_key), a store that cannot be opened or read fail this inventory
    source with an error naming the file and the cause. ansible-core reports a failed
    inventory source only as a warning, though, and then runs the play on the hosts
    the other sources gave, possibly none, with return code 0. Make it fatal with
    C(ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED=true) (C([inventory] any_unparsed_is_failed)
    in C(ansible.cfg)), which fails the run when any source fails, also beside a static
    inventory; C(ANSIBLE_INVENTORY_UNPARSED_FAILED=true) (C([inventory] unparsed_is_failed))
    fails it only when no source at all could be read, and is what AWX inventory updates
    set. The shipped C(hotplay.stacks.deploy) playbook also refuses to roll software
    stacks onto no host.
options:
  plugin:
    description: The name of this plugin; it makes the file an inventory source of it.
    type: str
    required: true
    choices: [hotplay.stacks.stacks]
  store:
    description:
      - URL of the store, as for M(hotplay.stacks.stack) (C(sqlite:////abs/path.db)).
      - Without it, the C(HOTPLAY_STORE) environment variable, then the per-user
        default store.
    type: str
    env:
      - name: HOTPLAY_STORE
  store_key:
    description:
      - The passphrase that opens the secrets the stacks keep encrypted in the store
        (see M(hotplay.stacks.stack)). Without it, an encrypted value in an output
        reads as V(******).
      - A wrong key fails the inventory source with C(the store key does not open
        stack NAME's secrets).
    type: str
    env:
      - name: HOTPLAY_STORE_KEY
  stacks:
    description: Names of the stacks to read; all stacks in the store when empty.
    type: list
    elements: str
    default: []
  hosts_output:
    description: Name of the stack output that lists the hosts.
    type: str
    default: hosts
extends_documentation_fragment:
  - constructed
"""

EXAMPLES = r"""
# inventory/stacks.hotplay.yml -- the hosts the 'infra' stack created; run with
#   ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED=true ansible-playbook -i inventory/ site.yml
# (or [inventory] any_unparsed_is_failed = true in ansible.cfg) so that a wrong store
# key or an unreachable store stops the run instead of running it on no host.
plugin: hotplay.stacks.stacks
store: sqlite:////var/lib/hotplay/stacks.db
stacks: [infra]
hosts_output: servers
keyed_groups:
  - key: role | default('none')
    prefix: role
"""

import re
from typing import Any

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Constructable
from ansible.utils.display import Display

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import StoreKey
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import sealed

_display = Display()
# The ansible-core setting that makes a failed inventory source fail the run.
FATAL_SETTING = "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED"


class InventoryModule(BaseInventoryPlugin, Constructable):
    """Hosts from stack outputs."""

    NAME = "hotplay.stacks.stacks"

    def verify_file(self, path: str) -> bool:
        return super().verify_file(path) and path.endswith(
            ("stacks.yml", "stacks.yaml", "hotplay.yml", "hotplay.yaml"))

    def parse(self, inventory: Any, loader: Any, path: str, cache: bool = True) -> None:
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        try:
            store = sealed(open_store(self.get_option("store")),
                           StoreKey.from_sources(self.get_option("store_key")))
        except HotplayError as error:
            raise _failed(path, error) from error
        try:
            for stack in self._stacks(store):
                store.unlock(stack.name, stack, run=False)  # a wrong key is told here
                self._add_stack(stack)
        except HotplayError as error:
            raise _failed(path, error) from error
        finally:
            store.close()

    def _stacks(self, store: Any) -> list[Any]:
        wanted = self.get_option("stacks")
        found = [s for s in store.list_stacks() if not wanted or s.name in wanted]
        missing = sorted(set(wanted) - {s.name for s in found})
        for name in missing:
            _display.warning(f"hotplay.stacks.stacks: no stack {name} in the store")
        return found

    def _add_stack(self, stack: Any) -> None:
        if stack.status != "COMPLETE":
            _display.warning(f"hotplay.stacks.stacks: stack {stack.name} is {stack.stack_status}; "
                             "its hosts are left out")
            return
        output = self.get_option("hosts_output")
        entries = stack.outputs.get(output)
        if not isinstance(entries, list):
            _display.warning(f"hotplay.stacks.stacks: stack {stack.name} has no list output {output}")
            return
        group = self.inventory.add_group(_group_name(f"stack_{stack.name}"))
        for entry in entries:
            self._add_host(entry, group, stack.name)

    def _add_host(self, entry: Any, stack_group: str, stack_name: str) -> None:
        spec = {"name": entry} if isinstance(entry, str) else dict(entry or {})
        name = spec.get("name")
        if not name:
            _display.warning(f"hotplay.stacks.stacks: an entry of {stack_name} has no name: {entry!r}")
            return
        self.inventory.add_host(str(name), group=stack_group)
        for group in spec.get("groups") or []:
            self.inventory.add_group(_group_name(str(group)))
            self.inventory.add_child(_group_name(str(group)), str(name))
        variables = {"hotplay_stack": stack_name, **(spec.get("vars") or {})}
        for key, value in variables.items():
            self.inventory.set_variable(str(name), key, value)
        strict = self.get_option("strict")
        self._set_composite_vars(self.get_option("compose"), variables, str(name), strict=strict)
        self._add_host_to_composed_groups(self.get_option("groups"), variables, str(name), strict=strict)
        self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, str(name), strict=strict)


def _failed(path: str, error: HotplayError) -> AnsibleParserError:
    """This source fails, with how to make its failure stop the run (ansible-core
    only warns of a failed source, and runs the play on the others' hosts)."""
    return AnsibleParserError(
        f"{path}: {error}; this source gives no hosts, and the play runs without them unless "
        f"{FATAL_SETTING}=true (or [inventory] any_unparsed_is_failed) makes this failure stop it")


def _group_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)
