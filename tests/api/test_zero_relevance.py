"""A block that earns no relevance is never returned, even when an edge pulls it into the pool.

Graph expansion adds every declared neighbour of the top seeds to the candidates, and each
inherits a share of its seed's relevance. The pipeline's relevance gate drops every candidate
whose relevance is zero, whatever pulled it in: nothing else would stop a linked block that does
not bear on the query from padding the answer (its score is zero, but a short list of candidates
still fills ``top_k``). With the product's share a neighbour always inherits something, so this
test sets the share to zero to make a linked neighbour that earns no relevance, through the real
repository, index and embedded model.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall
from tests.conftest import arun

OPS = [
    "The API rate limit is 100 req/min per key",
    "Office plants are watered on Tuesdays",
    "The cafeteria serves soup on Thursdays",
]


@pytest.fixture
def linked(repo: Path) -> tuple[MemorySystem, list[str]]:
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    ids = arun(system.remember_many([{"content": c} for c in OPS])).created
    arun(system.dream())
    arun(system.connect(ids[0], ids[1], "requires"))  # plants: linked, not relevant
    return system, ids


def test_a_linked_neighbour_that_earns_no_relevance_is_not_returned(
    linked: tuple[MemorySystem, list[str]],
) -> None:
    system, ids = linked
    core = system._core
    try:
        nothing = replace(SearchSettings(), inherit=0.0)
        result = recall.frame(
            core, "attention", "what is the API rate limit", top_k=5, reinforce=False,
            settings=nothing,
        )  # fmt: skip
        assert [b.id for b in result.blocks] == [ids[0]]
        assert result.bearing == 1
        shared = recall.frame(
            core, "attention", "what is the API rate limit", top_k=5, reinforce=False
        )
        by_id = {b.id: b for b in shared.blocks}
        assert [b.id for b in shared.blocks] == [ids[0], ids[1]]  # with a share, it earns one
        assert by_id[ids[1]].via == "expansion" and by_id[ids[1]].similarity > 0
    finally:
        arun(system.close())
