"""The store's side of the index contract: memory trees, diffs and working-tree files as plain
data."""

from __future__ import annotations

import os

import pygit2

from elfmem.block.layout import MEMORY_DIR, SELF_FILE
from elfmem.store.repo import (
    memory_commit,
    memory_commit_oid,
    memory_tree,
    memory_tree_oid_of,
    memory_workdir,
)
from elfmem.store.tree import blob_paths


def _is_memory_file(relpath: str) -> bool:
    return relpath.endswith(".md") and relpath != SELF_FILE


class GitSource:
    """Memory as of the branch tip (with the working tree), or of a fixed commit (without)."""

    def __init__(self, repo: pygit2.Repository, commit: pygit2.Commit | None = None) -> None:
        self.repo = repo
        self._fixed = commit
        wd = memory_workdir(repo)
        self._root = wd / MEMORY_DIR if wd is not None and commit is None else None
        if self._root is not None and wd is not None and _through_link(wd, MEMORY_DIR):
            self._root = None  # a linked memory folder is never read: the tree is (doctor says)

    def _commit(self) -> pygit2.Commit | None:
        return self._fixed if self._fixed is not None else memory_commit(self.repo)

    def memory_tree_oid(self) -> str | None:
        if self._fixed is None:  # every sync asks: answered from the refs and a cache
            return memory_tree_oid_of(self.repo, memory_commit_oid(self.repo))
        tree = memory_tree(self._fixed)
        return str(tree.id) if tree is not None else None

    def tree_files(self, tree_oid: str) -> dict[str, str]:
        tree = self.repo.get(tree_oid)
        files = blob_paths(self.repo, tree if isinstance(tree, pygit2.Tree) else None)
        return {p: oid for p, oid in files.items() if _is_memory_file(p)}

    def changed_files(self, old_tree_oid: str, new_tree_oid: str) -> dict[str, str | None]:
        """Memory files that differ between two trees → their oid in the new one (None: gone)."""
        old = self.repo.get(old_tree_oid)
        new = self.repo.get(new_tree_oid)
        if not isinstance(old, pygit2.Tree) or not isinstance(new, pygit2.Tree):
            raise KeyError(old_tree_oid if not isinstance(old, pygit2.Tree) else new_tree_oid)
        out: dict[str, str | None] = {}
        for delta in old.diff_to_tree(new).deltas:
            before, after = delta.old_file, delta.new_file
            if _is_memory_file(before.path):
                out.setdefault(before.path, None)
            if _is_memory_file(after.path) and delta.status != pygit2.enums.DeltaStatus.DELETED:
                out[after.path] = str(after.id)
        return out

    def read_blob(self, oid: str) -> bytes:
        blob = self.repo.get(oid)
        if not isinstance(blob, pygit2.Blob):
            raise KeyError(oid)
        return blob.data

    def worktree_stats(self) -> dict[str, tuple[int, int]] | None:
        """(mtime ns, size) of every memory file on disk, by memory-relative path.

        Every sync runs this (uncommitted hand edits must be seen), so it stays on plain strings
        and ``os.scandir``: one ``stat`` per file and nothing else.
        """
        if self._root is None:
            return None
        out: dict[str, tuple[int, int]] = {}
        stack = [(os.fspath(self._root), "")]
        while stack:
            folder, rel = stack.pop()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        name = entry.name
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((entry.path, f"{rel}{name}/"))
                        elif name.endswith(".md") and not name.startswith("."):
                            path = rel + name
                            if _is_memory_file(path):
                                st = entry.stat(follow_symlinks=False)
                                out[path] = (st.st_mtime_ns, st.st_size)
            except (FileNotFoundError, NotADirectoryError):
                continue
        return out

    def read_worktree(self, path: str) -> bytes:
        """The file on disk; through a link, the committed file instead: elfmem follows no link
        under .elfmem/ (doctor names it), so a link reads as no hand edit."""
        if self._root is None:
            raise FileNotFoundError(path)
        if _through_link(self._root, path):
            return self._committed(path)
        return (self._root / path).read_bytes()

    def _committed(self, path: str) -> bytes:
        tree = memory_tree(self._commit())
        try:
            entry = tree[path] if tree is not None else None
        except KeyError:
            entry = None
        blob = self.repo.get(entry.id) if entry is not None else None
        if not isinstance(blob, pygit2.Blob):
            raise FileNotFoundError(path)
        return blob.data

    def blob_oid_of(self, data: bytes) -> str:
        return str(pygit2.hash(data))

    def read_self(self) -> str:
        """The raw constitution, from disk when it has a working tree, else from the tree."""
        if self._root is not None and not _through_link(self._root, SELF_FILE):
            try:
                return (self._root / SELF_FILE).read_text(encoding="utf-8")
            except FileNotFoundError:
                pass
        tree = memory_tree(self._commit())
        if tree is None:
            return ""
        try:
            blob = self.repo.get(tree[SELF_FILE].id)
        except KeyError:
            return ""
        return blob.data.decode("utf-8", "replace") if isinstance(blob, pygit2.Blob) else ""


def _through_link(base: os.PathLike[str] | str, rel: str) -> bool:
    """Some component of ``rel`` under ``base`` is a symbolic link on disk."""
    here = os.fspath(base)
    for part in rel.split("/"):
        here = os.path.join(here, part)
        if os.path.islink(here):
            return True
    return False
