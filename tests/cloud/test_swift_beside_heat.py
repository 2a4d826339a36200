# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Swift's types and Heat's signals through Swift side by side with the real Heat
engine on the test cloud (the cloud's admin project, for both): an
``OS::Swift::Container``, an ``AWS::S3::Bucket``, an ``OS::Heat::SwiftSignalHandle``
whose ``curl_cli`` is run as a server's user_data would run it (the fake virt
driver runs none: the test does), an ``OS::Heat::SwiftSignal`` counting those
signals, a ``TEMP_URL_SIGNAL`` wait condition released by a PUT to its handle's
``alarm_url``, a SwiftSignal that times out, and the delete.  The same template and
steps give the same statuses, reasons, attributes and outputs (the temporary URLs
alike but for the stack's own names and the signature), the same containers'
headers in Swift, and nothing of either stack in Swift after its delete.  Two
defects of Heat 27's are pinned where they show (the test says which): its
container URLs read before its Swift client's first request, and its
TEMP_URL_SIGNAL wait condition failing on its own first object.

hotplay's side runs through real ansible-playbook."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      waits: {type: boolean, default: false}
      too_few: {type: boolean, default: false}
      with_wc: {type: boolean, default: false}
    conditions:
      waiting: {get_param: waits}
      late_wait: {get_param: too_few}
      wc_waiting: {get_param: with_wc}
    resources:
      files:
        type: OS::Swift::Container
        properties:
          X-Container-Meta: {tier: web}
          X-Container-Read: ".r:*"
          PurgeOnDelete: true
      bucket:
        type: AWS::S3::Bucket
        properties:
          AccessControl: PublicRead
          Tags: [{Key: env, Value: test}]
      handle:
        type: OS::Heat::SwiftSignalHandle
      signal:
        type: OS::Heat::SwiftSignal
        condition: waiting
        properties: {handle: {get_resource: handle}, timeout: 60, count: 2}
      wc_handle:
        type: OS::Heat::WaitConditionHandle
        properties: {signal_transport: TEMP_URL_SIGNAL}
      wc:
        type: OS::Heat::WaitCondition
        condition: wc_waiting
        properties: {handle: {get_resource: wc_handle}, timeout: 60}
      late:
        type: OS::Heat::SwiftSignal
        condition: late_wait
        properties: {handle: {get_resource: handle}, timeout: 3, count: 3}
    outputs:
      curl_cli: {value: {get_attr: [handle, curl_cli]}}
      endpoint: {value: {get_attr: [handle, endpoint]}}
      token: {value: {get_attr: [handle, token]}}
      handle_ref: {value: {get_resource: handle}}
      wc_signal: {value: {get_attr: [wc_handle, signal]}}
      wc_curl_cli: {value: {get_attr: [wc_handle, curl_cli]}}
      files_domain: {value: {get_attr: [files, DomainName]}}
      files_root: {value: {get_attr: [files, RootURL]}}
      files_url: {value: {get_attr: [files, WebsiteURL]}}
      files_count: {value: {get_attr: [files, ObjectCount]}}
      files_bytes: {value: {get_attr: [files, BytesUsed]}}
      bucket_domain: {value: {get_attr: [bucket, DomainName]}}
      bucket_url: {value: {get_attr: [bucket, WebsiteURL]}}
      signal_data:
        condition: waiting
        value: {get_attr: [signal, data]}
      wc_data:
        condition: wc_waiting
        value: {get_attr: [wc, data]}
"""
# The signals a server's user_data would send with the handles' commands.
TO_THE_HANDLE = ['{"id": "a", "data": "one"}', '{"data": "two"}']
# The outputs Heat 27 reads from its Swift client's URL.
URL_OUTPUTS = ("files_root", "files_url", "files_domain", "bucket_url", "bucket_domain")
TO_THE_WAIT_CONDITION = '{"status": "SUCCESS", "data": "ok"}'
TEMP_URL = re.compile(r"(https?://[^/]+/v1/AUTH_[0-9a-f]+/)([^/]+)/([^?]+)\?temp_url_sig=([0-9a-f]{64})"
                      r"&temp_url_expires=(\d+)")


def run_as_user_data(command: str, body: str) -> None:
    """``<command> --data-binary '<body>'`` in a shell, as a server's script runs it."""
    completed = subprocess.run(["sh", "-c", f"{command} --data-binary '{body}'"], capture_output=True,
                               text=True, timeout=60, check=False)
    assert completed.returncode == 0 and " 201 " in completed.stdout, completed.stdout + completed.stderr


def normalised(value: Any, stack_id: str, stack_name: str) -> Any:
    """A value with what differs between the two stacks by design put in words:
    the stack's id (the signal container) and name (physical names), a URL's
    signature, a name's random suffix."""
    if isinstance(value, dict):
        return {k: normalised(v, stack_id, stack_name) for k, v in value.items()}
    if not isinstance(value, str):
        return value

    def url(found: re.Match[str]) -> str:
        expires = int(found.group(5))
        assert abs(expires - (2**31 - 1 - 60)) <= 1, expires  # Heat's: 2038, less a minute
        return f"{found.group(1)}{found.group(2)}/{found.group(3)}?temp_url_sig=SIG&temp_url_expires=EXPIRES"

    value = TEMP_URL.sub(url, value)
    value = value.replace(stack_id, "STACK_ID").replace(stack_name, "STACK")
    return re.sub(r"-[a-z0-9]{12}\b", "-RANDOM", value)


def with_heats_url_defect_seen(key: str, heats: Any, mine: Any, account: str) -> Any:
    """Heat 27's container and bucket URLs read its Swift client's ``url``, which is
    None until that client's first request: an output resolved before it in a show is
    "b''://b''b''" (urlparse of None), or null for a DomainName (a bytes split fails).
    Where Heat gave that, the test checks ours against what Heat's documentation says
    the attribute is (the account's URL as the catalog gives it, the container's
    under it, the host of it) and takes ours."""
    broken = heats is None or (isinstance(heats, str) and heats.startswith("b''"))
    if not broken or key not in URL_OUTPUTS:
        return heats
    documented = {"files_root": account, "files_domain": urlparse(account).hostname,
                  "bucket_domain": urlparse(account).hostname}
    if key in documented:
        assert mine == documented[key], (key, mine)
    else:
        assert isinstance(mine, str) and mine.startswith(f"{account}/STACK-"), (key, mine)
    return mine


class Side:
    """One stack of TEMPLATE, by Heat or by hotplay; ``apply`` returns its status
    and reason, ``outputs`` and ``stack_id`` what they are after it."""

    name: str
    stack_id: str = ""
    containers: dict[str, Any] = {}

    def apply(self, parameters: dict[str, Any]) -> tuple[str, str]:
        raise NotImplementedError

    def outputs(self) -> dict[str, Any]:
        raise NotImplementedError

    def delete(self) -> str:
        raise NotImplementedError


class InHeat(Side):
    def __init__(self, heat: Any, template: str) -> None:
        self.heat, self.template = heat, template
        self.name = f"sw{uuid.uuid4().hex[:6]}"
        self.base = ""

    def apply(self, parameters: dict[str, Any]) -> tuple[str, str]:
        body = {"template": self.template, "parameters": parameters}
        if not self.base:
            made = self.heat.call("POST", "/stacks", {"stack_name": self.name, "disable_rollback": True, **body})
            self.stack_id = made["stack"]["id"]
            self.base = f"/stacks/{self.name}/{self.stack_id}"
        else:
            self.heat.call("PUT", self.base, body)
            self._until(lambda status: status.startswith("UPDATE_"))
        shown = self._until(lambda status: not status.endswith("IN_PROGRESS"))
        return shown["stack_status"], shown["stack_status_reason"]

    def _until(self, done: Any) -> Any:
        deadline = time.monotonic() + 240
        while True:
            shown = self.heat.call("GET", self.base)["stack"]
            if done(shown["stack_status"]):
                return shown
            assert time.monotonic() < deadline, shown["stack_status"]
            time.sleep(0.5)

    def outputs(self) -> dict[str, Any]:
        # Heat resolves outputs at each show.  Its Swift client learns the account's
        # URL with its first request: a container's RootURL and WebsiteURL resolved
        # before then are "b''://b''b''" (Heat 27's urlparse of None); the second
        # show reads them as documented.
        self.heat.call("GET", self.base)
        shown = self.heat.call("GET", self.base)["stack"]
        return {o["output_key"]: o.get("output_value") for o in shown.get("outputs") or []}

    def delete(self) -> str:
        self.heat.call("DELETE", self.base)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            listed = self.heat.call("GET", f"/stacks?id={self.stack_id}&show_deleted=True")["stacks"]
            if listed and listed[0]["stack_status"] in ("DELETE_COMPLETE", "DELETE_FAILED"):
                return str(listed[0]["stack_status"])
            time.sleep(0.5)
        raise AssertionError("Heat's delete did not end")


class Here(Side):
    def __init__(self, run_tasks: Any, cloud_env: dict[str, str], template: Path) -> None:
        self.run_tasks, self.env, self.template = run_tasks, cloud_env, template
        self.name = f"sw{uuid.uuid4().hex[:6]}"
        self.last: dict[str, Any] = {}
        self.runs = 0

    def _task(self, **options: Any) -> dict[str, Any]:
        self.runs += 1
        return {"hotplay.stacks.stack": {"name": self.name, "cloud": "hotplay", **options}, "register": "done"}

    def apply(self, parameters: dict[str, Any]) -> tuple[str, str]:
        task = self._task(template=str(self.template), parameters=parameters, rollback_on_failure=False)
        self.last = self.run_tasks([task], name=f"apply{self.runs}", env=self.env).results["done"]
        self.stack_id = self.last["stack_id"]
        return self.last["stack_status"], self.last["stack_status_reason"]

    def outputs(self) -> dict[str, Any]:
        return dict(self.last["outputs"])

    def delete(self) -> str:
        gone = self.run_tasks([self._task(state="absent")], name="delete", env=self.env).results["done"]
        assert not gone.get("failed"), gone.get("msg")
        return str(gone["stack_status"])


def steps(side: Side, conn: Any, before: set[str]) -> list[Any]:
    """The create, the signals, the waits, the time-out, the TEMP_URL_SIGNAL wait
    condition: what each gave."""
    seen: list[Any] = [side.apply({})]
    made = side.outputs()
    for body in TO_THE_HANDLE:
        run_as_user_data(made["curl_cli"], body)
    alarm_url = json.loads(made["wc_signal"])["alarm_url"]
    run_as_user_data(f"curl -i -X PUT '{alarm_url}'", TO_THE_WAIT_CONDITION)
    seen += [made, side.apply({"waits": True}), side.outputs(), side.apply({"waits": True, "too_few": True})]
    # What the stack holds in Swift, before the step where Heat's defect shows.
    side.containers = {normalised(name, side.stack_id, side.name): normalised(shown, side.stack_id, side.name)
                       for name, shown in in_swift(conn).items() if name not in before}
    seen += [side.apply({"waits": True, "with_wc": True}), side.outputs().get("wc_data")]
    return [normalised(step, side.stack_id, side.name) for step in seen]


def in_swift(conn: Any) -> dict[str, dict[str, Any]]:
    """The account's containers, each with what describes it: its ACLs, metadata,
    versions location and object count."""
    found = {}
    for listed in conn.object_store.containers():
        shown = conn.object_store.get_container_metadata(listed.name)
        found[listed.name] = {"read": shown.read_ACL, "write": shown.write_ACL,
                              "metadata": dict(shown.metadata or {}),
                              "versions": shown.versions_location, "objects": shown.object_count}
    return found


@pytest.mark.slow(120)
def test_swift_types_and_signals_as_in_heat(heat_client: Any, run_tasks: Any, cloud_env: dict[str, str],
                                            conn: Any, tmp_path: Path) -> None:
    template = tmp_path / "swift.yaml"
    template.write_text(textwrap.dedent(TEMPLATE))
    heat, here = InHeat(heat_client, template.read_text()), Here(run_tasks, cloud_env, template)
    before = set(in_swift(conn))
    try:
        theirs = steps(heat, conn, before)
    finally:
        heats_delete = heat.delete() if heat.base else None
    try:
        ours = steps(here, conn, before)
    finally:
        our_delete = here.delete() if here.stack_id else None

    account = conn.object_store.get_endpoint().rstrip("/")
    labels = ["create", "outputs", "waits", "outputs after", "late"]
    for label, mine, heats in zip(labels, ours, theirs[:len(labels)]):
        if isinstance(heats, dict):
            heats = {key: with_heats_url_defect_seen(key, value, mine.get(key), account)
                     for key, value in heats.items()}
        assert mine == heats, f"{label}: ours {mine!r}, Heat's {heats!r}"
    assert theirs[2][0] == "UPDATE_COMPLETE" and theirs[4][0] == "UPDATE_FAILED", theirs
    # The TEMP_URL_SIGNAL wait condition, released by the PUT to its alarm_url: here
    # as Heat's documentation says.  Heat 27 fails it on its own first object (it
    # compares Swift's bytes with the text "in progress", then parses them as JSON):
    # a defect of Heat's, pinned so that this test tells when Heat's behaviour changes.
    assert ours[5] == ("UPDATE_COMPLETE", "Stack UPDATE completed successfully") and ours[6] == '{"1": "ok"}'
    assert theirs[5] == ("UPDATE_FAILED", "Resource CREATE failed: Error: resources.wc: "
                                          "Failed to parse JSON data: b'in progress'"), theirs[5]
    assert here.containers == heat.containers
    assert (our_delete, heats_delete) == ("DELETE_COMPLETE", "DELETE_COMPLETE")
    assert set(in_swift(conn)) == before, "left in Swift after the deletes"
