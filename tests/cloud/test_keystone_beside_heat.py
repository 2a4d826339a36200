# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OS::Keystone types beside the real Heat engine on the same cloud (the cloud's
admin, for both), through Heat and through hotplay with no environment: a domain, a
project in it, a group, a user in the group with a role on the project, two roles, a
group role assignment, a region, a service and its endpoint.  What each side made,
read back from Keystone (the things, the user's groups, the user's and the group's
role assignments), and every output (``show`` and the attributes) must be the same
after the create, after an update in place (descriptions, ``enabled``, an email, a
role added) and after a replacement (the region's id: Heat replaces the region and
updates the endpoint in place), with no list of known differences; nothing of
either stack is left in Keystone after its delete.  The helpers are
test_native_side_by_side's and test_side_by_side_heat's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_native_side_by_side import both_sides
from test_side_by_side_heat import Labels, differences

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      description: {type: string, default: first}
      enabled: {type: boolean, default: true}
      email: {type: string, default: one@example.org}
      more_roles: {type: boolean, default: false}
      region_id: {type: string}
    conditions:
      more: {get_param: more_roles}
    resources:
      domain:
        type: OS::Keystone::Domain
        properties: {description: {get_param: description}, enabled: {get_param: enabled}}
      project:
        type: OS::Keystone::Project
        properties:
          domain: {get_resource: domain}
          description: {get_param: description}
          enabled: {get_param: enabled}
          tags: [web, {get_param: description}]
      group:
        type: OS::Keystone::Group
        properties: {domain: {get_resource: domain}, description: {get_param: description}}
      reader:
        type: OS::Keystone::Role
      writer:
        type: OS::Keystone::Role
      user:
        type: OS::Keystone::User
        properties:
          domain: {get_resource: domain}
          description: {get_param: description}
          email: {get_param: email}
          password: not-a-secret-here
          default_project: {get_resource: project}
          groups: [{get_resource: group}]
          roles:
            if:
              - more
              - [{role: {get_resource: reader}, project: {get_resource: project}},
                 {role: {get_resource: writer}, domain: {get_resource: domain}}]
              - [{role: {get_resource: reader}, project: {get_resource: project}}]
      group_roles:
        type: OS::Keystone::GroupRoleAssignment
        properties:
          group: {get_resource: group}
          roles: [{role: {get_resource: writer}, project: {get_resource: project}}]
      region:
        type: OS::Keystone::Region
        properties: {id: {get_param: region_id}, description: {get_param: description},
                     enabled: {get_param: enabled}}
      service:
        type: OS::Keystone::Service
        properties: {type: hotplay-test, description: {get_param: description},
                     enabled: {get_param: enabled}}
      endpoint:
        type: OS::Keystone::Endpoint
        properties:
          service: {get_resource: service}
          region: {get_resource: region}
          interface: public
          url: http://192.0.2.10:9999/v1
          enabled: {get_param: enabled}
    outputs:
      ids:
        value:
          domain: {get_resource: domain}
          project: {get_resource: project}
          group: {get_resource: group}
          reader: {get_resource: reader}
          writer: {get_resource: writer}
          user: {get_resource: user}
          region: {get_resource: region}
          service: {get_resource: service}
          endpoint: {get_resource: endpoint}
      group_roles: {value: {get_resource: group_roles}}
      group_roles_show: {value: {get_attr: [group_roles, show]}}
      domain: {value: {get_attr: [domain, show]}}
      project: {value: {get_attr: [project, show]}}
      project_attributes:
        value: [{get_attr: [project, name]}, {get_attr: [project, parent_id]}, {get_attr: [project, domain_id]},
                {get_attr: [project, enabled]}, {get_attr: [project, is_domain]}]
      group: {value: {get_attr: [group, show]}}
      reader: {value: {get_attr: [reader, show]}}
      user: {value: {get_attr: [user, show]}}
      user_attributes:
        value: [{get_attr: [user, name]}, {get_attr: [user, default_project_id]}, {get_attr: [user, domain_id]},
                {get_attr: [user, enabled]}, {get_attr: [user, password_expires_at]}]
      region: {value: {get_attr: [region, show]}}
      service: {value: {get_attr: [service, show]}}
      endpoint: {value: {get_attr: [endpoint, show]}}
"""

UPDATE = {"description": "second", "enabled": "false", "email": "two@example.org", "more_roles": "true"}
# Keystone's things by kind: (collection, the key of one).
KINDS = {"domain": ("domains", "domain"), "project": ("projects", "project"), "group": ("groups", "group"),
         "reader": ("roles", "role"), "writer": ("roles", "role"), "user": ("users", "user"),
         "region": ("regions", "region"), "service": ("services", "service"), "endpoint": ("endpoints", "endpoint")}


@pytest.fixture
def sides(tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str], heat_client: Any):
    for heat, hotplay in both_sides(tmp_path / "keystone.yaml", TEMPLATE, run_tasks, cloud_env, heat_client):
        # The user's password is a secret: the store keeps it encrypted, with this key.
        hotplay.env = {**hotplay.env, "HOTPLAY_STORE_KEY": "cloud tests' store key"}
        yield heat, hotplay  # both deleted when the loop ends


def shown(conn: Any, path: str, key: str) -> Any:
    answer = conn.identity.get(path)
    return answer.json()[key] if answer.status_code == 200 else None


def comparable(value: Any, labels: Labels) -> Any:
    """A value with ids and names as labels, without the links (URLs of ids)."""
    if isinstance(value, dict):
        return {labels.value(key): comparable(item, labels) for key, item in value.items() if key != "links"}
    if isinstance(value, list):
        items = [comparable(item, labels) for item in value]
        # Keystone's lists (assignments, groups, tags) in no order of their own; an
        # output's list of attributes in its order.
        alike = all(isinstance(i, dict) for i in items) or all(isinstance(i, str) for i in items)
        return sorted(items, key=repr) if alike else items
    return labels.value(value)


def truth(conn: Any, ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each thing as Keystone's lists show it: Keystone caches its gets, not its lists.
    Its cache can keep a value that a get, begun while an update was being written,
    put back after the update cleared it: seen on Heat's side, as Heat resolves its
    outputs (a get of each thing) every time the test polls the stack, so while it
    updates them too."""
    found = {}
    for kind, (collection, _key) in KINDS.items():
        found[kind] = next(t for t in shown(conn, f"/{collection}", collection) if t["id"] == ids[kind])
    return found


# A change to each thing that changes nothing, so that Keystone drops what its cache
# holds of it (the values written are those its lists show; a project's ``enabled``
# goes with any change of a disabled project, which Keystone takes for enabling it).
UNCHANGED = {"domain": ("name",), "project": ("domain_id", "enabled"), "group": ("domain_id",),
             "reader": ("name",), "writer": ("name",), "user": ("domain_id",), "region": ("description",),
             "service": ("type",), "endpoint": ("interface",)}


def refresh(conn: Any, things: dict[str, dict[str, Any]]) -> None:
    for kind, keys in UNCHANGED.items():
        collection, entity = KINDS[kind]
        body = {entity: {key: things[kind].get(key) for key in keys}}
        answer = conn.identity.patch(f"/{collection}/{things[kind]['id']}", json=body)
        assert answer.status_code == 200, answer.text


def described(conn: Any, side: Any, outputs: dict[str, Any], things: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What one side made, read back from Keystone, and its outputs, ids as labels."""
    labels = Labels(side.name)
    ids = outputs["ids"]
    for thing in things.values():
        labels.known(thing["id"], thing.get("name") or thing["id"])
    user, group = ids["user"], ids["group"]
    return {
        "keystone": {kind: comparable(thing, labels) for kind, thing in things.items()},
        "user_groups": comparable([g["id"] for g in shown(conn, f"/users/{user}/groups", "groups")], labels),
        "user_roles": comparable(shown(conn, f"/role_assignments?user.id={user}", "role_assignments"), labels),
        "group_roles": comparable(shown(conn, f"/role_assignments?group.id={group}", "role_assignments"), labels),
        "outputs": {key: comparable(value, labels) for key, value in outputs.items() if key != "ids"},
    }


def left(conn: Any, stack: str, made: list[dict[str, str]]) -> list[str]:
    """What Keystone still has of the stack: what it made (by id), and anything
    named after it."""
    found = [f"{kind} {ids[kind]}" for ids in made for kind, (collection, key) in KINDS.items()
             if shown(conn, f"/{collection}/{ids[kind]}", key) is not None]
    for collection in ("domains", "projects", "users", "groups", "roles", "regions", "services", "endpoints"):
        for thing in shown(conn, f"/{collection}", collection):
            if str(thing.get("name") or thing["id"]).startswith(f"{stack}-"):
                found.append(f"{collection} {thing.get('name') or thing['id']}")
    return sorted(set(found))


def test_keystone_types_make_and_show_what_heat_does(sides, conn: Any) -> None:
    heat, hotplay = sides
    made: dict[str, list[dict[str, str]]] = {heat.name: [], hotplay.name: []}

    def apply(**parameters: str) -> tuple[dict[str, Any], dict[str, Any]]:
        applied, region = [], parameters.pop("region", "a")
        for side in (heat, hotplay):
            outputs = side.apply(region_id=f"{side.name}-region-{region}", **parameters)
            made[side.name].append(outputs["ids"])
            applied.append(outputs)
        return applied[0], applied[1]

    def compare(step: str, heat_outputs: dict[str, Any], hotplay_outputs: dict[str, Any]) -> None:
        heat_things, hotplay_things = truth(conn, heat_outputs["ids"]), truth(conn, hotplay_outputs["ids"])
        refresh(conn, heat_things)
        refresh(conn, hotplay_things)
        # Heat's outputs read again, past Keystone's cache (hotplay's were read after its run).
        stack = heat.client.show(heat.name, heat.stack_id)
        heat_outputs = {o["output_key"]: o.get("output_value") for o in stack.get("outputs") or []}
        found = differences(described(conn, heat, heat_outputs, heat_things),
                            described(conn, hotplay, hotplay_outputs, hotplay_things))
        assert not found, f"Heat and hotplay differ after the {step}:\n" + "\n".join(found)

    heat_outputs, hotplay_outputs = apply()
    compare("create", heat_outputs, hotplay_outputs)

    heat_updated, hotplay_updated = apply(**UPDATE)
    assert (heat_updated["ids"], hotplay_updated["ids"]) == (heat_outputs["ids"], hotplay_outputs["ids"])
    compare("update", heat_updated, hotplay_updated)

    heat_replaced, hotplay_replaced = apply(**UPDATE, region="b")
    for before, after in ((heat_updated, heat_replaced), (hotplay_updated, hotplay_replaced)):
        assert after["ids"]["region"] != before["ids"]["region"]  # replaced
        assert {k: v for k, v in after["ids"].items() if k != "region"} == \
            {k: v for k, v in before["ids"].items() if k != "region"}  # the endpoint updated in place
    compare("replacement", heat_replaced, hotplay_replaced)

    heat.delete()
    hotplay.delete()
    assert (left(conn, heat.name, made[heat.name]), left(conn, hotplay.name, made[hotplay.name])) == ([], [])
