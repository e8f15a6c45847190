"""What a write plans against: the committed file, or the working-tree copy when it differs."""

from __future__ import annotations

from pathlib import Path

import pygit2

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.model import Block
from elfmem.block.render import render_file
from elfmem.store.view import MemoryView, last_bucket
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


def _records(*names: str, trees: tuple[str, ...] = ()) -> dict[bytes, bytes]:
    oid = b"\x01" * 20
    out = {name.encode(): b"100644 " + name.encode() + b"\0" + oid for name in names}
    out.update({name.encode(): b"40000 " + name.encode() + b"\0" + oid for name in trees})
    return out


def test_the_last_bucket_follows_a_folder_as_names_come_and_go() -> None:
    prefix = b"2026-11-"
    folder = f"log/knowledge-{id(prefix)}"  # a key no other test uses
    first = _records("2026-11-1.md", "2026-11-2.md", "2026-11-10.md", "2026-10-99.md")
    assert last_bucket("repo", folder, first, prefix) == 10  # numeric, not by name order
    grown = first | _records("2026-11-11.md", trees=("2026-11-50.md",))
    assert last_bucket("repo", folder, grown, prefix) == 11  # a folder is not a bucket
    shrunk = {k: v for k, v in grown.items() if k not in (b"2026-11-11.md", b"2026-11-10.md")}
    assert last_bucket("repo", folder, shrunk, prefix) == 2  # a name gone: looked at afresh
    assert last_bucket("other", folder, _records("2026-11-7.md"), prefix) == 7
    assert last_bucket("repo", folder, {}, prefix) == 1
