# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's wait conditions: ``OS::Heat::WaitConditionHandle``,
``OS::Heat::UpdateWaitConditionHandle``, ``OS::Heat::WaitCondition`` and the CFN forms
``AWS::CloudFormation::WaitConditionHandle`` and ``AWS::CloudFormation::WaitCondition``.

Schemas, defaults, signal formats and messages are Heat 27's
(``heat/engine/resources/wait_condition.py``, ``openstack/heat/wait_condition{,_handle}.py``,
``aws/cfn/wait_condition{,_handle}.py``).  Heat keeps a handle's signals in the handle's
metadata, merged by their unique id; here they are rows of the store's ``signals`` table,
appended by ``hotplay.stacks.stack_signal`` (operations/signal.py) without the stack's
lease (the run that holds it may be the one waiting for them) and merged the same way,
in the order they came, when read.

There is no Heat API to signal: a handle's ``curl_cli``, ``endpoint`` and ``token`` are
null and its ``signal`` is ``null`` (Heat's value for the transports it gives no
credentials for); ``NO_SIGNAL`` signals itself at each look, as Heat's does.
``TEMP_URL_SIGNAL`` is Heat's, on the stack's cloud's Swift: the handle's ``signal``
is ``{"alarm_url": <a Swift temporary URL>}``, the sender PUTs its signal there, and
the waiting run takes each signal object from Swift into the handle's signals (and
deletes it, as Heat's ``_service_swift_signal``), then merges them as any other.
``TOKEN_SIGNAL`` (Heat's default, for its API) goes through Swift the same way when
the task names a cloud whose catalog has Swift: ``endpoint`` is the temporary URL,
``curl_cli`` a PUT to it, ``token`` empty, so that a template's servers that run
``curl_cli`` signal unchanged.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..errors import ResourceFailure
from ..store.base import SignalRecord, Store
from .base import AttributeSchema, Outcome, PropertySchema, Resource, ResourceState, register, resource_class
from .properties import allowed_values, value_range

SUCCESS, FAILURE = "SUCCESS", "FAILURE"
SIGNAL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL",
                     "ZAQAR_SIGNAL", "TOKEN_SIGNAL")
# How often a waiting wait condition reads its handle's signals (Heat checks a
# creating resource with a growing interval; the store is cheap to read).
POLL_SECONDS = 0.5
# Heat's resource data of a TEMP_URL_SIGNAL handle: its signal object and URL.
SWIFT_OBJECT, SWIFT_URL = "swift_signal_object_name", "swift_signal_url"


class SignalRefused(ResourceFailure):
    """A signal the resource does not take (Heat's error, nothing recorded)."""


class WaitConditionHandleBase(Resource):
    """What the three handles share: a uuid for physical id (Heat: the stack user's id),
    and the signals, merged by unique id as Heat's ``handle_signal`` merges them."""

    is_wait_condition_handle: ClassVar[bool] = True
    # Heat's OS form fills in what a signal leaves out; the CFN form takes it as sent
    # and an empty signal changes nothing.
    fills_defaults: ClassVar[bool] = False
    adoptable = True  # Heat's abandon data holds its signals as the handle's metadata
    # The keys of a signal, in Heat's names for this form: data, reason, status, id.
    signal_keys: ClassVar[tuple[str, str, str, str]] = ("data", "reason", "status", "id")

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        return Outcome(str(uuid.uuid4()))

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        """Heat's id kept, and the signals its metadata holds, each under its id."""
        for unique_id, entry in (adopted.metadata or {}).items():
            body = {**entry, self.signal_keys[3]: unique_id} if isinstance(entry, Mapping) else entry
            self.checked(body, {})  # what Heat held passed its check: anything else is refused
            self.runtime.store.add_signal(self.runtime.stack_id, self.name, adopted.resource_id, body)
        return Outcome(adopted.resource_id)

    @classmethod
    def exported_metadata(cls, store: Store, stack_id: str, state: ResourceState) -> dict[str, Any]:
        """Heat's abandon data keeps a handle's signals as its metadata, merged by id."""
        if not state.physical_id:
            return {}
        return cls.merged(store.signals(stack_id, state.name, state.physical_id))

    def handle_delete(self, current: ResourceState) -> None:
        if current.physical_id:
            self.runtime.store.delete_signals(self.runtime.stack_id, self.name, current.physical_id)

    # -- signals -------------------------------------------------------------------
    @classmethod
    def normalised(cls, body: Any, merged: Mapping[str, Any]) -> Any:
        """The signal as Heat validates it (the CFN handle takes it as sent)."""
        return body

    @classmethod
    def checked(cls, body: Any, merged: Mapping[str, Any]) -> dict[str, Any] | None:
        """The signal ready to merge, None when it changes nothing (a CFN handle's
        empty signal); SignalRefused when Heat's format check fails."""
        if body is None and not cls.fills_defaults:
            return None
        signal = cls.normalised(body, merged)
        if not isinstance(signal, Mapping) or set(signal) != set(cls.signal_keys) \
                or signal[cls.signal_keys[2]] not in (SUCCESS, FAILURE):
            raise SignalRefused("Metadata format invalid", "ValueError")
        return dict(signal)

    @classmethod
    def merged(cls, records: Sequence[SignalRecord]) -> dict[str, dict[str, Any]]:
        """The handle's metadata as Heat would hold it after these signals: each
        under its unique id (a later one with the same id overwrites it)."""
        merged: dict[str, dict[str, Any]] = {}
        for record in records:
            try:
                signal = cls.checked(record.body, merged)
            except SignalRefused:
                continue  # refused when sent: never recorded, but stay safe on old rows
            if signal is not None:
                entry = dict(signal)
                merged[str(entry.pop(cls.signal_keys[3]))] = entry
        return merged

    @classmethod
    def signal_reason(cls, signal: Mapping[str, Any] | None) -> str:
        """The reason of the handle's SIGNAL event, in Heat's words."""
        if signal is None:
            return "No signal details provided"
        return f"Signal: status:{signal[cls.signal_keys[2]]} reason:{signal[cls.signal_keys[1]]}"

    def statuses(self, merged: Mapping[str, Mapping[str, Any]]) -> list[str]:
        return [entry[self.signal_keys[2]] for entry in merged.values()]

    def reasons(self, merged: Mapping[str, Mapping[str, Any]], status: str) -> list[str]:
        return [str(entry[self.signal_keys[1]]) for entry in merged.values()
                if entry[self.signal_keys[2]] == status]

    def signals_itself(self, state: ResourceState) -> bool:
        """NO_SIGNAL: each look at the handle's status signals it once (Heat)."""
        return False

    def take_signals(self, state: ResourceState) -> None:
        """Before each look at the handle's signals: take in those its transport
        holds elsewhere (Swift's, for TEMP_URL_SIGNAL).  Default: none."""


@register
class HeatWaitConditionHandle(WaitConditionHandleBase):
    """OS::Heat::WaitConditionHandle: signals ``{status, reason, data, id}``, each key
    optional (Heat fills ``SUCCESS``, ``Signal N received``, null and N)."""

    type_name = "OS::Heat::WaitConditionHandle"
    properties_schema = {
        "signal_transport": PropertySchema(
            "string", "How the client will signal the wait condition.",
            default="TOKEN_SIGNAL", constraints=(allowed_values(*SIGNAL_TRANSPORTS),)),
    }
    attributes_schema = {
        "token": AttributeSchema("Token for stack-user which can be used for signalling handle "
                                 "when signal_transport is set to TOKEN_SIGNAL.", type="string"),
        "endpoint": AttributeSchema("Endpoint/url which can be used for signalling handle when "
                                    "signal_transport is set to TOKEN_SIGNAL.", type="string"),
        "curl_cli": AttributeSchema("Convenience attribute, provides curl CLI command prefix, which "
                                    "can be used for signalling handle completion or failure.",
                                    type="string"),
        "signal": AttributeSchema("JSON serialized map that includes the endpoint, token and/or "
                                  "other attributes the client must use for signalling this handle.",
                                  type="string"),
    }

    fills_defaults = True

    @classmethod
    def normalised(cls, body: Any, merged: Mapping[str, Any]) -> Any:
        if body and not isinstance(body, Mapping):
            return body  # not a map: the format check refuses it
        number = len(merged) + 1
        signal = dict(body or {})
        signal.setdefault("reason", f"Signal {number} received")
        signal.setdefault("data", None)
        signal.setdefault("id", number)
        signal.setdefault("status", SUCCESS)
        return signal

    def signals_itself(self, state: ResourceState) -> bool:
        return state.properties.get("signal_transport") == "NO_SIGNAL"

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        made = super().handle_create(properties)
        if not self._through_swift(properties):
            return made
        # Heat's object: the handle's physical resource name, in the container named
        # by the stack's id; noted before it is made, for a killed run's successor.
        obj = self.runtime.physical_name(self.name)
        self.runtime.note_data(self.name, SWIFT_OBJECT, obj)
        url = self._swift().signal_url(self.runtime.cloud, self.runtime.stack_id, obj)
        return Outcome(made.physical_id, {SWIFT_OBJECT: obj, SWIFT_URL: url})

    def handle_delete(self, current: ResourceState) -> None:
        """Heat's ``_delete_swift_signal_url`` too: every version of the signal
        object, then the container when nothing is left in it."""
        super().handle_delete(current)
        obj = current.data.get(SWIFT_OBJECT)
        if obj:
            swift, cloud, container = self._swift(), self.runtime.cloud, self.runtime.stack_id
            for _version in swift.signal_objects(cloud, container, obj) or []:
                swift.delete_object(cloud, container, obj)  # Swift brings the previous version back
            swift.delete_container(cloud, container)

    def take_signals(self, state: ResourceState) -> None:
        """Heat's ``_service_swift_signal``: each signal object PUT to the handle's
        temporary URL becomes a signal of the handle (checked and merged as one sent
        by ``stack_signal``), then the object goes."""
        obj = state.data.get(SWIFT_OBJECT)
        if not obj:
            return
        swift, cloud, container = self._swift(), self.runtime.cloud, self.runtime.stack_id
        taken = swift.read_signals(cloud, container, swift.signal_objects(cloud, container, obj) or [])
        for _name, body in taken:
            try:
                record_signal(self.runtime.store, self.runtime.stack_id, state, type(self), body)
            except SignalRefused:
                pass  # Heat's handle_signal refuses it: the object goes all the same
        names = [name for name, _body in taken]
        for name in [n for n in names if n != obj] + [n for n in names if n == obj]:
            swift.delete_object(cloud, container, name)

    def _through_swift(self, properties: Mapping[str, Any]) -> bool:
        """TEMP_URL_SIGNAL; and TOKEN_SIGNAL (Heat's default, which needs Heat's API)
        when the task names a cloud whose catalog has Swift: its ``curl_cli`` then
        PUTs to a temporary URL, so that a template's servers signal unchanged."""
        transport = properties.get("signal_transport")
        if transport == "TEMP_URL_SIGNAL":
            return True
        cloud = self.runtime.cloud
        return transport == "TOKEN_SIGNAL" and getattr(cloud, "cloud", None) is not None \
            and bool(cloud.has_service("object-store"))

    @staticmethod
    def _swift() -> Any:
        # Imported when a handle uses Swift: most stacks never load the OpenStack types.
        from .openstack import swift  # pylint: disable=import-outside-toplevel

        return swift

    def attribute(self, state: ResourceState, name: str) -> Any:
        url = state.data.get(SWIFT_URL)
        temp_url = state.properties.get("signal_transport") == "TEMP_URL_SIGNAL"
        if name == "signal":
            # Heat's _get_signal: {} for NO_SIGNAL, the temporary URL for
            # TEMP_URL_SIGNAL; no other transport here gives credentials.
            if url and temp_url:
                return json.dumps({"alarm_url": url})
            return "{}" if self.signals_itself(state) else "null"
        if url and not temp_url and name in ("token", "endpoint", "curl_cli"):
            # TOKEN_SIGNAL through Swift: a PUT to the temporary URL needs no token.
            return {"token": "", "endpoint": url, "curl_cli": f"curl -i -X PUT '{url}'"}[name]
        if name in ("token", "endpoint", "curl_cli"):
            return None  # Heat's API is not there to signal (module docstring)
        return super().attribute(state, name)


@register
class CfnWaitConditionHandle(WaitConditionHandleBase):
    """AWS::CloudFormation::WaitConditionHandle: signals ``{Status, Reason, Data,
    UniqueId}``, all four required; its reference is its physical id (Heat's is a
    pre-signed URL of its CFN API, which is not there)."""

    type_name = "AWS::CloudFormation::WaitConditionHandle"
    signal_keys = ("Data", "Reason", "Status", "UniqueId")


@register
class UpdateWaitConditionHandle(CfnWaitConditionHandle):
    """OS::Heat::UpdateWaitConditionHandle: the CFN handle, replaced (a new handle with
    no signals) by every update of its stack, so that senders signal again."""

    type_name = "OS::Heat::UpdateWaitConditionHandle"
    replaced_by_every_update: ClassVar[bool] = True


def _timeout_message(successes: list[str], count: Any) -> str:
    received = f"{len(successes)} of {count} received"
    return f"{received} - {';'.join(successes)}" if successes else received


@register
class HeatWaitCondition(Resource):
    """OS::Heat::WaitCondition: its create (and update) waits until its handle has
    ``count`` SUCCESS signals; a FAILURE signal fails it with the failures' reasons,
    and ``timeout`` seconds without enough fail it with Heat's count."""

    type_name = "OS::Heat::WaitCondition"
    adoptable = True  # Heat keeps nothing of it but its properties
    keys: ClassVar[tuple[str, str, str]] = ("handle", "timeout", "count")
    data_attribute: ClassVar[str] = "data"
    properties_schema = {
        "handle": PropertySchema("string", "A reference to the wait condition handle used to signal "
                                 "this wait condition.", required=True),
        "timeout": PropertySchema("number", "The number of seconds to wait for the correct number of "
                                  "signals to arrive.", required=True,
                                  constraints=(value_range(1, 43200),)),
        "count": PropertySchema("integer", "The number of success signals that must be received before "
                                "the stack creation process continues.", default=1,
                                update_allowed=True, constraints=(value_range(min=1),)),
    }
    attributes_schema = {
        "data": AttributeSchema("JSON string containing data associated with wait condition signals "
                                "sent to the handle.", type="string"),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        self._wait(self._handle(properties), properties)
        return Outcome("")  # as Heat's: no physical id, get_resource gives its name

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        self._wait(self._handle(properties), properties)
        return Outcome(current.physical_id)

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        return Outcome(adopted.resource_id or "")  # what Heat waited for is over

    def handle_delete(self, current: ResourceState) -> None:
        # Heat's: the handle's metadata is emptied (its signals go).
        handle = self._find_handle(current.properties.get(self.keys[0]))
        if handle is not None:
            self.runtime.store.delete_signals(self.runtime.stack_id, handle.name, handle.physical_id)

    def has_attributes(self, state: ResourceState) -> bool:
        return state.action != "INIT"  # no physical id, as Heat's: read once it acted

    def attribute(self, state: ResourceState, name: str) -> Any:
        if name != self.data_attribute:
            return super().attribute(state, name)
        handle = self._find_handle(state.properties.get(self.keys[0]))
        if handle is None:
            return ""  # Heat: no handle resource, an empty string
        handler = self._handler_of(handle)
        merged = handler.merged(self._signals(handle))
        return json.dumps({key: entry[handler.signal_keys[0]] for key, entry in merged.items()})

    # -- the handle ---------------------------------------------------------------------
    def _handle(self, properties: Mapping[str, Any]) -> ResourceState:
        """The handle resource ``handle`` refers to, checked (Heat's resource_by_refid
        and _validate_handle_resource)."""
        wanted = properties.get(self.keys[0])
        handle = self._find_handle(wanted)
        if handle is None:
            raise self.fail(f"{wanted} is not a valid wait condition handle.", "ValueError")
        self.check_handle(self._handler_of(handle), handle)
        return handle

    def _find_handle(self, wanted: Any) -> ResourceState | None:
        for stored in self.runtime.store.resources(self.runtime.stack_id):
            state = stored.state
            if stored.retired_in or not state.physical_id:
                continue
            handler = self._handler_of(state)
            if handler is not None and handler.reference_id(state) == wanted:
                return state
        return None

    def check_handle(self, handler: WaitConditionHandleBase, state: ResourceState) -> None:
        """Heat's OS form takes any handle."""

    def _handler_of(self, state: ResourceState) -> Any:
        cls = resource_class(state.implementation or state.type)
        if cls is None or not getattr(cls, "is_wait_condition_handle", False):
            return None
        return cls(state.name, self.runtime)

    def _signals(self, handle: ResourceState) -> list[SignalRecord]:
        return self.runtime.store.signals(self.runtime.stack_id, handle.name, handle.physical_id)

    # -- waiting ------------------------------------------------------------------------
    def _wait(self, handle: ResourceState, properties: Mapping[str, Any]) -> None:
        """Heat's ``_wait``, checked every POLL_SECONDS: the time first, then a
        failure, then the count."""
        handler = self._handler_of(handle)
        timeout, count = float(properties[self.keys[1]]), properties.get(self.keys[2], 1)
        started = time.monotonic()
        while True:
            if time.monotonic() - started > timeout:
                merged = handler.merged(self._signals(handle))
                raise self.fail(_timeout_message(handler.reasons(merged, SUCCESS), count),
                                "WaitConditionTimeout")
            if handler.signals_itself(handle):
                record_signal(self.runtime.store, self.runtime.stack_id, handle, type(handler), {})
            handler.take_signals(handle)
            merged = handler.merged(self._signals(handle))
            statuses = handler.statuses(merged)
            if any(status != SUCCESS for status in statuses):
                raise self.fail(";".join(handler.reasons(merged, FAILURE)), "WaitConditionFailure")
            if len(statuses) >= count:
                return
            self.runtime.sleep(POLL_SECONDS)


@register
class CfnWaitCondition(HeatWaitCondition):
    """AWS::CloudFormation::WaitCondition: ``Handle``, ``Timeout`` (an integer),
    ``Count``; its handle must be an AWS::CloudFormation::WaitConditionHandle (or its
    update form) of this stack."""

    type_name = "AWS::CloudFormation::WaitCondition"
    keys = ("Handle", "Timeout", "Count")
    data_attribute = "Data"
    properties_schema = {
        "Handle": PropertySchema("string", "A reference to the wait condition handle used to signal "
                                 "this wait condition.", required=True),
        "Timeout": PropertySchema("integer", "The number of seconds to wait for the correct number of "
                                  "signals to arrive.", required=True,
                                  constraints=(value_range(1, 43200),)),
        "Count": PropertySchema("integer", "The number of success signals that must be received before "
                                "the stack creation process continues.", default=1,
                                update_allowed=True, constraints=(value_range(min=1),)),
    }
    attributes_schema = {
        "Data": AttributeSchema("JSON string containing data associated with wait condition signals "
                                "sent to the handle.", type="string"),
    }

    def check_handle(self, handler: WaitConditionHandleBase, state: ResourceState) -> None:
        if not isinstance(handler, CfnWaitConditionHandle):
            raise self.fail(f"WaitCondition invalid Handle {state.name}", "ValueError")


def record_signal(store: Store, stack_id: str, handle: ResourceState,
                  handler_class: type[WaitConditionHandleBase], body: Any) -> str:
    """Check a signal as Heat's ``handle_signal`` does and append it to the handle's
    signals (nothing is written when it is refused); the reason of its SIGNAL event,
    which is recorded too."""
    before = handler_class.merged(store.signals(stack_id, handle.name, handle.physical_id))
    signal = handler_class.checked(body, before)
    if signal is None:
        reason = handler_class.signal_reason(None)
    else:
        seq = store.add_signal(stack_id, handle.name, handle.physical_id, body)
        # Read back up to this signal: another one sent at the same moment came first
        # or after it, and its default id and reason follow from that order (Heat's).
        mine = [r for r in store.signals(stack_id, handle.name, handle.physical_id) if r.seq <= seq]
        merged = handler_class.merged(mine[:-1])
        reason = handler_class.signal_reason(handler_class.checked(mine[-1].body, merged))
    store.add_event(stack_id, handle.name, "SIGNAL", handle.status, reason, handle.physical_id)
    return reason
