"""Refusing to write on top of conflict markers a person committed.

A plain ``git merge`` without elfmem's driver, committed with ``git commit -a``, leaves
``<<<<<<<`` / ``=======`` / ``>>>>>>>`` regions in a memory file. Reads serve the blocks outside
them; a write on top would be worse than useless: the repair that redoes the merge must not
have to remove later commits (a ``git reset`` to before the merge drops every commit made since,
elfmem's included). So no memory commit is made while the memory tree holds a committed region.

Checking every bucket on every write would cost a read of the whole memory; instead the memory
tree last found clean is kept in ``<gitdir>/elfmem/conflicts-checked``. A write on that tree
checks nothing; after a commit elfmem did not make, only the files that changed since are read.
elfmem's own writes never make a region (the renderer escapes a body line that would open one),
so the tree a write makes is recorded as clean.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from elfmem.block.damage import conflict_recovery, find_conflicts
from elfmem.block.layout import MEMORY_DIR, parse_bucket_path
from elfmem.errors import RepoStateError
from elfmem.store.tree import blob_paths

STAMP = "conflicts-checked"


class CommittedConflict(RepoStateError):
    """A memory file in the commit a write would build on holds a git conflict region."""


_OPENER = b"<<<<<<<"


def _changed(repo: pygit2.Repository, old: object, tree: pygit2.Tree) -> list[str]:
    if isinstance(old, pygit2.Tree):
        return [d.new_file.path for d in old.diff_to_tree(tree).deltas if d.new_file.path]
    return list(blob_paths(repo, tree))


def _region(repo: pygit2.Repository, tree: pygit2.Tree, relpath: str) -> tuple[int, int] | None:
    if parse_bucket_path(relpath) is None:
        return None
    try:
        entry = tree[relpath]
    except KeyError:
        return None
    blob = repo.get(entry.id)
    if not isinstance(blob, pygit2.Blob) or _OPENER not in blob.data:
        return None
    lines = blob.data.decode("utf-8", "replace").replace("\r\n", "\n").split("\n")
    found = find_conflicts(lines)
    return (found[0].open + 1, found[0].close + 1) if found else None


def ensure_clean(repo: pygit2.Repository, state: Path, tree: pygit2.Tree | None) -> None:
    """Raise when ``tree`` (the memory subtree a write builds on) holds a committed region."""
    if tree is None:
        return
    stamp = state / STAMP
    try:
        known = stamp.read_text().strip()
    except OSError:
        known = ""
    if known == str(tree.id):
        return
    old = repo.get(known) if len(known) == 40 else None
    for relpath in _changed(repo, old, tree):
        region = _region(repo, tree, relpath)
        if region is not None:
            path = f"{MEMORY_DIR}/{relpath}"
            raise CommittedConflict(
                f"{path}:{region[0]}: a git conflict region (lines {region[0]}-{region[1]}) is "
                "committed; elfmem writes nothing on top of it, so that merging the file again "
                "never has to remove a later commit.",
                conflict_recovery(path),
            )
    mark_clean(state, str(tree.id))


def mark_clean(state: Path, tree_oid: str) -> None:
    """Record ``tree_oid`` as holding no committed region (a tree elfmem wrote, or checked)."""
    tmp = state / f".{STAMP}.{os.getpid()}.tmp"
    try:
        tmp.write_text(tree_oid + "\n")
        tmp.replace(state / STAMP)
    except OSError:
        pass  # read-only: the next write checks again
