"""With the approximate neighbour search forced on (and made as poor as it gets: one cluster of
four probed), dream still never loses a fact: every block it drops carries the same information
as the block it names, and every distinct statement stays active."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elfmem.api import MemorySystem
from elfmem.block.facts import same_information
from elfmem.index import list_blocks
from elfmem.index.nearest import NeighbourIndex
from elfmem.rhythms import batchnear
from tests.conftest import arun

BASE = [
    "The staging database listens on port 5433.",
    "Maria prefers green tea in the afternoon.",
    "Restart the vesper router after editing its config.",
    "The API rate limit is 60 requests per minute.",
    "Backups of the wiki run nightly at 02:00 UTC.",
    "Leo's football boots are size 38.",
]
VARIANTS = [
    "the staging database listens on port 5433",  # same information: may be dropped
    "Maria prefers green tea in the afternoon!",  # same information
    "Restart the serac loader after editing its config.",  # another subject: kept
    "The API rate limit is 600 requests per minute.",  # another value: kept
    "Backups of the wiki run nightly at 03:00 UTC.",  # another value: kept
    "Leo's football boots are size 39.",  # another value: kept
]


@pytest.mark.parametrize("probes", [1, 4])
def test_approximate_search_never_drops_a_distinct_statement(
    repo: Path, monkeypatch: pytest.MonkeyPatch, probes: int
) -> None:
    original = NeighbourIndex.build
    kinds: list[str] = []

    def build(pool: Any, rank: Any = None, **_: object) -> NeighbourIndex:
        index = original(pool, rank, lists=min(4, len(pool)), probes=probes)
        kinds.append(index.kind)
        return index

    monkeypatch.setattr(batchnear.NeighbourIndex, "build", staticmethod(build))
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember_many([{"content": c} for c in BASE]))
    arun(system.dream(no_llm=True))
    arun(system.remember_many([{"content": c} for c in VARIANTS + BASE[:2]]))
    result = arun(system.dream(no_llm=True))
    assert kinds and set(kinds) == {"ivf"}
    rows = {r.id: r for r in list_blocks(system._core.db())}
    for dup in result.duplicates:
        assert same_information(rows[str(dup["id"])].content, rows[str(dup["of"])].content)
    active = {r.content for r in rows.values() if r.status == "active"}
    kept = set(BASE + VARIANTS)
    assert all(any(same_information(c, a) for a in active) for c in kept)
    assert set(VARIANTS[2:]) <= active
    arun(system.close())
