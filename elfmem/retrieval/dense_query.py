"""Feedback for the dense side of a search.

``feedback_vector``: pseudo-relevance feedback (Rocchio on vectors). The query vector moves toward
the mean of the blocks ranked first by the first pass, and the dense search runs again with it.
A question that names one side of a fact ("what did Caroline research?") finds turns near the
side it names; the turns that answered it well pull in their neighbours in meaning.

Feedback is on (``FEEDBACK``, ``FEEDBACK_DEPTH``). Embedding the question without its stop words
was measured too and was worse (docs/decisions/0016-short-block-fusion.md), so the question is
embedded as asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from elfmem.errors import InvalidInput

Vector = npt.NDArray[np.float32]

FEEDBACK = 0.3
"""Weight of the first pass's top block in the second dense search. Leave-one-conversation-out on
the LoCoMo dev file, choosing one setting for both forms of the benchmark (with and without the
date in the cue) from 0, 0.3 and 0.6, chose 0.3 in all five folds (docs/benchmarks.md)."""
FEEDBACK_DEPTH = 1
"""How many of the first pass's best-ranked blocks the second search moves toward: 1 measured
ahead of 2, 3 and 5 (the mean of several top blocks drifts off the question)."""


def feedback_vector(query: Vector, top: Sequence[Vector], weight: float) -> Vector:
    """Unit ``query`` plus ``weight`` × the unit mean of ``top``, scaled back to unit length.

    ``weight`` 0 (or no ``top``) gives ``query`` back unchanged. A zero query stays zero.
    """
    if not (np.isfinite(weight) and weight >= 0):
        raise InvalidInput(f"feedback weight must be finite and ≥ 0, got {weight!r}", "Use 0.5.")
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    if weight == 0 or not len(top):
        return q
    q_norm = float(np.linalg.norm(q))
    if q_norm == 0:
        return q
    mean = np.mean(np.stack([np.asarray(v, dtype=np.float32).reshape(-1) for v in top]), axis=0)
    m_norm = float(np.linalg.norm(mean))
    if m_norm == 0:
        return q
    moved = q / q_norm + weight * mean / m_norm
    norm = float(np.linalg.norm(moved))
    return (moved / norm).astype(np.float32) if norm > 0 else q


def second_search(
    query: Vector,
    first: Mapping[str, float],
    best: Sequence[str],
    weight: float,
    vectors_for: Callable[[Iterable[str]], Mapping[str, Vector]],
    search: Callable[[Vector], dict[str, float]],
) -> dict[str, float] | None:
    """The dense hits of ``search`` with ``query`` moved toward the vectors of ``best``, best first.

    Every hit of the first search (``first``) is kept, scored by its cosine with the moved
    vector: feedback reorders the dense ranking and adds to it, it never drops a block. None when
    no vector of ``best`` is known (nothing to move toward).
    """
    top = vectors_for(best)
    if not top:
        return None
    moved = feedback_vector(query, list(top.values()), weight)
    found = search(moved)
    missing = [b for b in first if b not in found]
    found.update({b: float(v @ moved) for b, v in vectors_for(missing).items()})
    return dict(sorted(found.items(), key=lambda item: (-item[1], item[0])))
