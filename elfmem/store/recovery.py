"""Finishing a write that a killed process left half done, from its journal.

Runs when any process opens the repository (reads included) and before every write. The rule
is the one the write order makes true: if the branch still points where the write began, the
write is finished (files, git's index, then the branch moves to the stored commit); if the
branch holds the write's commit, only the files and index are checked; if the branch moved
elsewhere (a person's commit, a pull, a reset), each path keeps the write where the new tip
holds it and is taken back where it does not. A path is touched only while the working tree
and git's index still hold what the journal recorded for it, so a hand edit or a person's
staged change made since is never overwritten.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar

import pygit2

from elfmem.errors import ElfmemError
from elfmem.store import locks
from elfmem.store import repo as repo_mod
from elfmem.store.journal import Journal, read
from elfmem.store.objects import ObjectBatch
from elfmem.store.tree import blob_at
from elfmem.store.worktree import (
    Target,
    atomic_write,
    disk_oid,
    remove_temporaries,
    write_index,
)

R = TypeVar("R", bound=Any)


class Recovery:
    def __init__(self, repo: pygit2.Repository, state: Path, journal: Path) -> None:
        self.repo = repo
        self.state = state
        self.path = journal

    def on_open(self) -> None:
        """Finish a pending journal if no live writer holds the write lock; a repository that
        cannot be written to (read-only, locked by git) is left for the next write."""
        if not self.path.exists():
            return
        try:
            with repo_mod.try_write_lock(self.repo) as held:
                if held:
                    self.run()
        except (ElfmemError, OSError, pygit2.GitError):
            return

    def run(self) -> None:
        """The caller holds the write lock, so the journal's writer is gone."""
        journal = read(self.path)
        if journal is None or journal.owner_alive():
            return
        self._clear_own_locks(journal)
        locks.wait_for(locks.ref_lock_path(self.repo, journal.ref), "the branch")
        ref = self.repo.references.get(journal.ref)
        tip = str(ref.target) if ref is not None else None
        worktree = self._on_branch(journal)
        paths = list(journal.paths)
        if tip == journal.base and pygit2.Oid(hex=journal.commit) in self.repo:
            if worktree and not self._untouched_since(journal):
                self.settle(journal, back=paths)  # never acknowledged: the hand edit wins
            else:
                if worktree:
                    self.settle(journal, forward=paths)
                self._move(journal, ref)
        elif tip == journal.commit:
            if worktree:
                self.settle(journal, forward=paths)
        elif worktree and not self._finish_on_top(journal, ref, tip):
            self._settle_against(journal, tip)
        self.path.unlink(missing_ok=True)

    def _finish_on_top(
        self, journal: Journal, ref: pygit2.Reference | None, tip: str | None
    ) -> bool:
        """A person's commit on top of the base took part of the write (``git add -A`` after
        the kill): commit the rest on top, with the write's own message, so no block is left
        in two files. Only when every path the commit did not take is still as the base had it.
        """
        remaining = self._remaining(journal, tip)
        if ref is None or tip is None or not remaining:
            return False
        head = self.repo.get(tip)
        written = self.repo.get(journal.commit)
        if not isinstance(head, pygit2.Commit) or not isinstance(written, pygit2.Commit):
            return False
        batch = ObjectBatch(self.repo)
        changes = {
            tuple(path.split("/")): (
                pygit2.Oid(hex=after) if (after := journal.paths[path].after) else None
            )
            for path in remaining
        }
        tree = batch.edit(head.tree, changes) or batch.tree([])
        batch.store()
        commit = self.repo.create_commit(
            None, written.author, written.committer, written.message, tree, [head.id]
        )
        try:
            ref.set_target(commit, "elfmem: finish a write a crash left half committed")
        except (pygit2.GitError, OSError):
            return False  # the branch moved again: the paths are settled against it instead
        self.settle(journal, forward=list(journal.paths))
        return True

    def _remaining(self, journal: Journal, tip: str | None) -> list[str]:
        """The paths a commit on top of the journal's base left as the base had them, when it
        took the write's other paths; empty when that is not the case."""
        if tip is None or journal.base is None:
            return []
        head, base = self.repo.get(tip), self.repo.get(journal.base)
        if not isinstance(head, pygit2.Commit) or not isinstance(base, pygit2.Commit):
            return []
        if not self.repo.descendant_of(head.id, base.id):
            return []
        taken, remaining = [], []
        for path, state in journal.paths.items():
            now = blob_at(self.repo, head.tree, path)
            was = blob_at(self.repo, base.tree, path)
            now_oid = str(now.id) if now is not None else None
            was_oid = str(was.id) if was is not None else None
            if was_oid == state.after:
                continue  # the write left it as it was
            if now_oid == state.after:
                taken.append(path)
            elif now_oid == was_oid:
                if state.after is not None and pygit2.Oid(hex=state.after) not in self.repo:
                    return []
                remaining.append(path)
            else:
                return []  # changed since in another way: a person's own edit
        return remaining if taken else []

    def _untouched_since(self, journal: Journal) -> bool:
        """No path was edited by hand after the kill: each holds the before or after blob."""
        wd = repo_mod.memory_workdir(self.repo)
        return wd is None or all(
            disk_oid(wd, path) in (st.before, st.after) for path, st in journal.paths.items()
        )

    def after_lost_race(self, journal: Journal, result: R) -> R | Literal[False]:
        """The branch moved between staging and the compare-and-swap. When the new tip already
        holds every path as this write made it (a person's ``git commit`` took what git's index
        staged), the write is done; otherwise it is taken back and the writer tries again."""
        ref = self.repo.references.get(journal.ref)
        tip = str(ref.target) if ref is not None else None
        landed = self._settle_against(journal, tip)
        self.path.unlink(missing_ok=True)
        if landed and tip is not None:
            return replace(result, commit_id=tip)
        return False

    def _settle_against(self, journal: Journal, tip: str | None) -> bool:
        tree = self.repo.get(tip).tree if tip is not None else None  # type: ignore[union-attr]
        forward: list[str] = []
        back: list[str] = []
        for path, state in journal.paths.items():
            blob = blob_at(self.repo, tree, path)
            (forward if (str(blob.id) if blob else None) == state.after else back).append(path)
        if repo_mod.memory_workdir(self.repo) is not None:
            self.settle(journal, forward=forward, back=back)
        return not back

    def settle(
        self,
        journal: Journal,
        forward: list[str] | None = None,
        back: list[str] | None = None,
        lock_held: bool = False,
    ) -> None:
        """Bring ``forward`` paths to the journal's new blobs and ``back`` paths to what they
        held before, each only where disk and index still hold one of the journal's states."""
        wd = repo_mod.memory_workdir(self.repo)
        if wd is None:
            return
        disk: dict[str, Target] = {}
        staged: dict[str, Target] = {}
        allowed: dict[str, tuple[str | None, ...]] = {}
        for path in forward or []:
            st = journal.paths[path]
            now = disk_oid(wd, path)
            if now != st.after and now in (st.before, st.after):
                disk[path] = (self._bytes(st.after), st.after)
            staged[path] = (self._bytes(st.after), st.after)
            allowed[path] = (st.staged, st.after)
        for path in back or []:
            st = journal.paths[path]
            if st.after != st.before and disk_oid(wd, path) == st.after:
                if st.before is None or pygit2.Oid(hex=st.before) in self.repo:
                    disk[path] = (self._bytes(st.before), st.before)
            staged[path] = (self._bytes(st.staged), st.staged)
            allowed[path] = (st.after,) if st.after != st.staged else ()
        if staged:
            self._apply(wd, disk, staged, allowed, lock_held)

    def _apply(
        self,
        wd: Path,
        disk: dict[str, Target],
        staged: dict[str, Target],
        allowed: dict[str, tuple[str | None, ...]],
        lock_held: bool,
    ) -> None:
        """Files, then git's index, under git's index lock taken first: both change or
        neither."""
        lock = None if lock_held else locks.IndexLock(self.repo, self.state)
        try:
            if lock is not None:
                lock.prepare()
                lock.take()
            for path, (data, _) in disk.items():
                if data is None:
                    (wd / path).unlink(missing_ok=True)
                else:
                    atomic_write(wd / path, data)
            write_index(self.repo, self.state, staged, _keeper(staged, allowed))
        finally:
            if lock is not None:
                lock.release()

    def _bytes(self, oid: str | None) -> bytes | None:
        if oid is None:
            return None
        blob = self.repo.get(oid)
        return blob.data if isinstance(blob, pygit2.Blob) else None

    def _move(self, journal: Journal, ref: pygit2.Reference | None) -> None:
        """Move the branch to the stored commit, compare-and-swapped against the journal's base."""
        oid = pygit2.Oid(hex=journal.commit)
        message = "elfmem: finish a write interrupted by a crash"
        if ref is None:
            self.repo.create_reference_direct(journal.ref, oid, False, message=message)
        else:
            ref.set_target(oid, message)

    def _on_branch(self, journal: Journal) -> bool:
        """The working tree belongs to the journaled branch (nobody switched since)."""
        try:
            on = repo_mod.memory_workdir(self.repo) is not None
            return on and repo_mod.branch_ref(self.repo) == journal.ref
        except ElfmemError:
            return False

    def _clear_own_locks(self, journal: Journal) -> None:
        """Delete the locks the dead writer provably held, and its scratch files."""
        index_lock = locks.index_lock_path(self.repo)
        if locks.is_identity(index_lock, journal.index_lock):
            index_lock.unlink(missing_ok=True)
        ref_lock = locks.ref_lock_path(self.repo, journal.ref)
        if locks.is_own_ref_lock(ref_lock, journal.commit, journal.time_ns):
            ref_lock.unlink(missing_ok=True)
        for name in (f"index.lock.{journal.pid}", f"index.{journal.pid}.tmp"):
            (self.state / name).unlink(missing_ok=True)
            (self.state / f"{name}.lock").unlink(missing_ok=True)
        wd = repo_mod.memory_workdir(self.repo)
        if wd is not None:
            index = self.repo.index
            index.read(False)
            remove_temporaries(wd, list(journal.paths), lambda rel: rel in index)


def _keeper(
    staged: dict[str, Target], allowed: dict[str, tuple[str | None, ...]]
) -> Callable[[str, str | None], bool]:
    """Change an index entry only from one of the journal's states, and only if it differs."""

    def keep(rel: str, now: str | None) -> bool:
        return now in allowed[rel] and now != staged[rel][1]

    return keep
