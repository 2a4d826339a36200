# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resource types: importing a family module registers its types."""

# One import per family.
from . import (  # noqa: F401
    deployment_group,
    group,
    heat_misc,
    local,
    module,
    nested,
    software_config,
    software_deployment,
)
