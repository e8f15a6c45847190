"""A remember's index update waits for the next read; nothing a reader sees may differ for it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from elfmem.api import MemorySystem
from elfmem.index import open_memory_index, rebuild
from elfmem.index.db import IndexDB
from elfmem.rhythms.core import DEFERRED_WRITES
from tests.conftest import arun, git


def _keyed_tree(repo: Path) -> str | None:
    """The memory tree the index file on disk is keyed to, read by a separate connection."""
    with sqlite3.connect(repo / ".git" / "elfmem" / "index.db") as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'memory_tree_oid'").fetchone()
    return row[0] if row else None


def _memory_tree(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD:.elfmem/memory").strip()


def _rows(db: IndexDB) -> list[tuple[object, ...]]:
    return db.conn.execute(
        "SELECT id, path, ordinal, status, content_hash FROM blocks ORDER BY id"
    ).fetchall()


def _matches_a_rebuild(system: MemorySystem) -> bool:
    fresh = open_memory_index()
    rebuild(fresh, system._core.store.source(), None)
    try:
        return _rows(system._core.db()) == _rows(fresh)
    finally:
        fresh.close()


def test_remembers_are_indexed_by_the_next_read(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.ls())
    ids = [
        arun(system.remember(f"Deploy window {i} opens at {i}:00 UTC")).block_id for i in range(3)
    ]
    assert _keyed_tree(repo) != _memory_tree(repo)  # the writes did not wait for the index
    listed = {b.id for b in arun(system.ls(status="inbox")).blocks}
    assert set(ids) <= listed
    assert _keyed_tree(repo) == _memory_tree(repo)
    assert _matches_a_rebuild(system)
    arun(system.close())


def test_a_gathering_of_remembers_is_indexed_without_a_read(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.ls())
    for i in range(DEFERRED_WRITES):
        arun(system.remember(f"Runner {i} builds the arm64 images"))
    assert _keyed_tree(repo) == _memory_tree(repo)
    arun(system.remember("Runner spare is kept offline"))
    assert _keyed_tree(repo) != _memory_tree(repo)
    arun(system.close())  # closing indexes what is still waiting
    assert _keyed_tree(repo) == _memory_tree(repo)


def test_a_duplicate_of_a_remember_not_yet_indexed_is_still_refused(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    first = arun(system.remember("The staging database restores from the 02:00 snapshot"))
    again = arun(system.remember("The staging database restores from the 02:00 snapshot"))
    assert (again.status, again.block_id) == ("duplicate", first.block_id)
    batch = arun(
        system.remember_many([{"content": "The staging database restores from the 02:00 snapshot"}])
    )
    assert batch.duplicates == [first.block_id]
    arun(system.close())


def test_waiting_writes_never_overwrite_what_another_writer_indexed_since(repo: Path) -> None:
    """A's remember waits; B indexes a newer version of the same bucket; A's turn must not
    put the older version back."""
    first, _ = arun(MemorySystem.init(repo))
    second = arun(MemorySystem.from_config(repo))
    arun(first.ls())
    a = arun(first.remember("Queue alpha drains in 5 seconds")).block_id
    b = arun(second.remember("Queue beta drains in 9 seconds")).block_id
    arun(second.ls())  # B indexes its own write, past A's
    again = arun(first.remember("Queue beta drains in 9 seconds"))  # reads committed rows only
    assert (again.status, again.block_id) == ("duplicate", b)
    listed = {x.id for x in arun(first.ls(status="inbox")).blocks}
    assert {a, b} <= listed
    assert _matches_a_rebuild(first)
    arun(first.close())
    arun(second.close())


def test_edit_and_forget_index_waiting_remembers_first(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    kept = arun(system.remember("The CDN purges in 30 seconds")).block_id
    gone = arun(system.remember("The CDN edge in Lima is in beta")).block_id
    arun(system.edit(kept, "The CDN purges in 45 seconds"))
    arun(system.forget(gone))
    assert _keyed_tree(repo) == _memory_tree(repo)
    assert _matches_a_rebuild(system)
    arun(system.close())
