"""Maximal Marginal Relevance: reorder for relevance and diversity together.

Five near-identical blocks should not fill a frame's budget. Greedy MMR picks,
at each step, the candidate maximising λ·relevance − (1 − λ)·(its highest similarity to anything
already picked), with λ = 0.7. The first pick is simply the most relevant block. Keeping a running
"most similar picked so far" vector makes the whole pass O(n·k) rather than O(n·k²).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from elfmem.errors import InvalidInput

MMR_LAMBDA = 0.7


def mmr_order(
    relevance: npt.ArrayLike, similarity_matrix: npt.ArrayLike, k: int, lam: float = MMR_LAMBDA
) -> list[int]:
    """Indices of up to ``k`` candidates in MMR order; ties go to the lower index.

    ``similarity_matrix[i, j]`` is the similarity of candidate i to candidate j (cosine of their
    embeddings); the diagonal is never read. λ = 1 gives plain relevance order; λ = 0 picks the
    most relevant block and then, each time, the one least like those already chosen.
    """
    return [i for i, _ in mmr_ranked(relevance, similarity_matrix, k, lam)]


def mmr_ranked(
    relevance: npt.ArrayLike,
    similarity_matrix: npt.ArrayLike,
    k: int,
    lam: float = MMR_LAMBDA,
    exempt: npt.ArrayLike | None = None,
) -> list[tuple[int, float]]:
    """(index, gain) of up to ``k`` candidates in MMR order; the gain is what it was picked by.

    The gain of the first pick is λ·relevance, of every later pick λ·relevance − (1 − λ)·(its
    highest similarity to the picks before it), so gains never increase down the list.
    ``exempt[i, j]`` True means candidate i takes no penalty for resembling candidate j: a newer
    near-twin is never pushed out for resembling an older one it may correct.
    """
    rel = np.asarray(relevance, dtype=np.float64)
    sim = np.asarray(similarity_matrix, dtype=np.float64)
    if rel.shape == (0,) and sim.size == 0:
        sim = sim.reshape(0, 0)  # no candidates: [] and [[]] both mean an empty matrix
    _check(rel, sim, lam)
    n = rel.size
    chosen: list[tuple[int, float]] = []
    if k <= 0 or n == 0:
        return chosen
    if exempt is not None:
        sim = np.where(np.asarray(exempt, dtype=bool), 0.0, sim)
    available = np.ones(n, dtype=bool)
    closest = np.zeros(n, dtype=np.float64)
    for _ in range(min(k, n)):
        gain = lam * rel - (1.0 - lam) * closest if chosen else rel.copy()
        gain[~available] = -np.inf
        pick = int(np.argmax(gain))
        chosen.append((pick, float(lam * rel[pick] - (1.0 - lam) * closest[pick])))
        available[pick] = False
        closest = np.maximum(closest, sim[:, pick])
    return chosen


def _check(rel: npt.NDArray[np.float64], sim: npt.NDArray[np.float64], lam: float) -> None:
    if not (math.isfinite(lam) and 0.0 <= lam <= 1.0):
        raise InvalidInput(f"MMR λ must be in [0, 1], got {lam!r}", "Use lam=0.7.")
    if rel.ndim != 1 or sim.shape != (rel.size, rel.size):
        raise InvalidInput(
            f"relevance of shape {rel.shape} needs an n×n similarity matrix, got {sim.shape}",
            "Pass one relevance per candidate and their pairwise similarities.",
        )
    if not (np.all(np.isfinite(rel)) and np.all(np.isfinite(sim))):
        raise InvalidInput(
            "MMR inputs contain NaN or infinite values",
            "Check the embeddings; `elfmem index rebuild` re-derives them.",
        )
