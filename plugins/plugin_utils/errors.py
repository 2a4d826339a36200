# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors of the engine.

Every error a user can cause is a ``HotplayError``: the action plugins turn it into
one clear task failure (never a traceback).  ``source`` names the file and ``path``
the place inside the document (``resources.web.properties.image``) so people find
the spot; ``message`` keeps Heat's wording.  When Heat's message already names the
path, ``path`` stays empty so it is not said twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any


# A message quotes values it was given; a long one is cut, so that an error stays
# one readable line and never becomes a dump of the input.
MAX_MESSAGE = 1500


class HotplayError(Exception):
    """Base of every error meant for the person running the task."""

    def __init__(self, message: str, source: str = "", path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.path = path

    def located(self, source: str) -> "HotplayError":
        """This error with the file it came from filled in (when not known yet)."""
        if not self.source:
            self.source = source
        return self

    def __str__(self) -> str:
        return ": ".join(part for part in (self.source, self.path, _cut(self.message)) if part)


def _cut(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    return f"{message[:MAX_MESSAGE - 100]} ... ({len(message) - MAX_MESSAGE + 100} characters cut)"


class TemplateError(HotplayError):
    """The template (or an environment, or a parameter value) is not valid.

    Raised before anything is written to the store.
    """


class StackValidationFailed(TemplateError):
    """Heat's ``StackValidationFailed``: semantic validation of a definition."""


class InvalidAttribute(StackValidationFailed):
    """``get_attr`` of an attribute the resource does not have, found when it is
    read (Heat's ``InvalidTemplateAttribute``: a provider template's missing output)."""


class TemplateOutputError(HotplayError):
    """``get_attr`` of a nested stack's output that failed (Heat's
    ``TemplateOutputError``, raised by ``StackResource.get_output``)."""

    @classmethod
    def of(cls, resource: str, output: str, message: str) -> "TemplateOutputError":
        """Heat's wording: the resource, its output and that output's error."""
        return cls(f"Error in {resource} output {output}: {message}")


class ResourceFailure(HotplayError):
    """A resource action failed; ``message`` carries Heat's wording."""

    def __init__(self, message: str, error_type: str = "Error", path: str = "") -> None:
        super().__init__(message, path=path)
        self.error_type = error_type

    def heat_reason(self) -> str:
        """The status reason as Heat writes it: ``ValueError: resources.bad: ...``."""
        return f"{self.error_type}: {self.message}"


class StackLocked(HotplayError):
    """Another run holds this stack's lock."""

    @classmethod
    def held_by(cls, stack_name: str, holder: str, pid: object, host: str, since: str) -> "StackLocked":
        """The refusal naming the run that holds the lock (its ``locks`` row)."""
        return cls(f'Stack "{stack_name}" is locked by {holder} (pid {pid} on {host}, since {since})')


class LockLost(StackLocked):
    """The run's lease on its stack was taken over (it had run out) or broken: the
    run writes nothing more and stops."""


class StackNotFound(HotplayError):
    """No stack of that name in the store."""

    @classmethod
    def named(cls, name: str) -> "StackNotFound":
        """Heat's wording for a stack that does not exist."""
        return cls(f"The Stack ({shown_name(name)}) could not be found.")


# Heat's rule for a top-level stack's name (heat/engine/stack.py, Stack.__init__'s
# _validate_stack_name), matched whole: Heat's re.match with "$" also took a name
# ending in a newline.
STACK_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_.-]{0,254}")


def invalid_stack_name(name: Any) -> StackValidationFailed | None:
    """Heat's refusal of a name it would not give a new stack, or None when valid."""
    if not isinstance(name, str):
        return StackValidationFailed(f"Invalid stack name {shown_name(str(name))}, must be a string")
    if STACK_NAME.fullmatch(name):
        return None
    return StackValidationFailed(
        f"Invalid stack name {shown_name(name)} must contain only alphanumeric or \"_-.\" "
        "characters, must start with alpha and must be 255 characters or less.")


def check_new_stack_name(name: Any) -> None:
    """Refuse, as Heat does when it creates a stack, a name Heat would not give one
    (a stack already recorded under such a name stays readable and deletable)."""
    refused = invalid_stack_name(name)
    if refused is not None:
        raise refused


def printable(text: str) -> str:
    """``text`` with its control characters (a newline, an ANSI escape that a
    terminal or AWX would obey) written as escapes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def shown_name(name: str) -> str:
    """A name as a message may print it: control characters written as escapes
    (``printable``), and cut when long."""
    shown = printable(name)
    return shown if len(shown) <= 300 else shown[:300] + "..."


class StoreError(HotplayError):
    """The store cannot be opened or used."""


class StoreBusy(StoreError):
    """Another process holds the whole store's write lock (SQLite) and has not let
    go within the busy timeout: a job stopped or hung inside a write."""


class Paused(Exception):
    """Raised by work that waits for a person (a hook): the node is not done, what
    depends on it waits, and everything else goes on."""


def join_path(base: str, items: Sequence[Any]) -> str:
    """Heat's way of printing a path: numbers (and digit strings) as ``[n]``."""
    result = base
    for item in items:
        if isinstance(item, int) or str(item).isdigit():
            result += f"[{item}]"
        elif result:
            result += f".{item}"
        else:
            result = str(item)
    return result
