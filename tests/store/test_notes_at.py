"""``--at REV`` reads the ledger as it stood at REV: each notes commit records the memory tip it
was written on, so an outcome recorded after a later memory commit in the same second is not
read into the past (the time rule could not tell them apart). Notes commits without the record
(written before it existed, or merged) fall back to time."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from elfmem.store import notes
from elfmem.store.notes import NotesLedger

SIG = pygit2.Signature("elfmem test", "test@example.com", 1_700_000_000, 0)
BLOCK = "0123456789abcdef"


def memory_commit(repo: pygit2.Repository, text: str) -> pygit2.Commit:
    parents = [] if repo.head_is_unborn else [repo.head.target]
    blob = repo.create_blob(text.encode())
    builder = repo.TreeBuilder()
    builder.insert("memory.md", blob, pygit2.GIT_FILEMODE_BLOB)
    oid = repo.create_commit("HEAD", SIG, SIG, text, builder.write(), parents)
    return repo[oid].peel(pygit2.Commit)


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path / "repo"), initial_head="main")


def test_notes_written_after_a_later_memory_commit_in_the_same_second_are_not_read_at_rev(
    repo: pygit2.Repository,
) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    first = memory_commit(repo, "first")
    early = ledger.append_blocks({BLOCK: ['{"n":1}']}, "elfmem: birth")
    second = memory_commit(repo, "second")  # the same second as everything else here
    late = ledger.append_blocks({BLOCK: ['{"n":2}']}, "elfmem: outcome 0.00 from cli")
    assert late is not None
    assert f"{notes.MEMORY_TIP_TRAILER}: {second.id}" in repo[late].message
    assert ledger.tip_for(first) == early
    assert ledger.tip_for(second) == late


def test_notes_commits_without_the_record_fall_back_to_time(repo: pygit2.Repository) -> None:
    ledger = NotesLedger(repo, author=SIG, committer=SIG)
    old = ledger.append_blocks({BLOCK: ['{"n":1}']}, "elfmem: birth")  # no memory yet: no record
    assert old is not None and notes.MEMORY_TIP_TRAILER not in repo[old].message
    first = memory_commit(repo, "first")
    assert ledger.tip_for(first) == old
