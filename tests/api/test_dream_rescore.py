"""Deep sleep (``dream --rescore``): aged active blocks are judged again, as additive evidence."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

from elfmem.adapters.scripted import ScriptedLLM
from elfmem.api import MemorySystem
from elfmem.store.ledger import encode, fold, make_event
from elfmem.store.notes import anchor_for_block, clock_anchor
from tests.conftest import arun, git

HOUR = 3600.0
FACTS = [
    "Nightly backups run at 02:00 UTC",
    "Backups are kept in object storage for 30 days",
    "Prefer small pull requests with one reviewer",
]


def _reply(alignment: float, tags: list[str], summary: str) -> str:
    return json.dumps(
        {"alignment": alignment, "tags": tags, "summary": summary, "revision_of": None}
    )


def _memory(repo: Path) -> tuple[MemorySystem, list[str]]:
    system, _ = arun(MemorySystem.init(repo))
    ids = arun(system.remember_many([{"content": f} for f in FACTS])).created
    arun(system.dream(max_blocks=10, no_llm=True))
    return system, ids


def _judged_long_ago(system: MemorySystem, block_id: str, alignment: float) -> None:
    """An analysis from 100 wall hours ago, followed by 50 active hours of sessions."""
    core = system._core
    then = time.time() - 100 * HOUR
    stamp = datetime.fromtimestamp(then, UTC).isoformat(timespec="microseconds")
    core.store.spool.append(
        anchor_for_block(block_id),
        core.event("analysis", block_id, ts=stamp, alignment=alignment, summary="old view"),
    )
    core.store.spool.append(
        clock_anchor(),
        core.event("session", None, id="past", start=then - HOUR, end=then + 50 * HOUR),
    )
    core.store.flush_spool()


def _analyses(system: MemorySystem, block_id: str) -> list[dict[str, object]]:
    events = arun(system.ledger(block_id)).events
    return [e for e in events if e["kind"] == "analysis"]


def test_the_fold_keeps_every_analysis_and_the_latest_well_formed_one_counts() -> None:
    def line(ts: str, alignment: float, malformed: bool = False) -> str:
        event = make_event(
            "analysis", agent="a", block="b", ts=ts, alignment=alignment, malformed=malformed
        )
        return encode(event)

    lines = [
        line("2025-01-01T00:00:00+00:00", 0.2),
        line("2025-03-01T00:00:00+00:00", 0.9),
        line("2025-05-01T00:00:00+00:00", 0.5, malformed=True),  # garbage never overrides
    ]
    for order in (lines, lines[::-1], [lines[1], lines[2], lines[0]]):
        state = fold(order)
        assert state.alignment == 0.9 and state.analyses == 3
        assert state.last_analysis == datetime(2025, 5, 1, tzinfo=UTC).timestamp()
    assert fold([]).alignment is None and fold([]).last_analysis is None


def test_rescore_with_an_llm_adds_a_second_analysis_and_the_fold_follows(repo: Path) -> None:
    system, (backups, storage, prs) = _memory(repo)
    _judged_long_ago(system, backups, 0.2)
    # storage and prs were never judged; judge prs now so it is fresh.
    arun(system.begin_session())
    system._core.store.spool.append(
        anchor_for_block(prs), system._core.event("analysis", prs, alignment=0.6)
    )
    llm = system.llm = ScriptedLLM(
        lambda _system, prompt: (
            _reply(0.9, ["ops/backup"], "backups nightly")
            if "Nightly" in prompt
            else _reply(0.7, [], "retention")
        )
    )
    notes_before = int(git(repo, "rev-list", "--count", "refs/notes/elfmem"))
    result = arun(system.dream(rescore=True))
    assert result.processed == 0 and result.mode == "llm"
    assert result.rescored == [storage, backups]  # never judged first, then the oldest
    assert prs not in result.rescored and len(llm.calls) == 2
    assert "rescored 2 aged blocks" in result.summary
    assert result.analyses[backups]["alignment"] == 0.9
    first, second = sorted(_analyses(system, backups), key=lambda e: str(e["ts"]))
    assert first["alignment"] == 0.2 and "rescore" not in first  # the old evidence stays
    assert second["alignment"] == 0.9 and second["rescore"] is True
    assert second["tags"] == ["ops/backup"]
    state = system._core.ledger.folded(backups)
    assert state.alignment == 0.9 and state.analyses == 2 and state.summary == "backups nightly"
    # The new tag joined the block's in one content commit; the ledger took one notes commit.
    assert result.retagged == [backups] and result.commit_id is not None
    assert "ops/backup" in arun(system.show(backups)).tags
    assert int(git(repo, "rev-list", "--count", "refs/notes/elfmem")) == notes_before + 1
    arun(system.undo())
    assert "ops/backup" not in arun(system.show(backups)).tags
    assert system._core.ledger.folded(backups).alignment == 0.9  # evidence is not content
    arun(system.end_session())
    arun(system.close())


def test_rescore_is_bounded_by_max_blocks(repo: Path) -> None:
    system, (backups, storage, prs) = _memory(repo)
    system.llm = ScriptedLLM(lambda _s, _p: _reply(0.5, [], "ok"))
    result = arun(system.dream(max_blocks=2, rescore=True))
    assert len(result.rescored) == 2 and not result.retagged and result.commit_id is None
    # Judged now, so fresh: a second deep sleep takes only the one left.
    assert arun(system.dream(rescore=True)).rescored == [
        b for b in (backups, storage, prs) if b not in result.rescored
    ]
    arun(system.close())


def test_rescore_without_an_llm_says_so_and_refreshes_only_edges(repo: Path) -> None:
    system, ids = _memory(repo)
    head = git(repo, "rev-parse", "HEAD")
    result = arun(system.dream(rescore=True, no_llm=True))
    assert result.mode == "deterministic" and "without an LLM" in result.rescore_note
    assert "without an LLM" in result.summary and sorted(result.rescored) == sorted(ids)
    assert result.commit_id is None and git(repo, "rev-parse", "HEAD") == head
    assert all(_analyses(system, b) == [] for b in ids)
    arun(system.close())


def test_host_analyses_rescore_exactly_the_active_blocks_they_name(repo: Path) -> None:
    system, (backups, storage, _) = _memory(repo)
    inbox = arun(system.remember("Deploys happen on Tuesdays")).block_id
    analyses = {
        backups: {"alignment": 0.8, "tags": ["ops/backup"], "summary": "host view"},
        inbox: {"alignment": 0.4, "tags": [], "summary": "new"},
    }
    result = arun(system.dream(host_analyses=analyses, rescore=True))
    assert result.promoted == [inbox] and result.rescored == [backups]
    assert result.retagged == [backups] and "ops/backup" in arun(system.show(backups)).tags
    assert system._core.ledger.folded(backups).alignment == 0.8
    assert system._core.ledger.folded(storage).analyses == 0
    arun(system.close())


def test_rescore_reports_progress(repo: Path) -> None:
    system, _ = _memory(repo)
    system.llm = ScriptedLLM(lambda _s, _p: _reply(0.5, [], "ok"))
    calls: list[tuple[str, int, int]] = []
    arun(system.dream(rescore=True, progress=lambda *c: calls.append(c)))
    assert [c for c in calls if c[0] == "rescore"] == [("rescore", i, 3) for i in range(4)]
    arun(system.close())
