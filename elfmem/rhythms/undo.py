"""Undo: revert an elfmem commit and commit the revert; a second undo of it is a clear no-op.

Two refusals need words that match the situation. Two undos racing for the same commit: the
loser's retry finds the blocks already put back, which looks like "changed since"; it is
reported as already undone. A block changed later by a commit made outside elfmem (a hand
edit the user committed): ``elfmem undo`` cannot revert that commit, so "undo the later commits
first" would repeat the same refusal; the advice names the commit and the command that works.
"""

from __future__ import annotations

from elfmem.errors import UndoError
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import UndoResult
from elfmem.store import log

_SCAN = 10_000  # commits walked back looking for the target, as ``last_undoable`` does


def undo(core: Core, commit: str | None = None) -> UndoResult:
    target, already = core.store.undo_target(commit)
    if already is not None:
        return UndoResult(target.commit_id, None, list(target.block_ids), already_undone_by=already)
    core.sync()
    try:
        result = core.store.undo(target, core.after_write)
    except UndoError as exc:
        raced = log.reverted_by(core.store.repo, target.commit_id)
        if raced is not None:  # another undo of the same commit landed first
            return UndoResult(
                target.commit_id, None, list(target.block_ids), already_undone_by=raced
            )
        raise _with_working_advice(core, target.commit_id, exc) from exc
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


def _outside_commits(core: Core, target: str) -> list[str]:
    """Commits after ``target`` on the branch that elfmem did not make (newest first)."""
    found: list[str] = []
    for commit in log.walk(core.store.repo, _SCAN):
        if str(commit.id) == target:
            return found
        if log.describe(commit) is None:
            found.append(str(commit.id))
    return []


def _with_working_advice(core: Core, target: str, exc: UndoError) -> UndoError:
    """``exc``, its recovery replaced when the later change came from outside elfmem."""
    outside = _outside_commits(core, target)
    if "changed since" not in exc.message or not outside:
        return exc
    shown = ", ".join(c[:12] for c in outside[:3]) + (" …" if len(outside) > 3 else "")
    return UndoError(
        exc.message + f" The later change is in commit(s) {shown}, made outside elfmem.",
        f"`elfmem undo` cannot revert those: run `git revert {outside[0][:12]}` first (then "
        f"`elfmem undo {target[:12]}`), or keep the hand edit and change the block directly "
        "with `elfmem edit ID` or `elfmem forget ID`.",
    )
