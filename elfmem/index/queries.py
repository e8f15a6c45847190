"""Reading blocks back out of the index: lookup, listing, tags, declared neighbours, status.

Rows come back as ``BlockRow``: the block as its file states it plus where it lives (path, status),
so callers above the index never see SQL or JSON columns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from elfmem.block.layout import STATUS_DIRS
from elfmem.block.model import Block, Relation
from elfmem.errors import BlockFormatError
from elfmem.index.changes import read_rows
from elfmem.index.db import IndexDB
from elfmem.index.ledgerstate import TIP_KEY as LEDGER_TIP_KEY
from elfmem.index.rows import chunks

_COLUMNS = (
    "id, path, status, cls, tags, pinned, created, cue, content, content_hash, tier, relations, "
    "fields, extra, said"
)


@dataclass(frozen=True, slots=True)
class BlockRow:
    """One indexed block: its fields, the file it was read from and the status that file gives."""

    id: str
    path: str
    status: str
    cls: str
    tags: tuple[str, ...]
    pinned: bool
    created: str
    cue: str
    content: str
    content_hash: str
    tier: str
    relations: tuple[tuple[str, str], ...]
    fields: tuple[tuple[str, str], ...]
    extra: tuple[tuple[str, str], ...]
    said: str = ""
    """The block's ``when:`` date (ISO 8601), or "" when it states none."""

    def to_block(self) -> Block:
        return Block(
            id=self.id,
            content=self.content,
            cls=self.cls,
            tags=self.tags,
            pinned=self.pinned,
            created=self.created,
            cue=self.cue,
            relations=tuple(Relation(k, t) for k, t in self.relations),
            fields=self.fields,
            extra=self.extra,
        )


def is_identity(row: BlockRow) -> bool:
    """Blocks in the ``self/*`` namespace are the agent's identity: deep sleep leaves them alone
    and the graph page puts them at the centre."""
    return row.cls == "self" or any(t == "self" or t.startswith("self/") for t in row.tags)


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    if text == "[]":  # most blocks: skip the decoder (a recall reads a few hundred rows)
        return ()
    return _decoded_pairs(text)


@lru_cache(maxsize=4096)
def _decoded_pairs(text: str) -> tuple[tuple[str, str], ...]:
    """Kept per text: the same few values repeat (a ``when:`` date shared by a day's blocks), and
    the result is immutable."""
    return tuple((str(a), str(b)) for a, b in json.loads(text))


def _row(r: tuple[Any, ...]) -> BlockRow:
    return BlockRow(
        id=r[0],
        path=r[1],
        status=r[2],
        cls=r[3],
        tags=tuple(json.loads(r[4])) if r[4] != "[]" else (),
        pinned=bool(r[5]),
        created=r[6],
        cue=r[7],
        content=r[8],
        content_hash=r[9],
        tier=r[10],
        relations=_pairs(r[11]),
        fields=_pairs(r[12]),
        extra=_pairs(r[13]),
        said=r[14],
    )


def get_blocks(db: IndexDB, ids: Iterable[str]) -> dict[str, BlockRow]:
    """The indexed blocks among ``ids``; unknown ids are simply absent from the result."""
    found: dict[str, BlockRow] = {}
    for chunk in chunks(list(dict.fromkeys(ids))):
        marks = ",".join("?" * len(chunk))
        for r in db.conn.execute(f"SELECT {_COLUMNS} FROM blocks WHERE id IN ({marks})", chunk):
            found[r[0]] = _row(r)
    return found


def places(db: IndexDB, ids: Iterable[str]) -> dict[str, tuple[str, int, str]]:
    """Block id → (file path, ordinal in that file, created stamp), for the ids the index holds:
    where a block sits in capture order (a file keeps blocks in the order they were written)."""
    found: dict[str, tuple[str, int, str]] = {}
    for chunk in chunks(list(dict.fromkeys(ids))):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT id, path, ordinal, created FROM blocks WHERE id IN ({marks})"
        for block_id, path, ordinal, created in db.conn.execute(sql, chunk):
            found[block_id] = (path, int(ordinal), created)
    return found


def list_blocks(
    db: IndexDB,
    status: str | None = None,
    cls: str | None = None,
    tag_pattern: str | None = None,
    limit: int | None = None,
) -> list[BlockRow]:
    """Blocks by status, category and tag ``LIKE`` pattern (``'self/%'``), oldest first."""
    where: list[str] = []
    params: list[object] = []
    if status is not None:
        where.append("status = ?")
        params.append(status)
    if cls is not None:
        where.append("cls = ?")
        params.append(cls)
    if tag_pattern is not None:
        where.append("id IN (SELECT block_id FROM tags WHERE tag LIKE ?)")
        params.append(tag_pattern)
    sql = f"SELECT {_COLUMNS} FROM blocks"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created, path, ordinal, id"  # FIFO: file order breaks same-second ties
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [_row(r) for r in db.conn.execute(sql, params)]


def ids_with_status(db: IndexDB, status: str) -> list[str]:
    """The ids of the blocks with ``status``, in no particular order."""
    return [r[0] for r in db.conn.execute("SELECT id FROM blocks WHERE status = ?", (status,))]


def unvectored_blocks(db: IndexDB) -> list[BlockRow]:
    """Blocks that have no vector row yet: what a sync with vectors on still has to embed."""
    sql = (
        f"SELECT {_COLUMNS} FROM blocks WHERE id NOT IN (SELECT block_id FROM vectors)"
        " ORDER BY created, path, ordinal, id"
    )
    return [_row(r) for r in db.conn.execute(sql)]


def count_unvectored(db: IndexDB) -> int:
    """How many blocks ``unvectored_blocks`` would return."""
    sql = "SELECT count(*) FROM blocks WHERE id NOT IN (SELECT block_id FROM vectors)"
    return int(db.conn.execute(sql).fetchone()[0])


def long_blocks(db: IndexDB, chars: int) -> list[BlockRow]:
    """Blocks whose content is longer than ``chars`` characters (those cut into passages)."""
    sql = f"SELECT {_COLUMNS} FROM blocks WHERE length(content) > ? ORDER BY num"
    return [_row(r) for r in db.conn.execute(sql, (chars,))]


def find_by_hash(
    db: IndexDB, content_hash: str, statuses: Sequence[str] | None = None
) -> list[str]:
    """Ids of blocks whose normalised content hashes to ``content_hash`` (true duplicates),
    only those with one of ``statuses`` when given."""
    sql = "SELECT id FROM blocks WHERE content_hash = ?"
    params: list[str] = [content_hash]
    if statuses is not None:
        sql += f" AND status IN ({', '.join('?' * len(statuses))})"
        params += statuses
    return [r[0] for r in db.conn.execute(sql + " ORDER BY id", params)]


def counts(db: IndexDB) -> dict[str, int]:
    """Blocks per status, every status present (zero when empty)."""
    found = dict.fromkeys(STATUS_DIRS, 0)
    found.update(db.conn.execute("SELECT status, count(*) FROM blocks GROUP BY status").fetchall())
    return found


def block_ids_with_tag(db: IndexDB, pattern: str) -> set[str]:
    sql = "SELECT block_id FROM tags WHERE tag LIKE ?"
    return {r[0] for r in db.conn.execute(sql, (pattern,))}


def neighbours(db: IndexDB, ids: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """Declared relations touching ``ids`` in either direction, as (kind, other block id).

    Only neighbours that are indexed blocks are returned: a relation to an unknown id leads nowhere.
    """
    wanted = list(dict.fromkeys(ids))
    found: dict[str, list[tuple[str, str]]] = {i: [] for i in wanted}
    for chunk in chunks(wanted):
        marks = ",".join("?" * len(chunk))
        sql = (
            f"SELECT r.source, r.kind, r.target FROM relations r JOIN blocks b ON b.id = r.target"
            f" WHERE r.source IN ({marks})"
            f" UNION SELECT r.target, r.kind, r.source FROM relations r"
            f" JOIN blocks b ON b.id = r.source WHERE r.target IN ({marks})"
            " ORDER BY 1, 2, 3"
        )
        for own, kind, other in db.conn.execute(sql, chunk + chunk):
            if other != own:
                found[own].append((kind, other))
    return found


def supersedes_pairs(db: IndexDB, ids: Iterable[str]) -> list[tuple[str, str]]:
    """Declared ``supersedes`` relations touching ``ids``, as (newer, older), both ends indexed."""
    wanted = list(dict.fromkeys(ids))
    found: set[tuple[str, str]] = set()
    for chunk in chunks(wanted):
        marks = ",".join("?" * len(chunk))
        sql = (
            "SELECT r.source, r.target FROM relations r"
            " JOIN blocks s ON s.id = r.source JOIN blocks t ON t.id = r.target"
            f" WHERE r.kind = 'supersedes' AND (r.source IN ({marks}) OR r.target IN ({marks}))"
        )
        found.update((a, b) for a, b in db.conn.execute(sql, chunk + chunk) if a != b)
    return sorted(found)


def file_errors(db: IndexDB) -> list[BlockFormatError]:
    """Files whose current text did not parse (a hand edit, or a bad commit), as recorded."""
    return [row.error for _, row in sorted(read_rows(db.conn).items()) if row.error is not None]


def status(db: IndexDB) -> dict[str, object]:
    """What the index is keyed to and holds, for ``elfmem status`` and ``doctor``.

    ``notes_oid`` is the notes commit the ledger rows were folded at (None before the first
    query); ``ledger_rows`` counts the blocks folded so far.
    """
    meta = db.meta()
    vectors = db.conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    files = db.conn.execute("SELECT count(*) FROM files").fetchone()[0]
    ledger_rows = db.conn.execute("SELECT count(*) FROM ledger_state").fetchone()[0]
    return {
        "memory_tree_oid": meta.get("memory_tree_oid"),
        "notes_oid": meta.get(LEDGER_TIP_KEY) or None,
        "ledger_rows": ledger_rows,
        "model_identity": meta.get("model_identity"),
        "schema_version": int(meta.get("schema_version", "0")),
        "generation": int(meta.get("generation", "0")),
        "counts": counts(db),
        "files": files,
        "vectors": vectors,
        "vectors_pending": meta.get("vectors_pending") == "1",
        "file_errors": len(file_errors(db)),
        "size_bytes": db.size_on_disk(),
        "path": str(db.path) if db.path is not None else None,
        "healed": db.healed,
    }


def ids_with_prefix(db: IndexDB, prefix: str, limit: int = 11) -> list[tuple[str, str]]:
    """Indexed blocks whose id starts with ``prefix``, as (id, content), in id order.

    A range over the unique id index, so it costs a seek, not a scan; ``limit`` bounds what an
    ambiguous short prefix returns.
    """
    sql = "SELECT id, content FROM blocks WHERE id >= ? AND id < ? ORDER BY id LIMIT ?"
    rows = db.conn.execute(sql, (prefix, prefix + "\U0010ffff", limit))
    return [(r[0], r[1]) for r in rows]
