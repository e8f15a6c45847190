"""The injected clock (elfmem/clock.py): decay, sessions and stamps read it, never the wall clock.

No test here sleeps: time moves only when the test moves it, which is the point of the seam.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.block.model import TIER_LAMBDA
from elfmem.clock import SimulatedClock
from elfmem.store.ledger import decode
from elfmem.store.notes import anchor_for_block
from tests.conftest import arun

START = 1767603600.0  # 2026-01-05 09:00 UTC
HOUR = 3600.0
FACTS = [
    {"content": "Use pgbouncer in transaction mode for Postgres pooling", "cue": "pooling"},
    {"content": "Nightly backups of Postgres run at 02:00 UTC", "cue": "backups"},
]


def _ids(seed: int) -> Callable[[], str]:
    rng = random.Random(seed)
    return lambda: f"{rng.getrandbits(64):016x}"


def _open(repo: Path, clock: SimulatedClock, seed: int = 1) -> tuple[MemorySystem, list[str]]:
    system, _ = arun(MemorySystem.init(repo, seed=True, clock=clock, new_id=_ids(seed)))
    ids = arun(system.remember_many(FACTS)).created
    arun(system.dream(max_blocks=10))
    return system, ids


def _recency(system: MemorySystem, query: str, block_id: str) -> float:
    found = arun(system.recall(query, top_k=5, reinforce=False)).blocks
    return next(b.recency for b in found if b.id == block_id)


def test_decay_reads_the_injected_clock_and_only_inside_sessions(tmp_path: Path) -> None:
    clock = SimulatedClock(START)
    system, (pooling, _) = _open(tmp_path / "m", clock)
    assert _recency(system, "Postgres pooling", pooling) == pytest.approx(1.0, abs=1e-3)
    clock.advance(30 * 24 * HOUR)  # a month away: no session, no decay
    assert _recency(system, "Postgres pooling", pooling) == pytest.approx(1.0, abs=1e-3)
    arun(system.begin_session())
    clock.advance(100 * HOUR)
    expected = math.exp(-TIER_LAMBDA["standard"] * 100)
    assert _recency(system, "Postgres pooling", pooling) == pytest.approx(expected, rel=1e-3)
    arun(system.end_session())
    assert arun(system.status()).active_hours == pytest.approx(100.0, abs=0.01)
    arun(system.close())


def test_recency_order_follows_the_clock(tmp_path: Path) -> None:
    """Two blocks used an injected 80 hours apart: the later use is the fresher, and the gap
    between them is exactly what the clock says, not what the machine took."""
    clock = SimulatedClock(START)
    system, (pooling, backups) = _open(tmp_path / "m", clock)
    arun(system.begin_session())
    arun(system.recall("pgbouncer transaction mode pooling", top_k=1))  # uses the pooling block
    clock.advance(80 * HOUR)
    arun(system.recall("nightly backups at 02:00", top_k=1))  # uses the backups block
    arun(system.end_session())
    query = "Postgres"
    older, newer = _recency(system, query, pooling), _recency(system, query, backups)
    assert newer > older
    assert older / newer == pytest.approx(math.exp(-TIER_LAMBDA["standard"] * 80), rel=1e-3)
    arun(system.close())


def test_created_stamps_and_ledger_times_come_from_the_clock(tmp_path: Path) -> None:
    clock = SimulatedClock(START)
    system, (pooling, _) = _open(tmp_path / "m", clock)
    created = datetime.fromisoformat(arun(system.show(pooling)).created).timestamp()
    assert START <= created < START + 60  # the simulated morning, not today
    folded = system._core.ledger.folded(pooling)
    assert folded.born
    events = [decode(line) for line in system._core.ledger.lines(anchor_for_block(pooling))]
    stamps = [datetime.fromisoformat(e["ts"]).timestamp() for e in events if e]
    assert stamps and all(START <= s < START + 60 for s in stamps)
    arun(system.close())


def _scenario(repo: Path) -> list[tuple[str, float, float]]:
    clock = SimulatedClock(START)
    system, ids = _open(repo, clock, seed=7)
    for day in range(3):
        clock.advance(24 * HOUR)
        arun(system.begin_session())
        clock.advance(600)
        arun(system.recall("Postgres pooling", top_k=2))
        arun(system.outcome([ids[day % 2]], 1.0 if day else 0.0))
        arun(system.end_session())
    found = arun(system.recall("Postgres", top_k=5, reinforce=False)).blocks
    arun(system.close())
    return [(b.id, b.score, b.recency) for b in found]


def test_the_same_clock_and_ids_give_the_same_scores(tmp_path: Path) -> None:
    assert _scenario(tmp_path / "a") == _scenario(tmp_path / "b")


def test_a_simulated_clock_only_runs_forward() -> None:
    clock = SimulatedClock(START, tick=0.5)
    assert clock.time() < clock.time()
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        SimulatedClock(START, tick=0)
