from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from elfmem.index import DictSource, git_blob_oid
from elfmem.store.source import GitSource


def test_blob_oid_matches_git(tmp_path: Path) -> None:
    data = b"## heading\nbody \xc3\xa9\n"
    (tmp_path / "f").write_bytes(data)
    expected = subprocess.run(
        ["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert git_blob_oid(data) == expected
    assert git_blob_oid(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_dict_source_trees_diffs_and_worktree() -> None:
    source = DictSource.from_files({"notes/a/2026-01.md": b"a", "self.md": b"me", "x.txt": b"x"})
    first = source.head
    assert first is not None
    assert source.tree_files(first).keys() == {"notes/a/2026-01.md"}
    second = source.commit({"notes/a/2026-01.md": None, "log/b/2026-01.md": b"b"})
    assert source.changed_files(first, second) == {
        "notes/a/2026-01.md": None,
        "log/b/2026-01.md": git_blob_oid(b"b"),
    }
    stats = source.worktree_stats()
    assert stats is not None and set(stats) == {"log/b/2026-01.md"}
    source.write_file("log/b/2026-01.md", b"bb")
    after = source.worktree_stats()
    assert after is not None and after["log/b/2026-01.md"] != stats["log/b/2026-01.md"]
    assert source.read_worktree("log/b/2026-01.md") == b"bb"
    source.forget_tree(first)
    with pytest.raises(KeyError):
        source.changed_files(first, second)


def test_bare_dict_source_has_no_worktree() -> None:
    source = DictSource.from_files({"notes/a/2026-01.md": b"a"}, worktree=False)
    assert source.worktree_stats() is None
    with pytest.raises(FileNotFoundError):
        source.read_worktree("notes/a/2026-01.md")


def test_git_source_diffs_memory_trees_with_new_oids(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"), initial_head="main")

    def tree(files: dict[str, bytes]) -> str:
        index = pygit2.Index()
        for path, data in files.items():
            index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB))
        return str(index.write_tree(repo))

    first = tree({"notes/a/2026-01.md": b"a", "notes/c/2026-01.md": b"c", "self.md": b"me"})
    second = tree({"notes/c/2026-01.md": b"c2", "log/b/2026-01.md": b"b", "self.md": b"me2"})
    assert GitSource(repo).changed_files(first, second) == {
        "notes/a/2026-01.md": None,
        "notes/c/2026-01.md": git_blob_oid(b"c2"),
        "log/b/2026-01.md": git_blob_oid(b"b"),
    }
