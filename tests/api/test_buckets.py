"""A batch fills bounded bucket files: no file ever holds more than BUCKET_LIMIT blocks."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from elfmem.block.layout import BUCKET_LIMIT
from elfmem.block.parse import parse_bytes
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
    assert _sizes(repo, "log") == []
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
