# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure parts of the OS::Keystone types (resources/openstack/keystone.py and
identity.py) against a fake Keystone: Heat 27's schemas, its validation words and
custom constraints, the requests Heat's keystoneclient sends for a create, an
update and a delete, what replaces, role grants, drift and adoption.  On a real
cloud beside Heat: tests/cloud/test_keystone_beside_heat.py."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

import pytest
from test_openstack_nova import FakeRuntime

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import ResourceFailure, StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState, resource_class
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack import identity, keystone
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.base import UNANSWERED_NAME
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.session import CloudFailure
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.properties import validate_properties

COLLECTIONS = ("projects", "users", "groups", "roles", "domains", "regions", "services", "endpoints")


class FakeKeystone:
    """Keystone's v3 API in memory (and Neutron's security groups, for a project's
    delete); every call is kept in ``sent`` as (method, path, body, params)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, Any, dict[str, Any]]] = []
        self.things: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in COLLECTIONS}
        self.things["domains"]["default"] = {"id": "default", "name": "Default", "enabled": True}
        self.members: set[tuple[str, str]] = set()  # (group, user)
        self.grants: set[tuple[str, str, str, str, str]] = set()  # (actor, id, scope, scope id, role)
        self.security_groups: list[dict[str, Any]] = []
        self.remembered: dict[tuple[str, ...], Any] = {}
        self.numbers = itertools.count(1)
        self.network = True

    def add(self, collection: str, **values: Any) -> str:
        ident = values.setdefault("id", f"{collection[:-1]}{next(self.numbers)}")
        self.things[collection][ident] = dict(values)
        return str(ident)

    def has_service(self, service_type: str) -> bool:
        return self.network

    def remember(self, key: tuple[str, ...], compute: Any) -> Any:
        if key not in self.remembered:
            self.remembered[key] = compute()
        return self.remembered[key]

    def writes(self) -> list[tuple[str, str, Any]]:
        return [(method, path, body) for method, path, body, _params in self.sent if method != "GET"]

    def request(self, service: str, method: str, path: str, body: Any = None, params: Any = None,
                microversion: str | None = None) -> Any:
        self.sent.append((method, path, body, dict(params or {})))
        if service == "network":
            return self._network(method, path)
        parts = [unquote(part) for part in path.strip("/").split("/")]
        if parts[0] == "role_assignments":
            return {"role_assignments": self._assignments(dict(params or {}))}
        if len(parts) == 1:
            return self._collection(method, parts[0], body, dict(params or {}))
        if len(parts) == 2:
            return self._one(method, parts[0], parts[1], body)
        if len(parts) == 3:  # /users/<id>/groups
            return {"groups": [self.things["groups"][g] for g, u in sorted(self.members) if u == parts[1]]}
        if len(parts) == 4:  # /groups/<id>/users/<id>
            return self._membership(method, parts[1], parts[3])
        return self._grant(method, parts)  # /projects/<id>/users/<id>/roles/<id>

    def _collection(self, method: str, collection: str, body: Any, params: dict[str, Any]) -> Any:
        if method == "POST":
            values = dict(body[collection[:-1]])
            taken = [t for t in self.things[collection].values() if values.get("id") == t["id"] or (
                values.get("name") and t.get("name") == values["name"])]
            if taken and collection != "endpoints":
                raise CloudFailure("Conflict occurred attempting to store", 409)
            ident = self.add(collection, **values)
            return {collection[:-1]: dict(self.things[collection][ident])}
        found = [t for t in self.things[collection].values()
                 if all(t.get(key) == value for key, value in params.items())]
        return {collection: found}

    def _one(self, method: str, collection: str, ident: str, body: Any) -> Any:
        thing = self.things[collection].get(ident)
        if thing is None:
            raise CloudFailure(f"Could not find {collection[:-1]}: {ident}.", 404)
        if method == "PATCH":
            thing.update(body[collection[:-1]])
        if method == "DELETE":
            if collection == "domains" and thing.get("enabled"):
                raise CloudFailure("Cannot delete a domain that is enabled, please disable it first.", 403)
            del self.things[collection][ident]
            return None
        return {collection[:-1]: dict(thing)}

    def _membership(self, method: str, group: str, user: str) -> None:
        if method == "PUT":
            self.members.add((group, user))
        elif (group, user) in self.members:
            self.members.discard((group, user))
        else:
            raise CloudFailure("not a member", 404)

    def _grant(self, method: str, parts: list[str]) -> None:
        grant = (parts[2][:-1], parts[3], parts[0][:-1], parts[1], parts[5])
        if method == "PUT":
            self.grants.add(grant)
        else:
            self.grants.discard(grant)

    def _assignments(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        actor, ident = next(iter(params.items()))
        return [{"role": {"id": role}, "scope": {scope: {"id": scope_id}}, actor_kind: {"id": who}}
                for actor_kind, who, scope, scope_id, role in sorted(self.grants)
                if f"{actor_kind}.id" == actor and who == ident]

    def _network(self, method: str, path: str) -> Any:
        if method == "GET":
            return {"security_groups": list(self.security_groups)}
        self.security_groups = [g for g in self.security_groups if not path.endswith(g["id"])]
        return None


def made(cls: type, values: Mapping[str, Any], cloud: FakeKeystone | None = None,
         name: str = "thing") -> tuple[Any, FakeKeystone, dict[str, Any], Any]:
    """A resource of ``cls`` created from ``values``: (its handler, the cloud, its
    validated properties, the outcome)."""
    cloud = cloud or FakeKeystone()
    handler = cls(name, FakeRuntime(cloud))
    properties = validate_properties(cls, values, f"resources.{name}.properties")
    return handler, cloud, properties, handler.handle_create(properties)


def state(cls: type, properties: Mapping[str, Any], outcome: Any, name: str = "thing") -> ResourceState:
    return ResourceState(name, cls.type_name, "CREATE", physical_id=outcome.physical_id,
                         properties=dict(properties), data=dict(outcome.data))


# -- schemas -----------------------------------------------------------------------------------

# Heat 27's properties of each type: (type, default, required, update_allowed).
HEAT_PROPERTIES: dict[str, dict[str, tuple[str, Any, bool, bool]]] = {
    "OS::Keystone::Project": {
        "name": ("string", None, False, True), "domain": ("string", "default", False, True),
        "description": ("string", "", False, True), "enabled": ("boolean", True, False, True),
        "parent": ("string", None, False, False), "tags": ("list", [], False, True)},
    "OS::Keystone::User": {
        "name": ("string", None, False, True), "domain": ("string", "default", False, True),
        "description": ("string", "", False, True), "enabled": ("boolean", True, False, True),
        "email": ("string", None, False, True), "password": ("string", None, False, True),
        "default_project": ("string", None, False, True), "groups": ("list", None, False, True),
        "roles": ("list", None, False, True)},
    "OS::Keystone::Group": {
        "name": ("string", None, False, True), "domain": ("string", "default", False, True),
        "description": ("string", "", False, True), "roles": ("list", None, False, True)},
    "OS::Keystone::Role": {"name": ("string", None, False, True), "domain": ("string", None, False, False)},
    "OS::Keystone::Domain": {
        "name": ("string", None, False, True), "description": ("string", None, False, True),
        "enabled": ("boolean", True, False, True)},
    "OS::Keystone::Region": {
        "id": ("string", None, False, False), "parent_region": ("string", None, False, True),
        "description": ("string", None, False, True), "enabled": ("boolean", True, False, True)},
    "OS::Keystone::Service": {
        "name": ("string", None, False, True), "description": ("string", None, False, True),
        "type": ("string", None, True, True), "enabled": ("boolean", True, False, True)},
    "OS::Keystone::Endpoint": {
        "name": ("string", None, False, True), "region": ("string", None, False, True),
        "service": ("string", None, True, True), "interface": ("string", None, True, True),
        "url": ("string", None, True, True), "enabled": ("boolean", True, False, True)},
    "OS::Keystone::UserRoleAssignment": {"user": ("string", None, True, True), "roles": ("list", None, False, True)},
    "OS::Keystone::GroupRoleAssignment": {"group": ("string", None, True, True), "roles": ("list", None, False, True)},
}
HEAT_ATTRIBUTES = {
    "OS::Keystone::Project": {"name": "string", "parent_id": "string", "domain_id": "string", "enabled": "boolean",
                              "is_domain": "boolean"},
    "OS::Keystone::User": {"name": "string", "default_project_id": "string", "domain_id": "string",
                           "enabled": "boolean", "password_expires_at": "string"},
}
HEAT_CONSTRAINTS = {
    "OS::Keystone::Project": {"domain": "keystone.domain", "parent": "keystone.project"},
    "OS::Keystone::User": {"domain": "keystone.domain", "default_project": "keystone.project",
                           "groups[]": "keystone.group", "roles.role": "keystone.role",
                           "roles.project": "keystone.project", "roles.domain": "keystone.domain"},
    "OS::Keystone::Group": {"domain": "keystone.domain", "roles.role": "keystone.role",
                            "roles.project": "keystone.project", "roles.domain": "keystone.domain"},
    "OS::Keystone::Role": {"domain": "keystone.domain"},
    "OS::Keystone::Domain": {},
    "OS::Keystone::Region": {"parent_region": "keystone.region"},
    "OS::Keystone::Service": {},
    "OS::Keystone::Endpoint": {"region": "keystone.region", "service": "keystone.service"},
    "OS::Keystone::UserRoleAssignment": {"user": "keystone.user", "roles.role": "keystone.role",
                                         "roles.project": "keystone.project", "roles.domain": "keystone.domain"},
    "OS::Keystone::GroupRoleAssignment": {"group": "keystone.group", "roles.role": "keystone.role",
                                          "roles.project": "keystone.project", "roles.domain": "keystone.domain"},
}


@pytest.mark.parametrize("type_name", sorted(HEAT_PROPERTIES))
def test_the_schema_is_heats(type_name: str) -> None:
    cls = resource_class(type_name)
    assert cls is not None
    shown = {name: (p.type, p.default, p.required, p.update_allowed) for name, p in cls.properties_schema.items()}
    assert shown == HEAT_PROPERTIES[type_name]
    assert list(cls.properties_schema) == list(HEAT_PROPERTIES[type_name])  # Heat's order
    assert {name: a.type for name, a in cls.attributes_schema.items()} == HEAT_ATTRIBUTES.get(type_name, {})
    assert dict(cls.custom_constraints) == HEAT_CONSTRAINTS[type_name]


def test_roles_entries_are_heats_map_and_an_endpoints_interface_is_one_of_three() -> None:
    entry = keystone.User.properties_schema["roles"].schema
    assert entry is not None and not isinstance(entry, Mapping) and isinstance(entry.schema, Mapping)
    assert {key: (s.type, s.required) for key, s in entry.schema.items()} == {
        "role": ("string", True), "project": ("string", False), "domain": ("string", False)}
    with pytest.raises(StackValidationFailed,
                       match=r'interface: "private" is not an allowed value \["public", "internal", "admin"\]'):
        validate_properties(keystone.Endpoint, {"service": "s", "interface": "private", "url": "http://x"},
                            "resources.endpoint.properties")


# -- validation --------------------------------------------------------------------------------

@pytest.mark.parametrize("roles, message", [
    ([{"role": "admin", "project": "p", "domain": "d"}],
     "Cannot define the following properties at the same time: project, domain."),
    ([{"role": "admin"}], "Either project or domain must be specified for role admin"),
])
@pytest.mark.parametrize("cls", [keystone.User, keystone.Group, keystone.UserRoleAssignment,
                                 keystone.GroupRoleAssignment])
def test_a_role_needs_a_project_or_a_domain(cls: type, roles: list[Any], message: str) -> None:
    with pytest.raises(StackValidationFailed) as raised:
        cls("thing", FakeRuntime(FakeKeystone())).validate({"roles": roles})
    assert raised.value.message == message


def checked(cls: type, values: dict[str, Any], cloud: FakeKeystone | None = None) -> None:
    handler = cls("thing", FakeRuntime(cloud or FakeKeystone()))
    handler.validate_with_cloud(values, "resources.thing.properties")


@pytest.mark.parametrize("cls, values, message", [
    (keystone.Project, {"domain": "nope"},
     "resources.thing.properties.domain: Error validating value 'nope': The KeystoneDomain (nope) could not be found."),
    (keystone.Project, {"domain": ""},
     "resources.thing.properties.domain: Error validating value '': The KeystoneDomain () could not be found."),
    (keystone.Project, {"parent": "p{nope}"},
     "resources.thing.properties.parent: Error validating value 'p{nope}': "
     "The KeystoneProject (p{nope}) could not be found."),
    (keystone.User, {"groups": ["devs", "nope"]},
     "resources.thing.properties.groups[1]: Error validating value 'nope': The KeystoneGroup (nope) could not be found."),
    (keystone.User, {"roles": [{"role": "nope", "project": "demo"}]},
     "resources.thing.properties.roles[0].role: Error validating value 'nope': "
     "The KeystoneRole (nope) could not be found."),
    (keystone.Endpoint, {"service": "twice"},
     "resources.thing.properties.service: Error validating value 'twice': Keystone has more than one service "
     "with same name twice. Please use service id instead of name"),
    (keystone.Endpoint, {"region": "Nowhere"},
     "resources.thing.properties.region: Error validating value 'Nowhere': "
     "The KeystoneRegion (Nowhere) could not be found."),
    (keystone.UserRoleAssignment, {"user": "nobody"},
     "resources.thing.properties.user: Error validating value 'nobody': The KeystoneUser (nobody) could not be found."),
])
def test_heats_custom_constraints_ask_keystone_with_heats_words(cls: type, values: dict[str, Any],
                                                                message: str) -> None:
    cloud = FakeKeystone()
    cloud.add("groups", name="devs", domain_id="default")
    cloud.add("projects", name="demo", domain_id="default")
    cloud.add("services", name="twice", type="a")
    cloud.add("services", name="twice", type="b")
    with pytest.raises(StackValidationFailed) as raised:
        checked(cls, values, cloud)
    assert raised.value.message == f"Property error: {message}"


def test_names_and_ids_alike_satisfy_the_constraints() -> None:
    cloud = FakeKeystone()
    group = cloud.add("groups", name="devs", domain_id="default")
    role = cloud.add("roles", name="reader")
    cloud.add("projects", name="demo", domain_id="default")
    checked(keystone.User, {"domain": "Default", "default_project": "demo{default}", "groups": [group, "devs"],
                            "roles": [{"role": role, "project": "demo"}, {"role": "reader", "domain": "default"}]},
            cloud)


def test_lookups_are_heats_a_get_by_id_then_a_list_by_name() -> None:
    cloud = FakeKeystone()
    domain = cloud.add("domains", name="corp", enabled=True)
    project = cloud.add("projects", name="web", domain_id=domain)
    assert identity.project_id(cloud, "web{corp}") == project
    assert [call[:2] + (call[3],) for call in cloud.sent] == [
        ("GET", "/domains/corp", {}), ("GET", "/domains", {"name": "corp"}),
        ("GET", "/projects/web", {}), ("GET", "/projects", {"name": "web", "domain_id": domain})]
    cloud.sent.clear()
    with pytest.raises(CloudFailure, match=r"The KeystoneRole \(admin\) could not be found."):
        identity.role_id(cloud, "admin{corp}")  # keystoneclient drops the domain of a role list
    assert cloud.sent[-1][1:] == ("/roles", None, {"name": "admin"})


# -- create ------------------------------------------------------------------------------------

def test_a_project_is_heats_request_with_its_default_name_recorded_first() -> None:
    handler, cloud, _properties, outcome = made(keystone.Project, {"tags": ["web"]})
    name = "st-thing-abcdefghijkl"
    (key, noted, calls_before), = handler.runtime.noted
    assert (key, noted) == (UNANSWERED_NAME, name)
    assert cloud.sent[calls_before][:2] == ("POST", "/projects")  # noted before Keystone was asked
    assert cloud.writes() == [("POST", "/projects", {"project": {
        "domain_id": "default", "name": name, "description": "", "enabled": True, "tags": ["web"]}})]
    assert handler.runtime.claimed == [outcome.physical_id]
    assert outcome.data["attributes"] == {"name": name, "parent_id": None, "domain_id": "default",
                                          "enabled": True, "is_domain": None}


def test_a_user_is_made_then_put_in_its_groups_then_given_its_roles() -> None:
    cloud = FakeKeystone()
    group = cloud.add("groups", name="devs", domain_id="default")
    project = cloud.add("projects", name="demo", domain_id="default")
    role = cloud.add("roles", name="reader")
    _handler, _cloud, _properties, outcome = made(keystone.User, {
        "name": "ann", "password": "s3cret", "email": "ann@example.org", "default_project": "demo",
        "groups": ["devs"], "roles": [{"role": "reader", "project": "demo"}]}, cloud)
    user = outcome.physical_id
    assert cloud.writes() == [
        ("POST", "/users", {"user": {"name": "ann", "domain_id": "default", "default_project_id": project,
                                     "password": "s3cret", "email": "ann@example.org", "description": "",
                                     "enabled": True}}),
        ("PUT", f"/groups/{group}/users/{user}", None),
        ("PUT", f"/projects/{project}/users/{user}/roles/{role}", None)]


def test_a_users_password_is_a_secret() -> None:
    handler = keystone.User("ann", FakeRuntime(FakeKeystone()))
    assert handler.masked_properties({"password": "s3cret", "name": "ann"})["password"] != "s3cret"


@pytest.mark.parametrize("cls, values, body", [
    (keystone.Group, {"description": "d"},
     {"group": {"name": "st-thing-abcdefghijkl", "domain_id": "default", "description": "d"}}),
    (keystone.Role, {"name": "reader", "domain": "Default"}, {"role": {"name": "reader", "domain_id": "default"}}),
    (keystone.Domain, {}, {"domain": {"name": "st-thing-abcdefghijkl", "enabled": True}}),
    (keystone.Service, {"type": "thing", "enabled": False},
     {"service": {"name": "st-thing-abcdefghijkl", "type": "thing", "enabled": False}}),
    (keystone.Region, {"id": "Region Two", "description": "d"},
     {"region": {"id": "Region%20Two", "description": "d", "enabled": True}}),
    (keystone.Region, {}, {"region": {"enabled": True}}),
])
def test_heats_create_requests(cls: type, values: dict[str, Any], body: dict[str, Any]) -> None:
    _handler, cloud, _properties, _outcome = made(cls, values)
    assert cloud.writes() == [("POST", f"/{cls.collection}", body)]


def test_an_endpoint_names_its_service_by_id_and_its_region_as_heat_sends_it() -> None:
    cloud = FakeKeystone()
    service = cloud.add("services", name="thing", type="thing")
    cloud.add("regions", id="RegionOne")
    _handler, _cloud, _properties, _outcome = made(keystone.Endpoint, {
        "service": "thing", "region": "RegionOne", "interface": "public", "url": "http://x"}, cloud)
    assert cloud.writes() == [("POST", "/endpoints", {"endpoint": {
        "service_id": service, "interface": "public", "url": "http://x", "region": "RegionOne", "enabled": True,
        "name": "st-thing-abcdefghijkl"}})]


def test_a_regions_id_is_recorded_before_the_call_and_let_go_of_when_it_is_taken() -> None:
    handler, cloud, _properties, outcome = made(keystone.Region, {"id": "Region Two"})
    assert outcome.physical_id == "Region%20Two"
    assert handler.runtime.claimed == ["Region%20Two", "Region%20Two"]
    second = keystone.Region("again", FakeRuntime(cloud))
    with pytest.raises(CloudFailure):
        second.handle_create(validate_properties(keystone.Region, {"id": "Region Two"}, "resources.again.properties"))
    assert second.runtime.claimed == []  # that region is someone else's


def test_a_name_that_names_nothing_fails_the_create_with_heats_words() -> None:
    with pytest.raises(ResourceFailure) as raised:
        made(keystone.Project, {"domain": "nope"})
    assert raised.value.heat_reason() == "EntityNotFound: The KeystoneDomain (nope) could not be found."


# -- update and replace ------------------------------------------------------------------------

@pytest.mark.parametrize("cls, old, new, replaced", [
    (keystone.Project, {}, {"parent": "p"}, True),
    (keystone.Project, {}, {"description": "d", "enabled": False, "domain": "x", "tags": ["a"]}, False),
    (keystone.Role, {}, {"domain": "default"}, True),
    (keystone.Role, {}, {"name": "r"}, False),
    (keystone.Region, {"id": "a"}, {"id": "b"}, True),
    (keystone.Region, {}, {"description": "d", "parent_region": "r"}, False),
    (keystone.User, {}, {"email": "e", "groups": ["g"], "roles": [{"role": "r", "domain": "d"}]}, False),
    (keystone.Endpoint, {"service": "s", "interface": "public", "url": "u"},
     {"service": "t", "interface": "admin", "url": "v", "region": "r"}, False),
    (keystone.UserRoleAssignment, {"user": "a"}, {"user": "b"}, False),
])
def test_what_replaces_is_what_heat_does_not_update(cls: type, old: dict[str, Any], new: dict[str, Any],
                                                    replaced: bool) -> None:
    handler = cls("thing", FakeRuntime(FakeKeystone()))
    assert (handler.replacement_reason(old, {**old, **new}) is not None) == replaced


def updated(cls: type, old: dict[str, Any], new: dict[str, Any],
            cloud: FakeKeystone | None = None) -> tuple[FakeKeystone, Any]:
    handler, cloud, properties, outcome = made(cls, old, cloud)
    cloud.sent.clear()
    after = validate_properties(cls, {**old, **new}, "resources.thing.properties")
    return cloud, handler.handle_update(state(cls, properties, outcome), after)


def test_a_project_update_sends_its_domain_and_tags_as_heat_does() -> None:
    cloud, outcome = updated(keystone.Project, {"name": "web", "tags": ["a"]},
                             {"description": "new", "enabled": False})
    assert cloud.writes() == [("PATCH", f"/projects/{outcome.physical_id}", {"project": {
        "description": "new", "enabled": False, "domain_id": "default", "tags": ["a"]}})]
    assert outcome.data["attributes"]["enabled"] is False


def test_a_name_taken_out_is_the_physical_name_again() -> None:
    cloud, outcome = updated(keystone.Domain, {"name": "corp"}, {"name": None})
    assert cloud.writes() == [("PATCH", f"/domains/{outcome.physical_id}",
                               {"domain": {"name": "st-thing-abcdefghijkl"}})]


def test_a_user_update_patches_its_own_values_then_its_groups_and_roles() -> None:
    cloud = FakeKeystone()
    devs, ops = cloud.add("groups", name="devs", domain_id="default"), cloud.add("groups", name="ops")
    project = cloud.add("projects", name="demo", domain_id="default")
    reader, writer = cloud.add("roles", name="reader"), cloud.add("roles", name="writer")
    cloud, outcome = updated(keystone.User, {"name": "ann", "groups": ["devs"],
                                             "roles": [{"role": "reader", "project": "demo"}]},
                             {"email": "ann@example.org", "groups": [ops],
                              "roles": [{"role": "reader", "project": "demo"}, {"role": writer, "project": project}]},
                             cloud)
    user = outcome.physical_id
    assert cloud.writes() == [
        ("PATCH", f"/users/{user}", {"user": {"email": "ann@example.org", "domain_id": "default"}}),
        ("PUT", f"/groups/{ops}/users/{user}", None),
        ("DELETE", f"/groups/{devs}/users/{user}", None),
        ("PUT", f"/projects/{project}/users/{user}/roles/{writer}", None)]
    assert cloud.grants == {("user", user, "project", project, reader), ("user", user, "project", project, writer)}


def test_a_user_whose_groups_alone_change_is_not_patched() -> None:
    cloud = FakeKeystone()
    ops = cloud.add("groups", name="ops")
    cloud, _outcome = updated(keystone.User, {"name": "ann"}, {"groups": [ops]}, cloud)
    assert [write[0] for write in cloud.writes()] == ["PUT"]


def test_a_role_taken_out_is_revoked_and_a_group_update_always_sends_its_domain() -> None:
    cloud = FakeKeystone()
    project = cloud.add("projects", name="demo", domain_id="default")
    reader = cloud.add("roles", name="reader")
    cloud, outcome = updated(keystone.Group, {"name": "devs", "roles": [{"role": "reader", "project": "demo"}]},
                             {"roles": []}, cloud)
    group = outcome.physical_id
    assert cloud.writes() == [("PATCH", f"/groups/{group}", {"group": {"domain_id": "default"}}),
                              ("DELETE", f"/projects/{project}/groups/{group}/roles/{reader}", None)]


def test_a_role_is_patched_only_for_its_name() -> None:
    cloud, outcome = updated(keystone.Role, {"name": "a"}, {"name": "b"})
    assert cloud.writes() == [("PATCH", f"/roles/{outcome.physical_id}", {"role": {"name": "b"}})]


def test_what_drifted_is_put_back_by_an_update() -> None:
    """Heat's converge: an otherwise unchanged resource updated with the same
    properties puts back what Keystone no longer holds."""
    handler, cloud, properties, outcome = made(keystone.Service, {"type": "thing", "description": "d"})
    cloud.things["services"][outcome.physical_id]["description"] = "changed by hand"
    current = state(keystone.Service, properties, outcome)
    assert handler.check_drift(current)["changed_keys"] == ["description"]
    cloud.sent.clear()
    handler.handle_update(current, properties)
    assert cloud.writes() == [("PATCH", f"/services/{outcome.physical_id}", {"service": {"description": "d"}})]
    assert handler.check_drift(current)["drifted"] is False


def test_a_revoked_role_and_a_left_group_are_drift() -> None:
    cloud = FakeKeystone()
    cloud.add("groups", name="devs", domain_id="default")
    cloud.add("projects", name="demo", domain_id="default")
    cloud.add("roles", name="reader")
    handler, cloud, properties, outcome = made(keystone.User, {
        "groups": ["devs"], "roles": [{"role": "reader", "project": "demo"}]}, cloud)
    current = state(keystone.User, properties, outcome)
    assert handler.check_drift(current)["drifted"] is False
    cloud.grants.clear()
    cloud.members.clear()
    assert handler.check_drift(current)["changed_keys"] == ["roles", "groups"]


# -- delete ------------------------------------------------------------------------------------

def test_an_enabled_domain_is_disabled_then_deleted() -> None:
    handler, cloud, properties, outcome = made(keystone.Domain, {"name": "corp"})
    cloud.sent.clear()
    handler.handle_delete(state(keystone.Domain, properties, outcome))
    ident = outcome.physical_id
    assert cloud.writes() == [("PATCH", f"/domains/{ident}", {"domain": {"enabled": False}}),
                              ("DELETE", f"/domains/{ident}", None)]


def test_a_projects_default_security_group_goes_first_and_a_gone_project_is_deleted() -> None:
    handler, cloud, properties, outcome = made(keystone.Project, {"name": "web"})
    cloud.security_groups = [{"id": "sg1"}]
    cloud.sent.clear()
    current = state(keystone.Project, properties, outcome)
    handler.handle_delete(current)
    assert cloud.sent[0] == ("GET", "/security-groups", None, {"project_id": outcome.physical_id, "name": "default"})
    assert cloud.writes() == [("DELETE", "/security-groups/sg1", None),
                              ("DELETE", f"/projects/{outcome.physical_id}", None)]
    handler.handle_delete(current)  # gone already: done


def test_a_user_leaves_its_groups_then_is_deleted() -> None:
    cloud = FakeKeystone()
    devs = cloud.add("groups", name="devs", domain_id="default")
    cloud.add("groups", id="gone", name="gone", domain_id="default")
    handler, cloud, properties, outcome = made(keystone.User, {"groups": ["devs", "gone"]}, cloud)
    del cloud.things["groups"]["gone"]
    cloud.remembered.clear()
    cloud.sent.clear()
    handler.handle_delete(state(keystone.User, properties, outcome))
    assert cloud.writes() == [("DELETE", f"/groups/{devs}/users/{outcome.physical_id}", None),
                              ("DELETE", f"/users/{outcome.physical_id}", None)]


def test_a_killed_runs_thing_is_found_by_its_recorded_name_and_deleted() -> None:
    cloud = FakeKeystone()
    mine = cloud.add("roles", name="st-role-abcdefghijkl")
    cloud.add("roles", name="someone-elses")
    current = ResourceState("role", "OS::Keystone::Role", "CREATE", "IN_PROGRESS",
                            data={UNANSWERED_NAME: "st-role-abcdefghijkl"})
    keystone.Role("role", FakeRuntime(cloud)).handle_delete(current)
    assert list(cloud.things["roles"]) != [] and mine not in cloud.things["roles"]


# -- role assignments --------------------------------------------------------------------------

def test_a_role_assignment_has_no_physical_id_and_grants_its_roles() -> None:
    cloud = FakeKeystone()
    user = cloud.add("users", name="ann", domain_id="default")
    project = cloud.add("projects", name="demo", domain_id="default")
    role = cloud.add("roles", name="reader")
    handler, cloud, properties, outcome = made(keystone.UserRoleAssignment, {
        "user": "ann", "roles": [{"role": "reader", "project": "demo"}, {"role": "reader", "domain": "default"}]},
        cloud, name="grant")
    assert outcome.physical_id == ""
    assert handler.reference_id(state(keystone.UserRoleAssignment, properties, outcome, "grant")) == "grant"
    assert cloud.writes() == [("PUT", f"/projects/{project}/users/{user}/roles/{role}", None),
                              ("PUT", f"/domains/default/users/{user}/roles/{role}", None)]
    cloud.sent.clear()
    handler.handle_delete(state(keystone.UserRoleAssignment, properties, outcome, "grant"))
    assert cloud.grants == set()


def test_an_assignment_given_to_another_group_moves_its_grants() -> None:
    cloud = FakeKeystone()
    devs, ops = cloud.add("groups", name="devs"), cloud.add("groups", name="ops")
    project = cloud.add("projects", name="demo", domain_id="default")
    role = cloud.add("roles", name="reader")
    roles = [{"role": "reader", "project": "demo"}]
    cloud, _outcome = updated(keystone.GroupRoleAssignment, {"group": "devs", "roles": roles}, {"group": "ops"},
                              cloud)
    assert cloud.grants == {("group", ops, "project", project, role)}
    assert ("DELETE", f"/projects/{project}/groups/{devs}/roles/{role}", None) in cloud.writes()


# -- adoption ----------------------------------------------------------------------------------

def test_an_adopted_id_must_be_a_keystone_id_of_a_thing_keystone_has() -> None:
    cloud = FakeKeystone()
    project = cloud.add("projects", name="web", domain_id="default")
    handler = keystone.Project("web", FakeRuntime(cloud))
    handler.check_adopted_id(project, {})
    with pytest.raises(ResourceFailure, match="not the shape of such an id"):
        handler.check_adopted_id("../users/x", {})
    with pytest.raises(ResourceFailure, match="names nothing of that type"):
        handler.check_adopted_id("0123456789abcdef0123456789abcdef", {})
    region = cloud.add("regions", id="Region%20Two")  # a region's id is the template's, quoted
    keystone.Region("r", FakeRuntime(cloud)).check_adopted_id(region, {})
