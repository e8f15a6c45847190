"""Rank fusion for short blocks, score fusion when the evidence is long documents.

The choice is made per query by the lexical search's top hits (``pipeline._fuse``): a memory of
facts and turns ranks exactly as it did before long documents existed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.errors import InvalidInput
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod
from tests.conftest import arun

RRF = SearchSettings(fuse_by="rrf")
FILLER = {
    "garden": "We weeded the beds, tied up the tomatoes and moved the compost heap by the fence.",
    "harbour": "The ferry left late, gulls followed it, and the harbour master logged the tide.",
    "office": "The team met on Monday, sorted the backlog and agreed to ship the release Friday.",
}


def _long(topic: str, special: list[str]) -> str:
    """About 2 KB: a diary of ``topic``, with the ``special`` lines spread through it."""
    lines = [f"Entry {i + 1}. {FILLER[topic]}" for i in range(22)]
    for n, line in enumerate(special):
        lines[3 + 6 * n] = line
    return "\n".join(lines)


def _frame(system: MemorySystem, query: str, settings: SearchSettings | None = None):  # type: ignore[no-untyped-def]
    return recall_mod.frame(
        system._core, "attention", query, top_k=5, reinforce=False, settings=settings
    )


def test_short_blocks_rank_exactly_as_rank_fusion_ranks_them(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    facts = [
        "The sourdough starter wants feeding twice a day at room temperature",
        "Bread flour with more protein gives the loaf a taller rise",
        "A hydration of 75 percent makes an open crumb",
        "The harbour ferry leaves at nine on weekdays",
        "Tomatoes need tying up once they pass knee height",
    ]
    arun(system.remember_many([{"content": f} for f in facts]))
    arun(system.dream(max_blocks=20, no_llm=True))
    for query in ("sourdough starter hydration", "when does the ferry leave", "tomatoes"):
        auto, rrf = _frame(system, query), _frame(system, query, RRF)
        assert [(b.id, b.similarity, b.score) for b in auto.ranked] == [
            (b.id, b.similarity, b.score) for b in rrf.ranked
        ]
    with pytest.raises(InvalidInput, match="unknown fusion"):
        _frame(system, "tomatoes", SearchSettings(fuse_by="ranks"))
    arun(system.close())


def test_long_documents_keep_the_lead_their_bm25_gives_them(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    strong = _long(
        "garden",
        [
            "Fed the sourdough starter; its hydration is up to 80 percent now.",
            "The sourdough starter doubled by noon, so the hydration suits it.",
            "Baked with the starter again: sourdough at lower hydration holds its shape.",
        ],
    )
    weak = _long("harbour", ["A deckhand talked about hydration on long crossings."])
    other = _long("office", [])
    ids = [arun(system.remember(text)).block_id for text in (strong, weak, other)]
    arun(system.dream(max_blocks=20, no_llm=True))
    query = "sourdough starter hydration"
    auto, rrf = _frame(system, query), _frame(system, query, RRF)
    assert auto.ranked[0].id == rrf.ranked[0].id == ids[0]
    auto_sim = {b.id: b.similarity for b in auto.ranked}
    rrf_sim = {b.id: b.similarity for b in rrf.ranked}
    # one shared word is a small share of the leader's bm25: ranks hide that, scores keep it
    assert auto_sim[ids[1]] < rrf_sim[ids[1]]
    assert auto_sim[ids[1]] < 0.75
    arun(system.close())


def test_a_long_document_among_short_hits_leaves_rank_fusion_in_charge(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    short = [f"Ferry note {i}: the harbour ferry leaves at {7 + i} on day {i}" for i in range(6)]
    arun(system.remember_many([{"content": t} for t in short]))
    arun(system.remember(_long("harbour", ["The ferry timetable changes in winter."])))
    arun(system.dream(max_blocks=20, no_llm=True))
    auto, rrf = _frame(system, "harbour ferry"), _frame(system, "harbour ferry", RRF)
    assert len(auto.ranked) == 5
    assert [(b.id, b.similarity) for b in auto.ranked] == [(b.id, b.similarity) for b in rrf.ranked]
    arun(system.close())
