"""The reconciliation pass on the checked-out memory, in one commit through the writer.

After a merge, rebase or cherry-pick a block may sit in two files (moved on one side, edited on
the other) and a bucket may hold more than ``BUCKET_LIMIT`` blocks (both sides filled it); see
``block/reconcile.py`` for the rules. The post-merge and post-rewrite hooks run the pass; without
hooks the next elfmem command does, when the branch tip was made by a merge, a rebase or a
cherry-pick it has not checked yet (one read of the tip commit and the last reflog line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from elfmem.errors import BlockFormatError, ElfmemError
from elfmem.rhythms.result import Result
from elfmem.store import repo as repo_mod

if TYPE_CHECKING:
    from elfmem.block.model import Block
    from elfmem.rhythms.core import Core
    from elfmem.store.plan import Plan
    from elfmem.store.view import MemoryView

# The pass itself (block/reconcile.py, the tree reader, the plan) is imported when it runs:
# every command asks ``needs_check``, and almost always it says no.

CHECKED_FILE = "reconciled"
"""In the state folder: the tip commit whose memory the pass last checked."""
_TRIGGERS = ("merge", "pull", "rebase", "cherry-pick")


@dataclass(frozen=True)
class ReconcileResult(Result):
    commit_id: str | None
    """The reconciliation commit, or None when nothing needed it."""
    events: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def summary(self) -> str:
        if self.commit_id is None:
            return "Memory reconciled: one block per id, every bucket within its bound."
        head = f"Reconciled {len(self.files)} file(s) in {self.commit_id[:12]}:"
        return "\n".join([head, *(f"  {e}" for e in self.events)])


def merge_base_tree(repo: pygit2.Repository) -> str | None:
    """The root tree the tip's change started from, when it can be told safely: the merge base
    of a merge commit's parents, or of ``ORIG_HEAD`` and the tip after a rebase. None otherwise
    (a cherry-pick): then every distinct version is kept rather than one taken as unchanged."""
    tip = repo_mod.head_commit(repo)
    if tip is None:
        return None
    ids = list(tip.parent_ids)
    if len(ids) < 2 and "rebase" in _last_reflog(repo):
        try:
            ids = [repo.revparse_single("ORIG_HEAD").id, tip.id]
        except (KeyError, pygit2.GitError):
            return None
    if len(ids) < 2:
        return None
    try:
        base = repo.merge_base(ids[0], ids[1])
    except pygit2.GitError:
        return None
    return str(repo[base].peel(pygit2.Commit).tree_id) if base is not None else None


def reconcile_memory(core: Core, base_tree: str | None = None) -> ReconcileResult:
    """Run the pass on the branch tip and commit what it changes (``Elfmem-Op: reconcile``).

    ``base_tree``: the root tree the merge started from (``merge_base_tree``), None if unknown.
    A bucket that does not parse is left out and never rewritten.
    """
    from elfmem.block.reconcile import reconcile
    from elfmem.store.plan import FileEdit, Plan
    from elfmem.store.treemerge import memory_blocks

    repo = core.store.repo
    base = memory_blocks(repo, base_tree) if base_tree else None
    events: list[str] = []

    def build(view: MemoryView) -> Plan | None:
        files: dict[str, tuple[Block, ...]] = {}
        for path in view.paths():
            try:
                files[path] = view.read(path)
            except BlockFormatError:
                continue
        result = reconcile(files, base)
        events[:] = result.events
        if not result.changed:
            return None
        moved = sorted({b.id for bs in result.files.values() for b in bs})
        return Plan(
            op="reconcile",
            subject="reconcile: one block per id after a merge",
            files={p: FileEdit(bs) for p, bs in result.files.items()},
            block_ids=moved[:50],
            body="\n".join(events),
        )

    written = core.store.write(build, core.after_write)
    _mark_checked(repo)
    if written is None:
        return ReconcileResult(None, events)
    return ReconcileResult(written.commit_id, events, sorted(written.blobs))


def _state(repo: pygit2.Repository) -> Path:
    return repo_mod.state_dir(repo) / CHECKED_FILE


def _mark_checked(repo: pygit2.Repository) -> None:
    tip = repo_mod.head_commit(repo)
    path = _state(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(tip.id) if tip is not None else "", "utf-8")


def _last_reflog(repo: pygit2.Repository) -> str:
    """The message of HEAD's newest reflog entry, read from the end of the file only."""
    path = Path(repo.path) / "logs" / "HEAD"
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 4096))
            last = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    except OSError:
        return ""
    return last.partition(b"\t")[2].decode("utf-8", "replace")


def needs_check(repo: pygit2.Repository) -> bool:
    """The tip came from a merge, rebase or cherry-pick that the pass has not checked."""
    tip_oid = repo_mod.head_oid(repo)  # every sync asks: refs, a file, then a cached commit
    if tip_oid is None or repo_mod.in_progress(repo) is not None:
        return False  # mid-merge or mid-rebase: the hook after it finishes runs the pass
    try:
        if _state(repo).read_text("utf-8").strip() == str(tip_oid):
            return False
    except OSError:
        pass
    tip = repo_mod.commit_facts(repo, tip_oid)
    if tip is None:
        return False
    if tip.parents > 1:
        return True
    verb = _last_reflog(repo).split(":", 1)[0]
    return any(word in verb for word in _TRIGGERS)


def reconcile_if_needed(core: Core) -> ReconcileResult | None:
    """The pass, when ``needs_check`` says so; an error (mid-merge, locked) is a warning and
    the pass runs again at the next command."""
    repo = core.store.repo
    if not needs_check(repo):
        return None
    from elfmem.store.conflicts import CommittedConflict

    try:
        return reconcile_memory(core, merge_base_tree(repo))
    except CommittedConflict:
        return None  # every read already warns about the region, with its fix
    except ElfmemError as exc:
        core.warnings[f"reconciliation after a merge skipped: {exc}"] = None
        return None
