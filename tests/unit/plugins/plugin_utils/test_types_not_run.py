# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every one of Heat 27's types is either run here (a builtin type) or refused with a
reason that names its service (resources/services.py), in Heat's words when the
cloud's catalog lacks the service.  The list itself is checked against the real Heat
engine's registry in tests/heat/test_heat_type_list.py; the same refusal on the test
cloud, with the catalog asked: tests/cloud/test_types_not_run.py."""

from __future__ import annotations

from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import resource_class
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.heat_types import HEAT27_TYPES, service_of
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.services import Unrun, unrun_message


def test_every_heat_type_is_run_here_or_refused_naming_its_service() -> None:
    for (client, service_type), names in HEAT27_TYPES.items():
        for name in names:
            if resource_class(name) is not None:
                continue
            told = unrun_message([Unrun("resources.r", name)], None)
            assert f"resources.r ({name}): a type of {client} ({service_type}), but hotplay.stacks does " \
                   f"not implement {name} yet" in told, told


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
    assert "provider template over a module" in told
    assert service_of("OS::Sahara::Cluster") is None  # gone from Heat 27
