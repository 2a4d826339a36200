# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Many ansible-playbook processes at once on a shared PostgreSQL store: per
stack the applies take turns, across stacks they run side by side, no revision
is lost, a refused run says who holds the lock, and a killed run's lock is taken
over by the next run (at once here: the holder's process is seen gone)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from typing import Any

import psycopg
import yaml

from conftest import BIN, HARNESS_ENV, INSTALLED, REPO, dump_task, write_template
from processes import kill_tree, wait_until

# The throwaway PostgreSQL server of the store suite (a module, not a conftest.py).
sys.path.insert(0, str(REPO / "tests" / "unit" / "plugins" / "plugin_utils"))
from pg_backends import pg_server, pg_url  # noqa: E402,F401 pylint: disable=unused-import,wrong-import-position

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      run: {type: string}
      wait: {type: number, default: 3}
    resources:
      work:
        type: OS::Heat::TestResource
        properties:
          value: {get_param: run}
          wait_secs: {get_param: wait}
    outputs:
      run: {value: {get_attr: [work, output]}}
    """

STACKS = ("alpha", "beta", "gamma")
# Applies that wait for the lock, per stack: with one that does not wait per stack,
# 13 ansible-playbook processes at once.
WAITING = {"alpha": 4, "beta": 3, "gamma": 3}
LOCKED = re.compile(
    r"^Stack \"(?P<stack>\w+)\" is locked by ansible-playbook \(\S+@\S+, task 'Apply \w+ run \S+'\)"
    r" \(pid \d+ on \S+, since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); its lease runs until"
    r" \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ unless renewed$")


def _environment() -> dict[str, str]:
    environment = {
        **os.environ,
        "ANSIBLE_COLLECTIONS_PATH": str(INSTALLED),
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"),
        "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
        **HARNESS_ENV,
    }
    environment.pop("PYTHONPATH", None)
    return environment


def _playbook(folder: Path, stack: str, run: str, store: str, lock_timeout: int,
              wait: int = 3, gate: Path | None = None) -> tuple[Path, Path]:
    """A play applying ``stack``; with a ``gate``, the apply waits for that file
    (the process is started and warm by then)."""
    dump = folder / f"{run}.json"
    gated = [{"ansible.builtin.wait_for": {"path": str(gate), "timeout": 600}}] if gate else []
    play = [{
        "hosts": "localhost", "gather_facts": False,
        "tasks": gated + [
            {"name": f"Apply {stack} run {run}",
             "hotplay.stacks.stack": {
                 "name": stack, "template": str(folder / "work.yaml"), "store": store,
                 "parameters": {"run": run, "wait": wait}, "lock_timeout": lock_timeout},
             "register": "applied", "ignore_errors": True},
            dump_task(dump, "applied"),
        ],
    }]
    path = folder / f"{run}.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    return path, dump


def _start(playbook: Path, folder: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)],
        cwd=folder, env=_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True)


def _rows(url: str, sql: str, args: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as connection:
        return connection.execute(sql, args).fetchall()


def _locked_stacks(url: str) -> set[str]:
    """Stacks whose lock is held now: a lease that has not run out by the server's clock."""
    if not _has_tables(url):
        return set()
    rows = _rows(url, "SELECT stack_name FROM leases"
                      " WHERE expires > EXTRACT(EPOCH FROM clock_timestamp())")
    return {row[0] for row in rows}


def _has_tables(url: str) -> bool:
    return bool(_rows(url, "SELECT 1 FROM pg_tables WHERE tablename = 'leases'"))


def _runs_of(url: str, stack: str) -> list[tuple[int, int, list[tuple]]]:
    """The stack's events in id order (one sequence for every stack: a clock),
    cut into runs: (first id, last id, events) from 'started' to its end."""
    events = _rows(url, "SELECT e.id, e.resource_name, e.action, e.status FROM events e"
                        " JOIN stacks s ON s.id = e.stack_id WHERE s.name = %s ORDER BY e.id",
                   (stack,))
    runs: list[tuple[int, int, list[tuple]]] = []
    current: list[tuple] = []
    for event in events:
        is_stack_event = event[1] == stack
        if is_stack_event and event[3] == "IN_PROGRESS":
            assert not current, f"{stack}: a run started before the last one ended: {current + [event]}"
            current = [event]
        else:
            assert current, f"{stack}: an event outside any run: {event}"
            current.append(event)
            if is_stack_event:
                assert event[3] == "COMPLETE", event
                runs.append((current[0][0], event[0], current))
                current = []
    assert not current, f"{stack}: a run never ended: {current}"
    return runs


@pytest.mark.slow
def test_applies_of_one_stack_take_turns_and_of_different_stacks_overlap(tmp_path, pg_url):
    write_template(tmp_path, "work.yaml", TEMPLATE)
    waiting = []
    for stack in STACKS:
        for index in range(WAITING[stack]):
            run = f"{stack}-w{index}"
            waiting.append((stack, run, *_playbook(tmp_path, stack, run, pg_url, lock_timeout=600)))
    # And a run per stack that does not wait, let go once every stack is being applied.
    gate = tmp_path / "all-locked"
    for stack in STACKS:
        waiting.append((stack, f"{stack}-now",
                        *_playbook(tmp_path, stack, f"{stack}-now", pg_url, lock_timeout=0, gate=gate)))
    started = [(stack, run, dump, _start(playbook, tmp_path)) for stack, run, playbook, dump in waiting]
    assert len(started) == 13
    results: dict[str, dict[str, Any]] = {}
    try:
        wait_until(lambda: _locked_stacks(pg_url) == set(STACKS), 300, "every stack to be locked")
        gate.touch()
        for stack, run, dump, process in started:
            output, _none = process.communicate(timeout=900)
            assert process.returncode == 0, output  # failures are ignored so results are kept
            results[run] = {**json.loads(dump.read_text()), "stack_name": stack}
    finally:
        for _stack, _run, _dump, process in started:
            if process.poll() is None:  # the test failed before its end: leave nothing behind
                kill_tree(process.pid)

    succeeded = defaultdict(list)
    for run, result in results.items():
        if not result["failed"]:
            assert result["stack_status"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE"), result
            succeeded[result["stack_name"]].append((result["revision"], run))
            continue
        assert run.endswith("-now"), f"{run} waited for the lock and still failed: {result['msg']}"
        refused = LOCKED.match(result["msg"])
        assert refused and refused["stack"] == result["stack_name"], result["msg"]
        assert not result["changed"]
    refusals = [run for run, result in results.items() if result["failed"]]
    assert refusals, "no run that did not wait was refused"

    intervals = {}
    for stack in STACKS:
        # No revision lost: one per successful apply, numbered 1..n, all complete.
        revisions = _rows(pg_url, "SELECT r.revision, r.status, r.created, r.finished FROM revisions r"
                                  " JOIN stacks s ON s.id = r.stack_id WHERE s.name = %s"
                                  " ORDER BY r.revision", (stack,))
        done = sorted(succeeded[stack])
        assert [r for r, _run in done] == list(range(1, len(done) + 1)) == [r[0] for r in revisions]
        assert {r[1] for r in revisions} == {"COMPLETE"}
        # Taking turns: each revision started after the one before it finished.
        for before, after in zip(revisions, revisions[1:]):
            assert after[2] >= before[3], (before, after)
        runs = _runs_of(pg_url, stack)
        assert len(runs) == len(revisions)
        intervals[stack] = [(first, last) for first, last, _events in runs]
        last_run = done[-1][1]
        outputs = _rows(pg_url, "SELECT outputs FROM stacks WHERE name = %s AND NOT deleted", (stack,))
        assert outputs == [({"run": last_run},)]
    assert sum(len(v) for v in intervals.values()) == len(results) - len(refusals)
    # Every run's lease was released, and each took its own token.
    assert _locked_stacks(pg_url) == set()
    assert sorted(_rows(pg_url, "SELECT stack_name, token FROM leases")) == [
        (stack, len(succeeded[stack])) for stack in STACKS]

    # Side by side: runs of different stacks overlap on the common event clock.
    overlaps = [(a, b) for a in STACKS for b in STACKS if a < b
                for first_a, last_a in intervals[a] for first_b, last_b in intervals[b]
                if first_a < last_b and first_b < last_a]
    assert overlaps, intervals


def test_a_killed_run_frees_its_lock_and_the_next_run_resumes(tmp_path, pg_url):
    write_template(tmp_path, "work.yaml", TEMPLATE)
    playbook, _dump = _playbook(tmp_path, "victim", "killed", pg_url, lock_timeout=0, wait=600)
    killed = _start(playbook, tmp_path)
    try:
        creating = ("SELECT r.status FROM resources r JOIN stacks s ON s.id = r.stack_id"
                    " WHERE s.name = 'victim' AND r.name = 'work'")
        wait_until(lambda: _has_tables(pg_url) and _rows(pg_url, creating) == [("IN_PROGRESS",)],
                   300, "the run to be creating its resource")
        assert _locked_stacks(pg_url) == {"victim"}
    finally:
        # The whole job dies at once (an AWX container killed, an OOM kill): the
        # ansible-playbook process and its task worker, which holds the lock
        # (Ansible gives each worker a session of its own).
        kill_tree(killed.pid)
        killed.communicate(timeout=60)
    # Its lease is left as it was: only its holder's process is gone (on this host,
    # in this PID namespace, so the next run can see that; elsewhere it would wait
    # for the lease to run out).
    [(stale, token)] = _rows(pg_url, "SELECT holder, token FROM leases WHERE stack_name = 'victim'")
    assert stale.endswith("task 'Apply victim run killed')") and token == 1
    assert _rows(pg_url, "SELECT status FROM stacks WHERE name = 'victim'") == [("IN_PROGRESS",)]

    playbook, dump = _playbook(tmp_path, "victim", "next", pg_url, lock_timeout=0, wait=0)
    completed = _start(playbook, tmp_path)
    output, _none = completed.communicate(timeout=300)
    assert completed.returncode == 0, output
    result = json.loads(dump.read_text())
    assert not result["failed"], result["msg"]
    assert result["stack_status"].endswith("_COMPLETE") and result["outputs"] == {"run": "next"}
    [resource] = result["resources"]
    assert resource["name"] == "work" and resource["status"].endswith("_COMPLETE")
    assert _rows(pg_url, "SELECT r.revision, r.status FROM revisions r JOIN stacks s ON s.id = r.stack_id"
                         " WHERE s.name = 'victim' ORDER BY r.revision") == [
        (1, "FAILED"), (2, "COMPLETE")]  # the dead job's revision, closed by the next one
    [(note, token)] = _rows(pg_url, "SELECT note, token FROM leases WHERE stack_name = 'victim'")
    assert token == 2 and note.startswith("took over from ") and note.endswith(": its process is gone")
    assert _locked_stacks(pg_url) == set()
