# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small fake StackContext for the function and template tests (no tests here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.functions import base
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.versions import VERSIONS


@dataclass
class FakeResource:
    name: str
    attrs: dict[str, Any] = field(default_factory=dict)
    ref: str | None = None
    enabled: bool = True
    any_attribute: bool = False

    def attribute_names(self) -> frozenset[str] | None:
        return None if self.any_attribute else frozenset(self.attrs)

    def reference_id(self) -> Any:
        return self.ref if self.ref is not None else f"{self.name}-id"

    def attribute(self, name: str) -> Any:
        return self.attrs.get(name)

    def all_attributes(self) -> dict[str, Any]:
        return dict(self.attrs)


@dataclass
class FakeContext:
    params: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, FakeResource] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    conditions: dict[str, bool] = field(default_factory=dict)
    facades: dict[str, Any] = field(default_factory=dict)
    stack_name: str = "teststack"
    stack_id: str = "stack-uuid"
    project_id: str = "project-uuid"

    def has_param(self, name: str) -> bool:
        return name in self.params

    def param(self, name: str) -> Any:
        return self.params[name]

    def has_resource(self, name: str) -> bool:
        return name in self.resources

    def resource(self, name: str) -> FakeResource:
        return self.resources[name]

    def file(self, key: str) -> str | None:
        return self.files.get(key)

    def condition(self, name: str) -> bool:
        return self.conditions[name]

    def has_condition(self, name: str) -> bool:
        return name in self.conditions

    def facade(self, key: str) -> Any:
        return self.facades.get(key)


def parse(snippet: Any, version: str = "2021-04-16", ctx: FakeContext | None = None) -> Any:
    """Parse a snippet with a version's table, located at ``p``."""
    return base.parse(VERSIONS[version].functions, ctx or FakeContext(), snippet, "p")


def evaluate(snippet: Any, version: str = "2021-04-16", ctx: FakeContext | None = None) -> Any:
    """Parse, validate and resolve a snippet as the engine does."""
    parsed = parse(snippet, version, ctx)
    base.validate(parsed)
    return base.resolve(parsed)
