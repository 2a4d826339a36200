# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A HOT template: its version, its checked structure, and how to parse snippets.

``HotTemplate`` knows nothing of parameter values or resources; snippets are
parsed against a ``StackContext`` that the definition stage provides.  A CFN
template (``template/cfn.py``) is read into the same shape; ``read_template``
picks the class a document's version key asks for.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ...errors import HotplayError, TemplateError
from ..parameters import ParameterSchema, parse_parameter_schemas
from ..functions import base
from ..functions.base import OMIT, StackContext
from ..functions.conditions import parse_condition
from .loader import TemplateSource
from .schema import validate_structure
from .versions import HotVersion, version_of


class HotTemplate:
    """A loaded template, structurally valid for its ``heat_template_version``."""

    # What functions may read besides the declared parameters (Heat's HOTParameters).
    pseudo_parameters: tuple[str, ...] = ("OS::stack_name", "OS::stack_id", "OS::project_id")

    def __init__(self, source: TemplateSource, version: HotVersion | None = None) -> None:
        self.source = source
        self.version: HotVersion = version or version_of(source.data, source.path)
        self._read(source.data)

    def _read(self, data: dict[str, Any]) -> None:
        """Check the document and keep its sections."""
        source = self.source
        validate_structure(data, self.version, source.path)
        check_names(data, source.path)
        # Heat: an empty (null) section is the same as an absent one.
        self.description: str = data.get("description") or "No description"
        self.parameters_section: dict[str, Any] = data.get("parameters") or {}
        self.parameter_groups: list[Any] = data.get("parameter_groups") or []
        self.conditions_section: dict[str, Any] = data.get("conditions") or {}
        self.resources_section: dict[str, Any] = data.get("resources") or {}
        self.outputs_section: dict[str, Any] = data.get("outputs") or {}
        # CFN's Mappings (Fn::FindInMap); HOT has none.
        self.mappings: dict[str, Any] = {}

    def parameter_schemas(self, replaced_defaults: Collection[str] = (),
                          check_defaults: bool = True) -> dict[str, ParameterSchema]:
        """The declared parameters, checked (see ``parse_parameter_schemas``)."""
        return parse_parameter_schemas(self.parameters_section, self.source.path, self.version.key,
                                       replaced_defaults=replaced_defaults, check_defaults=check_defaults)

    def in_own_words(self, error: HotplayError) -> HotplayError:
        """``error`` with the places it names spelled as the template spells them
        (the engine says ``resources.NAME.properties``, as HOT does)."""
        return error

    def place(self, path: str) -> str:
        """A place of the engine's (``resources.web``) as the template spells it."""
        return path

    def parse(self, ctx: StackContext, snippet: Any, path: str) -> Any:
        """``snippet`` with every call of this version's functions parsed.

        A two-argument ``if`` whose condition is false leaves nothing; at the top
        of a snippet that is ``None`` (Heat resolves it so).
        """
        parsed = self._located(lambda: base.parse(self.version.functions, ctx, snippet, path))
        return None if parsed is OMIT else parsed

    def parse_condition(self, ctx: StackContext, snippet: Any, path: str) -> Any:
        """A condition: ``true``/``false``, a condition's name, or a condition function."""
        table = self.version.condition_functions
        return self._located(lambda: parse_condition(table, ctx, snippet, path))

    def validate_functions(self, parsed: Any, skip: tuple[type, ...] = ()) -> None:
        """Run every call's own checks (version support, arguments, references),
        but those of the ``skip`` function types."""
        self._located(lambda: base.validate(parsed, skip))

    def check_references(self, parsed: Any) -> None:
        """Every call that names a resource names one the stack has."""
        self._located(lambda: base.check_references(parsed))

    def _located(self, work: Any) -> Any:
        try:
            return work()
        except HotplayError as error:
            raise error.located(self.source.path) from None


# Sections whose keys are names that functions, paths and the store use as text.
NAMED_SECTIONS = ("parameters", "resources", "outputs", "conditions")


def check_names(data: dict[str, Any], source: str) -> None:
    """Names are strings (YAML reads ``no:`` or ``1:`` as a boolean or a number),
    and resource names hold no ``/``, which separates nested resources in paths
    (Heat: 'Resource name may not contain "/"')."""
    for section in NAMED_SECTIONS:
        for name in data.get(section) or {}:
            if not isinstance(name, str):
                kind = {bool: "a boolean", type(None): "null"}.get(type(name), "a number")
                raise TemplateError(
                    f"The name {name!r} in the \"{section}\" section is read as {kind}, "
                    "not a string: names must be strings (quote it)",
                    source=source, path=f"{section}.{name}")
            if section == "resources" and "/" in name:
                raise TemplateError('Resource name may not contain "/"', source=source,
                                    path=f"resources.{name}")
