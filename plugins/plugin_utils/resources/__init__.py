# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stage 3, resource types: one class per Heat type, registered by name (base),
property schemas (properties), and the runtime port (runtime): all a type may
ask of the run.  Importing a family module registers its types; the OpenStack
family's service modules are imported when a template first names one of their
types (``openstack.TYPES_BY_MODULE``).

May import: core, language, store.  Never the model or the run: they reach a
type through its handler and the type reaches them through its runtime.
"""

# One import per family.
from . import (  # noqa: F401
    autoscaling,
    aws_autoscaling,
    deployment_group,
    group,
    heat_misc,
    local,
    module,
    nested,
    openstack,
    read_only,
    software_config,
    software_deployment,
    wait_condition,
)
