#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ideal client of bench_small.py: the API calls a stack of servers (each on
a pre-made port, with a volume attached if asked) needs, made by a plain
openstacksdk script as a user would write it at best, one process per phase:

- one session (one authentication, one version discovery per service);
- every call that depends on nothing still pending sent at once (a thread each);
- one waiter that polls every pending server and volume together (one listing
  of each kind per round) every POLL seconds.

Its time for a phase is the limit hotplay is measured against: the same cloud,
the same calls, no orchestration engine, no store, no Ansible.

Usage: ideal_client.py PHASE STATE.json --servers N [--volumes] [--network ID]
  [--role ROLE] [--prefix NAME]; PHASE is create, update or delete; STATE.json
  keeps the ids from one phase to the next.  Prints the seconds from the first
  line of the script to its last, and from the session's first call."""

from __future__ import annotations

import time

STARTED = time.monotonic()

# pylint: disable=wrong-import-position
import argparse  # noqa: E402  (the clock starts before the imports)
import json  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from collections.abc import Callable  # noqa: E402
from concurrent.futures import Future, ThreadPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import openstack  # noqa: E402

POLL = 0.1  # seconds between two rounds of the waiter
AGENT = "ideal-client"  # in the cloud's access logs (bench_small.py tells the clients apart by it)
IMAGE, FLAVOR, CIDR = "hotplay-tiny", "m1.tiny", "10.9.0.0/22"


class Waiter:
    """Polls every pending server and volume together until each reaches its status
    (``None``: gone)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.pending: dict[tuple[str, str], tuple[str | None, threading.Event]] = {}
        self.failures: dict[tuple[str, str], str] = {}

    def wait(self, kind: str, ident: str, status: str | None, timeout: float = 600) -> None:
        done = threading.Event()
        with self.lock:
            self.pending[(kind, ident)] = (status, done)
        if not done.wait(timeout):
            raise SystemExit(f"{kind} {ident} not {status or 'gone'} after {timeout:.0f} s")
        if (kind, ident) in self.failures:
            raise SystemExit(self.failures[(kind, ident)])

    def run(self, stop: threading.Event) -> None:
        while not stop.wait(POLL):
            with self.lock:
                kinds = {kind for kind, _ident in self.pending}
            seen = {kind: self._listing(kind) for kind in kinds}
            with self.lock:
                for key, (status, done) in list(self.pending.items()):
                    kind, ident = key
                    now = seen.get(kind, {}).get(ident)
                    if now in ("ERROR", "error"):
                        self.failures[key] = f"{kind} {ident} went to {now}"
                    if now == status or now in ("ERROR", "error"):
                        del self.pending[key]
                        done.set()

    def _listing(self, kind: str) -> dict[str, str | None]:
        if kind == "server":
            found = self.conn.compute.get("/servers/detail").json()["servers"]
        else:
            found = self.conn.block_storage.get("/volumes/detail").json()["volumes"]
        return {item["id"]: item["status"] for item in found}


def create(conn: Any, waiter: Waiter, args: argparse.Namespace, pool: ThreadPoolExecutor) -> dict[str, Any]:
    state: dict[str, Any] = {}
    image = pool.submit(lambda: conn.image.get("/images", params={"name": IMAGE}).json()["images"][0]["id"])
    flavor = pool.submit(lambda: next(f["id"] for f in conn.compute.get("/flavors").json()["flavors"]
                                      if f["name"] == FLAVOR))
    volumes = [pool.submit(_volume, conn, waiter) for _index in range(args.servers if args.volumes else 0)]
    network, subnet = args.network, None
    if not network:
        network = conn.network.post("/networks", json={"network": {"name": f"{args.prefix}-net"}}).json()[
            "network"]["id"]
        subnet = conn.network.post("/subnets", json={"subnet": {
            "network_id": network, "cidr": CIDR, "ip_version": 4}}).json()["subnet"]["id"]
    state.update(network=network if not args.network else None, subnet=subnet)

    def chain(index: int) -> dict[str, Any]:
        asked: dict[str, Any] = {"network_id": network}
        if subnet:  # bench_cloud.py's template: each port at its own address
            asked["fixed_ips"] = [{"subnet_id": subnet, "ip_address": address(index)}]
        port = conn.network.post("/ports", json={"port": asked}).json()["port"]["id"]
        server = conn.compute.post("/servers", json={"server": {
            "name": f"{args.prefix}-server{index}", "imageRef": image.result(), "flavorRef": flavor.result(),
            "networks": [{"port": port}], "metadata": {"role": args.role}}}).json()["server"]["id"]
        waiter.wait("server", server, "ACTIVE")
        made = {"port": port, "server": server}
        if volumes:
            volume = volumes[index].result()
            conn.compute.post(f"/servers/{server}/os-volume_attachments",
                              json={"volumeAttachment": {"volumeId": volume}})
            waiter.wait("volume", volume, "in-use")
            made["volume"] = volume
        return made

    state["chains"] = _all(pool, chain, range(args.servers))
    return state


def address(index: int) -> str:
    """Port ``index``'s address in CIDR, as bench_cloud.py's template gives it."""
    return f"10.9.{1 + (index + 10) // 250}.{(index + 10) % 250}"


def _volume(conn: Any, waiter: Waiter) -> str:
    volume = conn.block_storage.post("/volumes", json={"volume": {"size": 1}}).json()["volume"]["id"]
    waiter.wait("volume", volume, "available")
    return str(volume)


def update(conn: Any, state: dict[str, Any], args: argparse.Namespace, pool: ThreadPoolExecutor) -> None:
    _all(pool, lambda made: conn.compute.put(f"/servers/{made['server']}/metadata",
                                             json={"metadata": {"role": args.role}}), state["chains"])


def delete(conn: Any, waiter: Waiter, state: dict[str, Any], pool: ThreadPoolExecutor) -> None:
    def chain(made: dict[str, Any]) -> Future[None] | None:
        volume, deleting = made.get("volume"), None
        if volume:
            conn.compute.delete(f"/servers/{made['server']}/os-volume_attachments/{volume}")
            waiter.wait("volume", volume, "available")
            deleting = pool.submit(_delete_volume, conn, waiter, volume)
        conn.compute.delete(f"/servers/{made['server']}")
        waiter.wait("server", made["server"], None)
        conn.network.delete(f"/ports/{made['port']}")
        return deleting

    volumes = _all(pool, chain, state["chains"])
    if state.get("subnet"):
        conn.network.delete(f"/subnets/{state['subnet']}")
    if state.get("network"):
        conn.network.delete(f"/networks/{state['network']}")
    for deleting in volumes:
        if deleting is not None:
            deleting.result()


def _delete_volume(conn: Any, waiter: Waiter, volume: str) -> None:
    conn.block_storage.delete(f"/volumes/{volume}")
    waiter.wait("volume", volume, None)


def _all(pool: ThreadPoolExecutor, step: Callable[[Any], Any], items: Any) -> list[Any]:
    return [future.result() for future in [pool.submit(step, item) for item in items]]


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("phase", choices=("create", "update", "delete"))
    parser.add_argument("state", type=Path)
    parser.add_argument("--servers", type=int, default=1)
    parser.add_argument("--volumes", action="store_true")
    parser.add_argument("--network", default="", help="a network to put the ports on (else one is made)")
    parser.add_argument("--role", default="app")
    parser.add_argument("--prefix", default="ideal")
    parser.add_argument("--cloud", default="hotplay")
    return parser.parse_args()


def main() -> int:
    args = arguments()
    conn = openstack.connect(cloud=args.cloud, app_name=AGENT)
    session_began = time.monotonic()
    waiter, stop = Waiter(conn), threading.Event()
    polling = threading.Thread(target=waiter.run, args=(stop,), daemon=True)
    polling.start()
    # Threads enough for every chain and the waits they start (a volume's delete).
    with ThreadPoolExecutor(max_workers=max(8, 3 * args.servers + 4)) as pool:
        try:
            if args.phase == "create":
                args.state.write_text(json.dumps(create(conn, waiter, args, pool)))
            elif args.phase == "update":
                update(conn, json.loads(args.state.read_text()), args, pool)
            else:
                delete(conn, waiter, json.loads(args.state.read_text()), pool)
        finally:
            stop.set()
            polling.join()
            conn.close()
    ended = time.monotonic()
    print(json.dumps({"seconds": ended - STARTED, "session_seconds": ended - session_began}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
