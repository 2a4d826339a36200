#!/usr/bin/env python
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print what keeping secrets encrypted costs.

The key derivation (scrypt, once per task), then create / update / delete of N
wide TestResources whose every value holds a parameter: ``plain`` (a parameter
that is not hidden, no key) against ``sealed`` (a hidden parameter, with a store
key: every value sealed), in-process on a real SQLite file.
Usage: PYTHONPATH=.build/collections .venv/bin/python benchmarks/secrets_bench.py [--n 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import (
    ApplyRequest,
    DeleteRequest,
    apply_stack,
    delete_stack,
)
from ansible_collections.hotplay.stacks.plugins.plugin_utils.secrets import StoreKey, derive_keys, new_salt
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sealed import sealed
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


def _template(count: int, hidden: bool) -> dict:
    resources = {
        f"r{index}": {"type": "OS::Heat::TestResource",
                      "properties": {"value": {"list_join": ["-", [{"get_param": "pw"},
                                                                   {"get_param": "round"}, str(index)]]}}}
        for index in range(count)
    }
    return {"heat_template_version": "2021-04-16",
            "parameters": {"pw": {"type": "string", "hidden": hidden}, "round": {"type": "string"}},
            "resources": resources}


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def run(count: int, hidden: bool) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp())
    path = folder / "t.yaml"
    path.write_text(yaml.safe_dump(_template(count, hidden)))
    key = StoreKey("benchmark passphrase") if hidden else None
    store = sealed(SqliteStore(str(folder / "bench.db")), key)

    def apply(round_: str) -> None:
        result = apply_stack(store, ApplyRequest(name="b", template=str(path),
                                                 parameters={"pw": "s3cret-pw", "round": round_}), "bench")
        assert result.stack.status == "COMPLETE", result.stack.status_reason

    row = {"create_s": _timed(lambda: apply("1")), "update_s": _timed(lambda: apply("2")),
           "delete_s": _timed(lambda: delete_stack(store, DeleteRequest(name="b"), "bench"))}
    if hidden and b"s3cret-pw" in b"".join(f.read_bytes() for f in folder.glob("bench.db*")):
        raise SystemExit("the secret is in the store")
    store.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    derive_keys("benchmark passphrase", new_salt())
    print(f"key derivation (scrypt N=2^15 r=8 p=3, once per task): {time.perf_counter() - started:.3f} s")
    print(f"{'case':<14} {'create s':>9} {'update s':>9} {'delete s':>9}")
    for label, hidden in (("plain", False), ("sealed", True)):
        row = run(args.n, hidden)
        print(f"{label + '-' + str(args.n):<14} {row['create_s']:>9.3f} {row['update_s']:>9.3f} "
              f"{row['delete_s']:>9.3f}")


if __name__ == "__main__":
    main()
