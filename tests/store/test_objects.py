"""ObjectBatch: trees serialised by hand and packs written by hand, checked by the git binary."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode, ObjectType

from elfmem.store.objects import (
    PACK_THRESHOLD,
    ObjectBatch,
    commit_bytes,
    finish_fanout,
    object_id,
    objects_dir,
    prefer_loose_objects,
)
from tests.conftest import git


def _repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "r"), initial_head="main")


def _commit(repo: pygit2.Repository, tree: pygit2.Oid) -> None:
    sig = pygit2.Signature("Pat", "pat@example.com", 1_700_000_000, 0)
    repo.create_commit("refs/heads/main", sig, sig, "test", tree, [])


def _commit_one_pack(repo: pygit2.Repository) -> tuple[list[pygit2.Oid], pygit2.Oid]:
    """Commit ``PACK_THRESHOLD`` small blobs written as one pack; their oids and the root tree."""
    packed = ObjectBatch(repo)
    blobs = [packed.blob(f"packed {i}\n".encode()) for i in range(PACK_THRESHOLD)]
    root = packed.edit(None, {(f"f{i}",): oid for i, oid in enumerate(blobs)})
    assert root is not None
    packed.store()
    _commit(repo, root)
    return blobs, root


def test_trees_match_what_git_itself_would_write(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    batch = ObjectBatch(repo)
    blob = batch.blob(b"x\n")
    # "a" as a tree sorts after "a.b" and before "a0": git compares it as "a/".
    paths = [("a", "z"), ("a.b",), ("a0",), ("a-b",), ("é",), ("b", "c", "d")]
    root = batch.edit(None, {p: blob for p in paths})
    assert root is not None
    batch.store()
    _commit(repo, root)
    workdir = Path(repo.workdir)
    assert git(workdir, "fsck", "--strict", "--no-dangling") == ""
    git(workdir, "reset", "-q", "--hard")
    git(workdir, "add", "-A")
    assert git(workdir, "write-tree").strip() == str(root)


def test_editing_a_tree_git_wrote_gives_the_tree_git_would_write(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    workdir = Path(repo.workdir)
    for rel in ("a/z", "a.b", "a0", "b/c/d", "é"):
        (workdir / rel).parent.mkdir(parents=True, exist_ok=True)
        (workdir / rel).write_text(rel + "\n")
    git(workdir, "add", "-A")
    base = repo[git(workdir, "write-tree").strip()].peel(pygit2.Tree)
    batch = ObjectBatch(repo)
    blob = batch.blob(b"new\n")
    edited = batch.edit(base, {("a-b",): blob, ("a", "y"): blob, ("a0",): None, ("b", "e"): blob})
    batch.store()
    (workdir / "a0").unlink()
    for rel in ("a-b", "a/y", "b/e"):
        (workdir / rel).write_text("new\n")
    git(workdir, "add", "-A")
    assert git(workdir, "write-tree").strip() == str(edited)
    # Again on the tree just made (its records come from the kept parse): changes only.
    again = batch.edit(repo[edited].peel(pygit2.Tree), {("a.b",): blob, ("a", "z"): blob})
    batch.store()
    for rel in ("a.b", "a/z"):
        (workdir / rel).write_text("new\n")
    git(workdir, "add", "-A")
    assert git(workdir, "write-tree").strip() == str(again)


def test_edit_copies_untouched_entries_and_deletes_empty_trees(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    batch = ObjectBatch(repo)
    one, two = batch.blob(b"1\n"), batch.blob(b"2\n")
    base_oid = batch.edit(None, {("keep", "k"): one, ("gone", "g"): two, ("top",): one})
    batch.store()
    base = repo[base_oid].peel(pygit2.Tree)
    new_oid = batch.edit(base, {("gone", "g"): None, ("top",): two, ("new", "n"): one})
    batch.store()
    new = repo[new_oid].peel(pygit2.Tree)
    assert sorted(e.name for e in new) == ["keep", "new", "top"]
    assert new["keep"].id == base["keep"].id  # an untouched subtree is reused, not rebuilt
    assert new["top"].id == two
    assert new["new"].filemode == FileMode.TREE
    assert batch.edit(new, {("keep", "k"): None, ("top",): None, ("new", "n"): None}) is None


def test_a_large_batch_becomes_one_pack_that_git_verifies(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    batch = ObjectBatch(repo)
    n = PACK_THRESHOLD + 50
    changes = {
        (f"{i:03d}"[:2], f"f{i}"): batch.blob(f"blob {i}\n".encode() * (i + 1)) for i in range(n)
    }
    root = batch.edit(None, changes)
    assert root is not None
    batch.store()
    packs = sorted((objects_dir(repo) / "pack").glob("pack-*.idx"))
    assert len(packs) == 1
    loose = [p for p in objects_dir(repo).iterdir() if len(p.name) == 2]
    assert loose == []  # nothing was written loose
    _commit(repo, root)  # libgit2 sees the new pack without being reopened
    workdir = Path(repo.workdir)
    git(workdir, "verify-pack", str(packs[0]))
    assert git(workdir, "fsck", "--strict", "--no-dangling") == ""
    assert git(workdir, "show", "HEAD:00/f3") == "blob 3\n" * 4


def test_a_small_batch_stays_loose(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    batch = ObjectBatch(repo)
    oid = batch.blob(b"hello\n")
    assert oid not in repo.odb  # nothing reaches the repository before store()
    batch.store()
    assert repo[oid].data == b"hello\n"
    assert not list((objects_dir(repo) / "pack").glob("pack-*"))


def test_a_small_batch_writes_loose_even_when_a_pack_holds_the_object(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _commit_one_pack(repo)
    again = ObjectBatch(repo)
    oid = again.blob(b"packed 7\n")  # already in the pack
    new = again.blob(b"not packed\n")
    again.store()
    loose = objects_dir(repo) / str(oid)[:2] / str(oid)[2:]
    assert loose.is_file()  # looked for among loose objects only, so written again
    assert repo[new].data == b"not packed\n"
    workdir = Path(repo.workdir)
    assert git(workdir, "cat-file", "-p", str(oid)) == "packed 7\n"
    assert git(workdir, "fsck", "--strict", "--no-dangling") == ""
    git(workdir, "prune-packed")  # git's own clean-up drops the duplicate
    assert not loose.exists()
    assert repo[oid].data == b"packed 7\n"


def test_a_linked_worktree_writes_into_the_shared_object_store(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    batch = ObjectBatch(repo)
    root = batch.edit(None, {("a",): batch.blob(b"a\n")})
    assert root is not None
    batch.store()
    _commit(repo, root)
    workdir = Path(repo.workdir)
    git(workdir, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    linked = pygit2.Repository(str(tmp_path / "side"))
    batch = ObjectBatch(linked)
    oid = batch.blob(b"from the linked worktree\n")
    batch.store()
    assert (objects_dir(repo) / str(oid)[:2] / str(oid)[2:]).is_file()
    assert repo[oid].data == b"from the linked worktree\n"


@pytest.mark.parametrize(
    ("name", "email", "offset", "message", "parents"),
    [
        ("Ada", "ada@example.com", 0, "remember: x\n\nElfmem-Op: remember\n", 1),
        ("Zoë Ångström", "zoe@example.org", 330, "edit: ünïcode ✓\n", 1),
        ("  Pat  ", " pat@example.com ", -420, "no newline at the end", 0),
        ("Lee", "lee@example.com", -30, "merge\n\nbody line\n", 2),
    ],
)
def test_commit_bytes_are_what_libgit2_writes(
    tmp_path: Path, name: str, email: str, offset: int, message: str, parents: int
) -> None:
    repo = _repo(tmp_path)
    batch = ObjectBatch(repo)
    tree = batch.edit(None, {("a",): batch.blob(b"a\n")})
    assert tree is not None
    batch.store()
    sig = pygit2.Signature("Base", "base@example.com", 1_700_000_000, 0)
    tips = [repo.create_commit(None, sig, sig, f"base {i}", tree, []) for i in range(parents)]
    author = pygit2.Signature(name, email, 1_800_000_000, offset)
    committer = pygit2.Signature("Git Person", "git@example.com", 1_800_000_123, 60)
    expected = object_id(ObjectType.COMMIT, commit_bytes(tree, tips, author, committer, message))
    made = repo.create_commit(None, author, committer, message, tree, tips)
    assert made.raw == expected


def test_the_first_loose_write_makes_every_missing_object_folder(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    folders = {f"{i:02x}" for i in range(256)}
    assert not folders & {p.name for p in objects_dir(repo).iterdir()}  # git init makes none
    batch = ObjectBatch(repo)
    oid = batch.blob(b"the first object\n")
    batch.store()
    finish_fanout(objects_dir(repo))
    assert folders <= {p.name for p in objects_dir(repo).iterdir()}
    assert repo[oid].data == b"the first object\n"
    assert git(Path(repo.workdir), "cat-file", "-p", str(oid)) == "the first object\n"
    assert git(Path(repo.workdir), "fsck", "--strict", "--no-dangling") == ""


def test_a_loose_first_object_database_reads_loose_packed_and_alternate_objects(
    tmp_path: Path,
) -> None:
    shared = _repo(tmp_path / "shared")
    from_shared = shared.create_blob(b"only in the alternate\n")
    repo = _repo(tmp_path / "main")
    (objects_dir(repo) / "info" / "alternates").write_text(
        f"# a comment\n{objects_dir(shared)}\n", encoding="utf-8"
    )
    blobs, root = _commit_one_pack(repo)
    reopened = pygit2.Repository(repo.path)
    prefer_loose_objects(reopened)
    loose = ObjectBatch(reopened)
    new = loose.blob(b"loose\n")
    loose.store()
    assert reopened[blobs[3]].data == b"packed 3\n"
    assert reopened[from_shared].data == b"only in the alternate\n"
    assert reopened[new].data == b"loose\n"
    assert reopened.head.peel(pygit2.Commit).tree.id == root
    commit = reopened.create_commit(
        "refs/heads/main",
        pygit2.Signature("P", "p@example.com", 1, 0),
        pygit2.Signature("P", "p@example.com", 1, 0),
        "second",
        root,
        [reopened.head.target],
    )
    assert (objects_dir(repo) / str(commit)[:2] / str(commit)[2:]).is_file()  # written loose
    workdir = Path(repo.workdir)
    assert git(workdir, "fsck", "--strict", "--no-dangling") == ""
