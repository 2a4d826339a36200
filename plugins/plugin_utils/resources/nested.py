# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resource types that are stacks of their own: provider templates and
``OS::Heat::Stack`` (groups, in group.py, build on the same base).

Each builds a child template (read from the files or given inline), then has the
run converge a child stack with it (``RuntimeContext.child``).  The child is a
stack in the store with its own resources and events, named like Heat's
``<parent>-<resource>-<random>``.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

from ..errors import (HotplayError, InvalidAttribute, Paused, StackValidationFailed,
                      TemplateOutputError)

from ..language.abandon import AbandonedResource, AbandonedStack
from ..language.template.loader import TemplateSource, load_template_yaml
from ..language.template.cfn import sections_of
from .base import (
    AttributeSchema,
    Outcome,
    PropertySchema,
    Resource,
    ResourceState,
    register,
    register_template_type,
)
from .runtime import PROJECT_ID, Declared, RuntimeContext
from .properties import check_provider_properties


class NestedStackResource(Resource):
    """Common life cycle: converge the child stack, delete it, read its outputs."""

    is_nested_stack = True
    adoptable = True  # its members are adopted one by one, to any depth

    def __init__(self, name: str, runtime: RuntimeContext) -> None:
        super().__init__(name, runtime)
        # The recorded state being updated (None on create): groups read their
        # skip list from it.
        self.current: ResourceState | None = None

    def bind_current(self, state: ResourceState | None) -> None:
        self.current = state

    def extra_data(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        """What the type keeps in the store beside the child stack's id."""
        return {}

    # -- what subclasses provide ----------------------------------------------------
    def child_template(self, properties: Mapping[str, Any]) -> TemplateSource:
        raise NotImplementedError

    def child_parameters(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def child_registry(self) -> Mapping[str, str]:
        """Type mappings the child's environment adds to the parent's (Heat's
        ``child_params`` registry: an InstanceGroup's members are AWS servers)."""
        return {}

    # -- life cycle -----------------------------------------------------------------
    def handle_create(self, properties: Mapping[str, Any]) -> Outcome:
        store = self.runtime.store
        child = store.create_stack(
            self.runtime.physical_name(self.name), parent_id=self.runtime.stack_id,
            parent_resource=self.name,
        )
        self.runtime.note_nested_stack(self.name, child.id)
        return self._converge(child.id, properties, "CREATE")

    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        """The nested stack Heat has (``adopted.stack``: its abandon data) becomes
        the child stack, with Heat's id and name; its resources are adopted in turn."""
        nested = adopted.stack
        if nested is None:
            raise self.fail(f"the abandon data of {self.name} is not a nested stack's "
                            f"(a {self._declared().type} is a stack of its own)")
        child = self.runtime.store.create_stack(
            nested.name, parent_id=self.runtime.stack_id, parent_resource=self.name,
            stack_id=nested.id)
        self.runtime.note_nested_stack(self.name, child.id)
        return self._converge(child.id, properties, "ADOPT")

    @classmethod
    def abandon_data(cls, state: ResourceState) -> dict[str, Any]:
        return {}  # a nested stack's abandon data is the child stack's own

    def handle_update(self, current: ResourceState, properties: Mapping[str, Any]) -> Outcome:
        self.bind_current(current)
        if not current.nested_stack_id:
            return self.handle_create(properties)
        child = self.runtime.store.get_stack(current.nested_stack_id)
        # A child stopped while being created (a hook, a kill) goes on creating.
        action = "CREATE" if child.action in ("INIT", "CREATE") and child.status != "COMPLETE" else "UPDATE"
        return self._converge(current.nested_stack_id, properties, action)

    def replacement_reason(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
        return None  # a nested stack is always updated in place, as Heat

    def needs_replace_failed(self, current: ResourceState) -> bool:
        # A failed or interrupted nested stack is converged again, not replaced.
        return not current.nested_stack_id

    def _converge(self, child_id: str, properties: Mapping[str, Any], action: str) -> Outcome:
        # Decided before the child changes (a group's skip list reads the members).
        extra = self.extra_data(properties)
        self._converge_pass(child_id, properties,
                            lambda: (self.child_template(properties), frozenset()), action)
        return Outcome(child_id, {"nested_stack_id": child_id, **extra})

    def _converge_pass(self, child_id: str, properties: Mapping[str, Any],
                       build: Callable[[], tuple[TemplateSource, frozenset[str]]],
                       action: str, batch_pass: bool = False,
                       adopt: AbandonedStack | None = None) -> None:
        """Converge the child stack once to the template ``build`` makes; the
        member names it also returns are left exactly as they are (a group's
        rolling update holds members whose old definition is not known).
        ``adopt``: what the child adopts, when Heat's data has no nested stack there."""
        store = self.runtime.store
        child = store.get_stack(child_id)
        stack = self.runtime.child(child, self.name, adopt=adopt)
        try:
            template, hold = build()
            done = stack.converge(template, self.child_parameters(properties), facade=self._facade(),
                                  written_type=self._written_type(), hold=hold, action=action,
                                  batch_pass=batch_pass, registry=self.child_registry())
        except HotplayError as error:  # the child's definition is invalid: nothing touched
            store.set_stack_status(child.id, action, "FAILED", str(error))
            raise self.fail(str(error), type(error).__name__) from error
        if not done:
            if stack.paused:
                raise Paused(f"{self.name}: a resource inside waits at a hook")
            reason = store.get_stack(child.id).status_reason
            raise self.fail(reason, "Error")

    def _written_type(self) -> str:
        """The type as the parent template wrote it: a nested stack must not see
        the mapping that made it (``OS::Nova::Server: server.yaml``)."""
        return self._declared().type

    def _declared(self) -> Declared:
        declared = self.runtime.declared(self.name)
        if declared is None:  # a handler is only made for a resource of the template
            raise HotplayError(f"{self.name} is not a resource of its stack")
        return declared

    def _facade(self) -> dict[str, Any]:
        declared = self._declared()
        return {
            "metadata": declared.metadata,
            "deletion_policy": declared.deletion_policy,
            "update_policy": declared.update_policy,
        }

    def handle_delete(self, current: ResourceState) -> None:
        if not current.nested_stack_id:
            return
        store = self.runtime.store
        child = store.get_stack(current.nested_stack_id)
        stack = self.runtime.child(child, self.name)
        if not stack.delete():
            if stack.paused:
                raise Paused(f"{self.name}: a resource inside waits at a hook")
            raise self.fail(store.get_stack(child.id).status_reason, "Error")
        store.mark_stack_deleted(child.id)

    # -- reading ----------------------------------------------------------------------
    def outputs(self, state: ResourceState) -> Mapping[str, Any]:
        if not state.nested_stack_id:
            return {}
        return self.runtime.store.get_stack(state.nested_stack_id).outputs

    def output_errors(self, state: ResourceState) -> Mapping[str, str]:
        """The child stack's failing outputs and their errors."""
        if not state.nested_stack_id:
            return {}
        return self.runtime.store.get_stack(state.nested_stack_id).output_errors

    def output_value(self, state: ResourceState, name: str) -> Any:
        """One output of the child as ``get_attr`` reads it (Heat's ``get_output``):
        an output that failed raises its error."""
        failed = self.output_errors(state).get(name)
        if failed is not None:
            raise TemplateOutputError.of(self.name, name, failed)
        return self.outputs(state).get(name)

    def child_arn(self, state: ResourceState) -> str:
        """The child stack's ARN (the resource's name before it has one)."""
        if not state.nested_stack_id:
            return self.name
        child = self.runtime.store.get_stack(state.nested_stack_id)
        return stack_arn(child.name, child.id)

    def members(self, state: ResourceState) -> list[tuple[str, ResourceState]]:
        """The child stack's resources, in template order."""
        if not state.nested_stack_id:
            return []
        stored = self.runtime.store.resources(state.nested_stack_id)
        return [(r.state.name, r.state) for r in stored]


def child_runtime(nested: NestedStackResource, state: ResourceState) -> RuntimeContext:
    """A runtime for reading members of ``nested``'s child stack."""
    child = nested.runtime.store.get_stack(state.nested_stack_id or "")
    return nested.runtime.child(child, nested.name).runtime


# The random part of Heat's default names (<stack>-<resource>-<12 characters>).
NAME_SUFFIX_LENGTH = 12
# The id of Heat's resource that a provider template adopted (get_resource gives it
# when the template's OS::stack_id is not known: a check-mode adoption).
ADOPTED_ID = "adopted_id"


class TemplateResource(NestedStackResource):
    """A provider template: a resource whose type is a template file."""

    type_name = ""

    def __init__(self, name: str, runtime: RuntimeContext, template_key: str) -> None:
        super().__init__(name, runtime)
        self.template_key = template_key

    def _template_data(self) -> dict[str, Any]:
        files = self.runtime.files
        data: dict[str, Any] = load_template_yaml(files[self.template_key], self.template_key)
        return data

    def _sections(self) -> Mapping[str, Any]:
        """The provider's sections under HOT's names (a provider may be a CFN template)."""
        return sections_of(self._template_data())

    def _declared_outputs(self) -> Mapping[str, Any] | None:
        """The provider's outputs; None when its text is not at hand (reading the
        outputs a stored nested stack recorded)."""
        if self.template_key not in self.runtime.files:
            return None
        outputs = self._sections().get("outputs")
        return outputs if isinstance(outputs, Mapping) else {}

    def check_properties(self, values: Mapping[str, Any], path: str) -> dict[str, Any]:
        """Properties are the provider template's parameters (Heat's rule)."""
        declared = self._sections().get("parameters") or {}
        for key in values:
            if key not in declared:
                raise StackValidationFailed(f"Unknown Property {key}", path=path)
        # Typed as Heat types them (a list read from a group for a string parameter:
        # "Value must be a string; got []").
        check_provider_properties(declared, values, path)
        return dict(values)

    def child_template(self, properties: Mapping[str, Any]) -> TemplateSource:
        files = self.runtime.files
        return TemplateSource(self.template_key, self._template_data(), dict(files))

    def extra_data(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        # Heat's id of an adopted thing stays the reference until the template gives
        # one (its module, not run on adoption, runs once a property changes).
        if self.current is not None and self.current.data.get(ADOPTED_ID):
            return {ADOPTED_ID: self.current.data[ADOPTED_ID]}
        return {}

    # -- adoption of a resource Heat made itself ------------------------------------------
    def handle_adopt(self, properties: Mapping[str, Any], adopted: Any) -> Outcome:
        """Heat's own resource (``OS::Nova::Server``: no nested stack in Heat) that the
        environment maps to this provider template: the template's resources adopt the
        physical resource Heat made (adopted.resource_id), each as its type does;
        a module resource checks that the real thing is what the template says."""
        if adopted.stack is not None:
            return super().handle_adopt(properties, adopted)
        name = adopted.real_name
        # The shipped templates name a thing <their stack's name less 12 characters>
        # + <name_suffix>: with the real name as both, the name comes out as Heat's.
        child = self.runtime.store.create_stack(
            name if len(name) > NAME_SUFFIX_LENGTH else self.runtime.physical_name(self.name),
            parent_id=self.runtime.stack_id, parent_resource=self.name)
        self.runtime.note_nested_stack(self.name, child.id)
        self._converge_pass(child.id, properties,
                            lambda: (self.child_template(properties), frozenset()), "ADOPT",
                            adopt=self._adopted_members(child.name, child.id, adopted))
        made = self.runtime.store.get_stack(child.id).outputs.get("OS::stack_id")
        # An adoption does not run a module that cannot check (runtime.preview): no id then.
        if made != adopted.resource_id and not (made is None and getattr(self.runtime, "preview", False)):
            raise self.fail(f"{self.name}: {self.template_key} found {made!r}, not the "
                            f"{self._declared().type} {adopted.resource_id} Heat has")
        return Outcome(child.id, {"nested_stack_id": child.id, ADOPTED_ID: adopted.resource_id})

    def _adopted_members(self, name: str, stack_id: str, adopted: Any) -> AbandonedStack:
        """Abandon data for this template's resources, made up from Heat's one: each
        gets Heat's physical id; a RandomString (the template's name suffix) the end
        of the real thing's name."""
        members = {}
        for member, declared in (self._sections().get("resources") or {}).items():
            kind = str(declared.get("type", "")) if isinstance(declared, Mapping) else ""
            data: dict[str, Any] = {}
            if kind == "OS::Heat::RandomString":
                if len(adopted.real_name) <= NAME_SUFFIX_LENGTH:
                    raise self.fail(f"{self.name}: the name of {adopted.resource_id} is not known "
                                    f"(or too short) for {member} of {self.template_key}")
                data = {"value": adopted.real_name[-NAME_SUFFIX_LENGTH:]}
            members[str(member)] = AbandonedResource(
                name=str(member), type=kind, resource_id=adopted.resource_id,
                action=adopted.action, status=adopted.status, data=data)
        return AbandonedStack(name=name, id=stack_id, action=adopted.action,
                              status=adopted.status, template={}, environment={}, files={},
                              resources=members, made_up=True)

    def child_parameters(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        declared = self._sections().get("parameters") or {}
        listed = {name for name, schema in declared.items()
                  if isinstance(schema, Mapping) and schema.get("type") == "comma_delimited_list"}
        return {name: as_delimited_list(value) if name in listed else value
                for name, value in properties.items()}

    def attribute_names(self) -> frozenset[str] | None:
        return None  # any output of the provider template

    def attribute(self, state: ResourceState, name: str) -> Any:
        declared = self._declared_outputs()
        if declared is not None and name not in declared and name not in ("show", "OS::stack_id"):
            # Heat checks a provider's attribute names only when they are read
            # (TemplateResource overrides get_attribute): an output error, or the
            # stack fails before the resource that reads it starts.
            raise InvalidAttribute(f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        return self.output_value(state, name)

    def reference_id(self, state: ResourceState) -> Any:
        """Heat's TemplateResource.get_reference_id: the ``OS::stack_id`` output when
        the provider has one, else the nested stack's ARN (not its bare id)."""
        outputs = self.outputs(state)
        if outputs.get("OS::stack_id"):
            return outputs["OS::stack_id"]
        if state.data.get(ADOPTED_ID):  # Heat's resource adopted, its template's id unknown
            return state.data[ADOPTED_ID]
        return self.child_arn(state)


def stack_arn(name: str, stack_id: str) -> str:
    """A stack's identifier as Heat's ``HeatIdentifier.arn`` writes it."""
    project, name, stack_id = (quote(text, safe="") for text in (PROJECT_ID, name, stack_id))
    return f"arn:openstack:heat::{project}:stacks/{name}/{stack_id}"


def as_delimited_list(value: Any) -> Any:
    """A list property given to a provider's comma_delimited_list parameter, as
    Heat's TemplateResource.child_params passes it: a list of maps becomes
    ``.member.<index>.<key>=<value>`` items (so a provider standing for
    ``OS::Nova::Server`` receives ``networks`` as ``.member.0.network=private``),
    and a missing item becomes ''. (Heat writes a null value of a map as ``None``;
    here the key is left out, as the types Heat checks the provider against read it.)"""
    if not isinstance(value, list):
        return value
    if value and isinstance(value[0], Mapping):
        return [f".member.{index}.{key}={item_value}"
                for index, item in enumerate(value)
                for key, item_value in (item.items() if isinstance(item, Mapping) else ())
                if item_value is not None]
    return ["" if item is None else item for item in value]


register_template_type(TemplateResource)


@register
class HeatStack(NestedStackResource):
    """``OS::Heat::Stack``: a nested stack whose template is given inline."""

    type_name = "OS::Heat::Stack"
    properties_schema = {
        "context": PropertySchema("map", "Context for this stack (region_name).", default={}),
        "template": PropertySchema("string", "Template that specifies the stack to be created.",
                                   required=True, update_allowed=True),
        "timeout": PropertySchema("number", "Stack creation timeout in minutes.", update_allowed=True),
        "parameters": PropertySchema("map", "Set of parameters passed to this stack.",
                                     default={}, update_allowed=True),
    }
    attributes_schema = {
        "stack_name": AttributeSchema("Name of the stack."),
        "outputs": AttributeSchema("A dict of key-value pairs output from the stack.", "map"),
    }

    def child_template(self, properties: Mapping[str, Any]) -> TemplateSource:
        template = properties["template"]
        data = template if isinstance(template, Mapping) else load_template_yaml(str(template), f"resources.{self.name}.properties.template")
        return TemplateSource(f"resources.{self.name}.properties.template", dict(data),
                              dict(self.runtime.files))

    def child_parameters(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return dict(properties.get("parameters") or {})

    def attribute(self, state: ResourceState, name: str) -> Any:
        if name == "outputs":
            return dict(self.outputs(state))
        if name == "stack_name":
            return self.runtime.store.get_stack(state.nested_stack_id).name if state.nested_stack_id else None
        return super().attribute(state, name)

    def reference_id(self, state: ResourceState) -> Any:
        return state.nested_stack_id or self.name


# Heat's max_template_size and template_fetch_timeout (heat.conf's defaults).
FETCHED_TEMPLATE_MAX = 524288
FETCH_TIMEOUT = 60


@register
class CloudFormationStack(NestedStackResource):
    """``AWS::CloudFormation::Stack``: a nested stack whose template is read from
    ``TemplateURL`` (http or https) whenever the stack is validated, created or
    updated, as Heat's ``NestedStack`` does; its outputs read as ``Outputs.NAME``."""

    type_name = "AWS::CloudFormation::Stack"
    properties_schema = {
        "TemplateURL": PropertySchema("string", "The URL of a template that specifies the stack to be "
                                      "created as a resource.", required=True, update_allowed=True),
        "TimeoutInMinutes": PropertySchema("integer", "The length of time, in minutes, to wait for the "
                                           "nested stack creation.", update_allowed=True),
        "Parameters": PropertySchema("map", "The set of parameters passed to this nested stack.",
                                     update_allowed=True),
    }

    def child_template(self, properties: Mapping[str, Any]) -> TemplateSource:
        url = str(properties["TemplateURL"])
        try:
            text = fetch_template(url)
        except OSError as error:
            # Validation names the place (resources.NAME<nested_stack>), as Heat's.
            raise StackValidationFailed(f"Could not fetch remote template '{url}': {error}") from None
        data = load_template_yaml(text, url)
        if not isinstance(data, Mapping):
            raise StackValidationFailed("The template is not a JSON object or YAML mapping.", source=url)
        # The parent's files are the child's, as Heat's create_with_template gives them.
        return TemplateSource(url, dict(data), dict(self.runtime.files))

    def child_parameters(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return dict(properties.get("Parameters") or {})

    def attribute_names(self) -> frozenset[str] | None:
        return None  # Outputs.NAME, for any output of the child

    def attribute(self, state: ResourceState, name: str) -> Any:
        """Heat's ``NestedStack.get_attribute``: only ``Outputs.NAME``, of an output
        the child has."""
        output = name.partition(".")[2] if name.startswith("Outputs.") else None
        if output is None or output not in self.outputs(state):
            raise InvalidAttribute(f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        return self.output_value(state, output)

    def reference_id(self, state: ResourceState) -> Any:
        """The child stack's ARN, as Heat's ``get_reference_id``."""
        return self.child_arn(state)


def fetch_template(url: str) -> str:
    """The text at ``url``, as Heat's ``urlfetch.get`` reads a template: http or
    https only, at most FETCHED_TEMPLATE_MAX bytes; OSError with Heat's words."""
    # Imported here: every run would pay for ansible's HTTP client otherwise.
    from ansible.module_utils.urls import (  # pylint: disable=import-outside-toplevel
        ConnectionError as UrlConnectionError, open_url)

    scheme = urllib.parse.urlparse(url).scheme
    if scheme not in ("http", "https"):
        raise OSError(f"Invalid URL scheme {scheme}")
    try:
        with open_url(url, timeout=FETCH_TIMEOUT) as answer:
            data: bytes = answer.read(FETCHED_TEMPLATE_MAX + 1)
    except urllib.error.HTTPError as refused:
        refused.close()  # it holds the answer's connection
        raise OSError(f"Failed to retrieve template from {url}") from None
    except (OSError, ValueError, UrlConnectionError):
        raise OSError(f"Failed to retrieve template from {url}") from None
    if len(data) > FETCHED_TEMPLATE_MAX:
        raise OSError(f"Template exceeds maximum allowed size ({FETCHED_TEMPLATE_MAX} bytes)")
    return data.decode("utf-8", errors="replace")
