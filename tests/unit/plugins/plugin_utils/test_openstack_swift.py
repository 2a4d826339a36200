# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Swift's types and Heat's signals through Swift (resources/openstack/swift.py, and
TEMP_URL_SIGNAL in resources/wait_condition.py) against an in-memory Swift account
that versions objects as Swift's legacy ``X-Versions-Location`` does (a mock, for
speed: what they do on a real Swift, beside the real Heat, is
tests/cloud/test_swift_beside_heat.py): the calls made and refused, Heat's signal
merging and messages, the temporary URL as Swift's tempurl checks it."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations import engine
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack import swift
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.session import (
    CloudFailure,
    ObjectAnswer,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

ACCOUNT = "http://swift.example:8080/v1/AUTH_0123456789abcdef0123456789abcdef"
PROJECT = "0123456789abcdef0123456789abcdef"


class FakeSwift:
    """One Swift account: containers of objects, legacy versioning, account metadata."""

    project_id = PROJECT
    cloud = "fake"  # the task's clouds.yaml entry

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.meta: dict[str, str] = {}
        self.containers: dict[str, dict[str, Any]] = {}
        self.sent: list[tuple[str, str]] = []
        self.clock = 0

    def endpoint(self, service: str) -> str:
        assert service == "object_store"
        return ACCOUNT

    def identity_names(self) -> tuple[str, str]:
        return "demo", "alice"

    def remember(self, key: Any, compute: Any) -> Any:
        return compute()

    def has_service(self, service_type: str) -> bool:
        return service_type == "object-store"

    def login(self) -> None:
        pass

    def limit(self, seconds: float, cancel: Any = None) -> None:
        pass

    used = True

    def object_request(self, method: str, path: str, headers: Mapping[str, str] | None = None,
                       data: bytes | None = None, params: Any = None) -> ObjectAnswer:
        with self.lock:
            self.sent.append((method, path))
            parts = [unquote(p) for p in path.strip("/").split("/", 1)] if path.strip("/") else []
            headers = {k.lower(): v for k, v in (headers or {}).items()}
            if not parts:
                return self._account(method, headers)
            if len(parts) == 1:
                return self._container(method, parts[0], headers)
            return self._object(method, parts[0], parts[1], data or b"")

    def _account(self, method: str, headers: dict[str, str]) -> ObjectAnswer:
        if method == "POST":
            self.meta.update(headers)
            return ObjectAnswer(204, {}, b"")
        return ObjectAnswer(204, dict(self.meta), b"")

    def _container(self, method: str, name: str, headers: dict[str, str]) -> ObjectAnswer:
        container = self.containers.get(name)
        if method == "PUT":
            if container is not None:
                container["headers"].update(headers)
                return ObjectAnswer(202, {}, b"")
            self.containers[name] = {"headers": headers, "objects": {}}
            return ObjectAnswer(201, {}, b"")
        if container is None:
            raise CloudFailure("<html><h1>Not Found</h1></html>", 404)
        if method == "DELETE":
            if container["objects"]:
                raise CloudFailure("There was a conflict when trying to complete your request.", 409)
            del self.containers[name]
            return ObjectAnswer(204, {}, b"")
        if method == "HEAD":
            sizes = [len(body) for body in container["objects"].values()]
            return ObjectAnswer(204, {**container["headers"], "x-container-object-count": str(len(sizes)),
                                      "x-container-bytes-used": str(sum(sizes))}, b"")
        listing = [{"name": key} for key in sorted(container["objects"])]
        return ObjectAnswer(200, {}, json.dumps(listing).encode())

    def _object(self, method: str, name: str, obj: str, data: bytes) -> ObjectAnswer:
        container = self.containers.get(name)
        if container is None:
            raise CloudFailure("Not Found", 404)
        objects = container["objects"]
        versions = container["headers"].get("x-versions-location") == name
        prefix = f"{len(obj):03x}{obj}/"
        if method == "PUT":
            if versions and obj in objects:
                self.clock += 1
                objects[f"{prefix}{self.clock:010d}"] = objects[obj]
            objects[obj] = data
            return ObjectAnswer(201, {}, b"")
        if obj not in objects:
            raise CloudFailure("Not Found", 404)
        if method == "GET":
            return ObjectAnswer(200, {}, objects[obj])
        del objects[obj]  # DELETE: the newest version, if any, comes back
        older = sorted(key for key in objects if key.startswith(prefix))
        if versions and older:
            objects[obj] = objects.pop(older[-1])
        return ObjectAnswer(204, {}, b"")

    def put_signal(self, url: str, body: str) -> None:
        """What a server's ``curl -X PUT '<url>' --data-binary '<body>'`` does, with
        the signature checked as Swift's tempurl middleware checks it."""
        parsed = urlparse(url)
        query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
        key = self.meta["x-account-meta-temp-url-key"]
        expected = hmac.new(key.encode(), f"PUT\n{query['temp_url_expires']}\n{parsed.path}".encode(),
                            hashlib.sha256).hexdigest()
        assert hmac.compare_digest(expected, query["temp_url_sig"]), "Swift would answer 401"
        assert f"{parsed.scheme}://{parsed.netloc}{parsed.path}".startswith(ACCOUNT + "/")
        self.object_request("PUT", parsed.path[len(urlparse(ACCOUNT).path):], data=body.encode())


@pytest.fixture
def cloud(monkeypatch: pytest.MonkeyPatch) -> FakeSwift:
    fake = FakeSwift()

    @contextlib.contextmanager
    def session(_cloud: str | None) -> Iterator[FakeSwift]:
        yield fake

    monkeypatch.setattr(engine, "cloud_session", session)
    return fake


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 's.db'}"


def _delete(url: str) -> dict[str, Any]:
    store = open_store(url)
    try:
        return delete_stack(store, DeleteRequest(name="s", cloud="fake"), "job").as_dict()
    finally:
        store.close()


def _apply(url: str, template: Path, **parameters: Any) -> dict[str, Any]:
    store = open_store(url)
    try:
        return apply_stack(store, ApplyRequest(name="s", template=str(template), parameters=parameters,
                                               cloud="fake"), "job").as_dict()
    finally:
        store.close()


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    return path


CONTAINERS = """\
heat_template_version: 2018-08-31
parameters:
  purge: {type: boolean, default: false}
  name: {type: string, default: ""}
resources:
  files:
    type: OS::Swift::Container
    properties:
      name: {get_param: name}
      X-Container-Read: ".r:*"
      X-Container-Meta: {tier: web}
      X-Account-Meta: {owner: ops}
      PurgeOnDelete: {get_param: purge}
  bucket:
    type: AWS::S3::Bucket
    properties: {AccessControl: AuthenticatedRead, Tags: [{Key: env, Value: test}]}
outputs:
  id: {value: {get_resource: files}}
  domain: {value: {get_attr: [files, DomainName]}}
  root: {value: {get_attr: [files, RootURL]}}
  url: {value: {get_attr: [files, WebsiteURL]}}
  count: {value: {get_attr: [files, ObjectCount]}}
  bucket_url: {value: {get_attr: [bucket, WebsiteURL]}}
"""


def test_a_container_and_a_bucket_are_made_with_heats_headers_and_attributes(
        cloud: FakeSwift, store_url: str, tmp_path: Path) -> None:
    made = _apply(store_url, _write(tmp_path, CONTAINERS))
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    outputs = made["outputs"]
    name = outputs["id"]
    assert name.startswith("s-files-") and len(name) == len("s-files-") + 12
    assert cloud.containers[name]["headers"] == {"x-container-read": ".r:*", "x-container-meta-tier": "web"}
    assert cloud.meta["x-account-meta-owner"] == "ops"
    assert outputs["domain"] == "swift.example" and outputs["root"] == ACCOUNT
    assert outputs["url"] == f"{ACCOUNT}/{name}" and outputs["count"] == "0"
    bucket = outputs["bucket_url"].rsplit("/", 1)[1]
    assert cloud.containers[bucket]["headers"] == {
        "x-container-meta-s3-tag-env": "test", "x-container-read": "demo", "x-container-write": "demo:alice"}


def test_a_rerun_that_changes_nothing_reads_the_outputs_again(
        cloud: FakeSwift, store_url: str, tmp_path: Path) -> None:
    """Heat's update that changes nothing resolves the outputs again: an attribute
    read from the cloud says what is there now, in the task's result and the store."""
    template = _write(tmp_path, CONTAINERS)
    name = _apply(store_url, template)["outputs"]["id"]
    cloud.object_request("PUT", f"/{name}/index.html", data=b"<html/>")  # behind the stack
    again = _apply(store_url, template)
    assert not again["changed"] and again["stack_status"] == "CREATE_COMPLETE"
    assert again["outputs"]["count"] == "1"
    store = open_store(store_url)
    try:
        stack = store.find_stack("s")
        assert stack is not None and stack.outputs["count"] == "1"
        assert len(store.revisions(stack.id)) == 1, "no revision: nothing was applied"
    finally:
        store.close()
    # Nothing read differs: nothing is written (the stack's lease is not taken).
    sent = len(cloud.sent)
    assert _apply(store_url, template)["outputs"]["count"] == "1"
    assert [call for call in cloud.sent[sent:] if call[0] != "HEAD"] == []

    # Another job holds the stack: the task still says what is there now, and
    # leaves the store to that job's run.
    cloud.object_request("PUT", f"/{name}/more.html", data=b"<html/>")
    store = open_store(store_url)
    try:
        store.acquire_lock("s", "another job")
        assert _apply(store_url, template)["outputs"]["count"] == "2"
        stack = store.find_stack("s")
        assert stack is not None and stack.outputs["count"] == "1"
    finally:
        store.close()


def test_a_container_with_objects_is_kept_unless_purge_on_delete(
        cloud: FakeSwift, store_url: str, tmp_path: Path) -> None:
    template = _write(tmp_path, CONTAINERS)
    name = _apply(store_url, template)["outputs"]["id"]
    cloud.object_request("PUT", f"/{name}/index.html", data=b"<html/>")
    refused = _delete(store_url)
    assert refused["stack_status"] == "DELETE_FAILED"
    assert (f"ResourceActionNotSupported: resources.files: Deleting non-empty container ({name}) "
            "when PurgeOnDelete is False is not supported for resource.") in refused["stack_status_reason"]
    assert name in cloud.containers

    # Any change replaces a container (Heat: no property updates in place); the new
    # one purges its objects when deleted.
    replaced = _apply(store_url, template, purge=True)
    assert replaced["stack_status"] == "UPDATE_FAILED", "the old one still holds its object"
    cloud.object_request("DELETE", f"/{name}/index.html")
    replaced = _apply(store_url, template, purge=True)
    assert replaced["stack_status"] == "UPDATE_COMPLETE", replaced["stack_status_reason"]
    new = replaced["outputs"]["id"]
    assert new != name and name not in cloud.containers
    cloud.object_request("PUT", f"/{new}/a", data=b"1")
    gone = _delete(store_url)
    assert gone["stack_status"] == "DELETE_COMPLETE", gone["stack_status_reason"]
    assert cloud.containers == {}


def test_a_container_name_that_exists_is_not_taken_over(cloud: FakeSwift, store_url: str, tmp_path: Path) -> None:
    cloud.object_request("PUT", "/theirs")
    cloud.object_request("PUT", "/theirs/data", data=b"kept")
    failed = _apply(store_url, _write(tmp_path, CONTAINERS), name="theirs", purge=True)
    assert failed["stack_status"] == "CREATE_FAILED"
    assert "Conflict: resources.files: Container theirs already exists" in failed["stack_status_reason"]
    files = next(r for r in failed["resources"] if r["name"] == "files")
    assert files["physical_id"] == ""  # not this stack's: its delete leaves it
    _delete(store_url)
    assert cloud.containers["theirs"]["objects"] == {"data": b"kept"}


SIGNALS = """\
heat_template_version: 2018-08-31
parameters:
  count: {type: number, default: 2}
  timeout: {type: number, default: 20}
resources:
  handle:
    type: OS::Heat::SwiftSignalHandle
  wait:
    type: OS::Heat::SwiftSignal
    properties: {handle: {get_resource: handle}, count: {get_param: count}, timeout: {get_param: timeout}}
  wc_handle:
    type: OS::Heat::WaitConditionHandle
    properties: {signal_transport: TEMP_URL_SIGNAL}
  wc:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: wc_handle}, timeout: {get_param: timeout}}
outputs:
  data: {value: {get_attr: [wait, data]}}
  wc_data: {value: {get_attr: [wc, data]}}
  curl_cli: {value: {get_attr: [handle, curl_cli]}}
  token: {value: {get_attr: [handle, token]}}
  wc_signal: {value: {get_attr: [wc_handle, signal]}}
"""


def _when_waiting(cloud: FakeSwift, send: Any) -> threading.Thread:
    """``send(handle_url, wc_url)`` once both signal objects exist (the waits run)."""
    def run() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with cloud.lock:
                containers = list(cloud.containers.values())
            if containers and len(containers[0]["objects"]) >= 2 and "x-account-meta-temp-url-key" in cloud.meta:
                break
            time.sleep(0.05)
        time.sleep(0.3)  # the URLs are signed after the objects are made
        send()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _urls(cloud: FakeSwift) -> tuple[str, str]:
    """The two signal objects' temporary URLs, as the handles sign them."""
    (container,) = cloud.containers
    handle = next(n for n in cloud.containers[container]["objects"] if "-handle-" in n and "/" not in n)
    wc = next(n for n in cloud.containers[container]["objects"] if "-wc_handle-" in n and "/" not in n)
    return swift.temp_url(cloud, container, handle), swift.temp_url(cloud, container, wc)  # type: ignore[arg-type]


def test_signals_put_to_the_temporary_urls_release_the_waits_with_heats_data(
        cloud: FakeSwift, store_url: str, tmp_path: Path) -> None:
    def send() -> None:
        handle, wc = _urls(cloud)
        cloud.put_signal(handle, '{"id": "a", "data": "one"}')
        cloud.put_signal(handle, "")  # an empty body: a signal with every default
        cloud.put_signal(wc, '{"status": "SUCCESS", "data": "ok"}')

    thread = _when_waiting(cloud, send)
    made = _apply(store_url, _write(tmp_path, SIGNALS))
    thread.join()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    outputs = made["outputs"]
    assert json.loads(outputs["data"]) == {"a": "one", "2": None}
    assert json.loads(outputs["wc_data"]) == {"1": "ok"}
    url = json.loads(outputs["wc_signal"])["alarm_url"]
    assert outputs["curl_cli"].startswith(f"curl -i -X PUT '{ACCOUNT}/") and outputs["token"] == ""
    (container,) = cloud.containers
    assert urlparse(url).path.startswith(f"{urlparse(ACCOUNT).path}/{container}/")
    assert cloud.containers[container]["headers"] == {"x-versions-location": container}
    # The wait condition's signal was taken from Swift (Heat deletes it: its object
    # is back to the version before, "in progress").
    objects = cloud.containers[container]["objects"]
    assert [body for name, body in objects.items() if "-wc_handle-" in name] == [b"in progress"]

    gone = _delete(store_url)
    assert gone["stack_status"] == "DELETE_COMPLETE" and cloud.containers == {}


def test_a_failure_signal_and_too_few_signals_fail_in_heats_words(
        cloud: FakeSwift, store_url: str, tmp_path: Path) -> None:
    def send() -> None:
        handle, wc = _urls(cloud)
        cloud.put_signal(handle, '{"reason": "first fine"}')
        cloud.put_signal(wc, '{"status": "FAILURE", "reason": "disk full"}')

    thread = _when_waiting(cloud, send)
    made = _apply(store_url, _write(tmp_path, SIGNALS), count=2, timeout=3)
    thread.join()
    assert made["stack_status"] == "CREATE_FAILED"
    reasons = {r["name"]: r["status_reason"] for r in made["resources"]}
    assert reasons["wait"] == "SwiftSignalTimeout: resources.wait: 1 of 2 received - first fine"
    assert reasons["wc"] == "WaitConditionFailure: resources.wc: disk full"


def test_heats_signal_merging_and_handle_url_checks(cloud: FakeSwift) -> None:
    merged = swift.merged_signals([{"id": "x", "data": 1}, {}, {"id": "x", "data": 2, "status": "FAILURE"}])
    assert merged == [{"data": None, "id": 2, "reason": "Signal 2 received", "status": "SUCCESS"},
                      {"id": "x", "data": 2, "status": "FAILURE", "reason": "Signal x received"}]

    class Runtime:
        stack_id = "11111111-2222-4333-8444-555555555555"

    waiting = swift.SwiftSignal("wait", Runtime())  # type: ignore[arg-type]
    Runtime.cloud = cloud  # type: ignore[attr-defined]
    assert waiting._object(f"{ACCOUNT}/{Runtime.stack_id}/obj?temp_url_sig=x") == "obj"
    with pytest.raises(Exception, match=r'is not a valid SwiftSignalHandle.  The container name is invalid'):
        waiting._object(f"{ACCOUNT}/another-stack/obj")
    with pytest.raises(Exception, match=r"The Swift TempURL path is invalid"):
        waiting._object("http://swift.example/v1/AUTH_other/" + Runtime.stack_id + "/obj")
    with pytest.raises(Exception, match=r"The Swift TempURL path is invalid"):
        waiting._object("not a url")


def test_the_account_key_is_made_once_and_signs_each_url(cloud: FakeSwift) -> None:
    first = swift.temp_url(cloud, "c", "o")  # type: ignore[arg-type]
    second = swift.temp_url(cloud, "c", "p")  # type: ignore[arg-type]
    assert [m for m, p in cloud.sent if m == "POST"] == ["POST"]
    key = cloud.meta["x-account-meta-temp-url-key"]
    assert len(key) == 32
    for url, obj in ((first, "o"), (second, "p")):
        query = parse_qs(urlparse(url).query)
        assert query["temp_url_expires"] == [str(2**31 - 1 - 60)]
        assert url.startswith(f"{ACCOUNT}/c/{obj}?temp_url_sig=")


NATIVE_WAIT = """\
heat_template_version: 2013-05-23
resources:
  wait_condition:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: wait_handle}, count: 5, timeout: 20}
  wait_handle:
    type: OS::Heat::WaitConditionHandle
outputs:
  curl_cli: {value: {get_attr: [wait_handle, curl_cli]}}
  endpoint: {value: {get_attr: [wait_handle, endpoint]}}
  token: {value: {get_attr: [wait_handle, token]}}
  signal: {value: {get_attr: [wait_handle, signal]}}
  wc_data: {value: {get_attr: [wait_condition, data]}}
"""


def test_heats_default_transport_signals_through_swift_where_the_cloud_has_it(
        cloud: FakeSwift, store_url: str, tmp_path: Path) -> None:
    """hot/native_waitcondition.yaml's signals (TOKEN_SIGNAL, Heat's default): its
    ``curl_cli`` PUTs to a temporary URL, so the server's script runs unchanged."""
    def send() -> None:
        (container,) = cloud.containers
        obj = next(iter(cloud.containers[container]["objects"]))
        url = swift.temp_url(cloud, container, obj)  # type: ignore[arg-type]
        for body in ('{"status": "SUCCESS"}', '{"status": "SUCCESS", "reason": "signal2"}',
                     '{"status": "SUCCESS", "reason": "signal3", "data": "data3"}',
                     '{"status": "SUCCESS", "reason": "signal4", "data": "data4"}',
                     '{"status": "SUCCESS", "id": "5"}', '{"status": "SUCCESS", "id": "5"}'):
            cloud.put_signal(url, body)

    def objects_made() -> bool:
        return bool(cloud.containers) and "x-account-meta-temp-url-key" in cloud.meta

    thread = threading.Thread(target=lambda: (_until(objects_made), send()))
    thread.start()
    made = _apply(store_url, _write(tmp_path, NATIVE_WAIT))
    thread.join()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    outputs = made["outputs"]
    assert outputs["curl_cli"] == f"curl -i -X PUT '{outputs['endpoint']}'" and outputs["token"] == ""
    assert outputs["endpoint"].startswith(ACCOUNT + "/") and outputs["signal"] == "null"
    assert json.loads(outputs["wc_data"]) == {"1": None, "2": None, "3": "data3", "4": "data4", "5": None}


def test_without_a_named_cloud_heats_default_transport_gives_no_command(
        cloud: FakeSwift, store_url: str, tmp_path: Path) -> None:
    cloud.cloud = None  # type: ignore[assignment]  # openstacksdk's own choice: not asked
    store = open_store(store_url)
    try:
        thread = threading.Thread(target=lambda: (_until(lambda: _waiting(store_url)), _signal_wait(store_url)))
        thread.start()
        made = apply_stack(store, ApplyRequest(name="s", template=str(_write(tmp_path, NATIVE_WAIT))),
                           "job").as_dict()
        thread.join()
    finally:
        store.close()
    assert made["stack_status"] == "CREATE_COMPLETE", made["stack_status_reason"]
    assert (made["outputs"]["curl_cli"], made["outputs"]["endpoint"]) == (None, None)
    assert cloud.containers == {} and cloud.sent == []


def _until(condition: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    time.sleep(0.3)


def _waiting(url: str) -> bool:
    store = open_store(url)
    try:
        stack = store.find_stack("s")
        return stack is not None and any(
            r.state.name == "wait_condition" and r.state.status == "IN_PROGRESS" for r in store.resources(stack.id))
    finally:
        store.close()


def _signal_wait(url: str) -> None:
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.signal import (  # pylint: disable=import-outside-toplevel
        SignalRequest,
        signal_resource,
    )

    store = open_store(url)
    try:
        for number in range(5):
            signal_resource(store, SignalRequest("s", "wait_handle", {"id": str(number)}))
    finally:
        store.close()
