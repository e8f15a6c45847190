"""Adaptive memory through the real path: outcomes, sessions, reinforcement, edges, curate,
status."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.errors import BlockNotFound, InvalidInput
from elfmem.rhythms.adaptive import learned_edges
from tests.conftest import arun


def _memory(repo: Path) -> tuple[MemorySystem, list[str]]:
    system, _ = arun(MemorySystem.init(repo, seed=True))
    ids = arun(
        system.remember_many(
            [
                {
                    "content": "Use pgbouncer in transaction mode for Postgres pooling",
                    "cue": "connection pooling",
                },
                {
                    "content": "Raise max_connections to 5000 instead of pooling",
                    "cue": "connection pooling",
                },
                {"content": "Nightly backups run at 02:00 UTC", "cue": "backups"},
            ]
        )
    ).created
    arun(system.dream(max_blocks=10))
    return system, ids


def test_outcome_bands_skips_and_errors(repo: Path) -> None:
    system, (good, bad, other) = _memory(repo)
    constitutional = arun(system.ls(tag="self/constitutional")).blocks[0].id
    pending = arun(system.remember("Still in the inbox")).block_id
    up = arun(system.outcome([good, constitutional, pending], 1.0, source="test"))
    assert [u["id"] for u in up.updated] == [good]
    assert up.updated[0]["confidence_after"] == pytest.approx(0.75)  # (0.5+1)/(0.5+1+0.5)
    assert {s["id"]: s["reason"] for s in up.skipped} == {
        constitutional: "constitutional",
        pending: "pending_inbox",
    }
    down = arun(system.outcome([bad], 0.0))
    assert down.band == "penalise" and down.updated[0]["confidence_after"] == pytest.approx(0.25)
    neutral = arun(system.outcome([other], 0.5))
    assert neutral.band == "neutral" and neutral.updated[0]["confidence_after"] == pytest.approx(
        0.5
    )
    forced = arun(system.outcome([constitutional], 1.0, allow_constitutional=True))
    assert forced.updated
    with pytest.raises(InvalidInput):
        arun(system.outcome([good], 1.5))
    with pytest.raises(BlockNotFound):
        arun(system.outcome(["0123456789abcdef"], 1.0))
    arun(system.close())


def test_outcomes_reorder_retrieval_and_survive_losing_the_index(repo: Path) -> None:
    system, (good, bad, _) = _memory(repo)
    for _ in range(4):
        arun(system.outcome([good], 1.0))
        arun(system.outcome([bad], 0.0))
    ranked = [
        b.id for b in arun(system.recall("connection pooling", top_k=2, reinforce=False)).ranked
    ]
    assert ranked.index(good) < ranked.index(bad)
    before = {
        b.id: (b.confidence, b.reinforcement, b.centrality)
        for b in arun(system.recall("connection pooling", top_k=3, reinforce=False)).ranked
    }
    arun(system.close())
    index = repo / ".git/elfmem/index.db"
    index.unlink()
    system = arun(MemorySystem.from_config(repo))
    after = {
        b.id: (b.confidence, b.reinforcement, b.centrality)
        for b in arun(system.recall("connection pooling", top_k=3, reinforce=False)).ranked
    }
    assert after == before
    arun(system.close())


def test_no_decay_without_a_session_and_decay_inside_one(repo: Path) -> None:
    system, ids = _memory(repo)
    core = system._core
    start = core.ledger.now_hours()
    time.sleep(0.05)
    assert core.ledger.now_hours() == start  # wall time passes, the clock does not
    arun(system.begin_session())
    time.sleep(0.2)
    assert core.ledger.now_hours() > start
    arun(system.end_session())
    frozen = core.ledger.now_hours()
    time.sleep(0.05)
    assert core.ledger.now_hours() == frozen
    arun(system.close())


def test_reinforcement_and_hebbian_graduation_after_three_sessions(repo: Path) -> None:
    system, (good, bad, _) = _memory(repo)
    for _ in range(3):

        async def one_session() -> None:
            async with system.session():
                await system.recall("connection pooling", top_k=2)
                await system.recall("connection pooling", top_k=2)  # same session: staged once

        arun(one_session())
    folded = system._core.ledger.folded(good)
    assert folded.reinforcements == 6
    assert len(folded.cooccur_sessions[bad]) == 3
    assert (bad, "co_retrieval") in learned_edges(folded)
    ranked = arun(system.recall("connection pooling", top_k=2, reinforce=False)).ranked
    assert all(b.centrality > 0 for b in ranked)
    arun(system.close())


def test_connect_declared_and_related_and_disconnect(repo: Path) -> None:
    system, (good, bad, other) = _memory(repo)
    declared = arun(system.connect(good, bad, "contradicts"))
    assert declared.commit_id and arun(system.show(good)).relations == [["contradicts", bad]]
    assert arun(system.connect(good, bad, "contradicts")).unchanged
    related = arun(system.connect(good, other, "related"))
    assert related.commit_id is None and related.edges
    assert (other, "related") in system._core.ledger.folded(good).edges
    with pytest.raises(InvalidInput) as err:
        arun(system.connect(good, bad, "likes"))
    assert "supersedes" in err.value.recovery
    arun(system.disconnect(good, bad, "contradicts"))
    assert arun(system.show(good)).relations == []
    arun(system.disconnect(good, other, "related"))
    assert (other, "related") not in system._core.ledger.folded(good).edges
    # Graph expansion: a neighbour the query never matched joins the candidates.
    arun(system.connect(good, other, "supports"))
    result = arun(system.recall("pgbouncer transaction mode", top_k=5, reinforce=False))
    assert other in [b.id for b in result.ranked]
    arun(system.close())


def test_curate_archives_refuted_never_constitutional_and_undo_restores(repo: Path) -> None:
    system, (good, bad, _) = _memory(repo)
    constitutional = arun(system.ls(tag="self/constitutional")).blocks[0].id
    for _ in range(3):
        arun(system.outcome([bad], 0.0))
        arun(system.outcome([constitutional], 0.0, allow_constitutional=True))
    result = arun(system.curate())
    assert [a["id"] for a in result.archived] == [bad]
    assert arun(system.show(bad)).status == "archived"
    assert arun(system.show(constitutional)).status == "active"
    arun(system.undo())
    assert arun(system.show(bad)).status == "active"
    arun(system.close())


def test_curate_archives_only_what_recall_calls_refuted(repo: Path) -> None:
    """Two mistaken 0.0s (a tenth of an agent's outcomes are wrong) used to archive a right
    block at curate, where recall would still rank it: confidence 0.17 after two outcomes. Curate
    now archives by recall's rule, so a block two refutations down stays, and is archived at the
    third, or once its refutations outnumber its confirmations after five."""
    system, (good, bad, other) = _memory(repo)
    for _ in range(2):
        arun(system.outcome([good, bad], 0.0))
    arun(system.outcome([bad], 0.0))  # a third: refuted
    for signal in (1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0):  # five against four
        arun(system.outcome([other], signal))
    result = arun(system.curate())
    assert sorted(a["id"] for a in result.archived) == sorted([bad, other])
    assert arun(system.show(good)).status == "active"
    arun(system.close())


def test_status_reports_inbox_and_suggests_dream(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo))
    arun(system.remember_many([{"content": f"Inbox fact {i}"} for i in range(10)]))
    status = arun(system.status())
    assert status.inbox == 10 and status.should_dream and "dream" in status.suggestion
    assert system.should_dream
    arun(system.close())
