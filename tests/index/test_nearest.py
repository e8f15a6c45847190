"""The neighbour search dream uses: exact products agree with brute force; the inverted file only
ever returns true cosines of qualifying rows, best first, and finds everything when it probes
every cluster."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from elfmem.index import nearest
from elfmem.index.nearest import NeighbourIndex, exact_top_k


def _unit(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    m = rng.normal(size=(n, dims)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _brute(q: np.ndarray, pool: np.ndarray, k: int, qr: np.ndarray, dr: np.ndarray) -> list[set]:
    sims = q @ pool.T
    out = []
    for i in range(len(q)):
        ok = [j for j in range(len(pool)) if dr[j] < qr[i]]
        ok.sort(key=lambda j: (-sims[i, j], j))
        out.append(set(ok[:k]))
    return out


@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 60),
    k=st.integers(1, 8),
    lists=st.integers(1, 8),
    probes=st.integers(1, 8),
)
def test_every_answer_is_a_true_cosine_of_a_qualifying_row(
    seed: int, n: int, k: int, lists: int, probes: int
) -> None:
    rng = np.random.default_rng(seed)
    pool = _unit(rng, n, 8)
    rank = np.concatenate([np.full(n // 3, -1), np.arange(n - n // 3)]).astype(np.int64)
    q_rank = rank[n // 3 :]
    queries = pool[n // 3 :]
    exact = exact_top_k(queries, pool, k, q_rank, rank)
    want = _brute(queries, pool, k, q_rank, rank)
    assert [set(r[r >= 0]) for r in exact.rows] == want
    ivf = NeighbourIndex.build(pool, rank, lists=min(lists, n), probes=probes).top_k(
        queries, k, q_rank
    )
    for i, (rows, scores) in enumerate(zip(ivf.rows, ivf.scores, strict=True)):
        got = rows[rows >= 0]
        assert len(set(got)) == len(got)
        assert all(rank[j] < q_rank[i] for j in got)
        assert np.allclose(scores[: len(got)], pool[got] @ queries[i], atol=1e-5)
        assert list(scores[: len(got)]) == sorted(scores[: len(got)], reverse=True)


def test_probing_every_cluster_is_exact() -> None:
    rng = np.random.default_rng(3)
    pool = _unit(rng, 400, 16)
    exact = exact_top_k(pool[:50], pool, 10)
    ivf = NeighbourIndex.build(pool, lists=20, probes=20)
    assert ivf.kind == "ivf"
    got = ivf.top_k(pool[:50], 10)
    assert [set(r) for r in got.rows] == [set(r) for r in exact.rows]


def test_small_searches_are_exact_and_large_ones_use_the_inverted_file() -> None:
    pool = _unit(np.random.default_rng(1), 50, 8)
    assert NeighbourIndex.build(pool).kind == "exact"
    assert NeighbourIndex.build(pool, queries=10**8).kind == "ivf"


@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(1, 4),
    n=st.integers(1, 3_000),
    width=st.integers(1, 12),
    levels=st.sampled_from([3, 50, 0]),
)
def test_top_columns_finds_the_scores_a_full_partition_finds(
    seed: int, rows: int, n: int, width: int, levels: int
) -> None:
    """Wide rows take the runs shortcut; ties (few distinct scores) and −inf (refused rows)
    are where a shortcut would lose a score."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(rows, n)).astype(np.float32)
    if levels:
        scores = np.round(scores * levels) / levels
    scores[rng.random(size=scores.shape) < 0.3] = -np.inf
    width = min(width, n)
    found = nearest._top_columns(scores, width)
    full = np.argpartition(-scores, width - 1, axis=1)[:, :width]
    assert found.shape == (rows, width)
    for r in range(rows):
        assert len(set(found[r].tolist())) == width
    assert np.array_equal(
        np.sort(np.take_along_axis(scores, found, axis=1), axis=1),
        np.sort(np.take_along_axis(scores, full, axis=1), axis=1),
    )
