#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print, for the stacks most people run and for the 20-server bench, how long each
phase (create, update, delete) takes on the test cloud through three clients, in
one run on the same cloud, and where each client's time went:

- hotplay: one ``ansible-playbook`` run of one ``hotplay.stacks.stack`` task per
  phase (its start-up counted; a playbook of one ``debug`` task is timed beside);
- Heat: the real Heat 27 engine behind the cloud's Keystone, from the API call to
  the stack's final status (polled every 0.1 s);
- the ideal client (ideal_client.py): a plain openstacksdk script, one process per
  phase, making the same API calls with every independent call sent at once and
  one waiter polling everything pending every 0.1 s: the limit hotplay is measured
  against.

Stacks: ``one-server`` (a server on a pre-made port, on a network made once for the
benchmark, as hello_world's), ``server-volume`` (the same with a volume attached:
F18 NovaInstanceWithCinderVolume's), ``20-servers`` (bench_cloud.py's: a network, a
subnet, 20 servers each on its port with a volume attached).  The update changes
every server's metadata.  Each stack runs ``--rounds`` times (3 by default) on each
side, the sides taking turns; each phase's figure is the median.

The profile of a phase is read from the cloud's access logs (requests told apart by
User-Agent): when the client's first request started after the phase began (for
hotplay: ``ansible-playbook``'s start-up, the collection's import, the template and
the store, openstacksdk's import), the authentication, the version discoveries,
every API call (start, service, method, path, latency) and the time from the last
answer to the phase's end (the result).  For ``20-servers`` the calls are summed up
by kind instead of listed.

Usage: scripts/cloud.sh bench-small [--stacks one-server,server-volume,20-servers]
[--rounds 3] [--no-heat]; or, with the cloud up: HOTPLAY_CLOUD_DIR=.build/cloud
HOTPLAY_OPENSTACK_COLLECTIONS=.build/openstack-collections .venv/bin/python
benchmarks/bench_small.py ...
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests" / "cloud"), str(REPO / "tests" / "differential"), str(REPO / "benchmarks")]
import bench_cloud  # noqa: E402  (benchmarks)
import cloud_logs  # noqa: E402  (benchmarks)
import heat_on_cloud  # noqa: E402  (tests/cloud)
import ideal_client  # noqa: E402  (benchmarks)
from heat_peer import HeatClient  # noqa: E402  (tests/differential)

PHASES = ("create", "update", "delete")
SIDES = ("hotplay", "Heat", "ideal")
AGENTS = {"hotplay": bench_cloud.HOTPLAY_AGENT, "Heat": "", "ideal": ideal_client.AGENT}


@dataclass(frozen=True)
class Kind:
    servers: int
    volumes: bool
    own_network: bool


KINDS = {"one-server": Kind(1, False, False), "server-volume": Kind(1, True, False),
         "20-servers": Kind(20, True, True)}


def template(kind: Kind) -> dict[str, Any]:
    if kind.own_network:
        return bench_cloud.template(kind.servers)
    resources: dict[str, Any] = {}
    for i in range(kind.servers):
        resources[f"port{i}"] = {"type": "OS::Neutron::Port", "properties": {"network": {"get_param": "network"}}}
        resources[f"server{i}"] = {"type": "OS::Nova::Server", "properties": {
            "image": ideal_client.IMAGE, "flavor": ideal_client.FLAVOR,
            "networks": [{"port": {"get_resource": f"port{i}"}}], "metadata": {"role": {"get_param": "role"}}}}
        if kind.volumes:
            resources[f"volume{i}"] = {"type": "OS::Cinder::Volume", "properties": {"size": 1}}
            resources[f"attach{i}"] = {"type": "OS::Cinder::VolumeAttachment", "properties": {
                "instance_uuid": {"get_resource": f"server{i}"}, "volume_id": {"get_resource": f"volume{i}"}}}
    return {"heat_template_version": "2018-08-31",
            "parameters": {"role": {"type": "string", "default": "app"}, "network": {"type": "string"}},
            "resources": resources}


# -- the three clients ------------------------------------------------------------------------------

class HotplaySide:
    def __init__(self, folder: Path, env: dict[str, str], kind: Kind, network: str, name: str) -> None:
        self.hotplay = bench_cloud.Hotplay(folder, env, name, [])
        self.hotplay.template.write_text(yaml.safe_dump(template(kind), sort_keys=False))
        self.parameters = {} if kind.own_network else {"network": network}
        self.prefix = name

    def step(self, phase: str) -> Callable[[], None]:
        state = "absent" if phase == "delete" else "present"
        role = "db" if phase == "update" else "app"
        return lambda: self._run(state, role)

    def _run(self, state: str, role: str) -> None:
        arguments: dict[str, Any] = {"name": self.prefix, "state": state,
                                     "store": f"sqlite:///{self.hotplay.folder / 'store.db'}"}
        if state == "present":
            arguments.update(template=str(self.hotplay.template), parameters={"role": role, **self.parameters})
        self.hotplay._play([{"name": "The stack", "hotplay.stacks.stack": arguments}],  # pylint: disable=protected-access
                           state)


class HeatSide:
    def __init__(self, client: HeatClient, kind: Kind, network: str, name: str) -> None:
        body = template(kind)
        self.heat = bench_cloud.Heat(client, body, name)
        self.parameters = {} if kind.own_network else {"network": network}
        self.prefix = name

    def step(self, phase: str) -> Callable[[], None]:
        action = {"create": "CREATE", "update": "UPDATE", "delete": "DELETE"}[phase]
        role = "db" if phase == "update" else "app"
        return lambda: self._run(action, role)

    def _run(self, action: str, role: str) -> None:
        fields = {"template": self.heat.body, "parameters": {"role": role, **self.parameters}}
        client, name = self.heat.client, self.heat.name
        if action == "CREATE":
            self.heat.stack_id = client.create(name, fields)
        elif action == "UPDATE":
            client.update(name, self.heat.stack_id, fields)
        else:
            client.delete(name, self.heat.stack_id)
        stack = client.wait(name, self.heat.stack_id, action)
        if stack["stack_status"] != f"{action}_COMPLETE":
            raise SystemExit(f"Heat {action}: {stack['stack_status']} {stack.get('stack_status_reason')}")


class IdealSide:
    def __init__(self, folder: Path, env: dict[str, str], kind: Kind, network: str, name: str) -> None:
        self.state, self.env, self.kind, self.network, self.prefix = folder / "ideal.json", env, kind, network, name
        self.in_process: dict[str, float] = {}

    def step(self, phase: str) -> Callable[[], None]:
        return lambda: self._run(phase)

    def _run(self, phase: str) -> None:
        argv = [sys.executable, str(REPO / "benchmarks" / "ideal_client.py"), phase, str(self.state),
                "--servers", str(self.kind.servers), "--prefix", self.prefix,
                "--role", "db" if phase == "update" else "app"]
        argv += ["--volumes"] if self.kind.volumes else []
        argv += [] if self.kind.own_network else ["--network", self.network]
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, check=False, timeout=1800)
        if done.returncode:
            raise SystemExit(f"the ideal client's {phase} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
        self.in_process[phase] = json.loads(done.stdout.strip().splitlines()[-1])["session_seconds"]


# -- measuring ---------------------------------------------------------------------------------------

@dataclass
class Measured:
    seconds: float
    began: float  # epoch
    requests: list[cloud_logs.Access] = field(default_factory=list)


def measure(log_dir: Path, agent: str, step: Callable[[], None]) -> Measured:
    window = cloud_logs.Window(log_dir)
    began_wall, began = time.time(), time.monotonic()
    step()
    seconds = time.monotonic() - began
    logs = window.read()
    # Each request's service is put before its path, for the listing.
    mine = [_with_service(service, hit) for service, hits in logs.access.items() for hit in hits
            if agent and agent in hit.agent and hit.began is not None]
    return Measured(seconds, began_wall, sorted(mine, key=lambda hit: hit.began or 0.0))


def _with_service(service: str, hit: cloud_logs.Access) -> cloud_logs.Access:
    return cloud_logs.Access(hit.method, f"{service} {hit.path}", hit.status, hit.seconds, hit.agent, hit.began)


def profile(measured: Measured, listed: bool) -> list[str]:
    """Where a phase's time went, from the client's requests in the access logs."""
    hits = measured.requests
    if not hits:
        return ["    (no request told apart by User-Agent)"]
    first, last_end = hits[0].began or 0.0, max((h.began or 0.0) + h.seconds for h in hits)
    auths = [h for h in hits if h.method == "POST" and h.path.endswith("/auth/tokens")]
    discoveries = [h for h in hits if cloud_logs.is_discovery(_without_service(h))]
    lines = [f"    first request at +{first - measured.began:.2f} s; {len(hits)} requests "
             f"({len(auths)} authentication(s), {len(discoveries)} version discoveries); "
             f"last answer at +{last_end - measured.began:.2f} s; result at +{measured.seconds:.2f} s "
             f"({measured.seconds - (last_end - measured.began):.2f} s after the last answer)"]
    if listed:
        lines += [f"      +{(h.began or 0.0) - measured.began:6.2f} {h.seconds:6.3f} s  {h.method:<6} {h.path}"
                  for h in hits]
    else:
        kinds = Counter(f"{h.method} {_shape(h.path)}" for h in hits)
        lines += [f"      {n:4d} x {what}" for what, n in kinds.most_common(12)]
    return lines


def _without_service(hit: cloud_logs.Access) -> cloud_logs.Access:
    return cloud_logs.Access(hit.method, hit.path.split(" ", 1)[1], hit.status, hit.seconds, hit.agent, hit.began)


def _shape(path: str) -> str:
    """A path with its ids taken out (``nova /v2.1/servers/ID``)."""
    parts = [("ID" if len(part) >= 32 and part.replace("-", "").isalnum() else part) for part in path.split("/")]
    return "/".join(parts).split("?", 1)[0]


# -- reporting -----------------------------------------------------------------------------------------

def report(kind_name: str, times: dict[str, dict[str, list[float]]], start_up: list[float],
           ideal_in_process: dict[str, list[float]]) -> list[tuple[str, bool, str]]:
    """The medians, and the issue's goals for this stack (what, met, figures)."""
    def median(side: str, phase: str) -> float | None:
        found = times.get(side, {}).get(phase)
        return statistics.median(found) if found else None

    print(f"\n{kind_name}: median of {len(times['hotplay']['create'])} run(s), seconds")
    print(f"  {'phase':<8} {'hotplay':>8} {'Heat':>8} {'ideal':>8} {'ideal in-proc':>14} "
          f"{'Heat/hotplay':>13} {'hotplay/ideal':>14}")
    goals: list[tuple[str, bool, str]] = []
    for phase in PHASES:
        ours, heat, ideal = median("hotplay", phase), median("Heat", phase), median("ideal", phase)
        inside = statistics.median(ideal_in_process[phase]) if ideal_in_process.get(phase) else None
        print(f"  {phase:<8} {_f(ours, 8)} {_f(heat, 8)} {_f(ideal, 8)} {_f(inside, 14)} "
              f"{_f(heat / ours if heat and ours else None, 13, 2)} "
              f"{_f(ours / ideal if ours and ideal else None, 14, 2)}")
        if ours and heat:
            goals.append((f"{kind_name} {phase}: faster than Heat", ours < heat, f"{heat / ours:.2f}x"))
        if ours and ideal:
            goals.append((f"{kind_name} {phase}: within 1.25x of the ideal client", ours <= 1.25 * ideal,
                          f"{ours / ideal:.2f}x"))
    print(f"  ansible-playbook start-up (one debug task), in each hotplay figure: "
          f"{statistics.median(start_up):.2f} s")
    return goals


def _f(value: float | None, width: int, digits: int = 1) -> str:
    return f"{value:{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


# -- main --------------------------------------------------------------------------------------------------

def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--stacks", default=",".join(KINDS), help="which stacks, comma-separated: " + ", ".join(KINDS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-heat", action="store_true")
    return parser.parse_args()


def main() -> int:  # pylint: disable=too-many-locals
    args = arguments()
    found = bench_cloud.bench_cloud(args.no_heat, "make bench-small")
    if found is None:
        return 2
    cloud_dir, venv, env = found.folder, found.venv, found.env
    conn = bench_cloud.connection(found.clouds)
    bench_cloud.raise_quotas(conn, 20)
    log_dir = Path(cloud_dir) / "log"
    kinds = [name for name in args.stacks.split(",") if name]
    network = conn.network.create_network(name=f"bench-small-{os.getpid()}")
    conn.network.create_subnet(network_id=network.id, cidr="10.19.0.0/24", ip_version=4)
    heat_service = None if args.no_heat else heat_on_cloud.start(Path(cloud_dir), venv)
    goals: list[tuple[str, bool, str]] = []
    try:
        client = None if heat_service is None else HeatClient(
            heat_on_cloud.project_endpoint(heat_service, conn), poll=0.1, timeout=1800, token=conn.auth_token)
        with tempfile.TemporaryDirectory(prefix="bench-small-") as folder:
            for kind_name in kinds:
                goals += run_kind(kind_name, KINDS[kind_name], Path(folder), env, network.id, client,
                                  log_dir, args.rounds)
    finally:
        if heat_service is not None:
            heat_service.stop()
        conn.network.delete_network(network.id)
    print("\ngoals (medians):")
    for what, met, figures in goals:
        print(f"  {'met   ' if met else 'MISSED'} {what}: {figures}")
    return 0


def run_kind(kind_name: str, kind: Kind, folder: Path, env: dict[str, str], network: str,
             client: HeatClient | None, log_dir: Path, rounds: int) -> list[tuple[str, bool, str]]:
    times: dict[str, dict[str, list[float]]] = {side: {phase: [] for phase in PHASES} for side in SIDES}
    start_up: list[float] = []
    ideal_in_process: dict[str, list[float]] = {phase: [] for phase in PHASES}
    last: dict[str, dict[str, Measured]] = {}
    print(f"\n== {kind_name}: {kind.servers} server(s){', volumes' if kind.volumes else ''}", flush=True)
    for number in range(1, rounds + 1):
        here = folder / f"{kind_name}-{number}"
        here.mkdir()
        tag = f"{kind_name.replace('-', '')}{number}x{os.getpid()}"
        hotplay = HotplaySide(here, env, kind, network, f"hp{tag}")
        start_up.append(hotplay.hotplay.start_up())
        sides: dict[str, Any] = {"hotplay": hotplay, "ideal": IdealSide(here, env, kind, network, f"id{tag}")}
        if client is not None:
            sides["Heat"] = HeatSide(client, kind, network, f"heat{tag}")
        for side_name, side in sides.items():
            measured = {phase: measure(log_dir, AGENTS[side_name], side.step(phase)) for phase in PHASES}
            for phase, found in measured.items():
                times[side_name][phase].append(found.seconds)
            last[side_name] = measured
            if side_name == "ideal":
                for phase, seconds in side.in_process.items():
                    ideal_in_process[phase].append(seconds)
            print(f"  round {number} {side_name:<8} " + "  ".join(
                f"{phase} {found.seconds:6.2f} s" for phase, found in measured.items()) +
                f"  (load {os.getloadavg()[0]:.2f})", flush=True)
    goals = report(kind_name, times, start_up, ideal_in_process)
    for side_name in ("hotplay", "ideal"):
        for phase in PHASES:
            print(f"  profile of {side_name}'s {phase} (last round):")
            print("\n".join(profile(last[side_name][phase], listed=kind.servers == 1)))
    return goals


if __name__ == "__main__":
    sys.exit(main())
