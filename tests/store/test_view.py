"""What a write plans against: the committed file, or the working-tree copy when it differs."""

from __future__ import annotations

from pathlib import Path

import pygit2

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.model import Block
from elfmem.block.render import render_file
from elfmem.store.view import MemoryView
from tests.conftest import git

BUCKET = "log/knowledge/2026-11.md"
COMMITTED = render_file([Block(id="0123456789abcdef", content="committed")]).encode()
EDITED = render_file([Block(id="0123456789abcdef", content="edited by hand")]).encode()


def _repo(tmp_path: Path) -> tuple[pygit2.Repository, Path]:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    bucket = root / MEMORY_DIR / BUCKET
    bucket.parent.mkdir(parents=True)
    bucket.write_bytes(COMMITTED)
    (root / MEMORY_DIR / "top.md").write_bytes(b"top\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memory")
    return pygit2.Repository(str(root)), root


def _view(repo: pygit2.Repository) -> MemoryView:
    return MemoryView(repo, repo.head.peel(pygit2.Commit))


def test_an_unchanged_file_is_the_committed_blob(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)
    view = _view(repo)
    assert view.text(BUCKET) == COMMITTED.decode()
    assert view.carried == set()
    assert view.disk_oids[BUCKET] == str(pygit2.hash(COMMITTED)) == view.blob_oid(BUCKET)
    assert view.text("top.md") == "top\n"  # a file beside no folder


def test_a_hand_edit_is_read_from_disk_and_carried(tmp_path: Path) -> None:
    repo, root = _repo(tmp_path)
    (root / MEMORY_DIR / BUCKET).write_bytes(EDITED)
    view = _view(repo)
    assert view.text(BUCKET) == EDITED.decode()
    assert [b.content for b in view.read(BUCKET)] == ["edited by hand"]
    assert view.carried == {BUCKET}
    assert view.disk_oids[BUCKET] == str(pygit2.hash(EDITED))


def test_an_emptied_file_is_a_hand_edit_and_a_deleted_one_is_not(tmp_path: Path) -> None:
    repo, root = _repo(tmp_path)
    (root / MEMORY_DIR / BUCKET).write_bytes(b"")
    emptied = _view(repo)
    assert emptied.text(BUCKET) == "" and emptied.carried == {BUCKET}
    (root / MEMORY_DIR / BUCKET).unlink()
    deleted = _view(repo)
    assert deleted.text(BUCKET) == COMMITTED.decode() and deleted.carried == set()
    assert deleted.disk_oids[BUCKET] is None


def test_a_file_only_on_disk_is_carried_unless_it_is_empty(tmp_path: Path) -> None:
    repo, root = _repo(tmp_path)
    fresh = root / MEMORY_DIR / "log/knowledge/2026-12.md"
    fresh.write_bytes(b"")
    empty = _view(repo)
    assert empty.text("log/knowledge/2026-12.md") == "" and empty.carried == set()
    assert empty.disk_oids["log/knowledge/2026-12.md"] == str(pygit2.hash(b""))  # for the journal
    fresh.write_bytes(EDITED)
    view = _view(repo)
    assert view.text("log/knowledge/2026-12.md") == EDITED.decode()
    assert view.carried == {"log/knowledge/2026-12.md"}
