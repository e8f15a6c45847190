"""Recall asks late interaction only when it fuses long documents by score.

Short blocks are fused by rank, which never reads it: a memory of facts and turns ranks exactly as
it did before. Among long documents, the scores come from the shipped model's token vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elfmem.api import MemorySystem
from elfmem.retrieval.late import late_fn
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod
from tests.conftest import arun

OFF = SearchSettings(late_share=0.0)
FILLER = {
    "garden": "We weeded the beds, tied up the tomatoes and moved the compost heap by the fence.",
    "harbour": "The ferry left late, gulls followed it, and the harbour master logged the tide.",
}


def _long(topic: str, special: str) -> str:
    lines = [f"Entry {i + 1}. {FILLER[topic]}" for i in range(22)]
    lines[7] = special
    return "\n".join(lines)


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many blocks each late-interaction call scored."""
    calls: list[int] = []

    def counting(model: object) -> Any:
        inner = late_fn(model)
        assert inner is not None  # the shipped static model exposes its tokens

        def scores(db: Any, query: str, ids: list[str]) -> dict[str, float]:
            calls.append(len(ids))
            return inner(db, query, ids)

        return scores

    monkeypatch.setattr(recall_mod, "late_fn", counting)
    return calls


def _frame(system: MemorySystem, query: str, settings: SearchSettings | None = None) -> Any:
    return recall_mod.frame(
        system._core, "attention", query, top_k=5, reinforce=False, settings=settings
    )


def test_short_blocks_never_ask_for_late_scores(repo: Path, asked: list[int]) -> None:
    system, _ = arun(MemorySystem.init(repo))
    facts = [
        "The sourdough starter wants feeding twice a day at room temperature",
        "The harbour ferry leaves at nine on weekdays",
        "Tomatoes need tying up once they pass knee height",
    ]
    arun(system.remember_many([{"content": f} for f in facts]))
    arun(system.dream(max_blocks=20, no_llm=True))
    for query in ("sourdough starter", "when does the ferry leave"):
        on, off = _frame(system, query), _frame(system, query, OFF)
        assert [(b.id, b.similarity) for b in on.ranked] == [
            (b.id, b.similarity) for b in off.ranked
        ]
    assert asked == []
    arun(system.close())


def test_long_documents_are_scored_late_and_still_all_found(repo: Path, asked: list[int]) -> None:
    system, _ = arun(MemorySystem.init(repo))
    texts = [
        _long("garden", "The kids were stoked for the dinosaur exhibit at the museum."),
        _long("garden", "Melanie painted a sunset over the lake."),
        _long("harbour", "A deckhand told the kids about fossils on the beach."),
    ]
    ids = [arun(system.remember(t)).block_id for t in texts]
    arun(system.dream(max_blocks=20, no_llm=True))
    query = "What did the kids think of the dinosaur museum?"
    on, off = _frame(system, query), _frame(system, query, OFF)
    assert asked and max(asked) >= 2  # one call per fusion, over the fused long blocks
    assert on.ranked[0].id == ids[0]
    # late interaction reorders; it does not drop a block the searches found
    assert {b.id for b in on.ranked} == {b.id for b in off.ranked}
    assert all(b.similarity > 0 for b in on.ranked)
    arun(system.close())
