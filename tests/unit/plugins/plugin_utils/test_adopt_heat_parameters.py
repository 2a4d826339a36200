# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Heat's parameter values (its abandon data's environment) are the adopted stack's
parameters: recorded as given, so the same values given next change nothing; a
value the task or its environment gives that differs from Heat's is refused.  The
abandon data was recorded with the real Heat (tests/integration/heat_recorded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.abandon import load_abandon_file
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.adopt import (
    AdoptRefused,
    AdoptRequest,
    adopt_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store import open_store

RECORDED = Path(__file__).resolve().parents[3] / "integration" / "heat_recorded"
TEMPLATE = str(RECORDED / "adopt_group_of_n.yaml")
ABANDON = str(RECORDED / "adopt_group_of_n.abandon.json")


@pytest.fixture
def store(tmp_path: Path):
    opened = open_store(f"sqlite:///{tmp_path / 's.db'}")
    yield opened
    opened.close()


def adopt(store, **options) -> dict:
    request = AdoptRequest("moved", load_abandon_file(ABANDON), ABANDON, **options)
    return adopt_stack(store, request, "test").as_dict()


@pytest.mark.parametrize("options", [{}, {"template": TEMPLATE}], ids=["heat-template", "own-template"])
def test_heat_values_recorded_as_given(store, options) -> None:
    adopted = adopt(store, **options)
    assert adopted["parameters"]["n"] == 2
    revision = store.revisions(store.find_stack("moved").id)[-1]
    assert revision.definition["parameters"] == {"n": 2}
    # No environment layer is left of Heat's empty sections.
    assert revision.definition["environment"] == []
    same = apply_stack(store, ApplyRequest("moved", template=TEMPLATE, parameters={"n": 2},
                                           check_mode=True), "test").as_dict()
    assert same["changed"] is False, same["plan"]


def test_a_value_given_that_is_not_heats_is_refused(store, tmp_path: Path) -> None:
    with pytest.raises(AdoptRefused, match="parameters n differ"):
        adopt(store, template=TEMPLATE, parameters={"n": 3})
    environment = tmp_path / "env.yaml"
    environment.write_text("parameters: {n: 3}\n")
    with pytest.raises(AdoptRefused, match="parameters n differ"):
        adopt(store, template=TEMPLATE, environment=[str(environment)])
    assert store.find_stack("moved") is None


def test_a_value_equal_to_the_parameters_default_is_the_same_definition(store, tmp_path: Path) -> None:
    """Issue 40: ``n: 2`` given where the template's default is 2 is the stack given
    nothing, both ways, and so is a value equal to the environment's
    parameter_defaults; another value is a change."""
    template = tmp_path / "group.yaml"
    template.write_text(Path(TEMPLATE).read_text().replace("n: {type: number, default: 1}",
                                                           "n: {type: number, default: 2}"))

    def apply(**parameters) -> dict:
        return apply_stack(store, ApplyRequest(name="s", template=str(template), parameters=parameters),
                           "test").as_dict()

    first = apply(n=2)
    assert first["stack_status"] == "CREATE_COMPLETE"
    assert apply()["changed"] is False
    assert apply(n="2")["changed"] is False  # Heat's API gives values as text
    grown = apply(n=3)
    assert grown["changed"] is True and grown["stack_status"] == "UPDATE_COMPLETE"
    assert apply(n=3)["changed"] is False
    assert apply(n=2)["changed"] is True
    assert apply()["changed"] is False
