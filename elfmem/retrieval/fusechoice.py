"""Which fusion a query gets: ranks for short blocks, scaled scores for long documents.

Among long documents bm25 is graded (the session that holds the answer often scores far above the
next one of the same conversation), and rank fusion throws that lead away; among short turns
scores are near-ties and ranks are the steadier evidence. ``auto`` lets the lexical search's top
hits decide, so a memory of facts and turns ranks exactly as it did before long documents
(docs/benchmarks.md, "Long documents").

Score fusion also re-weighs bm25's words (``smoothed_lexical``): FTS5 gives a word held by more
than half of the blocks no weight at all, and among long documents many of a question's words are
(a fifth of the benchmark questions' words, over blocks of 5-10 KB). A block that only such a word
brings is still found only if the lexical or the dense search returned it.

A lexical hit the dense search did not return (past its seeds, or under its relevance floor) is
scored by its own cosine (``cosines``) rather than 0: with 0 it lost the whole dense share, which
puts a block that bm25 ranks high below every dense seed that bm25 barely saw.

With ``late`` (``retrieval.late``), score fusion also weighs each candidate by how closely its
short runs of tokens match the query's words, which separates long blocks of the same people
that one mean vector each cannot.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from elfmem.errors import InvalidInput
from elfmem.index import FieldWeights, IndexDB, queries
from elfmem.index.passagevecs import is_long
from elfmem.index.termhits import TermHits, fts_idf, term_hits
from elfmem.retrieval import fusion
from elfmem.retrieval.late import Late

FUSE_BY = ("auto", "rrf", "score")
LONG_VOTE = 10
"""How many of the lexical search's top hits decide between rank and score fusion."""
IDF_KINDS = ("smooth", "fts")
"""The IDF score fusion's bm25 uses: ``smooth``, ln(1 + (N − n + ½)/(n + ½)), which every word
keeps (Lucene's form), or ``fts``, FTS5's own, zero past half of the blocks. Chosen by
leave-one-conversation-out on the long-document benchmark (docs/benchmarks.md, "Long documents",
"Words that every long document holds")."""
Cosines = Callable[[Sequence[str]], Mapping[str, float]]
"""Dense scores of the given block ids (``VectorStore.scores_for``)."""


def similarity(
    db: IndexDB,
    fuse_by: str,
    candidates: Sequence[str],
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
    rrf: tuple[float, Sequence[float]],
    share: float,
    *,
    query: str = "",
    field_weights: FieldWeights | None = None,
    idf: str = "smooth",
    cosines: Cosines | None = None,
    late: Late | None = None,
    late_share: float = 0.0,
    lexical_scale: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """The similarity signal per candidate (``fusion.query_similarity``) by the chosen fusion.

    ``lexical`` maps the bm25 hits, best first, to their scores; ``rrf`` is (k, weights). With
    score fusion and ``idf`` smooth, the candidates' bm25 is recomputed word by word for
    ``query`` (searched with ``field_weights``), so a candidate that holds a query word the
    lexical search did not rank still gets its share. With score fusion and ``cosines``, a
    lexical hit missing from ``dense`` is scored by its own cosine (``filled_dense``). With score
    fusion, ``late`` and ``late_share`` > 0, the fused blocks' texts are scored by ``late`` and
    blended in with that share (``fusion.score_fusion``). With rank fusion, ``lexical_scale``
    weighs each lexical hit's rank term (``retrieval.coverage.weights``).
    """
    if idf not in IDF_KINDS:
        raise InvalidInput(f"unknown IDF {idf!r}", "Use smooth or fts.")
    ranking = list(lexical)
    fuse_by = chosen(db, ranking, fuse_by)
    k, weights = rrf
    if fuse_by == "rrf":
        return fusion.query_similarity(
            candidates, ranking, dense, k, list(weights), lexical_scale=lexical_scale
        )
    if idf == "smooth" and query and ranking:
        lexical = smoothed_lexical(term_hits(db, query, list(candidates), field_weights))
        ranking = list(lexical)
    if cosines is not None:
        dense = filled_dense(dense, ranking, cosines)
    scores = None
    if late is not None and late_share > 0 and query:
        scores = late(db, query, list(dict.fromkeys([*ranking, *dense])))
    return fusion.query_similarity(
        candidates, ranking, dense, k, list(weights), lexical, share, scores, late_share
    )


def chosen(db: IndexDB, ranking: Sequence[str], fuse_by: str) -> str:
    """The fusion ``similarity`` runs for this lexical ranking: ``rrf`` or ``score``, with
    ``auto`` read from the ranking's top hits (score when most of them are long documents)."""
    if fuse_by not in FUSE_BY:
        raise InvalidInput(f"unknown fusion {fuse_by!r}", "Use auto, rrf or score.")
    if fuse_by == "auto":
        return "score" if mostly_long(db, ranking[:LONG_VOTE]) else "rrf"
    return fuse_by


def filled_dense(
    dense: Mapping[str, float], ranking: Sequence[str], cosines: Cosines
) -> dict[str, float]:
    """``dense`` plus each id of ``ranking`` it lacks, scored by ``cosines``; best first.

    Only adds: every score ``dense`` held is kept, and an added one is capped at ``dense``'s top,
    so the scaling of the dense list (by its top) and the order of what it held stay as they were.
    An empty ``dense`` (no vector hit bore on the query) stays empty: there is no list to join.
    """
    if not dense:
        return {}
    missing = [b for b in ranking if b not in dense]
    found = cosines(missing) if missing else {}
    top = max(dense.values())
    merged = {b: min(float(found[b]), top) for b in missing if b in found}
    merged.update(dense)
    return dict(sorted(merged.items(), key=lambda item: (-item[1], item[0])))


def smooth_idf(holding: int, rows: int) -> float:
    """ln(1 + (N − n + ½)/(n + ½)): positive for every word, however many blocks hold it."""
    return math.log(1.0 + (rows - holding + 0.5) / (holding + 0.5))


def smoothed_lexical(hits: TermHits) -> dict[str, float]:
    """Each block's bm25 with every word's FTS5 IDF swapped for ``smooth_idf``; best first.

    A block holding any query word scores above zero, so it is never lost as a lexical hit.
    """
    scores: dict[str, float] = {}
    for term, parts in hits.parts.items():
        n = hits.holding.get(term, 0)
        if not n or not parts:
            continue
        ratio = smooth_idf(n, hits.rows) / fts_idf(n, hits.rows)
        for block_id, part in parts.items():
            scores[block_id] = scores.get(block_id, 0.0) + part * ratio
    return dict(sorted(scores.items(), key=lambda item: (-item[1], item[0])))


def mostly_long(db: IndexDB, ids: Sequence[str]) -> bool:
    """More than half of ``ids`` are long blocks (cut into passages by the index)."""
    rows = queries.get_blocks(db, ids).values()
    return 2 * sum(is_long(r.content) for r in rows) > len(ids) > 0
