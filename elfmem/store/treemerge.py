"""Merging two versions of the memory subtree (stand-in until the block-aware merge lands).

``merge_memory`` three-way merges ``.elfmem/memory`` trees with libgit2's file-level merge: files
changed on one side only take that side, and files both sides changed are merged as text. Where
git's text merge would leave conflict markers it stops with a ``ConflictError`` and writes
nothing, so a bucket never holds markers. The block-aware merge replaces this body.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from elfmem.errors import ConflictError


@dataclass(frozen=True, slots=True)
class TreeMerge:
    tree: str
    """The merged memory subtree's oid."""
    events: list[str] = field(default_factory=list)
    """What the merge did, one line each."""


def merge_memory(
    repo: pygit2.Repository, base_tree: str | None, ours_tree: str | None, theirs_tree: str | None
) -> TreeMerge:
    """The merged ``.elfmem/memory`` subtree of ``ours`` and ``theirs`` since ``base``."""
    empty = str(repo.TreeBuilder().write())
    index = repo.merge_trees(base_tree or empty, ours_tree or empty, theirs_tree or empty)
    if index.conflicts is not None:
        paths = sorted({(o or t or b).path for b, o, t in index.conflicts if (o or t or b)})
        raise ConflictError(
            f"both sides changed the same lines of {len(paths)} memory file(s): "
            + ", ".join(paths[:5]),
            "Nothing was merged. Merge the memory ref by hand with git, then run the command "
            "again.",
        )
    tree = index.write_tree(repo)
    return TreeMerge(str(tree), [f"merged {base_tree or 'nothing'}: text merge of two sides"])
