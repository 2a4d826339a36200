# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sealing store on both backends: what holds a secret is stored encrypted,
opens with the key, reads as ****** without it, and a wrong key is told once."""

from __future__ import annotations

from pathlib import Path

import pytest
# The fixtures that give each test a SQLite and a PostgreSQL store (not a conftest.py).
from pg_backends import backend_store, pg_server, pg_url, store_url  # noqa: F401 pylint: disable=unused-import

from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import ResourceState
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import (
    MASK,
    StoreKey,
    StoreKeyError,
    is_envelope,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.postgres import PostgresStore
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import SealedStore, sealed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sql import SCHEMA_VERSION
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

KEY = StoreKey("a long passphrase from the vault")
SECRET = "pw-Zq7-Secret"
TABLES = ("meta", "stacks", "revisions", "resources", "events", "hooks", "leases", "stack_keys")


def _raw_text(store) -> str:
    """Every row of every table as the backend holds it."""
    rows = [dict(row) for table in TABLES
            for row in store._read(f"SELECT * FROM {table}")]  # pylint: disable=protected-access
    assert rows, "no rows: the dump would prove nothing"
    return "\n".join(repr(list(row.values())) for row in rows)


def _write_everything(store: SealedStore) -> str:
    """A stack whose every kind of stored value holds the secret somewhere."""
    store.unlock("web", None, run=True)
    store.secrets.add(SECRET)
    stack = store.create_stack("web")
    store.attach(stack.id)
    definition = {"template": {"parameters": {"pw": {"type": "string", "hidden": True}}},
                  "environment": [["env.yaml", f"parameters:\n  pw: {SECRET}\n"]],
                  "parameters": {"pw": SECRET, "size": 2}, "hidden": ["pw"]}
    revision = store.add_revision(stack.id, "CREATE", definition, "d1")
    state = ResourceState(
        name="db", type="OS::Heat::TestResource", action="CREATE", status="FAILED",
        status_reason=f"ValueError: resources.db: bad value {SECRET}", physical_id="web-db-1",
        properties={"value": SECRET, "user": "admin", "list": [1, f"x={SECRET}"]},
        data={"value": SECRET}, metadata={"note": f"pw {SECRET}"})
    store.save_resource(stack.id, state, requires=("net",))
    store.add_event(stack.id, "db", "CREATE", "FAILED", f"bad value {SECRET}", "web-db-1")
    store.set_stack_status(stack.id, "CREATE", "FAILED", f"Resource CREATE failed: {SECRET}")
    store.set_stack_outputs(stack.id, {"pw": SECRET, "plain": "ok"}, {"other": f"no {SECRET}"})
    store.finish_revision(stack.id, revision, "FAILED", f"failed with {SECRET}", {"db": {"id": SECRET}})
    return stack.id


def test_every_value_that_holds_a_secret_is_stored_sealed(backend_store):
    stack_id = _write_everything(sealed(backend_store, KEY))
    raw = _raw_text(backend_store)
    assert SECRET not in raw and "$hotplay$1$" in raw
    # Only the pieces that hold the secret are sealed; the rest stays readable.
    row = backend_store.resources(stack_id)[0].state
    assert row.properties["user"] == "admin" and row.properties["list"][0] == 1
    assert is_envelope(row.properties["value"]) and is_envelope(row.properties["list"][1])
    assert row.physical_id == "web-db-1" and backend_store.resources(stack_id)[0].requires == ("net",)
    assert backend_store.get_stack(stack_id).outputs["plain"] == "ok"


def test_sealed_values_open_with_the_key(backend_store):
    stack_id = _write_everything(sealed(backend_store, KEY))
    again = sealed(backend_store, KEY)  # a later task: a new wrapper, the same key
    stack = again.find_stack("web")
    again.unlock("web", stack, run=True)
    assert SECRET in again.secrets.atoms  # learnt from the stack's keyring
    state = again.resources(stack_id)[0].state
    assert state.properties == {"value": SECRET, "user": "admin", "list": [1, f"x={SECRET}"]}
    assert state.data == {"value": SECRET} and state.metadata == {"note": f"pw {SECRET}"}
    assert state.status_reason == f"ValueError: resources.db: bad value {SECRET}"
    assert stack.outputs == {"pw": SECRET, "plain": "ok"} and stack.status_reason.endswith(SECRET)
    revision = again.revisions(stack_id)[0]
    assert revision.definition["parameters"] == {"pw": SECRET, "size": 2}
    assert revision.definition["environment"][0][1] == f"parameters:\n  pw: {SECRET}\n"
    assert revision.outcome == {"db": {"id": SECRET}} and revision.status_reason.endswith(SECRET)
    assert again.events(stack_id)[0].reason == f"bad value {SECRET}"


def test_without_the_key_a_view_shows_masks_and_a_run_is_refused(backend_store):
    stack_id = _write_everything(sealed(backend_store, KEY))
    keyless = sealed(backend_store, None)
    stack = keyless.find_stack("web")
    keyless.unlock("web", stack, run=False)  # stack_info: fine
    state = keyless.resources(stack_id)[0].state
    assert state.properties == {"value": MASK, "user": "admin", "list": [1, MASK]}
    assert stack.outputs == {"pw": MASK, "plain": "ok"} and keyless.events(stack_id)[0].reason == MASK
    with pytest.raises(StoreKeyError, match=r"stack web keeps secrets in the store; .*HOTPLAY_STORE_KEY.*store_key"):
        keyless.unlock("web", stack, run=True)


def test_a_wrong_key_is_one_clear_error(backend_store):
    _write_everything(sealed(backend_store, KEY))
    wrong = sealed(backend_store, StoreKey("not the passphrase"))
    stack = backend_store.find_stack("web")
    for run in (True, False):
        with pytest.raises(StoreKeyError, match="^the store key does not open stack web's secrets$"):
            wrong.unlock("web", stack, run=run)
    with pytest.raises(StoreKeyError, match="does not open stack web's secrets"):
        wrong.find_stack("web")  # a sealed value read without the check first


def test_without_a_key_a_secret_is_never_written(backend_store):
    keyless = sealed(backend_store, None)
    keyless.unlock("web", None, run=True)
    keyless.secrets.add(SECRET)
    with pytest.raises(StoreKeyError, match="HOTPLAY_STORE_KEY"):
        keyless.require_key("stack web has hidden parameters (pw)")
    stack = keyless.create_stack("web")
    keyless.attach(stack.id)
    with pytest.raises(StoreKeyError, match="a value of stack web holds a secret"):
        keyless.save_resource(stack.id, ResourceState(name="db", type="T", properties={"v": SECRET}))
    assert backend_store.resources(stack.id) == [] and backend_store.keyring(stack.id) is None
    assert SECRET not in _raw_text(backend_store)


def test_secrets_learnt_during_a_run_are_kept_with_the_stack(backend_store):
    first = sealed(backend_store, KEY)
    first.unlock("web", None, run=True)
    stack = first.create_stack("web")
    first.attach(stack.id)
    assert backend_store.keyring(stack.id) is None  # nothing to keep yet
    first.secrets.add("generated-1")  # e.g. runtime.secrets.add in a handler
    first.secrets.add("generated-2")
    later = sealed(backend_store, KEY)
    later.unlock("web", stack, run=False)
    assert later.secrets.atoms == frozenset({"generated-1", "generated-2"})
    assert "generated-1" not in _raw_text(backend_store)


def test_digests_are_keyed_when_they_hold_a_secret(backend_store):
    store = sealed(backend_store, KEY)
    store.unlock("web", None, run=True)
    plain = store.digest([b"template", b"value"])
    assert plain == sealed(backend_store, None).digest([b"template", b"value"])
    store.secrets.add("value")
    keyed = store.digest([b"template", b"value"])
    assert keyed != plain and keyed == store.digest([b"template", b"value"])
    other = sealed(backend_store, StoreKey("other"))
    other.unlock("web", None, run=True)
    other.secrets.add("value")
    assert other.digest([b"template", b"value"]) != keyed


def test_copied_rows_open_in_another_store_with_the_same_key(backend_store, tmp_path: Path):
    """What a store copy does: rows as stored, the keyring with them."""
    stack_id = _write_everything(sealed(backend_store, KEY))
    target = SqliteStore(str(tmp_path / "copy.db"))
    source = backend_store.get_stack(stack_id)
    target.create_stack(source.name, stack_id=source.id)
    target.set_stack_outputs(stack_id, source.outputs, source.output_errors)
    for stored in backend_store.resources(stack_id):
        target.save_resource(stack_id, stored.state, stored.requires, stored.position)
    target.save_keyring(backend_store.keyring(stack_id))
    copied = sealed(target, KEY)
    stack = copied.find_stack("web")
    copied.unlock("web", stack, run=True)
    assert stack.outputs["pw"] == SECRET
    assert copied.resources(stack_id)[0].state.properties["value"] == SECRET
    target.close()


def test_the_postgres_schema_gains_the_keyring_table(pg_url):
    first = PostgresStore(pg_url)
    first._execute("DROP TABLE stack_keys")  # pylint: disable=protected-access
    first._execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")  # pylint: disable=protected-access
    first.close()
    upgraded = PostgresStore(pg_url)
    assert upgraded.schema_version() == SCHEMA_VERSION and upgraded.keyring("nothing") is None
    assert upgraded.store_salt() == upgraded.store_salt()  # made once, then fixed
    upgraded.close()


def test_store_copy_carries_a_stacks_secrets_to_a_store_with_another_salt(tmp_path: Path, pg_url):
    """hotplay.stacks.store_copy: rows as stored, the keyring with them; each store
    keeps its own salt for new keyrings, and the copy opens with the same key."""
    import textwrap  # pylint: disable=import-outside-toplevel

    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (  # pylint: disable=import-outside-toplevel
        ApplyRequest,
        apply_stack,
    )
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store  # pylint: disable=import-outside-toplevel
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.copy import (  # pylint: disable=import-outside-toplevel
        CopyRequest,
        copy_stacks,
    )

    template = tmp_path / "t.yaml"
    template.write_text(textwrap.dedent("""\
        heat_template_version: 2018-08-31
        parameters:
          pw: {type: string, hidden: true}
        resources:
          r: {type: OS::Heat::TestResource, properties: {value: {get_param: pw}}}
        outputs:
          out: {value: {get_attr: [r, output]}}
        """))
    source, target = open_store(f"sqlite:///{tmp_path}/a.db"), open_store(pg_url)
    for store, name in ((source, "web"), (target, "mine")):  # both stores make their salt
        request = ApplyRequest(name=name, template=str(template), parameters={"pw": SECRET})
        assert not apply_stack(sealed(store, KEY), request, "t").failed
    assert source.store_salt() != target.store_salt()
    copy_stacks(source, target, CopyRequest(stacks=["web"]), "copier")
    assert SECRET not in _raw_text(target)
    opened = sealed(target, KEY)
    stack = opened.find_stack("web")
    opened.unlock("web", stack, run=True)
    assert stack.outputs == {"out": SECRET}
    again = apply_stack(opened, ApplyRequest(name="web", template=str(template), parameters={"pw": SECRET}), "t")
    assert again.changed is False  # the same keyed digest in the target: nothing to do
    with pytest.raises(StoreKeyError, match="does not open stack web's secrets"):
        sealed(target, StoreKey("wrong")).unlock("web", stack, run=False)
    source.close()
    target.close()


def test_an_older_sqlite_file_gains_the_keyring_table_and_says_so(tmp_path: Path):
    old = SqliteStore(str(tmp_path / "old.db"))
    old._write("DROP TABLE stack_keys")  # pylint: disable=protected-access
    old._write("UPDATE meta SET value = '1' WHERE key = 'schema_version'")  # pylint: disable=protected-access
    old.close()
    reopened = SqliteStore(str(tmp_path / "old.db"))
    assert reopened.stored_rows("meta", "key", ["schema_version"])[0]["value"] == str(SCHEMA_VERSION)
    assert reopened.keyring("nothing") is None
    reopened.close()
