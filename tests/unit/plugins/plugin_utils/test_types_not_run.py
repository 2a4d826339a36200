# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every one of Heat 27's types is either run here (a builtin type) or refused with a
reason that names its service (resources/services.py), in Heat's words when the
cloud's catalog lacks the service.  The list itself is checked against the real Heat
engine's registry in tests/heat/test_heat_type_list.py; the same refusal on the test
cloud, with the catalog asked: tests/cloud/test_types_not_run.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import resource_class
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.heat_types import HEAT27_TYPES, service_of
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.services import (
    TypesNotRun,
    Unrun,
    unrun_message,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store


def test_every_heat_type_is_run_here_or_refused_naming_its_service() -> None:
    for (client, service_type), names in HEAT27_TYPES.items():
        for name in names:
            if resource_class(name) is not None:
                continue
            told = unrun_message([Unrun("resources.r", name)], None)
            assert f"resources.r ({name}): a type of {client} ({service_type}) that hotplay.stacks does " \
                   "not implement yet" in told, told


def test_the_catalog_decides_between_heats_words_and_not_implemented() -> None:
    unrun = [Unrun("resources.db", "OS::Trove::Instance"), Unrun("resources.lb", "OS::Octavia::LoadBalancer"),
             Unrun("resources.x", "OS::Sahara::Cluster")]
    told = unrun_message(unrun, catalog={"load-balancer", "compute"})
    assert told.startswith("resources of types hotplay.stacks does not run: resources.db (OS::Trove::Instance): "
                           "HEAT-E99001 Service trove is not available for resource type OS::Trove::Instance, "
                           "reason: Service endpoint not in service catalog.; resources.lb "
                           "(OS::Octavia::LoadBalancer): the cloud runs octavia (load-balancer), but "
                           "hotplay.stacks does not implement OS::Octavia::LoadBalancer yet; resources.x "
                           "(OS::Sahara::Cluster): The Resource Type (OS::Sahara::Cluster) could not be found.")
    assert "map each such type to a provider template over a module" in told
    assert service_of("OS::Sahara::Cluster") is None  # gone from Heat 27


def test_a_template_with_types_not_run_is_refused_at_once_in_check_mode_too_and_nothing_written(
        tmp_path: Path) -> None:
    template = tmp_path / "t.yaml"
    template.write_text("""\
heat_template_version: 2018-08-31
resources:
  fine: {type: OS::Heat::Value, properties: {value: 1}}
  db: {type: OS::Trove::Instance, properties: {flavor: m1.small, size: 1}}
  queue: {type: OS::Zaqar::Queue}
""")
    url = f"sqlite:///{tmp_path / 's.db'}"
    for check_mode in (True, False):
        store = open_store(url)
        try:
            with pytest.raises(TypesNotRun) as refused:
                apply_stack(store, ApplyRequest(name="w", template=str(template), check_mode=check_mode), "j")
            assert store.find_stack("w") is None
        finally:
            store.close()
        told = str(refused.value)
        assert told.startswith(f"{template}: resources of types hotplay.stacks does not run: resources.db "
                               "(OS::Trove::Instance): a type of trove (database) that hotplay.stacks does not "
                               "implement yet; resources.queue (OS::Zaqar::Queue): a type of zaqar (messaging)")
