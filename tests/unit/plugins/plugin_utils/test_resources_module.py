# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hotplay::Ansible::Module through the engine, in-process, with a host whose
"modules" keep files in memory (the real modules on real hosts are in
tests/integration/test_module_resources.py)."""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.drift import detect_drift
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import (
    StackNotFound,
    TemplateError,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.health import (
    HealthRequest,
    mark_resource,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import MASK, StoreKey
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import sealed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


class FakeHosts:
    """Inventory hosts whose modules act on an in-memory file system per host.

    ``test.fake.file`` (path, content, state present/absent, fail) supports check
    mode and diff; ``test.fake.nocheck`` does the same without check mode; the
    documented options say fake.file follows the ``state: absent`` convention."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, str]] = {}
        self.calls: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def host(self, name: str = "play") -> FakeHost:
        return FakeHost(self, name)


class FakeHost:
    def __init__(self, hosts: FakeHosts, name: str) -> None:
        self.hosts = hosts
        self.name = name

    def on(self, hostname: str) -> FakeHost:
        return FakeHost(self.hosts, hostname)

    def module_exists(self, module: str) -> bool:
        return module.startswith("test.fake.")

    def module_options(self, module: str) -> Mapping[str, Any] | None:
        if module == "test.fake.file":
            return {"state": {"choices": ["absent", "present"]}}
        return None  # no readable documentation

    def run_module(self, module: str, arguments: Mapping[str, Any], *, check_mode: bool = False,
                   diff: bool = False, no_log: bool = False) -> dict[str, Any]:
        with self.hosts.lock:
            self.hosts.calls.append({"host": self.name, "module": module, "args": dict(arguments),
                                     "check_mode": check_mode, "no_log": no_log})
            files = self.hosts.files.setdefault(self.name, {})
            if module == "test.fake.nocheck" and check_mode:
                return {"skipped": True, "msg": f"remote module ({module}) does not support check mode"}
            if module not in ("test.fake.file", "test.fake.nocheck"):
                return {"failed": True, "msg": f"The module {module} was not found"}
            return _fake_file(files, dict(arguments), check_mode)


def _fake_file(files: dict[str, str], args: dict[str, Any], check_mode: bool) -> dict[str, Any]:
    path = args["path"]
    if args.get("fail"):
        return {"failed": True, "msg": f"refusing to write {args.get('content')} to {path}"}
    before = files.get(path)
    after = None if args.get("state") == "absent" else str(args.get("content", ""))
    if not check_mode:
        if after is None:
            files.pop(path, None)
        else:
            files[path] = after
    result: dict[str, Any] = {"changed": before != after, "path": path,
                              "info": {"size": len(after or ""), "lines": (after or "").splitlines()},
                              "invocation": {"module_args": args}, "_ansible_no_log": False}
    if check_mode:
        result["diff"] = {"before": before or "", "after": after or ""}
    return result


@pytest.fixture
def store(tmp_path: Path):
    # Sealed with a key, as the action plugins open it: secrets are kept encrypted.
    opened = sealed(SqliteStore(str(tmp_path / "store.db")), StoreKey("unit test store key"))
    yield opened
    opened.close()


@pytest.fixture
def hosts() -> FakeHosts:
    return FakeHosts()


def apply(store: SqliteStore, folder: Path, text: str, hosts: FakeHosts, name: str = "s",
          **request: Any) -> dict[str, Any]:
    template = folder / f"{name}.yaml"
    template.write_text(textwrap.dedent(text))
    return apply_stack(store, ApplyRequest(name=name, template=str(template), host=hosts.host(),
                                           **request), "test").as_dict()


def events(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["resource_name"], e["action"], e["status"]) for e in result["events"]]


def resource(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in result["resources"] if r["name"] == name)


def one_file(content: str = "one", path: str = "/etc/app.conf", extra: str = "") -> str:
    return f"""\
        heat_template_version: 2021-04-16
        resources:
          conf:
            type: Hotplay::Ansible::Module
            properties:
              module: test.fake.file
              args: {{path: {path}, content: "{content}"}}
              {extra}
        outputs:
          size: {{value: {{get_attr: [conf, info, size]}}}}
          second_line: {{value: {{get_attr: [conf, info, lines, 1]}}}}
          id: {{value: {{get_resource: conf}}}}
        """


def test_create_runs_the_module_and_returns_its_values_as_attributes(store, tmp_path, hosts):
    result = apply(store, tmp_path, one_file("a\\nbc"), hosts)
    assert result["stack_status"] == "CREATE_COMPLETE", result["stack_status_reason"]
    assert hosts.files["play"] == {"/etc/app.conf": "a\nbc"}
    # get_attr paths reach into the return values; the physical id is the path returned.
    assert result["outputs"] == {"size": 4, "second_line": "bc", "id": "/etc/app.conf"}
    assert resource(result, "conf")["physical_id"] == "/etc/app.conf"


def test_a_changed_argument_is_updated_in_place_by_running_the_module_again(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one"), hosts)
    result = apply(store, tmp_path, one_file("two"), hosts)
    assert events(result)[1:3] == [("conf", "UPDATE", "IN_PROGRESS"), ("conf", "UPDATE", "COMPLETE")]
    assert hosts.files["play"] == {"/etc/app.conf": "two"}
    assert result["outputs"]["size"] == 3


def test_a_changed_naming_argument_replaces_and_deletes_the_old_thing(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one"), hosts)
    result = apply(store, tmp_path, one_file("one", path="/etc/new.conf"), hosts)
    assert ("conf", "CREATE", "COMPLETE") in events(result)
    assert ("conf", "DELETE", "COMPLETE") in events(result)
    # Created first, then the old one deleted with {state: absent} merged over args.
    assert hosts.files["play"] == {"/etc/new.conf": "one"}
    delete = hosts.calls[-1]
    assert delete["args"] == {"path": "/etc/app.conf", "content": "one", "state": "absent"}


def test_a_replacement_that_is_the_same_thing_does_not_delete_it(store, tmp_path, hosts):
    # Nothing may change in place: a new content replaces, but it is the same file.
    apply(store, tmp_path, one_file("one", extra="update_in_place: []"), hosts)
    result = apply(store, tmp_path, one_file("two", extra="update_in_place: []"), hosts)
    assert ("conf", "CREATE", "COMPLETE") in events(result)
    assert ("conf", "DELETE", "COMPLETE") in events(result)  # the old record goes...
    assert hosts.files["play"] == {"/etc/app.conf": "two"}  # ...the file stays
    assert not any(call["args"].get("state") == "absent" for call in hosts.calls)


def test_update_in_place_takes_patterns(store, tmp_path, hosts):
    extra = "update_in_place: [cont*, path]"
    apply(store, tmp_path, one_file("one", extra=extra), hosts)
    result = apply(store, tmp_path, one_file("one", path="/etc/moved.conf", extra=extra), hosts)
    assert ("conf", "UPDATE", "COMPLETE") in events(result)
    # The user said path may change in place: the old file is theirs to mind.
    assert hosts.files["play"] == {"/etc/app.conf": "one", "/etc/moved.conf": "one"}


def test_the_stack_delete_runs_the_delete_arguments(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one"), hosts)
    deleted = delete_stack(store, DeleteRequest(name="s", host=hosts.host()), "test")
    assert deleted.stack.stack_status == "DELETE_COMPLETE"
    assert hosts.files["play"] == {}


def test_delete_by_id_deletes_the_recorded_thing_not_the_one_named_now(store, tmp_path, hosts):
    # openstack.cloud modules find things by name or id: the old one goes by its id.
    extra = "delete_by_id: path\n              physical_id: info.size"
    apply(store, tmp_path, one_file("one", extra=extra), hosts)
    delete_stack(store, DeleteRequest(name="s", host=hosts.host()), "test")
    assert hosts.calls[-1]["args"] == {"path": "3", "content": "one", "state": "absent"}


@pytest.mark.parametrize("delete_args", ["{}", "null"])
def test_empty_delete_args_mean_deleting_only_forgets(store, tmp_path, hosts, delete_args):
    apply(store, tmp_path, one_file("one", extra=f"delete_args: {delete_args}"), hosts)
    delete_stack(store, DeleteRequest(name="s", host=hosts.host()), "test")
    assert hosts.files["play"] == {"/etc/app.conf": "one"}
    assert len(hosts.calls) == 1


def test_without_docs_or_a_state_argument_nothing_is_run_to_delete(store, tmp_path, hosts):
    text = one_file("one").replace("test.fake.file", "test.fake.nocheck")
    apply(store, tmp_path, text, hosts)
    delete_stack(store, DeleteRequest(name="s", host=hosts.host()), "test")
    assert len(hosts.calls) == 1 and hosts.files["play"] == {"/etc/app.conf": "one"}


def test_without_docs_a_state_argument_is_the_convention(store, tmp_path, hosts):
    text = one_file("one").replace("test.fake.file", "test.fake.nocheck").replace(
        'content: "one"', 'content: "one", state: present')
    apply(store, tmp_path, text, hosts)
    delete_stack(store, DeleteRequest(name="s", host=hosts.host()), "test")
    assert hosts.files["play"] == {}


def test_delete_args_are_merged_and_a_null_drops_an_argument(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one", extra="delete_args: {state: absent, content: null}"), hosts)
    delete_stack(store, DeleteRequest(name="s", host=hosts.host()), "test")
    assert hosts.calls[-1]["args"] == {"path": "/etc/app.conf", "state": "absent"}


def test_a_failed_module_fails_the_resource_with_its_message(store, tmp_path, hosts):
    result = apply(store, tmp_path, one_file("one", extra="no_log: []\n              "
                                                          "delete_args: {}").replace(
        'content: "one"', 'content: "one", fail: true'), hosts)
    assert result["failed"] and result["stack_status"] == "CREATE_FAILED"
    assert resource(result, "conf")["status_reason"] == (
        "Error: resources.conf: test.fake.file on play: refusing to write one to /etc/app.conf")


def test_secret_arguments_are_masked_in_reasons_attributes_and_previews(store, tmp_path, hosts):
    text = """\
        heat_template_version: 2021-04-16
        parameters:
          token: {type: string, hidden: true}
        resources:
          conf:
            type: Hotplay::Ansible::Module
            properties:
              module: test.fake.file
              args: {path: /etc/token, content: {get_param: token}, fail: %s}
              no_log: [content]
        outputs:
          lines: {value: {get_attr: [conf, info, lines]}}
          shown: {value: {get_attr: [conf, show]}}
        """
    created = apply(store, tmp_path, text % "false", hosts, parameters={"token": "s3cret-value"})
    assert created["outputs"]["lines"] == [MASK]
    assert created["outputs"]["shown"]["args"]["content"] == MASK
    assert all(call["no_log"] for call in hosts.calls)
    preview = apply(store, tmp_path, text % "false", hosts, parameters={"token": "n3w-secret"},
                    check_mode=True)
    assert "secret" not in json.dumps(preview)
    failed = apply(store, tmp_path, text % "true", hosts, parameters={"token": "s3cret-value"})
    assert f"refusing to write {MASK} to /etc/token" in resource(failed, "conf")["status_reason"]
    assert "s3cret" not in json.dumps(failed)


def test_secret_paths_name_where_the_secrets_are(hosts):
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.module import AnsibleModule

    handler = AnsibleModule("conf", None)  # type: ignore[arg-type]
    properties = {"module": "a.b.c", "args": {"password": "pw", "name": "u"},
                  "delete_args": {"password": "old"}, "no_log": ["password"]}
    assert handler.secret_paths(properties) == [("args", "password"), ("delete_args", "password")]
    assert handler.secret_values(properties) == ["pw", "old"]


def test_the_preview_asks_the_module_in_check_mode(store, tmp_path, hosts):
    template = """\
        heat_template_version: 2021-04-16
        resources:
          same:
            type: Hotplay::Ansible::Module
            properties:
              module: test.fake.file
              args: {path: /a, content: "%s"}
          other:
            type: Hotplay::Ansible::Module
            properties:
              module: test.fake.nocheck
              args: {path: /b, content: "%s"}
        """
    apply(store, tmp_path, template % ("x", "y"), hosts)
    hosts.files["play"]["/a"] = "z"  # someone changed it: the module says so in the preview
    previewed = apply(store, tmp_path, template % ("z", "w"), hosts, check_mode=True)
    assert previewed["plan"]["updated"] == ["same", "other"]
    checks = previewed["plan"]["checks"]
    assert checks["same"] == {"changed": False}
    assert checks["other"]["changed"] is None
    assert "does not support check mode" in checks["other"]["msg"]
    assert hosts.files["play"] == {"/a": "z", "/b": "y"}  # nothing written


def test_a_preview_without_module_resources_runs_nothing(store, tmp_path, hosts):
    text = """\
        heat_template_version: 2021-04-16
        resources:
          v: {type: OS::Heat::Value, properties: {value: 1}}
        """
    previewed = apply(store, tmp_path, text, hosts, check_mode=True)
    assert "checks" not in previewed["plan"] and hosts.calls == []


def test_a_value_known_only_after_apply_is_checked_later(store, tmp_path, hosts):
    text = """\
        heat_template_version: 2021-04-16
        resources:
          first:
            type: Hotplay::Ansible::Module
            properties: {module: test.fake.file, args: {path: /a, content: "%s"}}
          second:
            type: Hotplay::Ansible::Module
            properties:
              module: test.fake.file
              args: {path: /b, content: {get_attr: [first, info, size]}}
        """
    apply(store, tmp_path, text % "1", hosts)
    previewed = apply(store, tmp_path, text % "12", hosts, check_mode=True)
    # content reads first, which changes; content may change in place, so no replacement.
    assert previewed["plan"]["updated"] == ["first", "second"]
    assert previewed["plan"]["checks"]["second"]["changed"] is None
    moved = apply(store, tmp_path, text.replace("path: /b", "path: {get_attr: [first, path]}")
                  % "12", hosts, check_mode=True)
    # path reads first too: a naming argument that may change, so it may be replaced.
    assert "second" in moved["plan"]["replaced"]


def test_another_inventory_host_is_reached_with_host(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one", extra="host: node2"), hosts)
    assert hosts.files["node2"] == {"/etc/app.conf": "one"}
    assert "play" not in hosts.files


def test_same_path_on_another_host_is_another_thing(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one", extra="host: node1"), hosts)
    result = apply(store, tmp_path, one_file("one", extra="host: node2"), hosts)
    assert ("conf", "DELETE", "COMPLETE") in events(result)
    assert hosts.files["node1"] == {} and hosts.files["node2"] == {"/etc/app.conf": "one"}


def test_a_module_that_is_not_a_fqcn_is_refused_before_anything_runs(store, tmp_path, hosts):
    with pytest.raises(TemplateError, match="module must be a fully qualified collection name"):
        apply(store, tmp_path, one_file().replace("test.fake.file", "copy"), hosts)
    assert store.find_stack("s") is None and hosts.calls == []


def test_a_module_that_is_not_installed_is_refused_before_anything_is_written(store, tmp_path, hosts):
    with pytest.raises(TemplateError) as refused:
        apply(store, tmp_path, one_file().replace("test.fake.file", "test.other.nope"), hosts)
    assert str(refused.value) == (
        f"{tmp_path / 's.yaml'}: resources.conf.properties.module: The module test.other.nope was not "
        "found: install the collection that has it (ansible-galaxy collection install), or correct "
        "the name")
    assert store.find_stack("s") is None and hosts.calls == []


def test_a_physical_id_path_picks_a_return_value(store, tmp_path, hosts):
    result = apply(store, tmp_path, one_file("a\\nb", extra="physical_id: info.lines.1"), hosts)
    assert resource(result, "conf")["physical_id"] == "b"
    missing = apply(store, tmp_path, one_file("a", extra="physical_id: info.nope"), hosts, name="t")
    assert "physical_id info.nope is not a value the module returned" in \
        resource(missing, "conf")["status_reason"]


def test_only_the_listed_return_values_become_attributes(store, tmp_path, hosts):
    result = apply(store, tmp_path, one_file("a", extra="attributes: [path]"), hosts)
    assert result["outputs"]["size"] is None and result["outputs"]["id"] == "/etc/app.conf"


def test_dropped_returns_never_reach_the_store(store, tmp_path, hosts):
    """A value the module returns that the template does not need (a password Nova
    generates) is kept nowhere: not as an attribute, not in the store's record."""
    kept = apply(store, tmp_path, one_file("a\\nb", extra="dropped_returns: [info.lines]"), hosts)
    assert kept["outputs"]["size"] == 3 and kept["outputs"]["second_line"] is None
    stored = store.resources(store.find_stack("s").id)[0].state
    assert stored.data["attributes"]["info"] == {"size": 3}


def test_drift_reports_a_changed_thing_and_writes_nothing(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one"), hosts)
    stack = store.find_stack("s")
    assert detect_drift(store, stack, hosts.host())["conf"]["drifted"] is False
    hosts.files["play"]["/etc/app.conf"] = "changed by hand"
    events_before = len(store.events(stack.id))
    report = detect_drift(store, stack, hosts.host())
    assert report["conf"]["drifted"] is True
    assert report["conf"]["changed_keys"] == ["content"]
    assert hosts.files["play"]["/etc/app.conf"] == "changed by hand"
    assert len(store.events(stack.id)) == events_before


def test_an_unhealthy_resource_is_replaced_by_the_next_apply(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one"), hosts)
    hosts.files["play"]["/etc/app.conf"] = "broken"
    marked = mark_resource(store, HealthRequest("s", "conf", reason="broken by hand"), "test")
    assert marked["changed"] and marked["resource"]["status"] == "CHECK_FAILED"
    assert marked["events"][0]["reason"] == "broken by hand"
    previewed = apply(store, tmp_path, one_file("one"), hosts, check_mode=True)
    assert previewed["plan"]["replaced"] == ["conf"] and previewed["changed"]
    result = apply(store, tmp_path, one_file("one"), hosts)
    assert ("conf", "CREATE", "COMPLETE") in events(result)
    assert resource(result, "conf")["status"] == "CREATE_COMPLETE"
    assert hosts.files["play"] == {"/etc/app.conf": "one"}  # remade, and not deleted after
    again = apply(store, tmp_path, one_file("one"), hosts)
    assert not again["changed"]


def test_marking_healthy_again_takes_the_mark_off(store, tmp_path, hosts):
    apply(store, tmp_path, one_file("one"), hosts)
    assert not mark_resource(store, HealthRequest("s", "conf", healthy=True), "test")["changed"]
    mark_resource(store, HealthRequest("s", "conf"), "test")
    assert not mark_resource(store, HealthRequest("s", "conf"), "test")["changed"]
    healed = mark_resource(store, HealthRequest("s", "conf", healthy=True, reason="fixed"), "test")
    assert healed["resource"]["status"] == "CHECK_COMPLETE"
    assert not apply(store, tmp_path, one_file("one"), hosts)["changed"]


def test_an_unhealthy_member_of_a_nested_stack_is_reached(store, tmp_path, hosts):
    text = """\
        heat_template_version: 2021-04-16
        resources:
          group:
            type: OS::Heat::ResourceGroup
            properties:
              count: 2
              resource_def:
                type: Hotplay::Ansible::Module
                properties: {module: test.fake.file, args: {path: "/g%index%", content: x}}
        """
    apply(store, tmp_path, text, hosts)
    with pytest.raises(StackNotFound, match=r"group/7\) could not be found in group"):
        mark_resource(store, HealthRequest("s", "group/7"), "test")
    mark_resource(store, HealthRequest("s", "group/1"), "test")
    hosts.files["play"]["/g1"] = "broken"
    result = apply(store, tmp_path, text, hosts, nested_depth=1)
    assert resource(result, "group")["status"] == "UPDATE_COMPLETE"  # converged, not replaced
    assert ("group/1", "CREATE", "COMPLETE") in events(result)
    assert ("group/0", "CREATE", "COMPLETE") not in events(result)
    assert hosts.files["play"] == {"/g0": "x", "/g1": "x"}


def test_a_resource_without_a_host_fails_clearly(store, tmp_path):
    template = tmp_path / "s.yaml"
    template.write_text(textwrap.dedent(one_file()))
    result = apply_stack(store, ApplyRequest(name="s", template=str(template)), "test").as_dict()
    assert "needs a host to run on" in resource(result, "conf")["status_reason"]


def test_a_provider_template_wraps_a_module_with_heat_style_properties(store, tmp_path, hosts):
    # The shape provider templates for Heat types take (docs/resource-types.md).
    (tmp_path / "app_config.yaml").write_text(textwrap.dedent("""\
        heat_template_version: 2021-04-16
        parameters:
          path: {type: string}
          port: {type: number, default: 80}
        resources:
          file:
            type: Hotplay::Ansible::Module
            properties:
              module: test.fake.file
              args:
                path: {get_param: path}
                content: {str_replace: {template: "port=PORT", params: {PORT: {get_param: port}}}}
        outputs:
          OS::stack_id: {value: {get_resource: file}}
          size: {value: {get_attr: [file, info, size]}}
        """))
    (tmp_path / "env.yaml").write_text('resource_registry:\n  "My::App::Config": app_config.yaml\n')
    text = """\
        heat_template_version: 2021-04-16
        parameters:
          port: {type: number}
        resources:
          config:
            type: My::App::Config
            properties: {path: /etc/app.conf, port: {get_param: port}}
        outputs:
          id: {value: {get_resource: config}}
          size: {value: {get_attr: [config, size]}}
        """
    env = [str(tmp_path / "env.yaml")]
    created = apply(store, tmp_path, text, hosts, environment=env, parameters={"port": 80})
    assert created["outputs"] == {"id": "/etc/app.conf", "size": 7}
    updated = apply(store, tmp_path, text, hosts, environment=env, parameters={"port": 8080},
                    nested_depth=1)
    assert ("config/file", "UPDATE", "COMPLETE") in events(updated)
    assert hosts.files["play"] == {"/etc/app.conf": "port=8080"}
    delete_stack(store, DeleteRequest(name="s", host=hosts.host()), "test")
    assert hosts.files["play"] == {}
