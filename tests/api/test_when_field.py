"""The temporal field: ``when:`` written by remember, indexed, and used by recall."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from elfmem.api import MemorySystem
from elfmem.errors import InvalidInput
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod
from tests.conftest import arun, git

TRIPS = [
    ("I went hiking in the Alps with my sister", "2023-05-08"),
    ("I went hiking in Norway with my sister", "2024-07-02"),
    ("I went hiking in Wales with my sister", ""),
]


def _memory(repo: Path) -> tuple[MemorySystem, dict[str, str]]:
    system, _ = arun(MemorySystem.init(repo, name="Ada", seed=False))
    ids = {}
    for text, when in TRIPS:
        ids[text] = arun(system.remember(text, cue="travel", when=when)).block_id
    arun(system.dream(max_blocks=10, no_llm=True))
    return system, ids


def _order(system: MemorySystem, query: str, today: date | None = None) -> list[str]:
    result = recall_mod.frame(
        system._core,
        "attention",
        query,
        top_k=3,
        reinforce=False,
        settings=SearchSettings(today=today),
    )
    return [b.content for b in result.ranked]


def test_when_is_written_as_frontmatter_and_indexed(repo: Path) -> None:
    system, ids = _memory(repo)
    files = git(repo, "grep", "-h", "when: ", "HEAD", "--", ".").splitlines()
    assert any("when: 2023-05-08" in line for line in files)
    assert sum("when: " in line for line in files) == 2  # the undated block states none
    row = (
        system._core.db()
        .conn.execute("SELECT said FROM blocks WHERE id = ?", (ids[TRIPS[0][0]],))
        .fetchone()
    )
    assert row == ("2023-05-08",)
    arun(system.close())


def test_a_named_time_lifts_the_block_said_then(repo: Path) -> None:
    system, _ = _memory(repo)
    assert _order(system, "Where did I go hiking in July 2024?")[0] == TRIPS[1][0]
    assert _order(system, "Where did I go hiking in May 2023?")[0] == TRIPS[0][0]
    relative = _order(system, "Where did I go hiking yesterday?", today=date(2024, 7, 3))
    assert relative[0] == TRIPS[1][0]
    arun(system.close())


def test_the_date_is_shown_for_when_questions_only(repo: Path) -> None:
    system, _ = _memory(repo)
    asked = arun(system.recall("When did I go hiking in the Alps?", top_k=3, reinforce=False))
    assert "(said: 2023-05-08)" in asked.text
    other = arun(system.recall("Where did I go hiking?", top_k=3, reinforce=False))
    assert "said:" not in other.text
    arun(system.close())


def test_an_unreadable_when_is_refused_and_nothing_is_written(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo, name="Ada", seed=False))
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput):
        arun(system.remember("A fact", when="someday"))
    with pytest.raises(InvalidInput):
        arun(system.remember_many([{"content": "ok"}, {"content": "bad", "when": "2023-02-30"}]))
    assert git(repo, "rev-parse", "HEAD") == head
    arun(system.close())


def test_a_hand_written_when_that_is_not_a_date_is_kept_but_not_used(repo: Path) -> None:
    system, ids = _memory(repo)
    block_id = ids[TRIPS[0][0]]
    path = next(p for p in repo.rglob("*.md") if block_id in p.read_text())
    path.write_text(path.read_text().replace("when: 2023-05-08", "when: spring"))
    order = _order(system, "Where did I go hiking in May 2023?")
    assert len(order) == 3
    said = (
        system._core.db()
        .conn.execute("SELECT said, extra FROM blocks WHERE id = ?", (block_id,))
        .fetchone()
    )
    assert said[0] == ""
    assert "spring" in said[1]
    arun(system.close())


def test_a_period_is_stored_as_one_and_a_day_inside_it_lifts_the_block(repo: Path) -> None:
    system, _ = arun(MemorySystem.init(repo, name="Ada", seed=False))
    trip = "I went sailing in Brittany with my sister"
    arun(system.remember(trip, cue="travel", when="8 May 2023 to 9 June 2023"))
    arun(system.remember("I went sailing in Croatia with my sister", cue="travel", when="2024"))
    arun(system.dream(max_blocks=10, no_llm=True))
    files = git(repo, "grep", "-h", "when: ", "HEAD", "--", ".").splitlines()
    assert any("when: 2023-05-08/2023-06-09" in line for line in files)
    assert _order(system, "Where did I go sailing on 20 May 2023?")[0] == trip
    asked = arun(system.recall("When did I go sailing in Brittany?", top_k=2, reinforce=False))
    assert "(said: 2023-05-08 to 2023-06-09)" in asked.text
    arun(system.close())
