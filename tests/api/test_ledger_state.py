"""The ledger numbers kept in the index: same answers as folding the notes, moved by notes diff."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.index import ledgerstate, queries
from elfmem.retrieval.state import BlockState
from elfmem.rhythms import adaptive
from elfmem.rhythms.adaptive import declared_degree
from elfmem.store.notes import anchor_for_block
from tests.conftest import arun

QUERY = "connection pooling"


def _memory(repo: Path) -> tuple[MemorySystem, list[str]]:
    system, _ = arun(MemorySystem.init(repo))
    ids = arun(
        system.remember_many(
            [
                {"content": "Use pgbouncer in transaction mode for Postgres", "cue": QUERY},
                {"content": "Raise max_connections to 5000 instead of pooling", "cue": QUERY},
                {"content": "Nightly backups run at 02:00 UTC", "cue": "backups"},
            ]
        )
    ).created
    arun(system.dream(max_blocks=10))
    return system, ids


def _components(system: MemorySystem) -> dict[str, tuple[float, float, float]]:
    result = arun(system.recall(QUERY, top_k=3, reinforce=False))
    return {b.id: (b.confidence, b.reinforcement, b.centrality) for b in result.ranked}


def _folded_now(
    system: MemorySystem, ids: list[str], declared: bool = True
) -> dict[str, BlockState]:
    """The same blocks' states folded straight from the notes, bypassing the index rows."""
    core = system._core
    db = core.db()
    rows = list(queries.get_blocks(db, ids).values())
    return core.ledger.states(rows, declared_degree(db, ids) if declared else {})


def test_a_new_process_ranks_from_rows_that_match_a_fold_of_the_notes(repo: Path) -> None:
    system, (good, bad, other) = _memory(repo)
    for _ in range(3):
        arun(system.outcome([good], 1.0))
        arun(system.outcome([bad], 0.0))
    arun(system.close())

    system = arun(MemorySystem.from_config(repo))
    core = system._core
    components = _components(system)
    db = core.db()
    tip = core.store.ledger.tip()
    assert tip is not None and ledgerstate.stored_tip(db) == tip
    figures = arun(system.index_status()).details
    assert figures["notes_oid"] == tip and figures["ledger_rows"] >= 3
    rows = ledgerstate.read(db, tip, [anchor_for_block(b) for b in (good, bad, other)])
    assert rows is not None and set(rows) == {anchor_for_block(b) for b in (good, bad, other)}
    assert rows[anchor_for_block(good)].alpha == pytest.approx(0.5 + 3)
    assert rows[anchor_for_block(bad)].beta == pytest.approx(0.5 + 3)

    ids = [good, bad, other]
    from_rows = core.ledger.states(list(queries.get_blocks(db, ids).values()), {}, db)
    assert from_rows == _folded_now(system, ids, declared=False)
    assert components[good][0] > components[bad][0]
    arun(system.close())


def test_rows_follow_notes_another_process_wrote(repo: Path) -> None:
    first, (good, bad, _) = _memory(repo)
    before = _components(first)
    second = arun(MemorySystem.from_config(repo))
    for _ in range(3):
        arun(second.outcome([bad], 1.0))
    arun(second.close())

    after = _components(first)
    assert after[bad][0] > before[bad][0]
    assert after[good] == before[good]
    core = first._core
    assert ledgerstate.stored_tip(core.db()) == core.store.ledger.tip()
    arun(first.close())


def test_rows_keyed_to_a_commit_the_repository_lacks_are_refolded(repo: Path) -> None:
    system, (good, bad, _) = _memory(repo)
    arun(system.outcome([good], 1.0))
    expected = _components(system)
    db = system._core.db()
    with db.write() as conn:
        conn.execute("UPDATE ledger_state SET alpha = 99")
        conn.execute("UPDATE meta SET value = ? WHERE key = ?", ("ab" * 20, ledgerstate.TIP_KEY))

    assert _components(system) == expected
    assert ledgerstate.stored_tip(db) == system._core.store.ledger.tip()
    assert db.conn.execute("SELECT max(alpha) FROM ledger_state").fetchone()[0] < 99
    arun(system.close())


def test_a_query_drops_rows_of_many_changed_notes_and_folds_only_its_candidates(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system, (good, bad, other) = _memory(repo)
    _components(system)
    db = system._core.db()
    assert db.conn.execute("SELECT count(*) FROM ledger_state").fetchone()[0] >= 3
    arun(system.outcome([good, bad, other], 1.0))  # one notes commit touching three notes
    monkeypatch.setattr(adaptive, "EAGER_REFOLD", 2)

    result = arun(system.recall("nightly backups", top_k=1, reinforce=False))
    tip = system._core.store.ledger.tip()
    assert ledgerstate.stored_tip(db) == tip
    rows = ledgerstate.read(db, str(tip), [anchor_for_block(b) for b in (good, bad, other)])
    assert rows is not None
    # Every candidate the query ranked was folded and saved; the rest wait to be met.
    assert {anchor_for_block(b.id) for b in result.ranked} <= set(rows)
    for block_id in (good, bad, other):
        if anchor_for_block(block_id) in rows:
            assert rows[anchor_for_block(block_id)].alpha == pytest.approx(1.5)
    arun(system.close())


def test_spooled_events_count_before_they_reach_the_notes(repo: Path) -> None:
    system, _ = _memory(repo)
    before = _components(system)
    top = arun(system.recall(QUERY, top_k=1)).blocks[0].id  # reinforced through the spool
    assert system._core.store.spool.size() > 0
    after = _components(system)
    assert after[top][1] > before[top][1]
    arun(system.close())


def test_a_query_does_not_queue_behind_another_writer_to_save_rows(repo: Path) -> None:
    system, ids = _memory(repo)
    core = system._core
    db = core.db()
    blocks = list(queries.get_blocks(db, ids).values())
    expected = core.ledger.states(blocks, {}, db)
    with db.write() as conn:
        conn.execute("DELETE FROM ledger_state")
    assert db.path is not None
    other = sqlite3.connect(db.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
    try:
        started = time.monotonic()
        assert core.ledger.states(blocks, {}, db) == expected
        # A hang check, not a speed target: the index's busy timeout is 10 s.
        assert time.monotonic() - started < 5
        assert db.conn.execute("SELECT count(*) FROM ledger_state").fetchone()[0] == 0
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert core.ledger.states(blocks, {}, db) == expected
    assert db.conn.execute("SELECT count(*) FROM ledger_state").fetchone()[0] == 3
    arun(system.close())


def test_dream_on_a_fresh_index_folds_the_notes_it_wrote(repo: Path) -> None:
    system, ids = _memory(repo)  # no query has run: dream keyed the rows
    core = system._core
    db = core.db()
    tip = core.store.ledger.tip()
    assert tip is not None and ledgerstate.stored_tip(db) == tip
    rows = ledgerstate.read(db, tip, [anchor_for_block(b) for b in ids])
    assert rows is not None and set(rows) == {anchor_for_block(b) for b in ids}
    states = core.ledger.states(list(queries.get_blocks(db, ids).values()), {}, db)
    assert states == _folded_now(system, ids, declared=False)
    arun(system.close())
