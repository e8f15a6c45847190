"""Where memory lives: on the checked-out branch (the default) or on a dedicated ref.

The mode is recorded per clone as ``elfmem.ref`` in ``.git/config`` (``init --ref NAME`` sets it;
a fresh clone whose branch has no ``.elfmem`` and whose remote has ``refs/heads/elfmem`` adopts
it by itself). ``elfmem mode ref`` moves a branch-mode memory onto the ref in two commits: one
root commit on the ref holding ``.elfmem`` exactly as the branch has it, then one commit on the
branch removing ``.elfmem`` (made by the writer, so the working tree and git's index follow).
``elfmem mode branch`` moves it back in one commit on the branch; the ref keeps its history.
Both directions lose nothing, and each is the other's undo.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from elfmem.errors import ConflictError, InvalidInput, RepoStateError
from elfmem.rhythms.results import Result
from elfmem.store import repo as repo_mod
from elfmem.store.plan import Plan
from elfmem.store.tracking import configure
from elfmem.store.tree import blob_paths

if TYPE_CHECKING:
    from elfmem.rhythms.core import Core
    from elfmem.store.view import MemoryView

ELFMEM_DIR = ".elfmem"


@dataclass(frozen=True)
class ModeResult(Result):
    mode: str
    """``ref`` or ``branch``: where memory lives now."""
    ref: str
    """The ref memory commits go to now."""
    moved: bool = False
    """True when this call moved the memory (False: it was there already)."""
    commits: list[str] | None = None
    """The commits the move made (on the memory ref, then on the branch)."""

    @property
    def summary(self) -> str:
        where = (
            f"Memory lives on its own ref {self.ref} (code history stays clean)"
            if self.mode == "ref"
            else f"Memory lives on the checked-out branch {self.ref}"
        )
        return where + (" — moved now." if self.moved else ".")


def current(core: Core) -> ModeResult:
    store = core.store
    return ModeResult("ref" if store.ref_mode else "branch", store.branch)


def _elfmem_tree(commit: pygit2.Commit | None) -> pygit2.Tree | None:
    if commit is None or ELFMEM_DIR not in commit.tree:
        return None
    entry = commit.tree[ELFMEM_DIR]
    return entry if isinstance(entry, pygit2.Tree) else None


def _root_tree(repo: pygit2.Repository, elfmem: pygit2.Tree) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    builder.insert(ELFMEM_DIR, elfmem.id, pygit2.enums.FileMode.TREE)
    return builder.write()


def _dirty(repo: pygit2.Repository) -> list[str]:
    return sorted(
        path
        for path, flags in repo.status().items()
        if path.startswith(ELFMEM_DIR + "/")
        and flags not in (pygit2.enums.FileStatus.IGNORED,)
        and flags != pygit2.enums.FileStatus.CURRENT
    )


def to_ref(core: Core, name: str | None = None) -> ModeResult:
    """Move a branch-mode memory onto ``name`` (default ``refs/heads/elfmem``); set the mode
    on a repository without memory yet."""
    store = core.store
    repo = store.repo
    ref = repo_mod.normalise_ref(name or repo_mod.DEFAULT_MEMORY_REF)
    configured = repo_mod.configured_ref(repo)
    if configured is not None:
        if configured != ref:
            raise ConflictError(
                f"memory already lives on {configured}.",
                "Move it back first (`elfmem mode branch`), then onto the new ref.",
            )
        return ModeResult("ref", ref)
    if repo.is_bare:
        raise InvalidInput(
            "a bare repository has no checked-out branch to keep memory away from.",
            "Use ref mode in a clone with a working tree.",
        )
    branch = repo_mod.branch_ref(repo)
    if branch == ref:
        raise InvalidInput(
            f"{ref} is the checked-out branch itself.",
            "Pick another name (the default is refs/heads/elfmem).",
        )
    commits = _move_to_ref(core, branch, ref)
    repo_mod.set_memory_ref(repo, ref)
    configure(repo)
    core.sync()
    return ModeResult("ref", ref, moved=bool(commits), commits=commits)


def _move_to_ref(core: Core, branch: str, ref: str) -> list[str]:
    """The two commits of a move (none when the branch has no memory: a new memory)."""
    store = core.store
    repo = store.repo
    elfmem = _elfmem_tree(repo_mod.head_commit(repo))
    if elfmem is None:
        return []
    dirty = _dirty(repo)
    if dirty:
        raise RepoStateError(
            f"{len(dirty)} memory file(s) have uncommitted changes: {', '.join(dirty[:3])}.",
            "Commit or discard them (`git status .elfmem`), then move the memory.",
        )
    commits: list[str] = []
    existing = repo.references.get(ref)
    if existing is None:
        agent = core.config.project.agent_name
        author, committer = repo_mod.identities(repo, agent)
        now = int(time.time())
        sig_a = pygit2.Signature(author.name, author.email, now, 0)
        sig_c = pygit2.Signature(committer.name, committer.email, now, 0)
        message = (
            f"mode: memory moves here from {branch}\n\nElfmem-Op: mode\nElfmem-Agent: {agent}\n"
        )
        oid = repo.create_commit(ref, sig_a, sig_c, message, _root_tree(repo, elfmem), [])
        commits.append(str(oid))
    else:
        tip = repo.get(existing.resolve().target)
        same = _elfmem_tree(tip if isinstance(tip, pygit2.Commit) else None)
        if same is None or same.id != elfmem.id:  # an interrupted move resumes; else refuse
            raise ConflictError(
                f"{ref} exists already and holds other content than this branch's memory.",
                "Pick another name with `--ref`, or delete that ref if it is not needed.",
            )
    removed = store.write(lambda view: _removal(view, ref))
    if removed is not None:
        commits.append(removed.commit_id)
    if store.workdir is not None:
        _prune_empty(store.workdir / ELFMEM_DIR)
    return commits


def _prune_empty(folder: Path) -> None:
    """Folders the move emptied (git tracks no folders); anything a person put there stays."""
    if not folder.is_dir():
        return
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        with contextlib.suppress(OSError):
            sub.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()


def _removal(view: MemoryView, ref: str) -> Plan | None:
    files = blob_paths(view.repo, _elfmem_tree(view.commit))
    if not files:
        return None
    plan = Plan(op="mode", subject=f"mode: memory moves to {ref}")
    plan.body = f"The memory now lives on {ref}; `elfmem mode branch` brings it back."
    plan.raw = {f"{ELFMEM_DIR}/{path}": None for path in files}
    return plan


def to_branch(core: Core) -> ModeResult:
    """Bring a ref-mode memory back onto the checked-out branch, in one commit there."""
    store = core.store
    repo = store.repo
    ref = repo_mod.configured_ref(repo)
    if ref is None:
        return ModeResult("branch", repo_mod.branch_ref(repo))
    branch = repo_mod.branch_ref(repo)
    tip = repo_mod.memory_commit(repo)
    elfmem = _elfmem_tree(tip)
    head = repo_mod.head_commit(repo)
    if _elfmem_tree(head) is not None and elfmem is not None:
        if _elfmem_tree(head).id != elfmem.id:  # type: ignore[union-attr]
            raise ConflictError(
                f"the branch {branch} holds a memory of its own, different from {ref}'s.",
                "Move or remove the branch's .elfmem first; nothing was changed.",
            )
    repo_mod.set_memory_ref(repo, None)
    commits: list[str] = []
    if elfmem is not None:
        files = blob_paths(repo, elfmem)

        def build(view: MemoryView) -> Plan | None:
            plan = Plan(op="mode", subject=f"mode: memory moves back from {ref}")
            plan.body = f"The memory lived on {ref} until {str(tip.id)[:12]}."  # type: ignore[union-attr]
            for path, oid in files.items():
                blob = repo.get(oid)
                assert isinstance(blob, pygit2.Blob)
                plan.raw[f"{ELFMEM_DIR}/{path}"] = blob.data
            return plan

        try:
            done = store.write(build)
        except BaseException:
            repo_mod.set_memory_ref(repo, ref)  # nothing moved: stay where we were
            raise
        if done is not None:
            commits.append(done.commit_id)
    core.sync()
    return ModeResult("branch", branch, moved=bool(commits), commits=commits)
