# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets through the engine, in-process on a real SQLite file: which values are
secrets, what a run without a key does, and the resource types' API."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
    delete_stack,
    DeleteRequest,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import (
    AttributeSchema,
    Outcome,
    PropertySchema,
    Resource,
    register,
    resource_class,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import StoreKey, StoreKeyError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import SealedStore, sealed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

SECRET = "hunter2-Qx9"
KEY = "vault passphrase"


class Secretive(Resource):
    """A type with a no_log-like property and a value it generates (as a module
    resource type or a password generator would)."""

    type_name = "Hotplay::Test::Secretive"
    properties_schema = {
        "password": PropertySchema("string", "A no_log argument.", update_allowed=True),
        "name": PropertySchema("string", "Not secret.", update_allowed=True),
    }
    attributes_schema = {"token": AttributeSchema("A generated token.")}

    def secret_values(self, properties: Mapping[str, Any]) -> list[Any]:
        return [properties.get("password")]

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        generated = f"generated-{properties.get('name')}-Zz8"
        self.runtime.secrets.add(generated)  # before it is returned and recorded
        return Outcome(self.runtime.physical_name(self.name), {"attributes": {"token": generated}})


if resource_class(Secretive.type_name) is None:
    register(Secretive)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


def store_with(path: Path, key: str | None) -> SealedStore:
    return sealed(SqliteStore(str(path)), StoreKey(key) if key else None)


def stored_bytes(path: Path) -> bytes:
    return b"".join(f.read_bytes() for f in path.parent.glob(path.name + "*"))


def template(folder: Path, text: str) -> str:
    file = folder / "t.yaml"
    file.write_text(textwrap.dedent(text))
    return str(file)


HIDDEN = """\
    heat_template_version: 2018-08-31
    parameters:
      pw: {type: string, hidden: true, default: not-a-secret-default}
      size: {type: string, default: "1"}
    resources:
      db:
        type: OS::Heat::TestResource
        properties:
          value: {get_param: pw}
      conf:
        type: OS::Heat::Value
        properties:
          value: {str_replace: {template: "user=admin password=$P size=$S",
                                params: {$P: {get_attr: [db, output]}, $S: {get_param: size}}}}
    outputs:
      conf: {value: {get_attr: [conf, value]}}
    """


def test_without_a_key_a_stack_with_a_hidden_value_is_refused_before_anything_is_written(path, tmp_path):
    store = store_with(path, None)
    request = ApplyRequest(name="s", template=template(tmp_path, HIDDEN), parameters={"pw": SECRET})
    for check_mode in (False, True):
        with pytest.raises(StoreKeyError, match=r"stack s has hidden parameters \(pw\) .*HOTPLAY_STORE_KEY"):
            apply_stack(store, ApplyRequest(**{**request.__dict__, "check_mode": check_mode}), "t")
    assert store.find_stack("s") is None and SECRET.encode() not in stored_bytes(path)


def test_a_hidden_parameter_left_at_its_template_default_needs_no_key(path, tmp_path):
    store = store_with(path, None)
    result = apply_stack(store, ApplyRequest(name="s", template=template(tmp_path, HIDDEN)), "t")
    assert result.stack.stack_status == "CREATE_COMPLETE"
    assert store.keyring(result.stack.id) is None


def test_with_a_key_derived_values_are_sealed_and_a_patch_needs_no_hidden_value(path, tmp_path):
    file = template(tmp_path, HIDDEN)
    created = apply_stack(store_with(path, KEY), ApplyRequest(name="s", template=file,
                                                              parameters={"pw": SECRET}), "t")
    assert created.stack.outputs["conf"] == f"user=admin password={SECRET} size=1"
    patched = apply_stack(store_with(path, KEY), ApplyRequest(name="s", existing=True,
                                                              parameters={"size": "2"}), "t")
    assert patched.stack.stack_status == "UPDATE_COMPLETE", patched.stack.status_reason
    assert patched.stack.outputs["conf"] == f"user=admin password={SECRET} size=2"
    again = apply_stack(store_with(path, KEY), ApplyRequest(name="s", existing=True,
                                                            parameters={"size": "2"}), "t")
    assert again.changed is False  # keyed digests are stable from run to run
    assert SECRET.encode() not in stored_bytes(path)


def test_a_reviewed_plan_of_a_new_stack_with_secrets_applies(path, tmp_path):
    request = ApplyRequest(name="s", template=template(tmp_path, HIDDEN), parameters={"pw": SECRET})
    preview = apply_stack(store_with(path, KEY), ApplyRequest(**{**request.__dict__, "check_mode": True}), "t")
    applied = apply_stack(store_with(path, KEY),
                          ApplyRequest(**{**request.__dict__, "plan_id": preview.plan_id}), "t")
    assert applied.stack.stack_status == "CREATE_COMPLETE", applied.msg
    plain = apply_stack(store_with(tmp_path / "other.db", None),
                        ApplyRequest(name="s", template=request.template, check_mode=True), "t")
    assert preview.plan_id != plain.plan_id


NESTED = """\
    heat_template_version: 2018-08-31
    resources:
      inner:
        type: OS::Heat::Stack
        properties:
          parameters: {token: literal-token-Yy3}
          template: |
            heat_template_version: 2018-08-31
            parameters:
              token: {type: string, hidden: true}
            resources:
              r:
                type: OS::Heat::TestResource
                properties: {value: {get_param: token}}
    """


def test_secrets_the_preview_finds_need_a_key_before_anything_is_written(path, tmp_path):
    file = template(tmp_path, NESTED)
    with pytest.raises(StoreKeyError, match="stack s has secret values to keep .*HOTPLAY_STORE_KEY"):
        apply_stack(store_with(path, None), ApplyRequest(name="s", template=file), "t")
    assert store_with(path, None).find_stack("s") is None
    created = apply_stack(store_with(path, KEY), ApplyRequest(name="s", template=file), "t")
    assert created.stack.stack_status == "CREATE_COMPLETE", created.stack.status_reason
    # The parent's template holds the literal: sealed with the rest.
    assert b"literal-token-Yy3" not in stored_bytes(path)


LATE = """\
    heat_template_version: 2018-08-31
    resources:
      source:
        type: OS::Heat::TestResource
        properties: {value: late-token-Ww4}
      inner:
        type: OS::Heat::Stack
        properties:
          parameters: {token: {get_attr: [source, output]}}
          template: |
            heat_template_version: 2018-08-31
            parameters:
              token: {type: string, hidden: true}
            resources:
              r:
                type: OS::Heat::TestResource
                properties: {value: {get_param: token}}
    """


def test_a_secret_met_during_a_run_without_a_key_fails_that_resource_only(path, tmp_path):
    store = store_with(path, None)
    result = apply_stack(store, ApplyRequest(name="s", template=template(tmp_path, LATE)), "t")
    assert result.stack.stack_status == "CREATE_FAILED"
    assert "StoreKeyError" in result.stack.status_reason and "HOTPLAY_STORE_KEY" in result.stack.status_reason
    states = {r.state.name: r.state for r in store.resources(result.stack.id)}
    assert states["source"].status == "COMPLETE" and states["inner"].status == "FAILED"
    assert states["inner"].properties == {}  # no key to keep what became a secret
    child = store.child_stacks(result.stack.id)[0]
    assert store.resources(child.id) == []  # stopped before recording anything of it


TYPED = """\
    heat_template_version: 2018-08-31
    resources:
      app:
        type: Hotplay::Test::Secretive
        properties: {password: typed-Pw-77, name: web}
    outputs:
      token: {value: {get_attr: [app, token]}}
    """


def test_resource_types_declare_and_add_secrets(path, tmp_path):
    store = store_with(path, KEY)
    result = apply_stack(store, ApplyRequest(name="s", template=template(tmp_path, TYPED)), "t")
    assert result.stack.stack_status == "CREATE_COMPLETE", result.stack.status_reason
    assert result.stack.outputs["token"] == "generated-web-Zz8"
    assert {"typed-Pw-77", "generated-web-Zz8"} <= store.secrets.atoms
    raw = stored_bytes(path)
    assert b"typed-Pw-77" not in raw and b"generated-web-Zz8" not in raw
    deleted = delete_stack(store_with(path, KEY), DeleteRequest(name="s"), "t")
    assert deleted.stack.stack_status == "DELETE_COMPLETE"


def test_without_a_key_declared_secrets_are_refused_before_anything_is_written(path, tmp_path):
    with pytest.raises(StoreKeyError, match="secret properties of its resources"):
        apply_stack(store_with(path, None), ApplyRequest(name="s", template=template(tmp_path, TYPED)), "t")
    assert not stored_bytes(path) or b"typed-Pw-77" not in stored_bytes(path)


LATE_DECLARED = """\
    heat_template_version: 2018-08-31
    resources:
      source:
        type: OS::Heat::TestResource
        properties: {value: late-Pw-55}
      app:
        type: Hotplay::Test::Secretive
        properties: {password: {get_attr: [source, output]}, name: web}
    """
GENERATED = """\
    heat_template_version: 2018-08-31
    resources:
      app:
        type: Hotplay::Test::Secretive
        properties: {name: gen}
    """


@pytest.mark.parametrize("text", [LATE_DECLARED, GENERATED], ids=["declared", "generated"])
def test_without_a_key_a_secret_met_during_the_run_fails_the_resource_before_it_acts(path, tmp_path, text):
    store = store_with(path, None)
    result = apply_stack(store, ApplyRequest(name="s", template=template(tmp_path, text)), "t")
    assert result.stack.stack_status == "CREATE_FAILED"
    state = next(r.state for r in store.resources(result.stack.id) if r.state.name == "app")
    assert state.status == "FAILED" and state.physical_id == "" and state.data == {}, state
    assert "StoreKeyError" in state.status_reason and "HOTPLAY_STORE_KEY" in state.status_reason
    assert not state.properties.get("password")  # the secret property was not recorded
    assert b"generated-gen-Zz8" not in stored_bytes(path)
