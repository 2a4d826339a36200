# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property-based fuzzing of the template loader, validation and functions.

Whatever document, environment, parameter values or function call hypothesis
makes, the engine answers with a value or a HotplayError: never another
exception, never a hang (a watchdog interrupts an example that runs too long).

The example count is small enough for every unit test run; raise it for a full
run (scripts/fuzz.sh):

    HOTPLAY_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest -n 2 \\
        tests/unit/plugins/plugin_utils/test_fuzz_templates.py
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.definition import (
    StackDefinition,
    StackIdentity,
    resolve_outputs,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.environment import (
    EMPTY_ENVIRONMENT,
    merge_environments,
    parse_environment,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions.base import resolve
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.parameters import (
    parse_parameter_schemas,
    resolve_parameters,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run.preview import preview
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.registry import ResourceRegistry
from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.base import known_types
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.loader import (
    TemplateSource,
    decode,
    load_yaml,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.versions import VERSIONS

EXAMPLES = int(os.environ.get("HOTPLAY_FUZZ_EXAMPLES", "60"))
# An example still running after this many seconds is a hang (yaql and patterns
# stop themselves after 5 and 2 seconds).
WATCHDOG_SECONDS = 30
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # the watchdog catches hangs; timing varies on a shared machine
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)

FUNCTION_NAMES = sorted({name for v in VERSIONS.values()
                         for name in (*v.functions, *v.condition_functions)})
VERSION_NAMES = sorted(VERSIONS)
RESOURCE_TYPES = [t for t in known_types() if not t.startswith("Hotplay::")] + [
    "provider.yaml", "missing.yaml", "My::Alias", "OS::Nova::Server"]
PROVIDER = ("heat_template_version: 2021-04-16\nparameters:\n  size: {type: number, default: 1}\n"
            "resources:\n  inner: {type: OS::Heat::None}\noutputs:\n  o: {value: {get_param: size}}\n")
FILES = {"provider.yaml": PROVIDER, "script.sh": "#!/bin/sh\necho hi\n"}


class Hang(Exception):
    """An example ran longer than WATCHDOG_SECONDS."""


@contextlib.contextmanager
def watchdog(seconds: int = WATCHDOG_SECONDS) -> Iterator[None]:
    """Interrupt a hang (pure Python loops and regular expressions check signals)."""
    def interrupt(_number: int, _frame: Any) -> None:
        raise Hang(f"the example ran longer than {seconds} seconds")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def value_or_hotplay_error(work: Callable[[], Any]) -> Any:
    """``work()``; a HotplayError is an answer, any other exception a bug."""
    with watchdog():
        try:
            return work()
        except HotplayError as error:
            assert str(error), "an error must say something"
            return error


# -- strategies -----------------------------------------------------------------------------

# Every character, lone surrogates included (JSON and YAML escapes can make them).
TEXT = st.text(st.characters(exclude_categories=()), max_size=12)
NAMES = st.sampled_from(["r", "s", "p", "q", "c", "size", "value", "o", "", "a/b", "0"]) | TEXT
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
           | st.floats(allow_nan=True, allow_infinity=True) | TEXT | NAMES)


def _calls(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.builds(lambda name, args: {name: args}, st.sampled_from(FUNCTION_NAMES), children)


JSON = st.recursive(
    SCALARS,
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(NAMES, children, max_size=4)
                      | _calls(children)),
    max_leaves=25,
)

PARAMETER = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "number", "json", "comma_delimited_list", "boolean"])
     | SCALARS},
    optional={
        "default": JSON,
        "hidden": st.booleans(),
        "constraints": st.lists(st.dictionaries(
            st.sampled_from(["range", "length", "allowed_values", "allowed_pattern", "modulo",
                             "custom_constraint", "description"]), JSON, max_size=2), max_size=2)
        | JSON,
        "label": JSON,
    },
)

RESOURCE = st.fixed_dictionaries(
    {"type": st.sampled_from(RESOURCE_TYPES) | JSON},
    optional={
        "properties": st.dictionaries(NAMES, JSON, max_size=4) | JSON,
        "depends_on": st.lists(NAMES, max_size=3) | JSON,
        "condition": NAMES | JSON,
        "metadata": JSON,
        "deletion_policy": st.sampled_from(["Delete", "retain", "Snapshot", "x"]) | JSON,
        "update_policy": JSON,
        "external_id": JSON,
    },
)

TEMPLATE = st.fixed_dictionaries(
    {"heat_template_version": st.sampled_from(VERSION_NAMES) | SCALARS},
    optional={
        "description": JSON,
        "parameters": st.dictionaries(NAMES, PARAMETER | JSON, max_size=3) | JSON,
        "parameter_groups": JSON,
        "conditions": st.dictionaries(NAMES, JSON, max_size=3) | JSON,
        "resources": st.dictionaries(NAMES, RESOURCE | JSON, max_size=4) | JSON,
        "outputs": st.dictionaries(NAMES, st.fixed_dictionaries({"value": JSON}, optional={
            "condition": JSON}) | JSON, max_size=3) | JSON,
    },
)

ENVIRONMENT = st.fixed_dictionaries({}, optional={
    "parameters": st.dictionaries(NAMES, JSON, max_size=3) | JSON,
    "parameter_defaults": st.dictionaries(NAMES, JSON, max_size=3) | JSON,
    "parameter_merge_strategies": st.dictionaries(
        NAMES, st.sampled_from(["overwrite", "merge", "deep_merge", "x"]), max_size=3) | JSON,
    "resource_registry": st.dictionaries(
        st.sampled_from(["My::Alias", "OS::*", "resources", "hooks", "base_url"]) | NAMES,
        st.sampled_from(["OS::Heat::None", "OS::Heat::Value", "provider.yaml", "My::Alias"])
        | JSON, max_size=3) | JSON,
    "event_sinks": JSON,
    "encrypted_param_names": JSON,
}) | JSON

GIVEN = st.dictionaries(NAMES, JSON, max_size=3)


def _definition(data: Any, environment: Any = EMPTY_ENVIRONMENT,
                given: Any = None) -> StackDefinition:
    source = TemplateSource("fuzz.yaml", data, dict(FILES))
    return StackDefinition(source, environment, given or {}, StackIdentity("fuzz", "fuzz-id"))


# -- the loader --------------------------------------------------------------------------------


@FUZZ
@given(st.text(st.characters(exclude_categories=()), max_size=200))
def test_any_text_loads_or_is_refused(text: str) -> None:
    value_or_hotplay_error(lambda: load_yaml(text, "fuzz.yaml"))


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_decode_and_load_or_are_refused(raw: bytes) -> None:
    value_or_hotplay_error(lambda: load_yaml(decode(raw, "fuzz.yaml"), "fuzz.yaml"))


@FUZZ
@given(JSON)
def test_yaml_and_json_of_any_document_load_back_or_are_refused(document: Any) -> None:
    for text in (_yaml_text(document), _json_text(document)):
        if text is not None:
            value_or_hotplay_error(lambda text=text: load_yaml(text, "fuzz.yaml"))


def _yaml_text(document: Any) -> str | None:
    try:
        return yaml.safe_dump(document, allow_unicode=True)
    except (yaml.YAMLError, UnicodeEncodeError):
        return None


def _json_text(document: Any) -> str | None:
    try:
        return json.dumps(document)
    except (TypeError, ValueError):
        return None


# -- validation ------------------------------------------------------------------------------


@FUZZ
@given(TEMPLATE)
def test_any_template_validates_or_is_refused(data: dict) -> None:
    definition = value_or_hotplay_error(lambda: _definition(data))
    if isinstance(definition, StackDefinition):
        value_or_hotplay_error(lambda: resolve_outputs(definition))


@FUZZ
@given(JSON)
def test_any_document_as_a_template_is_refused_or_valid(data: Any) -> None:
    value_or_hotplay_error(lambda: _definition(data if isinstance(data, dict) else {"x": data}))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteStore]:
    opened = SqliteStore(str(tmp_path_factory.mktemp("fuzz") / "store.db"))
    yield opened
    opened.close()


@FUZZ
@given(data=TEMPLATE, environment=ENVIRONMENT, given_values=GIVEN)
def test_any_template_environment_and_values_preview_or_are_refused(
        store: SqliteStore, data: dict, environment: Any, given_values: dict) -> None:
    def work() -> Any:
        env = parse_environment(environment, "fuzz-env.yaml")
        definition = _definition(data, env, given_values)
        return preview(store, None, definition)

    value_or_hotplay_error(work)


# -- environments, parameters, the registry ----------------------------------------------


@FUZZ
@given(st.lists(ENVIRONMENT, min_size=1, max_size=3), st.dictionaries(NAMES, PARAMETER, max_size=3))
def test_any_environments_merge_or_are_refused(documents: list, parameters: dict) -> None:
    def work() -> Any:
        envs = [parse_environment(d, f"env{i}.yaml") for i, d in enumerate(documents)]
        merged = merge_environments(envs)
        schemas = parse_parameter_schemas(parameters, "fuzz.yaml", "2021-04-16")
        merge_environments(envs, schemas)
        return resolve_parameters(schemas, {}, merged, "fuzz.yaml")

    value_or_hotplay_error(work)


@FUZZ
@given(st.dictionaries(NAMES, PARAMETER | JSON, max_size=3) | JSON, GIVEN,
       st.sampled_from(VERSION_NAMES))
def test_any_parameters_and_values_are_checked_or_refused(section: Any, given_values: dict,
                                                          version: str) -> None:
    def work() -> Any:
        schemas = parse_parameter_schemas(section, "fuzz.yaml", VERSIONS[version].key)
        return resolve_parameters(schemas, given_values, EMPTY_ENVIRONMENT, "fuzz.yaml")

    value_or_hotplay_error(work)


@FUZZ
@given(ENVIRONMENT, st.lists(st.sampled_from(RESOURCE_TYPES) | TEXT, max_size=3), NAMES)
def test_any_registry_resolves_or_is_refused(document: Any, types: list, name: str) -> None:
    def work() -> Any:
        registry = ResourceRegistry.from_snippet(
            document.get("resource_registry") if isinstance(document, dict) else document, "e")
        return [registry.resolve(t, (name,)) for t in types] + [registry.hooks((name, "x"))]

    value_or_hotplay_error(work)


# -- intrinsic functions -------------------------------------------------------------------

SCOPE_TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {
        "text": {"type": "string", "default": "a,b"},
        "number": {"type": "number", "default": 3},
        "items": {"type": "comma_delimited_list", "default": "x,y,z"},
        "data": {"type": "json", "default": {"a": [1, 2], "b": {"c": "d"}}},
        "secret": {"type": "string", "default": "s3cr3t", "hidden": True},
    },
    "conditions": {"yes": True, "no": False},
    "resources": {
        "r": {"type": "OS::Heat::Value", "properties": {"value": "v"}},
        "s": {"type": "OS::Heat::RandomString"},
        "p": {"type": "provider.yaml"},
    },
}


@pytest.fixture(scope="module")
def scope_definition() -> StackDefinition:
    return _definition(SCOPE_TEMPLATE)


ARGS = st.recursive(
    st.sampled_from(["text", "number", "items", "data", "secret", "r", "s", "p", "yes", "no",
                     "value", "length", "a", "%v%", ",", "sha256", "script.sh", "$.data",
                     "metadata", 0, 1, -1, 2]) | SCALARS,
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.sampled_from(["template", "params", "for_each",
                                                         "expression", "data", "keys", "values",
                                                         "permutations", "scheme", "host", "port",
                                                         "path", "query", "%v%"]) | NAMES,
                                        children, max_size=4)
                      | _calls(children)),
    max_leaves=20,
)


@FUZZ
@given(st.builds(lambda name, args: {name: args}, st.sampled_from(FUNCTION_NAMES), ARGS))
def test_any_function_call_resolves_or_is_refused(scope_definition: StackDefinition,
                                                  snippet: dict) -> None:
    template = scope_definition.template

    def work() -> Any:
        parsed = template.parse(scope_definition.scope, snippet, "resources.fuzz.properties.value")
        template.validate_functions(parsed)
        return resolve(parsed)

    value_or_hotplay_error(work)


@FUZZ
@given(ARGS)
def test_any_condition_evaluates_or_is_refused(scope_definition: StackDefinition, snippet: Any) -> None:
    template = scope_definition.template

    def work() -> Any:
        parsed = template.parse_condition(scope_definition.scope, snippet, "conditions.fuzz")
        template.validate_functions(parsed)
        return resolve(parsed)

    value_or_hotplay_error(work)


@FUZZ
@given(st.sampled_from(VERSION_NAMES), st.dictionaries(NAMES, JSON, max_size=3))
def test_any_properties_in_any_version_validate_or_are_refused(version: str, properties: dict) -> None:
    data = {"heat_template_version": version,
            "resources": {"r": {"type": "OS::Heat::TestResource", "properties": properties},
                          "g": {"type": "OS::Heat::ResourceGroup",
                                "properties": {"count": 2, "resource_def": {
                                    "type": "OS::Heat::Value", "properties": properties}}}}}
    value_or_hotplay_error(lambda: _definition(data))


def test_the_watchdog_interrupts_a_hang() -> None:
    def endless() -> None:
        while True:
            pass

    with pytest.raises(Hang):
        with watchdog(1):
            endless()


def test_an_exception_that_is_not_a_hotplay_error_fails_the_example() -> None:
    with pytest.raises(ZeroDivisionError):
        value_or_hotplay_error(lambda: 1 / 0)
