"""Merging another clone's memory ref into ours (ref mode only): the one merge commit sync makes.

Runs under the same write lock as every memory write, after the crash journal is settled, and
moves the ref by compare-and-swap (libgit2 refuses a commit whose first parent is no longer the
tip). The trees are merged by ``treemerge.merge_memory`` (buckets by block id, then reconciled; a
non-memory file both sides changed differently stops the merge with nothing written). The code
branch and the working tree are never touched: in ref mode there is no working-tree copy of
memory.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import pygit2

from elfmem.errors import ConflictError, RepoStateError
from elfmem.store import faults
from elfmem.store import repo as repo_mod
from elfmem.store.recovery import Recovery
from elfmem.store.treemerge import merge_memory

_ATTEMPTS = 20


@dataclass(frozen=True, slots=True)
class RefMerge:
    kind: str
    """``none``, ``fast-forward``, ``created`` (we had no memory yet) or ``merge``."""
    commit: str | None
    """The memory ref's tip afterwards."""
    commits_in: int = 0
    """Commits of theirs we did not have."""
    events: list[str] = field(default_factory=list)


def _count(repo: pygit2.Repository, tip: str, hide: str | None) -> int:
    walker = repo.walk(tip)
    if hide is not None:
        walker.hide(hide)
    return sum(1 for _ in walker)


def merge_ref(repo: pygit2.Repository, theirs: str, agent: str, label: str) -> RefMerge:
    """Merge commit ``theirs`` into the memory ref (ref mode); never forced, retried on a race."""
    if not repo_mod.ref_mode(repo):
        raise RepoStateError(
            "memory is on the checked-out branch, and elfmem never merges a code branch.",
            "Use `git pull` for the memory files; `elfmem sync` carries the notes.",
        )
    ref = repo_mod.memory_ref(repo)
    state = repo_mod.state_dir(repo)
    with repo_mod.write_lock(repo):
        Recovery(repo, state, state / repo_mod.JOURNAL_FILE).run()
        for attempt in range(_ATTEMPTS):
            try:
                return _attempt(repo, ref, theirs, agent, label)
            except (pygit2.GitError, OSError):
                time.sleep(min(0.2, 0.002 * 2 ** min(attempt, 7)) * random.uniform(0.5, 1.5))
    raise ConflictError(
        f"{ref} kept moving under {_ATTEMPTS} attempts; nothing was merged.",
        "Run `elfmem sync` again once other writers pause.",
    )


def _attempt(repo: pygit2.Repository, ref: str, theirs: str, agent: str, label: str) -> RefMerge:
    tip = repo_mod.memory_commit(repo)
    other = repo.get(theirs)
    if not isinstance(other, pygit2.Commit):
        raise ConflictError(f"{theirs[:12]} is not a commit.", "Fetch again with `elfmem sync`.")
    if tip is None:
        repo.create_reference_direct(ref, other.id, False, message=f"elfmem: memory from {label}")
        return RefMerge("created", theirs, _count(repo, theirs, None))
    if str(tip.id) == theirs:
        return RefMerge("none", theirs)
    base_oid = repo.merge_base(tip.id, other.id)
    if base_oid is not None and str(base_oid) == theirs:
        return RefMerge("none", str(tip.id))
    commits_in = _count(repo, theirs, str(tip.id))
    if base_oid is not None and base_oid == tip.id:
        found = repo.references.get(ref)
        if found is None or found.target != tip.id:
            raise OSError(f"{ref} moved")
        found.set_target(other.id, f"elfmem: fast-forward from {label}")
        return RefMerge("fast-forward", theirs, commits_in)
    base = repo.get(base_oid) if base_oid is not None else None
    base_tree = str(base.tree.id) if isinstance(base, pygit2.Commit) else None
    merged = merge_memory(repo, base_tree, str(tip.tree.id), str(other.tree.id))
    tree_oid = pygit2.Oid(hex=merged.tree)
    author, committer = repo_mod.identities(repo, agent)
    now = int(time.time())
    sigs = (
        pygit2.Signature(author.name, author.email, now, 0),
        pygit2.Signature(committer.name, committer.email, now, 0),
    )
    body = "\n".join(merged.events[:50])
    message = (
        f"sync: merge memory from {label}\n\n"
        + (body + "\n\n" if body else "")
        + f"Elfmem-Op: sync-merge\nElfmem-Agent: {agent}\n"
    )
    faults.point("sync.merge-planned")
    commit = repo.create_commit(ref, *sigs, message, tree_oid, [tip.id, other.id])
    faults.point("sync.merge-ref")
    return RefMerge("merge", str(commit), commits_in, list(merged.events))
