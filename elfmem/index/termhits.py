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

import hashlib
import math
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from elfmem.index.db import IndexDB
from elfmem.index.fulltext import FieldWeights, match_expression
from elfmem.index.rows import chunks
from elfmem.index.schema import FTS_DDL

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

    The parts are FTS5's own formula computed here (``bm25_part``), not ``bm25()`` run once per
    word: before it scores its first row, ``bm25()`` counts every row that holds each word, and
    for a word in a quarter of 100k blocks that count took 20-30 ms a word. The words' counts
    come from a plain ``count(*)`` (1 ms), the asked-for blocks' words from FTS5's own tokenizer
    (``fts5vocab`` over a copy of those blocks in memory), and the average row length from the
    totals FTS5 keeps. ``tests/index/test_termhits.py`` holds them equal to ``bm25()``.
    """
    weights = weights or FieldWeights()
    conn = db.conn
    rows = int(conn.execute("SELECT count(*) FROM blocks").fetchone()[0])
    hits = TermHits(rows)
    terms = query_terms(query)
    if not ids or not terms:
        return hits
    fts_rows, avgdl = fts_totals(db)
    docs, phrases = _tokenized(db, ids, terms)
    column_weights = (weights.content, weights.cue, weights.tags)
    for term, phrase in zip(terms, phrases, strict=True):
        n = _holding(db, term)
        hits.holding[term] = n
        found: dict[str, float] = {}
        if n and phrase:
            idf = fts_idf(n, fts_rows)
            for block_id, doc in docs.items():
                freq = doc.frequency(phrase, column_weights)
                if freq is not None:
                    found[block_id] = bm25_part(idf, freq, doc.length, avgdl)
        hits.parts[term] = found
    return hits


K1 = 1.2
B = 0.75
"""bm25's constants as FTS5 fixes them (``fts5_aux.c``)."""


def bm25_part(idf: float, freq: float, length: int, avgdl: float) -> float:
    """One phrase's part of FTS5's bm25 for one row, in FTS5's order of operations.

    ``freq`` is the phrase's matches in the row, each counted at its column's weight; ``length``
    the row's tokens over every column; ``avgdl`` the table's tokens per row."""
    return idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / avgdl)))


def _holding(db: IndexDB, term: str) -> int:
    phrase = f'"{term}"'
    return int(
        db.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (phrase,)).fetchone()[0]
    )


def fts_totals(db: IndexDB) -> tuple[int, float]:
    """FTS5's row count and average tokens per row, from the totals record it keeps (``id = 1``
    of ``fts_data``: varints of the row count and each column's tokens)."""
    row = db.conn.execute("SELECT block FROM fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0.0
    buf = bytes(row[0])
    rows, at = _varint(buf, 0)
    tokens = 0
    for _ in COLUMNS:
        size, at = _varint(buf, at)
        tokens += size
    return rows, (tokens / rows if rows else 0.0)


def _varint(buf: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``at``: its value and the offset after it."""
    value = 0
    for k in range(8):
        byte = buf[at + k]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + k + 1
    return (value << 8) | buf[at + 8], at + 9


COLUMNS = ("content", "cue", "tags")


@dataclass(frozen=True, slots=True)
class _Doc:
    """One block's tokens as FTS5 indexed them: per column, the token at each offset, and where
    each token stands (column, place) so a phrase is looked up, not scanned for."""

    columns: tuple[tuple[str, ...], ...]
    places: dict[str, tuple[tuple[int, int], ...]]

    @classmethod
    def of(cls, columns: tuple[tuple[str, ...], ...]) -> _Doc:
        places: dict[str, list[tuple[int, int]]] = {}
        for c, tokens in enumerate(columns):
            for at, token in enumerate(tokens):
                places.setdefault(token, []).append((c, at))
        return cls(columns, {token: tuple(where) for token, where in places.items()})

    @property
    def length(self) -> int:
        return sum(len(tokens) for tokens in self.columns)

    def frequency(self, phrase: tuple[str, ...], weights: tuple[float, ...]) -> float | None:
        """The phrase's matches weighted by column (FTS5's ``aFreq``), None when it has none."""
        freq, matched = 0.0, False
        width = len(phrase)
        for c, at in self.places.get(phrase[0], ()) if phrase else ():
            if self.columns[c][at : at + width] == phrase:
                freq += weights[c]
                matched = True
        return freq if matched else None


DOCS_TOKENS = 400_000
"""Most tokens the per-process store of tokenized blocks holds (about 30 MB): recall asks for the
same candidates two or three times (coverage, fusion, fusion again after dense feedback), and an
agent's process asks again for the blocks its questions keep finding. Tokenizing a block of
10 KB again costs a millisecond, so a long-document recall paid most of its time for it."""


class _DocStore:
    """Tokenized blocks by a digest of their indexed text (so an edited block is tokenized anew),
    least recently used out first once ``DOCS_TOKENS`` is passed. Thread-safe."""

    def __init__(self, limit: int = DOCS_TOKENS) -> None:
        self.limit = limit
        self.tokens = 0
        self.docs: OrderedDict[bytes, _Doc] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: bytes) -> _Doc | None:
        with self.lock:
            doc = self.docs.get(key)
            if doc is not None:
                self.docs.move_to_end(key)
            return doc

    def put(self, key: bytes, doc: _Doc) -> None:
        with self.lock:
            if key in self.docs:
                return
            self.docs[key] = doc
            self.tokens += doc.length
            while self.tokens > self.limit and len(self.docs) > 1:
                _, old = self.docs.popitem(last=False)
                self.tokens -= old.length


_stores: dict[int, _DocStore] = {}


def _store() -> _DocStore:
    """This process's store (a new one in a forked child: the parent's lock may have been held
    by a thread that does not exist there)."""
    pid = os.getpid()
    store = _stores.get(pid)
    if store is None:
        _stores.clear()
        store = _stores[pid] = _DocStore()
    return store


def _digest(content: str, cue: str, tags: str) -> bytes:
    text = "\x00".join((content, cue, tags)).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=16).digest()


_local = threading.local()


def _scratch() -> sqlite3.Connection:
    """This thread's in-memory FTS5 table with the index's tokenizer, and its token view (made
    again in a forked child, which must not use its parent's connection)."""
    held: tuple[int, sqlite3.Connection] | None = getattr(_local, "scratch", None)
    if held is not None and held[0] == os.getpid():
        return held[1]
    conn = sqlite3.connect(":memory:")
    conn.execute(FTS_DDL.replace("TABLE fts ", "TABLE scratch "))
    conn.execute("CREATE VIRTUAL TABLE scratch_tokens USING fts5vocab(scratch, instance)")
    _local.scratch = (os.getpid(), conn)
    return conn


def _tokenized(
    db: IndexDB, ids: Sequence[str], terms: Sequence[str]
) -> tuple[dict[str, _Doc], list[tuple[str, ...]]]:
    """The asked-for blocks' tokens (by block id) and each term's tokens, as FTS5 makes them.
    Blocks tokenized before with the same text come from this process's store (``_store``)."""
    texts: list[tuple[int, str, str, str, str]] = []
    for chunk in chunks(list(dict.fromkeys(ids))):
        sql = (
            "SELECT f.rowid, b.id, f.content, f.cue, f.tags FROM blocks b"
            f" JOIN fts f ON f.rowid = b.num WHERE b.id IN ({','.join('?' * len(chunk))})"
        )
        texts.extend(db.conn.execute(sql, chunk))
    store = _store()
    docs: dict[str, _Doc] = {}
    missing: list[tuple[int, str, str, str, str, bytes]] = []
    for num, block_id, content, cue, tags in texts:
        key = _digest(content, cue, tags)
        doc = store.get(key)
        if doc is None:
            missing.append((num, block_id, content, cue, tags, key))
        else:
            docs[block_id] = doc
    scratch = _scratch()
    with scratch:
        scratch.execute("DELETE FROM scratch")
        scratch.executemany(
            "INSERT INTO scratch (rowid, content, cue, tags) VALUES (?, ?, ?, ?)",
            [(num, content, cue, tags) for num, _, content, cue, tags, _ in missing],
        )
        scratch.executemany(  # the terms as rows of their own, below every block number
            "INSERT INTO scratch (rowid, content, cue, tags) VALUES (?, ?, '', '')",
            [(-1 - i, term) for i, term in enumerate(terms)],
        )
        found = scratch.execute("SELECT doc, col, offset, term FROM scratch_tokens").fetchall()
    placed: dict[int, dict[str, dict[int, str]]] = {}
    for doc_num, col, offset, token in found:
        placed.setdefault(doc_num, {}).setdefault(col, {})[offset] = token

    def column(doc_num: int, col: str) -> tuple[str, ...]:
        at = placed.get(doc_num, {}).get(col, {})
        return tuple(at[k] for k in sorted(at))

    for num, block_id, _, _, _, key in missing:
        doc = _Doc.of(tuple(column(num, col) for col in COLUMNS))
        store.put(key, doc)
        docs[block_id] = doc
    docs = {block_id: docs[block_id] for _, block_id, *_ in texts}  # in the index's order
    phrases = [column(-1 - i, "content") for i in range(len(terms))]
    return docs, phrases
