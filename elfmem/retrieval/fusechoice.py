"""Which fusion a query gets: ranks for short blocks, scaled scores for long documents.

Among long documents bm25 is graded (the session that holds the answer often scores far above the
next one of the same conversation), and rank fusion throws that lead away; among short turns
scores are near-ties and ranks are the steadier evidence. ``auto`` lets the lexical search's top
hits decide, so a memory of facts and turns ranks exactly as it did before long documents
(docs/benchmarks.md, "Long documents").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from elfmem.errors import InvalidInput
from elfmem.index import IndexDB, queries
from elfmem.index.passagevecs import LONG_BLOCK_CHARS
from elfmem.retrieval import fusion

FUSE_BY = ("auto", "rrf", "score")
LONG_VOTE = 10
"""How many of the lexical search's top hits decide between rank and score fusion."""


def similarity(
    db: IndexDB,
    fuse_by: str,
    candidates: Sequence[str],
    lexical: Mapping[str, float],
    dense: Mapping[str, float],
    rrf: tuple[float, Sequence[float]],
    share: float,
) -> dict[str, float]:
    """The similarity signal per candidate (``fusion.query_similarity``) by the chosen fusion.

    ``lexical`` maps the bm25 hits, best first, to their scores; ``rrf`` is (k, weights).
    """
    if fuse_by not in FUSE_BY:
        raise InvalidInput(f"unknown fusion {fuse_by!r}", "Use auto, rrf or score.")
    ranking = list(lexical)
    if fuse_by == "auto":
        fuse_by = "score" if mostly_long(db, ranking[:LONG_VOTE]) else "rrf"
    k, weights = rrf
    scored = share if fuse_by == "score" else None
    return fusion.query_similarity(candidates, ranking, dense, k, list(weights), lexical, scored)


def mostly_long(db: IndexDB, ids: Sequence[str]) -> bool:
    """More than half of ``ids`` are long blocks (cut into passages by the index)."""
    rows = queries.get_blocks(db, ids).values()
    return 2 * sum(len(r.content) > LONG_BLOCK_CHARS for r in rows) > len(ids) > 0
