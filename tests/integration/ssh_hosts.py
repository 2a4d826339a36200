# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real SSH test hosts on this machine: each one a network namespace with its own
sshd, address, hostname and /srv, reached over a private bridge.

A set of hosts takes a *slot*: a lock file held while the hosts are up, and its own
namespace prefix, bridge, subnet (10.213.<200+slot>.0/24) and work directory, so
pytest-xdist workers (and other checkouts on the same machine) can each have hosts
at once.  An ``unreachable 10.213.0.0/16`` route keeps test traffic on the machine
even if a bridge route disappears; the namespaces get no default route.

The hosts share the machine's filesystem apart from /srv (a bind mount in a mount
namespace of their own), so their Python is the machine's /usr/bin/python3; a
host's files are read from the controller through ``SshHosts.srv(I)``.

Needs root, iproute2 and openssh-server (``scripts/test_deps.sh`` installs them);
without them the fixture fails with the command to run, never a silent skip.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest

SLOTS = 8
SAFETY_ROUTE = "10.213.0.0/16"
SSHD = "/usr/sbin/sshd"
# command -> Debian package that provides it
NEEDS = {SSHD: "openssh-server", "ssh": "openssh-client", "ssh-keygen": "openssh-client",
         "ip": "iproute2", "ss": "iproute2", "unshare": "util-linux"}
# ServerAliveInterval: an open ControlPersist connection to a host that is cut off
# fails within ~3 s instead of hanging the play.
SSH_OPTIONS = ("-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=3 "
               "-o ServerAliveInterval=1 -o ServerAliveCountMax=3")


def ip(*arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *arguments], capture_output=True, text=True, check=False, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(arguments)} failed: {done.stderr.strip()}")
    return done


def ensure_requirements() -> None:
    if os.geteuid() != 0:
        pytest.fail("the SSH host tests need root (network namespaces, sshd); run them as root",
                    pytrace=False)
    missing = sorted({package for command, package in NEEDS.items()
                      if not (os.access(command, os.X_OK) if command.startswith("/") else shutil.which(command))})
    if missing:
        pytest.fail(f"the SSH host tests need {', '.join(missing)}: run `bash scripts/test_deps.sh` "
                    f"(or apt-get install {' '.join(missing)})", pytrace=False)


@dataclass
class SshHosts:
    """N hosts ``node1``..``nodeN`` up in one slot, with an Ansible inventory."""

    slot: int
    count: int
    lock: IO[str]
    workdir: Path = field(init=False)
    inventory: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workdir = Path(f"/tmp/hotplay-netns-{self.slot}")
        self.inventory = self.workdir / "inventory.ini"

    @property
    def bridge(self) -> str:
        return f"hpbr{self.slot}"

    @property
    def names(self) -> list[str]:
        return [f"node{i}" for i in range(1, self.count + 1)]

    def address(self, number: int) -> str:
        return f"10.213.{200 + self.slot}.{10 + number}"

    def namespace(self, number: int) -> str:
        return f"hp{self.slot}n{number}"

    def _host_dir(self, number: int) -> Path:
        return self.workdir / f"host{number}"

    def srv(self, number: int) -> Path:
        """The host's /srv, as seen from the controller (the bind mount's source)."""
        return self._host_dir(number) / "srv"

    # --- bringing hosts up -------------------------------------------------------
    def up(self) -> None:
        if Path(f"/sys/class/net/{self.bridge}").exists() or self.workdir.exists():
            self.down(release=False)  # left by a run that died in this slot (we hold its lock)
        self.workdir.mkdir(parents=True)
        (self.workdir / "cp").mkdir()
        self._make_keys()
        ip("route", "replace", "unreachable", SAFETY_ROUTE)
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"10.213.{200 + self.slot}.1/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for number in range(1, self.count + 1):
            self._start_host(number)
        self._write_inventory()
        for number in range(1, self.count + 1):
            self._wait_for_sshd(number)

    def _make_keys(self) -> None:
        for key in ("id_ed25519", "ssh_host_ed25519_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.workdir / key)],
                           check=True, capture_output=True)
        authorized = self.workdir / "authorized_keys"
        shutil.copy(self.workdir / "id_ed25519.pub", authorized)
        authorized.chmod(0o600)
        # root's ~/.bashrc may start slow tools (pyenv init costs ~0.6 s per ssh command):
        # each host sees an empty one instead, bound over it in the host's own mount namespace.
        (self.workdir / "bashrc").write_text("")
        Path("/root/.bashrc").touch()
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)

    def _start_host(self, number: int) -> None:
        namespace, veth, address = self.namespace(number), f"hp{self.slot}v{number}", self.address(number)
        ip("netns", "add", namespace)
        ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
        ip("link", "set", veth, "master", self.bridge, "up")
        ip("-n", namespace, "addr", "add", f"{address}/24", "dev", "eth0")
        ip("-n", namespace, "link", "set", "lo", "up")
        ip("-n", namespace, "link", "set", "eth0", "up")
        home = self._host_dir(number)
        self.srv(number).mkdir(parents=True)
        config = home / "sshd_config"
        config.write_text(_sshd_config(self.workdir, home, address))
        # Its own mount and UTS namespaces: a /srv and a hostname per host.  sshd
        # daemonises and writes its pid file.
        script = (f"hostname node{number} && mount --bind '{self.srv(number)}' /srv && "
                  f"mount --bind '{self.workdir / 'bashrc'}' /root/.bashrc && "
                  f"exec {SSHD} -f '{config}' -E '{home / 'sshd.log'}'")
        subprocess.run(["ip", "netns", "exec", namespace, "unshare", "-m", "-u", "--propagation", "private",
                        "sh", "-c", script], check=True, capture_output=True, timeout=30)

    def _write_inventory(self) -> None:
        lines = ["[nodes]"] + [f"{name} ansible_host={self.address(i)}" for i, name in enumerate(self.names, 1)]
        lines += ["", "[nodes:vars]", "ansible_user=root",
                  f"ansible_ssh_private_key_file={self.workdir / 'id_ed25519'}",
                  f"ansible_ssh_common_args='{SSH_OPTIONS}'",
                  "ansible_python_interpreter=/usr/bin/python3",
                  f"ansible_control_path_dir={self.workdir / 'cp'}"]
        self.inventory.write_text("\n".join(lines) + "\n")

    def _wait_for_sshd(self, number: int) -> None:
        deadline = time.monotonic() + 10
        while self.ssh(number, "true", timeout=5).returncode != 0:
            if time.monotonic() > deadline:
                log = self._host_dir(number) / "sshd.log"
                raise RuntimeError(f"sshd of node{number} does not answer: "
                                   f"{log.read_text() if log.exists() else 'no log'}")
            time.sleep(0.1)

    # --- taking them down ----------------------------------------------------------
    def down(self, release: bool = True) -> None:
        try:
            self._close_control_masters()
            self._stop_namespace_processes()
            # Abort the controller's sockets to the test net: nothing is retransmitted later.
            subprocess.run(["ss", "-K", "-tan", "dst", f"10.213.{200 + self.slot}.0/24"],
                           capture_output=True, check=False)
            for namespace in self._namespaces():
                ip("netns", "del", namespace, check=False)
            ip("link", "del", self.bridge, check=False)  # deleting the bridge drops its veth ends too
            if not any(name.startswith("hpbr") for name in os.listdir("/sys/class/net")):
                ip("route", "del", "unreachable", SAFETY_ROUTE, check=False)  # the last slot down
            shutil.rmtree(self.workdir, ignore_errors=True)
        finally:
            if release:
                self.lock.close()

    def _namespaces(self) -> list[str]:
        listed = ip("netns", "list", check=False).stdout.split("\n")
        prefix = f"hp{self.slot}n"
        return [line.split()[0] for line in listed
                if line.startswith(prefix) and line.split()[0][len(prefix):].isdigit()]

    def _close_control_masters(self) -> None:
        for socket_path in (self.workdir / "cp").glob("*") if (self.workdir / "cp").is_dir() else []:
            subprocess.run(["ssh", "-o", f"ControlPath={socket_path}", "-O", "exit", "x"],
                           capture_output=True, check=False, timeout=10)

    def _stop_namespace_processes(self) -> None:
        """Every process in the hosts' namespaces (sshds and their sessions) was started here."""
        for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 2.0)):
            deadline = time.monotonic() + grace
            while pids := self._namespace_pids():
                if time.monotonic() > deadline:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
                time.sleep(0.1)

    def _namespace_pids(self) -> list[int]:
        return [int(pid) for namespace in self._namespaces()
                for pid in ip("netns", "pids", namespace, check=False).stdout.split()]

    # --- what tests do with them ---------------------------------------------------
    def cut(self, number: int) -> None:
        """Cut the host off (its link goes down): it becomes unreachable mid-play."""
        ip("-n", self.namespace(number), "link", "set", "eth0", "down")

    def heal(self, number: int) -> None:
        ip("-n", self.namespace(number), "link", "set", "eth0", "up")

    def ssh(self, number: int, command: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """Run a command on the host over SSH (its own /srv and hostname)."""
        return subprocess.run(
            ["ssh", "-q", "-i", str(self.workdir / "id_ed25519"), *SSH_OPTIONS.split(), "-o", "BatchMode=yes",
             f"root@{self.address(number)}", command],
            capture_output=True, text=True, timeout=timeout, check=False)


def _sshd_config(workdir: Path, home: Path, address: str) -> str:
    return "\n".join([
        "Port 22", f"ListenAddress {address}", f"HostKey {workdir / 'ssh_host_ed25519_key'}",
        f"PidFile {home / 'sshd.pid'}", "PermitRootLogin prohibit-password", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}", "Subsystem sftp internal-sftp",
        "LogLevel ERROR", ""])  # sshd's default MaxStartups and MaxSessions, as on real hosts


def start_hosts(count: int) -> SshHosts:
    """Take a free slot and bring ``count`` hosts up in it."""
    ensure_requirements()
    for slot in range(SLOTS):
        lock = open(f"/tmp/hotplay-netns-slot{slot}.lock", "w", encoding="utf-8")  # noqa: SIM115
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        hosts = SshHosts(slot, count, lock)
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
