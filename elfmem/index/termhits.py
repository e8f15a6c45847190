"""What each query word contributes to a few blocks' bm25, and in how many blocks it occurs.

FTS5's ``bm25()`` sums one term per query word, each weighted by an IDF of
ln((N − n + ½) / (n + ½)) that it floors at 10⁻⁶: a word held by more than half of the blocks
counts for nothing. Among long documents many everyday words are in more than half of them (of 58
blocks of 5-10 KB of conversation, "like" is in 57 and "family" in 33), so a question's words drop
out of the score one by one as documents grow. These per-word parts let the retrieval layer weigh
the words again with an IDF that never reaches zero (``fusechoice.smoothed_lexical``); the parts
themselves (term frequency, saturation, length normalisation) stay FTS5's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from elfmem.index.db import IndexDB
from elfmem.index.fulltext import FieldWeights, match_expression
from elfmem.index.rows import chunks

FTS_IDF_FLOOR = 1e-6
"""The floor FTS5's bm25 puts under a word's IDF (``fts5_aux.c``)."""


@dataclass(frozen=True, slots=True)
class TermHits:
    """Per query word: its bm25 part in each asked-for block that holds it, and its row count."""

    rows: int
    """Blocks in the index (FTS5's N)."""
    holding: dict[str, int] = field(default_factory=dict)
    """Word → blocks holding it anywhere in the index (FTS5's n for that word)."""
    parts: dict[str, dict[str, float]] = field(default_factory=dict)
    """Word → {block id: the word's part of bm25, positive, with FTS5's IDF in it}."""


def fts_idf(holding: int, rows: int) -> float:
    """The IDF FTS5's bm25 gives a word held by ``holding`` of ``rows`` blocks."""
    idf = math.log((rows - holding + 0.5) / (holding + 0.5))
    return idf if idf > 0.0 else FTS_IDF_FLOOR


def query_terms(query: str) -> list[str]:
    """The words ``lexical`` searches for, in its order (``match_expression``'s phrases)."""
    expression = match_expression(query)
    return [t.strip('"') for t in expression.split(" OR ")] if expression else []


def term_hits(
    db: IndexDB, query: str, ids: Sequence[str], weights: FieldWeights | None = None
) -> TermHits:
    """Each query word's bm25 part in each of ``ids`` (any status) and its row count.

    Summed over the words, the parts of a block are its ``lexical`` score (FTS5 scores an OR of
    phrases as the sum of the phrases' parts, each with the IDF of the whole index).
    """
    weights = weights or FieldWeights()
    conn = db.conn
    rows = int(conn.execute("SELECT count(*) FROM blocks").fetchone()[0])
    hits = TermHits(rows)
    if not ids:
        return hits
    for term in query_terms(query):
        phrase = f'"{term}"'
        n = int(conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (phrase,)).fetchone()[0])
        hits.holding[term] = n
        found: dict[str, float] = {}
        if n:
            for chunk in chunks(list(ids)):
                sql = (
                    "SELECT b.id, bm25(fts, ?, ?, ?) FROM fts JOIN blocks b ON b.num = fts.rowid"
                    f" WHERE fts MATCH ? AND b.id IN ({','.join('?' * len(chunk))})"
                )
                params = [weights.content, weights.cue, weights.tags, phrase, *chunk]
                found.update((block_id, -score) for block_id, score in conn.execute(sql, params))
        hits.parts[term] = found
    return hits
