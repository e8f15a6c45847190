"""The rows of the index tables, and writing them inside the caller's write transaction.

FTS, tags and relations are derived rows written here in the same batches as ``blocks`` (per-row
triggers expanding JSON cost several times more on a 10k rebuild).
"""

from __future__ import annotations

import html
import json
import re
import sqlite3
from collections.abc import Iterable, Iterator
from functools import lru_cache

from elfmem.block.layout import DIR_STATUS, parse_bucket_path
from elfmem.block.model import Block, Relation
from elfmem.index.changes import FileUpdate
from elfmem.index.schema import FTS_DDL

CHUNK = 500
BLOCK_COLUMNS = (
    "id, path, ordinal, status, cls, tags, pinned, created, cue, content, content_hash, tier, "
    "relations, fields, extra, said"
)
_LINK_TARGET = re.compile(r"\]\([^)\n]*\)")
_HTML = re.compile(r"<!--.*?-->|</?[A-Za-z][^>\n]*>", re.S)


def search_text(content: str) -> str:
    """What FTS indexes for a block's content: link targets, HTML and entities removed.

    Regexes rather than the Markdown AST: the tokenizer already drops the other markup, and the
    AST costs ~0.4 ms per block (4 s on a 10k rebuild).
    """
    if "](" in content:
        content = _LINK_TARGET.sub("]", content)
    if "<" in content:
        content = _HTML.sub(" ", content)
    return html.unescape(content) if "&" in content else content


def block_status(path: str) -> str | None:
    """``inbox`` / ``active`` / ``archived`` from the folder; None for files outside the three."""
    bucket = parse_bucket_path(path)
    if bucket is not None:
        return bucket.status
    return DIR_STATUS.get(path.split("/", 1)[0])


def _json_pairs(pairs: Iterable[tuple[str, str]] | Iterable[Relation]) -> str:
    items = [list(p) if isinstance(p, tuple) else [p.kind, p.target] for p in pairs]
    return json.dumps(items) if items else "[]"


def block_values(block: Block, path: str, ordinal: int, status: str) -> tuple[object, ...]:
    """A ``blocks`` row in ``BLOCK_COLUMNS`` order, exactly as SQLite hands it back."""
    return (block.id, path, ordinal, status, *_block_columns(block))


@lru_cache(maxsize=2048)
def _block_columns(block: Block) -> tuple[object, ...]:
    """The columns that depend on the block alone. Cached: appending to a bucket compares every
    block already in it with its row, and all but the new one are the same objects as last time."""
    return (
        block.cls,
        json.dumps(list(block.tags)) if block.tags else "[]",
        int(block.pinned),
        block.created,
        block.cue,
        block.content,
        block.content_hash,
        block.tier,
        _json_pairs(block.relations),
        _json_pairs(block.fields),
        _json_pairs(block.extra),
        block.when,
    )


def chunks(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def pairs_among(conn: sqlite3.Connection, select: str, ids: list[str]) -> dict[str, str]:
    """``select`` (two columns, a key and a value, and a WHERE that ends in ``IN``) over ``ids``
    in chunks that stay under SQLite's bound-parameter limit: key -> value for the rows found."""
    found: dict[str, str] = {}
    for chunk in chunks(ids):
        marks = ",".join("?" * len(chunk))
        found.update(conn.execute(f"{select} ({marks})", chunk).fetchall())
    return found


def wipe(conn: sqlite3.Connection) -> None:
    """Empty every derived table before a full rebuild (vectors stay, to be reused by hash)."""
    # Dropping FTS is ~40x cheaper than deleting its rows one document at a time.
    conn.execute("DROP TABLE fts")
    conn.execute(FTS_DDL)
    for table in ("tags", "relations", "blocks", "files", "shadowed"):
        conn.execute(f"DELETE FROM {table}")


def delete_blocks(conn: sqlite3.Connection, ids: list[str]) -> None:
    """Remove blocks and everything derived from them (FTS row, tags, relations)."""
    for chunk in chunks(ids):
        marks = ",".join("?" * len(chunk))
        nums = conn.execute(f"SELECT num FROM blocks WHERE id IN ({marks})", chunk).fetchall()
        conn.executemany("DELETE FROM fts WHERE rowid = ?", nums)
        conn.execute(f"DELETE FROM tags WHERE block_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM relations WHERE source IN ({marks})", chunk)
        conn.execute(f"DELETE FROM blocks WHERE id IN ({marks})", chunk)


def insert_blocks(conn: sqlite3.Connection, rows: list[tuple[tuple[object, ...], Block]]) -> None:
    """Blocks get explicit, fresh ``num``s so FTS, tags and relations go in as three batches."""
    base = conn.execute("SELECT coalesce(max(num), 0) FROM blocks").fetchone()[0]
    conn.executemany(
        f"INSERT INTO blocks (num, {BLOCK_COLUMNS}) VALUES ({','.join('?' * 17)})",
        [(base + k + 1, *values) for k, (values, _) in enumerate(rows)],
    )
    conn.executemany(
        "INSERT INTO fts (rowid, content, cue, tags) VALUES (?, ?, ?, ?)",
        [
            (base + k + 1, search_text(b.content), b.cue, " ".join(b.tags))
            for k, (_, b) in enumerate(rows)
        ],
    )
    conn.executemany(
        "INSERT INTO tags (block_id, tag) VALUES (?, ?)",
        [(b.id, tag) for _, b in rows for tag in b.tags],
    )
    conn.executemany(
        "INSERT INTO relations (source, kind, target) VALUES (?, ?, ?)",
        [(b.id, r.kind, r.target) for _, b in rows for r in b.relations],
    )


def write_files(conn: sqlite3.Connection, updates: list[FileUpdate]) -> None:
    gone = [(u.path,) for u in updates if u.row is None]
    conn.executemany("DELETE FROM files WHERE path = ?", gone)
    rows = []
    for u in updates:
        if u.row is None:
            continue
        e = u.row.error
        err = (e.message, e.line, e.recovery) if e is not None else (None, None, None)
        row = u.row
        rows.append((u.path, row.oid, row.tree_oid, row.source, row.mtime_ns, row.size, *err))
    conn.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
