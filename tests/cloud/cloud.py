# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A throwaway OpenStack cloud for the tests: ``cloud.py start|stop|status DIR``.

Keystone (fernet tokens), Placement, Nova (API, conductor, scheduler and a compute
service on Nova's fake virt driver: servers go ACTIVE with no hypervisor), Neutron
(ML2 with a driver that binds every port: no agents), Glance (file store, a tiny
image) and Cinder (Cinder's own fake back end: volumes with no block device), on one
MariaDB server and one RabbitMQ broker from Debian's packages. Everything listens on
127.0.0.1 (MariaDB on a unix socket only) and lives in DIR: configuration, data,
logs and the process ids that ``stop`` ends. ``start`` writes ``DIR/clouds.yaml``.

Run it with the Python of the venv that holds the OpenStack services
(``scripts/cloud.sh`` makes that venv); it needs root for nothing but MariaDB's
and RabbitMQ's ``--user`` handling, and runs as whoever starts it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HOST = "127.0.0.1"
REGION = "RegionOne"
PORTS = {"keystone": 42700, "nova": 42701, "neutron": 42702, "glance": 42703,
         "placement": 42704, "cinder": 42705, "rabbit": 42706, "rabbit_dist": 42707,
         "epmd": 42708, "swift": 42709, "swift-account": 42710, "swift-container": 42711,
         "swift-object": 42712}
# The test cloud's passwords: it listens on 127.0.0.1 only and lives for one test run.
ADMIN_PASSWORD = "hotplay-admin"
SERVICE_PASSWORD = "hotplay-service"
# A project of its own with a member user (clouds.yaml entry hotplay-demo): the admin
# project owns the external network, so Nova never finds it the only network there.
DEMO_PASSWORD = "hotplay-demo"
SERVICES = ("nova", "neutron", "glance", "placement", "cinder", "swift")
# Swift's storage servers (one node, one replica, a directory for its disk).
SWIFT_STORES = ("account", "container", "object")
DATABASES = ("keystone", "nova_api", "nova_cell0", "nova", "neutron", "glance",
             "placement", "cinder")
VENV = Path(sys.executable).parent
HERE = Path(__file__).resolve().parent
START_TIMEOUT = 300


class CloudError(Exception):
    """The cloud could not be started; the message names the service and its log."""


class Cloud:
    """The cloud's directory: where each service's configuration, data and log live."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.etc = self.root / "etc"
        self.log = self.root / "log"
        self.run = self.root / "run"
        self.data = self.root / "data"
        self.socket = self.run / "mysqld.sock"

    def url(self, service: str) -> str:
        return f"http://{HOST}:{PORTS[service]}"

    def database(self, name: str) -> str:
        return f"mysql+pymysql://root@localhost/{name}?unix_socket={self.socket}&charset=utf8"

    @property
    def transport_url(self) -> str:
        return f"rabbit://guest:guest@{HOST}:{PORTS['rabbit']}/"

    # --- processes -----------------------------------------------------------------

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        """Start ``argv`` in its own session (``stop`` ends the whole group), its output
        in ``log/NAME.out``, its process id in ``run/NAME.pid``."""
        with open(self.log / f"{name}.out", "ab") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       env={**os.environ, **(env or {})}, cwd=self.root)
        (self.run / f"{name}.pid").write_text(str(process.pid))

    def running(self) -> dict[str, int]:
        """The process ids recorded and still alive, by name."""
        alive = {}
        for pid_file in sorted(self.run.glob("*.pid")):
            pid = int(pid_file.read_text())
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                continue
            alive[pid_file.stem] = pid
        return alive

    def exited(self, name: str) -> CloudError:
        """The error for a service that ended while starting, with its log's end: CI
        shows the output, not the files."""
        out = self.log / f"{name}.out"
        try:
            tail = out.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-15:]
        except OSError:
            tail = []
        return CloudError(f"{name} exited: see {out}; its end:\n" + "\n".join(tail))

    def check(self, argv: list[str], name: str, env: dict[str, str] | None = None) -> str:
        """Run a set-up command; on failure raise with its output's end."""
        result = subprocess.run(argv, capture_output=True, text=True, cwd=self.root,
                                env={**os.environ, **(env or {})}, check=False)
        with open(self.log / f"{name}.out", "a", encoding="utf-8") as out:
            out.write(result.stdout + result.stderr)
        if result.returncode:
            tail = (result.stdout + result.stderr).strip().splitlines()[-15:]
            raise CloudError(f"{name}: {' '.join(argv[:3])} failed:\n" + "\n".join(tail))
        return result.stdout


def wait_for_port(cloud: Cloud, name: str, port: int, timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            probe.settimeout(1)
            if probe.connect_ex((HOST, port)) == 0:
                return
        if name not in cloud.running():
            raise cloud.exited(name)
        time.sleep(0.2)
    raise CloudError(f"{name} did not listen on port {port} in {timeout:.0f} s: "
                     f"see {cloud.log / (name + '.out')}")


def wait_for_api(cloud: Cloud, name: str) -> None:
    """Until the API answers HTTP: gunicorn listens before its worker has loaded the
    application, and a worker that fails to load ends gunicorn."""
    def answers() -> bool:
        if name not in cloud.running():
            raise cloud.exited(name)
        try:
            with urllib.request.urlopen(cloud.url(name), timeout=30):
                return True
        except urllib.error.HTTPError:
            return True  # any status: the application is loaded
        except OSError:
            return False

    wait_until(f"{name}'s API", answers, every=0.3)


def wait_until(what: str, probe, timeout: float = START_TIMEOUT, every: float = 1.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise CloudError(f"timed out waiting for {what}")
        time.sleep(every)


# --- configuration -------------------------------------------------------------------

def ini(sections: dict[str, dict[str, object]]) -> str:
    lines = []
    for section, options in sections.items():
        lines.append(f"[{section}]")
        lines += [f"{key} = {value}" for key, value in options.items()]
        lines.append("")
    return "\n".join(lines)


def service_auth(cloud: Cloud, user: str) -> dict[str, object]:
    """The options of a service user's password login to Keystone."""
    return {"auth_url": cloud.url("keystone"), "auth_type": "password",
            "project_domain_name": "Default", "user_domain_name": "Default",
            "project_name": "service", "username": user, "password": SERVICE_PASSWORD,
            "region_name": REGION}


def authtoken(cloud: Cloud, user: str) -> dict[str, object]:
    return {"www_authenticate_uri": cloud.url("keystone"), **service_auth(cloud, user)}


def common(cloud: Cloud, name: str) -> dict[str, object]:
    return {"transport_url": cloud.transport_url, "log_file": cloud.log / f"{name}.log",
            "state_path": cloud.data / name, "debug": False}


def write_configs(cloud: Cloud) -> None:
    lock = {"lock_path": cloud.data / "locks"}
    configs = {
        "keystone/keystone.conf": {
            "DEFAULT": {"log_file": cloud.log / "keystone.log"},
            "database": {"connection": cloud.database("keystone")},
            # bcrypt's fewest rounds (the default, 12, costs a quarter of a second of CPU
            # per password authentication, and every playbook run authenticates): the
            # throwaway cloud's passwords guard nothing.
            "identity": {"password_hash_rounds": 4},
            "token": {"provider": "fernet"},
            # Keystone's own cache, in its one process's memory (what a deployment puts in
            # memcached): every playbook run authenticates and every service then
            # validates that new token, each a catalog and the role assignments read
            # from the database again without it (Keystone took a fifth of the
            # machine's CPU in the cloud tests).
            "cache": {"enabled": True, "backend": "dogpile.cache.memory"},
            "fernet_tokens": {"key_repository": cloud.data / "keystone/fernet-keys"},
            "fernet_receipts": {"key_repository": cloud.data / "keystone/fernet-keys"},
            "credential": {"key_repository": cloud.data / "keystone/credential-keys"},
        },
        "placement/placement.conf": {
            "DEFAULT": {"log_file": cloud.log / "placement.log"},
            "placement_database": {"connection": cloud.database("placement")},
            "api": {"auth_strategy": "keystone"},
            "keystone_authtoken": authtoken(cloud, "placement"),
        },
        "nova/nova.conf": {
            "DEFAULT": {**common(cloud, "nova"), "compute_driver": "fake.FakeDriver",
                        "host": "hotplay-compute", "my_ip": HOST,
                        "enabled_apis": "osapi_compute",
                        # One compute host: a resize (flavor_update_policy RESIZE) stays on it.
                        "allow_resize_to_same_host": True,
                        # No agent plugs a port here: do not wait for Neutron's event.
                        "vif_plugging_is_fatal": False, "vif_plugging_timeout": 0},
            "api": {"auth_strategy": "keystone"},
            "wsgi": {"api_paste_config": cloud.etc / "nova/api-paste.ini"},
            "api_database": {"connection": cloud.database("nova_api")},
            "database": {"connection": cloud.database("nova")},
            "keystone_authtoken": authtoken(cloud, "nova"),
            "placement": service_auth(cloud, "nova"),
            "neutron": service_auth(cloud, "nova"),
            # Cinder deletes a server's volume attachment only when Nova's call carries
            # a service token (ConflictNovaUsingAttachment otherwise).
            "service_user": {"send_service_user_token": True, **service_auth(cloud, "nova")},
            "glance": {"region_name": REGION},
            "cinder": {"os_region_name": REGION},
            # One scheduler worker: the scheduler tries its Placement client before
            # it forks its workers (one per CPU by default), and the forked workers
            # then shared that client's kept-alive connection: one read another's
            # answer ("BadStatusLine('{"allocation_requests": ...')", IncompleteRead),
            # took it for "no allocation candidates", and a server went to ERROR,
            # "No valid host was found" (seen in the first 20-server benchmark after
            # the cloud came up, twice).
            "scheduler": {"discover_hosts_in_cells_interval": 2, "workers": 1},
            "oslo_concurrency": lock,
            "os_vif_ovs": {"ovsdb_connection": "unix:/nonexistent"},
        },
        "neutron/neutron.conf": {
            "DEFAULT": {**common(cloud, "neutron"), "core_plugin": "ml2",
                        "service_plugins": "router", "auth_strategy": "keystone",
                        "api_paste_config": cloud.etc / "neutron/api-paste.ini",
                        "notify_nova_on_port_status_changes": True,
                        "notify_nova_on_port_data_changes": True},
            "database": {"connection": cloud.database("neutron")},
            "keystone_authtoken": authtoken(cloud, "neutron"),
            "nova": service_auth(cloud, "neutron"),
            "oslo_concurrency": lock,
        },
        "neutron/ml2_conf.ini": {
            "ml2": {"type_drivers": "flat,vxlan", "tenant_network_types": "vxlan",
                    "mechanism_drivers": "hotplay_bind_all",
                    "extension_drivers": "port_security"},
            "ml2_type_flat": {"flat_networks": "public"},
            "ml2_type_vxlan": {"vni_ranges": "1:1000"},
        },
        "glance/glance-api.conf": {
            "DEFAULT": {"log_file": cloud.log / "glance.log", "enabled_backends": "fs:file",
                        "transport_url": cloud.transport_url},
            "glance_store": {"default_backend": "fs"},
            "fs": {"filesystem_store_datadir": cloud.data / "glance/images"},
            "os_glance_staging_store": {"filesystem_store_datadir": cloud.data / "glance/staging"},
            "os_glance_tasks_store": {"filesystem_store_datadir": cloud.data / "glance/tasks"},
            "database": {"connection": cloud.database("glance")},
            "keystone_authtoken": authtoken(cloud, "glance"),
            "paste_deploy": {"flavor": "keystone"},
            "oslo_concurrency": lock,
        },
        "cinder/cinder.conf": {
            "DEFAULT": {**common(cloud, "cinder"), "auth_strategy": "keystone",
                        "api_paste_config": cloud.etc / "cinder/api-paste.ini",
                        "my_ip": HOST, "enabled_backends": "fake",
                        "glance_api_servers": cloud.url("glance"),
                        # As a deployment installs it: without the file, a project
                        # member's list of volumes by name is refused.
                        "resource_query_filters_file": cloud.etc / "cinder/resource_filters.json",
                        # cinder-volume handles at most this many requests at once
                        # (oslo.messaging's default, 64, is above its database pool,
                        # 5 + 50 overflow): a hundred volumes deleted at once on a
                        # loaded machine ran the pool dry, and a volume stayed
                        # 'deleting' for good.
                        "executor_thread_pool_size": 32},
            # Cinder's own functional tests' back end: no block device, no iSCSI.
            "fake": {"volume_driver": "cinder.tests.fake_driver.FakeLoggingVolumeDriver",
                     "volume_backend_name": "fake"},
            "database": {"connection": cloud.database("cinder")},
            "keystone_authtoken": authtoken(cloud, "cinder"),
            "nova": service_auth(cloud, "cinder"),
            "oslo_concurrency": lock,
        },
    }
    configs.update(swift_configs(cloud))
    for path, sections in configs.items():
        target = cloud.etc / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(ini(sections))
    for service in ("nova", "neutron", "cinder"):
        shutil.copy(VENV.parent / f"etc/{service}/api-paste.ini", cloud.etc / service)
    shutil.copy(VENV.parent / "etc/cinder/resource_filters.json", cloud.etc / "cinder")
    shutil.copy(VENV.parent / "etc/glance/glance-api-paste.ini", cloud.etc / "glance")


def swift_configs(cloud: Cloud) -> dict[str, dict[str, dict[str, object]]]:
    """Swift as one node: a proxy with Keystone's authentication, temporary URLs
    (Heat's TEMP_URL_SIGNAL and SwiftSignalHandle) and the legacy object versioning
    that Heat's signal containers use (``X-Versions-Location``); the account,
    container and object servers on a directory of ``data/swift``.  Every server
    runs in one process (``workers = 0``, eventlet's green threads)."""
    common_options: dict[str, object] = {
        "bind_ip": HOST, "workers": 0, "swift_dir": cloud.etc / "swift",
        "devices": cloud.data / "swift", "mount_check": False, "log_level": "WARNING"}
    configs = {"swift/swift.conf": {
        "swift-hash": {"swift_hash_path_suffix": "hotplay-test-cloud"},
        "storage-policy:0": {"name": "Policy-0", "default": "yes"}}}
    for store in SWIFT_STORES:
        configs[f"swift/{store}-server.conf"] = {
            "DEFAULT": {**common_options, "bind_port": PORTS[f"swift-{store}"]},
            "pipeline:main": {"pipeline": f"{store}-server"},
            f"app:{store}-server": {"use": f"egg:swift#{store}", "allow_versions": "true"}}
    configs["swift/proxy-server.conf"] = {
        "DEFAULT": {**common_options, "bind_port": PORTS["swift"], "log_level": "INFO"},
        # dlo is one Swift adds itself; named here, its place is stated, not warned of.
        "pipeline:main": {"pipeline": "catch_errors gatekeeper healthcheck proxy-logging listing_formats "
                                      "tempurl authtoken keystoneauth copy dlo versioned_writes "
                                      "proxy-logging proxy-server"},
        "app:proxy-server": {"use": "egg:swift#proxy", "account_autocreate": "true"},
        **{f"filter:{name}": {"use": f"egg:swift#{name}"} for name in (
            "catch_errors", "gatekeeper", "healthcheck", "listing_formats", "tempurl", "copy", "dlo")},
        "filter:proxy-logging": {"use": "egg:swift#proxy_logging"},
        "filter:versioned_writes": {"use": "egg:swift#versioned_writes", "allow_versioned_writes": "true"},
        # delay_auth_decision: a request with no token (a temporary URL's) goes on to
        # keystoneauth, which lets tempurl's signature authorise it.
        "filter:authtoken": {"paste.filter_factory": "keystonemiddleware.auth_token:filter_factory",
                             "delay_auth_decision": "true", **authtoken(cloud, "swift")},
        "filter:keystoneauth": {"use": "egg:swift#keystoneauth", "operator_roles": "admin, member"},
    }
    return configs


def build_swift_rings(cloud: Cloud) -> None:
    """One device per ring, on ``data/swift/d1``; 2^6 partitions, one replica."""
    from swift.common.ring import RingBuilder  # the cloud venv's Swift

    (cloud.data / "swift/d1").mkdir(parents=True, exist_ok=True)
    for store in SWIFT_STORES:
        builder = RingBuilder(6, 1, 1)
        builder.add_dev({"region": 1, "zone": 1, "ip": HOST, "port": PORTS[f"swift-{store}"],
                         "device": "d1", "weight": 1})
        builder.rebalance()
        builder.get_ring().save(str(cloud.etc / "swift" / f"{store}.ring.gz"))


# --- the database and the broker ---------------------------------------------------------

def start_mariadb(cloud: Cloud) -> None:
    datadir, tmpdir = cloud.data / "mysql", cloud.data / "mysql-tmp"
    # Its temporary tables in a folder of its own: in the shared /tmp, where the tests
    # beside it come and go, a peer's MariaDB once lost one during its install.
    tmpdir.mkdir(parents=True, exist_ok=True)
    if not datadir.exists():
        cloud.check(["mariadb-install-db", f"--datadir={datadir}", "--user=root",
                     "--auth-root-authentication-method=normal", "--skip-test-db"],
                    "mariadb-install", {"TMPDIR": str(tmpdir)})
    cloud.spawn("mariadb", ["mariadbd", "--no-defaults", f"--datadir={datadir}", f"--tmpdir={tmpdir}",
                            f"--socket={cloud.socket}", "--skip-networking", "--user=root",
                            f"--pid-file={cloud.run / 'mysqld.real-pid'}",
                            "--innodb-flush-log-at-trx-commit=0", "--max-connections=1000",
                            f"--log-error={cloud.log / 'mariadb.log'}"])
    wait_until("MariaDB's socket", cloud.socket.exists, timeout=60, every=0.2)
    statements = "".join(f"CREATE DATABASE IF NOT EXISTS {name};" for name in DATABASES)
    wait_until("MariaDB", lambda: subprocess.run(
        ["mariadb", f"--socket={cloud.socket}", "-uroot", "-e", statements],
        capture_output=True, check=False).returncode == 0, timeout=60, every=0.5)


def start_rabbitmq(cloud: Cloud) -> None:
    base = cloud.data / "rabbitmq"
    base.mkdir(parents=True, exist_ok=True)
    env = rabbit_env(cloud)
    cloud.spawn("rabbitmq", ["/usr/lib/rabbitmq/bin/rabbitmq-server"], env)
    wait_for_port(cloud, "rabbitmq", PORTS["rabbit"], timeout=120)


def rabbit_env(cloud: Cloud) -> dict[str, str]:
    base = cloud.data / "rabbitmq"
    return {"RABBITMQ_NODENAME": "hotplay@localhost", "RABBITMQ_NODE_IP_ADDRESS": HOST,
            "RABBITMQ_NODE_PORT": str(PORTS["rabbit"]),
            "RABBITMQ_DIST_PORT": str(PORTS["rabbit_dist"]),
            "ERL_EPMD_PORT": str(PORTS["epmd"]), "ERL_EPMD_ADDRESS": HOST,
            "RABBITMQ_MNESIA_BASE": str(base / "mnesia"),
            "RABBITMQ_LOG_BASE": str(cloud.log / "rabbitmq"),
            "RABBITMQ_PID_FILE": str(cloud.run / "rabbitmq.real-pid"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
            "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq"),
            "HOME": str(base)}


# --- the OpenStack services ----------------------------------------------------------------

def manage(cloud: Cloud, service: str, argv: list[str], conf: list[str] | None = None) -> None:
    configs = conf or [f"{service}/{service}.conf"]
    options = [f"--config-file={cloud.etc / path}" for path in configs]
    cloud.check([str(VENV / argv[0]), *options, *argv[1:]], f"{service}-manage")


def sync_databases(cloud: Cloud) -> None:
    """Each service's schema, side by side: they share nothing but the server."""
    cell0 = cloud.database("nova_cell0")

    def nova() -> None:
        manage(cloud, "nova", ["nova-manage", "api_db", "sync"])
        manage(cloud, "nova", ["nova-manage", "cell_v2", "map_cell0",
                               f"--database_connection={cell0}"])
        manage(cloud, "nova", ["nova-manage", "cell_v2", "create_cell", "--name=cell1"])
        manage(cloud, "nova", ["nova-manage", "db", "sync"])

    jobs = [
        nova,
        lambda: manage(cloud, "neutron", ["neutron-db-manage", "upgrade", "heads"],
                       ["neutron/neutron.conf", "neutron/ml2_conf.ini"]),
        lambda: manage(cloud, "glance", ["glance-manage", "db_sync"], ["glance/glance-api.conf"]),
        lambda: manage(cloud, "placement", ["placement-manage", "db", "sync"]),
        lambda: manage(cloud, "cinder", ["cinder-manage", "db", "sync"]),
    ]
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        for future in [pool.submit(job) for job in jobs]:
            future.result()


def start_keystone(cloud: Cloud) -> None:
    conf = ["keystone/keystone.conf"]
    manage(cloud, "keystone", ["keystone-manage", "db_sync"], conf)
    for keys in ("fernet_setup", "credential_setup"):
        manage(cloud, "keystone", ["keystone-manage", keys, "--keystone-user=root",
                                   "--keystone-group=root"], conf)
    url = cloud.url("keystone") + "/v3"
    manage(cloud, "keystone", ["keystone-manage", "bootstrap",
                               f"--bootstrap-password={ADMIN_PASSWORD}",
                               f"--bootstrap-admin-url={url}", f"--bootstrap-internal-url={url}",
                               f"--bootstrap-public-url={url}",
                               f"--bootstrap-region-id={REGION}"], conf)
    serve(cloud, "keystone", "keystone.wsgi.api:application",
          env={"OS_KEYSTONE_CONFIG_DIR": str(cloud.etc / "keystone")})


def serve(cloud: Cloud, name: str, app: str, env: dict[str, str] | None = None,
          argv: list[str] | None = None) -> None:
    """An API under gunicorn: two threads (enough for tests, light on two cores).
    Every request is logged in ``log/NAME.access`` (method, path, status, seconds
    taken, its start as epoch seconds, its User-Agent): tests and the cloud
    benchmark count Keystone's password authentications and each service's calls
    there, and tell a client's requests from the services' own by the agent."""
    cloud.spawn(name, [str(VENV / "gunicorn"), f"--bind={HOST}:{PORTS[name]}",
                       "--workers=1", "--threads=8", "--worker-class=gthread",
                       # gunicorn's 2 s keep-alive closes idle connections while the
                       # services' clients reuse them: a request sent at that moment
                       # is reset (seen: nova-scheduler's call to Placement, so a
                       # server went to ERROR, "No valid host was found", on a loaded
                       # machine).  Clients drop a connection closed long before.
                       "--keep-alive=75",
                       # Apache's limit (gunicorn's own is 4094): Nova asks Neutron
                       # about 150 servers' ports in one query line of ~7 KB.
                       "--limit-request-line=8190",
                       f"--access-logfile={cloud.log / (name + '.access')}",
                       "--access-logformat=%(t)s %(m)s %(U)s %(s)s %(L)s %({hotplay_began}e)s \"%(a)s\"",
                       "--timeout=300", f"--pythonpath={HERE}", "wsgi_app:application"],
                {"HOTPLAY_WSGI_APP": app, "HOTPLAY_WSGI_ARGV": "\n".join(argv or [name]),
                 **(env or {})})


def start_services(cloud: Cloud) -> None:
    etc = cloud.etc
    nova_conf = f"--config-file={etc / 'nova/nova.conf'}"
    cinder_conf = f"--config-file={etc / 'cinder/cinder.conf'}"
    serve(cloud, "placement", "placement.wsgi.api:application",
          env={"OS_PLACEMENT_CONFIG_DIR": str(etc / "placement")})
    serve(cloud, "nova", "nova.wsgi.osapi_compute:application",
          env={"OS_NOVA_CONFIG_DIR": str(etc / "nova")})
    for part in ("conductor", "scheduler", "compute"):
        cloud.spawn(f"nova-{part}", [str(VENV / f"nova-{part}"), nova_conf,
                                     f"--log-file={cloud.log / f'nova-{part}.log'}"])
    serve(cloud, "neutron", "neutron.wsgi.api:application",
          env={"OS_NEUTRON_CONFIG_DIR": str(etc / "neutron"),
               "OS_NEUTRON_CONFIG_FILES": "neutron.conf;ml2_conf.ini"})
    serve(cloud, "glance", "glance.wsgi.api:application",
          env={"OS_GLANCE_CONFIG_DIR": str(etc / "glance")})
    serve(cloud, "cinder", "cinder.wsgi.api:application", argv=["cinder-api", cinder_conf])
    for part in ("scheduler", "volume"):
        cloud.spawn(f"cinder-{part}", [str(VENV / f"cinder-{part}"), cinder_conf,
                                       f"--log-file={cloud.log / f'cinder-{part}.log'}"])
    start_swift(cloud)
    for name in ("placement", "nova", "neutron", "glance", "cinder", "swift"):
        wait_for_api(cloud, name)


def start_swift(cloud: Cloud) -> None:
    build_swift_rings(cloud)
    for store in (*SWIFT_STORES, "proxy"):
        name = "swift" if store == "proxy" else f"swift-{store}"
        # -v: the servers' log (the proxy's access lines among it) on their output.
        cloud.spawn(name, [str(VENV / f"swift-{store}-server"), str(cloud.etc / f"swift/{store}-server.conf"), "-v"])


# --- what the cloud holds at start -------------------------------------------------------

def admin_connection(cloud: Cloud):  # type: ignore[no-untyped-def]
    import openstack  # the cloud venv's; the project does not need it to run this file

    return openstack.connect(auth_url=cloud.url("keystone") + "/v3", username="admin",
                             password=ADMIN_PASSWORD, project_name="admin",
                             user_domain_name="Default", project_domain_name="Default",
                             region_name=REGION)


def register_services(cloud: Cloud) -> None:
    """Service users, and the catalog that tells each client where the APIs are."""
    conn = admin_connection(cloud)
    project = conn.identity.find_project("service") or conn.identity.create_project(
        name="service", domain_id="default")
    # 'service' as well as 'admin': keystonemiddleware accepts a service token (which
    # Nova sends with its calls to Neutron and Cinder) only from a user holding it.
    roles = [conn.identity.find_role(name) for name in ("admin", "service")]
    catalog = {"nova": ("compute", "/v2.1"), "neutron": ("network", ""),
               "glance": ("image", ""), "placement": ("placement", ""),
               "cinder": ("block-storage", "/v3"), "swift": ("object-store", "/v1/AUTH_%(project_id)s")}
    for name in SERVICES:
        user = conn.identity.find_user(name) or conn.identity.create_user(
            name=name, password=SERVICE_PASSWORD, domain_id="default")
        for role in roles:
            conn.identity.assign_project_role_to_user(project, user, role)
        kind, path = catalog[name]
        service = conn.identity.find_service(kind) or conn.identity.create_service(
            name=name, type=kind)
        for interface in ("public", "internal", "admin"):
            conn.identity.create_endpoint(service_id=service.id, interface=interface,
                                          url=cloud.url(name) + path, region_id=REGION)


def seed(cloud: Cloud) -> None:
    """Flavors, an image, an external network, a compute host ready for servers, and
    a demo project with a member user."""
    conn = admin_connection(cloud)
    for name, ram, vcpus, disk in (("m1.tiny", 64, 1, 1), ("m1.small", 128, 1, 2)):
        if not conn.compute.find_flavor(name):
            conn.compute.create_flavor(name=name, ram=ram, vcpus=vcpus, disk=disk)
    if not conn.image.find_image("hotplay-tiny"):
        image = conn.image.create_image(name="hotplay-tiny", disk_format="raw",
                                        container_format="bare", visibility="public",
                                        data=b"\0" * 1024)
        wait_until("the image", lambda: conn.image.get_image(image).status == "active", 60)
    public = conn.network.find_network("public")
    if not public:
        public = conn.network.create_network(name="public", is_router_external=True,
                                             provider_network_type="flat",
                                             provider_physical_network="public")
        conn.network.create_subnet(name="public-subnet", network_id=public.id,
                                   ip_version=4, cidr="172.24.4.0/24",
                                   gateway_ip="172.24.4.1", is_dhcp_enabled=False)
    project = conn.identity.find_project("demo") or conn.identity.create_project(
        name="demo", domain_id="default")
    user = conn.identity.find_user("demo") or conn.identity.create_user(
        name="demo", password=DEMO_PASSWORD, domain_id="default")
    conn.identity.assign_project_role_to_user(project, user, conn.identity.find_role("member"))
    # The tests run side by side in the demo project: its quotas must not make one
    # test's servers or volumes fail because another's exist at the time.
    conn.set_compute_quotas(project.id, instances=-1, cores=-1, ram=-1)
    conn.set_volume_quotas(project.id, volumes=-1, gigabytes=-1, snapshots=-1)
    conn.set_network_quotas(project.id, network=-1, subnet=-1, port=-1, router=-1,
                            floatingip=-1, security_group=-1, security_group_rule=-1)
    wait_until("the compute host in Nova",
               lambda: list(conn.compute.hypervisors()), timeout=120, every=1)


def write_clouds_yaml(cloud: Cloud) -> Path:
    auth = {"auth_url": cloud.url("keystone") + "/v3", "username": "admin",
            "password": ADMIN_PASSWORD, "project_name": "admin",
            "user_domain_name": "Default", "project_domain_name": "Default"}
    demo = {**auth, "username": "demo", "password": DEMO_PASSWORD, "project_name": "demo"}
    document = {"clouds": {name: {"auth": credentials, "region_name": REGION,
                                  "identity_api_version": 3}
                           for name, credentials in (("hotplay", auth), ("hotplay-demo", demo))}}
    path = cloud.root / "clouds.yaml"
    path.write_text(json.dumps(document, indent=2) + "\n")  # JSON is YAML
    return path


# --- the commands --------------------------------------------------------------------------

def start(cloud: Cloud) -> None:
    if cloud.running():
        raise CloudError(f"a cloud is running in {cloud.root}: stop it first")
    began = time.monotonic()
    clear_stopped(cloud)
    for directory in (cloud.etc, cloud.log, cloud.run, cloud.data / "locks"):
        directory.mkdir(parents=True, exist_ok=True)
    write_configs(cloud)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for future in [pool.submit(start_mariadb, cloud), pool.submit(start_rabbitmq, cloud)]:
            future.result()
    sync_databases(cloud)
    start_keystone(cloud)
    wait_for_api(cloud, "keystone")
    register_services(cloud)
    start_services(cloud)
    seed(cloud)
    path = write_clouds_yaml(cloud)
    print(f"cloud up in {time.monotonic() - began:.0f} s, {memory_mib(cloud):.0f} MiB "
          f"resident; OS_CLIENT_CONFIG_FILE={path} OS_CLOUD=hotplay")


def clear_stopped(cloud: Cloud) -> None:
    """A stopped cloud's databases, logs and settings go: the cloud is throwaway, and
    its services' first-start steps (Nova's cell mappings, Keystone's bootstrap) fail
    on the databases of the last one."""
    for folder in (cloud.data, cloud.etc, cloud.log, cloud.run):
        shutil.rmtree(folder, ignore_errors=True)
    (cloud.root / "clouds.yaml").unlink(missing_ok=True)


def stop(cloud: Cloud) -> None:
    """End every process group the cloud started; wait until none is left.  First, the
    CPU each service used (its process group's) goes to ``cpu-by-service.txt``: where a
    test run's cloud time went."""
    running = cloud.running()
    if running:
        (cloud.root / "cpu-by-service.txt").write_text(cpu_by_service(running))
    for pid in running.values():
        with_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while cloud.running() and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in cloud.running().values():
        with_group(pid, signal.SIGKILL)
    # epmd daemonizes out of RabbitMQ's group; ours listens on the cloud's own port.
    subprocess.run(["epmd", "-port", str(PORTS["epmd"]), "-kill"], capture_output=True,
                   env={**os.environ, "ERL_EPMD_PORT": str(PORTS["epmd"])}, check=False)
    for pid_file in cloud.run.glob("*.pid"):
        pid_file.unlink()


def with_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        pass


def cpu_by_service(groups: dict[str, int]) -> str:
    """User and system CPU seconds of each service's process group (its processes, and
    the children they waited for), most first, one line each."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = dict.fromkeys(groups.values(), 0)
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) in used:  # field 5 of stat: the process group
            used[int(fields[2])] += sum(int(value) for value in fields[11:15])  # utime..cstime
    by_name = sorted(((used[pid] / ticks, name) for name, pid in groups.items()), reverse=True)
    total = sum(seconds for seconds, _name in by_name)
    return "".join(f"{seconds:8.1f} s  {name}\n" for seconds, name in by_name) + f"{total:8.1f} s  all\n"


def memory_mib(cloud: Cloud) -> float:
    """The resident memory of every process in the cloud's process groups."""
    groups = set(cloud.running().values())
    total = 0
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) in groups:  # field 5 of stat: the process group
            total += int(fields[21]) * os.sysconf("SC_PAGE_SIZE")  # field 24: rss pages
    return total / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("start", "stop", "status"))
    parser.add_argument("dir", type=Path)
    args = parser.parse_args()
    cloud = Cloud(args.dir)
    try:
        if args.command == "start":
            try:
                start(cloud)
            except BaseException:
                stop(cloud)
                raise
        elif args.command == "stop":
            stop(cloud)
        else:
            alive = cloud.running()
            print(json.dumps({"running": sorted(alive), "memory_mib": round(memory_mib(cloud))}))
            return 0 if alive else 3
    except CloudError as error:
        print(f"cloud: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
