"""The feedback vector and the second dense search (``retrieval/dense_query.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.errors import InvalidInput
from elfmem.retrieval.dense_query import feedback_vector, second_search


def _unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def test_weight_zero_or_no_top_gives_the_query_back() -> None:
    q = _unit([1.0, 0.0, 0.0])
    assert np.array_equal(feedback_vector(q, [_unit([0.0, 1.0, 0.0])], 0.0), q)
    assert np.array_equal(feedback_vector(q, [], 0.8), q)


def test_the_query_moves_toward_the_top_blocks_by_the_weight() -> None:
    q, top = _unit([1.0, 0.0]), [_unit([0.0, 1.0])]
    half = feedback_vector(q, top, 1.0)
    assert half == pytest.approx(_unit([1.0, 1.0]), abs=1e-6)  # equal weight: half-way
    light = feedback_vector(q, top, 0.5)
    assert float(light @ top[0]) < float(half @ top[0])
    assert float(np.linalg.norm(light)) == pytest.approx(1.0, abs=1e-6)


def test_a_bad_weight_is_refused() -> None:
    q = _unit([1.0, 0.0])
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(InvalidInput):
            feedback_vector(q, [q], bad)


vectors = st.lists(
    st.floats(-1.0, 1.0, allow_nan=False, allow_subnormal=False), min_size=4, max_size=4
).filter(lambda v: float(np.linalg.norm(v)) > 1e-3)


@settings(max_examples=300, deadline=None)
@given(vectors, st.lists(vectors, min_size=1, max_size=5), st.floats(0.0, 0.99))
def test_the_moved_query_stays_within_the_angle_its_weight_allows(
    q: list[float], top: list[list[float]], weight: float
) -> None:
    """Hunting for a query the feedback carries away: below weight 1 the moved vector keeps a
    cosine of at least sqrt(1 − w²) with the query, whatever the top blocks are (the worst case
    is a mean pointing away from the query), and it is always a unit vector."""
    query = _unit(q)
    moved = feedback_vector(query, [_unit(v) for v in top], weight)
    assert float(np.linalg.norm(moved)) == pytest.approx(1.0, abs=1e-5)
    assert float(moved @ query) >= np.sqrt(1.0 - weight * weight) - 1e-4


def test_second_search_keeps_every_first_hit_scored_against_the_moved_vector() -> None:
    vecs = {"a": _unit([1.0, 0.0]), "b": _unit([1.0, 1.0]), "c": _unit([0.0, 1.0])}

    def vectors_for(ids):  # type: ignore[no-untyped-def]
        return {i: vecs[i] for i in ids if i in vecs}

    searched = []

    def search(vec):  # type: ignore[no-untyped-def]
        searched.append(vec)
        return {"c": float(vecs["c"] @ vec)}  # the second search alone has lost "a"

    query = _unit([1.0, 0.0])
    got = second_search(query, {"a": 1.0}, ["c"], 1.0, vectors_for, search)
    moved = searched[0]
    assert moved == pytest.approx(_unit([1.0, 1.0]), abs=1e-6)
    assert got == pytest.approx({"a": float(vecs["a"] @ moved), "c": float(vecs["c"] @ moved)})
    assert list(got) == sorted(got, key=lambda b: (-got[b], b))  # best first, ties by id
    assert second_search(query, {"a": 1.0}, ["unknown"], 1.0, vectors_for, search) is None
