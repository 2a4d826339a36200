# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests against the real OpenStack Heat engine (the team's peer scripts): a Heat
started for the session, with stack adopt and abandon enabled (heat-adopt.conf,
this project's overlay on the peer's heat.conf), reached through a clouds.yaml.

The peer folder is ``$HOTPLAY_HEAT_PEER``, else ``../shared/peer/heat`` beside the
clone; Heat's venv is the differential tester's (``$HEAT_VENV``, the project's
``.build/heatvenv`` that ``make heat-peer`` installs, else ``/tmp/heatvenv``).  Without them the tests
are skipped with one line.  ``HOTPLAY_HEAT_URL`` names a Heat already running
(with adopt and abandon enabled) to use instead of starting one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "differential"))
import integration_harness  # noqa: E402  (tests/, put on the path above)
from heat_peer import free_port, peer_folder, peer_venv, private_tmpdir, runnable_copy  # noqa: E402  (tests/differential)

integration = integration_harness.load()

store_url = integration.store_url
run_tasks = integration.run_tasks
OVERLAY = Path(__file__).resolve().parent / "heat-adopt.conf"


@pytest.fixture(scope="session")
def heat_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The API of a real Heat (``http://127.0.0.1:PORT/v1/admin``)."""
    running = os.environ.get("HOTPLAY_HEAT_URL")
    if running:
        yield running
        return
    peer, venv = peer_folder(), peer_venv()
    if peer is None or venv is None or not (peer / "start.sh").exists():
        pytest.skip("the real Heat engine is not here: set HOTPLAY_HEAT_PEER to the peer/heat folder "
                    "(and HEAT_VENV to its venv), or put the team's shared/ folder beside the clone")
    folder = tmp_path_factory.mktemp("heat")
    copy = runnable_copy(peer, Path(venv), folder / "peer")
    with (copy / "etc" / "heat.conf").open("a", encoding="utf-8") as conf:
        conf.write("\n" + OVERLAY.read_text(encoding="utf-8"))
    port = free_port()
    env = {**os.environ, "HEAT_VENV": str(venv), "HEAT_STATE": str(folder / "state"), "HEAT_PORT": str(port),
           "TMPDIR": str(private_tmpdir(folder / "tmp"))}
    started = subprocess.run(["bash", str(copy / "start.sh"), "--fresh"], env=env, capture_output=True,
                             text=True, timeout=300, check=False)
    try:
        if started.returncode != 0:
            pytest.fail(f"Heat did not start: {started.stdout}{started.stderr}")
        yield f"http://127.0.0.1:{port}/v1/admin"
    finally:
        subprocess.run(["bash", str(copy / "stop.sh")], env=env, capture_output=True, timeout=120,
                       check=False)


class Heat:
    """Heat's REST API, as the openstack client calls it (noauth: any token)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Content-Type": "application/json", "Accept": "application/json", "X-Auth-Token": "x"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                text = response.read()
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read().decode()}") from None
        return json.loads(text) if text else None

    def create(self, name: str, template: Any, environment: Any = None, files: Any = None,
               adopt: Any = None) -> str:
        body = {"stack_name": name, "template": template, "environment": environment or {},
                "files": files or {}, "disable_rollback": True}
        if adopt is not None:  # openstack stack adopt: the template comes from the data
            body.pop("template")
            body["adopt_stack_data"] = json.dumps(adopt)
        stack_id = self.call("POST", "/stacks", body)["stack"]["id"]
        return self.wait(name, stack_id)

    def wait(self, name: str, stack_id: str) -> str:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            status = self.call("GET", f"/stacks/{name}/{stack_id}")["stack"]["stack_status"]
            if not status.endswith("IN_PROGRESS"):
                assert status.endswith("COMPLETE"), f"{name}: {status}"
                return stack_id
            time.sleep(0.5)
        raise AssertionError(f"{name} still in progress after 240 s")

    def stack_id(self, name: str) -> str:
        return str(self.call("GET", f"/stacks/{name}")["stack"]["id"])

    def export(self, name: str) -> Any:
        return self.call("GET", f"/stacks/{name}/{self.stack_id(name)}/export")

    def gone(self, name: str) -> bool:
        """Whether Heat forgot the stack (an abandon finishes in the background)."""
        deadline = time.monotonic() + 120
        while name in self.names():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
        return True

    def names(self) -> list[str]:
        return sorted(s["stack_name"] for s in self.call("GET", "/stacks")["stacks"])

    def delete(self, name: str) -> None:
        stack_id = self.stack_id(name)
        self.call("DELETE", f"/stacks/{name}/{stack_id}")


@pytest.fixture(scope="session")
def heat(heat_url: str) -> Heat:
    return Heat(heat_url)


@pytest.fixture
def cloud_env(heat_url: str, tmp_path: Path) -> dict[str, str]:
    """A clouds.yaml whose cloud ``heat`` is that Heat (no Keystone: no auth)."""
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(json.dumps({"clouds": {"heat": {
        "auth_type": "none", "orchestration_endpoint_override": heat_url}}}))
    return {"OS_CLIENT_CONFIG_FILE": str(clouds)}
