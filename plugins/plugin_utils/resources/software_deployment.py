# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Software deployments that run on the play's hosts: ``OS::Heat::SoftwareDeployment``,
``OS::Heat::StructuredDeployment``, ``OS::Heat::SoftwareComponent`` and
``OS::Heat::DeployedServer``.

A deployment's config runs on its ``server``, an inventory host: the task's own
host through the play's own connection, another one as ``delegate_to`` reaches it
(``runtime.host``, given by the action plugin, and its ``on``): the module
``hotplay.stacks.software_deployment`` runs a ``script`` config as Heat's script
hook does; an ``ansible`` config (a list of module calls) runs task by task.  A
marker per deployment on the host makes a re-run with nothing changed run nothing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, Protocol

from ..errors import HotplayError, StackValidationFailed
from .base import (
    AttributeSchema,
    Outcome,
    PropertySchema,
    Resource,
    ResourceState,
    register,
)
from .properties import allowed_values

ACTIONS = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME")
SIGNAL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL", "ZAQAR_SIGNAL")
HOST_GROUPS = ("script", "ansible")
DEPLOY_ATTRIBUTES = ("deploy_stdout", "deploy_stderr", "deploy_status_code")
# The resource data of an adopted deployment: what its server reported (a JSON
# object, as Heat's software deployment keeps it) and the deployment's status.
OUTPUTS_KEY = "output_values"
STATUS_KEY = "deployment_status"
# The types whose physical id is a deployment of Heat's software deployments API.
DEPLOYMENT_TYPES = ("OS::Heat::SoftwareDeployment", "OS::Heat::StructuredDeployment")


class HostContext(Protocol):
    """What the action plugin gives the engine to reach the task's host."""

    name: str  # the inventory hostname

    def run_deployment(self, arguments: Mapping[str, Any], no_log: bool = False) -> dict[str, Any]:
        """Run hotplay.stacks.software_deployment on the host; its result."""

    def run_tasks(self, tasks: list[Mapping[str, Any]], variables: Mapping[str, Any]) -> dict[str, Any]:
        """Run an ``ansible`` group config (module calls) on the host."""

    def on(self, hostname: str) -> HostContext:
        """The same for another inventory host (HotplayError when there is none)."""


@register
class DeployedServer(Resource):
    """``OS::Heat::DeployedServer``: a host of the inventory (TripleO's
    deployed-server model); its physical id is the inventory hostname."""

    type_name = "OS::Heat::DeployedServer"
    properties_schema = {
        "name": PropertySchema("string", "The inventory hostname of the server.", update_allowed=True),
        "metadata": PropertySchema("map", "Arbitrary key/value metadata.", default={}, update_allowed=True),
        "software_config_transport": PropertySchema("string", "Accepted; deployments use the play's connection.",
                                                    default="POLL_SERVER_HEAT"),
        "deployment_swift_data": PropertySchema("map", "Accepted for compatibility.", default={}),
    }
    attributes_schema = {
        "name": AttributeSchema("Name of the server.", "string"),
        "networks": AttributeSchema("A dict of assigned network addresses.", "map"),
        "os_collect_config": AttributeSchema("Accepted for compatibility.", "map"),
    }

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        host = getattr(self.runtime, "host", None)
        name = properties.get("name") or (host.name if host else self.name)
        return Outcome(name, {"attributes": {"name": name, "networks": {}, "os_collect_config": {}}})

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        return self.handle_create(properties)

    def reference_id(self, state: ResourceState) -> Any:
        return state.physical_id or self.name


@register
class SoftwareDeployment(Resource):
    """``OS::Heat::SoftwareDeployment``: run a software config on a server."""

    type_name = "OS::Heat::SoftwareDeployment"
    properties_schema = {
        "config": PropertySchema("string", "ID of the software config resource to run.",
                                 update_allowed=True),
        "server": PropertySchema("string", "The server (an inventory host) to deploy to.",
                                 required=True),
        "input_values": PropertySchema("map", "Input values for the config's inputs.",
                                       default={}, update_allowed=True),
        "actions": PropertySchema(
            "list", "Which lifecycle actions run the config.", default=["CREATE", "UPDATE"],
            update_allowed=True,
            schema=PropertySchema("string", constraints=(allowed_values(*ACTIONS),))),
        "name": PropertySchema("string", "Name of the deployment (orders deployments on a server).",
                               update_allowed=True),
        "signal_transport": PropertySchema(
            "string", "Accepted: results come back through the play's connection.",
            default="CFN_SIGNAL", update_allowed=True,
            constraints=(allowed_values(*SIGNAL_TRANSPORTS),)),
    }
    attributes_schema = {
        "deploy_stdout": AttributeSchema("Captured stdout from the configuration execution.", "string"),
        "deploy_stderr": AttributeSchema("Captured stderr from the configuration execution.", "string"),
        "deploy_status_code": AttributeSchema("Returned status code from the configuration execution.", "string"),
    }

    # Adopted from Heat, a deployment keeps Heat's deployment id and the outputs its
    # server reported; nothing runs on the host until its properties change (then
    # an UPDATE in place, on the same id).
    adoptable = True

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        reported = reported_outputs(adopted.data)
        declared = self.config_record(properties).get("outputs", [])
        # Outputs nobody reported (an abandon file has none) are null, not empty.
        kept: dict[str, Any] = {"attributes": _attributes(reported, declared) if reported else {}}
        if adopted.data.get(STATUS_KEY):
            kept[STATUS_KEY] = str(adopted.data[STATUS_KEY])
        return Outcome(adopted.resource_id, kept)

    @classmethod
    def abandon_data(cls, state: ResourceState) -> dict[str, Any]:
        """Heat's deployment keeps what the server reported as its output values;
        as resource data they are text (Heat's resource data column)."""
        attributes = dict(state.data.get("attributes") or {})
        return {OUTPUTS_KEY: json.dumps(attributes, sort_keys=True), STATUS_KEY: "COMPLETE"}

    @classmethod
    def data_from_attributes(cls, attributes: Mapping[str, Any]) -> dict[str, Any]:
        values = {k: v for k, v in attributes.items() if k != "show"}
        return {OUTPUTS_KEY: json.dumps(values, sort_keys=True)} if values else {}

    # -- what it runs ------------------------------------------------------------------
    def config_record(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        """The software config (group, config, inputs, outputs) the deployment runs."""
        config_id = properties.get("config")
        if not config_id:
            return {"group": "Heat::Ungrouped", "config": "", "inputs": [], "outputs": []}
        lookup = getattr(self.runtime, "software_config", None)
        record = lookup(str(config_id)) if lookup else None
        if record is None:
            raise self.fail(f"Software config {config_id} could not be found", "NotFound")
        return dict(record)

    def config_for(self, record: Mapping[str, Any], action: str) -> tuple[str, Any]:
        """(group, config) to run for ``action`` (a component has one per action)."""
        if record.get("group") == "component":
            return _component_config(record, action)
        return str(record.get("group", "Heat::Ungrouped")), record.get("config")

    def input_values(self, properties: Mapping[str, Any], record: Mapping[str, Any],
                     action: str, physical_id: str) -> dict[str, Any]:
        """Declared inputs (defaults, then the given values) and Heat's ``deploy_*``."""
        values = {i["name"]: i.get("default") for i in record.get("inputs", []) if "name" in i}
        values.update(properties.get("input_values") or {})
        values.update({
            "deploy_server_id": str(properties.get("server")),
            "deploy_action": action,
            "deploy_stack_id": f"{self.runtime.stack_name}/{self.runtime.stack_id}",
            "deploy_resource_name": self.name,
            "deploy_signal_transport": str(properties.get("signal_transport") or "NO_SIGNAL"),
            "deploy_deployment_id": physical_id,
        })
        return values

    # -- life cycle --------------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        physical_id = str(uuid.uuid4())
        return self._deploy(physical_id, properties, "CREATE", {})

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        # A create that failed or never finished runs its CREATE again.
        unfinished_create = current.action == "CREATE" and current.status != "COMPLETE"
        action = "CREATE" if unfinished_create else "UPDATE"
        return self._deploy(current.physical_id or str(uuid.uuid4()), properties, action,
                            dict(current.data))

    def needs_replace_failed(self, current: ResourceState) -> bool:
        """A failed or interrupted deployment runs again on its host, with the
        action that did not finish (replacing it would run CREATE, which an
        UPDATE-only deployment skips: the change would never reach the host)."""
        return False

    def handle_delete(self, current: ResourceState) -> None:
        if not current.physical_id:
            return
        properties = current.properties
        if "DELETE" in (properties.get("actions") or []):
            host = self._host(properties)
            record = self.config_record(properties)
            self._run(host, current.physical_id, properties, record, "DELETE")
        self._forget(current.physical_id, properties)

    def _forget(self, physical_id: str, properties: Mapping[str, Any]) -> None:
        """The marker on the host goes too.  A server that is gone or unreachable
        keeps it (harmless: deployment ids are never reused), unless it is the
        task's own host, which Ansible then reports unreachable."""
        try:
            host = self._host(properties)
        except HotplayError:
            return
        try:
            host.run_deployment({"deployment_id": physical_id, "action": "DELETE",
                                 "config": "", "forget": True, **self._state_dir(host)})
        except HotplayError:
            own = getattr(self.runtime, "host", None)
            if own is not None and own.name == host.name:
                raise

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        reason = super().replacement_reason(old, new)
        if reason is not None:
            return reason
        # Heat: an input declared replace_on_change that changes replaces the deployment.
        try:
            record = self.config_record(new)
        except Exception:  # noqa: BLE001 - the config is judged when the deployment runs
            return None
        before, after = old.get("input_values") or {}, new.get("input_values") or {}
        for declared in record.get("inputs", []):
            name = declared.get("name")
            if declared.get("replace_on_change") and before.get(name) != after.get(name):
                return f"input {name} changed and is replace_on_change"
        return None

    def _deploy(self, physical_id: str, properties: Mapping[str, Any], action: str,
                kept: dict[str, Any]) -> Outcome:
        if action not in (properties.get("actions") or []):
            # Heat: an action the deployment does not list completes without running.
            return Outcome(physical_id, kept or {"attributes": _attributes({}, [])})
        host = self._host(properties)
        record = self.config_record(properties)
        result = self._run(host, physical_id, properties, record, action)
        return Outcome(physical_id, {"attributes": _attributes(result, record.get("outputs", [])),
                                     "ran": bool(result.get("ran"))})

    def _run(self, host: HostContext, physical_id: str, properties: Mapping[str, Any],
             record: Mapping[str, Any], action: str) -> dict[str, Any]:
        # Inputs first: a structured config is rendered with them.
        inputs = self.input_values(properties, record, action, physical_id)
        group, config = self.config_for(record, action)
        outputs = [{"name": o["name"], "error_output": bool(o.get("error_output"))}
                   for o in record.get("outputs", []) if "name" in o]
        if group == "Heat::Ungrouped" and not isinstance(config, str):
            # Data for an agent on the server (os-collect-config) that no tool here
            # runs: Heat completes such a deployment (NO_SIGNAL) with nothing done.
            result = {"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0,
                      "outputs": {}, "ran": False}
        elif group == "ansible":
            tasks, play_vars = _tasks(config, self.name)
            result = host.run_tasks(tasks, {**play_vars, **inputs})
        elif group in ("script", "Heat::Ungrouped"):
            secret = self.runtime.secrets.found_in(inputs)
            result = host.run_deployment({
                "deployment_id": physical_id, "action": action, "config": _text(config),
                "inputs": inputs, "outputs": outputs, "keep_result": not secret,
                **self._state_dir(host),
            }, no_log=secret)
        else:
            raise self.fail(f"config group {group} cannot run on hosts here: use one of "
                            f"{', '.join(HOST_GROUPS)}", "NotSupported")
        failure = _failure(result, outputs)
        if failure is None:
            return result
        if properties.get("signal_transport") != "NO_SIGNAL":
            raise self.fail(failure, "Error")
        # Heat waits for no signal: the deployment is COMPLETE whatever the server
        # does ("Not waiting for outputs signal").  Here the run saw the failure: its
        # attributes keep it, and the task says so.
        self.runtime.warn(f"{self.runtime.stack_name}.{self.name} {action}: {failure}; completed "
                          "all the same, as Heat completes a deployment with signal_transport "
                          "NO_SIGNAL (its deploy_status_code, deploy_stdout and deploy_stderr "
                          "keep what ran)")
        return result

    def _host(self, properties: Mapping[str, Any]) -> HostContext:
        """The server's host: the task's own, or another inventory host reached
        as ``delegate_to`` would (a deployment group deploys to several)."""
        host = getattr(self.runtime, "host", None)
        server = str(properties.get("server"))
        if host is None:
            raise self.fail(f"deployment to server {server} needs a host: apply this stack from "
                            "ansible-playbook (a play whose inventory has that host)", "Error")
        try:
            context: HostContext = host.on(server)
            return context
        except HotplayError as error:
            raise self.fail(str(error), "NotFound") from error

    @staticmethod
    def _state_dir(host: HostContext) -> dict[str, Any]:
        state_dir = getattr(host, "state_dir", None)
        return {"state_dir": state_dir} if state_dir else {}

    def attribute(self, state: ResourceState, name: str) -> Any:
        return state.data.get("attributes", {}).get(name)

    def attribute_names(self) -> frozenset[str] | None:
        return None  # the declared outputs of the config, as well


@register
class StructuredDeployment(SoftwareDeployment):
    """``OS::Heat::StructuredDeployment``: a structured config whose ``get_input``
    calls are replaced by the deployment's input values."""

    type_name = "OS::Heat::StructuredDeployment"
    properties_schema = {
        **SoftwareDeployment.properties_schema,
        "input_key": PropertySchema("string", "Name of the key replaced by input values.",
                                    default="get_input"),
        "input_values_validate": PropertySchema(
            "string", "LAX ignores unknown inputs; STRICT fails on them.", default="LAX",
            constraints=(allowed_values("LAX", "STRICT"),)),
    }

    def config_for(self, record: Mapping[str, Any], action: str) -> tuple[str, Any]:
        group, config = super().config_for(record, action)
        return group, self._rendered  # set by input_values

    def input_values(self, properties: Mapping[str, Any], record: Mapping[str, Any],
                     action: str, physical_id: str) -> dict[str, Any]:
        values = super().input_values(properties, record, action, physical_id)
        key = properties.get("input_key") or "get_input"
        strict = properties.get("input_values_validate") == "STRICT"
        self._rendered = _substitute(record.get("config"), values, key, strict, self)
        return values


@register
class SoftwareComponent(Resource):
    """``OS::Heat::SoftwareComponent``: one config per lifecycle action."""

    type_name = "OS::Heat::SoftwareComponent"
    properties_schema = {
        "configs": PropertySchema("list", "The configs, each for some actions.", required=True),
        "inputs": PropertySchema("list", "Schema of the inputs.", default=[]),
        "outputs": PropertySchema("list", "Schema of the outputs.", default=[]),
        "options": PropertySchema("map", "Options for the config tool.", default={}),
    }
    attributes_schema = {"configs": AttributeSchema("The configs, per action.", "list")}

    def validate(self, properties: Mapping[str, Any]) -> None:
        seen: set[str] = set()
        for config in properties.get("configs") or []:
            for action in (config or {}).get("actions", ["CREATE", "UPDATE"]):
                if action in seen:
                    raise StackValidationFailed(
                        f'Defining more than one configuration for the same action in '
                        f'SoftwareComponent "{self.name}" is not allowed.')
                seen.add(action)

    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        physical_id = str(uuid.uuid4())
        record = {"id": physical_id, "name": self.runtime.physical_name(self.name),
                  "group": "component", "config": {"configs": properties.get("configs") or []},
                  "inputs": properties.get("inputs") or [], "outputs": properties.get("outputs") or [],
                  "options": properties.get("options") or {}}
        return Outcome(physical_id, {"software_config": record,
                                     "attributes": {"configs": properties.get("configs") or []}})


def reported_outputs(data: Mapping[str, Any]) -> dict[str, Any]:
    """The output values an adopted deployment's server reported (Heat's
    ``output_values``: ``deploy_stdout``, ``deploy_stderr``, ``deploy_status_code``
    and the config's outputs), as ``_run`` returns a run's result."""
    text = data.get(OUTPUTS_KEY)
    if text is None:
        return {}
    try:
        values = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        values = None
    if not isinstance(values, Mapping):
        raise StackValidationFailed(
            f"resource_data.{OUTPUTS_KEY}: expected a JSON object of the output "
            f"values the server reported, got {str(text)[:60]!r}")
    deploy = {k: values.get(k) for k in DEPLOY_ATTRIBUTES if k in values}
    return {**deploy, "outputs": {k: v for k, v in values.items() if k not in DEPLOY_ATTRIBUTES}}


def _failure(result: Mapping[str, Any], outputs: list[dict[str, Any]]) -> str | None:
    """Heat's words for a deployment that failed (a non-zero status code, an error
    output with a value); None when it did not."""
    code = int(result.get("deploy_status_code") or 0)
    stderr = str(result.get("deploy_stderr") or "").strip()
    if code != 0:
        return ("Deployment to server failed: deploy_status_code : Deployment exited "
                f"with non-zero status code: {code}" + (f": {stderr}" if stderr else ""))
    for declared in outputs:
        value = (result.get("outputs") or {}).get(declared["name"])
        if declared["error_output"] and value:
            return f"Deployment to server failed: {declared['name']} : {value}"
    return None


def _component_config(record: Mapping[str, Any], action: str) -> tuple[str, Any]:
    for config in (record.get("config") or {}).get("configs", []):
        if action in config.get("actions", ["CREATE", "UPDATE"]):
            return str(config.get("tool", "script")), config.get("config")
    return "script", "#!/bin/sh\n"


def _attributes(result: Mapping[str, Any], declared: list[Mapping[str, Any]]) -> dict[str, Any]:
    attributes = {
        "deploy_stdout": result.get("deploy_stdout", ""),
        "deploy_stderr": result.get("deploy_stderr", ""),
        "deploy_status_code": result.get("deploy_status_code", 0),
    }
    outputs = result.get("outputs") or {}
    for output in declared:
        if "name" in output:
            attributes[output["name"]] = outputs.get(output["name"])
    return attributes


def _text(config: Any) -> str:
    if isinstance(config, str):
        return config
    return json.dumps(config)


PLAY_TASK_SECTIONS = ("pre_tasks", "tasks", "post_tasks")
PLAY_SECTIONS_NOT_RUN = ("roles", "handlers", "vars_files", "import_playbook")


def _tasks(config: Any, name: str) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
    """An ``ansible`` config, and the play variables it sets: a list of single-module
    tasks (YAML text or data); a structured config's (a map) list under ``tasks``;
    or a playbook, as Heat's ansible hook runs one on the server: its plays' tasks
    in order (pre_tasks, tasks, post_tasks) with their ``vars``, on the
    deployment's server whatever ``hosts`` says (the hook's inventory is the server
    alone).  The inputs are extra vars: they win over play vars."""
    if isinstance(config, str):
        import yaml

        config = yaml.safe_load(config)
    if isinstance(config, Mapping) and "tasks" in config:
        config = config["tasks"]
    if not isinstance(config, list) or not all(isinstance(t, Mapping) for t in config):
        raise StackValidationFailed(f"resources.{name}: an ansible config is a list of tasks, or a playbook")
    if not any("hosts" in item or "import_playbook" in item for item in config):
        return list(config), {}
    return _playbook_tasks(config, name)


def _playbook_tasks(plays: list[Mapping[str, Any]], name: str) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
    tasks: list[Mapping[str, Any]] = []
    variables: dict[str, Any] = {}
    for index, play in enumerate(plays):
        unsupported = [key for key in PLAY_SECTIONS_NOT_RUN if play.get(key)]
        if unsupported:
            raise StackValidationFailed(
                f"resources.{name}: play {index} of the ansible config uses {', '.join(unsupported)}: "
                "only plays of tasks (pre_tasks, tasks, post_tasks, vars) run here")
        if not isinstance(play.get("vars") or {}, Mapping):
            raise StackValidationFailed(f"resources.{name}: vars of play {index} is not a map")
        variables.update(play.get("vars") or {})
        for section in PLAY_TASK_SECTIONS:
            tasks.extend(play.get(section) or [])
    return tasks, variables


def _substitute(value: Any, inputs: Mapping[str, Any], key: str, strict: bool, resource: Resource) -> Any:
    if isinstance(value, Mapping):
        if len(value) == 1 and key in value:
            name = value[key]
            if name not in inputs:
                if strict:
                    raise resource.fail(f"Unknown input {name}", "ValueError")
                return value
            return inputs[name]
        return {k: _substitute(v, inputs, key, strict, resource) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, inputs, key, strict, resource) for v in value]
    return value
