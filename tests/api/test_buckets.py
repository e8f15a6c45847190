"""A batch fills bounded bucket files: no file ever holds more than BUCKET_LIMIT blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

import elfmem.store.view as view_mod
from elfmem.api import MemorySystem
from elfmem.block.layout import BUCKET_BYTES, BUCKET_LIMIT
from elfmem.block.parse import parse_bytes
from elfmem.index import IndexDB, open_memory_index, rebuild
from tests.conftest import arun, git


def _sizes(repo: Path, folder: str) -> list[int]:
    root = repo / ".elfmem" / "memory" / folder
    return sorted(len(parse_bytes(p.read_bytes(), str(p))) for p in root.rglob("*.md"))


def test_a_large_batch_and_its_dream_fill_buckets_up_to_the_limit(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    n = 2 * BUCKET_LIMIT + 40
    items = [{"content": f"Shard {i} of the ledger lives on host h{i}"} for i in range(n)]
    arun(system.remember_many(items))
    assert _sizes(repo, "log") == [40, BUCKET_LIMIT, BUCKET_LIMIT]
    arun(system.dream(max_blocks=n))
    assert _sizes(repo, "log") == [0, 0, 0]  # emptied buckets stay, empty (docs/merging.md)
    assert _sizes(repo, "notes") == [40, BUCKET_LIMIT, BUCKET_LIMIT]
    assert git(repo, "status", "--porcelain") == ""
    arun(system.close())


def test_a_single_remember_goes_to_the_last_bucket_and_opens_one_when_it_is_full(
    repo: Path,
) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(
        system.remember_many(
            [{"content": f"Rack {i} holds host h{i}"} for i in range(BUCKET_LIMIT)]
        )
    )
    first = arun(system.remember("Rack 9000 holds the spare switch"))
    assert first.path.endswith("-2.md")
    again = arun(system.remember("Rack 9001 holds the console server"))
    assert again.path == first.path
    assert _sizes(repo, "log") == [2, BUCKET_LIMIT]
    arun(system.close())


def _rows(db: IndexDB) -> list[tuple[object, ...]]:
    return db.conn.execute(
        "SELECT id, path, ordinal, status, content FROM blocks ORDER BY id"
    ).fetchall()


def test_two_writers_taking_turns_on_one_bucket_index_what_a_rebuild_would(repo: Path) -> None:
    """Each writer remembers the rows it wrote last; the other's writes must invalidate them."""
    first, _ = arun(MemorySystem.init(repo))
    second = arun(MemorySystem.from_config(repo))
    ids = []
    for i in range(6):
        writer = first if i % 2 == 0 else second
        ids.append(arun(writer.remember(f"Turn {i}: queue q{i} drains in {i} seconds")).block_id)
    arun(first.edit(ids[1], "Turn 1 corrected: queue q1 drains in 10 seconds"))
    arun(second.forget(ids[2]))
    arun(first.remember("Turn 7: after the edit and the forget"))
    fresh = open_memory_index()
    rebuild(fresh, first._core.store.source(), None)
    for system in (first, second):
        system._core.sync()
        assert _rows(system._core.db()) == _rows(fresh)
    fresh.close()
    arun(first.close())
    arun(second.close())


def test_buckets_are_bounded_by_bytes_so_long_blocks_never_make_a_huge_file(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    paragraph = "Chapter notes on the harbour survey, tides and moorings. " * 160  # ~9 KB
    items = [{"content": f"Survey part {i}. {paragraph}"} for i in range(60)]  # ~550 KB
    arun(system.remember_many(items))
    root = repo / ".elfmem" / "memory" / "log"
    files = sorted(root.rglob("*.md"))
    assert len(files) >= 3
    assert max(p.stat().st_size for p in files) <= BUCKET_BYTES + 10_000
    assert sum(len(parse_bytes(p.read_bytes(), str(p))) for p in files) == 60
    # One more block goes to the last bucket or a fresh one, never past the bound.
    arun(system.remember(f"Survey appendix. {paragraph}"))
    assert max(p.stat().st_size for p in root.rglob("*.md")) <= BUCKET_BYTES + 10_000
    arun(system.close())


def test_a_block_larger_than_the_byte_bound_gets_a_bucket_of_its_own(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember("A small note before the big one"))
    # A bound smaller than the block: the block starts a bucket, and the next note another.
    monkeypatch.setattr(view_mod, "BUCKET_BYTES", 4_000)
    big = "Long minutes of the planning meeting. " * 200  # ~7.6 KB
    first = arun(system.remember(big))
    second = arun(system.remember("A small note after the big one"))
    assert first.path.endswith("-2.md") and second.path.endswith("-3.md")
    assert _sizes(repo, "log") == [1, 1, 1]
    arun(system.close())
