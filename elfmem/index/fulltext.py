"""Lexical search: FTS5 bm25 over content, cue and tags.

Any user text becomes a safe FTS5 expression (quoted terms joined by OR), so quotes, ``AND``, ``*``,
``-``, ``:`` or parentheses in a question are words, never syntax. A recall starts the search on
worker threads (``lexical_soon``) and collects it after the dense search: bm25 over every matching
row is a recall's longest step, and SQLite runs it without holding the GIL.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from elfmem.index.db import IndexDB

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

MAX_TERMS = 64
STOP_WORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in
    into is it its me my near not of on or our should so than that the their them then there these
    they this those to was we were what when where which who why will with would you your""".split()
)
_WORD = re.compile(r"\w+")
SPLIT_ROWS = 5_000
"""From this many block numbers on, a lexical search on worker threads runs as two searches over
halves of the numbers, in parallel: bm25 is computed for every matching row, and a four-word
question can match most of them. The halves' best rows merged are exactly the whole search's
best, because FTS5 takes bm25's idf and average length from the whole table. At 10k blocks the
halves took 2.5-3 ms off a recall's p50, at 100k about 35 ms (docs/decisions/
0003-fts5-lexical-search.md)."""


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """bm25 column weights (content, cue, tags). The cue counts twice: leave-one-conversation-out on
    the LoCoMo dev file chose 2 over 1 in every fold with the date in the cue, and the cue is the
    short line a writer chose to say what the block is about (docs/benchmarks.md)."""

    content: float = 1.0
    cue: float = 2.0
    tags: float = 0.5


def match_expression(query: str) -> str:
    """A safe FTS5 MATCH expression for arbitrary text: its words, quoted, joined by OR."""
    terms: list[str] = []
    for word in _WORD.findall(query.casefold()):
        word = word.strip("_")
        if word and word not in STOP_WORDS and (len(word) > 1 or word.isdigit()):
            if word not in terms:
                terms.append(word)
    return " OR ".join(f'"{t}"' for t in terms[:MAX_TERMS])


def lexical(
    db: IndexDB,
    query: str,
    limit: int,
    statuses: Iterable[str] | None = ("active",),
    weights: FieldWeights = FieldWeights(),
    *,
    conn: sqlite3.Connection | None = None,
    nums: tuple[int, int] | None = None,
) -> list[tuple[str, float]]:
    """(block id, score) best first, score = −bm25 (higher is better); ``statuses`` None = all.

    ``conn`` runs the query on another connection to the same index (``db.side_reader()``);
    ``nums`` = (low, high) searches only the blocks numbered low ≤ num < high.
    """
    expression = match_expression(query)
    if not expression or limit <= 0:
        return []
    params: list[object] = [weights.content, weights.cue, weights.tags, expression]
    sql = (
        "SELECT b.id, bm25(fts, ?, ?, ?) AS rank FROM fts JOIN blocks b ON b.num = fts.rowid"
        " WHERE fts MATCH ?"
    )
    if nums is not None:
        sql += " AND fts.rowid >= ? AND fts.rowid < ?"
        params.extend(nums)
    if statuses is not None:
        wanted = list(statuses)
        sql += f" AND b.status IN ({','.join('?' * len(wanted))})"
        params.extend(wanted)
    sql += " ORDER BY rank, b.id LIMIT ?"
    params.append(limit)
    return [(block_id, -rank) for block_id, rank in (conn or db.conn).execute(sql, params)]


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """Two workers per process, started on first use."""
    from concurrent.futures import ThreadPoolExecutor  # with logging: loaded for queries only

    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="elfmem-lexical")
        return _POOL


def _halves(db: IndexDB) -> list[tuple[int, int]] | None:
    """Two ranges of block numbers to search in parallel, or None when one search is enough.

    The cut is the middle of the numbers in use, two index seeks. Numbers can have gaps where
    blocks were deleted or moved, so the halves may hold unequal shares of the blocks: an uneven
    cut costs speed, never an answer (finding the median number instead is a scan, about 9 ms at
    100k after every change of the index)."""
    if (os.cpu_count() or 1) < 2:
        return None
    low, high = db.conn.execute(  # two subqueries: each is a single seek, together a scan
        "SELECT (SELECT min(num) FROM blocks), (SELECT max(num) FROM blocks)"
    ).fetchone()
    if low is None or high - low + 1 < SPLIT_ROWS:
        return None
    middle = (low + high + 1) // 2
    return [(low, middle), (middle, high + 1)]


def _on_worker(
    db: IndexDB,
    query: str,
    limit: int,
    statuses: Iterable[str] | None,
    weights: FieldWeights,
    nums: tuple[int, int] | None,
) -> list[tuple[str, float]]:
    conn = db.side_reader(threading.get_ident())  # a connection per worker thread
    return lexical(db, query, limit, statuses, weights, conn=conn, nums=nums)


def lexical_soon(
    db: IndexDB,
    query: str,
    limit: int,
    statuses: Iterable[str] | None = ("active",),
    weights: FieldWeights = FieldWeights(),
) -> Callable[[], list[tuple[str, float]]]:
    """Start ``lexical`` on worker threads with connections of their own; call the result to wait.

    bm25 over every matching row is the longest step of a recall, and SQLite runs it without
    holding the GIL, so it proceeds while the caller embeds the query and multiplies vectors; a
    large index is searched in two halves at once (``SPLIT_ROWS``). An in-memory index has no
    second connection: there the search runs when the result is called.
    """
    if db.path is None:
        return lambda: lexical(db, query, limit, statuses, weights)
    halves = _halves(db)
    ranges: list[tuple[int, int] | None] = [None] if halves is None else list(halves)
    parts = [
        _pool().submit(_on_worker, db, query, limit, statuses, weights, nums) for nums in ranges
    ]

    def merged() -> list[tuple[str, float]]:
        hits = [hit for part in parts for hit in part.result()]
        if len(parts) > 1:
            hits.sort(key=lambda hit: (-hit[1], hit[0]))
        return hits[:limit]

    return merged
