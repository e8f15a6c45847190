"""A confirmed block passes unjudged notes on its subject that answer nothing, and nothing else
(``retrieval/confirmed.py`` through ``ranking.order``)."""

from __future__ import annotations

import numpy as np

from elfmem.retrieval.ranking import order
from elfmem.retrieval.state import BlockState
from tests.conftest import block_row

FACT = "The billing service is owned by the payments team"
NOTE = "A review of the owner of the billing service is planned"
OTHER_NOTE = "We should document the owner of the billing service better"
ANSWER = "Since June the billing service is owned by the data team"
ELSEWHERE = "The search service is owned by the growth team"
CONFIRMED = BlockState(alpha=3.5, beta=0.5)
FRESH = BlockState()


def _rank(texts: list[str], relevance: list[float], states: list[BlockState]) -> list[str]:
    rows = [block_row(f"b{i}", t) for i, t in enumerate(texts)]
    vectors = {f"b{i}": np.eye(8, dtype=np.float32)[i] for i in range(len(texts))}
    ranked = order(
        rows,
        np.array(relevance),
        states,
        set(),
        [],
        5,
        lambda q: {i: vectors[i] for i in q},
        relevance=relevance,
    )
    return [texts[r.index] for r in ranked]


def test_a_confirmed_block_passes_the_notes_above_it() -> None:
    got = _rank([NOTE, OTHER_NOTE, FACT], [1.0, 0.95, 0.8], [FRESH, FRESH, CONFIRMED])
    assert got == [FACT, NOTE, OTHER_NOTE]


def test_without_confirmations_relevance_decides() -> None:
    got = _rank([NOTE, FACT], [1.0, 0.8], [FRESH, BlockState(alpha=2.5, beta=0.5)])
    assert got == [NOTE, FACT]


def test_a_confirmed_block_never_passes_a_block_that_says_something() -> None:
    got = _rank([NOTE, ANSWER, FACT], [1.0, 0.95, 0.8], [FRESH, FRESH, CONFIRMED])
    assert got == [NOTE, ANSWER, FACT]
    got = _rank([ANSWER, FACT], [1.0, 0.8], [FRESH, CONFIRMED])  # a competing answer
    assert got == [ANSWER, FACT]


def test_a_confirmed_block_far_less_relevant_or_on_another_subject_stays() -> None:
    assert _rank([NOTE, FACT], [1.0, 0.4], [FRESH, CONFIRMED]) == [NOTE, FACT]
    assert _rank([NOTE, ELSEWHERE], [1.0, 0.9], [FRESH, CONFIRMED]) == [NOTE, ELSEWHERE]
