"""Vectors of long blocks' passages: which blocks need them, and storing them beside block vectors.

A block longer than ``LONG_BLOCK_CHARS`` gets one row per passage in ``passages`` beside its block
vector; search scores it by its best passage (search.py). Rows carry a ``block_hash`` (the block's
embedded text and the passage sizes), so an unchanged block is never cut or embedded again and a
change of sizes re-cuts every long block at the next sync. Passage texts go through the same
embedding cache as block texts, keyed by (model, text hash).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from elfmem.block import passages as cutting
from elfmem.block.model import Block
from elfmem.index.embcache import text_hash
from elfmem.index.rows import pairs_among

if TYPE_CHECKING:
    from elfmem.index.embcache import Vector

TextFor = Callable[[Block], str]
LONG_BLOCK_CHARS = 1000
"""Blocks with more content than this are cut into passages; a fact, a turn of a conversation or a
short note stays one vector, exactly as before passages existed."""
PASSAGE_CHARS: int = cutting.PASSAGE_CHARS
PASSAGE_OVERLAP: int = cutting.PASSAGE_OVERLAP


def is_long(text: str) -> bool:
    """A long block: past ``LONG_BLOCK_CHARS``, so it is indexed by passages, stored with its
    tokens (``tokenrows``), fused by score and exempt from diversity among long blocks."""
    return len(text) > LONG_BLOCK_CHARS


SHAPE = f"passages {LONG_BLOCK_CHARS}:{PASSAGE_CHARS}/{PASSAGE_OVERLAP}"
"""Names the passage sizes the stored rows were cut with (``meta.passage_shape``)."""


def passages_ready(conn: sqlite3.Connection) -> bool:
    """The index has the ``passages`` table (a file held at an older schema, in tests, has not)."""
    sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'passages'"
    return conn.execute(sql).fetchone() is not None


def passage_texts(block: Block) -> list[str]:
    """What each passage of ``block`` is embedded as; empty for a block that is one passage."""
    if len(block.content) <= max(LONG_BLOCK_CHARS, PASSAGE_CHARS):
        return []
    suffix = f"\n{block.cue}" if block.cue else ""
    return [p + suffix for p in cutting.passages(block.content, PASSAGE_CHARS, PASSAGE_OVERLAP)]


@dataclass(slots=True)
class PassagePlan:
    """Passage rows to (re)write: (block id, block hash, [text hash per passage])."""

    rows: list[tuple[str, str, list[str]]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    """Blocks that were long and are now one passage: their rows go."""
    reshape: bool = False
    """The passage sizes changed (or the index predates passages): every long block is re-cut."""
    ready: bool = True


def plan_passages(
    conn: sqlite3.Connection,
    blocks: dict[str, Block],
    text_for: TextFor,
    texts: dict[str, str],
    reset: bool,
    reshape: bool = False,
) -> PassagePlan:
    """Passages of ``blocks`` missing or out of date; their texts are added to ``texts``."""
    plan = PassagePlan(reshape=reshape, ready=passages_ready(conn))
    if not blocks or not plan.ready:
        return plan
    stored = {} if reset else stored_block_hashes(conn, list(blocks))
    for block_id, block in blocks.items():
        cut = passage_texts(block)
        if not cut:
            if block_id in stored:
                plan.dropped.append(block_id)
            continue
        key = text_hash(f"{SHAPE}\n{text_for(block)}")
        if stored.get(block_id) == key:
            continue
        hashes = []
        for text in cut:
            h = text_hash(text)
            texts[h] = text
            hashes.append(h)
        plan.rows.append((block_id, key, hashes))
    return plan


def stored_block_hashes(conn: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    sql = "SELECT block_id, block_hash FROM passages WHERE ord = 0 AND block_id IN"
    return pairs_among(conn, sql, ids)


def delete_passages(conn: sqlite3.Connection, ids: Iterable[str]) -> None:
    if not passages_ready(conn):
        return
    conn.executemany("DELETE FROM passages WHERE block_id = ?", [(i,) for i in ids])


def write_passages(conn: sqlite3.Connection, plan: PassagePlan, by_hash: dict[str, Vector]) -> None:
    """Replace the planned blocks' passage rows (``by_hash`` holds every planned vector)."""
    if not plan.ready:
        return
    if plan.reshape:
        conn.execute(
            "DELETE FROM passages WHERE block_id IN"
            " (SELECT id FROM blocks WHERE length(content) <= ?)",
            (max(LONG_BLOCK_CHARS, PASSAGE_CHARS),),
        )
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('passage_shape', ?)", (SHAPE,))
    delete_passages(conn, [*plan.dropped, *(row[0] for row in plan.rows)])
    conn.executemany(
        "INSERT INTO passages VALUES (?, ?, ?, ?, ?)",
        [
            (block_id, k, key, h, by_hash[h].astype("<f4").tobytes())
            for block_id, key, hashes in plan.rows
            for k, h in enumerate(hashes)
        ],
    )
