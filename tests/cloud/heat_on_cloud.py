# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real OpenStack Heat engine on the test cloud of cloud.py, authenticated by
the cloud's Keystone (not Heat's noauth mode): ``start(cloud_dir, heat_venv)``.

Heat runs as a cloud operator would run it: its own ``heat`` service user (also
the trustee of every stack's trust), the ``orchestration`` endpoint in Keystone's
catalog, a ``heat`` domain for the users stacks make and their ``heat_stack_user``
role, Nova's API capped at microversion 2.36 (so servers naming no networks work), its database on the cloud's
MariaDB and its RPC on the cloud's RabbitMQ, ``heat-engine`` and Heat's API
(``heat-wsgi-api``) as two processes.  They are spawned as the cloud's own (their
process ids in the cloud's ``run/``, their logs in its ``log/``), so ``cloud.py
stop`` ends them too if the test run does not.

Heat itself comes from a venv holding ``openstack-heat`` (``make heat-peer``
installs one); this module needs only the project's own Python and openstacksdk.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cloud import (HOST, REGION, SERVICE_PASSWORD, Cloud, CloudError, admin_connection,
                   authtoken, ini, rabbit_env, service_auth, wait_until)

# Heat refuses to start unless its credential-encryption key is 32 characters.
AUTH_ENCRYPTION_KEY = "hotplay-test-cloud-heat-key-0032"
STACK_DOMAIN = "heat"
STACK_DOMAIN_ADMIN = "heat_domain_admin"
STACK_USER_ROLE = "heat_stack_user"
# Heat's server.py sends no ``networks`` for a server that names none, which Nova
# refuses from microversion 2.37 on (novaclient: "nics are required after
# microversion 2.36"); a deployment whose templates name no networks caps Heat's
# Nova calls at 2.36, where Nova chooses the project's network itself.
MAX_NOVA_MICROVERSION = "2.36"


@dataclass
class HeatOnCloud:
    """A running Heat: its API's base URL (``http://127.0.0.1:PORT/v1``)."""

    cloud: Cloud
    port: int
    # Its engine and API, kept (and reaped when stopped): a Popen dropped while its
    # process runs is a ResourceWarning, which the tests' pytest.ini makes an error.
    spawned: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def database(self) -> str:
        """A database of its own: each Heat started on the cloud begins empty.  Its
        RPC runs in a RabbitMQ virtual host of the same name: two Heats started by
        two test runs at once never take each other's calls (oslo.messaging names
        the engine's queue after its topic, ``engine``, whatever the exchange)."""
        return f"heat_{self.port}"

    @property
    def processes(self) -> tuple[str, str]:
        """The names its engine and API are spawned under (their pid and log files)."""
        return f"{self.database}-engine", f"{self.database}-api"

    def stop(self) -> None:
        for name in self.processes:
            pid_file = self.cloud.run / f"{name}.pid"
            if pid_file.exists():
                stop_group(int(pid_file.read_text()))
                pid_file.unlink()
        for process in self.spawned:
            process.wait(timeout=30)
        self.spawned.clear()
        subprocess.run(["/usr/lib/rabbitmq/bin/rabbitmqctl", "delete_vhost", self.database],
                       capture_output=True, check=False, env={**os.environ, **rabbit_env(self.cloud)})

    def spawn(self, name: str, argv: list[str]) -> None:
        """``Cloud.spawn`` (its own session, output in ``log/NAME.out``, pid in
        ``run/NAME.pid``), keeping the process."""
        with open(self.cloud.log / f"{name}.out", "ab") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       cwd=self.cloud.root)
        self.spawned.append(process)
        (self.cloud.run / f"{name}.pid").write_text(str(process.pid))


def stop_group(pid: int) -> None:
    for signum, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pid, signum)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def start(cloud_dir: Path, venv: Path) -> HeatOnCloud:
    """Register Heat in the cloud, write its configuration, start it and wait for
    its API; on any failure stop what was started."""
    cloud = Cloud(cloud_dir)
    heat = HeatOnCloud(cloud, free_port())
    try:
        register(cloud, heat.url)
        conf = write_config(cloud, venv, heat)
        create_database(cloud, heat.database)
        create_vhost(cloud, heat.database)
        cloud.check([str(venv / "bin/heat-manage"), f"--config-file={conf}", "db_sync"],
                    "heat-manage")
        engine, api = heat.processes
        heat.spawn(engine, [str(venv / "bin/heat-engine"), f"--config-file={conf}"])
        heat.spawn(api, [str(venv / "bin/heat-wsgi-api"), f"--host={HOST}",
                         f"--port={heat.port}", "--", f"--config-file={conf}"])
        wait_until("Heat's API", lambda: answers(cloud, heat), timeout=180, every=0.5)
        wait_until("Heat's engine", lambda: engine_up(cloud, heat.database), timeout=180, every=1)
    except BaseException:
        heat.stop()
        raise
    return heat


def answers(cloud: Cloud, heat: HeatOnCloud) -> bool:
    for name in heat.processes:
        if name not in cloud.running():
            raise CloudError(f"{name} exited: see {cloud.log / (name + '.out')} "
                             f"and {cloud.log / (heat.database + '.log')}")
    try:
        with urllib.request.urlopen(heat.url.rsplit("/", 1)[0] + "/", timeout=10):
            return True
    except urllib.error.HTTPError:
        return True  # the version document answers 300: the application is loaded
    except OSError:
        return False


def engine_up(cloud: Cloud, database: str) -> bool:
    """The engine has registered itself in the database (``heat-manage service list``
    would say so too): until then the API's calls to it time out."""
    found = subprocess.run(["mariadb", f"--socket={cloud.socket}", "-uroot", "-N", "-e",
                            f"SELECT COUNT(*) FROM {database}.service WHERE deleted_at IS NULL"],
                           capture_output=True, text=True, check=False)
    return found.returncode == 0 and found.stdout.strip() not in ("", "0")


def create_database(cloud: Cloud, database: str) -> None:
    subprocess.run(["mariadb", f"--socket={cloud.socket}", "-uroot", "-e",
                    f"CREATE DATABASE IF NOT EXISTS {database}"], capture_output=True, check=True)


def create_vhost(cloud: Cloud, vhost: str) -> None:
    """A RabbitMQ virtual host for one Heat's RPC, open to the cloud's user."""
    ctl = "/usr/lib/rabbitmq/bin/rabbitmqctl"
    env = {**os.environ, **rabbit_env(cloud)}
    subprocess.run([ctl, "add_vhost", vhost], capture_output=True, check=False, env=env)
    subprocess.run([ctl, "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"],
                   capture_output=True, check=True, env=env)


def register(cloud: Cloud, url: str) -> None:
    """The heat service user, the orchestration endpoint (this run's port: an
    earlier run's endpoint is replaced), the stack users' domain and its admin."""
    conn = admin_connection(cloud)
    project = conn.identity.find_project("service")
    admin = conn.identity.find_role("admin")
    user = conn.identity.find_user("heat") or conn.identity.create_user(
        name="heat", password=SERVICE_PASSWORD, domain_id="default")
    conn.identity.assign_project_role_to_user(project, user, admin)
    # By type: find_service looks names up, and the service is named heat (an earlier
    # start that made one more left the catalog with a dead endpoint first).
    services = list(conn.identity.services(type="orchestration"))
    service = services[0] if services else conn.identity.create_service(
        name="heat", type="orchestration")
    for extra in services[1:]:
        for old in conn.identity.endpoints(service_id=extra.id):
            conn.identity.delete_endpoint(old)
        conn.identity.delete_service(extra)
    for old in conn.identity.endpoints(service_id=service.id):
        conn.identity.delete_endpoint(old)
    for interface in ("public", "internal", "admin"):
        conn.identity.create_endpoint(service_id=service.id, interface=interface,
                                      url=url + "/%(tenant_id)s", region_id=REGION)
    domain = conn.identity.find_domain(STACK_DOMAIN) or conn.identity.create_domain(
        name=STACK_DOMAIN, description="Users that Heat stacks make")
    domain_admin = conn.identity.find_user(STACK_DOMAIN_ADMIN, domain_id=domain.id) or \
        conn.identity.create_user(name=STACK_DOMAIN_ADMIN, password=SERVICE_PASSWORD,
                                  domain_id=domain.id)
    conn.identity.assign_domain_role_to_user(domain, domain_admin, admin)
    # The role Heat gives the users it makes for a stack's servers (its
    # heat_stack_user_role option): a deployment creates it with Heat.
    if conn.identity.find_role(STACK_USER_ROLE) is None:
        conn.identity.create_role(name=STACK_USER_ROLE)


def write_config(cloud: Cloud, venv: Path, heat: HeatOnCloud) -> Path:
    keystone = cloud.url("keystone")
    heat_url = f"http://{HOST}:{heat.port}"
    sections: dict[str, dict[str, object]] = {
        "DEFAULT": {
            "transport_url": cloud.transport_url + heat.database,
            "log_file": cloud.log / f"{heat.database}.log",
            "debug": False, "host": "hotplay-heat", "num_engine_workers": 1,
            "region_name_for_services": REGION,
            "auth_encryption_key": AUTH_ENCRYPTION_KEY,
            "stack_user_domain_name": STACK_DOMAIN, "stack_domain_admin": STACK_DOMAIN_ADMIN,
            "stack_domain_admin_password": SERVICE_PASSWORD,
            # Templates whose servers signal back would use these; the fake virt
            # driver's servers run no agent, so nothing calls them.
            "heat_metadata_server_url": heat_url,
            "heat_waitcondition_server_url": heat_url + "/v1/waitcondition",
            "environment_dir": cloud.data / "heat/environment.d",
            "template_dir": cloud.data / "heat/templates",
            "max_resources_per_stack": -1,
            "max_nova_api_microversion": MAX_NOVA_MICROVERSION,
            "heat_stack_user_role": STACK_USER_ROLE,
            # Stacks go from this Heat to hotplay and back (tests/cloud/test_adopt_openstack.py):
            # abandon data (stack export, abandon) and stack adopt are off in a stock Heat.
            "enable_stack_abandon": True, "enable_stack_adopt": True,
        },
        "database": {"connection": cloud.database(heat.database)},
        "keystone_authtoken": authtoken(cloud, "heat"),
        # Heat acts later on a user's behalf through a trust to its own user.
        "trustee": {key: value for key, value in service_auth(cloud, "heat").items()
                    if key not in ("project_name", "project_domain_name", "region_name")},
        "clients_keystone": {"auth_uri": keystone},
        "ec2authtoken": {"auth_uri": keystone + "/v3"},
        "paste_deploy": {"api_paste_config": venv / "etc/heat/api-paste.ini"},
        "oslo_concurrency": {"lock_path": cloud.data / "locks"},
    }
    for folder in ("environment.d", "templates"):
        (cloud.data / "heat" / folder).mkdir(parents=True, exist_ok=True)
    path = cloud.etc / f"heat/{heat.database}.conf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ini(sections))
    return path


def project_endpoint(heat: HeatOnCloud, conn: Any) -> str:
    """Heat's API for the admin project, as the catalog gives it to a client."""
    return f"{heat.url}/{conn.current_project_id}"
