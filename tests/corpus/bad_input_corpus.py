# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bad-input corpus: its cases, and running one as the stack action plugin does.

Each case of ``bad_input/cases.yaml`` (hand-written) and ``bad_input/generated/
cases.yaml`` (written by ``generate.py``) names a template, environment files,
parameters and ``file_roots``, and what the error must say: a fragment of the
message, the file it names and the place in that file.  A case runs through
``engine.apply_stack`` with a real SQLite store, in a forked child process whose
address space is limited (``resource.setrlimit(RLIMIT_AS)``) and which is killed
when it outlives a generous hard cap: a hang or a memory blow-up is an outcome
like any other, not a stuck test run.

Used by tests/unit/.../test_bad_input_corpus.py and tests/integration/
test_bad_input_playbooks.py, and as a command that prints every outcome:

    PYTHONPATH=.build/collections .venv/bin/python tests/corpus/bad_input_corpus.py [case-id ...]
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "bad_input"
MANIFESTS = ("cases.yaml", "generated/cases.yaml")
# Address space a case may add to what the forked child starts with.
MEMORY_BUDGET = 1 << 30
# A case still running after this many seconds is a hang (the slowest case takes
# a few seconds on a loaded two-core machine).
HARD_CAP = 120.0
# Tables of the store that must stay empty after a refused apply.
STORE_TABLES = ("stacks", "revisions", "resources", "events", "hooks", "leases")
STACK_NAME = "corpus"


@dataclass(frozen=True)
class Case:
    """One bad input and the error it must end with."""

    id: str
    template: str
    message: str  # a fragment of the expected message
    file: str  # the file the message names (relative to the corpus)
    path: str | None  # the place in that file; None: the whole document
    environment: tuple[str, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    file_roots: tuple[str, ...] = ()
    # Made when the case runs (git and the collection build keep neither well):
    symlinks: Mapping[str, str] = field(default_factory=dict)  # link -> target as written
    fifos: tuple[str, ...] = ()
    synthesized: Mapping[str, str] = field(default_factory=dict)  # file -> kind of content
    # Text that must not appear in the message (a hidden parameter's value).
    secret: str = ""
    # Why the case exists, when its name does not say it.
    note: str = ""


def load_cases(manifests: Sequence[str] = MANIFESTS) -> list[Case]:
    """Every case of the manifests, in order; ids are unique."""
    cases: list[Case] = []
    for manifest in manifests:
        if not (CORPUS / manifest).exists():
            continue  # generated/cases.yaml before generate.py has run
        with open(CORPUS / manifest, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
        prefix = os.path.dirname(manifest)
        cases.extend(_case(entry, prefix) for entry in document["cases"])
    ids = [case.id for case in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate case ids: {duplicates}")
    return cases


def _case(entry: Mapping[str, Any], prefix: str) -> Case:
    def here(name: str) -> str:
        return os.path.join(prefix, name) if prefix else name

    expect = entry["expect"]
    template = here(entry["template"])
    return Case(
        id=entry["id"],
        template=template,
        message=expect["message"],
        file=here(expect["file"]) if "file" in expect else template,
        path=expect.get("path"),
        environment=tuple(here(e) for e in entry.get("environment", ())),
        parameters=entry.get("parameters", {}),
        file_roots=tuple(here(r) for r in entry.get("file_roots", ())),
        symlinks={here(k): v for k, v in entry.get("symlinks", {}).items()},
        fifos=tuple(here(f) for f in entry.get("fifos", ())),
        synthesized={here(k): v for k, v in entry.get("synthesized", {}).items()},
        secret=expect.get("secret", ""),
        note=entry.get("note", ""),
    )


# -- the files of a case ------------------------------------------------------------------


def copy_corpus(destination: Path) -> Path:
    """A copy of the corpus to run cases in (links and FIFOs are made there)."""
    root = destination / "bad_input"
    shutil.copytree(CORPUS, root, ignore=shutil.ignore_patterns("cases.yaml"))
    return root


def materialize(case: Case, root: Path) -> None:
    """Make the symbolic links, FIFOs and synthesized files a case needs."""
    for link, target in case.symlinks.items():
        path = root / link
        if not path.is_symlink():
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, path)
    for fifo in case.fifos:
        if not (root / fifo).exists():
            os.mkfifo(root / fifo)
    for name, kind in case.synthesized.items():
        if not (root / name).exists():
            content = SYNTHESIZERS[kind]()
            if isinstance(content, bytes):
                (root / name).write_bytes(content)
            else:
                (root / name).write_text(content, encoding="utf-8")


def _huge_string() -> str:
    """A template just over the 10 MiB limit: one long string."""
    return "heat_template_version: 2021-04-16\ndescription: " + "x" * (10 * 1024 * 1024) + "\n"


def _many_resources() -> str:
    """Many small resources, under the size limit, over the node limit."""
    lines = ["heat_template_version: 2021-04-16", "resources:"]
    lines += [f"  r{i}: {{type: OS::Heat::None, properties: {{a: [1, 2, 3]}}}}" for i in range(140_000)]
    return "\n".join(lines) + "\n"


def _flat_flow_sequence() -> str:
    """Millions of one-character values in one YAML flow sequence (not JSON)."""
    return "heat_template_version: 2021-04-16\ndescription: [" + ",".join(["x"] * 3_000_000) + "]\n"


def _deep_json() -> str:
    """JSON nested 100,000 levels deep."""
    return '{"heat_template_version": "2021-04-16", "description": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _long_list_property() -> str:
    """A string property given a list of 100,000 numbers: the error quotes it."""
    items = ", ".join(str(i) for i in range(100_000))
    return ("heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::TestResource\n"
            f"    properties:\n      value: [{items}]\n")


def _too_many_resources() -> str:
    """One resource more than a stack may have."""
    lines = ["heat_template_version: 2021-04-16", "resources:"]
    lines += [f"  r{i}: {{type: OS::Heat::None}}" for i in range(50_001)]
    return "\n".join(lines) + "\n"


# Files that are not UTF-8 text, or hold control characters, are made when a case
# runs: the repository's own checks (and many editors) read every file as text.
VERSION_LINE = b"heat_template_version: 2021-04-16\n"
NOT_UTF8 = {
    "nul_byte_template": VERSION_LINE + b'description: "a\x00b"\n',
    "control_character_template": VERSION_LINE + b"description: bell \x07 here\n",
    "latin1_template": VERSION_LINE + b"description: caf\xe9 au lait\n",
    "utf16_template": (VERSION_LINE + b"description: utf16\n").decode().encode("utf-16"),
    "truncated_utf8_template": VERSION_LINE + "description: snow \u2603".encode()[:-1] + b"\n",
    "overlong_utf8_template": VERSION_LINE + b"description: \xc0\xaf\n",
    "latin1_environment": b"parameters:\n  size: caf\xe9\n",
}


def _not_utf8(kind: str) -> Callable[[], bytes]:
    return lambda: NOT_UTF8[kind]


SYNTHESIZERS: dict[str, Callable[[], str | bytes]] = {
    **{kind: _not_utf8(kind) for kind in NOT_UTF8},
    "long_list_property": _long_list_property,
    "too_many_resources": _too_many_resources,
    "huge_string": _huge_string,
    "many_resources": _many_resources,
    "flat_flow_sequence": _flat_flow_sequence,
    "deep_json": _deep_json,
}


# -- running a case -----------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How a case ended.

    ``kind``: ``error`` (a HotplayError: the message is ``text``), ``exception``
    (anything else: ``text`` is the traceback), ``result`` (no exception: ``text``
    is the result as JSON), ``hang`` (killed at the hard cap) or ``died`` (the
    child ended without an answer, e.g. killed by a signal).
    """

    kind: str
    type: str
    text: str
    seconds: float = 0.0
    peak_mib: float = 0.0  # growth of the child's resident memory

    def describe(self) -> str:
        return f"{self.kind} {self.type} after {self.seconds:.1f}s: {self.text[:3000]}"


def _engine() -> tuple[Any, Any, Any, Any]:
    """The engine's entry points (imported once, before children are forked)."""
    # pylint: disable=import-outside-toplevel
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
        ApplyRequest,
        apply_stack,
    )
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import HotplayError
    from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore

    return ApplyRequest, apply_stack, HotplayError, SqliteStore


def apply_case(case: Case, root: Path, store_path: Path) -> Outcome:
    """Run ``case`` in this process, as the stack action plugin calls the engine."""
    ApplyRequest, apply_stack, HotplayError, SqliteStore = _engine()  # noqa: N806
    request = ApplyRequest(
        name=STACK_NAME,
        template=str(root / case.template),
        environment=[str(root / e) for e in case.environment],
        parameters=dict(case.parameters),
        file_roots=[str(root / r) for r in case.file_roots],
    )
    store = SqliteStore(str(store_path))
    try:
        result = apply_stack(store, request, "corpus")
    except HotplayError as error:
        return Outcome("error", type(error).__name__, str(error))
    except Exception as error:  # noqa: BLE001 - what the corpus is here to find
        return Outcome("exception", type(error).__name__, traceback.format_exc())
    finally:
        store.close()
    shown = {k: result.as_dict().get(k) for k in ("failed", "msg", "stack_status")}
    return Outcome("result", "", json.dumps(shown, default=str))


Runner = Callable[[Case, Path, Path], Outcome]


def run_isolated(case: Case, root: Path, store_path: Path, cap: float = HARD_CAP,
                 runner: Runner = apply_case) -> Outcome:
    """``runner`` (``apply_case``) in a forked child under ``MEMORY_BUDGET`` and
    ``cap`` seconds."""
    _engine()  # imported here, so that no child spends its time importing it
    reader, writer = os.pipe()
    started = time.monotonic()
    with warnings.catch_warnings():  # the child needs no lock another thread holds
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(reader)
        _child(runner, case, root, store_path, writer)
    os.close(writer)
    data, finished = _read_until(reader, started + cap)
    os.close(reader)
    if not finished:
        os.kill(pid, signal.SIGKILL)
    status = os.waitpid(pid, 0)[1]
    seconds = time.monotonic() - started
    if not finished:
        return Outcome("hang", "", f"still running after {cap:.0f}s", seconds)
    if not data:
        return Outcome("died", "", f"wait status {status}", seconds)
    answer = json.loads(data)
    return Outcome(**{**answer, "seconds": seconds})


def _child(runner: Runner, case: Case, root: Path, store_path: Path, writer: int) -> None:
    code = 0
    try:
        start_rss = _resident_mib()
        _limit_address_space(MEMORY_BUDGET)
        outcome = runner(case, root, store_path)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - start_rss
        answer = {"kind": outcome.kind, "type": outcome.type, "text": outcome.text,
                  "peak_mib": max(peak, 0.0)}
    except BaseException as error:  # noqa: BLE001 - report, whatever it is
        answer = {"kind": "exception", "type": type(error).__name__,
                  "text": "".join(traceback.format_exception(error))}
        code = 1
    try:
        payload = json.dumps(answer).encode()
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(code)  # pylint: disable=protected-access


def _read_until(fd: int, deadline: float) -> tuple[bytes, bool]:
    """Everything the child writes, and whether it finished before ``deadline``."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"", False
        ready = select.select([fd], [], [], left)[0]
        if not ready:
            return b"", False
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)


def _resident_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _limit_address_space(budget: int) -> None:
    """Allow ``budget`` bytes of address space beyond what is mapped now."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    limit = mapped + budget
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def store_rows(store_path: Path) -> dict[str, int]:
    """Rows per table of the store (a missing file has none)."""
    if not store_path.exists():
        return {table: 0 for table in STORE_TABLES}
    with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True) as db:
        return {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: S608
                for table in STORE_TABLES}


# -- what a good error looks like ---------------------------------------------------------


# A clear message is short: one error, not a dump of the input.
MAX_MESSAGE = 2000


def problems(case: Case, root: Path, outcome: Outcome, rows: Mapping[str, int]) -> list[str]:
    """Everything wrong with how ``case`` ended (empty: as it should)."""
    if outcome.kind != "error":
        return [f"expected one HotplayError, got {outcome.describe()}"]
    found: list[str] = []
    message = outcome.text
    named = str(root / case.file)
    if not message.startswith(named + ": "):
        found.append(f"the message does not start with the file {named}")
    rest = message[len(named) + 2:]
    if case.path is not None and case.path not in rest:
        found.append(f"the message does not name the place {case.path!r}")
    if case.message not in rest:
        found.append(f"the message does not say {case.message!r}")
    if case.secret and case.secret in message:
        found.append("the message shows the hidden value")
    if "Traceback" in message or len(message) > MAX_MESSAGE:
        found.append(f"the message is not one short error ({len(message)} characters)")
    written = {table: count for table, count in rows.items() if count}
    if written:
        found.append(f"the store was written: {written}")
    if found:
        found.append(f"message: {message[:MAX_MESSAGE]}")
    return found


def _run_all(ids: Sequence[str]) -> int:
    cases = [c for c in load_cases() if not ids or c.id in ids]
    failures = 0
    slowest, biggest = (0.0, ""), (0.0, "")
    with tempfile.TemporaryDirectory() as scratch:
        root = copy_corpus(Path(scratch))
        for index, case in enumerate(cases):
            materialize(case, root)
            store_path = Path(scratch) / f"store-{index}.db"
            outcome = run_isolated(case, root, store_path)
            found = problems(case, root, outcome, store_rows(store_path))
            failures += bool(found)
            slowest = max(slowest, (outcome.seconds, case.id))
            biggest = max(biggest, (outcome.peak_mib, case.id))
            mark = "FAIL" if found else "ok  "
            print(f"{mark} {case.id} ({outcome.seconds:.2f}s, +{outcome.peak_mib:.0f} MiB): "
                  f"{outcome.text.splitlines()[0][:300] if outcome.text else outcome.kind}")
            for problem in found[:-1]:
                print(f"       - {problem}")
    print(f"{len(cases)} cases, {failures} failing; slowest {slowest[0]:.2f}s ({slowest[1]}), "
          f"most memory +{biggest[0]:.0f} MiB ({biggest[1]})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(_run_all(sys.argv[1:]))
