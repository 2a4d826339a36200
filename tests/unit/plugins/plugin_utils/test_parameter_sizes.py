# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parameter values from outside are capped (issue 28, item 5): each value at
MAX_PARAMETER_SIZE characters, all of them at MAX_PARAMETERS_SIZE, from the task, an
environment's parameters and parameter_defaults, an abandon file's environment;
refused before anything is written, naming the parameter."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import StackValidationFailed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import read_abandon
from ansible_collections.hotplay.stacks.plugins.plugin_utils.limits import (
    MAX_PARAMETER_SIZE,
    MAX_PARAMETERS_SIZE,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model.inputs import value_size
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
    AdoptRequest,
    adopt_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.rollback import (
    RollbackRequest,
    rollback_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

TEMPLATE = """\
    heat_template_version: 2018-08-31
    parameters:
      p: {type: string, default: ""}
      q: {type: json, default: {}}
    resources:
      v:
        type: OS::Heat::Value
        properties: {value: {get_param: p}}
    """
TOO_LARGE = "A" * (MAX_PARAMETER_SIZE + 1)


@pytest.fixture
def store(tmp_path: Path):
    opened = SqliteStore(str(tmp_path / "store.db"))
    yield opened
    opened.close()


def inputs(folder: Path, environment: str | None = None) -> dict[str, Any]:
    (folder / "main.yaml").write_text(textwrap.dedent(TEMPLATE))
    if environment is None:
        return {"template": str(folder / "main.yaml")}
    (folder / "env.yaml").write_text(environment)
    return {"template": str(folder / "main.yaml"), "environment": [str(folder / "env.yaml")]}


def refused_apply(store: SqliteStore, folder: Path, **request: Any) -> str:
    with pytest.raises(StackValidationFailed) as raised:
        apply_stack(store, ApplyRequest(name="s", **request), "test")
    assert store.list_stacks() == []
    return str(raised.value)


def test_a_value_too_large_from_the_task_is_refused_naming_it(store, tmp_path: Path) -> None:
    message = refused_apply(store, tmp_path, parameters={"p": TOO_LARGE}, **inputs(tmp_path))
    assert message == (
        f"parameters.p: Parameter 'p' is invalid: its value is larger than the maximum of "
        f"{MAX_PARAMETER_SIZE} characters: give large content in a file the template reads (get_file)")
    # A map or list counts its text: the same for a json parameter.
    message = refused_apply(store, tmp_path, parameters={"q": {"k": ["x" * MAX_PARAMETER_SIZE]}},
                            **inputs(tmp_path))
    assert message.startswith("parameters.q: Parameter 'q' is invalid: its value is larger")
    # Also in check mode (a preview).
    refused_apply(store, tmp_path, parameters={"p": TOO_LARGE}, check_mode=True, **inputs(tmp_path))


def test_values_adding_up_past_the_total_are_refused(store, tmp_path: Path) -> None:
    count = MAX_PARAMETERS_SIZE // MAX_PARAMETER_SIZE + 1
    given = {f"x{index:02}": "B" * MAX_PARAMETER_SIZE for index in range(count)}
    message = refused_apply(store, tmp_path, parameters=given, **inputs(tmp_path))
    assert message == (
        f"parameters.x{count - 1:02}: Parameter 'x{count - 1:02}' is invalid: the parameter values add "
        f"up to more than the maximum of {MAX_PARAMETERS_SIZE} characters with it")


@pytest.mark.parametrize("section", ["parameters", "parameter_defaults"])
def test_a_value_too_large_from_an_environment_is_refused(store, tmp_path: Path, section: str) -> None:
    message = refused_apply(store, tmp_path, **inputs(tmp_path, f"{section}:\n  p: {TOO_LARGE}\n"))
    assert message.startswith("parameters.p: Parameter 'p' is invalid: its value is larger than")
    assert f"(the value comes from the environment's {section})" in message


def test_values_within_the_limits_are_applied(store, tmp_path: Path) -> None:
    value = "C" * MAX_PARAMETER_SIZE
    applied = apply_stack(store, ApplyRequest(name="s", parameters={"p": value}, **inputs(tmp_path)),
                          "test").as_dict()
    assert applied["stack_status"] == "CREATE_COMPLETE"


def test_a_rollback_and_an_adoption_refuse_them_too(store, tmp_path: Path) -> None:
    apply_stack(store, ApplyRequest(name="s", **inputs(tmp_path)), "test")
    with pytest.raises(StackValidationFailed, match="Parameter 'p' is invalid: its value is larger"):
        rollback_stack(store, RollbackRequest(name="s", revision=1, parameters={"p": TOO_LARGE}), "test")
    template = {"heat_template_version": "2018-08-31", "parameters": {"p": {"type": "string"}},
                "resources": {}}
    data = {"name": "web", "id": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "template": template,
            "environment": {"parameters": {"p": TOO_LARGE}}, "resources": {}}
    # Heat's parameters in the abandon data are the stack's given values (issue 30 item 1).
    with pytest.raises(StackValidationFailed, match="Parameter 'p' is invalid: its value is larger"):
        adopt_stack(store, AdoptRequest("web", read_abandon(data, "web.json"), "web.json"), "test")
    with pytest.raises(StackValidationFailed, match="Parameter 'p' is invalid"):
        adopt_stack(store, AdoptRequest("web", read_abandon({**data, "environment": {}}, "web.json"),
                                        "web.json", parameters={"p": TOO_LARGE}), "test")
    assert [s.name for s in store.list_stacks()] == ["s"]


def test_a_huge_value_is_counted_only_up_to_the_limit() -> None:
    # the map 1, "ab" 2, the list 1, "cd" 2, 12 2, None 1, True 4
    assert value_size({"ab": ["cd", 12, None, True]}, 100) == 13
    assert value_size(["x" * 10] * 1_000_000, 100) <= 111
