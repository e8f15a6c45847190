"""Fusing the lexical and dense rankings into one similarity per candidate.

Reciprocal Rank Fusion needs only ranks, so BM25 scores and cosines never
have to share a scale. k = 10 rather than the customary 60: on the LoCoMo dev file a smaller k
(more weight on each list's top ranks) lifted R@10 from 0.626 to 0.661 with everything else equal
(docs/benchmarks.md has the sweep). The similarity signal is that fused score divided by the top
one, so the best block is exactly 1.0: rank-shaped, not magnitude-shaped. Raw cosine is
used only when the lexical ranking is empty, and 0.0 is the sentinel for blocks no search scored
(queryless frames, graph-expanded neighbours). A min-max weighted sum is kept alongside because
equal-weight RRF of BM25 and a weak dense ranking can rank below BM25 alone: fusion must be earned.

``score_fusion`` is the regime for long documents: each list scaled by its own top score, then
mixed. Between whole sessions of one conversation bm25 is graded, and ranks flatten the lead of
the block that holds the answer; on the long-document benchmark scores beat ranks on every metric,
on LoCoMo's short turns they lost (docs/benchmarks.md). The pipeline picks per query.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from elfmem.errors import InvalidInput

RRF_K = 10
FUSION_WEIGHTS = (1.0, 0.7)
"""RRF weights of the (lexical, dense) rankings. Leave-one-conversation-out on the LoCoMo dev file
chose the dense ranking at 0.7 in 9 of 10 folds (five conversations, with and without the date
cue) over equal weights; docs/decisions/0016-short-block-fusion.md."""
LEXICAL_SHARE = 0.2
"""Weight of the scaled bm25 score in ``score_fusion`` (the cosine and late interaction get the
rest). Chosen by leave-one-conversation-out on the long-document replay together with
``late.LATE_SHARE``, one setting per fold for both forms (docs/decisions/0009-late-interaction.md):
three folds chose 0.2, two 0.25 (grid 0.2-0.3). It was 0.3 without late interaction, where
0.2-0.4 differ by at most 0.004 in recall_all@5. Only long documents are fused this way
(``fusechoice``)."""


def rrf(
    rankings: Sequence[Sequence[str]],
    k: float = RRF_K,
    weights: Sequence[float] | None = None,
    scales: Sequence[Mapping[str, float] | None] | None = None,
) -> dict[str, float]:
    """Σ over rankings of weight / (k + rank), rank counted from 1; best first.

    An id repeated inside one ranking counts once, at its first place, and later ids move up to
    close the gap. Ties keep the order in which ids were first seen, so the result is
    deterministic. ``scales`` (one per ranking, or None) multiply an id's term in that ranking
    by its own factor (an id a scale lacks keeps 1.0): the lexical ranking's hits weighed by how
    much of the question each holds (``retrieval.coverage``).
    """
    if not (math.isfinite(k) and k >= 0):
        raise InvalidInput(f"RRF k must be finite and ≥ 0, got {k!r}", "Use k=60.")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise InvalidInput(
            f"{len(weights)} weights for {len(rankings)} rankings",
            "Pass one weight per ranking, or none for equal weights.",
        )
    if not all(math.isfinite(w) and w >= 0 for w in weights):
        raise InvalidInput("RRF weights must be finite and ≥ 0", "Use e.g. weights=(1.0, 1.0).")
    if scales is None:
        scales = [None] * len(rankings)
    if len(scales) != len(rankings):
        raise InvalidInput(
            f"{len(scales)} scales for {len(rankings)} rankings",
            "Pass one scale (or None) per ranking.",
        )
    scores: dict[str, float] = {}
    for ranking, weight, scale in zip(rankings, weights, scales, strict=True):
        for rank, doc_id in enumerate(dict.fromkeys(ranking), start=1):
            factor = 1.0 if scale is None else scale.get(doc_id, 1.0)
            scores[doc_id] = scores.get(doc_id, 0.0) + weight * factor / (k + rank)
    return _best_first(scores)


def normalise_top(scores: Mapping[str, float]) -> dict[str, float]:
    """Every score divided by the largest, so the top is exactly 1.0 (x / x is exact in IEEE).

    When no score is positive there is no top to scale to and the scores come back unchanged.
    """
    if not scores:
        return {}
    top = max(scores.values())
    if not top > 0:
        return dict(scores)
    return {doc_id: value / top for doc_id, value in scores.items()}


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """(s − min) / (max − min) per id; every id gets 1.0 when all scores are equal.

    Equal scores map to 1.0, not 0.0, because being returned by the search at all is the
    information left: the weighted-sum fusion gives 0.0 to ids a search did not return.
    """
    if not scores:
        return {}
    low = min(scores.values())
    spread = max(scores.values()) - low
    if spread <= 0:
        return dict.fromkeys(scores, 1.0)
    return {doc_id: (value - low) / spread for doc_id, value in scores.items()}


def weighted_sum_fusion(
    lexical: Mapping[str, float], dense: Mapping[str, float], alpha: float
) -> dict[str, float]:
    """alpha·minmax(lexical) + (1 − alpha)·minmax(dense); an id one side lacks scores 0 there.

    The alternative to RRF that keeps score magnitudes; measure both on the dev benchmark.
    """
    if not (math.isfinite(alpha) and 0.0 <= alpha <= 1.0):
        raise InvalidInput(f"alpha must be in [0, 1], got {alpha!r}", "Use e.g. alpha=0.5.")
    lex = min_max(lexical)
    den = min_max(dense)
    fused = {
        doc_id: alpha * lex.get(doc_id, 0.0) + (1.0 - alpha) * den.get(doc_id, 0.0)
        for doc_id in [*lex, *(d for d in den if d not in lex)]
    }
    return _best_first(fused)


def score_fusion(
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
    share: float = LEXICAL_SHARE,
    late: Mapping[str, float] | None = None,
    late_share: float = 0.0,
) -> dict[str, float]:
    """share·(bm25 / top bm25) + (1 − share)·(cosine / top cosine), divided by its own top.

    Each list is scaled by its own best score, so neither needs the other's units, and unlike rank
    fusion the gaps survive: a block whose bm25 is half the leader's stays half-way down however
    many blocks sit between them. An id one search did not return scores 0 there.

    With ``late`` (late-interaction scores, ``retrieval.late``) and ``late_share`` > 0, that share
    of the weight moves from the cosine to ``late`` min-max scaled over the fused ids: it only
    reorders what the two searches returned, and an id it lacks scores 0 there. Without ``late``
    (an embedder with no tokens) the cosine keeps the whole rest.
    """
    if not (math.isfinite(share) and 0.0 <= share <= 1.0):
        raise InvalidInput(f"lexical share must be in [0, 1], got {share!r}", "Use e.g. 0.5.")
    if late and not (math.isfinite(late_share) and 0.0 <= late_share <= 1.0 - share):
        raise InvalidInput(
            f"late share must be in [0, {1.0 - share:g}] beside lexical share {share:g}, "
            f"got {late_share!r}",
            "Use e.g. 0.1.",
        )
    lex_top = max(lexical.values(), default=0.0)
    dense_top = max(dense.values(), default=0.0)
    ids = [*lexical, *(d for d in dense if d not in lexical)]
    extra = min_max({d: late[d] for d in ids if d in late}) if late and late_share > 0 else {}
    dense_share = 1.0 - share - (late_share if extra else 0.0)
    fused: dict[str, float] = {}
    for doc_id in ids:
        lex = lexical.get(doc_id, 0.0) / lex_top if lex_top > 0 else 0.0
        den = dense.get(doc_id, 0.0) / dense_top if dense_top > 0 else 0.0
        fused[doc_id] = share * max(lex, 0.0) + dense_share * max(den, 0.0)
        if extra:
            fused[doc_id] += late_share * extra.get(doc_id, 0.0)
    return _best_first(normalise_top(fused))


def query_similarity(
    candidates: Sequence[str],
    lexical: Sequence[str],
    dense: Mapping[str, float],
    k: float = RRF_K,
    weights: Sequence[float] | None = None,
    lexical_scores: Mapping[str, float] | None = None,
    share: float | None = None,
    late: Mapping[str, float] | None = None,
    late_share: float = 0.0,
    lexical_scale: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The similarity signal per candidate, in three regimes.

    ``lexical`` is the BM25 ranking (best first), ``dense`` maps each vector-search seed to its
    cosine. With lexical hits: RRF of both rankings, normalised so the top is 1.0. Without:
    the raw cosine. Candidates neither search returned (graph expansion) get the 0.0 sentinel.
    ``weights`` (lexical, dense) pass through to ``rrf``, and ``lexical_scale`` as the lexical
    ranking's per-hit factors; ``late`` and ``late_share`` to ``score_fusion``, whose scaled
    scores keep bm25's magnitudes and so need no factor.
    """
    if lexical and share is not None and lexical_scores is not None:
        fused = score_fusion(
            {d: lexical_scores[d] for d in lexical}, dense, share, late, late_share
        )
    elif lexical:
        dense_ranking = sorted(dense, key=lambda doc_id: -dense[doc_id])
        fused = normalise_top(
            rrf([lexical, dense_ranking], k=k, weights=weights, scales=[lexical_scale, None])
        )
    else:
        fused = {doc_id: float(cosine) for doc_id, cosine in dense.items()}
    return {doc_id: fused.get(doc_id, 0.0) for doc_id in candidates}


def _best_first(scores: dict[str, float]) -> dict[str, float]:
    # sorted() is stable: equal scores keep first-seen order
    return dict(sorted(scores.items(), key=lambda item: -item[1]))
