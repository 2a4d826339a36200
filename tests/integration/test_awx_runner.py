# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped playbooks run by ansible-runner, the engine AWX runs its jobs with:
what AWX shows and keeps of a job is runner's job events and artifacts.  The store
credential reaches the job as environment variables, as AWX's credential type
injects it (extensions/awx/credential_type.yml), and a hidden parameter comes as an
extra variable, as a survey's password answer does."""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import BIN, INSTALLED, store_rows, write_template

SECRET = "pa'ss\"w0rd with $pace"  # quotes and a dollar: every encoding differs from the text
STORE_KEY = "runner-store-key-passphrase"
TEMPLATE = """\
    heat_template_version: 2021-04-16
    parameters:
      db_password: {type: string, hidden: true}
      replicas: {type: number, default: 2}
    resources:
      password_file:
        type: OS::Heat::Value
        properties: {value: {get_param: db_password}}
      db:
        type: OS::Heat::TestResource
        properties: {value: {str_replace: {template: "db:N", params: {N: {get_param: replicas}}}}}
      cache:
        type: OS::Heat::TestResource
        properties: {value: cache}
      app:
        type: OS::Heat::TestResource
        depends_on: [db, cache, password_file]
        properties: {value: app}
    outputs:
      db: {value: {get_attr: [db, output]}}
    """


@dataclass
class Job:
    """What ansible-runner left of one job: its status, rc and artifacts directory."""

    status: str
    rc: int
    artifacts: Path

    @property
    def events(self) -> list[dict[str, Any]]:
        files = (self.artifacts / "job_events").glob("*.json")
        return sorted((json.loads(f.read_text()) for f in files), key=lambda e: e["counter"])

    @property
    def stdout(self) -> str:
        return (self.artifacts / "stdout").read_text()

    def stats(self) -> dict[str, Any]:
        return next(e for e in self.events if e["event"] == "playbook_on_stats")["event_data"]["artifact_data"]


def run_job(tmp_path: Path, playbook: str, extravars: dict[str, Any]) -> Job:
    """One job through the ansible-runner command, in a process of its own as AWX
    runs it; the job's environment and extra variables are files, as AWX writes them."""
    private = tmp_path / f"job-{len(list(tmp_path.glob('job-*')))}"
    (private / "env").mkdir(parents=True)
    (private / "project").mkdir()
    (private / "inventory").mkdir()
    (private / "inventory" / "hosts").write_text("localhost ansible_connection=local\n")
    (private / "env" / "extravars").write_text(json.dumps(extravars))
    (private / "env" / "envvars").write_text(json.dumps({
        "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED), "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"),
        "HOTPLAY_STORE": f"sqlite:///{tmp_path / 'store.db'}", "HOTPLAY_STORE_KEY": STORE_KEY,
        "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_NOCOLOR": "1"}))
    subprocess.run([str(BIN / "ansible-runner"), "run", str(private), "-p", playbook, "--ident", "job",
                    "--quiet"], capture_output=True, text=True, timeout=600, check=False)
    artifacts = private / "artifacts" / "job"
    return Job((artifacts / "status").read_text().strip(), int((artifacts / "rc").read_text()), artifacts)


@pytest.fixture
def applied(tmp_path: Path) -> Job:
    template = write_template(tmp_path, "web.yaml", TEMPLATE)
    return run_job(tmp_path, "hotplay.stacks.apply",
                   {"stack": "web", "template": str(template), "parameters": {"db_password": SECRET}})


def test_a_job_shows_each_resource_as_it_happens_and_publishes_its_stats(applied):
    assert (applied.status, applied.rc) == ("successful", 0), applied.stdout
    events = applied.events
    apply_task = next(i for i, e in enumerate(events) if e["event"] == "playbook_on_task_start"
                      and e["event_data"].get("task") == "Apply the stack, or preview it in check mode")
    done = next(i for i, e in enumerate(events) if i > apply_task and e["event"] == "runner_on_ok")
    # AWX streams these lines while the task runs: they come between its start and its result.
    progress = [e["stdout"] for e in events[apply_task:done] if e["event"] == "verbose"]
    for resource in ("password_file", "db", "cache", "app"):
        assert f"[web] {resource}: CREATE_COMPLETE" in progress, progress
    assert progress.index("[web] app: CREATE_COMPLETE") > progress.index("[web] db: CREATE_COMPLETE")

    summary = applied.stats()["hotplay_stack"]
    assert (summary["stack"], summary["status"], summary["revision"]) == ("web", "CREATE_COMPLETE", 1)
    assert summary["outputs"] == {"db": "db:2"}


def secret_forms(secret: str) -> list[str]:
    """The secret as JSON, Python's repr and a shell would write it, and as is."""
    return sorted({secret, json.dumps(secret)[1:-1], repr(secret)[1:-1], shlex.quote(secret)})


def test_no_secret_in_any_artifact_or_in_the_store(applied, tmp_path):
    assert applied.status == "successful", applied.stdout
    files = [p for p in applied.artifacts.rglob("*") if p.is_file()]
    assert any(p.parent.name == "job_events" for p in files)  # the events AWX keeps are here
    for path in files + [tmp_path / "store.db"]:
        text = path.read_bytes().decode("utf-8", "replace")
        for form in secret_forms(SECRET):
            assert form not in text, f"{form!r} in {path}"
    assert store_rows(f"sqlite:///{tmp_path / 'store.db'}", "SELECT name FROM stacks") == [("web",)]


def test_the_rollback_job_of_a_survey_goes_back_a_revision(tmp_path):
    template = write_template(tmp_path, "web.yaml", TEMPLATE)
    for replicas in (2, 3):
        job = run_job(tmp_path, "hotplay.stacks.apply", {
            "stack": "web", "template": str(template),
            "parameters": {"db_password": SECRET, "replicas": replicas}})
        assert job.status == "successful", job.stdout
    rolled = run_job(tmp_path, "hotplay.stacks.rollback", {"stack": "web"})
    assert rolled.status == "successful", rolled.stdout
    stats = rolled.stats()
    summary = stats["hotplay_rollback"]
    assert (summary["status"], summary["target_revision"]) == ("ROLLBACK_COMPLETE", 1), summary
    assert yaml.safe_dump(stats).count(SECRET) == 0
    [(outputs,)] = store_rows(f"sqlite:///{tmp_path / 'store.db'}", "SELECT outputs FROM stacks WHERE name = 'web'")
    assert "db:2" in outputs
