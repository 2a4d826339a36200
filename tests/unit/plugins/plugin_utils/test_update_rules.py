# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A preview promises what the apply then does: both take each resource's update
decision from model.update_rules.decide, for every case of the update corpus below.

Each case applies a first template, previews a second (check mode), then applies it,
recording every decision the preview and the executor take through ``decide``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.model import plan as plan_module
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model import update_rules
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    apply_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.health import (
    HealthRequest,
    mark_resource,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.run import executor
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

BASE = """\
    heat_template_version: 2018-08-31
    parameters:
      value: {type: string, default: one}
      replace_value: {type: string, default: r1}
      fail: {type: boolean, default: false}
    resources:
      in_place:
        type: OS::Heat::TestResource
        properties: {value: {get_param: value}}
      replaced:
        type: OS::Heat::TestResource
        properties: {value: {get_param: replace_value}, update_replace: true}
      reader:
        type: OS::Heat::TestResource
        properties: {value: {get_resource: replaced}, fail: {get_param: fail}}
      steady:
        type: OS::Heat::None
        metadata: {tier: web}
    """

NESTED_MEMBER = """\
    heat_template_version: 2018-08-31
    parameters:
      word: {type: string}
    resources:
      inner:
        type: OS::Heat::TestResource
        properties: {value: {get_param: word}, update_replace: true}
      still:
        type: OS::Heat::None
    """

NESTED = """\
    heat_template_version: 2018-08-31
    parameters:
      word: {type: string, default: hello}
    resources:
      member:
        type: member.yaml
        properties: {word: {get_param: word}}
    """


def _metadata(text: str) -> str:
    return text.replace("metadata: {tier: web}", "metadata: {tier: db}")


def _deletion_policy(text: str) -> str:
    return text.replace("metadata: {tier: web}", "metadata: {tier: web}\n        deletion_policy: Retain")


def _type_swap(text: str) -> str:
    return text.replace("""      steady:
        type: OS::Heat::None""", """      steady:
        type: OS::Heat::Value""").replace("metadata: {tier: web}", "properties: {value: v}")


def _update_policy(text: str) -> str:
    return text.replace("metadata: {tier: web}", "metadata: {tier: web}\n        update_policy: {x: 1}")


# name: (first template, first parameters, second template, second parameters, set-up)
CASES: dict[str, tuple[str, dict[str, Any], str, dict[str, Any], str]] = {
    "nothing changes": (BASE, {}, BASE, {}, ""),
    "a property changes in place": (BASE, {}, BASE, {"value": "two"}, ""),
    "a property forces a replacement and its reader follows": (BASE, {}, BASE, {"replace_value": "r2"}, ""),
    "metadata changes": (BASE, {}, _metadata(BASE), {}, ""),
    "deletion_policy changes": (BASE, {}, _deletion_policy(BASE), {}, ""),
    "update_policy changes": (BASE, {}, _update_policy(BASE), {}, ""),
    "the type changes": (BASE, {}, _type_swap(BASE), {}, ""),
    "a failed resource is converged again": (BASE, {"fail": True}, BASE, {}, ""),
    "an unhealthy resource is replaced": (BASE, {}, BASE, {}, "unhealthy:in_place"),
    "a nested stack changes inside": (NESTED, {}, NESTED, {"word": "bye"}, ""),
    "a nested stack stays": (NESTED, {}, NESTED, {}, ""),
}


class Decisions:
    """Every decision ``decide`` took, by resource name, for each caller."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.preview: dict[str, str] = {}
        self.apply: dict[str, str] = {}
        monkeypatch.setattr(plan_module, "decide", self._spy(self.preview))
        monkeypatch.setattr(executor, "decide", self._spy(self.apply))

    @staticmethod
    def _spy(into: dict[str, str]) -> Callable[..., update_rules.Decision]:
        def recorded(store: Any, declared: Any, handler: Any, record: Any, properties: Any,
                     *known: Any, **repair: Any) -> update_rules.Decision:
            decision = update_rules.decide(store, declared, handler, record, properties, *known,
                                           **repair)
            into[declared.name] = decision.action
            return decision
        return recorded


def _apply(store: SqliteStore, folder: Path, text: str, number: int, **request: Any) -> dict[str, Any]:
    path = folder / f"s-{number}.yaml"
    path.write_text(textwrap.dedent(text))
    return apply_stack(store, ApplyRequest(name="s", template=str(path), nested_depth=3, **request),
                       "test").as_dict()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_apply_does_what_its_preview_said(case: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    first, first_parameters, second, second_parameters, setup = CASES[case]
    (tmp_path / "member.yaml").write_text(textwrap.dedent(NESTED_MEMBER))
    store = SqliteStore(str(tmp_path / "store.db"))
    try:
        _apply(store, tmp_path, first, 1, parameters=first_parameters)
        if setup.startswith("unhealthy:"):
            mark_resource(store, HealthRequest("s", setup.split(":", 1)[1], reason="by hand"), "test")
        decisions = Decisions(monkeypatch)
        preview = _apply(store, tmp_path, second, 2, parameters=second_parameters, check_mode=True)
        applied = _apply(store, tmp_path, second, 3, parameters=second_parameters)
    finally:
        store.close()
    assert not applied.get("failed"), applied.get("msg")
    assert preview["changed"] == applied["changed"], "check mode's changed is not the apply's"
    if not decisions.apply:  # the same definition again: the apply touches nothing
        assert applied["changed"] is False and preview["changed"] is False
        assert set(decisions.preview.values()) == {update_rules.UNCHANGED}
        return
    for name, action in decisions.apply.items():
        assert decisions.preview.get(name) == action, (
            f"{case}: the preview decided {decisions.preview.get(name)} for {name}, the apply {action}")
    planned = {path.rsplit("/", 1)[-1]: change for change, paths in preview["plan"].items()
               if change in ("updated", "replaced", "unchanged") for path in paths}
    for name, action in decisions.apply.items():
        assert planned.get(name) == action, f"{case}: the plan shown says {planned.get(name)} for {name}"


def test_the_preview_and_the_executor_share_one_rule() -> None:
    assert plan_module.decide is update_rules.decide
    assert executor.decide is update_rules.decide
