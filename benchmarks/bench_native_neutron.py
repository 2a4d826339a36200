#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print, for one stack of N networks (each with a subnet and a port on it, 3N
resources) on the test cloud (tests/cloud/cloud.py), as the project member
(clouds.yaml entry hotplay-demo): the seconds of its create and delete, Keystone's
password authentications and Neutron's API calls of each run (counted in the cloud's
access logs), through the native types and through the shipped environment's
provider templates (openstack.cloud modules).  Times are whole ansible-playbook
runs, start-up included.

Usage, with the cloud up (scripts/cloud.sh start):
HOTPLAY_CLOUD_DIR=.build/cloud HOTPLAY_OPENSTACK_COLLECTIONS=.build/openstack-collections
.venv/bin/python benchmarks/bench_native_neutron.py --networks 10 [--only native]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def template(networks: int) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for i in range(networks):
        resources[f"net{i}"] = {"type": "OS::Neutron::Net"}
        resources[f"subnet{i}"] = {"type": "OS::Neutron::Subnet", "properties": {
            "network": {"get_resource": f"net{i}"}, "cidr": f"10.99.{i}.0/24"}}
        resources[f"port{i}"] = {"type": "OS::Neutron::Port", "properties": {
            "network": {"get_resource": f"net{i}"}, "security_groups": ["default"],
            "fixed_ips": [{"subnet": {"get_resource": f"subnet{i}"}}]}}
    return {"heat_template_version": "2018-08-31", "resources": resources}


class AccessLog:
    """A service's access log of the test cloud, read from a mark."""

    def __init__(self, cloud: Path, service: str) -> None:
        self.path = cloud / "log" / f"{service}.access"

    def mark(self) -> int:
        return self.path.stat().st_size

    def lines(self, mark: int) -> list[str]:
        with open(self.path, "rb") as log:
            log.seek(mark)
            return log.read().decode().splitlines()


def run(mode: str, state: str, work: Path, env: dict[str, str], cloud: Path) -> str:
    arguments: dict[str, Any] = {"name": f"bench-{mode}", "state": state,
                                 "store": f"sqlite:///{work / 'store.db'}"}
    if state == "present":
        arguments["template"] = str(work / "template.json")
        if mode == "provider":
            arguments["environment"] = ["hotplay.stacks.openstack"]
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [{"hotplay.stacks.stack": arguments}]}]
    (work / "play.json").write_text(json.dumps(play))
    keystone, neutron = AccessLog(cloud, "keystone"), AccessLog(cloud, "neutron")
    marks = keystone.mark(), neutron.mark()
    began = time.monotonic()
    done = subprocess.run(["ansible-playbook", "-i", "localhost,", "-c", "local", "-e",
                           f"ansible_python_interpreter={sys.executable}", str(work / "play.json")],
                          env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - began
    time.sleep(1)  # the services log a request after they answer it
    authentications = sum(" POST /v3/auth/tokens " in line for line in keystone.lines(marks[0]))
    calls = len(neutron.lines(marks[1]))
    outcome = "ok" if done.returncode == 0 else f"FAILED (rc {done.returncode}): {_reason(done.stdout)}"
    return (f"{mode:9} {state:8} {took:6.1f} s  password authentications {authentications:3}  "
            f"Neutron calls {calls:4}  {outcome}")


def _reason(output: str) -> str:
    """The stack's failure reason in ansible-playbook's output."""
    start = output.find('"stack_status_reason"')
    start = start if start >= 0 else output.find('"msg"')
    return output[start:start + 400] if start >= 0 else output[-400:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", type=int, default=10)
    parser.add_argument("--only", choices=["native", "provider"])
    args = parser.parse_args()
    cloud = Path(os.environ.get("HOTPLAY_CLOUD_DIR", REPO / ".build/cloud")).resolve()
    collections = str(Path(os.environ.get("HOTPLAY_OPENSTACK_COLLECTIONS",
                                          REPO / ".build/openstack-collections")).resolve())
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(cloud / "clouds.yaml"), "OS_CLOUD": "hotplay-demo",
           "ANSIBLE_COLLECTIONS_PATH": f"{REPO / '.build/installed'}:{collections}",
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        (work / "template.json").write_text(json.dumps(template(args.networks)))
        for mode in [args.only] if args.only else ["native", "provider"]:
            for state in ("present", "absent"):
                print(run(mode, state, work, env, cloud), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
