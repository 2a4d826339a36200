# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets through real ansible-playbook runs (-vvv, a log file) on SQLite and on
PostgreSQL: a hidden value and everything derived from it appear nowhere a run
leaves them (output, log, result files, the store's bytes or a pg_dump); with the
key, rollback and PATCH need no hidden value again; a wrong key is one error;
without a key, runs are refused as documented and views show ******."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, write_template

# The store_url fixture there gives each test a SQLite file and a fresh PostgreSQL
# database (a throwaway server): it overrides conftest's SQLite-only one here.
sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "plugin_utils"))
from pg_backends import pg_server, pg_url, store_url  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position

SECRET = "Vault-Pw-8k2Q"
KEY = "store passphrase from an AWX credential"

APP = """\
    heat_template_version: 2021-04-16
    parameters:
      db_password: {type: string, hidden: true}
      release: {type: string, default: "1"}
    resources:
      db:
        type: OS::Heat::TestResource
        properties:
          value: {get_param: db_password}
      conf:
        type: OS::Heat::Value
        properties:
          value:
            str_replace:
              template: release=$R user=admin password=$P
              params: {$R: {get_param: release}, $P: {get_attr: [db, output]}}
      child:
        type: OS::Heat::Stack
        properties:
          parameters: {pw: {get_param: db_password}, release: {get_param: release}}
          template: |
            heat_template_version: 2021-04-16
            parameters:
              pw: {type: string, hidden: true}
              release: {type: string}
            resources:
              inner:
                type: OS::Heat::TestResource
                properties: {value: {list_join: ["-", [{get_param: pw}, {get_param: release}]]}}
            outputs:
              inner: {value: {get_attr: [inner, output]}}
      server:
        type: OS::Heat::TestResource
        properties:
          value: {get_param: release}
          update_replace_value: {get_param: release}
    outputs:
      password: {value: {get_param: db_password}}
      conf: {value: {get_attr: [conf, value]}}
      inner: {value: {get_attr: [child, outputs, inner]}}
      release: {value: {get_param: release}}
    """

# A hidden value that fails a resource at run time: Heat's message quotes it.
BAD = """\
    heat_template_version: 2021-04-16
    parameters:
      db_password: {type: string, hidden: true}
    resources:
      src:
        type: OS::Heat::TestResource
        properties: {value: {get_param: db_password}}
      bad:
        type: OS::Heat::TestResource
        properties: {wait_secs: {get_attr: [src, output]}}
    """

PASSWORD = "{{ lookup('env', 'SECRET_PW') }}"  # as from a vault: not in the playbook file


def stack(register: str, template: str | None = None, **args) -> dict:
    task_args = {"name": "app", **({"template": template} if template else {}), **args}
    return {"name": register, "hotplay.stacks.stack": task_args, "register": register}


def test_secrets_never_leave_the_store_in_plain_text(run_tasks, store_url, tmp_path):
    app = str(write_template(tmp_path, "app.yaml", APP))
    bad = str(write_template(tmp_path, "bad.yaml", BAD))
    env = {"HOTPLAY_STORE_KEY": KEY, "SECRET_PW": SECRET, "ANSIBLE_VERBOSITY": "3",
           "ANSIBLE_LOG_PATH": str(tmp_path / "ansible.log")}
    keyed = run_tasks([
        stack("v1", app, parameters={"db_password": PASSWORD}, nested_depth=1),
        {**stack("preview", app, parameters={"db_password": PASSWORD, "release": "2"}),
         "check_mode": True, "diff": True},
        stack("v2", app, parameters={"db_password": PASSWORD, "release": "2"}),
        {"hotplay.stacks.stack_info": {"name": "app", "nested_depth": 1, "compare_revisions": [1, 2]},
         "register": "info"},
        {"hotplay.stacks.stack_rollback": {"name": "app"}, "register": "rolled", "diff": True},
        stack("patched", existing=True, parameters={"release": "3"}),
        {"hotplay.stacks.stack": {"name": "bad", "template": bad, "parameters": {"db_password": PASSWORD}},
         "register": "bad"},
        {"hotplay.stacks.stack_info": {"name": "app", "store_key": "not the key"}, "register": "wrong"},
        {"hotplay.stacks.stack_rollback": {"name": "app", "store_key": "not the key"},
         "register": "wrong_rollback"},
    ], name="keyed", env=env)
    keyless_env = {k: v for k, v in env.items() if k != "HOTPLAY_STORE_KEY"}
    keyless = run_tasks([
        stack("refused", existing=True, parameters={"release": "4"}),
        {"hotplay.stacks.stack_rollback": {"name": "app"}, "register": "refused_rollback"},
        {"hotplay.stacks.stack": {"name": "fresh", "template": app, "parameters": {"db_password": PASSWORD}},
         "register": "fresh"},
        {"hotplay.stacks.stack_info": {"name": "app"}, "register": "masked_info"},
        {"hotplay.stacks.stack_info": {}, "register": "listing"},
    ], name="keyless", env=keyless_env)
    r, k = keyed.results, keyless.results

    # With the key: created, previewed, updated, rolled back, patched: no hidden value given again.
    assert r["v1"]["stack_status"] == "CREATE_COMPLETE", r["v1"]
    assert r["v1"]["outputs"] == {"password": "******", "conf": "release=1 user=admin password=******",
                                  "inner": "******-1", "release": "1"}
    assert r["v1"]["parameters"] == {"db_password": "******", "release": "1"}
    assert r["preview"]["changed"] and "server" in r["preview"]["plan"]["replaced"]
    assert r["v2"]["stack_status"] == "UPDATE_COMPLETE" and r["v2"]["revision"] == 2
    assert r["info"]["stack"]["parameters"]["db_password"] == "******"
    assert r["rolled"]["stack_status"] == "ROLLBACK_COMPLETE", r["rolled"]
    assert r["rolled"]["rollback"]["target_revision"] == 1
    assert r["rolled"]["outputs"]["conf"] == "release=1 user=admin password=******"
    assert r["patched"]["stack_status"] == "UPDATE_COMPLETE", r["patched"]
    assert r["patched"]["outputs"]["inner"] == "******-3"
    # A run-time failure that quotes the hidden value: recorded, shown masked.
    assert r["bad"]["stack_status"] == "CREATE_FAILED" and "resources.bad" in r["bad"]["msg"]
    assert "******" in r["bad"]["msg"]
    # A wrong key: one clear error, nothing else.
    for name in ("wrong", "wrong_rollback"):
        assert r[name]["failed"] and r[name]["msg"] == "the store key does not open stack app's secrets"
    # Without a key: runs refused before anything is written, views masked.
    assert k["refused"]["failed"] and "stack app keeps secrets in the store" in k["refused"]["msg"]
    assert "HOTPLAY_STORE_KEY" in k["refused"]["msg"] and "store_key" in k["refused"]["msg"]
    assert k["refused_rollback"]["failed"] and "HOTPLAY_STORE_KEY" in k["refused_rollback"]["msg"]
    assert k["fresh"]["failed"] and "stack fresh has hidden parameters (db_password)" in k["fresh"]["msg"]
    assert "fresh" not in [s["name"] for s in k["listing"]["stacks"]]
    info = k["masked_info"]["stack"]
    assert info["status"] == "UPDATE_COMPLETE" and info["revision"] == 4
    assert info["outputs"]["release"] == "3" and info["outputs"]["password"] == "******"

    # The hidden value, and what was derived from it, appear nowhere a run leaves.
    leftovers = {"keyed stdout": keyed.stdout, "keyed stderr": keyed.stderr,
                 "keyless stdout": keyless.stdout, "keyless stderr": keyless.stderr}
    assert "TASK [v1]" in keyed.stdout and "task path:" in keyed.stdout  # really -vvv
    assert "[app] db: CREATE_COMPLETE" in keyed.stdout
    for path in tmp_path.rglob("*"):
        if path.is_file():
            leftovers[str(path)] = path.read_bytes().decode("utf-8", "replace")
    assert (tmp_path / "ansible.log").stat().st_size > 0
    if store_url.startswith("postgresql"):
        leftovers["pg_dump"] = pg_dump(store_url)
        assert "stack_keys" in leftovers["pg_dump"]
    for where, text in leftovers.items():
        assert SECRET not in text, f"the secret is in {where}"
    assert any("$hotplay$1$" in text for text in leftovers.values())  # sealed, not dropped


def pg_dump(url: str) -> str:
    dumped = subprocess.run(["pg_dump", "--data-only", "--inserts", url], capture_output=True,
                            text=True, check=True, timeout=120, env={**os.environ})
    return dumped.stdout


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_without_a_key_a_hidden_default_still_works(run_tasks, store_url, tmp_path):
    """A hidden parameter left at its template default is no secret to keep (the
    stored template holds it): such stacks need no key, as before.  But it is never
    shown: not in outputs that read it, nor in events or progress lines."""
    template = write_template(tmp_path, "t.yaml", """\
        heat_template_version: 2021-04-16
        parameters:
          token: {type: string, hidden: true, default: shown-in-the-template}
        resources:
          r:
            type: OS::Heat::TestResource
            properties: {value: {get_param: token}}
        outputs:
          read_back: {value: {get_attr: [r, output]}}
        """)
    run = run_tasks([stack("plain", str(template), nested_depth=1)],
                    env={"HOTPLAY_STORE_KEY": "", "ANSIBLE_VERBOSITY": "3"})
    assert run.results["plain"]["stack_status"] == "CREATE_COMPLETE", run.results["plain"]
    assert run.results["plain"]["parameters"] == {"token": "******"}
    assert run.results["plain"]["outputs"]["read_back"] == "******"
    assert "shown-in-the-template" not in run.stdout + run.stderr


# Secrets with characters that each encoding writes differently: quotes of both kinds
# (Python's repr escapes one), a backslash, a dollar (shell), non-ASCII, a newline.
AWKWARD = ["it's \"quoted\"", "back\\slash$HOME", "pässwörd ✓ 密码", "two\nlines\ttab", "'; rm -rf / #"]


def encodings(secret: str) -> set[str]:
    written = {secret, repr(secret)[1:-1], ascii(secret)[1:-1], shlex.quote(secret)}
    return written | {json.dumps(text)[1:-1] for text in written} | {
        json.dumps(text, ensure_ascii=False)[1:-1] for text in written}


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("secret", AWKWARD, ids=range(len(AWKWARD)))
def test_awkward_secrets_are_masked_in_every_encoding(run_tasks, store_url, tmp_path, secret):
    app = str(write_template(tmp_path, "app.yaml", APP))
    bad = str(write_template(tmp_path, "bad.yaml", BAD))
    env = {"HOTPLAY_STORE_KEY": KEY, "SECRET_PW": secret, "ANSIBLE_VERBOSITY": "3"}
    run = run_tasks([
        stack("app", app, parameters={"db_password": PASSWORD}, nested_depth=1),
        # the failure message quotes the value as Python's repr writes it
        {"hotplay.stacks.stack": {"name": "bad", "template": bad, "parameters": {"db_password": PASSWORD}},
         "register": "bad"},
    ], env=env)
    assert run.results["app"]["stack_status"] == "CREATE_COMPLETE", run.results["app"]
    assert run.results["bad"]["stack_status"] == "CREATE_FAILED"
    assert "could not convert string to float: " in run.results["bad"]["msg"]
    assert "******" in run.results["bad"]["msg"].rsplit(":", 1)[1]
    places = {"stdout": run.stdout, "stderr": run.stderr}
    places.update({str(p): p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()})
    for form in encodings(secret):
        for where, text in places.items():
            assert form not in text, f"{form!r} is in {where}"


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("password", ["Qv%zzK7w", "Qv9 K7wz", "Qv9@K7w/zz8"])
def test_a_malformed_postgresql_url_never_shows_its_password(run_tasks, store_url, password):
    """The driver quotes the part of a URL it cannot parse: that part is the password."""
    url = f"postgresql://hotplay:{password}@127.0.0.1:9/stacks"
    run = run_tasks([{"hotplay.stacks.stack_info": {"name": "app", "store": url}, "register": "info"}])
    assert run.results["info"]["failed"]
    assert "postgresql://hotplay:***@127.0.0.1:9/stacks" in run.results["info"]["msg"]
    pieces = {password, *password.replace("@", " ").replace("/", " ").replace("%", " ").split()}
    for piece in (p for p in pieces if len(p) > 2):  # shorter ones are in any text
        for where, text in {"stdout": run.stdout, "stderr": run.stderr,
                            "result": json.dumps(run.results)}.items():
            assert piece not in text, f"{piece!r} of the password is in {where}"


MODULE_NO_LOG = """\
    heat_template_version: 2021-04-16
    parameters:
      token: {type: string}
      dir: {type: string}
    resources:
      fetched:
        type: Hotplay::Ansible::Module
        properties:
          # get_url's argument spec (urls.url_argument_spec) marks url_password
          # no_log; the template does not list it in no_log.
          module: ansible.builtin.get_url
          args:
            url: {list_join: ["", ["file://", {get_param: dir}, "/page.txt"]]}
            dest: {list_join: ["/", [{get_param: dir}, "fetched.txt"]]}
            url_username: reader
            url_password: {get_param: token}
            mode: "0600"
    outputs:
      dest: {value: {get_attr: [fetched, dest]}}
    """


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("key", [KEY, ""], ids=["with a store key", "without"])
def test_arguments_a_module_marks_no_log_are_secrets(run_tasks, store_url, tmp_path, key):
    """A credential argument a module's own spec marks no_log is sealed in the store
    when it has a key (and needs none), and masked in everything the task shows."""
    token = "tok-Qz81-not-for-logs"
    (tmp_path / "page.txt").write_text("hello")
    template = write_template(tmp_path, "fetched.yaml", MODULE_NO_LOG)
    run = run_tasks([stack("fetched", str(template), parameters={"token": token, "dir": str(tmp_path)},
                           nested_depth=1)],
                    env={"HOTPLAY_STORE_KEY": key, "ANSIBLE_VERBOSITY": "3"})
    assert run.results["fetched"]["stack_status"] == "CREATE_COMPLETE", run.results["fetched"]
    assert (tmp_path / "fetched.txt").read_text() == "hello"
    assert token not in run.stdout + run.stderr + json.dumps(run.results)
    stored = Path(store_url[len("sqlite:///"):]).read_bytes()
    assert (token.encode() in stored) is (not key), "sealed with a key, as given without one"


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_hidden_value_changed_by_an_update_is_masked_in_heats_abandon_data(run_tasks, store_url, tmp_path):
    """Issue 40, item 5: after an update gave a hidden parameter a new value,
    ``stack_info format: heat_abandon`` showed that value in the clear."""
    app = str(write_template(tmp_path, "app.yaml", APP))
    changed = "Rotated-Pw-5xT7"
    env = {"HOTPLAY_STORE_KEY": KEY, "SECRET_PW": SECRET, "ROTATED_PW": changed}
    run = run_tasks([
        stack("v1", app, parameters={"db_password": PASSWORD}),
        stack("v2", app, parameters={"db_password": "{{ lookup('env', 'ROTATED_PW') }}"}),
        {"hotplay.stacks.stack_info": {"name": "app", "format": "heat_abandon"}, "register": "exported"},
    ], name="rotated", env=env)
    assert run.results["v2"]["stack_status"] == "UPDATE_COMPLETE", run.results["v2"]
    exported = run.results["exported"]["heat_abandon"]
    assert exported["environment"]["parameters"]["db_password"] == "******"
    shown = json.dumps(run.results) + run.stdout + run.stderr
    assert changed not in shown and SECRET not in shown
