"""The git-native store: memory files on the branch, the ledger in notes. The only pygit2 user.

What only writing needs (the writer with its journal and plans, the revert of undo, the memory
view a write builds on) is imported when a write, an undo or a view asks for it: ``status`` and
``recall`` open a store on every call and never write through it. The names this package
exports load their modules on first use (PEP 562). A journal left by a killed write is still
finished at the opening, as before (``MemoryWriter``'s recovery).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from elfmem.errors import NotFound, RepoStateError, UndoError
from elfmem.lazyload import lazy_exports
from elfmem.store import elsewhere, pullsteps
from elfmem.store import repo as repo_mod
from elfmem.store.notes import LedgerBroken, NotesLedger, anchor_for_block
from elfmem.store.objects import (
    GC_AUTO_DEFAULT,
    finish_fanout,
    loose_object_estimate,
    objects_dir,
    prefer_loose_objects,
)
from elfmem.store.source import GitSource
from elfmem.store.spool import FLUSH_BYTES, Spool

if TYPE_CHECKING:
    from elfmem.store.locks import LockFile
    from elfmem.store.log import CommitInfo
    from elfmem.store.plan import FileEdit, Plan
    from elfmem.store.view import MemoryView
    from elfmem.store.writer import MemoryWriter, WriteResult

_HOMES = {
    "CommitInfo": "log",
    "FileEdit": "plan",
    "MemoryView": "view",
    "Plan": "plan",
    "WriteResult": "writer",
}
"""Exported names defined in another module of the package, loaded on first use."""


__getattr__ = lazy_exports(__name__, _HOMES, globals())


__all__ = [
    "CommitInfo",
    "FileEdit",
    "GitSource",
    "MemoryView",
    "Plan",
    "Store",
    "WriteResult",
    "anchor_for_block",
]


class Store:
    """One memory repository: its branch writer, its notes ledger and its spool."""

    def __init__(self, repo: pygit2.Repository, agent: str) -> None:
        prefer_loose_objects(repo)
        self.repo = repo
        self.agent = agent
        self._writer: MemoryWriter | None = None
        self.ledger = NotesLedger(repo)
        self.spool = Spool(repo_mod.state_dir(repo) / "spool.jsonl")
        if (repo_mod.state_dir(repo) / repo_mod.JOURNAL_FILE).exists():
            self._writer = self.writer  # a killed write: its recovery runs at the opening

    @property
    def writer(self) -> MemoryWriter:
        """The branch writer, made (and its recovery run) at the first write."""
        if self._writer is None:
            from elfmem.store.writer import MemoryWriter

            self._writer = MemoryWriter(self.repo, self.agent)
        return self._writer

    @classmethod
    def open(cls, path: Path | None, agent: str) -> Store:
        return cls(repo_mod.discover(path), agent)

    @classmethod
    def open_or_init(cls, path: Path, agent: str) -> tuple[Store, bool]:
        """Open the repository containing ``path``, creating one there if there is none."""
        try:
            return cls.open(path, agent), False
        except NotFound:  # no repository there (or no folder yet): make one
            return cls(repo_mod.init_repository(path), agent), True

    def close(self) -> None:
        """Wait for work this process left running in the background (the object folders)."""
        finish_fanout(objects_dir(self.repo))

    @property
    def workdir(self) -> Path | None:
        return repo_mod.workdir(self.repo)

    @property
    def root(self) -> Path:
        """The folder ``.elfmem`` lives in: the work tree, or the git dir of a bare repository."""
        return self.workdir or Path(self.repo.path)

    @property
    def state_dir(self) -> Path:
        return repo_mod.state_dir(self.repo)

    @property
    def memory_workdir(self) -> Path | None:
        """The work tree that holds memory files: None in ref mode or a bare repository."""
        return repo_mod.memory_workdir(self.repo)

    @property
    def ref_mode(self) -> bool:
        return repo_mod.ref_mode(self.repo)

    @property
    def branch(self) -> str:
        """The ref memory commits go to (``repo.memory_ref``)."""
        return repo_mod.memory_ref(self.repo)

    def write(
        self,
        build: Callable[[MemoryView], Plan | None],
        after: Callable[[WriteResult, str | None], None] | None = None,
    ) -> WriteResult | None:
        """Commit what ``build`` plans; ``after(result, parent_tree_oid)`` runs under the lock."""
        return self.writer.write(build, after)

    def view(self) -> MemoryView:
        from elfmem.store.view import MemoryView

        return MemoryView(self.repo, repo_mod.memory_commit(self.repo))

    def source(self, at: str | None = None) -> GitSource:
        return GitSource(self.repo, self.resolve(at) if at else None)

    def resolve(self, rev: str) -> pygit2.Commit:
        if rev.startswith("HEAD") and repo_mod.ref_mode(self.repo):
            rev = repo_mod.memory_ref(self.repo) + rev[4:]  # HEAD~2 counts memory commits
        try:
            obj = self.repo.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise NotFound(  # not a conflict: nothing is in the way, the name leads nowhere
                f"`{rev}` names no commit in this repository.",
                "Use a commit id, a branch, or HEAD~N (see `git log --oneline`).",
            ) from exc
        assert isinstance(commit, pygit2.Commit)
        return commit

    def commit_time(self, rev: str) -> int:
        return self.resolve(rev).commit_time

    def locks(self) -> list[LockFile]:
        """Git lock files present on the index, the branch and the notes ref (for doctor)."""
        from elfmem.store.locks import foreign_locks

        refs = [self.ledger.ref]
        try:
            refs.append(self.branch)
        except RepoStateError:
            pass
        return foreign_locks(self.repo, refs)

    def strays(self) -> tuple[list[str], list[str]]:
        """(symbolic links under ``.elfmem``, temporary files git tracks there): for doctor."""
        from elfmem.store import strays

        wd = self.workdir
        links = strays.links_under(wd) if wd is not None else []
        return links, strays.tracked_temporaries(self.repo) if wd is not None else []

    def write_lock_holder(self) -> str | None:
        """Who holds elfmem's write lock now (``pid N (command)``), or None (for doctor)."""
        from elfmem.store import writelock

        return writelock.held_by(self.state_dir / "write.lock")

    def loose_objects(self) -> tuple[int, int]:
        """(estimated loose objects, the ``gc.auto`` limit past which git packs them; 0: off)."""
        try:
            limit = self.repo.config.get_int("gc.auto")
        except (KeyError, ValueError, pygit2.GitError):
            limit = GC_AUTO_DEFAULT
        return loose_object_estimate(objects_dir(self.repo)), limit

    def memory_elsewhere(self) -> str | None:
        """The branch that holds the memory when this checkout holds none (``elsewhere.py``)."""
        return elsewhere.memory_elsewhere(self.repo)

    def memory_moved(self) -> elsewhere.Moved | None:
        """Another clone's move of the memory to a ref, met by a pull (``elsewhere.py``)."""
        return elsewhere.memory_moved(self.repo)

    def pull_advice(self) -> str | None:
        """What finishes a pull that stopped on memory files: following a move to a ref, or
        merging again with elfmem's driver; None when no pull stopped there."""
        moved = elsewhere.memory_moved(self.repo)
        if moved is not None:
            return moved.message
        paths = pullsteps.text_merged_memory(self.repo)
        return pullsteps.driver_steps(paths) if paths else None

    def committed_file(self, path: str) -> bytes | None:
        """``path`` (repository-relative) as the branch tip commits it; None when it has none.

        A bare repository has no work tree, so this is where its committed config is read.
        """
        from elfmem.store.tree import blob_at

        commit = repo_mod.memory_commit(self.repo)
        blob = blob_at(self.repo, commit.tree if commit is not None else None, path)
        return blob.data if blob is not None else None

    def memory_tree_oid(self) -> str | None:
        return repo_mod.memory_tree_oid_of(self.repo, repo_mod.memory_commit_oid(self.repo))

    def append_events(self, lines_by_block: Mapping[str, Sequence[str]], message: str) -> None:
        """Ledger lines for blocks (keyed by block id), written as one notes commit."""
        wanted = {b: list(lines) for b, lines in lines_by_block.items() if lines}
        if wanted:
            self.ledger.append_blocks(wanted, message)

    def flush_spool(self) -> int:
        """Move spooled events to the notes ref; while the ref is broken they stay in the
        spool (durable, and folded by every read), and every command warns (``ledger_broken``)."""
        if self.ledger.broken() is not None:
            return 0
        return self.spool.flush(self.ledger, "elfmem: flush ledger spool")

    def ledger_broken(self) -> LedgerBroken | None:
        """Why ``refs/notes/elfmem`` names no notes commit, or None when it is usable."""
        return self.ledger.broken()

    def append_or_spool(self, lines_by_block: Mapping[str, Sequence[str]], message: str) -> bool:
        """``append_events``, or, while the ledger ref is broken, the spool (False): for events of
        a write already committed, which must not turn into a failure of that write."""
        if self.ledger.broken() is None:
            self.append_events(lines_by_block, message)
            return True
        self.spool.extend(
            (anchor_for_block(block_id), line)
            for block_id, lines in lines_by_block.items()
            for line in lines
        )
        return False

    def spool_events(self, entries: Iterable[tuple[str, str]]) -> None:
        """Durably record high-rate events; flush them to the notes ref once the spool is large.

        Readers fold the spool on top of the notes, so an unbounded spool would make every read
        slower; a notes commit per thousand events keeps it short.
        """
        from elfmem.block.secrets import check_note_lines  # secret patterns: writes only

        entries = list(entries)
        check_note_lines((line for _, line in entries), f"{self.ledger.ref} event")  # flushed later
        self.spool.extend(entries)
        if self.spool.size() > FLUSH_BYTES:
            self.flush_spool()

    # ---- history and undo -------------------------------------------------------------------

    def history(self, block_id: str) -> list[CommitInfo]:
        from elfmem.store import log

        return log.block_history(self.repo, block_id)

    def recent(self, limit: int = 20) -> list[CommitInfo]:
        from elfmem.store import log

        return log.recent(self.repo, limit)

    def undo_target(self, commit: str | None) -> tuple[CommitInfo, str | None]:
        """The commit to undo and, when it was undone already, the undo that did it."""
        from elfmem.store import log

        if commit is None:
            info = log.last_undoable(self.repo)
            if info is None or self._made_the_memory(info):
                raise UndoError(
                    "Nothing left to undo: every elfmem operation since `init` is undone.",
                    "Nothing to do. To remove the memory itself, `git rm -r .elfmem` and commit.",
                )
            return info, None
        target = self.resolve(commit)
        info = log.describe(target)
        if info is None:
            raise UndoError(
                f"Commit {str(target.id)[:12]} was not made by elfmem "
                "(it has no Elfmem-Op trailer).",
                f"Use `git revert {str(target.id)[:12]}` for commits that are not elfmem's.",
            )
        if info.op == "undo":
            raise UndoError(
                f"Commit {info.commit_id[:12]} is itself an undo.",
                "To redo, run the original operation again.",
            )
        return info, log.reverted_by(self.repo, info.commit_id)

    def _made_the_memory(self, info: CommitInfo) -> bool:
        """The ``init`` that created ``.elfmem``: memory's history starts there, so undoing it
        is not an operation (a later ``init --name`` that renames is, and undo takes it back)."""
        if info.op != "init":
            return False
        commit = self.repo.get(info.commit_id)
        if not isinstance(commit, pygit2.Commit) or not commit.parents:
            return True
        return ".elfmem" not in commit.parents[0].tree

    def undo(
        self, target: CommitInfo, after: Callable[[WriteResult, str | None], None] | None = None
    ) -> WriteResult | None:
        from elfmem.store.revert import undo_plan

        return self.write(lambda view: undo_plan(view, target), after)

    def read_self(self) -> str:
        return GitSource(self.repo).read_self()
