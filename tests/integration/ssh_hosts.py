# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real SSH test hosts: network namespaces with their own sshd, from the shared
test bed's ``netns_hosts.sh`` (../shared/testbed beside the repository, or
``$HOTPLAY_SHARED/testbed``).

Each set of hosts takes a *slot*: a lock file held while the hosts are up, and its
own namespace prefix, bridge, subnet and work directory, so pytest-xdist workers
(and other checkouts on the same machine) can each have hosts at the same time.

The hosts share the machine's filesystem apart from /srv, so their Python is the
machine's /usr/bin/python3 (Debian's), which the test bed's inventory names as
``ansible_python_interpreter``; each host's files are read from the controller
through ``SshHosts.srv(I)`` (the source of that host's /srv bind mount).

Needs root, iproute2 and openssh-server.  When sshd is missing and the run is CI
as root, it is installed with apt; otherwise the fixture fails with the command to
run -- never a silent skip.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest

from conftest import REPO

SLOTS = 8
SAFETY_ROUTE = "10.213.0.0/16"  # netns_hosts.sh's default safety route, shared by all slots
# command -> Debian package that provides it
NEEDS = {"/usr/sbin/sshd": "openssh-server", "ssh": "openssh-client", "ssh-keygen": "openssh-client",
         "ip": "iproute2", "ss": "iproute2", "unshare": "util-linux"}


def testbed_script() -> Path:
    candidates = []
    if os.environ.get("HOTPLAY_SHARED"):
        shared = Path(os.environ["HOTPLAY_SHARED"])
        candidates += [shared / "testbed" / "netns_hosts.sh", shared / "netns_hosts.sh"]
    candidates.append(REPO.parent / "shared" / "testbed" / "netns_hosts.sh")
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    pytest.fail("netns_hosts.sh not found; looked at: " + ", ".join(map(str, candidates))
                + " (set HOTPLAY_SHARED to the shared directory)", pytrace=False)


def ensure_requirements() -> None:
    if os.geteuid() != 0:
        pytest.fail("the SSH host tests need root (network namespaces, sshd); run them as root",
                    pytrace=False)
    missing = sorted({package for command, package in NEEDS.items()
                      if not (os.access(command, os.X_OK) if command.startswith("/") else shutil.which(command))})
    if not missing:
        return
    command = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "--no-upgrade", *missing]
    if os.environ.get("CI") != "true" or not shutil.which("apt-get"):
        pytest.fail(f"the SSH host tests need {', '.join(missing)}: run `{' '.join(command)}` "
                    "(installed automatically only in CI as root)", pytrace=False)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    installed = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if installed.returncode != 0:  # an outdated package index: update once and retry
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, check=False)
        installed = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if installed.returncode != 0:
        pytest.fail(f"`{' '.join(command)}` failed:\n{installed.stdout}{installed.stderr}", pytrace=False)


@dataclass
class SshHosts:
    """N hosts ``node1``..``nodeN`` up in one slot; ``inventory`` is the testbed's own."""

    script: Path
    slot: int
    count: int
    lock: IO[str]
    workdir: Path = field(init=False)
    inventory: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workdir = Path(f"/tmp/hotplay-netns-{self.slot}")
        self.inventory = self.workdir / "inventory.ini"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "TBNS_PREFIX": f"hp{self.slot}n", "TBNS_BRIDGE": f"hpbr{self.slot}",
                "TBNS_NET": f"10.213.{200 + self.slot}"}

    @property
    def names(self) -> list[str]:
        return [f"node{i}" for i in range(1, self.count + 1)]

    def address(self, number: int) -> str:
        return f"10.213.{200 + self.slot}.{10 + number}"

    def namespace(self, number: int) -> str:
        return f"hp{self.slot}n{number}"

    def _script(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["bash", str(self.script), *arguments], env=self.env,
                              capture_output=True, text=True, timeout=120, check=False)
        if check and done.returncode != 0:
            raise RuntimeError(f"netns_hosts.sh {' '.join(arguments)} failed ({done.returncode}):\n"
                               f"{done.stdout}{done.stderr}")
        return done

    def up(self) -> None:
        if Path(f"/sys/class/net/hpbr{self.slot}").exists() or self.workdir.exists():
            # left over by a run that died in this slot (we hold its lock: nobody else uses it)
            self._script("down", str(self.workdir), check=False)
        self._script("up", str(self.count), str(self.workdir))
        text = self.inventory.read_text()
        assert "ServerAliveInterval" in text, "the testbed inventory lost ServerAliveInterval"

    def down(self) -> None:
        try:
            self._script("down", str(self.workdir), check=False)
        finally:
            # `down` drops the shared safety route; keep it while other hosts are up
            if any(name == "tbbr0" or name.startswith("hpbr") for name in os.listdir("/sys/class/net")):
                subprocess.run(["ip", "route", "replace", "unreachable", SAFETY_ROUTE], check=False)
            self.lock.close()

    def cut(self, number: int) -> None:
        self._script("cut", str(number))

    def heal(self, number: int) -> None:
        self._script("heal", str(number))

    def srv(self, number: int) -> Path:
        """The host's /srv, as seen from the controller (the bind mount's source)."""
        return self.workdir / f"host{number}" / "srv"

    def ssh(self, number: int, command: str) -> subprocess.CompletedProcess[str]:
        """Run a command on the host over SSH (its own /srv and hostname)."""
        return subprocess.run(
            ["ssh", "-q", "-i", str(self.workdir / "id_ed25519"), "-o", "StrictHostKeyChecking=no",
             "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "ConnectTimeout=3",
             f"root@{self.address(number)}", command],
            capture_output=True, text=True, timeout=30, check=False)


def start_hosts(count: int) -> SshHosts:
    """Take a free slot and bring ``count`` hosts up in it."""
    ensure_requirements()
    script = testbed_script()
    for slot in range(SLOTS):
        lock = open(f"/tmp/hotplay-netns-slot{slot}.lock", "w", encoding="utf-8")  # noqa: SIM115
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        hosts = SshHosts(script, slot, count, lock)
        try:
            hosts.up()
        except BaseException:
            hosts.down()
            raise
        return hosts
    pytest.fail(f"all {SLOTS} test host slots are busy (/tmp/hotplay-netns-slot*.lock)", pytrace=False)


def wait_for(path: Path, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.05)
    return False
