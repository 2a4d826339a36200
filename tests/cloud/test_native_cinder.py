# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Native OS::Cinder::Volume and OS::Cinder::VolumeAttachment (and
OS::Neutron::FloatingIPAssociation) on a real OpenStack, as a member of a project
(clouds.yaml entry ``hotplay-demo``), through real ansible-playbook with no
environment: Cinder's ids as physical ids, a volume renamed and extended in place
(attached too), two stacks naming their volumes alike kept apart, attachments
made and undone, attributes in Heat's shapes.  What was made is checked through
openstacksdk, not through what the stack says."""

from __future__ import annotations

import ast
import http.server
import os
import re
import socket
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from test_side_by_side_heat import HeatSide, Labels, differences

MEMBER_CLOUD = "hotplay-demo"

VOLUME = """\
    heat_template_version: 2018-08-31
    parameters:
      size: {type: number, default: 1}
      name: {type: string, default: ""}
      description: {type: string, default: first}
    resources:
      data:
        type: OS::Cinder::Volume
        properties:
          size: {get_param: size}
          name: {get_param: name}
          description: {get_param: description}
          metadata: {tier: db}
    outputs:
      id: {value: {get_resource: data}}
      status: {value: {get_attr: [data, status]}}
      size: {value: {get_attr: [data, size]}}
      display_name: {value: {get_attr: [data, display_name]}}
      metadata: {value: {get_attr: [data, metadata]}}
      metadata_values: {value: {get_attr: [data, metadata_values]}}
      attachments: {value: {get_attr: [data, attachments]}}
      show_size: {value: {get_attr: [data, show, size]}}
"""

ATTACHED = """\
    heat_template_version: 2018-08-31
    parameters:
      server: {type: string}
      size: {type: number, default: 1}
    resources:
      data:
        type: OS::Cinder::Volume
        properties: {size: {get_param: size}}
      attachment:
        type: OS::Cinder::VolumeAttachment
        properties:
          instance_uuid: {get_param: server}
          volume_id: {get_resource: data}
    outputs:
      volume: {value: {get_resource: data}}
      attachment: {value: {get_resource: attachment}}
      status: {value: {get_attr: [data, status]}}
      attachments: {value: {get_attr: [data, attachments]}}
      attachments_list: {value: {get_attr: [data, attachments_list]}}
"""

SNAPSHOT_POLICY = """\
    heat_template_version: 2018-08-31
    resources:
      data:
        type: OS::Cinder::Volume
        deletion_policy: Snapshot
        properties: {size: 1}
    outputs:
      id: {value: {get_resource: data}}
"""

ASSOCIATED = """\
    heat_template_version: 2018-08-31
    resources:
      net:
        type: OS::Neutron::Net
      subnet:
        type: OS::Neutron::Subnet
        properties: {network: {get_resource: net}, cidr: 10.78.0.0/24}
      router:
        type: OS::Neutron::Router
        properties: {external_gateway_info: {network: public}}
      interface:
        type: OS::Neutron::RouterInterface
        properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
      first:
        type: OS::Neutron::Port
        properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
      second:
        type: OS::Neutron::Port
        properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
      address:
        type: OS::Neutron::FloatingIP
        properties: {floating_network: public}
      association:
        type: OS::Neutron::FloatingIPAssociation
        depends_on: interface
        properties: {floatingip_id: {get_resource: address}, port_id: {get_resource: first}}
"""

WEB_IMAGE = """\
    heat_template_version: 2018-08-31
    parameters:
      url: {type: string}
      tags: {type: comma_delimited_list, default: first}
    resources:
      image:
        type: OS::Glance::WebImage
        properties:
          location: {get_param: url}
          disk_format: raw
          container_format: bare
          tags: {get_param: tags}
          extra_properties: {made_by: hotplay}
    outputs:
      id: {value: {get_resource: image}}
      status: {value: {get_attr: [image, show, status]}}
"""

BESIDE = """\
    heat_template_version: 2018-08-31
    parameters:
      server: {type: string}
      size: {type: number, default: 1}
      name: {type: string, default: data-a}
    resources:
      data:
        type: OS::Cinder::Volume
        properties:
          size: {get_param: size}
          name: {get_param: name}
          description: beside
          metadata: {tier: db}
      attachment:
        type: OS::Cinder::VolumeAttachment
        properties: {instance_uuid: {get_param: server}, volume_id: {get_resource: data}}
    outputs:
      ids: {value: {volume: {get_resource: data}, attachment: {get_resource: attachment}}}
      text:
        value: [{get_attr: [data, status]}, {get_attr: [data, size]}, {get_attr: [data, display_name]},
                {get_attr: [data, display_description]}, {get_attr: [data, metadata]},
                {get_attr: [data, bootable]}, {get_attr: [data, encrypted]},
                {get_attr: [data, multiattach]}, {get_attr: [data, volume_type]},
                {get_attr: [data, availability_zone]}, {get_attr: [data, snapshot_id]},
                {get_attr: [data, source_volid]}]
      metadata_values: {value: {get_attr: [data, metadata_values]}}
      attachments: {value: {get_attr: [data, attachments]}}
      attachments_list: {value: {get_attr: [data, attachments_list]}}
      show: {value: {get_attr: [data, show]}}
"""

MANY = """\
    heat_template_version: 2018-08-31
    resources:
      volumes:
        type: OS::Heat::ResourceGroup
        properties:
          count: 6
          resource_def: {type: OS::Cinder::Volume, properties: {size: 1}}
"""

FROM_IMAGE = """\
    heat_template_version: 2018-08-31
    parameters:
      image: {type: string, default: hotplay-tiny}
      type: {type: string, default: __DEFAULT__}
    resources:
      data:
        type: OS::Cinder::Volume
        properties: {size: 1, imageRef: {get_param: image}, volume_type: {get_param: type}}
    outputs:
      id: {value: {get_resource: data}}
      bootable: {value: {get_attr: [data, bootable]}}
"""


@pytest.fixture(scope="session")
def member(cloud_env: dict[str, str]) -> Any:
    """openstacksdk as the project member the stacks run as."""
    import openstack.config

    config = openstack.config.OpenStackConfig(config_files=[cloud_env["OS_CLIENT_CONFIG_FILE"]])
    return openstack.connection.Connection(config=config.get_one(cloud=MEMBER_CLOUD))


@pytest.fixture
def stacks(tmp_path: Path, run_tasks: Any, cloud_env: dict[str, str],
           member: Any) -> Iterator[Callable[..., Any]]:
    """``apply(name, template, **options)``: one hotplay.stacks.stack task as the
    member; every stack applied is deleted at the end."""
    applied: list[str] = []
    runs = [0]

    def apply(name: str, template: str, state: str = "present", check: bool = False,
              **options: Any) -> dict[str, Any]:
        path = tmp_path / f"{name}-{runs[0]}.yaml"
        path.write_text(textwrap.dedent(template))
        arguments: dict[str, Any] = {"name": name, "state": state, "cloud": MEMBER_CLOUD, **options}
        if state == "present":
            arguments["template"] = str(path)
            if name not in applied:
                applied.append(name)
        runs[0] += 1
        task: dict[str, Any] = {"name": "t", "register": "done", "hotplay.stacks.stack": arguments}
        if check:
            task["check_mode"] = True
        done = run_tasks([task], name=f"play{runs[0]}", env=cloud_env)
        result = done.results["done"]
        assert result is not None, done.stdout
        return dict(result)

    yield apply
    for name in reversed(applied):
        gone = apply(name, "", state="absent")
        assert not gone.get("failed"), gone.get("msg")


def stack_name() -> str:
    return f"c{uuid.uuid4().hex[:8]}"


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("failed"), result.get("msg")
    return result


def ids(result: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry["physical_id"] for entry in result["resources"]}


@pytest.fixture
def servers(member: Any) -> Iterator[Callable[[], Any]]:
    """``make()``: a server of the member's, on a network of its own (made with
    openstacksdk); all deleted at the end."""
    made: list[tuple[Any, Any]] = []

    def make() -> Any:
        tag = uuid.uuid4().hex[:8]
        net = member.network.create_network(name=f"cinder-test-{tag}")
        member.network.create_subnet(network_id=net.id, cidr="10.77.0.0/24", ip_version=4)
        flavor = member.compute.find_flavor("m1.tiny")
        image = member.image.find_image("hotplay-tiny")
        server = member.compute.create_server(name=f"cinder-test-{tag}", flavor_id=flavor.id,
                                              image_id=image.id, networks=[{"uuid": net.id}])
        made.append((server, net))
        return member.compute.wait_for_server(server, wait=300)

    yield make
    # Every server asked to go first, so one slow delete leaves nothing else behind.
    for server, _net in made:
        member.compute.delete_server(server, ignore_missing=True)
    for server, _net in made:
        member.compute.wait_for_delete(server, wait=300)
    for _server, net in made:
        # Neutron removes the server's port a moment after Nova says it is gone.
        wait_until(lambda: not [p for p in member.network.ports(network_id=net.id)
                                if str(p.device_owner).startswith("compute:")], timeout=240)
        member.network.delete_network(net)


@pytest.fixture
def server(servers: Callable[[], Any]) -> Any:
    return servers()


def test_a_volume_is_made_renamed_extended_and_deleted_by_id(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, VOLUME))
    outputs = made["outputs"]
    volume = member.block_storage.get_volume(outputs["id"])
    # Cinder's id, Heat's default name, the member's project.
    assert ids(made) == {"data": volume.id}
    assert volume.name.startswith(f"{name}-data-") and volume.description == "first"
    assert (volume.size, volume.status, volume.metadata) == (1, "available", {"tier": "db"})
    # Heat's shapes: most values as text, metadata as JSON text and as a map.
    assert (outputs["status"], outputs["size"], outputs["show_size"]) == ("available", "1", 1)
    assert outputs["display_name"] == volume.name
    assert outputs["metadata"] == '{"tier": "db"}' and outputs["metadata_values"] == {"tier": "db"}
    assert outputs["attachments"] == "[]"

    # A new name, description and size in place: the same volume.
    updated = ok(stacks(name, VOLUME, parameters={"size": 2, "name": f"{name}-mine",
                                                  "description": "second"}))
    assert ids(updated) == ids(made)
    volume = member.block_storage.get_volume(volume.id)
    assert (volume.name, volume.description, volume.size) == (f"{name}-mine", "second", 2)
    assert updated["outputs"]["size"] == "2"

    # Shrinking is refused, as Heat refuses it; the volume stays as it was.
    shrunk = stacks(name, VOLUME, parameters={"size": 1, "name": f"{name}-mine", "description": "second"})
    assert shrunk.get("failed") and "Shrinking volume is not supported." in shrunk["msg"]
    assert member.block_storage.get_volume(volume.id).size == 2

    ok(stacks(name, "", state="absent"))
    assert member.block_storage.find_volume(volume.id) is None


def test_a_volume_from_an_image_by_name_and_heats_constraint_messages(stacks: Any, member: Any) -> None:
    name = stack_name()
    # Checked against the cloud before anything is made, with Heat's words.
    refused = stacks(name, FROM_IMAGE, parameters={"type": "no-such-type"})
    assert refused.get("failed") and ("Property error: resources.data.properties.volume_type: Error "
                                      "validating value 'no-such-type': The VolumeType (no-such-type) "
                                      "could not be found.") in refused["msg"]
    refused = stacks(name, FROM_IMAGE, parameters={"image": "no-such-image"})
    assert refused.get("failed") and "Error validating value 'no-such-image': No images matching " \
        "{'name': 'no-such-image'}." in refused["msg"]
    assert not [v for v in member.block_storage.volumes() if v.name.startswith(f"{name}-")]
    # The hidden imageRef is Heat's image, by name.  Cinder makes a bootable volume
    # of it, or (this test cloud's fake back end cannot read images) puts it in
    # error: the create then fails with Heat's words and Cinder's own reason.
    made = stacks(name, FROM_IMAGE)
    image = member.image.find_image("hotplay-tiny")
    if made.get("failed"):
        volume = next(v for v in member.block_storage.volumes() if v.name.startswith(f"{name}-data-"))
        assert volume.status == "error"
        messages = member.block_storage.get("/messages", params={"resource_uuid": volume.id},
                                            microversion="3.3").json()["messages"]
        reason = next(iter(messages))["user_message"]
        assert f'ResourceInError: resources.data: Went to status error due to "{reason}"' in made["msg"]
        return
    volume = member.block_storage.get_volume(made["outputs"]["id"])
    assert volume.volume_image_metadata["image_id"] == image.id
    assert (volume.is_bootable, made["outputs"]["bootable"]) == (True, "true")


def test_a_volume_changed_behind_the_stack_is_drift_and_converge_puts_it_back(
        stacks: Any, member: Any, run_tasks: Any, cloud_env: dict[str, str]) -> None:
    name = stack_name()
    made = ok(stacks(name, VOLUME, parameters={"name": f"{name}-mine"}))
    ident = made["outputs"]["id"]
    member.block_storage.update_volume(ident, name=f"{name}-renamed", description="changed")
    done = run_tasks([{"name": "t", "register": "done", "hotplay.stacks.stack_info": {
        "name": name, "cloud": MEMBER_CLOUD, "drift": True}}], name="drift", env=cloud_env)
    report = done.results["done"]
    assert report["drifted"] == ["data"], report.get("drift")
    assert report["drift"]["data"]["changed_keys"] == ["name", "description"]
    ok(stacks(name, VOLUME, parameters={"name": f"{name}-mine"}, converge=True))
    volume = member.block_storage.get_volume(ident)
    assert (volume.name, volume.description) == (f"{name}-mine", "first")


@pytest.mark.cloud_alone  # reads Cinder's access log
def test_check_mode_writes_nothing_to_cinder(stacks: Any, member: Any) -> None:
    """Previews of a create and of an extend: Cinder sees reads only."""
    access = Path(os.environ["HOTPLAY_CLOUD_DIR"]) / "log" / "cinder.access"
    name = stack_name()

    def writes(mark: int) -> list[str]:
        return [line for line in cinder_requests(mark) if re.search(r" (POST|PUT|DELETE) ", line)]

    mark = access.stat().st_size
    preview = ok(stacks(name, VOLUME, check=True))
    assert preview["changed"] and preview["plan"]["added"] == ["data"]
    assert writes(mark) == []
    assert not [v for v in member.block_storage.volumes() if v.name.startswith(f"{name}-")]
    made = ok(stacks(name, VOLUME))
    mark = access.stat().st_size
    preview = ok(stacks(name, VOLUME, check=True, parameters={"size": 2}))
    assert (preview["plan"]["updated"], preview["plan"]["replaced"]) == (["data"], [])
    assert writes(mark) == []
    assert member.block_storage.get_volume(made["outputs"]["id"]).size == 1


def test_two_stacks_with_the_same_volume_name_keep_their_own(stacks: Any, member: Any) -> None:
    shared = f"same-{uuid.uuid4().hex[:6]}"
    first, second = stack_name(), stack_name()
    one = ok(stacks(first, VOLUME, parameters={"name": shared}))
    two = ok(stacks(second, VOLUME, parameters={"name": shared}))
    assert one["outputs"]["id"] != two["outputs"]["id"]
    assert len(list(member.block_storage.volumes(name=shared))) == 2
    # Deleting the first stack deletes its volume, by id: the second's stays, as it was.
    ok(stacks(first, "", state="absent"))
    left = list(member.block_storage.volumes(name=shared))
    assert [(v.id, v.status) for v in left] == [(two["outputs"]["id"], "available")]
    # And the second stack still updates its own volume.
    ok(stacks(second, VOLUME, parameters={"name": shared, "size": 2}))
    assert member.block_storage.get_volume(two["outputs"]["id"]).size == 2


def test_an_attached_volume_is_extended_in_place_and_detached_on_delete(
        stacks: Any, member: Any, server: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, ATTACHED, parameters={"server": server.id}))
    outputs = made["outputs"]
    volume = member.block_storage.get_volume(outputs["volume"])
    # Attached: Nova's attachment id is the volume's; the volume is in use by the server.
    assert outputs["attachment"] == volume.id
    assert volume.status == "in-use" and [a["server_id"] for a in volume.attachments] == [server.id]
    # status and attachments are read when asked (Heat's CACHE_NONE), in Heat's shapes.
    assert outputs["status"] == "in-use"
    assert isinstance(outputs["attachments"], str) and server.id in outputs["attachments"]
    assert [a["server_id"] for a in outputs["attachments_list"]] == [server.id]

    # Extended while attached, in place (Cinder 3.42+): same volume, still attached.
    extended = ok(stacks(name, ATTACHED, parameters={"server": server.id, "size": 2}))
    assert ids(extended) == ids(made)
    volume = member.block_storage.get_volume(volume.id)
    assert (volume.size, volume.status) == (2, "in-use")
    assert [a["server_id"] for a in volume.attachments] == [server.id]

    # The delete detaches first (the attachment depends on the volume), then deletes.
    ok(stacks(name, "", state="absent"))
    assert member.block_storage.find_volume(volume.id) is None
    assert list(member.compute.volume_attachments(server.id)) == []


def test_deletion_policy_snapshot_backs_the_volume_up_before_the_delete_as_heat_does(
        stacks: Any, member: Any, conn: Any, heat_client: Any) -> None:
    """Heat's ``Snapshot`` policy of a volume (handle_snapshot_delete): a Cinder
    backup, then the delete; the backup is kept.  A backup that fails fails the
    delete and keeps the volume.  This cloud has no cinder-backup service: Cinder
    marks the backup ``error``, and Heat beside fails the delete the same way."""
    backup_service = any(s.binary == "cinder-backup" for s in conn.block_storage.services())
    if not backup_service:
        # Each run leaves two backups in error that Cinder cannot delete without its
        # backup service: they must not use up the projects' backup quotas.
        for project in (member.current_project_id, conn.current_project_id):
            conn.block_storage.update_quota_set(project, backups=-1, backup_gigabytes=-1)
    name = stack_name()
    volume = ok(stacks(name, SNAPSHOT_POLICY))["outputs"]["id"]
    heat = HeatSide(heat_client, textwrap.dedent(SNAPSHOT_POLICY))
    heat_volume = heat.apply()["id"]
    try:
        deleted = stacks(name, "", state="absent")
        heat_client.delete(heat.name, heat.stack_id)
        heat_stack = heat_client.wait(heat.name, heat.stack_id, "DELETE")
        backups = [b for b in member.block_storage.backups() if b.volume_id == volume]
        heat_backups = [b for b in conn.block_storage.backups() if b.volume_id == heat_volume]
        if backup_service:
            ok(deleted)
            assert heat_stack["stack_status"] == "DELETE_COMPLETE"
            assert member.block_storage.find_volume(volume) is None
            assert [b.status for b in backups] == [b.status for b in heat_backups] == ["available"]
            return
        # The backup asked for first, as Heat asks for it; its failure fails the
        # delete with Heat's words (and Cinder's reason), and the volume is kept.
        assert [b.status for b in backups] == [b.status for b in heat_backups] == ["error"]
        assert deleted.get("failed") and heat_stack["stack_status"] == "DELETE_FAILED"
        heats = "Volume backup failed - Unknown status error due to "
        assert heats in heat_stack["stack_status_reason"] and heats in deleted["msg"]
        assert backups[0].fail_reason in deleted["msg"]
        assert member.block_storage.get_volume(volume).status == "available"
        assert conn.block_storage.get_volume(heat_volume).status == "available"
    finally:
        # Tidy up: the backups and the volumes go first, so each stack's delete
        # finds nothing to back up (NotFound, as Heat treats it) and completes.
        for backup in [*member.block_storage.backups(), *conn.block_storage.backups()]:
            if backup.volume_id in (volume, heat_volume):
                conn.block_storage.delete_backup(backup, ignore_missing=True)
        for ident in (volume, heat_volume):
            wait_until(lambda: not [b for b in conn.block_storage.backups(details=False, all_projects=True)
                                    if b.volume_id == ident])
            conn.block_storage.delete_volume(ident, ignore_missing=True)
            wait_until(lambda: conn.block_storage.find_volume(ident, all_projects=True) is None)
        heat.delete()


def test_a_floating_ip_association_moves_the_address_and_lets_it_go(stacks: Any, member: Any) -> None:
    name = stack_name()
    made = ok(stacks(name, ASSOCIATED))
    physical = ids(made)
    address = member.network.get_ip(physical["address"])
    # Heat's id of an association: a number of its own, not the floating IP's.
    assert physical["association"].isdigit() and address.port_id == physical["first"]

    # Another port: the same association and address, moved in place.
    moved = ok(stacks(name, ASSOCIATED.replace("port_id: {get_resource: first}",
                                               "port_id: {get_resource: second}")))
    assert ids(moved) == physical
    assert member.network.get_ip(address.id).port_id == physical["second"]

    # The association gone from the template: the address is let go, and kept.
    without = ASSOCIATED[:ASSOCIATED.index("      association:")]
    ok(stacks(name, without))
    assert member.network.get_ip(address.id).port_id is None
    ok(stacks(name, "", state="absent"))
    assert member.network.find_ip(address.id) is None


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A disk image served over HTTP from this machine: its URL, and the paths asked
    for.  Glance's web-download refuses loopback addresses and, by default, ports
    other than 80 and 443: the server listens on port 80 of this machine's own
    address."""
    (tmp_path / "disk.raw").write_bytes(bytes(range(256)) * 16)
    asked: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
            asked.append(self.path)

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect(("10.255.255.255", 1))  # no packet: only the route's source address
    address = probe.getsockname()[0]
    probe.close()
    server = http.server.ThreadingHTTPServer((address, 80), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{address}/disk.raw", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_web_image_is_imported_by_glance_from_its_url(stacks: Any, member: Any,
                                                        served: tuple[str, list[str]]) -> None:
    url, asked = served
    name = stack_name()
    made = ok(stacks(name, WEB_IMAGE, parameters={"url": url}))
    image = member.image.get_image(made["outputs"]["id"])
    # Glance fetched the data itself (web-download), and the image is active.
    assert asked == ["/disk.raw"] and made["outputs"]["status"] == "active"
    assert (image.status, image.size, image.disk_format, image.tags) == ("active", 4096, "raw", ["first"])
    assert image.properties.get("made_by") == "hotplay"
    # Tags change in place: the same image.
    retagged = ok(stacks(name, WEB_IMAGE, parameters={"url": url, "tags": "second,third"}))
    assert ids(retagged) == ids(made)
    assert sorted(member.image.get_image(image.id).tags) == ["second", "third"]
    ok(stacks(name, "", state="absent"))
    assert member.image.find_image(image.id) is None


PATCHED_IMAGE = """\
    heat_template_version: 2018-08-31
    parameters:
      url: {type: string}
      visibility: {type: string, default: private}
      protected: {type: boolean, default: false}
      extra: {type: json, default: {made_by: hotplay}}
    resources:
      image:
        type: OS::Glance::WebImage
        properties:
          location: {get_param: url}
          disk_format: raw
          container_format: bare
          visibility: {get_param: visibility}
          protected: {get_param: protected}
          extra_properties: {get_param: extra}
    outputs:
      id: {value: {get_resource: image}}
"""


def test_a_web_images_visibility_protection_and_properties_change_in_place(
        stacks: Any, member: Any, served: tuple[str, list[str]]) -> None:
    """Heat's JSON patch of the image (Glance's own content type): the same image,
    each property as the template says; an extra property taken out is removed."""
    url, _asked = served
    name = stack_name()
    made = ok(stacks(name, PATCHED_IMAGE, parameters={"url": url}))
    image_id = made["outputs"]["id"]
    changed = ok(stacks(name, PATCHED_IMAGE, parameters={
        "url": url, "visibility": "community", "protected": True, "extra": {"made_by": "hotplay", "tier": "gold"}}))
    assert ids(changed) == ids(made)
    image = member.image.get_image(image_id)
    assert (image.visibility, image.is_protected) == ("community", True)
    assert (image.properties.get("made_by"), image.properties.get("tier")) == ("hotplay", "gold")
    # Back to private and unprotected (the delete needs it), made_by taken out.
    back = ok(stacks(name, PATCHED_IMAGE, parameters={"url": url, "extra": {"tier": "gold"}}))
    assert ids(back) == ids(made)
    image = member.image.get_image(image_id)
    assert (image.visibility, image.is_protected, image.status) == ("private", False, "active")
    assert "made_by" not in image.properties and image.properties.get("tier") == "gold"
    ok(stacks(name, "", state="absent"))
    assert member.image.find_image(image_id) is None


@pytest.fixture
def member_heat(heat_on_the_cloud: Any, member: Any) -> Any:
    """Heat's API for the member's project, with the member's token."""
    from heat_peer import HeatClient

    return HeatClient(f"{heat_on_the_cloud.url}/{member.current_project_id}", poll=0.5,
                      timeout=300, token=member.auth_token)


# What differs between any two volumes, whoever makes them (and the device: both
# sides' volumes are attached to one server, so Nova gives them the next two).
VOLATILE = {"id", "created_at", "updated_at", "attached_at", "attachment_id", "links",
            "os-vol-host-attr:host", "host_name", "device"}


def beside_described(member: Any, stack: str, outputs: dict[str, Any], server: Any) -> dict[str, Any]:
    """The outputs with ids and names as labels (the text of ``attachments`` read as
    the Python text it is), and the volume as Cinder has it."""
    labels = Labels(stack)
    volume = member.block_storage.get_volume(outputs["ids"]["volume"])
    labels.known(volume.id, volume.name)
    labels.by_id[server.id] = "SERVER"

    def comparable(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: comparable(item) for key, item in value.items() if key not in VOLATILE}
        if isinstance(value, list):
            return [comparable(item) for item in value]
        return labels.value(value)

    shown = {key: comparable(value) for key, value in outputs.items() if key != "attachments"}
    assert isinstance(outputs["attachments"], str)
    shown["attachments"] = comparable(ast.literal_eval(outputs["attachments"]))
    shown["ids"] = {"attachment is the volume": outputs["ids"]["attachment"] == volume.id}
    return {"outputs": shown,
            "volume": {"size": volume.size, "status": volume.status, "name": labels.value(volume.name),
                       "attached to": [labels.value(a["server_id"]) for a in volume.attachments]}}


def test_an_attached_volume_beside_heat_renamed_and_extended_in_place(
        stacks: Any, member: Any, member_heat: Any, servers: Callable[[], Any]) -> None:
    """The same template through Heat and hotplay, as the same project member, each
    attaching its volume to one server: the same attributes (text where Heat gives text,
    ``status`` and ``attachments`` as Cinder has them now), the same volume after a
    rename and an extend of the attached volume (in place on both sides), nothing
    left after the delete."""
    # One server for both sides (a server holds several volumes): the project's
    # instance quota is shared with the other tests on the cloud.
    heat_server = hotplay_server = servers()
    heat = HeatSide(member_heat, textwrap.dedent(BESIDE))
    name = stack_name()
    try:
        for parameters in ({}, {"size": "2", "name": "data-b"}):
            heat_outputs = heat.apply(server=heat_server.id, **parameters)
            hotplay_outputs = ok(stacks(name, BESIDE, parameters={"server": hotplay_server.id,
                                                                  **parameters}))["outputs"]
            found = differences(beside_described(member, heat.name, heat_outputs, heat_server),
                                beside_described(member, name, hotplay_outputs, hotplay_server))
            assert not found, "Heat and hotplay differ:\n" + "\n".join(found)
            if not parameters:
                first = (heat_outputs["ids"], hotplay_outputs["ids"])
        # In place on both sides: the same volume and attachment.
        assert (heat_outputs["ids"], hotplay_outputs["ids"]) == first
        assert member.block_storage.get_volume(hotplay_outputs["ids"]["volume"]).size == 2
    finally:
        heat.delete()
    ok(stacks(name, "", state="absent"))
    for ids_of in (heat_outputs["ids"], hotplay_outputs["ids"]):
        assert member.block_storage.find_volume(ids_of["volume"]) is None


def cinder_requests(since: int) -> list[str]:
    """Cinder's access log (tests/cloud/cloud.py) from byte ``since`` on."""
    time.sleep(0.5)  # the line is written after the answer
    with open(Path(os.environ["HOTPLAY_CLOUD_DIR"]) / "log" / "cinder.access", "rb") as log:
        log.seek(since)
        return log.read().decode().splitlines()


@pytest.mark.cloud_alone  # reads Cinder's access log
def test_the_waits_of_many_volumes_share_their_polls(stacks: Any) -> None:
    """Six volumes (a group: nested stacks, the run's one session) made and deleted:
    their waits for ``available`` and for their deletion are list calls of the
    project's volumes, shared; the create reads no single volume.  The figures are
    printed (``-s``): how many list calls the waits took."""
    access = Path(os.environ["HOTPLAY_CLOUD_DIR"]) / "log" / "cinder.access"
    name = stack_name()
    for state in ("present", "absent"):
        mark = access.stat().st_size
        began = time.monotonic()
        ok(stacks(name, MANY if state == "present" else "", state=state))
        took = time.monotonic() - began
        lines = cinder_requests(mark)
        lists = sum(1 for line in lines if " GET /volumes/detail " in line)
        shows = sum(1 for line in lines if re.search(r" GET /volumes/[0-9a-f-]{36} ", line))
        writes = sum(1 for line in lines if re.search(r" (POST|DELETE) /volumes", line))
        print(f"{state}: 6 volumes, {writes} writes, {lists} shared list polls, {shows} single "
              f"volume reads, {took:.1f} s")
        # Every wait is a list call of the project's volumes, never a read of one
        # volume (a delete first reads its volume, as Heat's does).
        assert writes == 6 and lists >= 1
        assert shows == (0 if state == "present" else 6)


def wait_until(check: Callable[[], bool], timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.5)
    return check()
