#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print how long a stack of N servers, each on its own port with its own volume
attached, takes to create, update and delete on the test cloud (tests/cloud/cloud.py):
through hotplay (real ansible-playbook, the shipped OpenStack environment) and
through the real Heat engine (27.0.1, behind the cloud's Keystone), in one run on
the same cloud.

The update changes every server's metadata (in place on both sides).  Heat's times
are from the API call until the stack is ``*_COMPLETE`` (polled every 0.5 s); hotplay's
are whole ``ansible-playbook`` runs, start-up included.  The ratio is Heat / hotplay:
above 1, hotplay is faster.  Heat is stock: its convergence engine waits 1 s after
starting each resource that depends on nothing (here the network and the N
volumes), so N seconds of each Heat operation are that pacing.

Usage: make bench-cloud  (starts the cloud and stops it; or, with the cloud up:
HOTPLAY_CLOUD_DIR=.build/cloud HOTPLAY_OPENSTACK_COLLECTIONS=.build/openstack-collections
.venv/bin/python benchmarks/bench_cloud.py --servers 20).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
INSTALLED = REPO / ".build" / "installed"
sys.path[:0] = [str(REPO / "tests" / "cloud"), str(REPO / "tests" / "differential")]
import heat_on_cloud  # noqa: E402  (tests/cloud)
from heat_peer import HeatClient, peer_venv  # noqa: E402  (tests/differential)

PHASES = ("create", "update", "delete")


def template(servers: int) -> dict[str, Any]:
    resources: dict[str, Any] = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"}, "cidr": "10.9.0.0/22"}},
    }
    for i in range(servers):
        resources[f"port{i}"] = {"type": "OS::Neutron::Port", "properties": {
            "network": {"get_resource": "net"},
            "fixed_ips": [{"subnet": {"get_resource": "subnet"}, "ip_address": f"10.9.1.{i + 10}"}]}}
        resources[f"server{i}"] = {"type": "OS::Nova::Server", "properties": {
            "image": "hotplay-tiny", "flavor": "m1.tiny", "networks": [{"port": {"get_resource": f"port{i}"}}],
            "metadata": {"role": {"get_param": "role"}}}}
        resources[f"volume{i}"] = {"type": "OS::Cinder::Volume", "properties": {"size": 1}}
        resources[f"attach{i}"] = {"type": "OS::Cinder::VolumeAttachment", "properties": {
            "instance_uuid": {"get_resource": f"server{i}"}, "volume_id": {"get_resource": f"volume{i}"}}}
    return {"heat_template_version": "2018-08-31",
            "parameters": {"role": {"type": "string", "default": "app"}}, "resources": resources}


def raise_quotas(conn: Any, servers: int) -> None:
    """The cloud's default quotas (10 servers, 10 volumes) are below the benchmark's."""
    project = conn.current_project_id
    conn.set_compute_quotas(project, instances=servers * 2, cores=servers * 2, ram=servers * 2 * 64)
    conn.set_volume_quotas(project, volumes=servers * 2, gigabytes=servers * 4)
    conn.set_network_quotas(project, port=servers * 3 + 20)


class Hotplay:
    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.folder, self.env = folder, env
        self.template = folder / "servers.yaml"

    def run(self, state: str, role: str = "app") -> None:
        arguments: dict[str, Any] = {"name": "bench", "state": state,
                                     "store": f"sqlite:///{self.folder / 'store.db'}"}
        if state == "present":
            arguments.update(template=str(self.template), environment=["hotplay.stacks.openstack"],
                             parameters={"role": role})
        playbook = self.folder / "play.yml"
        playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [
            {"name": "The stack", "hotplay.stacks.stack": arguments}]}], sort_keys=False))
        done = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                               "-e", f"ansible_python_interpreter={BIN / 'python'}", str(playbook)],
                              cwd=self.folder, env=self.env, capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"hotplay {state} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")


class Heat:
    def __init__(self, client: HeatClient, body: dict[str, Any]) -> None:
        self.client, self.body = client, body
        self.name, self.stack_id = f"bench{os.getpid()}", ""

    def run(self, action: str, role: str = "app") -> None:
        fields = {"template": self.body, "parameters": {"role": role}}
        if action == "CREATE":
            self.stack_id = self.client.create(self.name, fields)
        elif action == "UPDATE":
            self.client.update(self.name, self.stack_id, fields)
        else:
            self.client.delete(self.name, self.stack_id)
        stack = self.client.wait(self.name, self.stack_id, action)
        if stack["stack_status"] != f"{action}_COMPLETE":
            raise SystemExit(f"Heat {action}: {stack['stack_status']} {stack.get('stack_status_reason')}")


def timed(what: str, step: Callable[[], None]) -> float:
    load = os.getloadavg()[0]
    began = time.monotonic()
    step()
    seconds = time.monotonic() - began
    print(f"  {what:<16} {seconds:7.1f} s   (load average {load:.2f} before, {os.getloadavg()[0]:.2f} after)",
          flush=True)
    return seconds


def timed_phases(side: str, steps: list[Callable[[], None]], clean_up: Callable[[], None]) -> list[float]:
    """Create, update and delete through one side; after a failure, what it made is
    deleted (both sides share the cloud's quotas)."""
    print(side, flush=True)
    try:
        return [timed(phase, step) for phase, step in zip(PHASES, steps, strict=True)]
    except SystemExit:
        clean_up()
        raise


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=20)
    args = parser.parse_args()
    cloud_dir, collections, venv = (os.environ.get("HOTPLAY_CLOUD_DIR"),
                                    os.environ.get("HOTPLAY_OPENSTACK_COLLECTIONS"), peer_venv())
    if not cloud_dir or not collections or venv is None:
        print("needs the test cloud up (HOTPLAY_CLOUD_DIR, HOTPLAY_OPENSTACK_COLLECTIONS: "
              "`make bench-cloud` sets them) and Heat installed (`make heat-peer`)", file=sys.stderr)
        return 2
    clouds = str(Path(cloud_dir) / "clouds.yaml")
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": clouds, "OS_CLOUD": "hotplay",
           "ANSIBLE_COLLECTIONS_PATH": f"{INSTALLED}:{collections}", "ANSIBLE_NOCOLOR": "1"}
    import openstack.config

    conn = openstack.connection.Connection(
        config=openstack.config.OpenStackConfig(config_files=[clouds]).get_one(cloud="hotplay"))
    raise_quotas(conn, args.servers)
    body = template(args.servers)
    print(f"{args.servers} servers, each on a port with a volume attached "
          f"({len(body['resources'])} resources); starting Heat", flush=True)
    heat_service = heat_on_cloud.start(Path(cloud_dir), venv)
    try:
        client = HeatClient(heat_on_cloud.project_endpoint(heat_service, conn), poll=0.5, timeout=1800,
                            token=conn.auth_token)
        with tempfile.TemporaryDirectory(prefix="bench-cloud-") as folder:
            hotplay = Hotplay(Path(folder), env)
            hotplay.template.write_text(yaml.safe_dump(body, sort_keys=False))
            heat = Heat(client, body)
            ours = timed_phases("hotplay", [lambda: hotplay.run("present"),
                                            lambda: hotplay.run("present", role="db"),
                                            lambda: hotplay.run("absent")],
                                lambda: hotplay.run("absent"))
            theirs = timed_phases("Heat", [lambda: heat.run("CREATE"), lambda: heat.run("UPDATE", role="db"),
                                           lambda: heat.run("DELETE")],
                                  lambda: client.delete(heat.name, heat.stack_id))
    finally:
        heat_service.stop()
    print(f"{'phase':<8} {'hotplay s':>10} {'Heat s':>8} {'Heat/hotplay':>13}")
    for phase, mine, other in zip(PHASES, ours, theirs, strict=True):
        print(f"{phase:<8} {mine:10.1f} {other:8.1f} {other / mine:13.2f}")
    print(f"{'total':<8} {sum(ours):10.1f} {sum(theirs):8.1f} {sum(theirs) / sum(ours):13.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
