#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print how long an OS::Heat::AutoScalingGroup of N servers (each on its own port,
with its own volume attached: a provider template) takes on the test cloud to be
made, scaled to 2N by a signal to a scaling policy, back to N by a signal to another,
and deleted: through hotplay (real ansible-playbook: ``hotplay.stacks.stack`` for the
create and delete, ``hotplay.stacks.stack_signal`` for the signals) and through the
real Heat 27 behind the cloud's Keystone (its ``resource signal`` API), one after the
other on the same cloud.

Heat's scale is timed from the signal's API call until the group's nested stack is
``*_COMPLETE`` with 2N (then N) members and the group's metadata says it is no
longer scaling, polled every 0.2 s; hotplay's is the ``stack_signal`` run, start-up
included (a signal to a scaling policy is a run of the stack).

Usage: scripts/cloud.sh bench-scaling [--servers 20]; or, with the cloud up:
HOTPLAY_CLOUD_DIR=.build/cloud HOTPLAY_OPENSTACK_COLLECTIONS=.build/openstack-collections
.venv/bin/python benchmarks/bench_scaling_cloud.py [--servers 20] [--no-heat]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "cloud"), str(REPO / "tests" / "differential"), str(REPO / "benchmarks")]
import bench_cloud  # noqa: E402  (benchmarks)
import heat_on_cloud  # noqa: E402  (tests/cloud)
from heat_peer import HeatClient  # noqa: E402  (tests/differential)

MEMBER = {
    "heat_template_version": "2018-08-31",
    "parameters": {"network": {"type": "string"}},
    "resources": {
        "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_param": "network"}}},
        "server": {"type": "OS::Nova::Server", "properties": {
            "image": "hotplay-tiny", "flavor": "m1.tiny", "networks": [{"port": {"get_resource": "port"}}]}},
        "volume": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "attach": {"type": "OS::Cinder::VolumeAttachment", "properties": {
            "instance_uuid": {"get_resource": "server"}, "volume_id": {"get_resource": "volume"}}},
    },
}


def template(servers: int) -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"network": {"type": "string"}},
        "resources": {
            "asg": {"type": "OS::Heat::AutoScalingGroup", "properties": {
                "min_size": 0, "max_size": 2 * servers, "desired_capacity": servers, "cooldown": 0,
                "resource": {"type": "member.yaml", "properties": {"network": {"get_param": "network"}}}}},
            "up": {"type": "OS::Heat::ScalingPolicy", "properties": {
                "auto_scaling_group_id": {"get_resource": "asg"}, "adjustment_type": "change_in_capacity",
                "scaling_adjustment": servers, "cooldown": 0}},
            "down": {"type": "OS::Heat::ScalingPolicy", "properties": {
                "auto_scaling_group_id": {"get_resource": "asg"}, "adjustment_type": "change_in_capacity",
                "scaling_adjustment": -servers, "cooldown": 0}},
        },
    }


class HotplayGroup:
    def __init__(self, folder: Path, env: dict[str, str], network: str, servers: int) -> None:
        self.hotplay = bench_cloud.Hotplay(folder, env, f"hpasg{os.getpid()}", [])
        self.hotplay.template.write_text(yaml.safe_dump(template(servers), sort_keys=False))
        (folder / "member.yaml").write_text(yaml.safe_dump(MEMBER, sort_keys=False))
        self.network = network

    def _arguments(self) -> dict[str, Any]:
        return {"name": self.hotplay.name, "store": f"sqlite:///{self.hotplay.folder / 'store.db'}"}

    def create(self) -> None:
        arguments = {**self._arguments(), "template": str(self.hotplay.template),
                     "parameters": {"network": self.network}}
        self._play("hotplay.stacks.stack", arguments, "create")

    def signal(self, policy: str) -> None:
        self._play("hotplay.stacks.stack_signal", {**self._arguments(), "resource": policy}, f"signal {policy}")

    def delete(self) -> None:
        self._play("hotplay.stacks.stack", {**self._arguments(), "state": "absent"}, "delete")

    def _play(self, module: str, arguments: dict[str, Any], what: str) -> None:
        self.hotplay._play([{"name": what, module: arguments}], what)  # pylint: disable=protected-access


class HeatGroup:
    def __init__(self, client: HeatClient, network: str, servers: int) -> None:
        self.client, self.network, self.servers = client, network, servers
        self.name, self.base = f"heatasg{os.getpid()}", ""

    def create(self) -> None:
        stack_id = self.client.create(self.name, {"template": template(self.servers),
                                                  "files": {"member.yaml": yaml.safe_dump(MEMBER)},
                                                  "parameters": {"network": self.network}})
        self.base = f"/stacks/{self.name}/{stack_id}"
        stack = self.client.wait(self.name, stack_id, "CREATE")
        if stack["stack_status"] != "CREATE_COMPLETE":
            raise SystemExit(f"Heat's create: {stack['stack_status']} {stack.get('stack_status_reason')}")

    def signal(self, policy: str, size: int) -> None:
        self.client.call("POST", f"{self.base}/resources/{policy}/signal", {})
        deadline = time.monotonic() + self.client.timeout
        while not self._settled_at(size):
            if time.monotonic() > deadline:
                raise SystemExit(f"Heat's group did not reach {size} members")
            time.sleep(0.2)

    def _settled_at(self, size: int) -> bool:
        group = self.client.call("GET", f"{self.base}/resources/asg")["resource"]
        nested = self.client.call("GET", f"/stacks/{group['physical_resource_id']}")["stack"]
        if nested["stack_status"].endswith("FAILED"):
            raise SystemExit(f"Heat's group: {nested['stack_status']} {nested.get('stack_status_reason')}")
        members = self.client.call("GET", f"/stacks/{nested['stack_name']}/{nested['id']}/resources")["resources"]
        metadata = self.client.call("GET", f"{self.base}/resources/asg/metadata")["metadata"]
        return nested["stack_status"].endswith("_COMPLETE") and len(members) == size \
            and metadata.get("scaling_in_progress") is False

    def delete(self) -> None:
        stack_id = self.base.rsplit("/", 1)[1]
        self.client.delete(self.name, stack_id)
        stack = self.client.wait(self.name, stack_id, "DELETE")
        if stack["stack_status"] != "DELETE_COMPLETE":
            raise SystemExit(f"Heat's delete: {stack['stack_status']} {stack.get('stack_status_reason')}")


def timed(label: str, step: Callable[[], None]) -> float:
    began = time.monotonic()
    step()
    seconds = time.monotonic() - began
    print(f"  {label:<14} {seconds:7.1f} s  (load {os.getloadavg()[0]:.2f})", flush=True)
    return seconds


def phases(side: Any, servers: int, heat: bool) -> dict[str, float]:
    up = (lambda: side.signal("up", 2 * servers)) if heat else (lambda: side.signal("up"))
    down = (lambda: side.signal("down", servers)) if heat else (lambda: side.signal("down"))
    return {"create": timed("create", side.create), f"{servers} -> {2 * servers}": timed("scale up", up),
            f"{2 * servers} -> {servers}": timed("scale down", down), "delete": timed("delete", side.delete)}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--no-heat", action="store_true")
    args = parser.parse_args()
    found = bench_cloud.bench_cloud(args.no_heat, "scripts/cloud.sh bench-scaling")
    if found is None:
        return 2
    cloud_dir, venv, env = found.folder, found.venv, found.env
    conn = bench_cloud.connection(found.clouds)
    bench_cloud.raise_quotas(conn, 2 * args.servers)
    network = conn.network.create_network(name=f"bench-asg-{os.getpid()}")
    conn.network.create_subnet(network_id=network.id, cidr="10.39.0.0/22", ip_version=4)
    results: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-asg-") as folder:
            print(f"hotplay: a group of {args.servers} servers (port, volume attached each)", flush=True)
            results["hotplay"] = phases(HotplayGroup(Path(folder), env, network.id, args.servers), args.servers,
                                        heat=False)
        if not args.no_heat:
            print("Heat", flush=True)
            service = heat_on_cloud.start(Path(cloud_dir), venv)
            try:
                client = HeatClient(heat_on_cloud.project_endpoint(service, conn), poll=0.2, timeout=1800,
                                    token=conn.auth_token)
                results["Heat"] = phases(HeatGroup(client, network.id, args.servers), args.servers, heat=True)
            finally:
                service.stop()
    finally:
        conn.network.delete_network(network.id)
    print(f"\n{'phase':<10} {'hotplay s':>10} {'Heat s':>8} {'Heat/hotplay':>13}")
    for phase, seconds in results["hotplay"].items():
        theirs = results.get("Heat", {}).get(phase)
        print(f"{phase:<10} {seconds:10.1f} {theirs if theirs is not None else float('nan'):8.1f} "
              f"{(theirs / seconds) if theirs else float('nan'):13.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
