"""The truth rules as pure maths: evidence, refutation, revisions, the diversity exemption."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.retrieval import mmr, truth
from elfmem.retrieval.state import BlockState


def state(confirmed: float = 0.0, refuted: float = 0.0) -> BlockState:
    return BlockState(alpha=0.5 + confirmed, beta=0.5 + refuted)


def test_evidence_factor_is_one_for_the_prior_and_asymmetric() -> None:
    assert truth.evidence_factor(state()) == 1.0
    assert truth.evidence_factor(state(refuted=1)) == pytest.approx(0.75)  # mean 0.25
    assert truth.evidence_factor(state(confirmed=1)) == pytest.approx(1.125)  # mean 0.75
    assert truth.evidence_factor(state(refuted=100)) > 0.5
    assert truth.evidence_factor(state(confirmed=100)) < 1.25


def test_refuted_needs_two_net_refutations_so_one_flipped_outcome_is_forgiven() -> None:
    assert not truth.is_refuted(state(refuted=1))
    assert truth.is_refuted(state(refuted=2))
    assert not truth.is_refuted(state(confirmed=1, refuted=2))
    assert truth.is_refuted(state(confirmed=1, refuted=3))


def test_only_blocks_not_more_often_refuted_earn_from_use() -> None:
    assert truth.earns_use(state()) and truth.earns_use(state(confirmed=1, refuted=1))
    assert not truth.earns_use(state(refuted=1))


def test_lift_is_bounded_and_mixes_by_frame_weight() -> None:
    weights = {"recency": 0.25, "centrality": 0.15, "reinforcement": 0.10}
    assert truth.lift(dict.fromkeys(truth.SECONDARY, 0.0), weights) == 1.0
    assert truth.lift(dict.fromkeys(truth.SECONDARY, 1.0), weights) == 1.0 + truth.LIFT_MAX
    only_recency = {"recency": 1.0, "centrality": 0.0, "reinforcement": 0.0}
    assert truth.lift(only_recency, weights) == pytest.approx(1 + truth.LIFT_MAX * 0.5)


def test_lift_never_outweighs_one_confirming_outcome() -> None:
    weights = {"recency": 0.25, "centrality": 0.15, "reinforcement": 0.10}
    popular = truth.lift(dict.fromkeys(truth.SECONDARY, 1.0), weights) * truth.evidence_factor(
        state()
    )
    confirmed = truth.evidence_factor(state(confirmed=3))
    refuted_popular = truth.evidence_factor(state(refuted=1)) * truth.lift(
        {"recency": 1.0, "centrality": 0.0, "reinforcement": 0.0}, weights
    )
    assert refuted_popular < 1.0 <= popular
    assert popular <= confirmed + 0.1  # at most a tenth above a block confirmed three times


def test_a_correction_holds_until_refuted_more_than_what_it_corrects() -> None:
    old = state(confirmed=5)
    assert truth.correction_holds(state(), old)  # old confirmations are stale evidence
    assert not truth.correction_holds(state(refuted=1), old)
    assert truth.correction_holds(state(refuted=1), state(refuted=3))


def test_place_revisions_moves_the_correction_just_above_and_names_it() -> None:
    ids = ["old", "other", "new"]
    placed = truth.place_revisions(
        ids, [0.9, 0.5, 0.4], [state(confirmed=3), state(), state()], [("new", "old")]
    )
    assert placed.scores[2] > placed.scores[0] > placed.scores[1]
    assert placed.notes == {0: "superseded by [new]"}
    assert placed.winners == {2} and placed.losers == {0}


def test_a_refuted_correction_falls_back_below_the_block_it_tried_to_replace() -> None:
    ids = ["old", "new"]
    placed = truth.place_revisions(ids, [0.3, 0.9], [state(), state(refuted=1)], [("new", "old")])
    assert placed.scores[0] > placed.scores[1]
    assert "outcomes refuted" in placed.notes[1] and placed.losers == set()


def test_a_chain_of_corrections_settles_newest_first() -> None:
    ids = ["a", "b", "c"]
    placed = truth.place_revisions(ids, [0.9, 0.5, 0.1], [state()] * 3, [("b", "a"), ("c", "b")])
    assert placed.scores[2] > placed.scores[1] > placed.scores[0]


def test_mmr_never_pushes_an_exempt_newer_twin_out() -> None:
    relevance = [1.0, 0.8, 0.6]
    sim = np.array([[1.0, 0.97, 0.1], [0.97, 1.0, 0.1], [0.1, 0.1, 1.0]])
    assert mmr.mmr_order(relevance, sim, 2, 0.7) == [0, 2]  # the twin is diversified away
    exempt = np.zeros((3, 3), dtype=bool)
    exempt[1, 0] = True  # candidate 1 is the newer twin of candidate 0
    picked = mmr.mmr_ranked(relevance, sim, 2, 0.7, exempt)
    assert [i for i, _ in picked] == [0, 1]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=12), st.integers(1, 12))
def test_mmr_gains_never_increase_down_the_list(relevance: list[float], k: int) -> None:
    rng = np.random.default_rng(len(relevance))
    vecs = rng.normal(size=(len(relevance), 8))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    gains = [g for _, g in mmr.mmr_ranked(relevance, vecs @ vecs.T, k)]
    assert all(a >= b - 1e-12 for a, b in zip(gains, gains[1:], strict=False))
    assert gains[0] > 0
