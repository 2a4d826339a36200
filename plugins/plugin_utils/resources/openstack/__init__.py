# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenStack's resource types, native: classes that call the cloud's APIs in the
controller's process through openstacksdk, holding the cloud's ids as physical
ids.  One module per service (``neutron``, ``nova``, ``cinder``, ``glance``,
``swift``, ``keystone``; ``ec2``: Heat's AWS server on Nova),
each imported when a template first names one of its types; and what they
share: the run's session with its cloud (``session``: one authenticated
connection per cloud per run, a bound on calls in flight), shared status polls
(``poller``), Heat's custom constraints and lookups by name or id
(``constraints``; Keystone's in ``identity``, with what the Keystone types
share), schemas built on Heat 27's facade data (``base``).

Part of the resources stage: may import core, language, store and the rest of
``resources``; openstacksdk only inside ``session``, when a run first uses its cloud.
"""

from ..base import register_deferred

# The types of each service module, imported when a template first names one of
# them: a stack without OpenStack types never compiles them.  A unit test checks
# this table against what the modules register.
TYPES_BY_MODULE: dict[str, tuple[str, ...]] = {
    "neutron": ("OS::Neutron::Net", "OS::Neutron::Subnet", "OS::Neutron::Port",
                "OS::Neutron::Router", "OS::Neutron::RouterInterface",
                "OS::Neutron::SecurityGroup", "OS::Neutron::SecurityGroupRule",
                "OS::Neutron::FloatingIP", "OS::Neutron::FloatingIPAssociation"),
    "nova": ("OS::Nova::Server", "OS::Nova::KeyPair", "OS::Nova::ServerGroup",
             "OS::Nova::Flavor"),
    "cinder": ("OS::Cinder::Volume", "OS::Cinder::VolumeAttachment"),
    "ec2": ("AWS::EC2::Instance", "AWS::EC2::SecurityGroup", "AWS::EC2::Volume",
            "AWS::EC2::VolumeAttachment", "AWS::EC2::EIP", "AWS::EC2::EIPAssociation"),
    "glance": ("OS::Glance::WebImage",),
    "swift": ("OS::Swift::Container", "AWS::S3::Bucket", "OS::Heat::SwiftSignalHandle",
              "OS::Heat::SwiftSignal"),
    "keystone": ("OS::Keystone::Project", "OS::Keystone::User", "OS::Keystone::Group",
                 "OS::Keystone::Role", "OS::Keystone::Domain", "OS::Keystone::Region",
                 "OS::Keystone::Service", "OS::Keystone::Endpoint",
                 "OS::Keystone::UserRoleAssignment", "OS::Keystone::GroupRoleAssignment"),
}

register_deferred(__name__, TYPES_BY_MODULE)
