"""Diversity never undoes a revision: the block that won a revision pair stays ahead of the block
it beat, whatever MMR made of their similarity to the blocks picked before them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.retrieval import truth
from elfmem.retrieval.ranking import order, winners_first
from elfmem.retrieval.state import PRIOR
from tests.conftest import block_row


def _unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def test_a_correction_placed_a_hair_above_stays_ahead_when_it_resembles_the_first_pick_more() -> (
    None
):
    # p is picked first; c (the correction) resembles p a little more than o does, so MMR alone
    # would put o first: c 0.7·0.9 − 0.3·0.6 < o 0.7·0.9 − 0.3·0.5.
    vectors = {
        "p": _unit([1.0, 0.0, 0.0]),
        "c": _unit([0.6, 0.8, 0.0]),
        "o": _unit([0.5, 0.0, float(np.sqrt(0.75))]),
    }
    rows = [block_row("p"), block_row("o"), block_row("c", created="2026-02-01T00:00:00+00:00")]
    ranked = order(
        rows,
        np.array([1.0, 0.9, 0.9]),
        [PRIOR] * 3,
        set(),
        [("c", "o")],
        3,
        lambda ids: {i: vectors[i] for i in ids},
    )
    names = [rows[r.index].id for r in ranked]
    assert names == ["p", "c", "o"]
    assert "superseded by [c]" in ranked[2].note
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_a_winner_left_out_by_diversity_takes_the_last_place_before_its_loser() -> None:
    picks = [(0, 0.9), (1, 0.5), (2, 0.4)]
    assert winners_first(picks, [(3, 1)], {0, 1, 2, 3}) == [(0, 0.9), (3, 0.5), (1, 0.4)]
    # a winner outside the candidates (refuted or guaranteed) is never pulled in
    assert winners_first(picks, [(3, 1)], {0, 1, 2}) == picks
    # a pair already in order, or whose loser is not shown, is left alone
    assert winners_first(picks, [(0, 2), (3, 5)], {0, 1, 2, 3, 5}) == picks


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(3, 8),
    seed=st.integers(0, 2**32 - 1),
    pairs=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=4),
    k=st.integers(1, 8),
)
def test_no_revision_winner_is_shown_after_the_block_it_beat(
    n: int, seed: int, pairs: list[tuple[int, int]], k: int
) -> None:
    rng = np.random.default_rng(seed)
    ids = [f"b{i}" for i in range(n)]
    vectors = {i: _unit(list(rng.normal(size=4))) for i in ids}
    rows = [block_row(i, created=f"2026-01-{1 + j:02d}T00:00:00+00:00") for j, i in enumerate(ids)]
    relevance = rng.uniform(0.1, 1.0, size=n)
    named = [(ids[a], ids[b]) for a, b in pairs if a < n and b < n and a != b]
    ranked = order(
        rows, relevance, [PRIOR] * n, set(), named, k, lambda q: {i: vectors[i] for i in q}
    )
    shown = [r.index for r in ranked]
    placed = truth.place_revisions(ids, list(relevance), [PRIOR] * n, named)
    cyclic = {frozenset(p) for p in placed.above if tuple(reversed(p)) in placed.above}
    for winner, loser in placed.above:
        if loser in shown and frozenset((winner, loser)) not in cyclic:
            assert winner in shown and shown.index(winner) < shown.index(loser)
    assert len(shown) == min(k, n) and len(set(shown)) == len(shown)
