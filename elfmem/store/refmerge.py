"""Merging another clone's memory ref into ours (ref mode only): the one merge commit sync makes.

Runs under the same write lock as every memory write, after the crash journal is settled, and
moves the ref by compare-and-swap (libgit2 refuses a commit whose first parent is no longer the
tip). The memory subtree is merged by ``treemerge.merge_memory``; other paths (the config,
``.gitattributes``) take the side that changed them, ours when both did. The code branch and
the working tree are never touched: in ref mode there is no working-tree copy of memory.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import pygit2

from elfmem.block.layout import MEMORY_DIR
from elfmem.errors import ConflictError, RepoStateError
from elfmem.store import faults
from elfmem.store import repo as repo_mod
from elfmem.store.objects import ObjectBatch
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


def _sub(commit: pygit2.Commit | None) -> str | None:
    tree = repo_mod.memory_tree(commit)
    return str(tree.id) if tree is not None else None


def _other_paths(
    repo: pygit2.Repository, base: pygit2.Commit, theirs: pygit2.Commit, ours: pygit2.Commit
) -> dict[tuple[str, ...], pygit2.Oid | None]:
    """Files outside the memory subtree that only theirs changed since the base."""

    def changed(a: pygit2.Commit, b: pygit2.Commit) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for delta in a.tree.diff_to_tree(b.tree).deltas:
            for path in {delta.old_file.path, delta.new_file.path}:
                if not path.startswith(MEMORY_DIR + "/"):
                    gone = delta.status == pygit2.enums.DeltaStatus.DELETED
                    out[path] = None if gone else str(delta.new_file.id)
        return out

    mine = changed(base, ours)
    return {
        tuple(path.split("/")): (pygit2.Oid(hex=oid) if oid else None)
        for path, oid in changed(base, theirs).items()
        if path not in mine
    }


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
        Recovery(repo, state, state / "journal.json").run()
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
    merged = merge_memory(repo, _sub(base), _sub(tip), _sub(other))
    batch = ObjectBatch(repo)
    changes: dict[tuple[str, ...], pygit2.Oid | None] = {}
    if isinstance(base, pygit2.Commit):
        changes.update(_other_paths(repo, base, other, tip))
    changes[tuple(MEMORY_DIR.split("/"))] = pygit2.Oid(hex=merged.tree)
    tree_oid = batch.edit(tip.tree, changes) or batch.tree([])
    batch.store()
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
