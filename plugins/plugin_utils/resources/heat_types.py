# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resource types Heat 27 registers (its global environment, hidden types left
out: 163), by the service each needs: Heat's name of the service's client and the
service type it looks for in the cloud's catalog (heat/engine/clients/os/*.py).

Read by the refusal of a type this collection does not run (``services.py``) and by
the test that counts how many of them are native here.
"""

from __future__ import annotations

# (client name, catalog service type) -> the types.
HEAT27_TYPES: dict[tuple[str, str], tuple[str, ...]] = {
    ("aodh", "alarming"): (
        "OS::Aodh::Alarm", "OS::Aodh::CompositeAlarm", "OS::Aodh::EventAlarm",
        "OS::Aodh::GnocchiAggregationByMetricsAlarm", "OS::Aodh::GnocchiAggregationByResourcesAlarm",
        "OS::Aodh::GnocchiResourcesAlarm", "OS::Aodh::LBMemberHealthAlarm", "OS::Aodh::PrometheusAlarm",
    ),
    ("barbican", "key-manager"): (
        "OS::Barbican::CertificateContainer", "OS::Barbican::GenericContainer", "OS::Barbican::Order",
        "OS::Barbican::RSAContainer", "OS::Barbican::Secret",
    ),
    ("blazar", "reservation"): (
        "OS::Blazar::Host", "OS::Blazar::Lease",
    ),
    ("cinder", "volumev3"): (
        "AWS::EC2::Volume", "AWS::EC2::VolumeAttachment", "OS::Cinder::EncryptedVolumeType",
        "OS::Cinder::QoSAssociation", "OS::Cinder::QoSSpecs", "OS::Cinder::Quota", "OS::Cinder::Volume",
        "OS::Cinder::VolumeAttachment", "OS::Cinder::VolumeType",
    ),
    ("designate", "dns"): (
        "OS::Designate::RecordSet", "OS::Designate::Zone",
    ),
    ("glance", "image"): (
        "OS::Glance::WebImage",
    ),
    ("heat", "orchestration"): (
        "AWS::AutoScaling::AutoScalingGroup", "AWS::AutoScaling::LaunchConfiguration",
        "AWS::AutoScaling::ScalingPolicy", "AWS::CloudFormation::Stack", "AWS::CloudFormation::WaitCondition",
        "AWS::CloudFormation::WaitConditionHandle", "AWS::ElasticLoadBalancing::LoadBalancer",
        "OS::Heat::AccessPolicy", "OS::Heat::AutoScalingGroup", "OS::Heat::CloudConfig", "OS::Heat::Delay",
        "OS::Heat::DeployedServer", "OS::Heat::InstanceGroup", "OS::Heat::MultipartMime", "OS::Heat::None",
        "OS::Heat::RandomString", "OS::Heat::ResourceChain", "OS::Heat::ResourceGroup",
        "OS::Heat::ScalingPolicy", "OS::Heat::SoftwareComponent", "OS::Heat::SoftwareConfig",
        "OS::Heat::SoftwareDeployment", "OS::Heat::SoftwareDeploymentGroup", "OS::Heat::Stack",
        "OS::Heat::StructuredConfig", "OS::Heat::StructuredDeployment", "OS::Heat::StructuredDeploymentGroup",
        "OS::Heat::SwiftSignal", "OS::Heat::SwiftSignalHandle", "OS::Heat::TestResource",
        "OS::Heat::UpdateWaitConditionHandle", "OS::Heat::Value", "OS::Heat::WaitCondition",
        "OS::Heat::WaitConditionHandle",
    ),
    ("ironic", "baremetal"): (
        "OS::Ironic::Port",
    ),
    ("keystone", "identity"): (
        "AWS::IAM::AccessKey", "AWS::IAM::User", "OS::Keystone::Domain", "OS::Keystone::Endpoint",
        "OS::Keystone::Group", "OS::Keystone::GroupRoleAssignment", "OS::Keystone::Project",
        "OS::Keystone::Region", "OS::Keystone::Role", "OS::Keystone::Service", "OS::Keystone::User",
        "OS::Keystone::UserRoleAssignment",
    ),
    ("magnum", "container-infra"): (
        "OS::Magnum::Cluster", "OS::Magnum::ClusterTemplate",
    ),
    ("manila", "sharev2"): (
        "OS::Manila::SecurityService", "OS::Manila::Share", "OS::Manila::ShareNetwork",
        "OS::Manila::ShareType",
    ),
    ("mistral", "workflowv2"): (
        "OS::Mistral::CronTrigger", "OS::Mistral::ExternalResource", "OS::Mistral::Workflow",
    ),
    ("neutron", "network"): (
        "AWS::EC2::EIP", "AWS::EC2::EIPAssociation", "AWS::EC2::InternetGateway",
        "AWS::EC2::NetworkInterface", "AWS::EC2::RouteTable", "AWS::EC2::SecurityGroup", "AWS::EC2::Subnet",
        "AWS::EC2::SubnetRouteTableAssociation", "AWS::EC2::VPC", "AWS::EC2::VPCGatewayAttachment",
        "OS::Neutron::AddressScope", "OS::Neutron::ExtraRoute", "OS::Neutron::ExtraRouteSet",
        "OS::Neutron::Firewall", "OS::Neutron::FirewallPolicy", "OS::Neutron::FirewallRule",
        "OS::Neutron::FloatingIP", "OS::Neutron::FloatingIPAssociation", "OS::Neutron::FloatingIPPortForward",
        "OS::Neutron::FlowClassifier", "OS::Neutron::IKEPolicy", "OS::Neutron::IPsecPolicy",
        "OS::Neutron::IPsecSiteConnection", "OS::Neutron::L2Gateway", "OS::Neutron::L2GatewayConnection",
        "OS::Neutron::MeteringLabel", "OS::Neutron::MeteringRule", "OS::Neutron::Net",
        "OS::Neutron::NetworkGateway", "OS::Neutron::Port", "OS::Neutron::PortChain", "OS::Neutron::PortPair",
        "OS::Neutron::PortPairGroup", "OS::Neutron::ProviderNet", "OS::Neutron::QoSBandwidthLimitRule",
        "OS::Neutron::QoSDscpMarkingRule", "OS::Neutron::QoSMinimumBandwidthRule",
        "OS::Neutron::QoSMinimumPacketRateRule", "OS::Neutron::QoSPolicy", "OS::Neutron::Quota",
        "OS::Neutron::RBACPolicy", "OS::Neutron::Router", "OS::Neutron::RouterInterface",
        "OS::Neutron::SecurityGroup", "OS::Neutron::SecurityGroupRule", "OS::Neutron::Segment",
        "OS::Neutron::Subnet", "OS::Neutron::SubnetPool", "OS::Neutron::TaaS::TapFlow",
        "OS::Neutron::TaaS::TapService", "OS::Neutron::Trunk", "OS::Neutron::VPNService",
    ),
    ("nova", "compute"): (
        "AWS::EC2::Instance", "OS::Nova::Flavor", "OS::Nova::HostAggregate", "OS::Nova::KeyPair",
        "OS::Nova::Quota", "OS::Nova::Server", "OS::Nova::ServerGroup",
    ),
    ("octavia", "load-balancer"): (
        "OS::Octavia::AvailabilityZone", "OS::Octavia::AvailabilityZoneProfile", "OS::Octavia::Flavor",
        "OS::Octavia::FlavorProfile", "OS::Octavia::HealthMonitor", "OS::Octavia::L7Policy",
        "OS::Octavia::L7Rule", "OS::Octavia::Listener", "OS::Octavia::LoadBalancer", "OS::Octavia::Pool",
        "OS::Octavia::PoolMember", "OS::Octavia::Quota",
    ),
    ("swift", "object-store"): (
        "AWS::S3::Bucket", "OS::Swift::Container",
    ),
    ("trove", "database"): (
        "OS::Trove::Cluster", "OS::Trove::Instance",
    ),
    ("zaqar", "messaging"): (
        "OS::Zaqar::MistralTrigger", "OS::Zaqar::Queue", "OS::Zaqar::SignedQueueURL",
        "OS::Zaqar::Subscription",
    ),
    ("zun", "container"): (
        "OS::Zun::Container",
    ),
}


def service_of(type_name: str) -> tuple[str, str] | None:
    """Heat's client name and catalog service type of one of Heat 27's types (None:
    not a type Heat 27 has)."""
    for service, names in HEAT27_TYPES.items():
        if type_name in names:
            return service
    return None
