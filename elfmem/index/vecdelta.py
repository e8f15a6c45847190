"""What changed in the vector matrix since a generation, so a reload reads k rows, not all n.

Every sync write that moves the index ``generation`` logs the block ids whose vector rows (block
vector, passages, status, presence) it may have changed, in ``vector_log``. A process holding
the snapshot of generation g asks for the ids logged after g, reads just those rows and patches
its snapshot: a free slot where a block changed or went, a new slot at the end for a new vector,
the status changed in place when only the status did. The log keeps the last ``LOG_KEEP``
generations; a write of more than ``LOG_LIMIT`` ids (a rebuild, a model change) or anything
older than the floor (``meta.vector_log_floor``) means "reload everything".
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from elfmem.index.db import IndexDB
from elfmem.index.passagevecs import passages_ready
from elfmem.index.rows import chunks
from elfmem.index.vectorfile import (
    FREE,
    VectorTable,
    append_vector_file,
    read_any,
    read_header,
    write_vector_file,
)
from elfmem.lazyload import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

LOG_KEEP = 256
"""Generations whose changes stay logged."""
LOG_LIMIT = 20_000
"""A write changing more ids than this is logged as "everything"."""
FLOOR_KEY = "vector_log_floor"

Rows = dict[str, list[tuple[str, bytes]]]
"""Block id → its current rows (status, float32 bytes): one for a block vector, one per passage."""


def log_changes(conn: sqlite3.Connection, generation: int, ids: Iterable[str] | None) -> None:
    """Log ``ids`` as changed at ``generation`` (None: everything), inside the write."""
    wanted = None if ids is None else sorted(set(ids))
    if wanted is None or len(wanted) > LOG_LIMIT:
        conn.execute("DELETE FROM vector_log")
        _set_floor(conn, generation)
        return
    conn.executemany("INSERT INTO vector_log VALUES (?, ?)", [(generation, i) for i in wanted])
    oldest = generation - LOG_KEEP
    if oldest > _floor(conn):
        conn.execute("DELETE FROM vector_log WHERE generation <= ?", (oldest,))
        _set_floor(conn, oldest)


def changed_since(conn: sqlite3.Connection, generation: int) -> set[str] | None:
    """Ids changed after ``generation``; None when the log no longer reaches back that far."""
    if generation < _floor(conn):
        return None
    sql = "SELECT DISTINCT block_id FROM vector_log WHERE generation > ?"
    return {str(r[0]) for r in conn.execute(sql, (generation,))}


def _floor(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (FLOOR_KEY,)).fetchone()
    return int(row[0]) if row is not None else 1 << 62


def _set_floor(conn: sqlite3.Connection, generation: int) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (FLOOR_KEY, str(generation)))


def block_rows(conn: sqlite3.Connection, ids: Sequence[str]) -> Rows:
    """The current block vector row of each of ``ids`` that has one."""
    return _rows(conn, ids, "vectors", "")


def passage_rows(conn: sqlite3.Connection, ids: Sequence[str]) -> Rows:
    """The current passage rows of each of ``ids`` that has any, in passage order."""
    return _rows(conn, ids, "passages", " ORDER BY t.block_id, t.ord")


def _rows(conn: sqlite3.Connection, ids: Sequence[str], table: str, order: str) -> Rows:
    out: Rows = {}
    for part in chunks(list(ids)):
        marks = ",".join("?" * len(part))
        sql = (
            f"SELECT t.block_id, b.status, t.vec FROM {table} t JOIN blocks b ON b.id = t.block_id"
            f" WHERE t.block_id IN ({marks}){order}"
        )
        for block_id, status, vec in conn.execute(sql, part):
            out.setdefault(block_id, []).append((status, vec))
    return out


@dataclass(frozen=True, slots=True)
class Patched:
    """The table after a patch: ``base``'s slots (some freed or re-statused), then ``rows``."""

    base: VectorTable
    ids: list[str]
    statuses: list[str]
    rows: npt.NDArray[np.float32]

    @property
    def free(self) -> int:
        return sum(1 for i in self.ids if i == FREE)

    def table(self) -> VectorTable:
        """The whole table in memory (when the slot file could not take the new rows)."""
        if not len(self.rows):
            return VectorTable(self.ids, self.statuses, self.base.matrix, self.base.file)
        if not len(self.base.ids):
            return VectorTable(self.ids, self.statuses, self.rows)
        matrix = np.concatenate([np.asarray(self.base.matrix), self.rows]).astype(np.float32)
        return VectorTable(self.ids, self.statuses, matrix)


def patch(
    base: VectorTable, changed: set[str], fresh: Mapping[str, list[tuple[str, bytes]]]
) -> Patched | None:
    """``base`` brought to ``fresh`` for the ``changed`` ids; None if the vector sizes differ."""
    ids, statuses = list(base.ids), list(base.statuses)
    dims = base.matrix.shape[1] if base.matrix.ndim == 2 and len(base.ids) else None
    slots: dict[str, list[int]] = {}
    for slot, block_id in enumerate(ids):
        if block_id in changed:
            slots.setdefault(block_id, []).append(slot)
    added: list[bytes] = []
    for block_id in sorted(changed):
        old, new = slots.get(block_id, []), fresh.get(block_id, [])
        if (
            old
            and len(old) == len(new)
            and all(
                np.asarray(base.matrix[s]).astype("<f4").tobytes() == vec
                for s, (_, vec) in zip(old, new, strict=True)
            )
        ):
            for s, (status, _) in zip(old, new, strict=True):
                statuses[s] = status  # the same vectors: only the status moved
            continue
        for s in old:
            ids[s], statuses[s] = FREE, FREE
        for status, vec in new:
            ids.append(block_id)
            statuses.append(status)
            added.append(vec)
    if added:
        width = len(added[0]) // 4
        if any(len(v) != width * 4 for v in added) or dims not in (None, width):
            return None
        rows = np.frombuffer(b"".join(added), dtype="<f4").reshape(len(added), width)
    else:
        rows = np.zeros((0, dims or 0), dtype=np.float32)
    return Patched(base, ids, statuses, rows.astype(np.float32, copy=False))


Held = tuple[tuple[str, str], VectorTable, VectorTable]
"""(key, block table, passage table) a process holds."""
COMPACT_SHARE = 4
"""Compact the slot file when more than 1/COMPACT_SHARE of its slots (and 1,024) are free."""


def next_tables(db: IndexDB, held: Held | None, paths: tuple[Path, Path] | None) -> Held | None:
    """The tables at ``db``'s current key: the mapped files if they are at it, else the newest
    of them and ``held`` patched with the rows logged since (and appended to the files); None
    when neither can be patched (the caller reloads every row)."""
    with db.reading() as conn:
        key = _key(conn)
        stored = _stored(paths, key, held)
        if stored is not None and stored[0] == key:
            return stored
        bases = [b for b in (held, stored) if b is not None and _behind(b[0], key)]
        if not bases:
            return None
        base = max(bases, key=lambda b: int(b[0][1]))
        changed = changed_since(conn, int(base[0][1]))
        if changed is None:
            return None
        ids = sorted(changed)
        fresh = block_rows(conn, ids)
        more = passage_rows(conn, ids) if passages_ready(conn) else {}
    blocks, passages = patch(base[1], changed, fresh), patch(base[2], changed, more)
    if blocks is None or passages is None:
        return None
    if paths is None:
        return key, blocks.table(), passages.table()
    return (
        key,
        _record(paths[0], base[0], key, blocks),
        _record(paths[1], base[0], key, passages),
    )


def _key(conn: sqlite3.Connection) -> tuple[str, str]:
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    return (meta.get("index_uuid", ""), meta.get("generation", ""))


def _behind(have: tuple[str, str], want: tuple[str, str]) -> bool:
    try:
        return have[0] == want[0] and int(have[1]) <= int(want[1])
    except ValueError:
        return False


def _stored(
    paths: tuple[Path, Path] | None, key: tuple[str, str], held: Held | None
) -> Held | None:
    """The mapped files' tables when they are at ``key`` or ahead of ``held`` (read only then)."""
    if paths is None:
        return None
    heads = read_header(paths[0]), read_header(paths[1])
    if heads[0] is None or heads[1] is None or heads[0].key != heads[1].key:
        return None
    if heads[0].key != key and (
        not _behind(heads[0].key, key) or (held is not None and _behind(heads[0].key, held[0]))
    ):
        return None  # behind what this process holds already, or from another index
    blocks, passages = read_any(paths[0]), read_any(paths[1])
    if blocks is None or passages is None or blocks[0] != passages[0]:
        return None
    return blocks[0], blocks[1], passages[1]


def _record(path: Path, old: tuple[str, str], key: tuple[str, str], p: Patched) -> VectorTable:
    """``p`` in the slot file (appended, or compacted into a new file); in memory if it cannot."""
    live = len(p.ids) - p.free
    if p.base.file is None or p.free > max(1024, live // COMPACT_SHARE):
        return write_vector_file(path, key, p.table()) or p.table()
    appended = append_vector_file(path, old, key, p.base, p.ids, p.statuses, p.rows)
    return appended if appended is not None else p.table()
