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
- **Answers in the API's own shapes.** ``request`` returns the JSON the service
  answered (Neutron's ``{"network": {...}}``), which is what Heat's attributes
  show; an error answer raises ``CloudFailure`` with the service's message.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ...errors import ResourceFailure, printable
from .poller import IDS_PER_CALL, Lister, Poller

T = TypeVar("T")

# The application openstacksdk names first in every request's User-Agent.
APP_NAME = "hotplay.stacks"

# How many API calls of one run may be in flight to one service of a cloud at once.
MAX_IN_FLIGHT = 8

# The exception class names Heat's status reasons carry for HTTP answers (the
# names of neutronclient's and keystoneauth's exceptions).
_ERROR_TYPES = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
                409: "Conflict", 413: "OverQuota", 500: "InternalServerError",
                503: "ServiceUnavailable"}


class CloudFailure(ResourceFailure):
    """An API call the cloud refused or failed; ``status`` is its HTTP status (0 when
    the cloud could not be reached or configured)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message, _ERROR_TYPES.get(status, "ClientException"))
        self.status = status

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
                connection = openstack.connect(cloud=self.cloud, app_name=APP_NAME)
                # The one password authentication of the run, before any thread can
                # race to it; keystoneauth keeps (and renews) the token from here.
                connection.authorize()
            except Exception as failure:  # noqa: BLE001 - config and auth errors vary
                # The cloud's name comes from the task or clouds.yaml: escaped, as
                # openstacksdk's own words may repeat it.
                raise CloudFailure(printable(f"cloud {self.cloud or '(OS_* variables)'}: "
                                             f"{_without_secrets(failure)}")) from None
            self._connection = connection
        return self._connection

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
                proxy.get_endpoint()  # discovery now, while the lock is held
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
                                         **extra)
            except Exception as failure:  # noqa: BLE001 - keystoneauth's connection errors
                raise CloudFailure(f"{method} {path}: {_without_secrets(failure)}") from None
        if response.status_code >= 400:
            raise CloudFailure(_error_message(response), response.status_code)
        if not response.content:
            return None
        return response.json()


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
