"""Undo: revert an elfmem commit and commit the revert; a second undo of it is a clear no-op."""

from __future__ import annotations

from elfmem.rhythms.core import Core
from elfmem.rhythms.results import UndoResult


def undo(core: Core, commit: str | None = None) -> UndoResult:
    target, already = core.store.undo_target(commit)
    if already is not None:
        return UndoResult(target.commit_id, None, list(target.block_ids), already_undone_by=already)
    core.sync()
    result = core.store.undo(target, core.after_write)
    if result is None:
        return UndoResult(target.commit_id, None, list(target.block_ids), method="none")
    core.record(
        {
            b: [core.event("undo", b, of=target.commit_id, commit=result.commit_id)]
            for b in target.block_ids
        },
        "elfmem: undo",
    )
    return UndoResult(target.commit_id, result.commit_id, list(target.block_ids))
