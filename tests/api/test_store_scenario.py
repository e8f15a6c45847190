"""The store's promise, end to end: one readable commit per operation, nothing of the user's
touched."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.block.model import Block
from elfmem.block.render import render_block
from elfmem.errors import (
    BlockFormatError,
    BlockNotFound,
    InvalidInput,
    RepoStateError,
    SecretRefused,
    UndoError,
)
from tests.conftest import arun, git


def _open(root: Path) -> MemorySystem:
    return arun(MemorySystem.from_config(root))


def test_scripted_scenario_commits_trailers_hand_edit_and_undo(repo: Path) -> None:
    # The user has their own staged and unstaged work in progress.
    (repo / "README.md").write_text("# project\nunstaged line\n")
    (repo / "notes.txt").write_text("staged file\n")
    git(repo, "add", "notes.txt")
    status_before = git(repo, "status", "--porcelain")

    system, init = arun(MemorySystem.init(repo, name="Ada", seed=True))
    assert len(init.seeded) == 10
    a = arun(
        system.remember(
            "Postgres connection pooling needs pgbouncer above 100 clients",
            cue="choosing a connection pooling strategy",
            tags=["db/postgres"],
        )
    )
    b = arun(
        system.remember(
            "Redis needs maxmemory set or it grows until the OOM killer runs",
            cue="configuring redis",
        )
    )
    c = arun(system.remember("The staging database is refreshed every Monday at 06:00 UTC"))
    assert a.status == b.status == c.status == "created"
    assert a.path == b.path  # same category and month → same bucket file

    # A person edits block b by hand in the same file and does not commit.
    bucket = repo / ".elfmem/memory" / a.path
    text = bucket.read_text()
    assert "grows until the OOM killer runs" in text
    bucket.write_text(text.replace("grows until the OOM killer runs", "grows without bound"))

    edit = arun(system.edit(a.block_id, "Postgres needs pgbouncer above 100 concurrent clients"))
    assert edit.changed
    forget = arun(system.forget(c.block_id))
    assert forget.changed
    undo = arun(system.undo())
    assert undo.undone == forget.commit_id
    arun(system.close())

    log = git(repo, "log", "--format=%s|%an|%(trailers:key=Elfmem-Op,valueonly,separator=)")
    lines = [line for line in log.splitlines() if line]
    ops = [line.split("|")[2] for line in lines[:-1]]
    assert ops == ["undo", "forget", "edit", "remember", "remember", "remember", "init"]
    assert all(line.split("|")[1] == "Ada" for line in lines[:-1])
    assert lines[-1].startswith("initial|Pat Person")

    # The edit commit carried the hand edit to b intact.
    edit_commit_text = git(repo, "show", f"{edit.commit_id}:.elfmem/memory/{a.path}")
    assert "grows without bound" in edit_commit_text
    assert "concurrent clients" in edit_commit_text
    assert "Carries uncommitted hand edits" in git(repo, "log", "-1", "--format=%b", edit.commit_id)

    # Undo brought the forgotten block back with the same id and content.
    system = _open(repo)
    shown = arun(system.show(c.block_id))
    assert shown.content == "The staging database is refreshed every Monday at 06:00 UTC"
    assert shown.status == "inbox"
    arun(system.close())

    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    # The writer stores each commit object itself before create_commit: the two must agree.
    assert "dangling commit" not in git(repo, "fsck", "--dangling")
    assert git(repo, "status", "--porcelain") == status_before


def test_notes_show_with_plain_git_prints_the_block_events(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    r = arun(system.remember("The CI runner has 2 cores", cue="sizing CI jobs"))
    arun(system.edit(r.block_id, cue="planning CI parallelism"))
    arun(system.close())
    anchor = subprocess.run(
        ["git", "hash-object", "--stdin"],
        input=f"elfmem-block {r.block_id}\n",
        text=True,
        capture_output=True,
        cwd=repo,
        check=True,
    ).stdout.strip()
    lines = git(repo, "notes", "--ref=elfmem", "show", anchor).splitlines()
    kinds = sorted(re.search(r'"kind":"(\w+)"', line)[1] for line in lines)  # type: ignore[index]
    assert kinds == ["birth", "edit"]


def test_duplicate_is_a_graceful_reject_returning_the_existing_id(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    first = arun(system.remember("Use UTC in logs"))
    again = arun(system.remember("  use utc   in LOGS "))
    assert again.status == "duplicate" and again.block_id == first.block_id
    arun(system.close())
    assert git(repo, "log", "--format=%s").count("remember:") == 1


def test_remember_many_is_one_commit(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    items = [
        {"content": f"Fact number {i}", "cue": f"cue {i}", "tags": ["bulk"]} for i in range(50)
    ]
    result = arun(system.remember_many(items))
    assert len(result.created) == 50
    listed = arun(system.ls(tag="bulk"))
    assert len(listed.blocks) == 50
    arun(system.close())
    assert git(repo, "log", "--format=%s").count("remember:") == 1


def test_forget_is_idempotent_and_undo_twice_is_a_clear_noop(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    r = arun(system.remember("Temporary fact"))
    f1 = arun(system.forget(r.block_id))
    f2 = arun(system.forget(r.block_id))
    assert f1.changed and not f2.changed
    u1 = arun(system.undo(f1.commit_id))
    u2 = arun(system.undo(f1.commit_id))
    assert u1.commit_id is not None
    assert u2.commit_id is None and u2.already_undone_by == u1.commit_id
    arun(system.close())


def test_undo_refuses_commits_elfmem_did_not_make(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    with pytest.raises(UndoError) as err:
        arun(system.undo("HEAD~1"))
    assert "git revert" in err.value.recovery
    arun(system.close())


def test_semantic_undo_when_the_textual_revert_conflicts(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    old = arun(system.remember("Old neighbour fact"))
    r = arun(system.remember("Block to forget"))
    f = arun(system.forget(r.block_id))
    # A later edit of a neighbour in the same source file makes the textual revert conflict.
    arun(system.edit(old.block_id, "Old neighbour fact, corrected"))
    u = arun(system.undo(f.commit_id))
    assert u.commit_id is not None
    assert arun(system.show(r.block_id)).status == "inbox"
    assert arun(system.show(old.block_id)).content == "Old neighbour fact, corrected"
    arun(system.close())


def test_unborn_branch_and_no_repository(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "trunk")
    system, result = arun(MemorySystem.init(fresh, name="Bo"))
    assert result.commit_id is not None
    arun(system.remember("First memory on an unborn branch"))
    arun(system.close())
    assert git(fresh, "rev-parse", "--abbrev-ref", "HEAD").strip() == "trunk"
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    system, result = arun(MemorySystem.init(nowhere))
    assert result.created_repo and (nowhere / ".git").is_dir()
    arun(system.close())


@pytest.mark.parametrize(
    ("action", "error"),
    [
        (lambda s: s.remember(""), InvalidInput),
        (lambda s: s.remember("   \n  "), InvalidInput),
        (lambda s: s.edit("0123456789abcdef", "x"), BlockNotFound),
        (lambda s: s.forget("0123456789abcdef"), BlockNotFound),
        (
            lambda s: s.remember("my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"),
            SecretRefused,
        ),
        (lambda s: s.remember("aws AKIAIOSFODNN7EXAMPLE here"), SecretRefused),
        (lambda s: s.remember("x", tags=["has space"]), InvalidInput),
        (lambda s: s.remember("x" * 300_000), InvalidInput),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(repo: Path, action, error) -> None:  # type: ignore[no-untyped-def]
    system, _ = arun(MemorySystem.init(repo))
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(error) as err:
        arun(action(system))
    assert err.value.recovery
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""
    arun(system.close())


def test_malformed_hand_edit_blocks_writes_to_that_file_with_file_and_line(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    r = arun(system.remember("A fact"))
    bucket = repo / ".elfmem/memory" / r.path
    broken = bucket.read_text().replace("<!-- id: ", "<!-- id: zz", 1)
    bucket.write_text(broken)
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(BlockFormatError) as err:
        arun(system.remember("Another fact"))
    assert f"{r.path}:" in str(err.value) and err.value.line > 0
    assert bucket.read_text() == broken
    assert git(repo, "rev-parse", "HEAD") == head
    arun(system.close())


def test_invalid_utf8_in_a_memory_file_is_reported(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    r = arun(system.remember("A fact"))
    bucket = repo / ".elfmem/memory" / r.path
    bucket.write_bytes(bucket.read_bytes() + b"\n\xff\xfe broken\n")
    with pytest.raises(BlockFormatError):
        arun(system.remember("Another fact"))
    arun(system.close())


def test_refuses_to_write_in_the_middle_of_a_merge(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README.md").write_text("other side\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("main side\n")
    git(repo, "commit", "-qam", "main")
    git(repo, "merge", "other", check=False)
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(RepoStateError) as err:
        arun(system.remember("During a merge"))
    assert "merge" in err.value.message and err.value.recovery
    assert git(repo, "rev-parse", "HEAD") == head
    arun(system.close())


def test_history_lists_the_commits_that_touched_a_block(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    r = arun(system.remember("Fact with a history"))
    arun(system.edit(r.block_id, cue="when history matters"))
    arun(system.forget(r.block_id))
    hist = arun(system.block_history(r.block_id))
    assert [c["op"] for c in hist.commits] == ["forget", "edit", "remember"]
    arun(system.close())


def test_a_block_in_a_file_a_person_wrote_but_did_not_commit_can_be_edited_and_forgotten(
    repo: Path,
) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("Committed so the memory has a tree"))
    block = Block(id="0123456789abcdef", content="Written by hand, not committed yet")
    hand = repo / ".elfmem" / "memory" / "notes" / "knowledge" / "2020-01.md"
    hand.parent.mkdir(parents=True, exist_ok=True)
    hand.write_text(render_block(block), encoding="utf-8")
    edited = arun(system.edit(block.id, cue="checking hand-written files"))
    assert edited.changed
    forgotten = arun(system.forget(block.id))
    assert forgotten.changed
    shown = arun(system.show(block.id))
    assert shown.status == "archived" and shown.cue == "checking hand-written files"
    arun(system.close())
