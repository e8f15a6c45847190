"""MMR: greedy relevance-versus-redundancy ordering, checked step by step."""

from __future__ import annotations

import math

import pytest

from elfmem.errors import InvalidInput
from elfmem.retrieval.mmr import MMR_LAMBDA, mmr_order

# 0 and 1 are near-duplicates; 2 is different
REL = [1.0, 0.9, 0.6]
SIM = [[1.0, 0.99, 0.1], [0.99, 1.0, 0.2], [0.1, 0.2, 1.0]]


def test_a_near_duplicate_yields_to_a_different_block() -> None:
    assert MMR_LAMBDA == 0.7
    # step 1: the most relevant, 0
    # step 2: [1] 0.7·0.9 − 0.3·0.99 = 0.63 − 0.297 = 0.333;  [2] 0.7·0.6 − 0.3·0.1 = 0.39 → 2
    # step 3: only 1 is left
    assert mmr_order(REL, SIM, k=3) == [0, 2, 1]


def test_lambda_one_is_plain_relevance_order() -> None:
    assert mmr_order(REL, SIM, k=3, lam=1.0) == [0, 1, 2]


def test_the_penalty_is_the_closest_already_chosen_block() -> None:
    rel = [1.0, 0.8, 0.8, 0.7]
    sim = [
        [1.0, 0.9, 0.0, 0.0],
        [0.9, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.95],
        [0.0, 0.0, 0.95, 1.0],
    ]
    # step 2: [1] 0.56 − 0.3·0.9 = 0.29;  [2] 0.56 − 0 = 0.56;  [3] 0.49 − 0 = 0.49 → 2
    # step 3: [1] max(0.9, 0.0) → 0.29;  [3] max(0.0, 0.95) → 0.49 − 0.285 = 0.205 → 1
    assert mmr_order(rel, sim, k=4) == [0, 2, 1, 3]


def test_k_truncates_and_ties_go_to_the_lower_index() -> None:
    assert mmr_order(REL, SIM, k=2) == [0, 2]
    assert mmr_order(REL, SIM, k=10) == [0, 2, 1]
    assert mmr_order(REL, SIM, k=0) == []
    assert mmr_order([0.5, 0.5], [[1.0, 0.0], [0.0, 1.0]], k=2) == [0, 1]
    assert mmr_order([], [], k=3) == []


def test_mmr_rejects_bad_shapes_and_values() -> None:
    with pytest.raises(InvalidInput):
        mmr_order(REL, [[1.0, 0.0], [0.0, 1.0]], k=2)
    with pytest.raises(InvalidInput):
        mmr_order(REL, SIM, k=2, lam=1.5)
    with pytest.raises(InvalidInput):
        mmr_order([1.0, math.nan, 0.0], SIM, k=2)
