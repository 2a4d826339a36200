# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keystone's API (v3) as Heat 27's Keystone client plugin uses it
(heat/engine/clients/os/keystone/): the calls, the lookups by name or id behind
Heat's RESOLVE rules (``get_domain_id``, ``get_project_id``, ...), Heat's custom
constraints ``keystone.*`` that use them; and what the Keystone types share: the
life of one Keystone thing (``KeystoneResource``) and the role grants of Heat's
``KeystoneRoleAssignmentMixin`` (``RoleGrants``).  The ten types are in keystone.py.

A lookup is Heat's: a get by id first, then (most kinds) a list by name; a user,
project, group or role may be written ``name{domain}``, the domain given by name
or id.  A failure is Heat's ``EntityNotFound`` (``The KeystoneRole (x) could not be
found.``), or its ``KeystoneServiceNameConflict`` for two services of one name; a
constraint wraps it in Heat's property error::

    Property error: resources.user.properties.domain: Error validating value
    'nope': The KeystoneDomain (nope) could not be found.

Where this differs from Heat: an id is quoted in a URL (Heat's client puts it in
the path as it is); a name two users share fails with our words where Heat's
client raises an exception with none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import quote

from ...errors import ResourceFailure, StackValidationFailed
from ..base import Outcome, PropertySchema, ResourceState
from .base import UNANSWERED_NAME, OpenStackResource
from .session import CloudFailure, CloudSession

IDENTITY = "identity"
# Heat's ``parse_entity_with_domain``: ``name{domain}``.
_WITH_DOMAIN = re.compile(r"\{(.*?)\}$")


class EntityNotFound(CloudFailure):
    """Heat's ``EntityNotFound`` of a Keystone kind (``KeystoneRole``)."""

    def __init__(self, entity: str, name: str) -> None:
        super().__init__(f"The {entity} ({name}) could not be found.", 404)
        self.error_type = "EntityNotFound"


class ServiceNameConflict(CloudFailure):
    """Heat's ``KeystoneServiceNameConflict``."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Keystone has more than one service with same name {name}. "
                         "Please use service id instead of name", 409)
        self.error_type = "KeystoneServiceNameConflict"


# -- calls ----------------------------------------------------------------------------------

def identity(cloud: CloudSession, method: str, path: str, body: Mapping[str, Any] | None = None,
             params: Mapping[str, Any] | None = None) -> Any:
    """One Keystone call.  An error answer is keystoneauth's words, as Heat's
    reasons carry them (``... (HTTP 409) (Request-ID: req-...)``)."""
    try:
        return cloud.request(IDENTITY, method, path, body, params)
    except CloudFailure as error:
        if error.status < 400 or isinstance(error, EntityNotFound):
            raise
        raise CloudFailure(error.client_text(), error.status, error.request_id) from None


def path_of(collection: str, ident: str) -> str:
    """``/<collection>/<id>``, the id quoted: an id is never a path."""
    return f"/{collection}/{quote(ident, safe='')}"


def show(cloud: CloudSession, collection: str, ident: str) -> Mapping[str, Any] | None:
    """The thing as Keystone shows it (``GET /projects/<id>``); None when there is none."""
    if not ident:
        return None
    try:
        answer = identity(cloud, "GET", path_of(collection, ident))
    except CloudFailure as error:
        if error.not_found:
            return None
        raise
    shown: Mapping[str, Any] = answer[_singular(collection)]
    return shown


def listed(cloud: CloudSession, collection: str, **filters: Any) -> list[Mapping[str, Any]]:
    """``GET /<collection>?<filters>`` (filters that are None left out)."""
    params = {key: value for key, value in filters.items() if value is not None}
    items: list[Mapping[str, Any]] = identity(cloud, "GET", f"/{collection}", params=params)[collection]
    return items


def _singular(collection: str) -> str:
    return collection[:-1]  # projects, users, groups, roles, domains, regions, services, endpoints


def ignoring_not_found(call: Callable[..., Any], *arguments: Any) -> None:
    """``call(*arguments)``, with Heat's ``ignore_not_found``: a thing already gone is fine."""
    try:
        call(*arguments)
    except CloudFailure as error:
        if not error.not_found:
            raise


# -- Heat's lookups (the client plugin's get_*_id) -------------------------------------------

def domain_id(cloud: CloudSession, value: str) -> str:
    return cloud.remember(("keystone", "domain", value), lambda: _by_id_or_name(
        cloud, "domains", "KeystoneDomain", value, {}))


def project_id(cloud: CloudSession, value: str) -> str:
    return _scoped(cloud, "projects", "KeystoneProject", value)


def group_id(cloud: CloudSession, value: str) -> str:
    return _scoped(cloud, "groups", "KeystoneGroup", value)


def role_id(cloud: CloudSession, value: str) -> str:
    # Heat's roles.list(name=..., domain=...) loses the domain in keystoneclient
    # (it is the grants' argument there): the list is of the name only.
    return _scoped(cloud, "roles", "KeystoneRole", value, domain_filter=False)


def user_id(cloud: CloudSession, value: str) -> str:
    """Heat's ``get_user_id``: by id, else the one user of that name."""
    def find() -> str:
        name, domain = _with_domain(cloud, value, "KeystoneUser")
        shown = show(cloud, "users", name)
        if shown is not None:
            return str(shown["id"])
        found = listed(cloud, "users", name=name, domain_id=domain)
        if len(found) > 1:
            raise CloudFailure(f"Multiple users match name '{name}': use its id", 409)
        if not found:
            raise EntityNotFound("KeystoneUser", name)
        return str(found[0]["id"])

    return cloud.remember(("keystone", "user", value), find)


def service_id(cloud: CloudSession, value: str) -> str:
    """Heat's ``get_service_id``: by id, else the one service of that name."""
    def find() -> str:
        shown = show(cloud, "services", value)
        if shown is not None:
            return str(shown["id"])
        found = listed(cloud, "services", name=value)
        if len(found) > 1:
            raise ServiceNameConflict(value)
        if not found:
            raise EntityNotFound("KeystoneService", value)
        return str(found[0]["id"])

    return cloud.remember(("keystone", "service", value), find)


def region_id(cloud: CloudSession, value: str) -> str:
    """Heat's ``get_region_id``: by id only."""
    def find() -> str:
        shown = show(cloud, "regions", value)
        if shown is None:
            raise EntityNotFound("KeystoneRegion", value)
        return str(shown["id"])

    return cloud.remember(("keystone", "region", value), find)


def _scoped(cloud: CloudSession, collection: str, entity: str, value: str,
            domain_filter: bool = True) -> str:
    def find() -> str:
        name, domain = _with_domain(cloud, value, entity)
        filters = {"domain_id": domain} if domain_filter else {}
        return _by_id_or_name(cloud, collection, entity, name, filters)

    return cloud.remember(("keystone", collection, value), find)


def _by_id_or_name(cloud: CloudSession, collection: str, entity: str, value: str,
                   filters: Mapping[str, Any]) -> str:
    shown = show(cloud, collection, value)
    if shown is not None:
        return str(shown["id"])
    if value:
        for item in listed(cloud, collection, name=value, **filters):
            if item.get("name") == value:
                return str(item["id"])
    raise EntityNotFound(entity, value)


def _with_domain(cloud: CloudSession, value: str, entity: str) -> tuple[str, str | None]:
    """Heat's ``parse_entity_with_domain``: ``name{domain}`` -> (name, domain id)."""
    found = _WITH_DOMAIN.search(value)
    if not found:
        return value, None
    try:
        return value[:found.start()], domain_id(cloud, found.group(1))
    except CloudFailure:
        raise EntityNotFound(entity, value) from None


FINDERS: Mapping[str, Callable[[CloudSession, str], str]] = {
    "domain": domain_id, "project": project_id, "group": group_id, "role": role_id,
    "user": user_id, "service": service_id, "region": region_id,
}

# Heat's custom constraint -> (its entity name, the lookup it runs).
CONSTRAINTS: Mapping[str, tuple[str, Callable[[CloudSession, str], str]]] = {
    f"keystone.{kind}": (f"Keystone{kind.capitalize()}", finder) for kind, finder in FINDERS.items()
}


def check_keystone_constraint(cloud: CloudSession, constraint: str, value: Any, path: str) -> None:
    """Heat's ``CustomConstraint(constraint)`` on ``value`` (the property at ``path``):
    an empty value is refused without a call, as Heat's ``KeystoneBaseConstraint`` does."""
    entity, finder = CONSTRAINTS[constraint]
    if value is None:
        return
    try:
        if value == "":
            raise EntityNotFound(entity, "")
        finder(cloud, str(value))
    except (EntityNotFound, ServiceNameConflict) as error:
        raise StackValidationFailed(
            f"Property error: {path}: Error validating value '{value}': {error.message}") from None


# -- role grants (Heat's KeystoneRoleAssignmentMixin) -----------------------------------------

Grant = tuple[str, str | None, str | None]  # (role id, project id, domain id)


def normalized(cloud: CloudSession, roles: Sequence[Mapping[str, Any]] | None) -> list[Grant]:
    """Heat's ``_normalize_to_id``: each role, project and domain as its id."""
    grants = []
    for entry in roles or []:
        project, domain = entry.get("project"), entry.get("domain")
        grants.append((role_id(cloud, str(entry.get("role"))),
                       project_id(cloud, str(project)) if project else None,
                       domain_id(cloud, str(domain)) if domain else None))
    return grants


def assignments(cloud: CloudSession, actor: str, ident: str) -> list[Grant]:
    """Heat's ``parse_list_assignments``: the roles Keystone lists for the user or
    group (``actor``) ``ident``, with their project or domain."""
    found = []
    for item in listed(cloud, "role_assignments", **{f"{actor}.id": ident}):
        role = (item.get("role") or {}).get("id")
        if not role:
            continue
        scope = item.get("scope") or {}
        found.append((str(role), (scope.get("project") or {}).get("id"), (scope.get("domain") or {}).get("id")))
    return found


def grant_path(actor: str, ident: str, grant: Grant) -> str | None:
    """Where a grant lives: ``/projects/<p>/users/<u>/roles/<r>`` (a domain's
    likewise); None for one with neither (Heat sends nothing for it)."""
    role, project, domain = grant
    if project is not None:
        scope = path_of("projects", project)
    elif domain is not None:
        scope = path_of("domains", domain)
    else:
        return None
    return f"{scope}{path_of(actor + 's', ident)}{path_of('roles', role)}"


def set_grants(cloud: CloudSession, method: str, actor: str, ident: str, grants: Sequence[Grant]) -> None:
    """``PUT`` (grant) or ``DELETE`` (revoke) each of ``grants``, in order."""
    for grant in grants:
        path = grant_path(actor, ident, grant)
        if path is not None:
            identity(cloud, method, path)


# -- what the Keystone types share ----------------------------------------------------------

# The ids Keystone gives (32 hex digits; a mapped user's 64; the domain ``default``).
KEYSTONE_ID = (re.compile(r"[0-9A-Za-z_-]{1,64}"), "a Keystone id (letters, digits, '-' or '_')")
# A region's id as Heat makes it: the template's text, quoted (no '/' left alone here).
REGION_ID = (re.compile(r"[0-9A-Za-z._~%-]{1,255}"), "a Keystone region id")


def text(description: str, **schema: Any) -> PropertySchema:
    return PropertySchema("string", description, **schema)


def flag(description: str) -> PropertySchema:
    return PropertySchema("boolean", description, default=True, update_allowed=True)


# Heat's KeystoneRoleAssignmentMixin ``roles``.
ROLES = PropertySchema("list", "List of role assignments.", update_allowed=True, schema=PropertySchema(
    "map", "Map between role with either project or domain.", schema={
        "role": text("Keystone role.", required=True),
        "project": text("Keystone project."),
        "domain": text("Keystone domain."),
    }))
ROLES_CONSTRAINTS = {"roles.role": "keystone.role", "roles.project": "keystone.project",
                     "roles.domain": "keystone.domain"}


def assignment_error(roles: Sequence[Mapping[str, Any]] | None) -> str | None:
    """Heat's ``validate_assignment_properties``, in its words."""
    for entry in roles or []:
        if entry.get("project") is not None and entry.get("domain") is not None:
            return "Cannot define the following properties at the same time: project, domain."
        if entry.get("project") is None and entry.get("domain") is None:
            return f"Either project or domain must be specified for role {entry.get('role')}"
    return None


def constrained_values(properties: Mapping[str, Any], name: str, path: str) -> list[tuple[str, Any]]:
    """(where, value) of the property a constraint names: ``groups[]`` each item of a
    list, ``roles.role`` a key of each item, else the property; ``where`` in Heat's
    words (``resources.user.properties.roles[0].role``)."""
    if name.endswith("[]"):
        items = properties.get(name[:-2]) or []
        return [(f"{path}.{name[:-2]}[{index}]", item) for index, item in enumerate(items)]
    if "." in name:
        parent, key = name.split(".", 1)
        return [(f"{path}.{parent}[{index}].{key}", item.get(key))
                for index, item in enumerate(properties.get(parent) or []) if isinstance(item, Mapping)]
    return [(f"{path}.{name}", properties.get(name))]


def grant_changes(old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]] | None
                  ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """Heat's ``_find_differences``: the entries added and taken out, each compared
    as ``role:project`` (or ``role:domain``) as the template writes them."""
    def keyed(entries: Sequence[Mapping[str, Any]] | None) -> dict[tuple[str, str, str], Mapping[str, Any]]:
        found = {}
        for entry in entries or []:
            scope = "project" if entry.get("project") is not None else "domain"
            if entry.get(scope) is not None:
                found[(scope, str(entry["role"]), str(entry[scope]))] = entry
        return found

    before, after = keyed(old), keyed(new)
    return ([entry for key, entry in after.items() if key not in before],
            [entry for key, entry in before.items() if key not in after])


class KeystoneResource(OpenStackResource):
    """What the Keystone types of one thing (a project, a user, ...) share."""

    collection: ClassVar[str]  # Keystone's collection (``projects``)
    # Property -> the lookup of Heat's RESOLVE rule on it (identity.FINDERS).
    resolved: ClassVar[Mapping[str, str]] = {}
    # Property -> the key Keystone shows it under: what drift compares (Heat's
    # ``parse_live_resource_data``).
    compared: ClassVar[Mapping[str, str]] = {}
    # Whether a thing with no ``name`` gets Heat's physical name.
    named_by_default: ClassVar[bool] = True
    id_shape = KEYSTONE_ID

    @property
    def entity(self) -> str:
        return self.collection[:-1]

    # -- validation ----------------------------------------------------------------------
    def validate_with_cloud(self, properties: Mapping[str, Any], path: str) -> None:
        for name, constraint in self.custom_constraints.items():
            for where, value in constrained_values(properties, name, path):
                check_keystone_constraint(self.cloud, constraint, value, where)

    def resolve(self, name: str, value: Any) -> Any:
        """Heat's RESOLVE rule of property ``name``: the id of what ``value`` names
        (each item of a list); a value that names nothing fails the action."""
        if value is None or name not in self.resolved:
            return value
        finder = FINDERS[self.resolved[name]]
        try:
            if isinstance(value, list):
                return [finder(self.cloud, str(item)) for item in value]
            return finder(self.cloud, str(value))
        except EntityNotFound as error:
            raise self.fail(error.message, "EntityNotFound") from None

    def translated(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return {name: self.resolve(name, value) for name, value in properties.items()}

    # -- create ----------------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        values = self.translated(properties)
        name = values.get("name") or None
        if self.named_by_default and not name:
            # Heat's unique name, recorded before Keystone is asked (a killed run's
            # next run finds the thing by it: handle_delete).
            name = self.runtime.physical_name(self.name)
            self.runtime.note_data(self.name, UNANSWERED_NAME, name)
        created = self.post(values, name)
        ident = str(created["id"])
        self.runtime.claim_physical_id(self.name, ident)
        self.after_create(ident, values)
        return Outcome(ident, self.cached(created))

    def post(self, values: Mapping[str, Any], name: str | None) -> Mapping[str, Any]:
        body = {key: value for key, value in self.create_body(values, name).items() if value is not None}
        created: Mapping[str, Any] = identity(self.cloud, "POST", f"/{self.collection}",
                                              {self.entity: body})[self.entity]
        return created

    def create_body(self, values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
        raise NotImplementedError

    def after_create(self, ident: str, values: Mapping[str, Any]) -> None:
        """What Heat does once it has the id (a user's groups, roles)."""

    # -- update ----------------------------------------------------------------------------
    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        ident = current.physical_id
        live = show(self.cloud, self.collection, ident)
        if live is None:
            raise self.fail(f"The {self.entity} {ident} could not be found", "NotFound")
        changed = {key: value for key, value in properties.items() if current.properties.get(key) != value}
        for key in self.drifted(properties, live, ident):
            changed.setdefault(key, properties.get(key))
        if not changed:
            return Outcome(ident, current.data)
        answer = self.update(ident, {k: self.resolve(k, v) for k, v in changed.items()}, current.properties)
        data = self.cached(answer) if answer is not None else current.data
        return Outcome(ident, data)

    def update(self, ident: str, changed: Mapping[str, Any], old: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Heat's ``handle_update`` with ``changed`` (its ``prop_diff``, resolved);
        ``old``: the properties before (Heat's ``self.properties`` then).  Returns
        Keystone's answer when it was asked to change the thing."""
        raise NotImplementedError

    def patch(self, ident: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        sent = {key: value for key, value in body.items() if value is not None}
        answer: Mapping[str, Any] = identity(self.cloud, "PATCH", path_of(self.collection, ident),
                                             {self.entity: sent})[self.entity]
        return answer

    def new_name(self, changed: Mapping[str, Any]) -> str | None:
        """Heat's: a changed name, or the physical name when it is taken out."""
        if "name" not in changed:
            return None
        return str(changed["name"] or self.runtime.physical_name(self.name))

    # -- delete ----------------------------------------------------------------------------
    def handle_delete(self, current: ResourceState) -> None:
        for ident in [current.physical_id] if current.physical_id else self.unanswered(current):
            self.delete_thing(ident, current)

    def delete_thing(self, ident: str, current: ResourceState) -> None:
        ignoring_not_found(identity, self.cloud, "DELETE", path_of(self.collection, ident))

    def unanswered(self, current: ResourceState) -> list[str]:
        """What a killed run may have made under the unique name it recorded."""
        name = current.data.get(UNANSWERED_NAME)
        if not name:
            return []
        found = listed(self.cloud, self.collection, **self.name_filters(str(name), current.properties))
        return [str(item["id"]) for item in found if item.get("name") == name]

    def name_filters(self, name: str, properties: Mapping[str, Any]) -> dict[str, Any]:
        """The filters of a list that finds a thing by its name (in its domain)."""
        if "domain" not in self.properties_schema:
            return {"name": name}
        return {"name": name, "domain_id": self._quiet_resolve("domain", properties.get("domain"))}

    def _quiet_resolve(self, name: str, value: Any) -> Any:
        """``resolve``, or the value as it is when it names nothing (now)."""
        try:
            return self.resolve(name, value)
        except ResourceFailure:
            return value

    # -- reading ----------------------------------------------------------------------------
    def cached(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        """The attributes kept when the resource acts (Heat's attribute cache):
        Keystone's answer holds them all."""
        if not self.attributes_schema:
            return {}
        return {"attributes": {name: answer.get(name) for name in self.attributes_schema}}

    def attribute(self, state: ResourceState, name: str) -> Any:
        cached = state.data.get("attributes") or {}
        if name != "show" and name in cached:
            return cached[name]
        live = show(self.cloud, self.collection, state.physical_id) if state.physical_id else None
        if live is None:
            return None
        return dict(live) if name == "show" else live.get(name)

    def adopted_thing(self, ident: str, properties: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return show(self.cloud, self.collection, ident)

    def check_healthy(self, state: ResourceState) -> bool:
        return bool(state.physical_id) and show(self.cloud, self.collection, state.physical_id) is not None

    def check_drift(self, state: ResourceState) -> dict[str, Any]:
        if not state.physical_id:
            return {"drifted": None, "msg": "nothing was created yet"}
        live = show(self.cloud, self.collection, state.physical_id)
        if live is None:
            return {"drifted": True, "changed_keys": [], "diff": {},
                    "msg": f"the {self.entity} {state.physical_id} is gone"}
        keys = self.drifted(state.properties, live, state.physical_id)
        return {"drifted": bool(keys), "changed_keys": keys,
                "diff": {"before": {key: state.properties.get(key) for key in keys},
                         "after": {key: self.shown_value(key, live, state.physical_id) for key in keys}}}

    def drifted(self, properties: Mapping[str, Any], live: Mapping[str, Any], ident: str) -> list[str]:
        """The compared properties the template sets (not null) that Keystone
        shows otherwise, names resolved to ids."""
        keys = []
        for name in self.compared:
            wanted = properties.get(name)
            if wanted is None:
                continue
            wanted = self._quiet_resolve(name, wanted)
            if not same(wanted, self.shown_value(name, live, ident)):
                keys.append(name)
        return keys

    def shown_value(self, name: str, live: Mapping[str, Any], ident: str) -> Any:
        return live.get(self.compared[name])


def same(wanted: Any, shown: Any) -> bool:
    if isinstance(wanted, list) and isinstance(shown, list):
        return sorted(map(str, wanted)) == sorted(map(str, shown))
    return bool(wanted == shown)


class RoleGrants(OpenStackResource):
    """Heat's ``KeystoneRoleAssignmentMixin``: ``roles`` granted to a user or group."""

    actor: ClassVar[str]  # ``user`` or ``group``

    def validate(self, properties: Mapping[str, Any]) -> None:
        problem = assignment_error(properties.get("roles"))
        if problem:
            raise self.refuse(problem, f"resources.{self.name}")

    def grants(self, roles: Sequence[Mapping[str, Any]] | None) -> list[Grant]:
        try:
            return normalized(self.cloud, roles)
        except EntityNotFound as error:
            raise self.fail(error.message, "EntityNotFound") from None

    def grant(self, ident: str, roles: Sequence[Mapping[str, Any]] | None) -> None:
        """Heat's ``create_assignment``."""
        set_grants(self.cloud, "PUT", self.actor, ident, self.grants(roles))

    def revoke(self, ident: str, roles: Sequence[Mapping[str, Any]] | None) -> None:
        """Heat's ``delete_assignment``: those of ``roles`` Keystone holds."""
        held = assignments(self.cloud, self.actor, ident)
        set_grants(self.cloud, "DELETE", self.actor, ident, [g for g in self.grants(roles) if g in held])

    def update_roles(self, ident: str, old: Any, new: Any) -> None:
        """Heat's ``update_assignment``: grant what was added, then revoke what was
        taken out and Keystone holds.  Also granted: what the template lists and
        Keystone no longer holds (Heat's ``converge``); compared as ids, so an entry
        written another way (a name for an id) is not revoked."""
        added, removed = grant_changes(old, new)
        wanted, new_ones = self.grants(new), self.grants(added)
        held = assignments(self.cloud, self.actor, ident)
        set_grants(self.cloud, "PUT", self.actor, ident, [g for g in wanted if g in new_ones or g not in held])
        if removed:
            set_grants(self.cloud, "DELETE", self.actor, ident,
                       [g for g in self.grants(removed) if g in held and g not in wanted])

    def missing_grants(self, ident: str, roles: Sequence[Mapping[str, Any]] | None) -> bool:
        """Whether Keystone lacks a grant ``roles`` lists (or what it names is gone)."""
        if not roles:
            return False
        try:
            wanted = normalized(self.cloud, roles)
        except EntityNotFound:
            return True
        held = assignments(self.cloud, self.actor, ident)
        return any(grant not in held for grant in wanted)


class AssigningResource(KeystoneResource, RoleGrants):
    """A user or a group: a Keystone thing with Heat's ``roles``."""

    def after_create(self, ident: str, values: Mapping[str, Any]) -> None:
        self.grant(ident, values.get("roles"))

    def drifted(self, properties: Mapping[str, Any], live: Mapping[str, Any], ident: str) -> list[str]:
        keys = super().drifted(properties, live, ident)
        return keys + ["roles"] if self.missing_grants(ident, properties.get("roles")) else keys

    def shown_value(self, name: str, live: Mapping[str, Any], ident: str) -> Any:
        if name == "roles":
            return [{"role": r, "project": p, "domain": d} for r, p, d in assignments(self.cloud, self.actor, ident)]
        return super().shown_value(name, live, ident)
