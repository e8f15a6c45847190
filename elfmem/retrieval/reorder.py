"""The steps that reorder a query's candidates after fusion: lexical feedback and contiguity.

Both run only where rank fusion does (short blocks: turns, facts), and neither adds a candidate:
they change the relevance of blocks the lexical or dense search already returned
(``lexical_feedback``, ``contiguity``), so the relevance gate stays where fusion put it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from elfmem.index import IndexDB, queries
from elfmem.retrieval import contiguity, fusechoice, lexical_feedback

if TYPE_CHECKING:
    from elfmem.retrieval.pipeline import SearchSettings, _Pool

Best = Callable[[Sequence[str], int], list[str]]
"""The first ``depth`` blocks of a ranking that outcomes and corrections leave standing."""


def by_rank(db: IndexDB, lexical: Sequence[str], fuse_by: str) -> bool:
    """Whether the rankings were fused by rank for this lexical ranking, as ``fusechoice`` picks:
    short blocks, not long documents."""
    if not lexical:
        return False
    if fuse_by == "auto":
        return not fusechoice.mostly_long(db, lexical[: fusechoice.LONG_VOTE])
    return fuse_by == "rrf"


def reorder(
    db: IndexDB, pool: _Pool, sims: dict[str, float], query: str, s: SearchSettings, best: Best
) -> dict[str, float]:
    """``sims`` after lexical feedback and temporal contiguity, each when its knob is on."""
    lexical_on = s.lexical_feedback > 0 and s.lexical_feedback_depth > 0
    contiguity_on = s.contiguity > 0 and s.contiguity_from > 0
    if not (lexical_on or contiguity_on) or not by_rank(db, pool.lexical, s.fuse_by):
        return sims
    if lexical_on:
        sims = _lexical_feedback(db, pool, sims, query, s, best)
    if contiguity_on:
        shape = (s.contiguity_from, s.contiguity_span)
        contiguity.lift(sims, queries.places(db, list(sims)), s.contiguity, shape)
    return sims


def _lexical_feedback(
    db: IndexDB, pool: _Pool, sims: dict[str, float], query: str, s: SearchSettings, best: Best
) -> dict[str, float]:
    """Fused similarity with a third ranking: the candidates scored by the rare words of the
    first pass's best blocks that stand."""
    top = best(sorted(sims, key=lambda b: -sims[b]), s.lexical_feedback_depth)
    pool.rows.update(queries.get_blocks(db, [b for b in pool.via if b not in pool.rows]))
    rows = [pool.rows[b] for b in pool.via if b in pool.rows]
    cue = s.lexical_feedback_cue
    texts = {
        r.id: lexical_feedback.tokens(f"{r.content} {r.cue}" if cue else r.content) for r in rows
    }
    words = lexical_feedback.feedback_words(top, query, texts, s.lexical_feedback_words)
    extra = lexical_feedback.ranking(texts, words)
    if not extra:
        return sims
    rrf = (s.rrf_k, s.fusion_weights)
    return lexical_feedback.fused(
        list(pool.via), pool.lexical, pool.dense, extra, rrf, s.lexical_feedback
    )
