"""Every memory write is one commit on the memory ref (``repo.memory_ref``: the checked-out
branch, or the dedicated ref in ref mode), made without touching anything else.

The order is what makes a crash harmless (docs/crash.md): store the objects, journal the write,
take git's index lock, write the files, stage them in git's index, release the lock, and only
then move the branch (the acknowledgement), then drop the journal. Until the branch moves, git's
index stages the new memory, so a person's ``git commit`` in between commits it rather than
reverting it; once the branch moves there is nothing left to do. A process killed anywhere
leaves a journal that the next process to open the repository finishes (``recovery.py``). In ref
mode there is no working-tree copy of memory: files and git's index are left out, only the ref
moves.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import pygit2
from pygit2.enums import ObjectType

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.model import Block
from elfmem.block.render import render_file
from elfmem.block.text import shorten
from elfmem.errors import BlockFormatError, ConflictError
from elfmem.store import conflicts, faults, locks
from elfmem.store import repo as repo_mod
from elfmem.store.journal import Journal, PathState
from elfmem.store.objects import ObjectBatch, commit_bytes
from elfmem.store.plan import Plan
from elfmem.store.recovery import Recovery
from elfmem.store.strays import refuse_links
from elfmem.store.view import MemoryView, remember_parsed
from elfmem.store.worktree import Target, disk_oid, staged_oids, write_files, write_index

_MAX_ATTEMPTS = 40


@dataclass(frozen=True, slots=True)
class WriteResult:
    commit_id: str
    tree_oid: str
    paths: tuple[str, ...]
    carried: tuple[str, ...]
    blobs: dict[str, bytes | None]
    """Memory-relative path → the bytes now committed (None: deleted), for the index."""
    parent_tree_oid: str | None
    """The memory tree this commit was built on, so derived state can tell it is in step."""
    parsed: dict[str, tuple[str, tuple[Block, ...]]] = field(default_factory=dict)
    """Memory-relative path → (blob oid, blocks) for the files written: the index need not
    parse or hash them again."""


SUBJECT_WIDTH = 72
"""git's own advice for a subject line; longer ones are cut after a word (``shorten``)."""


def _losing(view: MemoryView, plan: Plan) -> frozenset[str]:
    """Repository paths of the plan whose new content drops a block id the file holds now."""
    losing = {path for path, data in plan.raw.items() if data is None}
    for relpath, edit in plan.files.items():
        try:
            before = {b.id for b in view.read(relpath)}
        except BlockFormatError:
            before = set()
        if before - {b.id for b in edit.blocks}:
            losing.add(f"{MEMORY_DIR}/{relpath}")
    return frozenset(losing)


def _message(plan: Plan, agent: str, carried: Sequence[str]) -> str:
    first = plan.subject.strip().splitlines()[0] if plan.subject.strip() else plan.op
    lines = [shorten(first, SUBJECT_WIDTH), ""]
    if plan.body:
        lines += [plan.body.rstrip(), ""]
    if carried:
        lines += ["Carries uncommitted hand edits to: " + ", ".join(sorted(carried)), ""]
    lines.append(f"Elfmem-Op: {plan.op}")
    lines += [f"Elfmem-Block: {b}" for b in dict.fromkeys(plan.block_ids)]
    lines += [f"{k}: {v}" for k, v in plan.trailers]
    lines.append(f"Elfmem-Agent: {agent}")
    return "\n".join(lines) + "\n"


@dataclass(slots=True)
class _Prepared:
    """One attempt's commit, stored but not yet on the branch."""

    ref: str
    tip: pygit2.Commit | None
    commit: pygit2.Oid
    signature: tuple[pygit2.Signature, pygit2.Signature]
    message: str
    tree: pygit2.Oid
    targets: dict[str, Target]
    result: WriteResult
    losing: frozenset[str] = frozenset()
    """Paths whose new content drops a block id (or that are deleted): written last."""


class MemoryWriter:
    """Turns plans into commits on the checked-out branch, serialised and compare-and-swapped."""

    def __init__(self, repo: pygit2.Repository, agent: str) -> None:
        self.repo = repo
        self.agent = agent
        self.state = repo_mod.state_dir(repo)
        self.journal = self.state / repo_mod.JOURNAL_FILE
        self.recovery = Recovery(repo, self.state, self.journal)
        self.recovery.on_open()

    def recover(self) -> None:
        """Finish (or, if it never reached the branch, take back) a killed process's write."""
        self.recovery.run()

    def write(
        self,
        build: Callable[[MemoryView], Plan | None],
        after: Callable[[WriteResult, str | None], None] | None = None,
    ) -> WriteResult | None:
        """Run ``build`` against the tip and commit its plan; None when it plans nothing.

        ``after(result, parent_memory_tree_oid)`` runs while the lock is still held, so derived
        state (the index) is updated in commit order.
        """
        with repo_mod.write_lock(self.repo):
            self.recovery.run()
            if not repo_mod.ref_mode(self.repo):  # a dedicated ref is not the user's checkout
                repo_mod.ensure_writable(self.repo)
            for attempt in range(_MAX_ATTEMPTS):
                result = self._attempt(build)
                if result is not False:
                    if isinstance(result, WriteResult) and result.tree_oid:
                        conflicts.mark_clean(self.state, result.tree_oid)
                    faults.point("write.done")
                    if isinstance(result, WriteResult) and after is not None:
                        after(result, result.parent_tree_oid)
                    return result
                time.sleep(min(0.2, 0.002 * 2 ** min(attempt, 7)) * random.uniform(0.5, 1.5))
        raise ConflictError(
            f"The branch kept moving under {_MAX_ATTEMPTS} attempts; nothing was written.",
            "Another program is committing continuously; run the command again when it stops.",
        )

    def _attempt(
        self, build: Callable[[MemoryView], Plan | None]
    ) -> WriteResult | Literal[False] | None:
        ref = repo_mod.memory_ref(self.repo)
        tip = repo_mod.memory_commit(self.repo)
        view = MemoryView(self.repo, tip)
        conflicts.ensure_clean(self.repo, self.state, view.tree)
        plan = build(view)
        if plan is None or not (plan.files or plan.raw):
            return None
        from elfmem.store.secretgate import check_plan  # secret patterns: writes only

        check_plan(plan, view)
        prepared = self._prepare(ref, tip, view, plan)
        if prepared is None:
            return None
        if view.workdir is not None:
            refuse_links(view.workdir, prepared.targets)
        journal, lock = self._journal(prepared, view)
        faults.point("write.journal")
        self._update_worktree(prepared, journal, lock)
        commit_id = self._move_branch(prepared)
        if commit_id is None:
            return self.recovery.after_lost_race(journal, prepared.result)
        faults.point("write.ref")
        self.journal.unlink(missing_ok=True)
        return replace(prepared.result, commit_id=commit_id)

    def _prepare(
        self, ref: str, tip: pygit2.Commit | None, view: MemoryView, plan: Plan
    ) -> _Prepared | None:
        """Store every object of the commit; nothing anybody reads has changed yet."""
        blobs: dict[str, bytes | None] = {}
        parsed: dict[str, tuple[str, tuple[Block, ...]]] = {}
        changes: dict[tuple[str, ...], pygit2.Oid | None] = {}
        batch = ObjectBatch(self.repo)
        for relpath, edit in plan.files.items():
            text = edit.text if edit.text is not None else render_file(edit.blocks)
            # An emptied bucket stays, as an empty file: were it deleted, a plain `git merge`
            # with a side that wrote to it would stop at a modify/delete conflict, which git
            # resolves without calling the merge driver (docs/merging.md).
            data = text.encode("utf-8")
            blobs[relpath] = data
            oid = batch.blob(data)
            remember_parsed(str(oid), edit.blocks)
            parsed[relpath] = (str(oid), edit.blocks)
            changes[tuple(f"{MEMORY_DIR}/{relpath}".split("/"))] = oid
        for path, raw in plan.raw.items():
            changes[tuple(path.split("/"))] = batch.blob(raw) if raw is not None else None
        base_tree = tip.tree if tip is not None else None
        tree_oid = batch.edit(base_tree, changes) or batch.tree([])
        if base_tree is not None and tree_oid == base_tree.id:
            return None
        wd = repo_mod.memory_workdir(self.repo)
        for rel in view.carried & set(plan.files):  # hand edits: kept so a rollback can restore
            if wd is not None and (wd / MEMORY_DIR / rel).is_file():
                batch.blob((wd / MEMORY_DIR / rel).read_bytes())
        author, committer = repo_mod.identities(self.repo, self.agent)
        now = int(time.time())
        sigs = (
            pygit2.Signature(author.name, author.email, now, 0),
            pygit2.Signature(committer.name, committer.email, now, 0),
        )
        carried = sorted(view.carried & set(plan.files))
        message = _message(plan, self.agent, carried)
        parents = [tip.id] if tip is not None else []
        # Stored with the rest, the commit is found among the loose objects when create_commit
        # writes it, so libgit2 does not rescan the pack folder looking for it.
        commit = batch.add(ObjectType.COMMIT, commit_bytes(tree_oid, parents, *sigs, message))
        batch.store()
        faults.point("write.planned")
        disk = {f"{MEMORY_DIR}/{p}": d for p, d in blobs.items()} | plan.raw
        made = {"/".join(path): str(o) if o is not None else None for path, o in changes.items()}
        mem_tree = repo_mod.memory_tree(self.repo.get(tree_oid))  # type: ignore[arg-type]
        result = WriteResult(
            str(commit),
            str(mem_tree.id) if mem_tree is not None else "",
            tuple(plan.files),
            tuple(carried),
            blobs,
            str(view.tree.id) if view.tree is not None else None,
            parsed,
        )
        targets = {path: (data, made[path]) for path, data in disk.items()}
        losing = _losing(view, plan)
        return _Prepared(ref, tip, commit, sigs, message, tree_oid, targets, result, losing)

    def _journal(
        self, prepared: _Prepared, view: MemoryView
    ) -> tuple[Journal, locks.IndexLock | None]:
        """Name the paths about to change: what disk and git's index hold now, and after."""
        wd = repo_mod.memory_workdir(self.repo)
        paths = list(prepared.targets)
        seen = {f"{MEMORY_DIR}/{p}": oid for p, oid in view.disk_oids.items()}
        staged = staged_oids(self.repo, paths) if wd is not None else {}
        states = {
            path: PathState(
                seen[path] if path in seen else (disk_oid(wd, path) if wd else None),
                staged.get(path),
                oid,
            )
            for path, (_, oid) in prepared.targets.items()
        }
        lock = locks.IndexLock(self.repo, self.state) if wd is not None else None
        tip = prepared.tip
        journal = Journal(
            prepared.ref,
            str(tip.id) if tip is not None else None,
            str(prepared.commit),
            states,
            lock.prepare() if lock is not None else None,
        )
        journal.write(self.journal)
        return journal, lock

    def _update_worktree(
        self, prepared: _Prepared, journal: Journal, lock: locks.IndexLock | None
    ) -> None:
        """Files, then git's index, under git's index lock; on any failure both are put back."""
        wd = repo_mod.memory_workdir(self.repo)
        try:
            locks.wait_for(locks.ref_lock_path(self.repo, prepared.ref), "the branch")
            if lock is None or wd is None:
                return
            lock.take()
            faults.point("write.index-locked")
            self._write_in_order(wd, prepared)
            faults.point("write.index")
        except BaseException:
            if lock is not None and lock.held:
                self.recovery.settle(journal, back=list(journal.paths), lock_held=True)
            self.journal.unlink(missing_ok=True)
            raise
        finally:
            if lock is not None:
                lock.release()
        faults.point("write.index-unlocked")

    def _write_in_order(self, wd: Path, prepared: _Prepared) -> None:
        """Files that gain blocks first, then git's index, then files that lose blocks.

        A kill at any moment, followed by a person's ``git add -A`` or ``git commit -a``, then
        commits a block twice at worst, never not at all: before a file loses a block, the
        file gaining it is on disk *and* staged (``commit -a`` skips untracked files)."""
        targets = prepared.targets
        first = {p: t for p, t in targets.items() if p not in prepared.losing}
        last = {p: t for p, t in targets.items() if p in prepared.losing}
        write_files(wd, first)
        if last:
            write_index(self.repo, self.state, targets, unwritten=set(last))
            write_files(wd, last)
        write_index(self.repo, self.state, last if last else targets)

    def _move_branch(self, prepared: _Prepared) -> str | None:
        """The compare-and-swap that commits the write; None when the branch moved meanwhile
        (or another program holds its lock: the next attempt says which)."""
        lock_path = locks.ref_lock_path(self.repo, prepared.ref)
        faults.point("write.ref-lock", leave=lambda: lock_path.touch(exist_ok=False))
        tip = prepared.tip
        parents = [tip.id] if tip is not None else []
        try:
            commit = self.repo.create_commit(
                prepared.ref, *prepared.signature, prepared.message, prepared.tree, parents
            )
        except (pygit2.GitError, OSError):
            return None
        return str(commit)
