"""dream's semantic edges: above the threshold, within the degree cap at both ends, never twice.

The mock embedder makes the cosines exact: each word is one coordinate, so two texts' cosine is
shared words / √(words × words). With 4096 dimensions none of the words below collide.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from elfmem.adapters.mock import MockEmbedder
from elfmem.api import MemorySystem
from tests.conftest import arun, git

W = [f"w{i}" for i in range(1, 13)]
HUB = " ".join(W)  # 12 words
E1 = " ".join(W[:5])  # 5/√60 = 0.645 with HUB
E2 = " ".join(W[5:9])  # 4/√48 = 0.577
E3 = " ".join(W[9:])  # 3/√36 = 0.500


def _open(repo: Path, **memory: Any) -> MemorySystem:
    arun(arun(MemorySystem.init(repo))[0].close())
    config = {"embeddings": {"provider": "mock", "dimensions": 4096}, "memory": memory}
    return arun(MemorySystem.from_config(repo, config=config))


def _ids(system: MemorySystem, *texts: str) -> list[str]:
    return arun(system.remember_many([{"content": t} for t in texts])).created


def _similar(system: MemorySystem, block_id: str) -> dict[str, float]:
    edges = system._core.ledger.folded(block_id).edges
    return {target: w for (target, rel), w in edges.items() if rel == "similar"}


def test_the_mock_gives_the_cosines_these_tests_assume() -> None:
    vecs = MockEmbedder(4096).embed([HUB, E1, E2, E3])
    cos = vecs @ vecs.T
    assert np.allclose(cos[0, 1:], [5 / math.sqrt(60), 4 / math.sqrt(48), 0.5], atol=1e-6)
    assert np.allclose(cos[1:, 1:], np.eye(3), atol=1e-6)


def test_edges_above_the_threshold_on_both_ends_and_none_below(repo: Path) -> None:
    system = _open(repo, edge_score_threshold=0.55)
    e1, e2, e3 = _ids(system, E1, E2, E3)
    assert arun(system.dream(max_blocks=10)).edges_added == 0  # orthogonal: nothing to link
    (hub,) = _ids(system, HUB)
    result = arun(system.dream())
    assert result.edges_added == 4 and "4 semantic edges added" in result.summary
    assert result.to_dict()["edges_added"] == 4
    assert _similar(system, hub) == {e1: 0.6455, e2: 0.5774}
    assert _similar(system, e1) == {hub: 0.6455} and _similar(system, e2) == {hub: 0.5774}
    assert _similar(system, e3) == {}  # 0.50 is under the 0.55 threshold
    arun(system.close())


def test_the_default_threshold_is_045(repo: Path) -> None:
    system = _open(repo)
    _, _, e3 = _ids(system, E1, E2, E3)
    arun(system.dream(max_blocks=10))
    (hub,) = _ids(system, HUB)
    assert arun(system.dream()).edges_added == 6 and _similar(system, e3) == {hub: 0.5}
    arun(system.close())


def test_the_degree_cap_holds_for_new_and_existing_blocks(repo: Path) -> None:
    system = _open(repo, edge_degree_cap=2)
    e1, e2, e3 = _ids(system, E1, E2, E3)
    arun(system.dream(max_blocks=10))
    (hub,) = _ids(system, HUB)
    arun(system.dream())
    # The new block links only to its two strongest neighbours.
    assert set(_similar(system, hub)) == {e1, e2} and _similar(system, e3) == {}
    # Now the hub is full: a newcomer close to it (0.61) links only where there is room.
    (late,) = _ids(system, " ".join([*W[:6], "m1", "m2"]))
    result = arun(system.dream())
    assert result.edges_added == 2
    assert _similar(system, late) == {e1: round(5 / math.sqrt(40), 4)}
    assert set(_similar(system, hub)) == {e1, e2}
    assert set(_similar(system, e1)) == {hub, late}
    for block in (hub, e1, e2, e3, late):
        assert len(system._core.ledger.folded(block).edges) <= 2
    arun(system.close())


def test_a_full_block_is_not_pushed_over_the_cap_by_other_learned_edges(repo: Path) -> None:
    system = _open(repo, edge_degree_cap=1)
    e1, e2, e3 = _ids(system, E1, E2, E3)
    arun(system.dream(max_blocks=10))
    arun(system.connect(e1, e2, relation="related"))  # a learned ledger edge: e1 and e2 are full
    (hub,) = _ids(system, HUB)
    arun(system.dream())
    assert _similar(system, hub) == {e3: 0.5}  # the strongest neighbour that still has room
    assert _similar(system, e1) == {} and _similar(system, e2) == {}
    arun(system.close())


def test_dreaming_again_adds_no_edge_twice(repo: Path) -> None:
    system = _open(repo)
    _ids(system, E1, E2, E3)
    arun(system.dream(max_blocks=10))
    (hub,) = _ids(system, HUB)
    first = arun(system.dream())
    before = {b: _similar(system, b) for b in first.promoted}
    again = arun(system.dream(rescore=True))  # no LLM: deep sleep refreshes every aged block
    assert again.edges_added == 0 and len(again.rescored) == 4
    assert {b: _similar(system, b) for b in first.promoted} == before
    assert len(_similar(system, hub)) == 3
    arun(system.close())


def test_undo_of_a_dream_cancels_its_edges_and_a_new_dream_restores_them(repo: Path) -> None:
    system = _open(repo)
    e1, _, _ = _ids(system, E1, E2, E3)
    arun(system.dream(max_blocks=10))
    (hub,) = _ids(system, HUB)
    inbox = [(b.id, b.path) for b in arun(system.inbox()).blocks]
    commits = int(git(repo, "rev-list", "--count", "HEAD"))
    arun(system.dream())
    assert int(git(repo, "rev-list", "--count", "HEAD")) == commits + 1  # one commit per run
    assert _similar(system, e1)
    arun(system.undo())
    assert [(b.id, b.path) for b in arun(system.inbox()).blocks] == inbox
    assert _similar(system, e1) == {} and _similar(system, hub) == {}
    assert arun(system.dream()).edges_added == 6
    arun(system.close())


def test_centrality_counts_evidence_edges_not_semantic_ones(repo: Path) -> None:
    system = _open(repo, edge_score_threshold=0.55)
    e1, _, e3 = _ids(system, E1, E2, E3)
    arun(system.dream(max_blocks=10))
    (hub,) = _ids(system, HUB)
    arun(system.dream())
    assert _similar(system, hub)  # dream linked the hub to its neighbours ...
    ranked = {b.id: b for b in arun(system.recall(HUB, top_k=4, reinforce=False)).ranked}
    assert ranked[hub].centrality == 0  # ... but closeness alone is not centrality
    arun(system.connect(hub, e3, "supports"))
    ranked = {b.id: b for b in arun(system.recall(HUB, top_k=4, reinforce=False)).ranked}
    assert ranked[hub].centrality > 0 and ranked[e3].centrality > 0
    assert ranked[e1].centrality == 0
    arun(system.close())


def test_dream_reports_progress_block_by_block(repo: Path) -> None:
    system = _open(repo)
    _ids(system, E1, E2, E3)
    calls: list[tuple[str, int, int]] = []
    arun(system.dream(max_blocks=10, progress=lambda *c: calls.append(c)))
    assert calls == [("dream", i, 3) for i in range(4)]
    arun(system.close())
