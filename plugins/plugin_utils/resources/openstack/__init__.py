# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenStack's resource types, native: classes that call the cloud's APIs in the
controller's process through openstacksdk, holding the cloud's ids as physical
ids.  One module per service (``neutron``; ``nova``, ``cinder``, ``glance`` to
come), and what they share: the run's session with its cloud (``session``: one
authenticated connection per cloud per run, a bound on calls in flight), shared
status polls (``poller``), Heat's custom constraints and lookups by name or id
(``constraints``), schemas built on Heat 27's facade data (``base``).

Part of the resources stage: may import core, language, store and the rest of
``resources``; openstacksdk only inside ``session``, when a run first uses its cloud.
"""

# One import per service module: importing registers its types.
from . import neutron  # noqa: F401
from . import nova  # noqa: F401
from . import cinder, glance  # noqa: F401
