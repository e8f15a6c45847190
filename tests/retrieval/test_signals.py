"""The five signals: per-signal shapes, normalisation with floors, and the weighted composite."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.errors import InvalidInput
from elfmem.retrieval.frames import BUILTIN_FRAMES
from elfmem.retrieval.signals import (
    SIGNAL_FLOORS,
    SIGNALS,
    centrality_signal,
    composite,
    confidence_signal,
    normalise_over_candidates,
    normalise_signals,
    reinforcement_signal,
)

ATTENTION = BUILTIN_FRAMES["attention"].weights


def test_the_five_signals_each_have_a_floor() -> None:
    assert SIGNALS == ("similarity", "confidence", "recency", "centrality", "reinforcement")
    assert set(SIGNAL_FLOORS) == set(SIGNALS)


def test_min_max_when_the_range_exceeds_the_floor() -> None:
    # range 0.8 − 0.2 = 0.6 > 0.05: (0, 0.3, 0.6) / 0.6
    got = normalise_over_candidates([0.2, 0.5, 0.8], floor=0.05)
    assert got == pytest.approx([0.0, 0.5, 1.0])


def test_equal_values_carry_no_information() -> None:
    assert normalise_over_candidates([0.7, 0.7, 0.7], floor=0.1).tolist() == [0.0, 0.0, 0.0]


def test_a_range_under_the_floor_shrinks_instead_of_stretching() -> None:
    # range 0.02 < floor 0.1: (0, 0.02, 0.01) / 0.1 = (0, 0.2, 0.1), not (0, 1, 0.5)
    got = normalise_over_candidates([0.50, 0.52, 0.51], floor=0.1)
    assert got == pytest.approx([0.0, 0.2, 0.1])


def test_normalise_rejects_bad_input() -> None:
    assert normalise_over_candidates([], floor=0.1).size == 0
    with pytest.raises(InvalidInput):
        normalise_over_candidates([1.0], floor=0.0)
    with pytest.raises(InvalidInput):
        normalise_over_candidates([[1.0, 2.0]], floor=0.1)
    with pytest.raises(InvalidInput):
        normalise_over_candidates([1.0, float("nan")], floor=0.1)


def test_reinforcement_saturates_logarithmically() -> None:
    # ln(1 + n) / ln(51): n=0 → 0; n=1 → 0.693147 / 3.931826 = 0.176291; n=50 → 1; n=100 → capped
    got = reinforcement_signal([0, 1, 50, 100])
    assert got == pytest.approx([0.0, 0.176291, 1.0, 1.0], abs=1e-6)
    with pytest.raises(InvalidInput):
        reinforcement_signal([-1])


def test_centrality_is_hyperbolic_in_weighted_degree() -> None:
    # d / (d + 2): 0, 1/3, 2/4, 6/8
    assert centrality_signal([0.0, 1.0, 2.0, 6.0]) == pytest.approx([0.0, 1 / 3, 0.5, 0.75])
    with pytest.raises(InvalidInput):
        centrality_signal([-0.5])


def test_confidence_signal_is_the_beta_mean_per_candidate() -> None:
    # 0.5 / 1.0 = 0.5; 1.5 / 2.0 = 0.75
    assert confidence_signal([0.5, 1.5], [0.5, 0.5]).tolist() == [0.5, 0.75]
    with pytest.raises(InvalidInput):
        confidence_signal([0.5], [0.0])


def test_composite_is_the_weighted_sum() -> None:
    components = {
        "similarity": [1.0, 0.0],
        "confidence": [0.0, 1.0],
        "recency": [0.5, 0.5],
        "centrality": [0.0, 0.0],
        "reinforcement": [1.0, 0.0],
    }
    # attention 0.35/0.15/0.25/0.15/0.10:
    # [0] 0.35·1 + 0 + 0.25·0.5 + 0 + 0.10·1 = 0.575;  [1] 0 + 0.15·1 + 0.125 + 0 + 0 = 0.275
    assert composite(components, ATTENTION) == pytest.approx([0.575, 0.275])


def test_composite_checks_names_and_lengths() -> None:
    assert composite({"similarity": [0.5]}, {"similarity": 1.0, "recency": 0.0}).tolist() == [0.5]
    with pytest.raises(InvalidInput):
        composite({"similarity": [0.5]}, {"similarity": 0.5, "recency": 0.5})
    with pytest.raises(InvalidInput):
        composite({"simlarity": [0.5]}, {"similarity": 1.0})
    with pytest.raises(InvalidInput):
        composite({"similarity": [0.5], "recency": [0.1, 0.2]}, ATTENTION)


grid = st.integers(min_value=0, max_value=1000).map(lambda i: i / 1000)


@settings(deadline=None, derandomize=True)
@given(
    similarity=st.lists(grid, min_size=1, max_size=30),
    flat=st.tuples(grid, grid, grid, grid),
    frame=st.sampled_from(sorted(BUILTIN_FRAMES)),
)
def test_flat_signals_leave_the_similarity_ranking_exactly(
    similarity: list[float], flat: tuple[float, float, float, float], frame: str
) -> None:
    n = len(similarity)
    raw = {"similarity": similarity} | {
        name: [value] * n for name, value in zip(SIGNALS[1:], flat, strict=True)
    }
    scores = composite(normalise_signals(raw), BUILTIN_FRAMES[frame].weights)
    by_score = np.argsort(-scores, kind="stable").tolist()
    by_similarity = np.argsort(-np.asarray(similarity), kind="stable").tolist()
    assert by_score == by_similarity


def test_nearly_flat_signals_cannot_overturn_a_real_similarity_gap() -> None:
    raw = {
        "similarity": [0.90, 0.85],  # range 0.05 = floor → normalised (1, 0)
        "confidence": [0.500, 0.501],  # 0.001 / 0.10 → (0, 0.01)
        "recency": [0.9999, 1.0],  # 0.0001 / 0.05 → (0, 0.002)
        "centrality": [0.330, 0.331],  # 0.001 / 0.20 → (0, 0.005)
        "reinforcement": [0.170, 0.171],  # 0.001 / 0.30 → (0, 0.003333)
    }
    scores = composite(normalise_signals(raw), ATTENTION)
    # [0] 0.35;  [1] 0.15·0.01 + 0.25·0.002 + 0.15·0.005 + 0.10·0.003333 = 0.0030833
    assert scores == pytest.approx([0.35, 0.0030833], abs=1e-6)
    # plain min-max would have stretched each tiny spread to 1: [1] = 0.65 > 0.35, order flipped
    stretched = {name: normalise_over_candidates(v, floor=1e-12) for name, v in raw.items()}
    assert composite(stretched, ATTENTION) == pytest.approx([0.35, 0.65])


def test_custom_floors_fall_back_to_the_defaults() -> None:
    # recency floor 0.5: (0, 0.1) / 0.5 = (0, 0.2); similarity keeps its 0.05: (0, 0.1) / 0.1
    got = normalise_signals({"recency": [0.9, 1.0], "similarity": [0.1, 0.2]}, {"recency": 0.5})
    assert got["recency"] == pytest.approx([0.0, 0.2])
    assert got["similarity"] == pytest.approx([0.0, 1.0])
