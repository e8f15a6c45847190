"""Decay: recency, the penalty on λ, and the session clock, checked against hand arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from elfmem.block.model import TIER_LAMBDA
from elfmem.errors import InvalidInput
from elfmem.retrieval.decay import (
    active_hours,
    active_hours_at,
    active_hours_between,
    effective_lambda,
    hours_since,
    merge_intervals,
    recency,
)

HOUR = 3600.0
DAY = 24 * HOUR


def test_recency_is_exp_of_minus_lambda_hours_per_tier() -> None:
    lams = [TIER_LAMBDA[t] for t in ("permanent", "durable", "standard", "ephemeral")]
    # h = 100: e^-0.001 = 0.9990005, e^-0.1 = 0.9048374, e^-1 = 0.3678794, e^-5 = 0.0067379
    got = recency([100.0] * 4, lams)
    assert got == pytest.approx([0.9990005, 0.9048374, 0.3678794, 0.0067379], abs=1e-7)


def test_recency_is_one_at_zero_hours_and_for_a_future_last_use() -> None:
    # a last use 2 h "after" now (a clone's skewed clock) counts as just used, not as e^+0.02
    assert recency([0.0, -2.0], 0.01).tolist() == [1.0, 1.0]


def test_recency_rejects_nan_and_negative_lambda() -> None:
    with pytest.raises(InvalidInput):
        recency([math.nan], 0.01)
    with pytest.raises(InvalidInput) as err:
        recency([1.0], -0.01)
    assert err.value.recovery


def test_effective_lambda_doubles_per_penalty_until_the_cap() -> None:
    # standard 0.01: 0.01, 0.02, 0.04, then 0.08 capped to 0.05
    assert [effective_lambda(0.01, p) for p in range(4)] == [0.01, 0.02, 0.04, 0.05]
    # durable 0.001 · 2^5 = 0.032; · 2^6 = 0.064 → 0.05
    assert effective_lambda(0.001, 5) == pytest.approx(0.032)
    assert effective_lambda(0.001, 6) == 0.05
    # permanent 1e-5 · 2 = 2e-5: no tier is exempt here (outcome() keeps constitution out)
    assert effective_lambda(1e-5, 1) == pytest.approx(2e-5)


def test_effective_lambda_never_goes_below_the_tier_and_never_overflows() -> None:
    assert effective_lambda(0.05, 1) == 0.05  # ephemeral already sits at the cap
    assert effective_lambda(0.2, 3, cap=0.05) == 0.2  # a cap below the tier cannot slow it
    assert effective_lambda(0.01, 100_000) == 0.05
    with pytest.raises(InvalidInput):
        effective_lambda(0.01, -1)
    with pytest.raises(InvalidInput):
        effective_lambda(math.inf, 0)


def test_merge_intervals_joins_overlapping_and_touching_and_drops_empty() -> None:
    got = merge_intervals([(10, 20), (0, 5), (15, 30), (30, 40), (50, 50)])
    assert got == [(0.0, 5.0), (10.0, 40.0)]


def test_merge_intervals_rejects_backwards_and_non_finite() -> None:
    with pytest.raises(InvalidInput):
        merge_intervals([(5, 1)])
    with pytest.raises(InvalidInput):
        merge_intervals([(0, math.inf)])


def test_active_hours_counts_only_session_time_up_to_until() -> None:
    sessions = [(0.0, HOUR), (2 * HOUR, 3 * HOUR)]
    assert active_hours(sessions, 3 * HOUR) == 2.0  # 1 h + 1 h
    assert active_hours(sessions, 2.5 * HOUR) == 1.5  # 1 h + (2.5 − 2) h
    assert active_hours(sessions, 1.5 * HOUR) == 1.0  # the gap adds nothing
    assert active_hours(sessions, -1.0) == 0.0
    assert active_hours([], 10 * HOUR) == 0.0


def test_clones_recording_overlapping_sessions_merge_by_union() -> None:
    # clone A: 0–1 h, clone B: 0.5–1.5 h → union 0–1.5 h = 1.5 h, not 2 h
    assert active_hours([(0.0, HOUR), (0.5 * HOUR, 1.5 * HOUR)], 10 * HOUR) == 1.5


def test_active_hours_between_a_window_spanning_a_gap() -> None:
    sessions = [(0.0, HOUR), (2 * HOUR, 3 * HOUR)]
    # [0.5 h, 2.5 h]: (1 − 0.5) + (2.5 − 2) = 1.0 h
    assert active_hours_between(sessions, 0.5 * HOUR, 2.5 * HOUR) == 1.0
    assert active_hours_between(sessions, 2.5 * HOUR, 0.5 * HOUR) == 0.0


def test_a_fortnight_away_costs_the_memory_nothing() -> None:
    # used at the end of session 1; now is 30 min into a session 14 days later
    sessions = [(0.0, HOUR), (14 * DAY, 14 * DAY + HOUR)]
    now = 14 * DAY + 0.5 * HOUR
    h = hours_since(sessions, [HOUR], now)
    assert h.tolist() == [0.5]
    # standard λ: e^(−0.01 · 0.5) = e^−0.005 = 0.9950125
    assert recency(h, TIER_LAMBDA["standard"])[0] == pytest.approx(0.9950125, abs=1e-7)


def test_hours_since_is_vectorised_and_keeps_shape() -> None:
    sessions = [(0.0, HOUR), (2 * HOUR, 3 * HOUR)]
    # clock positions: 0 s → 0 h, 3600 s → 1 h, 9000 s → 1.5 h; now 10800 s → 2 h
    got = hours_since(sessions, np.array([0.0, HOUR, 2.5 * HOUR]), 3 * HOUR)
    assert got.tolist() == [2.0, 1.0, 0.5]
    assert active_hours_at(sessions, [[0.0, 3 * HOUR]]).shape == (1, 2)


@given(
    st.lists(
        st.tuples(st.floats(0, 1e9, allow_nan=False), st.floats(0, 1e6, allow_nan=False)),
        max_size=12,
    ),
    st.floats(-1e3, 1.1e9, allow_nan=False),
)
def test_the_one_time_clock_is_the_vectorised_clock_to_the_bit(
    spans: list[tuple[float, float]], until: float
) -> None:
    """``active_hours`` skips numpy for status and remember; it must not drift from the clock
    recall computes for every block."""
    sessions = [(start, start + length) for start, length in spans]
    assert active_hours(sessions, until) == float(active_hours_at(sessions, [until])[0])
