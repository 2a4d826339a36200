"""A preview reads the stack's last revision alone, once: each revision holds a
whole old definition (template and all); reading every one of them, twice, while
the new definition was held, made a big preview keep the old definitions several
times over (issue 30 item 5; benchmarks/bench_preview.py measures it)."""

from __future__ import annotations

from pathlib import Path

import yaml

from ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine import ApplyRequest, apply_stack
from ansible_collections.hotplay.stacks.plugins.plugin_utils.store.sqlite import SqliteStore


class CountingStore(SqliteStore):
    """A store that counts its reads of revisions: all of a stack's, the last one."""

    revision_reads = 0
    last_revision_reads = 0

    def revisions(self, stack_id: str):  # type: ignore[no-untyped-def]
        self.revision_reads += 1
        return super().revisions(stack_id)

    def last_revision(self, stack_id: str):  # type: ignore[no-untyped-def]
        self.last_revision_reads += 1
        return super().last_revision(stack_id)


def write_template(folder: Path, value: str) -> str:
    resources = {f"r{i}": {"type": "OS::Heat::TestResource", "properties": {"value": f"{value}{i}"}}
                 for i in range(3)}
    path = folder / f"{value}.yaml"
    path.write_text(yaml.safe_dump({"heat_template_version": "2021-04-16", "resources": resources}))
    return str(path)


def test_a_preview_reads_the_last_revision_alone_once(tmp_path: Path) -> None:
    store = CountingStore(str(tmp_path / "store.db"))
    try:
        apply_stack(store, ApplyRequest(name="s", template=write_template(tmp_path, "v")), "test")
        apply_stack(store, ApplyRequest(name="s", template=write_template(tmp_path, "w")), "test")
        store.revision_reads = store.last_revision_reads = 0
        previewed = apply_stack(store, ApplyRequest(name="s", template=write_template(tmp_path, "x"),
                                                    check_mode=True), "test")
        assert previewed.plan is not None and previewed.changed
        assert previewed.plan.by_action()["updated"] == ["r0", "r1", "r2"]
        assert (store.revision_reads, store.last_revision_reads) == (0, 1)
        assert store.last_revision(previewed.stack.id).revision == 2
        # Unchanged: the same definition again is no change, read the same way.
        store.revision_reads = store.last_revision_reads = 0
        again = apply_stack(store, ApplyRequest(name="s", template=write_template(tmp_path, "w"),
                                                check_mode=True), "test")
        assert not again.changed
        assert (store.revision_reads, store.last_revision_reads) == (0, 1)
    finally:
        store.close()
