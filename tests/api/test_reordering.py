"""Temporal contiguity through the real recall path: it only reorders the blocks the searches
found, so it never pads an answer and never loses a block that bears on it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elfmem.api import MemorySystem
from elfmem.retrieval.settings import SearchSettings
from elfmem.rhythms import recall as recall_mod
from tests.api.test_dense_feedback import TURNS, WORDS, turns_memory
from tests.api.test_truth import OPS, RATE_OLD
from tests.conftest import arun

ON = SearchSettings(contiguity=1.0, contiguity_from=3)
OFF = SearchSettings(contiguity=0.0)


def _contents(system: MemorySystem, query: str, s: SearchSettings, k: int) -> list[str]:
    found = recall_mod.frame(system._core, "attention", query, top_k=k, reinforce=False, settings=s)
    return [b.content for b in found.ranked]


def test_a_fact_captured_next_to_the_answer_is_not_returned_for_a_one_fact_question(
    repo: Path,
) -> None:
    system, _ = arun(MemorySystem.init(repo, name="Ada"))
    arun(system.remember_many([{"content": c} for c in OPS]))  # one batch: neighbours in a file
    arun(system.dream())
    for s in (OFF, ON):
        assert _contents(system, "what is the API rate limit", s, 5) == [RATE_OLD]
    arun(system.close())


def test_a_neighbour_that_bears_on_the_query_rises(repo: Path) -> None:
    """Two turns about one workshop, captured one after the other among unrelated turns: the
    answer shares one common word with the question, so it ranks low until the turn beside it
    lifts it. Word matches are fused here as before coverage weighed them (floor 0.4, each
    counted whole), to isolate contiguity: with the product's weighing the thin matches above
    the answer sink by themselves and it is near the top without contiguity."""
    question = "Caroline: Did you go to the pottery workshop on Sunday?"
    answer = "Melanie: Yes! The funniest thing happened: the kids made bowls and got so dirty."
    system, _ = arun(MemorySystem.init(repo, name="Ada", seed=False))
    arun(system.remember_many([{"content": t} for t in [*TURNS[:6], question, answer, *TURNS[6:]]]))
    arun(system.dream(max_blocks=40, no_llm=True))
    query = "What happened at the pottery workshop?"
    everything = len(TURNS) + 2
    whole = SearchSettings(contiguity=0.0, coverage_min=0.4, coverage_power=0.0)
    off = _contents(system, query, whole, everything)
    # one place either side: under the transformer the turns two places away bear on the question
    # too (cosine above its gate), and they would be lifted level with the answer
    lifted = SearchSettings(contiguity=0.9, contiguity_span=1, coverage_min=0.4, coverage_power=0.0)
    on = _contents(system, query, lifted, everything)
    assert off[0] == question and on[0] == question
    assert answer in off, "the answer must bear on the query by itself for this test to mean much"
    assert on.index(answer) <= 2 < off.index(answer)
    assert set(on) == set(off)
    assert _contents(system, query, OFF, everything).index(answer) <= 2  # weighed, no lift
    arun(system.close())


def test_contiguity_neither_adds_nor_drops_a_block_that_bears_on_the_query(repo: Path) -> None:
    """Hunting for a block the rule loses or adds: whatever the query and the knobs, recall
    returns the same blocks with contiguity as without it (top k = every block)."""
    system = turns_memory(repo)

    @settings(
        max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
        st.sampled_from([0.3, 0.5, 1.0]),
        st.integers(1, 4),
        st.integers(1, 3),
    )
    def check(query: str, share: float, top: int, span: int) -> None:
        plain = _contents(system, query, SearchSettings(seeds=3, contiguity=0.0), len(TURNS))
        rules = SearchSettings(seeds=3, contiguity=share, contiguity_from=top, contiguity_span=span)
        assert sorted(plain) == sorted(_contents(system, query, rules, len(TURNS))), query

    try:
        check()
    finally:
        arun(system.close())
