#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print how long a stack of N servers, each on its own port with its own volume
attached, takes to create, update and delete on the test cloud (tests/cloud/cloud.py):
through hotplay (real ansible-playbook) and through the real Heat engine (27.0.1,
behind the cloud's Keystone), in one run on the same cloud; what each asked of the
cloud; and how far each phase is from the cloud's own critical path.

Modes: ``--mode native`` (the default) runs hotplay's native OpenStack types (no
environment); ``--mode provider`` the shipped provider-template environment
(``hotplay.stacks.openstack``: openstack.cloud modules).

The update changes every server's metadata (in place on both sides).  Heat's times
are from the API call until the stack is ``*_COMPLETE`` (polled every 0.5 s); hotplay's
are whole ``ansible-playbook`` runs, start-up included (the start-up of a playbook of
one ``debug`` task is printed beside them).  The ratio is Heat / hotplay: above 1,
hotplay is faster.  Heat is stock: its convergence engine waits 1 s after starting
each resource that depends on nothing (here the network and the N volumes).

What each phase asked of the cloud is read from the services' access logs
(``.build/cloud/log/NAME.access``) between the phase's start and end: Keystone's
password authentications (``POST /v3/auth/tokens``), each service's requests, and
its version discoveries (GETs of ``/`` or a version's root, ``/v3/``, ``/v2.1``).  The
services' own calls (Nova to Neutron and Cinder, token validations) are in the
window too, and so is anything another user of a shared cloud does meanwhile; on a
cloud whose access logs show the User-Agent, hotplay's requests are told apart by
theirs (``hotplay.stacks/...``).

The critical path of a phase is the longest chain of API calls and waits the
stack needs, as the cloud served them in that very phase (so it is the physical
limit of that run, whoever drove it):

- create: POST network + POST subnet + POST port + the server's boot (from the
  start of its ``POST /servers`` to the last line its request id writes in any
  service log: the compute host's "Took N seconds to build instance", ACTIVE) then
  the attachment (from the start of ``POST /servers/ID/os-volume_attachments`` to
  the last line of its request id: Cinder's attachment completed, in-use); the
  volume (``POST /volumes`` until cinder-volume's "created successfully") runs in
  parallel with the network, port and server and joins before the attachment;
- update: the server's metadata call;
- delete: the detach (``DELETE .../os-volume_attachments/VOL`` until its last line),
  then the server's delete (until its last line: the host destroyed it and freed
  its allocations) and the port's, in parallel with the volume's delete (until
  cinder-volume deleted it), then the subnet's and the network's deletes.

Nova's and Cinder's API logs give each request's id, start and end (milliseconds);
the work of a request is followed through every service log by that id.  Neutron
logs no request ids: its calls (network, subnet, port) count at the latency of
the slowest call of their kind in the phase (its access log).  Each server's chain
is computed, and the phase's critical path is the longest.  "time / critical path"
is the phase's time over it: 1.0 would be a client with no cost of its own.

Each phase's timeline, from the same logs, says where the rest went: for the create,
the first request and the steps of the chain that ended last, and each chain's wait
from server and volume ready to its attachment's request; for the update, the
authentication and the first and last metadata calls; for the delete, the steps of
the chain whose server went last, the last port's and the network's deletes, and
each chain's wait from its volume detached to its server's ``DELETE``.

A phase of Heat's that fails, or is still in progress after ``--heat-timeout``
seconds (Heat 27 leaves a stack ``UPDATE_IN_PROGRESS`` for good when its update
fails on "Maximum number of threads reached", as at 100 servers here), ends Heat's
side: its stack is deleted, and hotplay's figures are reported with Heat's that ran.

Usage: make bench-cloud  (starts the cloud and stops it; or, with the cloud up:
HOTPLAY_CLOUD_DIR=.build/cloud HOTPLAY_OPENSTACK_COLLECTIONS=.build/openstack-collections
.venv/bin/python benchmarks/bench_cloud.py --servers 20 [--mode native|provider]
[--rounds 10] [--no-heat] [--heat-timeout 3600]).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
INSTALLED = REPO / ".build" / "installed"
sys.path[:0] = [str(REPO / "tests" / "cloud"), str(REPO / "tests" / "differential"), str(REPO / "benchmarks")]
import cloud_logs  # noqa: E402  (benchmarks)
import heat_on_cloud  # noqa: E402  (tests/cloud)
from heat_peer import HeatClient, peer_venv  # noqa: E402  (tests/differential)

PHASES = ("create", "update", "delete")
ENVIRONMENTS = {"native": [], "provider": ["hotplay.stacks.openstack"]}
# hotplay's requests, on a cloud whose access logs show the User-Agent.
HOTPLAY_AGENT = "hotplay.stacks"


def template(servers: int) -> dict[str, Any]:
    resources: dict[str, Any] = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"}, "cidr": "10.9.0.0/22"}},
    }
    for i in range(servers):
        resources[f"port{i}"] = {"type": "OS::Neutron::Port", "properties": {
            "network": {"get_resource": "net"},
            "fixed_ips": [{"subnet": {"get_resource": "subnet"}, "ip_address": address(i)}]}}
        resources[f"server{i}"] = {"type": "OS::Nova::Server", "properties": {
            "image": "hotplay-tiny", "flavor": "m1.tiny", "networks": [{"port": {"get_resource": f"port{i}"}}],
            "metadata": {"role": {"get_param": "role"}}}}
        resources[f"volume{i}"] = {"type": "OS::Cinder::Volume", "properties": {"size": 1}}
        resources[f"attach{i}"] = {"type": "OS::Cinder::VolumeAttachment", "properties": {
            "instance_uuid": {"get_resource": f"server{i}"}, "volume_id": {"get_resource": f"volume{i}"}}}
    return {"heat_template_version": "2018-08-31",
            "parameters": {"role": {"type": "string", "default": "app"}}, "resources": resources}


def address(index: int) -> str:
    """Port ``index``'s address in 10.9.0.0/22 (room for 1000 servers)."""
    return f"10.9.{1 + (index + 10) // 250}.{(index + 10) % 250}"


def raise_quotas(conn: Any, servers: int) -> None:
    """The cloud's default quotas (10 servers, 10 volumes, 50 ports) are below the
    benchmark's: room for twice the stack (both sides' stacks never coexist, but a
    failed delete may leave one behind), and the other users of the project."""
    project = conn.current_project_id
    conn.set_compute_quotas(project, instances=servers * 2 + 20, cores=servers * 2 + 20,
                            ram=(servers * 2 + 20) * 128)
    conn.set_volume_quotas(project, volumes=servers * 2 + 20, gigabytes=servers * 4 + 100)
    conn.set_network_quotas(project, port=servers * 3 + 50)


# Issue 27's first symptom, in a run that passed: a worker writing behind Ansible's
# back, a fork of a multi-threaded process.
THREAD_TROUBLE = ("errantly sent data", "multi-threaded, use of fork()")


class Hotplay:
    def __init__(self, folder: Path, env: dict[str, str], name: str, environment: list[str],
                 timeout: float = 1800) -> None:
        self.folder, self.env, self.name, self.environment = folder, env, name, environment
        self.template = folder / "servers.yaml"
        # A run that waits for good (a volume whose attachment the cloud dropped
        # stays 'available', and Heat's wait, as hotplay's, waits for in-use) is a
        # failure of its own after this long.
        self.timeout = timeout

    def run(self, state: str, role: str = "app") -> None:
        arguments: dict[str, Any] = {"name": self.name, "state": state,
                                     "store": f"sqlite:///{self.folder / 'store.db'}"}
        if state == "present":
            arguments.update(template=str(self.template), parameters={"role": role})
            if self.environment:
                arguments["environment"] = self.environment
        self._play([{"name": "The stack", "hotplay.stacks.stack": arguments}], state)

    def start_up(self) -> float:
        """How long ansible-playbook takes to run a playbook of one debug task."""
        began = time.monotonic()
        self._play([{"name": "Nothing", "ansible.builtin.debug": {"msg": "start-up"}}], "start-up")
        return time.monotonic() - began

    def _play(self, tasks: list[dict[str, Any]], what: str) -> None:
        playbook = self.folder / "play.yml"
        playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}],
                                           sort_keys=False))
        try:
            done = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                                   "-e", f"ansible_python_interpreter={BIN / 'python'}", str(playbook)],
                                  cwd=self.folder, env=self.env, capture_output=True, text=True, check=False,
                                  timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise SystemExit(f"hotplay {what} did not end in {self.timeout:.0f} s") from None
        if done.returncode:
            raise SystemExit(f"hotplay {what} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
        behind = [line for line in done.stderr.splitlines() if any(s in line for s in THREAD_TROUBLE)]
        if behind:
            raise SystemExit(f"hotplay {what} passed but wrote to stderr:\n" + "\n".join(behind[:10]))


class Heat:
    def __init__(self, client: HeatClient, body: dict[str, Any], name: str) -> None:
        self.client, self.body = client, body
        self.name, self.stack_id = name, ""

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

    def remove(self) -> None:
        """Delete the stack after a failed phase, and say if Heat could not."""
        if self.stack_id:
            self.client.delete(self.name, self.stack_id)
            status = self.client.wait(self.name, self.stack_id, "DELETE")["stack_status"]
            if status != "DELETE_COMPLETE":
                raise RuntimeError(f"Heat's delete ended {status}")


# -- measuring -------------------------------------------------------------------------------------

@dataclass
class Phase:
    name: str
    seconds: float
    counts: cloud_logs.Counts
    path: cloud_logs.CriticalPath | None
    load: tuple[float, float]
    timeline: cloud_logs.Timeline | cloud_logs.UpdateTimeline | cloud_logs.DeleteTimeline | None = None

    def over_path(self, start_up: float = 0.0) -> float | None:
        """The phase's time (less ``start_up``, ansible-playbook's own) over its critical path."""
        return (self.seconds - start_up) / self.path.seconds if self.path and self.path.seconds else None


class Side:
    """One side's stack (hotplay or Heat) measured on the cloud: its phases' times,
    the requests in each phase's window, and the phase's critical path."""

    def __init__(self, label: str, log_dir: Path, conn: Any, prefix: str, agent: str = "") -> None:
        self.label, self.log_dir, self.conn, self.prefix, self.agent = label, log_dir, conn, prefix, agent
        self.servers: set[str] = set()

    def phase(self, name: str, step: Callable[[], None]) -> Phase:
        window = cloud_logs.Window(self.log_dir)
        load = os.getloadavg()[0]
        began, began_wall = time.monotonic(), time.time()
        step()
        seconds = time.monotonic() - began
        after = os.getloadavg()[0]
        logs = window.read()
        if name == "create":
            self.servers = self._named_servers() or cloud_logs.booted(logs.service)
        path = cloud_logs.CRITICAL_PATHS[name](logs, self.servers)
        timeline = self._timeline(name, logs, began_wall, began_wall + seconds)
        phase = Phase(name, seconds, cloud_logs.count(logs.access, self.agent), path, (load, after), timeline)
        print(f"  {name:<8} {seconds:7.1f} s   (load average {load:.2f} before, {after:.2f} after)", flush=True)
        return phase

    def _timeline(self, name: str, logs: cloud_logs.WindowLogs, began: float,
                  ended: float) -> cloud_logs.Timeline | cloud_logs.UpdateTimeline | cloud_logs.DeleteTimeline | None:
        if name == "create":
            return cloud_logs.create_timeline(logs, self.servers, began, ended)
        if name == "update":
            return cloud_logs.update_timeline(logs, self.servers, began, ended, self.agent)
        return cloud_logs.delete_timeline(logs, self.servers, began, ended)

    def _named_servers(self) -> set[str]:
        """The servers of this side's stack: named ``<stack>-<resource>-<suffix>``."""
        return {str(server.id) for server in self.conn.compute.servers(name=f"^{self.prefix}-")}

    def phases(self, steps: list[Callable[[], None]], clean_up: Callable[[], None]) -> list[Phase]:
        """Create, update and delete; after a failure, what it made is deleted (both
        sides share the cloud's quotas)."""
        print(self.label, flush=True)
        try:
            return [self.phase(name, step) for name, step in zip(PHASES, steps, strict=True)]
        except SystemExit:
            clean_up()
            raise

    def phases_until_failure(self, steps: list[Callable[[], None]],
                             clean_up: Callable[[], None]) -> tuple[list[Phase], str]:
        """The phases that passed, and why the next one failed ("" when none did):
        the other side's figures are still reported."""
        done: list[Phase] = []
        print(self.label, flush=True)
        for name, step in zip(PHASES, steps, strict=True):
            try:
                done.append(self.phase(name, step))
            except SystemExit as failure:
                print(f"  {name:<8} failed: {failure}", flush=True)
                try:
                    clean_up()
                except Exception as left:  # noqa: BLE001 - whatever the other side answers
                    print(f"  its stack could not be deleted ({left}): its resources, named "
                          f"{self.prefix}-*, are left in the cloud", flush=True)
                return done, f"{name}: {failure}"
        return done, ""


# -- reporting -------------------------------------------------------------------------------------

def _figure(value: float | None, width: int, digits: int = 1) -> str:
    return f"{value:{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def report(ours: list[Phase], theirs: list[Phase] | None, start_up: float) -> None:
    print(f"\nansible-playbook start-up (one debug task): {start_up:.1f} s, in each hotplay figure")
    print(f"{'phase':<8} {'hotplay s':>10} {'Heat s':>8} {'Heat/hotplay':>13} {'critical s':>11} "
          f"{'hotplay/crit':>13} {'Heat/crit':>10} {'load':>6}")
    for index, mine in enumerate(ours):
        other = _phase(theirs, index)
        other_seconds = other.seconds if other else None
        print(f"{mine.name:<8} {mine.seconds:10.1f} {_figure(other_seconds, 8)} "
              f"{_figure(other_seconds / mine.seconds if other_seconds else None, 13, 2)} "
              f"{_figure(mine.path.seconds if mine.path else None, 11)} {_figure(mine.over_path(), 13, 2)} "
              f"{_figure(other.over_path() if other else None, 10, 2)} {mine.load[0]:6.2f}")
    total = sum(p.seconds for p in ours)
    other_total = sum(p.seconds for p in theirs) if theirs and len(theirs) == len(ours) else None
    print(f"{'total':<8} {total:10.1f} {_figure(other_total, 8)} "
          f"{_figure(other_total / total if other_total else None, 13, 2)}")
    for index, mine in enumerate(ours):
        print(f"\n{mine.name}:")
        print(f"  hotplay: {mine.counts.line()}")
        if (other := _phase(theirs, index)) is not None:
            print(f"  Heat:    {other.counts.line()}")
        for label, phase in (("hotplay", mine), ("Heat", other)):
            if phase and phase.path:
                print(f"  critical path of {label}'s run: {phase.path.seconds:.1f} s "
                      f"(longest of {phase.path.chains} chains: {phase.path.detail})")
            if phase and phase.timeline:
                print(f"  timeline of {label}'s run: {phase.timeline.line()}")


def _phase(phases: list[Phase] | None, index: int) -> Phase | None:
    return phases[index] if phases and index < len(phases) else None


def goals(ours: list[Phase], theirs: list[Phase] | None, start_up: float) -> None:
    """The issue's goals for native mode, met or missed, from this run's figures."""
    print("\ngoals:")
    if theirs is not None and len(theirs) < len(ours):
        print(f"  not measured: Heat's phases ({len(theirs)} of {len(ours)} ran)")
    elif theirs:
        ratios = [other.seconds / mine.seconds for mine, other in zip(ours, theirs, strict=True)]
        total = sum(p.seconds for p in theirs) / sum(p.seconds for p in ours)
        _goal("faster than Heat in every phase", all(r > 1 for r in ratios), " / ".join(f"{r:.2f}" for r in ratios))
        _goal(">= 1.5x Heat in total", total >= 1.5, f"{total:.2f}")
        _goal(">= 2x Heat on update", ratios[1] >= 2, f"{ratios[1]:.2f}")
    over = [phase.over_path() for phase in ours]
    _goal("each phase within 1.25x of its critical path", all(o is not None and o <= 1.25 for o in over),
          " / ".join(_figure(o, 0, 2) for o in over))
    # The update's critical path (one metadata call a server) is shorter than
    # ansible-playbook's start-up: the task's own time is what the engine can change.
    over = [phase.over_path(start_up) for phase in ours]
    _goal("the same, ansible-playbook's start-up left out", all(o is not None and o <= 1.25 for o in over),
          " / ".join(_figure(o, 0, 2) for o in over))
    if all(phase.counts.attributed for phase in ours):
        _goal("<= 1 password authentication per run", all(p.counts.password_auths <= 1 for p in ours),
              " / ".join(str(p.counts.password_auths) for p in ours))
        _goal("<= 1 version discovery per service per run",
              all(n <= 1 for p in ours for n in p.counts.discoveries.values()),
              " / ".join(str(max(p.counts.discoveries.values(), default=0)) for p in ours))
    else:
        print("  authentications and discoveries: not told apart (the cloud's access logs show no User-Agent)")


def _goal(what: str, met: bool, figures: str) -> None:
    print(f"  {'met   ' if met else 'MISSED'} {what}: {figures}")


# -- rounds ----------------------------------------------------------------------------------------

def rounds(hotplay: Hotplay, count: int) -> int:
    """Create and delete ``count`` times more; the failures."""
    failures = 0
    for number in range(1, count + 1):
        load = os.getloadavg()[0]
        times: list[str] = []
        try:
            for state in ("present", "absent"):
                began = time.monotonic()
                hotplay.run(state)
                times.append(f"{'create' if state == 'present' else 'delete'} {time.monotonic() - began:.1f} s")
            verdict = "ok"
        except SystemExit as failure:
            failures += 1
            verdict = f"FAILED: {str(failure)[-600:]}"
            _quietly(lambda: hotplay.run("absent"))
        print(f"round {number}/{count}: {', '.join(times)} (load {load:.2f}) {verdict}", flush=True)
    print(f"rounds: {count}, failures: {failures}")
    return failures


def _quietly(step: Callable[[], None]) -> None:
    try:
        step()
    except SystemExit as failure:
        print(f"  clean-up failed too: {str(failure)[-300:]}")


# -- main --------------------------------------------------------------------------------------------

def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--servers", type=int, default=20)
    parser.add_argument("--mode", choices=sorted(ENVIRONMENTS), default="native",
                        help="native: hotplay's native OpenStack types; provider: the openstack environment")
    parser.add_argument("--rounds", type=int, default=0,
                        help="create and delete this many times more after the measured run, counting failures")
    parser.add_argument("--no-heat", action="store_true", help="hotplay only (reliability runs)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a hotplay run may take")
    parser.add_argument("--heat-timeout", type=float, default=3600,
                        help="seconds a Heat phase may take (a stack left IN_PROGRESS is waited for this long)")
    return parser.parse_args()


def connection(clouds: str) -> Any:
    import openstack.config  # pylint: disable=import-outside-toplevel

    return openstack.connection.Connection(
        config=openstack.config.OpenStackConfig(config_files=[clouds]).get_one(cloud="hotplay"))


@dataclass(frozen=True)
class BenchCloud:
    """The test cloud a benchmark runs on, and what it runs with."""

    folder: Path
    venv: Path | None  # Heat's (None: without Heat)
    env: dict[str, str]  # ansible-playbook's environment
    clouds: str  # the cloud's clouds.yaml


def bench_cloud(no_heat: bool, make_target: str) -> BenchCloud | None:
    """The cloud from HOTPLAY_CLOUD_DIR and HOTPLAY_OPENSTACK_COLLECTIONS, Heat's venv
    unless ``no_heat``; None (and why, on stderr) when one is missing."""
    cloud_dir, collections = os.environ.get("HOTPLAY_CLOUD_DIR"), os.environ.get("HOTPLAY_OPENSTACK_COLLECTIONS")
    venv = None if no_heat else peer_venv()
    if not cloud_dir or not collections or (venv is None and not no_heat):
        print("needs the test cloud up (HOTPLAY_CLOUD_DIR, HOTPLAY_OPENSTACK_COLLECTIONS: "
              f"`{make_target}` sets them) and Heat installed (`make heat-peer`)", file=sys.stderr)
        return None
    clouds = str(Path(cloud_dir) / "clouds.yaml")
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": clouds, "OS_CLOUD": "hotplay",
           "ANSIBLE_COLLECTIONS_PATH": f"{INSTALLED}:{collections}", "ANSIBLE_NOCOLOR": "1"}
    return BenchCloud(Path(cloud_dir), venv, env, clouds)


def main() -> int:
    args = arguments()
    found = bench_cloud(args.no_heat, "make bench-cloud")
    if found is None:
        return 2
    cloud_dir, venv, env = found.folder, found.venv, found.env
    conn = connection(found.clouds)
    raise_quotas(conn, args.servers)
    body = template(args.servers)
    log_dir = Path(cloud_dir) / "log"
    print(f"{args.servers} servers, each on a port with a volume attached ({len(body['resources'])} resources); "
          f"hotplay in {args.mode} mode", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-cloud-") as folder:
        name = f"hp{os.getpid()}"
        hotplay = Hotplay(Path(folder), env, name, ENVIRONMENTS[args.mode], args.timeout)
        hotplay.template.write_text(yaml.safe_dump(body, sort_keys=False))
        start_up = hotplay.start_up()
        # The provider environment's modules do not name hotplay in their User-Agent.
        agent = HOTPLAY_AGENT if args.mode == "native" else ""
        ours = Side(f"hotplay ({args.mode})", log_dir, conn, name, agent).phases(
            [lambda: hotplay.run("present"), lambda: hotplay.run("present", role="db"), lambda: hotplay.run("absent")],
            lambda: _quietly(lambda: hotplay.run("absent")))
        theirs, failed = (None, "") if args.no_heat else heat_phases(
            Path(cloud_dir), venv, conn, body, log_dir, args.heat_timeout)
        report(ours, theirs, start_up)
        if failed:
            print(f"\nHeat's {failed}")
        goals(ours, theirs, start_up)
        failures = rounds(hotplay, args.rounds) if args.rounds else 0
    return 1 if failures else 0


def heat_phases(cloud_dir: Path, venv: Path | None, conn: Any, body: dict[str, Any], log_dir: Path,
                timeout: float) -> tuple[list[Phase], str]:
    """Heat's phases, and why one failed ("" when none did)."""
    assert venv is not None
    print("starting Heat", flush=True)
    heat_service = heat_on_cloud.start(cloud_dir, venv)
    try:
        client = HeatClient(heat_on_cloud.project_endpoint(heat_service, conn), poll=0.5, timeout=timeout,
                            token=conn.auth_token)
        heat = Heat(client, body, f"heat{os.getpid()}")
        return Side("Heat", log_dir, conn, heat.name).phases_until_failure(
            [lambda: heat.run("CREATE"), lambda: heat.run("UPDATE", role="db"), lambda: heat.run("DELETE")],
            heat.remove)
    finally:
        heat_service.stop()


if __name__ == "__main__":
    sys.exit(main())
