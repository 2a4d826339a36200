# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run's session with its cloud: one openstacksdk ``Connection`` per cloud per
run, shared by every resource of the run (nested stacks included).

- **Created when first used.** A stack with no OpenStack type never imports
  openstacksdk, so the collection runs without it.
- **One password authentication per run.** The connection authenticates once,
  under the session's lock, before any thread uses it; from then on keystoneauth's
  identity plugin holds the token and hands it to every thread (its own lock makes
  a concurrent renewal happen once), and fetches a new one two minutes before it
  expires, so a long run never uses an expired token.  The token lives in that
  plugin only: it is never returned, recorded or shown.
- **A bound on calls in flight.** Every API call of the run goes through
  ``request``, which holds one of its service's ``MAX_IN_FLIGHT`` slots: a stack of
  hundreds of resources does not send hundreds of requests at once to one cloud.
  The bound is per service because each service has API workers of its own: one
  bound for the cloud let eight slow calls to one service (Nova's volume
  attachments take seconds while servers boot) hold up every other service's calls
  and every status poll, each a step of some chain of the stack.
- **A time limit on every call.** Each call (the authentication and the endpoint
  discovery too) waits at most ``api_timeout`` seconds to connect and between two
  reads of the answer: clouds.yaml's own setting of the cloud, ``DEFAULT_API_TIMEOUT``
  when it has none.  A run with a time limit (the stack's ``timeout``) also ends each
  call when the limit is reached, and a cancelled run (time-out, SIGTERM, its
  controller gone) sends no further call: an endpoint that accepts connections and
  never answers cannot hold the run, nor the stack's lock, past them.
- **Answers in the API's own shapes.** ``request`` returns the JSON the service
  answered (Neutron's ``{"network": {...}}``), which is what Heat's attributes
  show; an error answer raises ``CloudFailure`` with the service's message.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from ...errors import ResourceFailure, printable
from ..runtime import Cancelled
from .poller import IDS_PER_CALL, Lister, Poller

T = TypeVar("T")

# The application openstacksdk names first in every request's User-Agent.
APP_NAME = "hotplay.stacks"

# How many API calls of one run may be in flight to one service of a cloud at once.
MAX_IN_FLIGHT = 8

# Seconds a call waits to connect, and between two reads of its answer, when the
# cloud's clouds.yaml entry sets no ``api_timeout``: a call that legitimately takes
# longer has no place in the APIs these types use (their long work is asynchronous).
DEFAULT_API_TIMEOUT = 60.0

# The exception class names Heat's status reasons carry for HTTP answers (the
# names of neutronclient's and keystoneauth's exceptions).
_ERROR_TYPES = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
                409: "Conflict", 413: "OverQuota", 500: "InternalServerError",
                503: "ServiceUnavailable"}


class Cancellation(Protocol):
    """A run's cancellation (run.executor.Cancel): set, with its reason."""

    event: threading.Event
    reason: str

    def trigger(self, reason: str) -> None: ...


class CloudFailure(ResourceFailure):
    """An API call the cloud refused or failed; ``status`` is its HTTP status (0 when
    the cloud could not be reached or configured)."""

    def __init__(self, message: str, status: int = 0, request_id: str = "") -> None:
        super().__init__(message, _ERROR_TYPES.get(status, "ClientException"))
        self.status = status
        self.request_id = request_id  # the service's id of the request, when it answered

    def client_text(self) -> str:
        """The failure as the services' Python clients print it (novaclient's
        ``<message> (HTTP <status>) (Request-ID: <id>)``), which Heat's texts carry."""
        if not self.status:
            return self.message
        text = f"{self.message} (HTTP {self.status})"
        return f"{text} (Request-ID: {self.request_id})" if self.request_id else text

    @property
    def not_found(self) -> bool:
        return self.status == 404


class CloudSession:
    """The run's cloud: ``cloud`` names a clouds.yaml entry; None means openstacksdk's
    own choice (``OS_CLOUD``, or the ``OS_*`` variables)."""

    def __init__(self, cloud: str | None = None, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self.cloud = cloud
        self._lock = threading.Lock()
        self._connection: Any = None
        self._proxies: dict[str, Any] = {}
        self._max_in_flight = max_in_flight
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._pollers: dict[str, Poller] = {}
        # Lookups already made (custom constraints, RESOLVE rules, a project's
        # security groups): Heat memoizes these too; a run asks about one value once,
        # however many resources ask at the same moment.
        self._remembered: dict[tuple[str, ...], Any] = {}
        self._remembering: dict[tuple[str, ...], threading.Lock] = {}
        # What the run asked of the cloud, by "METHOD service": the figures a
        # benchmark reports (and tests check).
        self.calls: Counter[str] = Counter()
        self._api_timeout = DEFAULT_API_TIMEOUT
        # The run's time limit (time.monotonic()) and its cancellation.
        self._deadline: float | None = None
        self._cancel: Cancellation | None = None

    # -- the run's limits --------------------------------------------------------------
    def limit(self, seconds: float, cancel: Cancellation | None = None) -> None:
        """Calls end ``seconds`` from now (0: no limit, as for the rollback after a
        time-out), and none is sent while ``cancel`` is set.  Before the run (its
        validation, no ``cancel`` yet), a call the limit ends fails as a refused
        login does; in the run, it ends as Heat's "Timed out"."""
        self._deadline = time.monotonic() + seconds if seconds > 0 else None
        if cancel is not None:
            self._cancel = cancel

    def _time_left(self) -> float:
        """How long the next call may wait; raises ``Cancelled`` when the run was
        cancelled or its time is up."""
        if self._cancel is not None and self._cancel.event.is_set():
            raise Cancelled(self._cancel.reason or "Cancelled")
        if self._deadline is None:
            return self._api_timeout
        left = self._deadline - time.monotonic()
        if left <= 0:
            if self._cancel is None:  # before the run (its validation): nothing is recorded
                raise CloudFailure("no answer within the task's timeout")
            self._cancel.trigger("Timed out")  # the run's timer may be a moment behind
            raise Cancelled("Timed out")
        return min(self._api_timeout, left)

    # -- the connection ------------------------------------------------------------------
    @property
    def used(self) -> bool:
        """Whether the run reached its cloud at all."""
        return self._connection is not None

    def _connect(self) -> Any:
        """The connection, made and authenticated once (callers hold the lock)."""
        if self._connection is None:
            try:
                # Imported here: only stacks with OpenStack types need openstacksdk.
                import openstack  # pylint: disable=import-outside-toplevel
            except ImportError:
                raise CloudFailure("OpenStack resource types need the Python package openstacksdk "
                                   "on the controller (pip install openstacksdk)") from None
            try:
                # The User-Agent names hotplay: a cloud's logs tell its requests apart.
                region = openstack.config.get_cloud_region(cloud=self.cloud, app_name=APP_NAME)
                self._api_timeout = float(region.config.get("api_timeout") or DEFAULT_API_TIMEOUT)
                # The session's own limit (the authentication's, the discovery's, a
                # token's renewal's) is this run's first call's.
                region.config["api_timeout"] = self._time_left()
                connection = openstack.connection.Connection(config=region)
                # The one password authentication of the run, before any thread can
                # race to it; keystoneauth keeps (and renews) the token from here.
                self._timed(connection.authorize)
            except Cancelled:
                raise
            except Exception as failure:  # noqa: BLE001 - config and auth errors vary
                # The cloud's name comes from the task or clouds.yaml: escaped, as
                # openstacksdk's own words may repeat it.
                raise CloudFailure(printable(f"cloud {self.cloud or '(OS_* variables)'}: "
                                             f"{_without_secrets(failure)}")) from None
            self._connection = connection
        return self._connection

    def _timed(self, call: Callable[[], T]) -> T:
        """``call()`` (a call of the session's own: the authentication, a discovery);
        its failure once the run's time is up is the run's time-out."""
        self._time_left()
        try:
            return call()
        except Exception:
            self._time_left()
            raise

    def login(self) -> None:
        """Connect and authenticate now, if the session has not yet."""
        with self._lock:
            self._connect()

    @property
    def project_id(self) -> str:
        """The project the session is scoped to (Heat's ``context.project_id``)."""
        with self._lock:
            return str(self._connect().current_project_id)

    def _proxy(self, service: str) -> tuple[Any, threading.BoundedSemaphore]:
        """openstacksdk's proxy of ``service`` (``network``, ``compute``, ...) and
        the service's slots: its endpoint and version are discovered once per run,
        under the lock, so threads do not each discover it."""
        with self._lock:
            proxy = self._proxies.get(service)
            if proxy is None:
                proxy = getattr(self._connect(), service)
                # Discovery now, while the lock is held; keystoneauth's own method:
                # the identity proxy's get_endpoint is another (it shows the catalog).
                self._timed(lambda: _discovered_endpoint(proxy))
                self._proxies[service] = proxy
            slots = self._slots.get(service)
            if slots is None:
                slots = self._slots[service] = threading.BoundedSemaphore(self._max_in_flight)
            return proxy, slots

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
            self._connection, self._proxies, self._slots = None, {}, {}

    def remember(self, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """``compute()``, once per run for ``key``: the first caller computes, those
        that ask meanwhile wait for its answer.  A failure is not remembered (the
        thing may be made before the next ask)."""
        with self._lock:
            if key in self._remembered:
                value: T = self._remembered[key]
                return value
            lock = self._remembering.setdefault(key, threading.Lock())
        with lock:
            if key not in self._remembered:
                self._remembered[key] = compute()
            value = self._remembered[key]
            return value

    def poller(self, kind: str, lister: Lister, ids_per_call: int | None = IDS_PER_CALL) -> Poller:
        """The shared polls of ``kind`` (``network:networks``): one per run.
        ``ids_per_call``: see ``Poller``."""
        with self._lock:
            poller = self._pollers.get(kind)
            if poller is None:
                poller = self._pollers[kind] = Poller(lister, ids_per_call=ids_per_call)
            return poller

    # -- calls ------------------------------------------------------------------------------
    def request(self, service: str, method: str, path: str, body: Mapping[str, Any] | list[Any] | None = None,
                params: Mapping[str, Any] | list[tuple[str, str]] | None = None,
                microversion: str | None = None, content_type: str | None = None) -> Any:
        """One API call: the JSON answered (None for an empty answer); raises
        ``CloudFailure`` with the service's message for an error answer.
        ``microversion``: the API microversion asked for (Nova's, Cinder's), per
        call, so one type's choice never changes another's answers.
        ``content_type``: the body's, when the API wants another than JSON's for a
        JSON body (Glance's image update takes a JSON patch only as
        ``application/openstack-images-v2.1-json-patch``)."""
        proxy, slots = self._proxy(service)
        extra: dict[str, Any] = {"microversion": microversion} if microversion else {}
        if content_type:
            # keystoneauth sets application/json for a JSON body only when none is given.
            extra["headers"] = {"Content-Type": content_type}
        with slots:
            self.calls[f"{method} {service}"] += 1
            try:
                response = proxy.request(path, method, json=body, params=params, raise_exc=False,
                                         timeout=self._time_left(), **extra)
            except Cancelled:
                raise
            except Exception as failure:  # noqa: BLE001 - keystoneauth's connection errors
                self._time_left()  # the run's time ran out during the call: Heat's "Timed out"
                raise CloudFailure(f"{method} {path}: {_without_secrets(failure)}") from None
        if response.status_code >= 400:
            headers = getattr(response, "headers", None) or {}
            request_id = headers.get("x-openstack-request-id") or headers.get("x-compute-request-id") or ""
            raise CloudFailure(_error_message(response), response.status_code, str(request_id))
        if not response.content:
            return None
        return response.json()

    def object_request(self, method: str, path: str, headers: Mapping[str, str] | None = None,
                       data: bytes | None = None, params: Mapping[str, str] | None = None) -> ObjectAnswer:
        """One call to the object store (Swift), whose bodies are bytes and whose
        metadata are headers: ``path`` is below the account's URL (``/container``,
        ``/container/object``; ``""`` is the account).  Raises ``CloudFailure`` for an
        error answer, as ``request`` does."""
        proxy, slots = self._proxy("object_store")
        with slots:
            self.calls[f"{method} object_store"] += 1
            try:
                response = proxy.request(path or "/", method, headers=dict(headers or {}), data=data,
                                         params=params, raise_exc=False, timeout=self._time_left())
            except Cancelled:
                raise
            except Exception as failure:  # noqa: BLE001 - keystoneauth's connection errors
                self._time_left()
                raise CloudFailure(f"{method} {path}: {_without_secrets(failure)}") from None
        if response.status_code >= 400:
            request_id = (getattr(response, "headers", None) or {}).get("x-openstack-request-id") or ""
            message = (response.text or "").strip() or str(response.reason or f"HTTP {response.status_code}")
            raise CloudFailure(message, response.status_code, str(request_id))
        return ObjectAnswer(response.status_code, {k.lower(): v for k, v in response.headers.items()},
                            bytes(response.content or b""))

    def endpoint(self, service: str) -> str:
        """The URL of ``service`` (``object_store``: the project's account) as the
        catalog gives it to this session."""
        proxy, _slots = self._proxy(service)
        return str(self._timed(lambda: _discovered_endpoint(proxy))).rstrip("/")

    def identity_names(self) -> tuple[str, str]:
        """(project name, user name) of the session's login (Heat's context's
        ``project_name`` and ``username``)."""
        with self._lock:
            connection = self._connect()
        access = self._timed(lambda: connection.session.auth.get_access(connection.session))
        return str(access.project_name), str(access.username)

    def has_service(self, service_type: str) -> bool:
        """Whether the cloud's catalog has ``service_type`` (``object-store``) for
        this session."""
        with self._lock:
            connection = self._connect()
        return bool(self.remember(("has_service", service_type),
                                  lambda: self._timed(lambda: connection.has_service(service_type))))


def _discovered_endpoint(proxy: Any) -> Any:
    """keystoneauth's endpoint of an openstacksdk proxy (discovered, then cached by the
    proxy).  Its own method: the identity proxy's ``get_endpoint`` is another one."""
    from keystoneauth1.adapter import Adapter  # pylint: disable=import-outside-toplevel  # with openstacksdk

    return Adapter.get_endpoint(proxy) if isinstance(proxy, Adapter) else proxy.get_endpoint()


class ObjectAnswer:
    """The object store's answer: status, headers (lower-case names), body."""

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, dict(headers), body

    def json(self) -> Any:
        return json.loads(self.body.decode() or "null")


def _error_message(response: Any) -> str:
    """The message of an error answer as the services word it: Neutron's
    ``{"NeutronError": {"message": ...}}``, Nova's ``{"badRequest": {"message": ...}}``,
    Cinder's and Glance's variants."""
    try:
        document = response.json()
    except ValueError:
        return str(response.text).strip() or str(response.reason)
    if isinstance(document, Mapping):
        for value in document.values():
            if isinstance(value, Mapping) and "message" in value:
                return str(value["message"])
            if isinstance(value, str):
                return value
    return str(response.reason or f"HTTP {response.status_code}")


# A URL's user information (``https://user:password@host``): a clouds.yaml's
# ``auth_url`` may carry a password there, and keystoneauth's errors name the URL.
_URL_USERINFO = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#@\s]*@")


def _without_secrets(failure: BaseException) -> str:
    """An error's text; keystoneauth's errors name URLs and users, never passwords or
    tokens, but a request's repr could: only the message is kept, and a URL's user
    information is hidden."""
    text = str(getattr(failure, "message", None) or failure)
    text = text.splitlines()[0] if text else type(failure).__name__
    return _URL_USERINFO.sub(r"\1******@", text)
