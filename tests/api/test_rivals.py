"""Rival answers captured together are ordered by outcomes once both are judged and their
records differ by two, whatever the question's words favour; one outcome (which may be
mistaken) never reorders them, and a correction captured later keeps its own rule. Real
repositories, the real embedded model, the real ledger."""

from __future__ import annotations

from pathlib import Path

from elfmem.api import MemorySystem
from elfmem.clock import SimulatedClock
from tests.conftest import arun

# (question worded like the wrong answer, right answer, wrong answer)
RIVALS = (
    (
        "is the cache of the collector_ember7 running",
        "The cache of the collector_ember7 is disabled",
        "The cache of the collector_ember7 is running",
    ),
    (
        "does the fjord exporter write to bucket exporter-audit-3",
        "The fjord exporter writes to bucket exporter-raw-4",
        "The fjord exporter writes to bucket exporter-audit-3",
    ),
    (
        "is the next maintenance window of the Project Yarrow on March 1",
        "The next maintenance window of the Project Yarrow is on October 13",
        "The next maintenance window of the Project Yarrow is on March 1",
    ),
)
OTHERS = (
    "The collector_ember7 writes its logs to /var/log/collector.log",
    "The fjord exporter runs 8 replicas",
    "The Project Yarrow is owned by Dana Park",
)


def _top(system: MemorySystem, question: str) -> str:
    return arun(system.recall(question, top_k=5, reinforce=False)).blocks[0].id


def _captured_together(repo: Path) -> tuple[MemorySystem, list[tuple[str, str, str]]]:
    clock = SimulatedClock(1767603600.0)  # one batch, one second, however slow the machine
    system, _ = arun(MemorySystem.init(repo, name="Ada", clock=clock))
    texts = [t for _, right, wrong in RIVALS for t in (right, wrong)]
    ids = arun(system.remember_many([{"content": t} for t in [*texts, *OTHERS]])).created
    arun(system.dream(no_llm=True))
    found = [(q, ids[2 * n], ids[2 * n + 1]) for n, (q, _, _) in enumerate(RIVALS)]
    return system, found


def test_outcomes_that_lead_by_two_put_the_right_rival_above_the_one_the_words_favour(
    repo: Path,
) -> None:
    system, found = _captured_together(repo)
    for question, _, wrong in found:
        assert _top(system, question) == wrong  # relevance alone favours the wrong one
    for _, right, wrong in found:
        arun(system.outcome([right], 1.0, source="test"))
        arun(system.outcome([wrong], 0.0, source="test"))
    for question, right, _ in found:
        assert _top(system, question) == right
    arun(system.close())


def test_one_outcome_never_reorders_rivals(repo: Path) -> None:
    system, found = _captured_together(repo)
    for _, right, wrong in found:
        arun(system.outcome([right], 1.0, source="test"))
        arun(system.outcome([wrong], 1.0, source="test"))
        arun(system.outcome([right], 1.0, source="test"))
    for question, _, wrong in found:
        assert _top(system, question) == wrong
    arun(system.close())


def test_a_rival_nobody_judged_keeps_its_place(repo: Path) -> None:
    """It may be news nobody has seen yet: confirmations of the other do not pass it."""
    system, found = _captured_together(repo)
    for _, right, _ in found:
        for _ in range(3):
            arun(system.outcome([right], 1.0, source="test"))
    for question, _, wrong in found:
        assert _top(system, question) == wrong
    arun(system.close())


def test_a_correction_captured_later_keeps_its_place_over_a_confirmed_older_block(
    repo: Path,
) -> None:
    """Not rivals but a revision: the newer one wins until outcomes refute it."""
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    question, old_text, _ = RIVALS[0]
    old = arun(system.remember(old_text)).block_id
    arun(system.dream(no_llm=True))
    for _ in range(3):
        arun(system.outcome([old], 1.0, source="test"))
    new = arun(system.remember("The cache of the collector_ember7 is enabled")).block_id
    arun(system.dream(no_llm=True))
    assert _top(system, question) == new
    arun(system.close())
