"""Nearest neighbours among many vectors at once: exact matrix products, or an inverted file.

Dream asks, for every block of a batch, which blocks lie closest to it among the active ones and
the blocks of the batch before it. Exactly, that is one product of the batch against the whole
pool: fine at ten thousand blocks, but a bulk import of a hundred thousand would multiply every
block with every other (10¹⁰ cosines). Past ``EXACT_PAIRS`` the search is an inverted file (IVF):
the pool is split into about √n clusters by a few rounds of k-means, and each query is compared
only with the blocks of the ``probes`` clusters whose centres are nearest to it.

What the approximate search can miss is a neighbour filed in a cluster the query did not probe.
Its scores are exact cosines, so it never reports a pair closer than it is; a missed pair only
means a look-alike not linked or an edge not offered, never a block dropped
(``rhythms/dream.py`` drops a block only on a textual test). ``bench/dream_scale.py`` measures
the share of the exact top-k it finds. Pure numpy, deterministic for the same input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Ints = npt.NDArray[np.int64]

EXACT_PAIRS = 150_000_000
"""Query × pool products up to this many are computed exactly (10k × 10k is 10⁸)."""
_CELL = 1 << 22
"""Scores computed per chunk of queries (16 MB of float32)."""
_RUN = 64
"""Columns per run whose maximum ``_top_columns`` looks at first."""
_KMEANS_ROUNDS = 6
_KMEANS_SAMPLE = 64
"""Points per cluster centre used to train the centres."""


@dataclass(frozen=True, slots=True)
class Neighbours:
    """Per query row: pool rows best first (-1 where fewer qualify) and their cosines."""

    rows: Ints
    scores: Matrix


def _empty(queries: int, k: int) -> tuple[Ints, Matrix]:
    return (
        np.full((queries, k), -1, dtype=np.int64),
        np.full((queries, k), -np.inf, dtype=np.float32),
    )


def _forbid(scores: Matrix, q_rank: Ints, d_rank: Ints) -> None:
    """Set to −inf each score whose pool row does not rank below its query's row.

    Only the columns ranked between the lowest and the highest query need a mask per pair;
    the others are allowed or refused for every query at once (a dream of 100 new blocks into
    100k active ones compares ranks for 100 columns, not 10⁷ pairs)."""
    low, high = q_rank.min(), q_rank.max()
    never = np.flatnonzero(d_rank >= high)
    if len(never):
        scores[:, never] = -np.inf
    mixed = np.flatnonzero((d_rank >= low) & (d_rank < high))
    if len(mixed):
        refused = d_rank[mixed][None, :] >= q_rank[:, None]
        part = scores[:, mixed]
        part[refused] = -np.inf
        scores[:, mixed] = part


def _top_columns(scores: Matrix, width: int) -> Ints:
    """Per row, the columns of the ``width`` highest scores (in no order): what
    ``argpartition(-scores, width - 1)[:, :width]`` gives, about ten times sooner on wide rows.

    The columns are cut into runs of ``_RUN``, and only the columns of the ``width`` runs with
    the highest maxima are partitioned: a score outside those runs is at most each of their
    ``width`` maxima, so the runs chosen hold a top ``width`` (the same scores; at a tie on the
    boundary either column may come, as with ``argpartition``).
    """
    rows, n = scores.shape
    if n < 4 * _RUN * width:
        return np.argpartition(-scores, width - 1, axis=1)[:, :width]
    runs = -(-n // _RUN)
    if runs * _RUN == n:
        padded = scores
    else:
        padded = np.full((rows, runs * _RUN), -np.inf, dtype=scores.dtype)
        padded[:, :n] = scores
    maxima = padded.reshape(rows, runs, _RUN).max(axis=2)
    chosen = np.argpartition(-maxima, width - 1, axis=1)[:, :width]
    columns = (chosen[:, :, None] * _RUN + np.arange(_RUN)).reshape(rows, -1)
    inside = np.argpartition(-np.take_along_axis(padded, columns, axis=1), width - 1, axis=1)
    return np.take_along_axis(columns, inside[:, :width], axis=1)


def _merge(
    best_rows: Ints, best_scores: Matrix, at: Ints, rows: Ints, scores: Matrix, k: int
) -> None:
    """Fold candidate ``rows``/``scores`` (one row per query in ``at``) into the running best."""
    cand_s = np.concatenate([best_scores[at], scores], axis=1)
    cand_r = np.concatenate([best_rows[at], rows], axis=1)
    if cand_s.shape[1] > k:
        top = np.argpartition(-cand_s, k - 1, axis=1)[:, :k]
        cand_s = np.take_along_axis(cand_s, top, axis=1)
        cand_r = np.take_along_axis(cand_r, top, axis=1)
    best_scores[at] = cand_s
    best_rows[at] = cand_r


def _sorted(rows: Ints, scores: Matrix) -> Neighbours:
    """Best first; ties by row so the same input always gives the same order."""
    order = np.lexsort((rows, -scores), axis=1)
    rows = np.take_along_axis(rows, order, axis=1)
    scores = np.take_along_axis(scores, order, axis=1)
    rows = np.where(np.isfinite(scores), rows, -1)
    return Neighbours(rows, scores)


def exact_top_k(
    queries: Matrix,
    pool: Matrix,
    k: int,
    q_rank: Ints | None = None,
    d_rank: Ints | None = None,
) -> Neighbours:
    """The k pool rows of highest cosine per query, computed by chunked matrix products.

    With ranks, a pool row qualifies for a query only when its rank is below the query's.
    """
    n = len(pool)
    best_rows, best_scores = _empty(len(queries), k)
    if n == 0 or k <= 0:
        return _sorted(best_rows, best_scores)
    step = max(1, _CELL // n)
    ordered = d_rank is not None and bool(np.all(d_rank[1:] >= d_rank[:-1]))
    for start in range(0, len(queries), step):
        at = np.arange(start, min(start + step, len(queries)))
        upto = n
        if ordered and q_rank is not None and d_rank is not None:
            # Pool rows ranked at or above every query of the chunk qualify for none of them.
            upto = int(np.searchsorted(d_rank, q_rank[at].max(), side="left"))
            if upto == 0:
                continue
        scores = queries[at] @ pool[:upto].T
        if q_rank is not None and d_rank is not None:
            _forbid(scores, q_rank[at], d_rank[:upto])
        width = min(k, upto)
        top = _top_columns(scores, width)
        _merge(
            best_rows,
            best_scores,
            at,
            top.astype(np.int64),
            np.take_along_axis(scores, top, axis=1),
            k,
        )
    return _sorted(best_rows, best_scores)


class NeighbourIndex:
    """The pool, searched exactly or through an inverted file of about √n clusters."""

    def __init__(
        self,
        pool: Matrix,
        rank: Ints | None,
        centres: Matrix | None,
        members: list[Ints],
        probes: int,
    ) -> None:
        self.pool, self.rank = pool, rank
        self.centres, self.members, self.probes = centres, members, probes

    @property
    def kind(self) -> str:
        return "exact" if self.centres is None else "ivf"

    @classmethod
    def build(
        cls,
        pool: npt.ArrayLike,
        rank: Ints | None = None,
        *,
        queries: int | None = None,
        lists: int | None = None,
        probes: int | None = None,
    ) -> NeighbourIndex:
        """Index ``pool`` (rows L2-normalised). ``queries``: how many rows will be asked about
        (default: as many as the pool); exact when queries × pool ≤ ``EXACT_PAIRS``."""
        matrix = np.ascontiguousarray(pool, dtype=np.float32)
        n = len(matrix)
        asked = n if queries is None else queries
        if lists is None and asked * n <= EXACT_PAIRS:
            return cls(matrix, rank, None, [], 0)
        count = max(1, min(n, lists if lists is not None else int(round(np.sqrt(n)))))
        centres = _kmeans(matrix, count)
        assign = _nearest_centre(matrix, centres)
        order = np.argsort(assign, kind="stable")
        bounds = np.searchsorted(assign[order], np.arange(count + 1))
        members = [order[bounds[c] : bounds[c + 1]] for c in range(count)]
        chosen = probes if probes is not None else max(8, count // 12)
        return cls(matrix, rank, centres, members, min(chosen, count))

    def top_k(self, queries: npt.ArrayLike, k: int, q_rank: Ints | None = None) -> Neighbours:
        """The k nearest pool rows per query (exact cosines, best first)."""
        q = np.ascontiguousarray(queries, dtype=np.float32)
        if self.centres is None:
            return exact_top_k(q, self.pool, k, q_rank, self.rank)
        best_rows, best_scores = _empty(len(q), k)
        if len(q) == 0 or k <= 0:
            return _sorted(best_rows, best_scores)
        probe = _top_centres(q, self.centres, self.probes)
        # The nearest cluster first, for every query: its scores set a floor that most rows of
        # the other clusters probed are below, so those need no partition and no merge.
        every = np.arange(len(q))
        self._scan(q, every, probe[:, 0], k, q_rank, best_rows, best_scores)
        others = probe[:, 1:]
        flat_q = np.repeat(every, others.shape[1])
        self._scan(q, flat_q, others.ravel(), k, q_rank, best_rows, best_scores)
        return _sorted(best_rows, best_scores)

    def _scan(
        self,
        q: Matrix,
        flat_q: Ints,
        flat_c: Ints,
        k: int,
        q_rank: Ints | None,
        best_rows: Ints,
        best_scores: Matrix,
    ) -> None:
        """Fold each (query, cluster) pair's members into the queries' running best."""
        count = len(self.members)
        order = np.argsort(flat_c, kind="stable")
        flat_q, flat_c = flat_q[order], flat_c[order]
        bounds = np.searchsorted(flat_c, np.arange(count + 1))
        for c in range(count):
            at = flat_q[bounds[c] : bounds[c + 1]]
            rows = self.members[c]
            if not len(at) or not len(rows):
                continue
            scores = q[at] @ self.pool[rows].T
            if q_rank is not None and self.rank is not None:
                scores[self.rank[rows][None, :] >= q_rank[at][:, None]] = -np.inf
            floor = best_scores[at].min(axis=1)
            needed = (scores > floor[:, None]).any(axis=1)
            if not needed.all():
                at, scores = at[needed], scores[needed]
                if not len(at):
                    continue
            width = min(k, len(rows))
            top = np.argpartition(-scores, width - 1, axis=1)[:, :width]
            _merge(
                best_rows,
                best_scores,
                at,
                rows[top],
                np.take_along_axis(scores, top, axis=1),
                k,
            )


def _nearest_centre(matrix: Matrix, centres: Matrix) -> Ints:
    out = np.empty(len(matrix), dtype=np.int64)
    step = max(1, _CELL // max(1, len(centres)))
    for start in range(0, len(matrix), step):
        out[start : start + step] = np.argmax(matrix[start : start + step] @ centres.T, axis=1)
    return out


def _top_centres(queries: Matrix, centres: Matrix, probes: int) -> Ints:
    """Per query, the ``probes`` nearest centres, nearest first."""
    out = np.empty((len(queries), probes), dtype=np.int64)
    step = max(1, _CELL // max(1, len(centres)))
    for start in range(0, len(queries), step):
        scores = queries[start : start + step] @ centres.T
        if probes < len(centres):
            near = np.argpartition(-scores, probes - 1, axis=1)[:, :probes]
            order = np.argsort(-np.take_along_axis(scores, near, axis=1), axis=1)
            out[start : start + step] = np.take_along_axis(near, order, axis=1)
        else:
            out[start : start + step] = np.argsort(-scores, axis=1)
    return out


def _kmeans(matrix: Matrix, count: int) -> Matrix:
    """Spherical k-means on a sample: a few rounds, seeded, so a run is reproducible."""
    rng = np.random.default_rng(0)
    n = len(matrix)
    sample = matrix[rng.choice(n, size=min(n, count * _KMEANS_SAMPLE), replace=False)]
    centres = sample[rng.choice(len(sample), size=count, replace=False)].copy()
    for _ in range(_KMEANS_ROUNDS):
        assign = _nearest_centre(sample, centres)
        sums = np.zeros_like(centres)
        np.add.at(sums, assign, sample)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        empty = norms[:, 0] == 0
        sums[empty] = centres[empty]  # a centre nobody chose keeps its place
        norms[empty] = 1.0
        centres = (sums / norms).astype(np.float32)
    return centres
