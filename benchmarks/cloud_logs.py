# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the test cloud's logs (tests/cloud/cloud.py, ``.build/cloud/log``) say about
one window of time: the requests each service answered, and the critical path of a
phase of the benchmark's stack (see bench_cloud.py's docstring for how it is read).

Two kinds of log are read, from where they stood when the window opened:

- the access logs ``NAME.access`` (gunicorn: ``[time] METHOD PATH STATUS SECONDS``,
  and, on a cloud started since the format grew them, the request's start as an
  epoch and the User-Agent): every request of every API, with its latency;
- the services' own logs (``nova.log``, ``nova-compute.log``, ``cinder.log``,
  ``cinder-volume.log``, ...; oslo.log lines with millisecond times and the
  request ids of their context): Nova's API logs each request with its id and
  latency, Cinder's API its start and end, and every line the request's work
  writes afterwards (a compute host building a server, Cinder completing an
  attachment, a volume created) carries the same request id.
"""

from __future__ import annotations

import calendar
import re
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ACCESS_SERVICES = ("keystone", "nova", "neutron", "cinder", "glance", "placement")
SERVICE_LOGS = ("nova.log", "nova-compute.log", "nova-conductor.log", "nova-scheduler.log",
                "cinder.log", "cinder-volume.log", "cinder-scheduler.log", "neutron.log")

ACCESS_LINE = re.compile(r"^\[[^\]]+\] (?P<method>[A-Z]+) (?P<path>\S*) (?P<status>\d{3}) (?P<seconds>[\d.]+)"
                         r"(?: (?P<began>[\d.]+|-))?(?: \"(?P<agent>[^\"]*)\")?")
# A GET of an API's root or of a version's root: the document a client reads to
# learn the API's versions (keystoneauth's discovery, a microversion negotiation).
DISCOVERY = re.compile(r"^/?(v\d+(\.\d+)?/?)?$")
PASSWORD_AUTH = ("POST", re.compile(r"^(/v3)?/auth/tokens/?$"))

OSLO_LINE = re.compile(r"^(?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?P<fraction>\.\d+) \d+ \w+ \S+ "
                       r"\[(?P<context>[^\]]*)\] (?P<message>.*)$")
REQUEST_ID = re.compile(r"req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NOVA_REQUEST = re.compile(r'"(?P<method>[A-Z]+) (?P<path>[^" ]+)" status: (?P<status>\d+) len: \d+ '
                          r"microversion: \S+ time: (?P<seconds>[\d.]+)")
CINDER_BEGIN = re.compile(r"^(?P<method>GET|POST|PUT|DELETE|PATCH) https?://[^/]+(?P<path>/\S*)$")
CINDER_END = re.compile(r"^https?://[^/]+(?P<path>/\S*) returned with HTTP (?P<status>\d+)")
INSTANCE = re.compile(r"\[instance: (?P<id>[0-9a-f-]{36})\]")
ATTACHING = re.compile(r"Attaching volume (?P<id>[0-9a-f-]{36})")
VOLUME_MADE = re.compile(r"\((?P<id>[0-9a-f-]{36})\): created successfully")
UUID = r"[0-9a-f-]{36}"


# -- the window ---------------------------------------------------------------------------------

class Window:
    """The logs' ends when the window opened; ``read()`` gives what was written since."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        names = [f"{service}.access" for service in ACCESS_SERVICES] + list(SERVICE_LOGS)
        self.marks = {name: _size(log_dir / name) for name in names}

    def read(self) -> WindowLogs:
        time.sleep(1.0)  # gunicorn writes a line after it answered, oslo.log after the work
        appended = {name: _lines_since(self.log_dir / name, mark) for name, mark in self.marks.items()}
        access = {service: [hit for line in appended[f"{service}.access"] if (hit := parse_access(line))]
                  for service in ACCESS_SERVICES}
        return WindowLogs(access, ServiceLogs.parse(line for name in SERVICE_LOGS for line in appended[name]))


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _lines_since(path: Path, mark: int) -> list[str]:
    if not path.exists():
        return []
    with open(path, "rb") as log:
        log.seek(mark)
        return log.read().decode(errors="replace").splitlines()


# -- the access logs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Access:
    method: str
    path: str
    status: int
    seconds: float
    agent: str = ""
    began: float | None = None  # the request's start (epoch), on a cloud whose logs show it


def parse_access(line: str) -> Access | None:
    found = ACCESS_LINE.match(line)
    if not found:
        return None
    began = float(found["began"]) if found["began"] not in (None, "-") else None
    return Access(found["method"], found["path"], int(found["status"]), float(found["seconds"]),
                  found["agent"] or "", began)


def is_discovery(hit: Access) -> bool:
    return hit.method == "GET" and bool(DISCOVERY.match(hit.path))


def is_password_auth(hit: Access) -> bool:
    """Keystone's ``POST /v3/auth/tokens``: a token for credentials.  The access log
    does not show the method in the body; clients that hold a token validate it with
    GET, so in a window the POSTs are the authentications (a service renewing its
    own token is one too: the bench warms the services up first)."""
    return hit.method == PASSWORD_AUTH[0] and bool(PASSWORD_AUTH[1].match(hit.path))


@dataclass
class Counts:
    """A window's requests: per service, and the password authentications."""
    calls: Counter[str] = field(default_factory=Counter)
    discoveries: Counter[str] = field(default_factory=Counter)
    password_auths: int = 0
    # Whether the requests were told apart by User-Agent (else: the whole cloud's).
    attributed: bool = False

    def line(self) -> str:
        services = ", ".join(f"{service} {self.calls[service]} ({self.discoveries[service]} disc.)"
                             for service in ACCESS_SERVICES if self.calls[service])
        whose = "its own requests" if self.attributed else "every request to the cloud in the window"
        return f"{self.password_auths} password auth(s); calls (version discoveries): {services} [{whose}]"


def count(access: dict[str, list[Access]], agent: str = "") -> Counts:
    """The requests of the window; with ``agent``, only those whose User-Agent holds it
    (on a cloud whose access logs show it)."""
    counts = Counts()
    for service, hits in access.items():
        for hit in hits:
            if agent and hit.agent:
                counts.attributed = True
                if agent not in hit.agent:
                    continue
            counts.calls[service] += 1
            counts.discoveries[service] += is_discovery(hit)
            counts.password_auths += service == "keystone" and is_password_auth(hit)
    return counts


# -- the services' own logs -----------------------------------------------------------------------

@dataclass(frozen=True)
class Request:
    """An API request as its service logged it: ``ident`` is its request id."""
    ident: str
    method: str
    path: str
    start: float
    end: float


@dataclass
class ServiceLogs:
    requests: list[Request]
    # Every line's time and message, by the request ids in its context.
    lines: dict[str, list[tuple[float, str]]]

    @classmethod
    def parse(cls, raw: Iterable[str]) -> ServiceLogs:
        lines: dict[str, list[tuple[float, str]]] = defaultdict(list)
        requests: list[Request] = []
        cinder_begun: dict[str, tuple[float, str, str]] = {}
        for text in raw:
            found = OSLO_LINE.match(text)
            if not found:
                continue
            when = calendar.timegm(time.strptime(found["when"], "%Y-%m-%d %H:%M:%S")) + float(found["fraction"])
            ids = REQUEST_ID.findall(found["context"])
            message = found["message"]
            for ident in ids:
                lines[ident].append((when, message))
            if not ids:
                continue
            own = ids[-1]  # oslo's context: [global-id local-id user ...]; the local id is the last
            if (nova := NOVA_REQUEST.search(message)) is not None:
                requests.append(Request(own, nova["method"], nova["path"], when - float(nova["seconds"]), when))
            elif (begin := CINDER_BEGIN.match(message)) is not None:
                cinder_begun[own] = (when, begin["method"], begin["path"])
            elif CINDER_END.match(message) and own in cinder_begun:
                start, method, path = cinder_begun.pop(own)
                requests.append(Request(own, method, path, start, when))
        return cls(requests, dict(lines))

    def work(self, request: Request) -> float:
        """From the request's start to the last line its work wrote in any service:
        an asynchronous request (a server's boot, an attachment) is done then."""
        last = max((when for when, _message in self.lines.get(request.ident, [])), default=request.end)
        return max(last, request.end) - request.start

    def mentioned(self, request: Request, pattern: re.Pattern[str]) -> str | None:
        """The first id ``pattern`` finds in the lines of the request's work."""
        for _when, message in self.lines.get(request.ident, []):
            if (found := pattern.search(message)) is not None:
                return found["id"]
        return None

    def matching(self, method: str, path: str) -> list[Request]:
        pattern = re.compile(path)
        return [request for request in self.requests if request.method == method and pattern.search(request.path)]


@dataclass
class WindowLogs:
    access: dict[str, list[Access]]
    service: ServiceLogs

    def latency(self, service: str, method: str, path: str) -> float:
        """The slowest of the window's ``method path`` requests to ``service`` (0 if
        none): Neutron logs no request ids, so its calls are not matched to a chain
        and each stands for the slowest of its kind."""
        return max((hit.seconds for hit in self.hits(service, method, path)), default=0.0)

    def hits(self, service: str, method: str, path: str) -> list[Access]:
        """The window's ``method path`` requests to ``service`` (``path``: a pattern)."""
        pattern = re.compile(path)
        return [hit for hit in self.access.get(service, []) if hit.method == method and pattern.match(hit.path)]


# -- critical paths ----------------------------------------------------------------------------

@dataclass(frozen=True)
class CriticalPath:
    seconds: float
    chains: int  # the servers whose chain was found in the logs
    detail: str


def _path_to(ident: str, suffix: str = "") -> str:
    return rf"/servers/{ident}{suffix}$"


def _server_requests(service: ServiceLogs, servers: set[str]) -> Iterator[tuple[Request, Request | None, Request]]:
    """Per server of ``servers`` whose boot and attachment are in the logs: its
    ``POST /servers``, its volume's ``POST /volumes`` (None if not found) and its
    attachment's ``POST``."""
    boots = {service.mentioned(request, INSTANCE): request for request in service.matching("POST", r"/servers$")}
    volumes = {service.mentioned(request, VOLUME_MADE): request for request in service.matching("POST", r"/volumes$")}
    for server in servers:
        boot = boots.get(server)
        attaches = service.matching("POST", _path_to(server, "/os-volume_attachments"))
        if boot is not None and attaches:
            yield boot, volumes.get(service.mentioned(attaches[0], ATTACHING) or ""), attaches[0]


def create_path(logs: WindowLogs, servers: set[str]) -> CriticalPath | None:
    """net -> subnet -> port -> server ACTIVE; the volume available; then the
    attachment in-use: the longest such chain among ``servers``."""
    service = logs.service
    network = (logs.latency("neutron", "POST", r"^(/v2\.0)?/networks$")
               + logs.latency("neutron", "POST", r"^(/v2\.0)?/subnets$"))
    port = logs.latency("neutron", "POST", r"^(/v2\.0)?/ports$")
    chains: list[tuple[float, str]] = []
    for boot, volume, attach in _server_requests(service, servers):
        made = service.work(volume) if volume else 0.0
        boot_seconds, attach_seconds = service.work(boot), service.work(attach)
        before_attach = max(network + port + boot_seconds, made)
        chains.append((before_attach + attach_seconds,
                       f"net+subnet {network:.2f} + port {port:.2f} + server ACTIVE {boot_seconds:.2f} "
                       f"(volume available {made:.2f}) + attachment in-use {attach_seconds:.2f}"))
    return _longest(chains)


@dataclass(frozen=True)
class Timeline:
    """Where a create's time went beyond the cloud's work, in seconds after the
    phase began (wall clock, as the services log it)."""

    first_request: float  # the first Nova or Cinder request of the run
    boot: float  # the chain that ended last: its POST /servers
    active: float  # its server ACTIVE
    ready: float  # its server ACTIVE and its volume available
    attach: float  # its attachment's POST
    in_use: float  # its attachment in-use
    ended: float  # the phase's end
    reactions: list[float]  # per chain: from ACTIVE and available to the attachment's POST

    def line(self) -> str:
        return (f"first request at {self.first_request:.1f} s; the last chain to end: POST /servers at "
                f"{self.boot:.1f}, ACTIVE at {self.active:.1f}, volume and server ready at {self.ready:.1f}, "
                f"attachment POST at {self.attach:.1f}, in-use at {self.in_use:.1f}; the run ended "
                f"{self.ended - self.in_use:.1f} s later, at {self.ended:.1f}.  From ready to the attachment's "
                f"POST: {_spread(self.reactions)}")


def _spread(seconds: list[float]) -> str:
    """Per-chain waits, summed up."""
    return (f"median {statistics.median(seconds):.2f} s, longest {max(seconds):.2f} s over "
            f"{len(seconds)} chains")


def create_timeline(logs: WindowLogs, servers: set[str], began: float, ended: float) -> Timeline | None:
    """The create's timeline (``began``, ``ended``: the phase's wall-clock times):
    how long the run took to send its first request, to react to each server
    ACTIVE with its attachment, and to end after the last attachment."""
    service = logs.service
    chains: list[tuple[float, float, float, float, float]] = []
    for boot, volume, attach in _server_requests(service, servers):
        active = boot.start + service.work(boot)
        ready = max(active, volume.start + service.work(volume) if volume else 0.0)
        chains.append((attach.start + service.work(attach), boot.start, active, ready, attach.start))
    if not chains or not service.requests:
        return None
    in_use, boot_start, active, ready, attach_start = max(chains)
    first = min(request.start for request in service.requests)
    return Timeline(first - began, boot_start - began, active - began, ready - began, attach_start - began,
                    in_use - began, ended - began, [chain[4] - chain[3] for chain in chains])


@dataclass(frozen=True)
class UpdateTimeline:
    """Where an update's time went, in seconds after the phase began: the run's
    password authentication, its metadata calls, and its end."""

    auth: tuple[float, float] | None  # Keystone's POST /v3/auth/tokens: start, end
    first_call: float  # the first metadata call's start
    last_answer: float  # the last metadata call's end
    ended: float

    def line(self) -> str:
        auth = (f"authentication from {self.auth[0]:.2f} to {self.auth[1]:.2f} s; " if self.auth else "")
        return (f"{auth}first metadata call at {self.first_call:.2f} s, the last answered at "
                f"{self.last_answer:.2f} s; the run ended at {self.ended:.2f} s")


def update_timeline(logs: WindowLogs, servers: set[str], began: float, ended: float,
                    agent: str = "") -> UpdateTimeline | None:
    """The update's timeline (``began``, ``ended``: the phase's wall-clock times)."""
    calls = [request for server in servers for method in ("POST", "PUT")
             for request in logs.service.matching(method, _path_to(server, "/metadata"))]
    if not calls:
        return None
    auth = next(((hit.began - began, hit.began + hit.seconds - began) for hit in logs.access.get("keystone", [])
                 if is_password_auth(hit) and hit.began is not None and agent in hit.agent), None)
    return UpdateTimeline(auth, min(call.start for call in calls) - began,
                          max(call.end for call in calls) - began, ended - began)


def update_path(logs: WindowLogs, servers: set[str]) -> CriticalPath | None:
    """One metadata call per server, all at once: the slowest."""
    chains = [(logs.service.work(request), f"metadata call {logs.service.work(request):.2f}")
              for server in servers for method in ("POST", "PUT")
              for request in logs.service.matching(method, _path_to(server, "/metadata"))]
    return _longest(chains)


def delete_path(logs: WindowLogs, servers: set[str]) -> CriticalPath | None:
    """Detach -> (server gone -> port deleted | volume deleted) -> subnet -> net."""
    service = logs.service
    port = logs.latency("neutron", "DELETE", rf"^(/v2\.0)?/ports/{UUID}$")
    network = (logs.latency("neutron", "DELETE", rf"^(/v2\.0)?/subnets/{UUID}$")
               + logs.latency("neutron", "DELETE", rf"^(/v2\.0)?/networks/{UUID}$"))
    volume_deletes = {request.path.rsplit("/", 1)[-1]: request
                      for request in service.matching("DELETE", rf"/volumes/{UUID}$")}
    chains: list[tuple[float, str]] = []
    for server in servers:
        detaches = service.matching("DELETE", _path_to(server, rf"/os-volume_attachments/{UUID}"))
        deletes = service.matching("DELETE", _path_to(server))
        if not detaches or not deletes:
            continue
        volume = volume_deletes.get(detaches[0].path.rsplit("/", 1)[-1])
        detach, gone = service.work(detaches[0]), service.work(deletes[0])
        volume_gone = service.work(volume) if volume else 0.0
        chains.append((detach + max(gone + port, volume_gone) + network,
                       f"detach {detach:.2f} + server gone {gone:.2f} + port {port:.2f} "
                       f"(volume gone {volume_gone:.2f}) + subnet+net {network:.2f}"))
    return _longest(chains)


@dataclass(frozen=True)
class DeleteTimeline:
    """Where a delete's time went, in seconds after the phase began: the chain of
    the server gone last, and Neutron's deletes after it."""

    first_request: float  # the first Nova or Cinder request of the run
    detach: float  # the last chain: its detach's DELETE
    detached: float  # the detach done (its last line)
    delete: float  # its server's DELETE
    gone: float  # the server gone (its last line)
    last_port: float  # the start of the last port DELETE (Neutron's access log)
    network: float  # the network's DELETE answered
    ended: float
    reactions: list[float]  # per chain: from detached to the server's DELETE

    def line(self) -> str:
        return (f"first request at {self.first_request:.1f} s; the server gone last: detach at {self.detach:.1f}, "
                f"detached at {self.detached:.1f}, DELETE at {self.delete:.1f}, gone at {self.gone:.1f}; the last "
                f"port DELETE at {self.last_port:.1f}, the network's answered at {self.network:.1f}; the run ended "
                f"at {self.ended:.1f}.  From detached to the server's DELETE: {_spread(self.reactions)}")


def delete_timeline(logs: WindowLogs, servers: set[str], began: float, ended: float) -> DeleteTimeline | None:
    """The delete's timeline (``began``, ``ended``: the phase's wall-clock times)."""
    service = logs.service
    chains: list[tuple[float, float, float, float]] = []
    for server in servers:
        detaches = service.matching("DELETE", _path_to(server, rf"/os-volume_attachments/{UUID}"))
        deletes = service.matching("DELETE", _path_to(server))
        if detaches and deletes:
            asked, removed = detaches[0], deletes[0]
            chains.append((removed.start + service.work(removed), asked.start,
                           asked.start + service.work(asked), removed.start))
    ports = [hit.began for hit in logs.hits("neutron", "DELETE", rf"^(/v2\.0)?/ports/{UUID}$")
             if hit.began is not None]
    networks = [hit.began + hit.seconds for hit in logs.hits("neutron", "DELETE", rf"^(/v2\.0)?/networks/{UUID}$")
                if hit.began is not None]
    if not chains or not ports or not networks or not service.requests:
        return None
    gone, detach, detached, delete = max(chains)
    first = min(request.start for request in service.requests)
    return DeleteTimeline(first - began, detach - began, detached - began, delete - began, gone - began,
                          max(ports) - began, max(networks) - began, ended - began,
                          [chain[3] - chain[2] for chain in chains])


def _longest(chains: list[tuple[float, str]]) -> CriticalPath | None:
    if not chains:
        return None
    seconds, detail = max(chains)
    return CriticalPath(seconds, len(chains), detail)


CRITICAL_PATHS = {"create": create_path, "update": update_path, "delete": delete_path}


def booted(service: ServiceLogs) -> set[str]:
    """The servers whose ``POST /servers`` is in the window."""
    return {ident for request in service.matching("POST", r"/servers$")
            if (ident := service.mentioned(request, INSTANCE)) is not None}
