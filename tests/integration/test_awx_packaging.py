# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What AWX needs: the execution environment's build context (ansible-builder
create), the store credential type, and the shipped playbooks' set_stats data."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import BIN, EXAMPLES, INSTALLED, REPO, store_rows, write_template

AWX = REPO / "extensions" / "awx"

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      size: {type: number}
    resources:
      disk:
        type: OS::Heat::TestResource
        properties: {value: {get_param: size}}
    outputs:
      size: {value: {get_attr: [disk, output]}}
    """


def _playbook(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_NOCOLOR": "1",
                   "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), "ANSIBLE_LOCALHOST_WARNING": "false",
                   "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false", "ANSIBLE_SHOW_CUSTOM_STATS": "true",
                   **(env or {})}
    environment.pop("PYTHONPATH", None)
    return subprocess.run([str(BIN / "ansible-playbook"), *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=600, check=False)


def _custom_stats(stdout: str) -> dict[str, Any]:
    """The set_stats data of a run, as the default callback prints it (``RUN: {json}``)."""
    lines = [line for line in stdout.splitlines() if line.startswith("\tRUN: ")]
    assert len(lines) == 1, stdout
    return json.loads(lines[0][len("\tRUN: "):])


# -- the execution environment ------------------------------------------------------


def test_ansible_builder_makes_the_build_context(tmp_path):
    context = tmp_path / "ee"
    env = {**os.environ, "HOTPLAY_EE_CONTEXT": str(context)}
    done = subprocess.run(["bash", str(REPO / "scripts" / "ee.sh")], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    build = context / "_build"
    # The Python and system dependencies, as the repository declares them.
    assert (build / "requirements.txt").read_text() == (REPO / "requirements.txt").read_text()
    assert (build / "bindep.txt").read_text() == (REPO / "bindep.txt").read_text()
    # The collection's tarball, named as the galaxy requirements name it.
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    wanted = yaml.safe_load((build / "requirements.yml").read_text())["collections"]
    assert wanted == [{"name": f"collections/hotplay-stacks-{version}.tar.gz", "type": "file"}]
    assert (build / "collections" / f"hotplay-stacks-{version}.tar.gz").is_file()
    containerfile = (context / "Dockerfile").read_text()
    assert "ansible-galaxy collection install" in containerfile
    assert "introspect --user-pip=requirements.txt --user-bindep=bindep.txt" in containerfile

    # In the image, ansible-builder introspects the collection installed from that
    # tarball: it must declare Graphviz and every library the plugins import.
    installed = tmp_path / "installed" / "ansible_collections" / "hotplay" / "stacks"
    with tarfile.open(build / "collections" / f"hotplay-stacks-{version}.tar.gz") as tarball:
        tarball.extractall(installed, filter="data")
    declared = _introspected(installed.parents[2])
    assert {"graphviz [platform:rpm]", "graphviz [platform:dpkg]"} <= set(declared["system"])
    provided = {*map(_distribution, declared["python"]), *_ansible_core_requirements()}
    missing = {module: dist for module, dist in _imported_distributions().items() if dist not in provided}
    assert not missing, f"imported by the plugins, not declared in requirements.txt: {missing}"


def test_the_installed_collection_declares_its_dependencies_to_ansible_builder():
    done = subprocess.run([str(BIN / "ansible-builder"), "introspect", "--sanitize", str(INSTALLED)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "psycopg[binary]>=3.1  # from collection hotplay.stacks" in done.stdout
    assert "sqlite-libs [platform:rpm]  # from collection hotplay.stacks" in done.stdout
    assert "graphviz [platform:dpkg]  # from collection hotplay.stacks" in done.stdout


def _introspected(collections: Path) -> dict[str, list[str]]:
    """What ``ansible-builder introspect`` reads of the collections under ``collections``
    (each entry without its ``# from collection`` comment)."""
    done = subprocess.run([str(BIN / "ansible-builder"), "introspect", "--sanitize", str(collections)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load(done.stdout)
    return {kind: [entry.split("  #")[0] for entry in data.get(kind) or []] for kind in ("python", "system")}


def _distribution(requirement: str) -> str:
    return canonicalize_name(Requirement(requirement).name)


def _ansible_core_requirements() -> set[str]:
    """What the EE has with ansible-core (introspect --sanitize leaves those out)."""
    requires = importlib.metadata.requires("ansible-core") or []
    return {"ansible-core", *(_distribution(r) for r in requires if "extra ==" not in r)}


def _imported_distributions() -> dict[str, str]:
    """Each third-party module the plugins import, and the distribution that has it
    (as installed in the test venv, which has every feature's libraries)."""
    modules: set[str] = set()
    for source in (REPO / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    third_party = modules - set(sys.stdlib_module_names) - {"ansible_collections"}
    owners = importlib.metadata.packages_distributions()
    unknown = sorted(module for module in third_party if module not in owners)
    assert not unknown, f"imported by the plugins, not installed in the test venv: {unknown}"
    return {module: canonicalize_name(owners[module][0]) for module in sorted(third_party)}


# -- the credential type --------------------------------------------------------------


def test_the_store_credential_type_injects_the_store_as_a_secret(tmp_path):
    credential_type = yaml.safe_load((AWX / "credential_type.yml").read_text())
    assert credential_type["kind"] == "cloud"  # the kinds AWX allows for custom types: cloud, net
    fields = {f["id"]: f for f in credential_type["inputs"]["fields"]}
    assert set(fields) == {"store_url", "store_key"}
    assert all(f["type"] == "string" and f["secret"] is True and f["label"] for f in fields.values())
    assert credential_type["inputs"]["required"] == ["store_url"]
    env = credential_type["injectors"]["env"]
    assert set(env) == {"HOTPLAY_STORE", "HOTPLAY_STORE_KEY"}
    # Rendered as AWX renders injectors (Jinja2, the credential's inputs as variables).
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    for template in env.values():
        assert jinja2.meta.find_undeclared_variables(environment.parse(template)) <= set(fields)
    store = f"sqlite:///{tmp_path / 'awx.db'}"
    injected = {name: environment.from_string(template).render(store_url=store, store_key="k3y")
                for name, template in env.items()}
    assert injected == {"HOTPLAY_STORE": store, "HOTPLAY_STORE_KEY": "k3y"}

    # A job with that credential needs no store in the playbook.
    write_template(tmp_path, "disk.yaml", TEMPLATE)
    done = _playbook(["-i", "localhost,", "-c", "local", "hotplay.stacks.apply", "-e",
                      json.dumps({"stack": "disk", "template": "disk.yaml", "parameters": {"size": 8}})],
                     tmp_path, env=injected)
    assert done.returncode == 0, done.stdout + done.stderr
    assert store_rows(store, "SELECT name, action, status FROM stacks") == [("disk", "CREATE", "COMPLETE")]


# -- set_stats of the shipped playbooks -----------------------------------------------


def test_preview_approve_apply_publishes_the_reviewed_plan(tmp_path):
    write_template(tmp_path, "disk.yaml", TEMPLATE)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    job = {"stack": "disk", "template": "disk.yaml", "parameters": {"size": 8}, "store": store}
    local = ["-i", "localhost,", "-c", "local", "hotplay.stacks.apply"]

    preview = _playbook([*local, "--check", "-e", json.dumps(job)], tmp_path)
    assert preview.returncode == 0, preview.stdout
    reviewed = _custom_stats(preview.stdout)["hotplay_preview"]
    assert reviewed["stack"] == "disk" and reviewed["preview"] is True and reviewed["changed"] is True
    assert reviewed["plan"]["added"] == ["disk"] and len(reviewed["plan_id"]) == 32
    assert store_rows(store, "SELECT count(*) FROM stacks") == [(0,)]

    # The workflow hands the preview's set_stats to the apply node as extra variables.
    applied = _playbook([*local, "-e", json.dumps({**job, "hotplay_preview": reviewed})], tmp_path)
    assert applied.returncode == 0, applied.stdout
    stack = _custom_stats(applied.stdout)["hotplay_stack"]
    assert stack["succeeded"] is True and stack["status"] == "CREATE_COMPLETE"
    assert stack["revision"] == 1 and stack["outputs"] == {"size": "8"}  # a TestResource value is a string
    assert stack["plan_id"] == reviewed["plan_id"]

    # A plan reviewed before someone else changed the stack is refused, and said so.
    stale = _playbook([*local, "--check", "-e", json.dumps({**job, "parameters": {"size": 9}})], tmp_path)
    old = _custom_stats(stale.stdout)["hotplay_preview"]
    _playbook([*local, "-e", json.dumps({**job, "parameters": {"size": 10}})], tmp_path)
    refused = _playbook([*local, "-e", json.dumps({**job, "parameters": {"size": 9}, "hotplay_preview": old})],
                        tmp_path)
    assert refused.returncode == 2
    outcome = _custom_stats(refused.stdout)["hotplay_stack"]
    assert outcome["succeeded"] is False and "is stale" in outcome["msg"]
    assert outcome["revision"] == 2 and outcome["outputs"] == {"size": "10"}


def test_demo_and_rollback_playbooks_publish_their_stack(tmp_path):
    store = f"sqlite:///{tmp_path / 'store.db'}"
    local = ["-i", "localhost,", "-c", "local"]
    demo = _playbook([*local, "hotplay.stacks.demo"], tmp_path, env={"HOTPLAY_STORE": store})
    assert demo.returncode == 0, demo.stdout
    published = _custom_stats(demo.stdout)["hotplay_stack"]
    assert published["stack"] == "hotplay-demo" and published["revision"] == 1
    assert published["status"] == "CREATE_COMPLETE" and published["outputs"]["endpoint"] == "https://shop.example.com/db-shop"
    assert len(published["plan_id"]) == 32

    write_template(tmp_path, "disk.yaml", TEMPLATE)
    for size in (1, 2):
        _playbook([*local, "hotplay.stacks.apply", "-e", json.dumps(
            {"stack": "disk", "template": "disk.yaml", "parameters": {"size": size}, "store": store})], tmp_path)
    rolled = _playbook([*local, "hotplay.stacks.rollback", "-e", json.dumps({"stack": "disk", "store": store})],
                       tmp_path)
    assert rolled.returncode == 0, rolled.stdout
    summary = _custom_stats(rolled.stdout)["hotplay_rollback"]
    assert summary["revision"] == 3 and summary["target_revision"] == 1
    assert summary["outputs"] == {"size": "1"} and len(summary["plan_id"]) == 32


def test_deploy_playbook_publishes_every_host(tmp_path):
    store = f"sqlite:///{tmp_path / 'store.db'}"
    hosts = {name: {"ansible_connection": "local", "host_root": str(tmp_path / name),
                    "hotplay_state_dir": str(tmp_path / name / "state"),
                    "ansible_python_interpreter": str(BIN / "python")} for name in ("app1", "app2")}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"hotplay_software": {"hosts": hosts}}}}))
    variables = {"software_template": str(EXAMPLES / "software" / "app_software.yaml"), "hotplay_serial": 1,
                 "hotplay_store": store,
                 "software_parameters": {"app_root": "{{ host_root }}/app", "version": "1.0"}}
    done = _playbook(["-i", str(inventory), "hotplay.stacks.deploy", "-e", json.dumps(variables)], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    software = _custom_stats(done.stdout)["hotplay_software"]
    assert sorted(software) == ["app1", "app2"]  # both batches, aggregated
    for host, stack in software.items():
        assert stack["stack"] == f"software-{host}" and stack["status"] == "CREATE_COMPLETE"
        assert stack["revision"] == 1 and len(stack["plan_id"]) == 32 and isinstance(stack["outputs"], dict)
