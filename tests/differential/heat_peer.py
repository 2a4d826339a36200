# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real OpenStack Heat engine as the differential tester's reference.

The peer is the ``heat`` folder of the team's shared directory (``../shared/peer/heat``
beside the clone, or ``$HOTPLAY_HEAT_PEER``): its ``start.sh`` runs Heat's API and
engine in one process with no keystone.  ``HeatPeer.start`` starts one instance per
session with its own state directory and port, and stops it at the end; ``HeatClient``
talks to its REST API (noauth: project ``admin``) with the standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_VENV = REPO / ".build" / "heatvenv"


def peer_folder() -> Path | None:
    """The peer's scripts, or None when there is none beside the clone."""
    named = os.environ.get("HOTPLAY_HEAT_PEER")
    if named:
        return Path(named)
    beside = REPO.parent / "shared" / "peer" / "heat"
    return beside if (beside / "start.sh").is_file() else None


def peer_venv() -> Path | None:
    """A venv with Heat installed: ``$HEAT_VENV``, the project's ``.build/heatvenv``
    (scripts/heat_peer.sh installs it), else ``/tmp/heatvenv``."""
    for candidate in (os.environ.get("HEAT_VENV"), str(DEFAULT_VENV), "/tmp/heatvenv"):
        if candidate and (Path(candidate) / "bin" / "heat-manage").exists():
            return Path(candidate)
    return None


# The peer's files a running Heat needs (not its benchmark results).
PEER_FILES = ("start.sh", "stop.sh", "heat_standalone.py", "etc")


def runnable_copy(peer: Path, venv: Path, into: Path) -> Path:
    """A copy of the peer's files in ``into`` that can start: the shared folder may be
    read-only, and then it lacks the ``etc/api-paste.ini`` its install.sh copies
    there; the copy takes Heat's own from the venv."""
    into.mkdir(parents=True, exist_ok=True)
    for name in PEER_FILES:
        source, target = peer / name, into / name
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)
    for path in [into, *into.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)  # copied from a read-only folder
    paste = into / "etc" / "api-paste.ini"
    if not paste.exists():
        shutil.copy2(venv / "etc" / "heat" / "api-paste.ini", paste)
    return into


def private_tmpdir(folder: Path) -> Path:
    """A temporary folder for the peer's own (its MariaDB's temporary tables): the
    shared /tmp, where the tests beside it come and go, once cost a CI run the peer's
    database ("Error on delete of '/tmp/#sql-temptable-...'" during its install)."""
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class HeatError(Exception):
    """A refusal by Heat's API: its HTTP code, error type and message."""

    def __init__(self, code: int, kind: str, message: str) -> None:
        super().__init__(f"{code} {kind}: {message}")
        self.code, self.kind, self.message = code, kind, message


@dataclass
class HeatPeer:
    """One running Heat: started here, stopped by ``stop``."""

    folder: Path
    venv: Path
    state: Path
    port: int
    env: dict[str, str] = field(default_factory=dict)
    owns_state: bool = False  # a state folder of its own choosing, removed by stop

    @classmethod
    def start(cls, folder: Path, venv: Path, state: Path | None = None) -> HeatPeer:
        port = int(os.environ.get("HEAT_PORT") or free_port())
        owns_state = state is None and not os.environ.get("HEAT_STATE")
        state = state or Path(os.environ.get("HEAT_STATE") or f"/tmp/heat-differential-{port}")
        env = dict(os.environ, HEAT_VENV=str(venv), HEAT_STATE=str(state), HEAT_PORT=str(port),
                   TMPDIR=str(private_tmpdir(Path(f"{state}-tmp"))))
        folder = runnable_copy(folder, venv, Path(f"{state}-peer"))
        # --no-leaf-throttle: Heat's convergence engine sleeps 1 s after starting each
        # leaf resource (a pacing aid, not behaviour); without it a case takes seconds.
        peer = cls(folder, venv, state, port, env, owns_state)
        try:
            run = subprocess.run([str(folder / "start.sh"), "--fresh", "--no-leaf-throttle"], env=env,
                                 capture_output=True, text=True, timeout=300, check=False)
            if run.returncode != 0:
                raise RuntimeError(f"the Heat peer did not start: {run.stdout}{run.stderr}")
        except BaseException:
            peer.stop()  # what start.sh got running before it failed or was stopped
            raise
        return peer

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/admin"

    def stop(self) -> None:
        subprocess.run([str(self.folder / "stop.sh")], env=self.env, capture_output=True,
                       timeout=120, check=False)
        shutil.rmtree(self.folder, ignore_errors=True)  # the copy start made
        shutil.rmtree(f"{self.state}-tmp", ignore_errors=True)
        if self.owns_state:  # its database and logs: 115 MB a run, never read again
            shutil.rmtree(self.state, ignore_errors=True)


class HeatClient:
    """The few calls of Heat's REST API the tester needs."""

    def __init__(self, endpoint: str, poll: float = 0.1, timeout: float = 120,
                 token: str = "differential") -> None:
        # noauth Heat takes any token; a Heat behind Keystone needs a real one.
        self.endpoint, self.poll, self.timeout, self.token = endpoint, poll, timeout, token

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.endpoint + path, data=data, method=method, headers={
            "Content-Type": "application/json", "Accept": "application/json",
            "X-Auth-Token": self.token})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read()
        except urllib.error.HTTPError as refused:
            raise _heat_error(refused) from None
        return json.loads(text) if text else None

    def create(self, name: str, fields: dict[str, Any]) -> str:
        created = self.call("POST", "/stacks", dict(fields, stack_name=name, disable_rollback=True))
        return str(created["stack"]["id"])

    def update(self, name: str, stack_id: str, fields: dict[str, Any]) -> None:
        self.call("PUT", f"/stacks/{name}/{stack_id}", dict(fields, disable_rollback=True))

    def preview_update(self, name: str, stack_id: str, fields: dict[str, Any],
                       show_nested: bool = False) -> dict[str, Any]:
        query = "?show_nested=True" if show_nested else ""
        found = self.call("PUT", f"/stacks/{name}/{stack_id}/preview{query}", dict(fields, disable_rollback=True))
        return dict(found["resource_changes"])

    def delete(self, name: str, stack_id: str) -> None:
        try:
            self.call("DELETE", f"/stacks/{name}/{stack_id}")
        except HeatError:
            pass

    def show(self, name: str, stack_id: str) -> dict[str, Any]:
        return dict(self.call("GET", f"/stacks/{name}/{stack_id}")["stack"])

    def wait(self, name: str, stack_id: str, action: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            stack = self.show(name, stack_id)
            status = str(stack["stack_status"])
            if status.startswith(action) and not status.endswith("IN_PROGRESS"):
                return stack
            if time.monotonic() > deadline:
                return stack
            time.sleep(self.poll)

    def resources(self, name: str, stack_id: str, depth: int = 3) -> list[dict[str, Any]]:
        found = self.call("GET", f"/stacks/{name}/{stack_id}/resources?nested_depth={depth}")
        return list(found["resources"])

    def events(self, name: str, stack_id: str) -> list[dict[str, Any]]:
        """The stack's own events (not its nested stacks'), oldest first."""
        found = self.call("GET", f"/stacks/{name}/{stack_id}/events?sort_dir=asc&limit=10000")
        return list(found["events"])


def _heat_error(refused: urllib.error.HTTPError) -> HeatError:
    text = refused.read().decode(errors="replace")
    try:
        body = json.loads(text)
        error = body.get("error") or {}
        return HeatError(refused.code, str(error.get("type", "")), str(error.get("message", text)))
    except ValueError:
        return HeatError(refused.code, "", text)


def stack_name() -> str:
    return "d" + uuid.uuid4().hex[:12]
