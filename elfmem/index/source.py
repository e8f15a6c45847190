"""What the index reads memory from: a contract the store implements, plus an in-memory one.

The dependency is inverted so the index never imports pygit2: the store hands over trees, diffs and
working-tree files as plain data. ``DictSource`` is the same contract over dictionaries, for tests
and for throwaway previews (``--at REV``, ``index parity``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Protocol

from elfmem.block.layout import SELF_FILE


class MemorySource(Protocol):
    """Memory as git stores it. Paths are relative to ``.elfmem/memory`` and name ``*.md`` files
    other than ``self.md``. ``changed_files`` and ``tree_files`` raise ``KeyError`` for a tree the
    object store does not hold (for example one pruned by ``git gc``)."""

    def memory_tree_oid(self) -> str | None: ...

    def tree_files(self, tree_oid: str) -> dict[str, str]: ...

    def changed_files(self, old_tree_oid: str, new_tree_oid: str) -> dict[str, str | None]:
        """Files that differ between the trees → their blob oid in the new one (None: gone)."""
        ...

    def read_blob(self, oid: str) -> bytes: ...

    def worktree_stats(self) -> dict[str, tuple[int, int]] | None: ...

    def read_worktree(self, path: str) -> bytes: ...

    def blob_oid_of(self, data: bytes) -> str: ...


def git_blob_oid(data: bytes) -> str:
    """The oid git gives ``data`` as a blob in a SHA-1 repository."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def is_memory_file(path: str) -> bool:
    return path.endswith(".md") and path != SELF_FILE


class DictSource:
    """A ``MemorySource`` over dictionaries: trees of blob oids, a head, an optional working tree.

    ``commit`` makes a new tree from the head plus changes and (by default) checks it out; the
    ``write_file`` / ``delete_file`` pair play a person editing the working tree by hand. Working
    tree mtimes come from a counter, so every edit changes the recorded stat deterministically.
    """

    def __init__(self, *, worktree: bool = True) -> None:
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, dict[str, str]] = {}
        self.head: str | None = None
        self.worktree: dict[str, tuple[bytes, int]] | None = {} if worktree else None
        self._clock = 1_000_000

    @classmethod
    def from_files(cls, files: Mapping[str, bytes], *, worktree: bool = True) -> DictSource:
        source = cls(worktree=worktree)
        source.commit(files)
        return source

    def commit(self, changes: Mapping[str, bytes | None], *, checkout: bool = True) -> str:
        """Apply ``changes`` (``None`` deletes) to the head tree; returns the new tree oid."""
        files = dict(self.trees.get(self.head, {})) if self.head else {}
        for path, data in changes.items():
            if data is None:
                files.pop(path, None)
            else:
                oid = git_blob_oid(data)
                self.blobs[oid] = data
                files[path] = oid
        listing = "".join(f"{p}\0{o}\n" for p, o in sorted(files.items())).encode()
        tree_oid = hashlib.sha1(b"tree\0" + listing, usedforsecurity=False).hexdigest()
        self.trees[tree_oid] = files
        self.head = tree_oid
        if checkout and self.worktree is not None:
            for path, data in changes.items():
                if data is None:
                    self.delete_file(path)
                else:
                    self.write_file(path, data)
        return tree_oid

    def write_file(self, path: str, data: bytes) -> None:
        if self.worktree is None:
            raise FileNotFoundError(path)
        self._clock += 1
        self.worktree[path] = (data, self._clock)

    def delete_file(self, path: str) -> None:
        if self.worktree is not None:
            self.worktree.pop(path, None)

    def forget_tree(self, tree_oid: str) -> None:
        """Drop a tree from the store, as ``git gc`` prunes an unreachable one."""
        self.trees.pop(tree_oid, None)

    # MemorySource

    def memory_tree_oid(self) -> str | None:
        return self.head

    def tree_files(self, tree_oid: str) -> dict[str, str]:
        return {p: o for p, o in self.trees[tree_oid].items() if is_memory_file(p)}

    def changed_files(self, old_tree_oid: str, new_tree_oid: str) -> dict[str, str | None]:
        old, new = self.tree_files(old_tree_oid), self.tree_files(new_tree_oid)
        return {p: new.get(p) for p in old.keys() | new.keys() if old.get(p) != new.get(p)}

    def read_blob(self, oid: str) -> bytes:
        return self.blobs[oid]

    def worktree_stats(self) -> dict[str, tuple[int, int]] | None:
        if self.worktree is None:
            return None
        return {p: (m, len(d)) for p, (d, m) in self.worktree.items() if is_memory_file(p)}

    def read_worktree(self, path: str) -> bytes:
        if self.worktree is None or path not in self.worktree:
            raise FileNotFoundError(path)
        return self.worktree[path][0]

    def blob_oid_of(self, data: bytes) -> str:
        return git_blob_oid(data)
