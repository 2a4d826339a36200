# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS::Keystone::* on Keystone's API (v3), as Heat 27's resource plugins make them
(heat/engine/resources/openstack/keystone/: project.py, user.py, group.py, role.py,
domain.py, region.py, service.py, endpoint.py, role_assignments.py), with the
requests Heat's keystoneclient sends; the calls, lookups, constraints and what the
types share are in identity.py.

- **Create**: one ``POST`` with Heat's body (keystoneclient leaves out what is
  null); the name, where the type has one and the template gives none, is Heat's
  ``<stack>-<resource>-<12 characters>``, recorded before the call so that a killed
  run's next run finds the thing by it and deletes it.  A user is then added to its
  ``groups``, and a user's or group's ``roles`` granted (Heat's role assignment
  mixin); a region with an ``id`` has it quoted, as Heat does, and recorded first.
- **Update in place**: Heat's ``handle_update`` of each type, on the properties that
  changed (names resolved to ids, Heat's RESOLVE rules), and on those that drifted
  from what Keystone shows (Heat's ``converge``).  Replaced: a project's ``parent``,
  a role's ``domain``, a region's ``id`` (Heat's ``update_allowed``).
- **Delete**: Heat's: a project's ``default`` security group in Neutron first (Neutron
  makes one per project), a user taken out of its groups first; NotFound is done.
- **Attributes** (a project's, a user's) are those of Keystone's answer when the
  resource last acted; ``show`` is read when asked, as Keystone shows the thing.
- **Role assignments** have no physical id, as in Heat (``get_resource`` gives the
  resource's name); a grant is Keystone's ``PUT`` of role on project (or domain) for
  the user or group.

Where this differs from Heat (each a defect of Heat's): a domain still enabled is
disabled before it is deleted (Keystone refuses to delete an enabled domain, and
Heat's delete fails on it); a project's ``tags`` emptied are emptied (Heat sends
the old ones again); an assignment whose ``user`` or ``group`` changes moves its
grants to the new one (Heat changes grants of the old one only); grants compare as
ids, so a role named by its id instead of its name is not revoked; a user's group
that is gone does not stop the user's delete; a project's delete on a cloud without
Neutron skips the security group (Heat's fails).  Drift of ``roles`` and ``groups``
is what the template lists that Keystone does not hold (what others granted is not
this resource's drift).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from ..base import AttributeSchema, Outcome, PropertySchema, ResourceState, register
from ..properties import allowed_values
from .identity import (FINDERS, REGION_ID, ROLES, ROLES_CONSTRAINTS, AssigningResource, EntityNotFound,
                       KeystoneResource, RoleGrants, assignments, check_keystone_constraint, constrained_values,
                       flag, group_id, identity, ignoring_not_found, normalized, path_of, set_grants, show, text)


# -- the types ----------------------------------------------------------------------------------

def _domain(default: bool = True) -> PropertySchema:
    if default:
        return text("Name or id of keystone domain.", default="default", update_allowed=True)
    return text("Name or id of keystone domain.")


def _attribute(description: str, kind: str = "string") -> AttributeSchema:
    return AttributeSchema(description, kind)


@register
class Project(KeystoneResource):
    """OS::Keystone::Project."""

    type_name = "OS::Keystone::Project"
    collection = "projects"
    properties_schema = {
        "name": text("Name of keystone project.", update_allowed=True),
        "domain": _domain(),
        "description": text("Description of keystone project.", default="", update_allowed=True),
        "enabled": flag("This project is enabled or disabled."),
        "parent": text("The name or ID of parent of this keystone project in hierarchy."),
        "tags": PropertySchema("list", "A list of tags for labeling and sorting projects.", default=[],
                               update_allowed=True),
    }
    attributes_schema = {
        "name": _attribute("Project name."),
        "parent_id": _attribute("Parent project id."),
        "domain_id": _attribute("Domain id for project."),
        "enabled": _attribute("Flag of enable project.", "boolean"),
        "is_domain": _attribute("Indicates whether the project also acts as a domain.", "boolean"),
    }
    custom_constraints = {"domain": "keystone.domain", "parent": "keystone.project"}
    resolved = {"domain": "domain", "parent": "project"}
    compared = {"name": "name", "domain": "domain_id", "description": "description", "enabled": "enabled",
                "tags": "tags"}

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        return {"domain_id": values["domain"], "name": name, "description": values.get("description"),
                "enabled": values.get("enabled"), "tags": values.get("tags"),
                "parent_id": values.get("parent") or None}

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        domain = changed["domain"] if "domain" in changed else self.resolve("domain", old.get("domain"))
        tags = changed["tags"] if "tags" in changed else old.get("tags")
        return self.patch(ident, {"name": self.new_name(changed), "description": changed.get("description"),
                                  "enabled": changed.get("enabled"), "domain_id": domain, "tags": tags})

    def delete_thing(self, ident: str, current: ResourceState) -> None:
        """Heat's: the ``default`` security group Neutron made for the project
        first (Neutron would keep it), then the project."""
        if self.cloud.has_service("network"):
            found = self.cloud.request("network", "GET", "/security-groups",
                                       params={"project_id": ident, "name": "default"})
            for group in found.get("security_groups") or []:
                path = f"/security-groups/{quote(str(group['id']), safe='')}"
                ignoring_not_found(self.cloud.request, "network", "DELETE", path)
        super().delete_thing(ident, current)


@register
class User(AssigningResource):
    """OS::Keystone::User: a user, in its ``groups``, with its ``roles``."""

    type_name = "OS::Keystone::User"
    collection = "users"
    actor = "user"
    properties_schema = {
        "name": text("Name of keystone user.", update_allowed=True),
        "domain": text("Name or ID of keystone domain.", default="default", update_allowed=True),
        "description": text("Description of keystone user.", default="", update_allowed=True),
        "enabled": flag("Keystone user is enabled or disabled."),
        "email": text("Email address of keystone user.", update_allowed=True),
        "password": text("Password of keystone user.", update_allowed=True),
        "default_project": text("Name or ID of default project of keystone user.", update_allowed=True),
        "groups": PropertySchema("list", "Keystone user groups.", update_allowed=True,
                                 schema=text("Keystone user group.")),
        "roles": ROLES,
    }
    attributes_schema = {
        "name": _attribute("User name."),
        "default_project_id": _attribute("Default project id for user."),
        "domain_id": _attribute("Domain id for user."),
        "enabled": _attribute("Flag of enable user.", "boolean"),
        "password_expires_at": _attribute("Show user password expiration time."),
    }
    custom_constraints = {"domain": "keystone.domain", "default_project": "keystone.project",
                          "groups[]": "keystone.group", **ROLES_CONSTRAINTS}
    resolved = {"domain": "domain", "default_project": "project", "groups": "group"}
    compared = {"name": "name", "description": "description", "enabled": "enabled", "email": "email",
                "domain": "domain_id", "default_project": "default_project_id"}

    def secret_paths(self, properties: Mapping[str, Any]) -> list[tuple[str, ...]]:
        return [("password",)]

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        return {"name": name, "domain_id": values.get("domain"), "default_project_id": values.get("default_project"),
                "password": values.get("password"), "email": values.get("email"),
                "description": values.get("description"), "enabled": values.get("enabled")}

    def after_create(self, ident: str, values: Mapping[str, Any]) -> None:
        self._membership("PUT", ident, values.get("groups") or [])
        super().after_create(ident, values)

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Heat's: one PATCH when any of the user's own values changed (with its
        domain), then its groups, then its roles."""
        body = {key: value for key, value in (
            ("name", self.new_name(changed)), ("description", changed.get("description")),
            ("email", changed.get("email")), ("password", changed.get("password")),
            ("default_project_id", changed.get("default_project")), ("enabled", changed.get("enabled")),
        ) if value is not None}
        answer = None
        if body:
            body["domain_id"] = changed.get("domain") or self.resolve("domain", old.get("domain"))
            answer = self.patch(ident, body)
        if "groups" in changed:
            self._update_groups(ident, self.resolve("groups", old.get("groups")) or [], changed["groups"] or [])
        if "roles" in changed:
            self.update_roles(ident, old.get("roles"), changed["roles"])
        return answer

    def _update_groups(self, ident: str, before: Sequence[str], after: Sequence[str]) -> None:
        """Heat's ``_find_diff``: into the groups added (and those the template lists
        that Keystone no longer has it in: converge), out of those taken out."""
        held = self._groups_of(ident)
        self._membership("PUT", ident, [group for group in after if group not in before or group not in held])
        self._membership("DELETE", ident, [group for group in before if group not in after])

    def _membership(self, method: str, ident: str, groups: Sequence[str]) -> None:
        for group in groups:
            identity(self.cloud, method, f"{path_of('groups', group)}{path_of('users', ident)}")

    def _groups_of(self, ident: str) -> list[str]:
        answer = identity(self.cloud, "GET", f"{path_of('users', ident)}/groups")
        return [str(group["id"]) for group in answer["groups"]]

    def drifted(self, properties: Mapping[str, Any], live: Mapping[str, Any], ident: str) -> list[str]:
        keys = super().drifted(properties, live, ident)
        wanted = self._quiet_resolve("groups", properties.get("groups")) or []
        if wanted and set(wanted) - set(self._groups_of(ident)):
            keys.append("groups")
        return keys

    def shown_value(self, name: str, live: Mapping[str, Any], ident: str) -> Any:
        if name == "groups":
            return self._groups_of(ident)
        return super().shown_value(name, live, ident)

    def delete_thing(self, ident: str, current: ResourceState) -> None:
        """Heat's: out of its groups first, then the user."""
        for group in current.properties.get("groups") or []:
            try:
                group_ident = group_id(self.cloud, str(group))
            except EntityNotFound:
                continue  # a group gone took the user's membership with it
            ignoring_not_found(self._membership, "DELETE", ident, [group_ident])
        super().delete_thing(ident, current)


@register
class Group(AssigningResource):
    """OS::Keystone::Group, with its ``roles``."""

    type_name = "OS::Keystone::Group"
    collection = "groups"
    actor = "group"
    properties_schema = {
        "name": text("Name of keystone group.", update_allowed=True),
        "domain": _domain(),
        "description": text("Description of keystone group.", default="", update_allowed=True),
        "roles": ROLES,
    }
    custom_constraints = {"domain": "keystone.domain", **ROLES_CONSTRAINTS}
    resolved = {"domain": "domain"}
    compared = {"name": "name", "description": "description", "domain": "domain_id"}

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        return {"name": name, "domain_id": values.get("domain"), "description": values.get("description")}

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Heat's: the group PATCHed (with its domain) on any change, then its roles."""
        answer = self.patch(ident, {"name": self.new_name(changed), "description": changed.get("description"),
                                    "domain_id": changed.get("domain") or self.resolve("domain", old.get("domain"))})
        if "roles" in changed:
            self.update_roles(ident, old.get("roles"), changed["roles"])
        return answer


@register
class Role(KeystoneResource):
    """OS::Keystone::Role: a global role, or a domain's."""

    type_name = "OS::Keystone::Role"
    collection = "roles"
    properties_schema = {
        "name": text("Name of keystone role.", update_allowed=True),
        "domain": _domain(default=False),
    }
    custom_constraints = {"domain": "keystone.domain"}
    resolved = {"domain": "domain"}
    compared = {"name": "name"}

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        return {"name": name, "domain_id": values.get("domain") or None}

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.patch(ident, {"name": self.new_name(changed)}) if "name" in changed else None


@register
class Domain(KeystoneResource):
    """OS::Keystone::Domain."""

    type_name = "OS::Keystone::Domain"
    collection = "domains"
    properties_schema = {
        "name": text("The name of the domain.", update_allowed=True),
        "description": text("Description of keystone domain.", update_allowed=True),
        "enabled": flag("This domain is enabled or disabled."),
    }
    compared = {"name": "name", "description": "description", "enabled": "enabled"}

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        return {"name": name, "description": values.get("description"), "enabled": values.get("enabled")}

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.patch(ident, {"name": self.new_name(changed), "description": changed.get("description"),
                                  "enabled": changed.get("enabled")})

    def delete_thing(self, ident: str, current: ResourceState) -> None:
        """Keystone deletes a disabled domain only: one still enabled is disabled
        first (Heat's delete fails on it)."""
        shown = show(self.cloud, self.collection, ident)
        if shown is None:
            return
        if shown.get("enabled"):
            self.patch(ident, {"enabled": False})
        super().delete_thing(ident, current)


@register
class Region(KeystoneResource):
    """OS::Keystone::Region: its id the template's ``id``, quoted as Heat quotes it,
    or Keystone's."""

    type_name = "OS::Keystone::Region"
    collection = "regions"
    named_by_default = False
    id_shape = REGION_ID
    properties_schema = {
        "id": text("The user-defined region ID and should unique to the OpenStack deployment. While "
                   "creating the region, heat will url encode this ID."),
        "parent_region": text("If the region is hierarchically a child of another region, set this "
                              "parameter to the ID of the parent region.", update_allowed=True),
        "description": text("Description of keystone region.", update_allowed=True),
        "enabled": flag("This region is enabled or disabled."),
    }
    custom_constraints = {"parent_region": "keystone.region"}
    resolved = {"parent_region": "region"}
    compared = {"description": "description", "enabled": "enabled", "parent_region": "parent_region_id"}

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        return {"id": quote(values["id"]) if values.get("id") else None,
                "description": values.get("description"), "enabled": values.get("enabled"),
                "parent_region_id": values.get("parent_region")}

    def post(self, values: Mapping[str, Any], name: str | None) -> Mapping[str, Any]:
        if not values.get("id"):
            return super().post(values, name)  # Keystone's id: nothing to find it by
        # The id is known before the call: recorded first (let go of when Keystone
        # refuses it: a region of that id is someone else's).
        with self.making(quote(values["id"])):
            return super().post(values, name)

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.patch(ident, {"description": changed.get("description"), "enabled": changed.get("enabled"),
                                  "parent_region_id": changed.get("parent_region")})

    def unanswered(self, current: ResourceState) -> list[str]:
        return []


@register
class Service(KeystoneResource):
    """OS::Keystone::Service: an entry of the catalog."""

    type_name = "OS::Keystone::Service"
    collection = "services"
    properties_schema = {
        "name": text("Name of keystone service.", update_allowed=True),
        "description": text("Description of keystone service.", update_allowed=True),
        "type": text("Type of keystone Service.", required=True, update_allowed=True),
        "enabled": flag("This service is enabled or disabled."),
    }
    compared = {"name": "name", "description": "description", "type": "type", "enabled": "enabled"}

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        return {"name": name, "type": values.get("type"), "description": values.get("description"),
                "enabled": values.get("enabled")}

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.patch(ident, {"name": self.new_name(changed), "type": changed.get("type"),
                                  "description": changed.get("description"), "enabled": changed.get("enabled")})


@register
class Endpoint(KeystoneResource):
    """OS::Keystone::Endpoint: a service's URL in the catalog."""

    type_name = "OS::Keystone::Endpoint"
    collection = "endpoints"
    properties_schema = {
        "name": text("Name of keystone endpoint.", update_allowed=True),
        "region": text("Name or Id of keystone region.", update_allowed=True),
        "service": text("Name or Id of keystone service.", required=True, update_allowed=True),
        "interface": text("Interface type of keystone service endpoint.", required=True, update_allowed=True,
                          constraints=(allowed_values("public", "internal", "admin"),)),
        "url": text("URL of keystone service endpoint.", required=True, update_allowed=True),
        "enabled": flag("This endpoint is enabled or disabled."),
    }
    custom_constraints = {"region": "keystone.region", "service": "keystone.service"}
    resolved = {"region": "region", "service": "service"}
    compared = {"name": "name", "region": "region_id", "service": "service_id", "interface": "interface",
                "url": "url", "enabled": "enabled"}

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        return {"service_id": values.get("service"), "interface": values.get("interface"),
                "url": values.get("url"), "region": values.get("region"), "enabled": values.get("enabled"),
                "name": name}

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self.patch(ident, {"service_id": changed.get("service"), "interface": changed.get("interface"),
                                  "url": changed.get("url"), "region": changed.get("region"),
                                  "enabled": changed.get("enabled"), "name": self.new_name(changed)})

    def name_filters(self, name: str, properties: Mapping[str, Any]) -> dict[str, Any]:
        # Keystone filters endpoints by service and interface, not by name.
        return {"service_id": self._quiet_resolve("service", properties.get("service")),
                "interface": properties.get("interface")}


# -- role assignments ----------------------------------------------------------------------------

class RoleAssignment(RoleGrants):
    """Heat's role assignment resources: ``roles`` of the user or group the
    ``user`` (``group``) property names.  No physical id, as in Heat."""

    def actor_id(self, value: Any) -> str | None:
        """Heat's ``user_id`` (``group_id``): None when it names nothing."""
        try:
            return FINDERS[self.actor](self.cloud, str(value))
        except EntityNotFound:
            return None

    def _actor(self, properties: Mapping[str, Any]) -> str:
        ident = self.actor_id(properties.get(self.actor))
        if ident is None:
            raise self.fail(f"The Keystone{self.actor.capitalize()} ({properties.get(self.actor)}) "
                            "could not be found.", "EntityNotFound")
        return ident

    def validate_with_cloud(self, properties: Mapping[str, Any], path: str) -> None:
        for name, constraint in self.custom_constraints.items():
            for where, value in constrained_values(properties, name, path):
                check_keystone_constraint(self.cloud, constraint, value, where)

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        self.grant(self._actor(properties), properties.get("roles"))
        return Outcome("")  # as Heat's: no physical id, get_resource gives its name

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        old = current.properties
        before, after = self.actor_id(old.get(self.actor)), self._actor(properties)
        if before != after:
            # Its grants move to the new user (Heat's would change the old one's).
            if before is not None:
                self.revoke(before, old.get("roles"))
            self.grant(after, properties.get("roles"))
        else:
            self.update_roles(after, old.get("roles"), properties.get("roles"))
        return Outcome("")

    def handle_delete(self, current: ResourceState) -> None:
        """Heat's: the grants Keystone holds revoked; nothing when what they name is gone."""
        ident = self.actor_id(current.properties.get(self.actor))
        if ident is None or current.action == "INIT":
            return
        try:
            wanted = normalized(self.cloud, current.properties.get("roles"))
        except EntityNotFound:
            return
        held = assignments(self.cloud, self.actor, ident)
        set_grants(self.cloud, "DELETE", self.actor, ident, [g for g in wanted if g in held])

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        """Heat's assignment has no id to check: the grants it names are checked."""
        ident = self._actor(properties)
        if self.missing_grants(ident, properties.get("roles")):
            raise self.fail(f"Keystone does not hold every grant of {self.type_name} {self.name}", "NotFound")
        return Outcome("")

    def attribute(self, state: ResourceState, name: str) -> Any:
        return None  # Heat's assignments show nothing (no entity)

    def check_healthy(self, state: ResourceState) -> bool:
        return self.actor_id(state.properties.get(self.actor)) is not None


@register
class UserRoleAssignment(RoleAssignment):
    """OS::Keystone::UserRoleAssignment."""

    type_name = "OS::Keystone::UserRoleAssignment"
    actor = "user"
    properties_schema = {
        "user": text("Name or id of keystone user.", required=True, update_allowed=True),
        "roles": ROLES,
    }
    custom_constraints = {"user": "keystone.user", **ROLES_CONSTRAINTS}


@register
class GroupRoleAssignment(RoleAssignment):
    """OS::Keystone::GroupRoleAssignment."""

    type_name = "OS::Keystone::GroupRoleAssignment"
    actor = "group"
    properties_schema = {
        "group": text("Name or id of keystone group.", required=True, update_allowed=True),
        "roles": ROLES,
    }
    custom_constraints = {"group": "keystone.group", **ROLES_CONSTRAINTS}
