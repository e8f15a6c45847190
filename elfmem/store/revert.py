"""Undo: revert an elfmem commit in memory and commit the result.

The textual revert (libgit2's ``revert_commit`` into an in-memory index) is tried first; it never
touches the working tree or leaves the repository mid-revert. When it conflicts, or a person has
uncommitted edits in the files involved, the undo is done block by block instead: each block the
commit touched is put back as it was before, provided nobody changed it since.
"""

from __future__ import annotations

import pygit2

from elfmem.block.layout import MEMORY_DIR, parse_bucket_path
from elfmem.block.model import Block
from elfmem.errors import UndoError
from elfmem.store.log import CommitInfo
from elfmem.store.plan import FileEdit, Plan
from elfmem.store.repo import memory_tree
from elfmem.store.tree import blob_at, blob_paths
from elfmem.store.view import MemoryView, parsed

RAW_UNDO_OPS = ("migrate", "init")
"""Operations whose undo also puts back the other files they changed under ``.elfmem`` (the
config, ``self.md``, files that are not buckets: a rename by ``init --name`` changes all three);
the others change only buckets when undone."""


def undo_plan(view: MemoryView, target: CommitInfo) -> Plan:
    repo = view.repo
    commit = repo.get(target.commit_id)
    if not isinstance(commit, pygit2.Commit) or len(commit.parents) != 1:
        raise UndoError(
            f"Commit {target.commit_id[:12]} is not a single-parent elfmem commit.",
            "Only elfmem's own operations can be undone; use `git revert` for anything else.",
        )
    plan = Plan(
        op="undo",
        subject=f'Revert "{target.subject}"',
        body=f"This reverts commit {target.commit_id}.",
        block_ids=list(target.block_ids),
        trailers=[("Elfmem-Reverts", target.commit_id)],
    )
    plan.files = _textual(view, commit) or _semantic(view, commit, target)
    plan.raw = _raw_files(view, commit) if target.op in RAW_UNDO_OPS else _roster(view, commit)
    return plan


def _raw_files(view: MemoryView, commit: pygit2.Commit) -> dict[str, bytes | None]:
    """Files under ``.elfmem`` that are not buckets, as the revert of ``commit`` leaves them;
    empty when the revert conflicts (then only the blocks are put back)."""
    repo = view.repo
    if view.commit is None:
        return {}
    index = repo.revert_commit(commit, view.commit)
    if index.conflicts is not None:
        return {}
    reverted = repo.get(index.write_tree(repo))
    assert isinstance(reverted, pygit2.Tree)
    old, new = _elfmem_files(repo, view.commit.tree), _elfmem_files(repo, reverted)
    raw: dict[str, bytes | None] = {}
    for path in sorted(set(old) | set(new)):
        inside = path.removeprefix(MEMORY_DIR + "/")
        if old.get(path) == new.get(path) or (inside != path and parse_bucket_path(inside)):
            continue
        oid = new.get(path)
        blob = repo.get(oid) if oid is not None else None
        raw[path] = blob.data if isinstance(blob, pygit2.Blob) else None
    return raw


def _elfmem_files(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, str]:
    """Every blob under ``.elfmem`` (the rest of a large repository is never walked)."""
    sub = repo.get(tree[".elfmem"].id) if ".elfmem" in tree else None
    return blob_paths(repo, sub, ".elfmem/") if isinstance(sub, pygit2.Tree) else {}


UNDOABLE_FILES = (".elfmem/peers.json",)
"""Files outside the memory folder that elfmem writes one commit at a time (the peer roster):
an undo puts them back as the undone commit's parent had them, when it changed them."""


def _roster(view: MemoryView, commit: pygit2.Commit) -> dict[str, bytes | None]:
    parent = commit.parents[0]
    out: dict[str, bytes | None] = {}
    for path in UNDOABLE_FILES:
        before, after = blob_at(view.repo, parent.tree, path), blob_at(view.repo, commit.tree, path)
        if (before and before.id) == (after and after.id):
            continue
        out[path] = before.data if before is not None else None
    return out


def _textual(view: MemoryView, commit: pygit2.Commit) -> dict[str, FileEdit] | None:
    repo = view.repo
    if view.commit is None:
        return None
    index = repo.revert_commit(commit, view.commit)
    if index.conflicts is not None:
        return None
    new_mem = memory_tree(repo.get(index.write_tree(repo)))  # type: ignore[arg-type]
    old = blob_paths(repo, view.tree)
    new = blob_paths(repo, new_mem)
    files: dict[str, FileEdit] = {}
    for relpath in sorted(set(old) | set(new)):
        if old.get(relpath) == new.get(relpath) or parse_bucket_path(relpath) is None:
            continue
        view.text(relpath)
        if relpath in view.carried:
            return None
        oid = new.get(relpath)
        if oid is None:
            files[relpath] = FileEdit(())
            continue
        blob = repo.get(oid)
        assert isinstance(blob, pygit2.Blob)
        blocks = parsed(oid, blob.data, f"{MEMORY_DIR}/{relpath}")
        files[relpath] = FileEdit(blocks, blob.data.decode("utf-8"))
    return files


def _blocks_of(
    repo: pygit2.Repository, commit: pygit2.Commit, paths: set[str]
) -> dict[str, tuple[str, Block]]:
    out: dict[str, tuple[str, Block]] = {}
    tree = memory_tree(commit)
    files = blob_paths(repo, tree)
    for relpath in paths:
        oid = files.get(relpath)
        if oid is None:
            continue
        blob = repo.get(oid)
        assert isinstance(blob, pygit2.Blob)
        for block in parsed(oid, blob.data, f"{MEMORY_DIR}/{relpath}"):
            out[block.id] = (relpath, block)
    return out


def _semantic(view: MemoryView, commit: pygit2.Commit, target: CommitInfo) -> dict[str, FileEdit]:
    repo = view.repo
    parent = commit.parents[0]
    before_files = blob_paths(repo, memory_tree(parent))
    after_files = blob_paths(repo, memory_tree(commit))
    touched = {
        p for p in set(before_files) | set(after_files) if before_files.get(p) != after_files.get(p)
    }
    before = _blocks_of(repo, parent, touched)
    after = _blocks_of(repo, commit, touched)
    contents: dict[str, list[Block]] = {}

    def file(relpath: str) -> list[Block]:
        if relpath not in contents:
            contents[relpath] = list(view.read(relpath))
        return contents[relpath]

    for block_id in target.block_ids:
        now = view.find(block_id)
        then = after.get(block_id)
        if (now[1] if now else None) != (then[1] if then else None):
            raise UndoError(
                f"Block {block_id} has changed since commit {target.commit_id[:12]}; "
                "undoing it would discard the later change.",
                "Undo the later commits first (`elfmem undo` repeatedly), "
                "or edit the block by hand.",
            )
        if now is not None:
            file(now[0])[:] = [b for b in file(now[0]) if b.id != block_id]
        if block_id in before:
            relpath, block = before[block_id]
            file(relpath).append(block)
    return {p: FileEdit(tuple(blocks)) for p, blocks in contents.items()}
