"""Beta confidence and the outcome bands, checked against hand arithmetic."""

from __future__ import annotations

import math

import pytest

from elfmem.errors import InvalidInput
from elfmem.retrieval.confidence import (
    JEFFREYS_PRIOR,
    band,
    beta_evidence,
    beta_mean,
    beta_update,
)


def test_jeffreys_prior_is_half_half_and_means_one_half() -> None:
    assert JEFFREYS_PRIOR == (0.5, 0.5)
    assert beta_mean(*JEFFREYS_PRIOR) == 0.5


def test_one_success_from_the_prior() -> None:
    # α = 0.5 + 1·1 = 1.5, β = 0.5 + 1·0 = 0.5; mean 1.5 / 2 = 0.75
    alpha, beta = beta_update(0.5, 0.5, 1.0)
    assert (alpha, beta) == (1.5, 0.5)
    assert beta_mean(alpha, beta) == 0.75


def test_weighted_partial_signal() -> None:
    # w = 2, s = 0.3: α = 0.5 + 0.6 = 1.1, β = 0.5 + 1.4 = 1.9; mean 1.1 / 3.0 = 0.36667
    alpha, beta = beta_update(0.5, 0.5, 0.3, weight=2.0)
    assert (alpha, beta) == pytest.approx((1.1, 1.9))
    assert beta_mean(alpha, beta) == pytest.approx(0.3666667)


def test_signal_one_half_is_not_a_no_op() -> None:
    # (3.5, 0.5) has mean 0.875; adding s = 0.5 gives (4.0, 1.0), mean 0.8: pulled toward 0.5
    assert beta_mean(*beta_update(3.5, 0.5, 0.5)) == 0.8
    # from below: (0.5, 3.5) mean 0.125 → (1.0, 4.0) mean 0.2
    assert beta_mean(*beta_update(0.5, 3.5, 0.5)) == 0.2


def test_mature_blocks_move_slower_than_cold_ones() -> None:
    # cold (0.5, 0.5) + failure → (0.5, 1.5): 0.5 → 0.25, a move of 0.25
    cold = 0.5 - beta_mean(*beta_update(0.5, 0.5, 0.0))
    # mature (10.5, 0.5) + failure → (10.5, 1.5): 0.954545 → 0.875, a move of 0.0795
    mature = beta_mean(10.5, 0.5) - beta_mean(*beta_update(10.5, 0.5, 0.0))
    assert cold == 0.25
    assert mature == pytest.approx(0.0795455)


def test_updates_commute_so_clones_fold_to_the_same_posterior() -> None:
    events = [(1.0, 1.0), (0.0, 2.0), (0.5, 0.5)]
    forward, backward = JEFFREYS_PRIOR, JEFFREYS_PRIOR
    for s, w in events:
        forward = beta_update(*forward, s, w)
    for s, w in reversed(events):
        backward = beta_update(*backward, s, w)
    # α = 0.5 + 1 + 0 + 0.25 = 1.75, β = 0.5 + 0 + 2 + 0.25 = 2.75
    assert forward == backward == (1.75, 2.75)


def test_bands_and_their_boundaries() -> None:
    assert [band(s) for s in (1.0, 0.8)] == ["reinforce", "reinforce"]
    assert [band(s) for s in (0.79, 0.5, 0.2)] == ["neutral"] * 3  # 0.2 itself is neutral
    assert [band(s) for s in (0.19, 0.0)] == ["penalise", "penalise"]


def test_band_thresholds_follow_config() -> None:
    assert band(0.25, penalise_below=0.3) == "penalise"
    assert band(0.75, reinforce_at=0.7) == "reinforce"
    with pytest.raises(InvalidInput):
        band(0.5, reinforce_at=0.1, penalise_below=0.2)


@pytest.mark.parametrize("signal", [-0.1, 1.1, math.nan, math.inf, "0.5", True, None])
def test_signal_outside_unit_interval_is_refused(signal: object) -> None:
    with pytest.raises(InvalidInput) as err:
        beta_update(0.5, 0.5, signal)  # type: ignore[arg-type]
    assert err.value.recovery
    with pytest.raises(InvalidInput):
        band(signal)  # type: ignore[arg-type]


@pytest.mark.parametrize("weight", [0.0, -1.0, math.nan, math.inf])
def test_weight_must_be_positive_and_finite(weight: float) -> None:
    with pytest.raises(InvalidInput) as err:
        beta_update(0.5, 0.5, 1.0, weight=weight)
    assert "weight" in str(err.value)


def test_posterior_parameters_must_be_positive() -> None:
    with pytest.raises(InvalidInput):
        beta_mean(0.0, 1.0)
    with pytest.raises(InvalidInput):
        beta_update(0.5, -1.0, 1.0)


def test_evidence_counts_observations_beyond_the_prior() -> None:
    assert beta_evidence(0.5, 0.5) == 0.0
    # (3.5, 1.5): 3.5 + 1.5 − 1.0 = 4.0 observations
    assert beta_evidence(3.5, 1.5) == 4.0
