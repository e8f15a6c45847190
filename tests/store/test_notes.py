"""The notes ledger against real repositories and the real git binary."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import ConfigLevel, FileMode

import elfmem
from elfmem.errors import InvalidInput, LockedError
from elfmem.store import notes
from elfmem.store.notes import (
    CLOCK_ANCHOR_TEXT,
    NotesLedger,
    anchor_for_block,
    clock_anchor,
    union_note,
)

CHILD_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [str(Path(elfmem.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]
    ),
}
SIG = pygit2.Signature("elfmem test", "test@example.com", 1_700_000_000, 0)
BLOCK = "50bb7e4575aab7fe"
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "git user",
    "GIT_AUTHOR_EMAIL": "git@example.com",
    "GIT_COMMITTER_NAME": "git user",
    "GIT_COMMITTER_EMAIL": "git@example.com",
}


def git(repo: Path | str, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        env=GIT_ENV,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "repo"))


def commit_at(repo: pygit2.Repository, commit_id: str | None) -> pygit2.Commit:
    assert commit_id is not None
    return repo[commit_id].peel(pygit2.Commit)


def workdir(repo: pygit2.Repository) -> str:
    return str(Path(repo.path).parent)


def note_paths(repo: pygit2.Repository) -> list[str]:
    return git(workdir(repo), "ls-tree", "-r", "--name-only", "refs/notes/elfmem").split()


def test_anchors_match_git_hash_object(repo: pygit2.Repository) -> None:
    expected = git(workdir(repo), "hash-object", "--stdin", stdin=f"elfmem-block {BLOCK}\n")
    assert anchor_for_block(BLOCK) == expected.strip()
    clock = git(workdir(repo), "hash-object", "--stdin", stdin=CLOCK_ANCHOR_TEXT)
    assert clock_anchor() == clock.strip()
    assert anchor_for_block(BLOCK) != anchor_for_block("50bb7e4575aab7ff")


def test_git_notes_show_prints_appended_lines(repo: pygit2.Repository) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    ledger.append_blocks({BLOCK: ['{"n":1}', '{"n":2}']}, "elfmem: birth")
    anchor = git(workdir(repo), "hash-object", "--stdin", stdin=f"elfmem-block {BLOCK}\n").strip()
    shown = git(workdir(repo), "notes", "--ref=elfmem", "show", anchor)
    assert shown == '{"n":1}\n{"n":2}\n'
    assert repo.get(anchor) is None  # plain git needs only the oid, not the anchor blob


def test_append_writes_one_commit_with_2_38_fanout(repo: pygit2.Repository) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    a, b = anchor_for_block("a" * 16), anchor_for_block("b" * 16)
    tip = ledger.append({a: ["x"], b: ["y"]}, "batch")
    assert tip == ledger.tip()
    assert git(workdir(repo), "rev-list", "--count", "refs/notes/elfmem").strip() == "1"
    assert sorted(note_paths(repo)) == sorted([f"{a[:2]}/{a[2:]}", f"{b[:2]}/{b[2:]}"])
    commit = commit_at(repo, tip)
    assert commit.author.email == "test@example.com" and commit.message == "batch"


def test_union_keeps_each_line_once(repo: pygit2.Repository) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    anchor = anchor_for_block(BLOCK)
    first = ledger.append({anchor: ["a", "b"]}, "one")
    assert ledger.append({anchor: ["b", "a"]}, "replay") is None
    assert ledger.tip() == first
    second = ledger.append({anchor: ["b", "c", "c"]}, "two")
    assert second is not None and commit_at(repo, second).parent_ids == [commit_at(repo, first).id]
    assert ledger.read(anchor) == "a\nb\nc\n"
    assert ledger.read(anchor, tip=first) == "a\nb\n"
    assert ledger.read_all(tip=first) == {anchor: "a\nb\n"}
    assert ledger.read(anchor_for_block("0" * 16)) is None


def test_tip_at_finds_the_ledger_as_it_was(repo: pygit2.Repository) -> None:
    anchor = anchor_for_block(BLOCK)
    tips = []
    for n, when in enumerate((1_700_000_000, 1_700_000_100, 1_700_000_200)):
        sig = pygit2.Signature("elfmem test", "test@example.com", when, 0)
        tips.append(NotesLedger(repo, committer=sig).append({anchor: [f"line {n}"]}, "m"))
    ledger = NotesLedger(repo)
    assert ledger.tip_at(1_699_999_999) is None
    assert ledger.tip_at(1_700_000_150) == tips[1]
    assert ledger.tip_at(1_800_000_000) == tips[2]
    assert ledger.read(anchor, tip=ledger.tip_at(1_700_000_000)) == "line 0\n"


def test_union_note_refuses_line_breaks() -> None:
    assert union_note("a\n", ["a"]) is None
    assert union_note("", ["", "x"]) == "x\n"
    with pytest.raises(InvalidInput) as err:
        union_note("", ["two\nlines"])
    assert err.value.recovery


def test_bad_anchor_is_refused(repo: pygit2.Repository) -> None:
    with pytest.raises(InvalidInput):
        NotesLedger(repo).append({"not-an-anchor": ["x"]}, "m")
    with pytest.raises(InvalidInput):
        NotesLedger(repo).read("ABC")
    with pytest.raises(InvalidInput):
        NotesLedger(repo).append({anchor_for_block(BLOCK): "one line, not a list"}, "m")
    assert NotesLedger(repo).tip() is None


def test_flat_note_written_by_git_is_read_then_moved_to_fanout(repo: pygit2.Repository) -> None:
    anchor = anchor_for_block(BLOCK)
    git(workdir(repo), "notes", "--ref=elfmem", "add", "-m", "from git", anchor)
    assert note_paths(repo) == [anchor]
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    assert ledger.read(anchor) == "from git\n"
    assert ledger.read_all() == {anchor: "from git\n"}
    ledger.append({anchor: ["from elfmem"]}, "append")
    assert note_paths(repo) == [f"{anchor[:2]}/{anchor[2:]}"]
    shown = git(workdir(repo), "notes", "--ref=elfmem", "show", anchor)
    assert shown == "from git\nfrom elfmem\n"


def commit_tree(repo: pygit2.Repository, tree: pygit2.Oid) -> None:
    repo.create_commit("refs/notes/elfmem", SIG, SIG, "hand made", tree, [])


def test_2_2_36_fanout_is_read_and_rewritten(repo: pygit2.Repository) -> None:
    anchor, other = anchor_for_block(BLOCK), anchor_for_block("c" * 16)
    blob = repo.create_blob(b"deep\n")
    inner = repo.TreeBuilder()
    inner.insert(anchor[4:], blob, FileMode.BLOB)
    middle = repo.TreeBuilder()
    middle.insert(anchor[2:4], inner.write(), FileMode.TREE)
    root = repo.TreeBuilder()
    root.insert(anchor[:2], middle.write(), FileMode.TREE)
    root.insert(other, repo.create_blob(b"flat\n"), FileMode.BLOB)
    commit_tree(repo, root.write())
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    assert ledger.read_all() == {anchor: "deep\n", other: "flat\n"}
    ledger.append({anchor: ["more"]}, "append")
    assert sorted(note_paths(repo)) == sorted([f"{anchor[:2]}/{anchor[2:]}", other])
    assert git(workdir(repo), "notes", "--ref=elfmem", "show", anchor) == "deep\nmore\n"


def test_changed_anchors_follow_the_tree_diff(repo: pygit2.Repository) -> None:
    anchor = anchor_for_block(BLOCK)
    git(workdir(repo), "notes", "--ref=elfmem", "add", "-m", "flat", anchor)
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    flat_tip = ledger.tip()
    others = [anchor_for_block(f"{n:016x}") for n in range(300)]
    mid = ledger.append({a: ["x"] for a in others}, "many")
    moved = ledger.append({anchor: ["y"]}, "move")
    assert ledger.changed_anchors(flat_tip, mid) == set(others)
    assert ledger.changed_anchors(mid, moved) == {anchor}
    assert ledger.changed_anchors(None, moved) == {anchor, *others}
    assert ledger.changed_anchors(moved, moved) == set()
    assert ledger.changed_anchors(moved, None) == {anchor, *others}


def test_many_anchors_in_shared_fanout_trees_read_and_append_like_one_at_a_time(
    repo: pygit2.Repository,
) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    anchors = [anchor_for_block(f"{n:016x}") for n in range(600)]  # ~2 per fanout subtree
    ledger.append({a: [f"first {a[:6]}"] for a in anchors[::2]}, "half")
    ledger.append({a: [f"second {a[:6]}"] for a in anchors}, "all")
    every = ledger.read_many(anchors)
    assert every == {a: t for a in anchors if (t := ledger.read(a)) is not None}
    assert all(every[a] == f"first {a[:6]}\nsecond {a[:6]}\n" for a in anchors[::2])
    assert all(every[a] == f"second {a[:6]}\n" for a in anchors[1::2])
    assert ledger.read_many([anchor_for_block("ffffffffffffffff")]) == {}


def test_the_diff_of_an_own_append_is_known_and_equals_the_tree_diff(
    repo: pygit2.Repository,
) -> None:
    anchor = anchor_for_block(BLOCK)
    git(workdir(repo), "notes", "--ref=elfmem", "add", "-m", "flat", anchor)  # moved on append
    writer = NotesLedger(repo, author=SIG, committer=SIG)
    before = writer.tip()
    others = [anchor_for_block(f"{n:016x}") for n in range(40)]
    after = writer.append({a: ["x"] for a in [anchor, *others]}, "many")
    again = writer.append({a: ["x"] for a in others[:5]}, "nothing new")
    assert again is None
    reader = NotesLedger(repo)  # knows nothing of the appends: walks the trees
    assert writer.changed_anchors(before, after) == reader.changed_anchors(before, after)
    assert writer.changed_anchors(before, after) == {anchor, *others}


class InterleavingRepository(pygit2.Repository):
    """Runs ``interloper`` once, just before this handle creates its next commit."""

    interloper: object = None

    def create_commit(self, *args: object, **kwargs: object) -> pygit2.Oid:
        run, self.interloper = self.interloper, None
        if callable(run):
            run()
        return super().create_commit(*args, **kwargs)  # type: ignore[arg-type]


def test_a_writer_that_moves_the_tip_mid_append_loses_nothing(repo: pygit2.Repository) -> None:
    anchor = anchor_for_block(BLOCK)
    mine = InterleavingRepository(repo.path)
    theirs = NotesLedger(pygit2.Repository(repo.path), author=SIG, committer=SIG)
    theirs.append({anchor: ["base"]}, "base")
    mine.interloper = lambda: theirs.append({anchor: ["theirs"]}, "theirs")
    NotesLedger(mine, author=SIG, committer=SIG).append({anchor: ["mine"]}, "mine")
    assert set(theirs.read(anchor).split()) == {"base", "theirs", "mine"}  # type: ignore[union-attr]
    assert git(workdir(repo), "rev-list", "--count", "refs/notes/elfmem").strip() == "3"


def test_a_writer_that_finds_the_ref_created_mid_append_loses_nothing(
    repo: pygit2.Repository,
) -> None:
    anchor = anchor_for_block(BLOCK)
    mine = InterleavingRepository(repo.path)
    theirs = NotesLedger(pygit2.Repository(repo.path), author=SIG, committer=SIG)
    mine.interloper = lambda: theirs.append({anchor: ["theirs"]}, "theirs")
    NotesLedger(mine, author=SIG, committer=SIG).append({anchor: ["mine"]}, "mine")
    assert set(theirs.read(anchor).split()) == {"theirs", "mine"}  # type: ignore[union-attr]
    assert git(workdir(repo), "rev-list", "--count", "refs/notes/elfmem").strip() == "2"


WRITER = """
import sys, pygit2
from elfmem.store.notes import NotesLedger, anchor_for_block
ledger = NotesLedger(pygit2.Repository(sys.argv[1]))
for i in range(int(sys.argv[3])):
    ledger.append({anchor_for_block("shared"): [f"{sys.argv[2]}-{i}"],
                   anchor_for_block(f"{sys.argv[2]}-{i}"): ["own"]}, "concurrent")
"""


def test_two_processes_appending_at_once_lose_nothing(repo: pygit2.Repository) -> None:
    count = 25
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, repo.path, name, str(count)],
            env=CHILD_ENV,
        )
        for name in ("p", "q")
    ]
    assert [proc.wait(timeout=120) for proc in procs] == [0, 0]
    ledger = NotesLedger(repo)
    shared = (ledger.read(anchor_for_block("shared")) or "").split()
    assert sorted(shared) == sorted(f"{n}-{i}" for n in "pq" for i in range(count))
    assert len(ledger.read_all()) == 1 + 2 * count
    assert git(workdir(repo), "rev-list", "--count", "refs/notes/elfmem").strip() == "50"


def test_a_stuck_lock_that_is_not_elfmems_stops_the_append_at_once(
    repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No intent of a dead elfmem writer names it: the lock is kept and the error names it."""
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    anchor = anchor_for_block(BLOCK)
    ledger.append({anchor: ["one"]}, "one")
    lock = Path(repo.path, "refs/notes/elfmem.lock")
    lock.write_text("held")
    monkeypatch.setattr(notes, "MAX_ATTEMPTS", 3)
    monkeypatch.setattr(time, "sleep", lambda _seconds: None)
    with pytest.raises(LockedError) as err:
        ledger.append({anchor: ["two"]}, "two")
    assert str(lock) in err.value.message and f"rm {lock}" in err.value.recovery
    assert lock.exists() and ledger.read(anchor) == "one\n"


@pytest.fixture
def no_git_identity(tmp_path: Path) -> Iterator[None]:
    """Point libgit2's global, XDG and system config at an empty directory for one test."""
    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    (tmp_path / "empty").mkdir()
    for level in levels:
        pygit2.settings.search_path[level] = str(tmp_path / "empty")
    try:
        yield
    finally:
        for level, value in saved.items():
            pygit2.settings.search_path[level] = value


def test_commits_fall_back_to_elfmem_identity(tmp_path: Path, no_git_identity: None) -> None:
    repo = pygit2.init_repository(str(tmp_path / "bare-identity"))
    tip = NotesLedger(repo).append({anchor_for_block(BLOCK): ["x"]}, "m")
    commit = commit_at(repo, tip)
    assert (commit.committer.name, commit.committer.email) == ("elfmem", "elfmem@localhost")
    agent = pygit2.Signature("agent-7", "agent-7@elfmem")
    tip = NotesLedger(repo).append({anchor_for_block(BLOCK): ["y"]}, "m", author=agent)
    assert commit_at(repo, tip).author.name == "agent-7"
    assert commit_at(repo, tip).committer.name == "elfmem"


def test_commits_use_the_configured_git_identity(repo: pygit2.Repository) -> None:
    repo.config["user.name"] = "Configured Person"
    repo.config["user.email"] = "person@example.com"
    tip = NotesLedger(repo).append({anchor_for_block(BLOCK): ["x"]}, "m")
    assert commit_at(repo, tip).committer.email == "person@example.com"


def test_git_fsck_is_clean_after_appends(repo: pygit2.Repository) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    for n in range(40):
        ledger.append({anchor_for_block(f"{n % 7:016x}"): [f'{{"n":{n}}}']}, f"append {n}")
    ledger.append({clock_anchor(): ["tick"]}, "clock")
    done = subprocess.run(
        ["git", "-C", workdir(repo), "fsck", "--strict", "--no-dangling"],
        capture_output=True,
        text=True,
        env=GIT_ENV,
    )
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr and "missing" not in done.stdout
    assert len(ledger.read_all()) == 8
