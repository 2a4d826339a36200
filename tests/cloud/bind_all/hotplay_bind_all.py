# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An ML2 mechanism driver for the throwaway test cloud: it binds every port.

A real cloud binds a port through an agent (Open vSwitch, OVN) on the compute
host; the test cloud runs none, and Nova refuses to boot a server whose port
failed to bind. This driver binds the first segment offered, as an Open vSwitch
port whose status is ACTIVE, so that Nova's fake virt driver gets a server with
real Neutron ports, addresses and security groups.
"""

from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api


class BindAllMechanismDriver(api.MechanismDriver):
    """Binds every port on any host to the first segment it is offered."""

    def initialize(self) -> None:
        """Nothing to set up: no agent, no back end."""

    def bind_port(self, context) -> None:  # type: ignore[no-untyped-def]
        for segment in context.segments_to_bind:
            context.set_binding(segment[api.ID], portbindings.VIF_TYPE_OVS,
                                {portbindings.CAP_PORT_FILTER: True},
                                status="ACTIVE")
            return
