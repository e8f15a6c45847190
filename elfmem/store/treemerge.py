"""Merge two memory trees without a work tree: what ``sync`` does to a fetched memory ref.

libgit2's tree merge (rename detection off: a bucket emptied by dream is not a rename of the
bucket it went to) resolves every file only one side changed; each memory bucket both sides
changed is merged by block id (``block/merge.py``); then the reconciliation pass
(``block/reconcile.py``) leaves one block per id and no bucket past its bound. The result is
canonical: the same tree whichever side is ``ours`` (docs/merging.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pygit2
from pygit2.enums import FileMode, MergeFlag, ObjectType

from elfmem.block.layout import MEMORY_DIR, parse_bucket_path
from elfmem.block.merge import merge_bucket
from elfmem.block.model import Block
from elfmem.block.parse import parse_partial
from elfmem.block.reconcile import reconcile
from elfmem.block.render import render_file
from elfmem.errors import ConflictError

__all__ = ["TreeMerge", "memory_blocks", "merge_memory", "reconcile_tree"]

_PREFIX = MEMORY_DIR + "/"


@dataclass(frozen=True, slots=True)
class TreeMerge:
    """The merged root tree's oid and what the merge did, in words a person reads."""

    tree: str
    events: list[str] = field(default_factory=list)


def _tree(repo: pygit2.Repository, oid: str | None) -> pygit2.Tree:
    if oid is None:
        return repo[repo.TreeBuilder().write()].peel(pygit2.Tree)
    return repo[oid].peel(pygit2.Tree)


def _bytes(repo: pygit2.Repository, entry: pygit2.IndexEntry | None) -> bytes | None:
    return repo[entry.id].peel(pygit2.Blob).data if entry is not None else None


def merge_memory(
    repo: pygit2.Repository, base_tree: str | None, ours_tree: str, theirs_tree: str
) -> TreeMerge:
    """Three-way merge of two root trees (memory under ``.elfmem/memory``) into a new tree.

    Raises ``ConflictError`` when a file that is not a memory bucket (``self.md``, config, a
    file outside ``.elfmem``) was changed differently on both sides, and ``BlockFormatError``
    when a bucket both sides changed does not parse on one of them: neither can be merged
    without a person.
    """
    base = _tree(repo, base_tree)
    index = repo.merge_trees(
        base, _tree(repo, ours_tree), _tree(repo, theirs_tree), flags=MergeFlag(0)
    )
    events: list[str] = []
    unresolved: list[str] = []
    for ancestor, ours, theirs in list(index.conflicts or ()):
        some = ours or theirs or ancestor
        assert some is not None
        path = some.path
        rel = path[len(_PREFIX) :] if path.startswith(_PREFIX) else ""
        if not rel or parse_bucket_path(rel) is None:
            unresolved.append(path)
            continue
        merged = merge_bucket(
            _bytes(repo, ancestor), _bytes(repo, ours) or b"", _bytes(repo, theirs) or b"", rel
        )
        events.extend(merged.events)
        del index.conflicts[path]
        if merged.data:
            oid = repo.create_blob(merged.data)
            index.add(pygit2.IndexEntry(path, oid, FileMode.BLOB))
    if unresolved:
        raise ConflictError(
            f"both sides changed {', '.join(sorted(unresolved))} differently",
            "Only memory buckets merge by themselves: merge those files by hand (in a clone, "
            "with `git merge`), commit, and sync again.",
        )
    tree = index.write_tree(repo)
    base_blocks = memory_blocks(repo, base_tree)
    result = reconcile_tree(repo, str(tree), base_blocks)
    return TreeMerge(result.tree, events + result.events)


def _memory_files(repo: pygit2.Repository, tree_oid: str | None) -> Iterable[tuple[str, bytes]]:
    """(memory-relative path, bytes) of each bucket file in a root tree."""
    if tree_oid is None:
        return
    root = repo[tree_oid].peel(pygit2.Tree)
    try:
        memory = root[MEMORY_DIR]
    except KeyError:
        return
    stack: list[tuple[str, pygit2.Tree]] = [("", memory.peel(pygit2.Tree))]
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            name = f"{prefix}{entry.name}"
            if entry.type == ObjectType.TREE:
                stack.append((name + "/", repo[entry.id].peel(pygit2.Tree)))
            elif parse_bucket_path(name) is not None:
                yield name, repo[entry.id].peel(pygit2.Blob).data


def memory_blocks(repo: pygit2.Repository, tree_oid: str | None) -> dict[str, tuple[str, Block]]:
    """Block id → (memory-relative path, block) for every block that parses in a root tree."""
    out: dict[str, tuple[str, Block]] = {}
    for path, data in sorted(_memory_files(repo, tree_oid)):
        for block in parse_partial(data, path).blocks:
            out.setdefault(block.id, (path, block))
    return out


def reconcile_tree(
    repo: pygit2.Repository, tree_oid: str, base: dict[str, tuple[str, Block]] | None
) -> TreeMerge:
    """The reconciliation pass on a root tree: a new tree (or the same oid when nothing moved).

    A bucket that does not parse is left out of the pass and never rewritten.
    """
    files: dict[str, tuple[Block, ...]] = {}
    for path, data in _memory_files(repo, tree_oid):
        parsed = parse_partial(data, path)
        if not parsed.problems:
            files[path] = tuple(parsed.blocks)
    result = reconcile(files, base)
    if not result.changed:
        return TreeMerge(tree_oid, result.events)
    index = pygit2.Index()
    index.read_tree(repo[tree_oid].peel(pygit2.Tree))
    for path, blocks in result.files.items():
        full = _PREFIX + path
        if blocks:
            oid = repo.create_blob(render_file(blocks).encode("utf-8"))
            index.add(pygit2.IndexEntry(full, oid, FileMode.BLOB))
        elif full in index:
            index.remove(full)
    return TreeMerge(str(index.write_tree(repo)), result.events)
