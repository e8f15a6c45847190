from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from elfmem.index import DictSource, git_blob_oid


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
    assert source.changed_paths(first, second) == {"notes/a/2026-01.md", "log/b/2026-01.md"}
    stats = source.worktree_stats()
    assert stats is not None and set(stats) == {"log/b/2026-01.md"}
    source.write_file("log/b/2026-01.md", b"bb")
    after = source.worktree_stats()
    assert after is not None and after["log/b/2026-01.md"] != stats["log/b/2026-01.md"]
    assert source.read_worktree("log/b/2026-01.md") == b"bb"
    source.forget_tree(first)
    with pytest.raises(KeyError):
        source.changed_paths(first, second)


def test_bare_dict_source_has_no_worktree() -> None:
    source = DictSource.from_files({"notes/a/2026-01.md": b"a"}, worktree=False)
    assert source.worktree_stats() is None
    with pytest.raises(FileNotFoundError):
        source.read_worktree("notes/a/2026-01.md")
