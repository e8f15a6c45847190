"""Guards that protect data during undo, each with a test that fails without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.errors import UndoError
from tests.conftest import arun, git


def test_undo_of_an_older_edit_refuses_when_a_later_edit_changed_the_block(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    block_id = arun(system.remember("The pager rota changes on Mondays")).block_id
    first = arun(system.edit(block_id, content="The pager rota changes on Tuesdays"))
    arun(system.edit(block_id, content="The pager rota changes on Wednesdays"))
    with pytest.raises(UndoError, match="changed since"):
        arun(system.undo(first.commit_id))
    assert arun(system.show(block_id)).content == "The pager rota changes on Wednesdays"
    arun(system.close())


def test_undo_keeps_an_uncommitted_hand_edit_in_the_same_bucket(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    kept, other = arun(
        system.remember_many(
            [{"content": "Staging mirrors production nightly"}, {"content": "Backups run at two"}]
        )
    ).created
    edited = arun(system.edit(other, content="Backups run at three"))
    bucket = repo / arun(system.show(kept)).path
    text = bucket.read_text()
    bucket.write_text(text.replace("Staging mirrors production nightly", "Staging mirrors prod"))
    try:
        arun(system.undo(edited.commit_id))
    except UndoError:
        pass  # refusing is as good as carrying it: the hand edit must survive either way
    assert "Staging mirrors prod\n" in bucket.read_text()
    assert "Staging mirrors production nightly" not in bucket.read_text()
    arun(system.close())
    assert git(repo, "fsck", "--no-dangling") == ""
