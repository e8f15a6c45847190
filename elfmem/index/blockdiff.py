"""Which block rows a set of file updates really changes, worked out before the write lock.

A write usually touches one block in a bucket of hundreds, so rows are compared with what is
indexed and only changed blocks are rewritten (a moved position is a one-column update). A block id
found in two files is indexed once: the copy in the path that sorts first wins, and the others are
reported and remembered in ``shadowed``, so when the indexed copy goes away a surviving copy comes
back and an incremental sync always ends where a full rebuild would.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.model import Block
from elfmem.block.parse import parse_partial
from elfmem.errors import BlockFormatError
from elfmem.index.changes import FileUpdate
from elfmem.index.rows import (
    BLOCK_COLUMNS,
    block_status,
    block_values,
    chunks,
    delete_blocks,
    insert_blocks,
    wipe,
    write_files,
)

Row = tuple[object, ...]
_ORDINAL = 2  # position of ``ordinal`` in BLOCK_COLUMNS


@dataclass(slots=True)
class KnownFile:
    """A file's ``blocks`` rows as a writer left them, with the ``Block`` each was made from."""

    rows: dict[str, Row] = field(default_factory=dict)
    blocks: dict[str, Block] = field(default_factory=dict)


@dataclass(slots=True)
class BlockDiff:
    full: bool
    delete: list[str] = field(default_factory=list)
    insert: list[tuple[Row, Block]] = field(default_factory=list)
    reorder: list[tuple[int, str]] = field(default_factory=list)
    added: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    errors: list[BlockFormatError] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    shadow: list[tuple[str, str]] = field(default_factory=list)
    """(block id, path) of duplicate copies left unindexed by this diff."""
    stale: set[str] = field(default_factory=set)
    """Files holding a shadowed copy that should now win: re-read them (see ``apply_diff``)."""
    after: dict[str, KnownFile] = field(default_factory=dict)
    """Each replaced file's ``blocks`` rows once this diff is applied (not for a full diff)."""

    @property
    def inserted(self) -> dict[str, Block]:
        """Blocks whose row is (re)written: the only ones whose vector may need refreshing."""
        return {b.id: b for _, b in self.insert}

    @property
    def touches_blocks(self) -> bool:
        return bool(self.full or self.delete or self.insert or self.reorder)


def _sans_ordinal(row: Row) -> Row:
    return row[:_ORDINAL] + row[_ORDINAL + 1 :]


def _select(conn: sqlite3.Connection, column: str, keys: list[str]) -> dict[str, Row]:
    """Indexed rows (``BLOCK_COLUMNS`` order) whose ``column`` is among ``keys``, by block id."""
    found: dict[str, Row] = {}
    for chunk in chunks(keys):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT {BLOCK_COLUMNS} FROM blocks WHERE {column} IN ({marks})"
        found.update((row[0], row) for row in conn.execute(sql, chunk))
    return found


def diff_updates(
    conn: sqlite3.Connection,
    updates: list[FileUpdate],
    *,
    full: bool,
    known: Mapping[str, KnownFile] | None = None,
) -> BlockDiff:
    """Read-only: the row changes that make the index match ``updates``.

    ``known`` holds files whose current rows the caller already has (it wrote them and nothing
    has changed since): a write to a bucket of hundreds of blocks then reads none of them back,
    and a block that is the very object its row was made from, in the same place, is not
    compared column by column.
    """
    replaced = sorted({u.path for u in updates if u.blocks is not None})
    diff = BlockDiff(full, replaced=replaced)
    incoming = [
        (u.path, n, b, status)
        for u in updates
        if u.blocks and (status := block_status(u.path)) is not None
        for n, b in enumerate(u.blocks)
    ]
    if full:
        old: dict[str, Row] = {}
        made_from: dict[str, Block] = {}
        before = {r[0] for r in conn.execute("SELECT id FROM blocks")}
        owners: dict[str, str] = {}
    else:
        old, made_from = _indexed(conn, replaced, known or {})
        before = set(old)
        elsewhere = _select(conn, "id", [b.id for _, _, b, _ in incoming if b.id not in old])
        owners = {i: str(row[1]) for i, row in elsewhere.items()}
        diff.after = {path: KnownFile() for path in replaced}
    chosen = _choose(incoming, owners, diff)
    for block_id, (path, ordinal, block, status) in chosen.items():
        previous = old.get(block_id)
        if previous is not None and made_from.get(block_id) is block:
            if previous[1] == path and previous[_ORDINAL] == ordinal:
                _record_after(diff, path, previous, block)  # the very object its row came from
                continue
        values = block_values(block, path, ordinal, status)
        if not full:
            _record_after(diff, path, values, block)
        if previous is not None and _sans_ordinal(previous) == _sans_ordinal(values):
            if previous[_ORDINAL] != ordinal:
                diff.reorder.append((ordinal, block_id))
            continue
        if previous is not None or block_id in owners:
            diff.delete.append(block_id)
        diff.insert.append((values, block))
    diff.delete.extend(i for i in old if i not in chosen)
    diff.added = {i for i in chosen if i not in before and i not in owners}
    diff.removed = (before if full else set(old)) - set(chosen)
    diff.shadow.extend((i, p) for i, p in owners.items())
    if not full:
        _find_stale(conn, diff, {i: item[0] for i, item in chosen.items()})
    return diff


def _indexed(
    conn: sqlite3.Connection, paths: list[str], known: Mapping[str, KnownFile]
) -> tuple[dict[str, Row], dict[str, Block]]:
    """The rows indexed for ``paths`` by block id, and the blocks known to have made them."""
    rows = _select(conn, "path", [p for p in paths if p not in known])
    made_from: dict[str, Block] = {}
    for path in paths:
        if path in known:
            rows.update(known[path].rows)
            made_from.update(known[path].blocks)
    return rows, made_from


def _record_after(diff: BlockDiff, path: str, row: Row, block: Block) -> None:
    diff.after[path].rows[block.id] = row
    diff.after[path].blocks[block.id] = block


def _find_stale(conn: sqlite3.Connection, diff: BlockDiff, chosen: dict[str, str]) -> None:
    """A shadowed copy outside this diff must win when its id left the index or when it sorts
    before the copy chosen now; its file is re-read so full and incremental builds agree."""
    ids = sorted(diff.removed | set(chosen))
    replaced = set(diff.replaced)
    for chunk in chunks(ids):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT block_id, path FROM shadowed WHERE block_id IN ({marks})"
        for block_id, path in conn.execute(sql, chunk):
            winner = chosen.get(block_id)
            if path not in replaced and (winner is None or path < winner):
                diff.stale.add(path)


def _choose(
    incoming: list[tuple[str, int, Block, str]], owners: dict[str, str], diff: BlockDiff
) -> dict[str, tuple[str, int, Block, str]]:
    """One copy per id: the one in the path that sorts first (``incoming`` is in path order)."""
    chosen: dict[str, tuple[str, int, Block, str]] = {}
    for item in incoming:
        path, block_id = item[0], item[2].id
        other = chosen[block_id][0] if block_id in chosen else owners.get(block_id)
        if other is not None:
            diff.errors.append(_duplicate(block_id, min(path, other), max(path, other)))
            if path > other:
                diff.shadow.append((block_id, path))
                continue
        chosen[block_id] = item
    for block_id in [i for i in owners if i not in chosen]:
        del owners[block_id]  # the indexed copy stays; what is left in owners gets displaced
    return chosen


class DuplicateId(BlockFormatError):
    """A block id's copy that lost to the copy in an earlier path. The diff knows blocks, not
    lines: ``line`` is 0 until ``placed`` reads it from the file (only when one is reported)."""

    def __init__(self, block_id: str, winner: str, loser: str, line: int = 0) -> None:
        super().__init__(
            f"block id {block_id} is also in {MEMORY_DIR}/{winner}; this copy is not indexed",
            f"{MEMORY_DIR}/{loser}",
            line,
            "Give one copy a new id (16 lowercase hex digits) or delete it, then run "
            "`elfmem index rebuild`.",
        )
        self.block_id, self.winner, self.loser = block_id, winner, loser

    def placed(self, data: bytes) -> DuplicateId:
        """This error at the line where ``data`` (the losing file's text) holds the block."""
        for block, line in parse_partial(data, self.path).located:
            if block.id == self.block_id:
                return DuplicateId(self.block_id, self.winner, self.loser, line)
        return self


def _duplicate(block_id: str, winner: str, loser: str) -> DuplicateId:
    return DuplicateId(block_id, winner, loser)


def shadowed_errors(conn: sqlite3.Connection) -> list[DuplicateId]:
    """Every duplicate id still in the index's ``shadowed`` list, naming both files: a sync
    reports them each time, not only when the diff that found them ran."""
    sql = (
        "SELECT s.block_id, s.path, b.path FROM shadowed s JOIN blocks b ON b.id = s.block_id "
        "ORDER BY s.path, s.block_id"
    )
    return [_duplicate(i, str(winner), str(loser)) for i, loser, winner in conn.execute(sql)]


def duplicate_error(conn: sqlite3.Connection, block_id: str) -> BlockFormatError | None:
    """The error a write touching ``block_id`` must raise when the id is in two files: which
    copy it should change is not for elfmem to guess."""
    rows = conn.execute("SELECT path FROM shadowed WHERE block_id = ? ORDER BY path", (block_id,))
    losers = [str(r[0]) for r in rows]
    winner = conn.execute("SELECT path FROM blocks WHERE id = ?", (block_id,)).fetchone()
    if not losers or winner is None:
        return None
    error = _duplicate(block_id, str(winner[0]), losers[0])
    error.message = (
        f"block id {block_id} is in two files ({MEMORY_DIR}/{winner[0]} and "
        f"{MEMORY_DIR}/{losers[0]}); a write cannot tell which copy to change"
    )
    return error


def apply_diff(conn: sqlite3.Connection, diff: BlockDiff, updates: list[FileUpdate]) -> None:
    """Write ``diff`` and the files rows, inside the caller's write transaction."""
    if diff.full:
        wipe(conn)
    else:
        delete_blocks(conn, diff.delete)
        conn.executemany("DELETE FROM shadowed WHERE path = ?", [(p,) for p in diff.replaced])
    conn.executemany("UPDATE blocks SET ordinal = ? WHERE id = ?", diff.reorder)
    insert_blocks(conn, diff.insert)
    conn.executemany("INSERT INTO shadowed (block_id, path) VALUES (?, ?)", diff.shadow)
    write_files(conn, updates)
    # Forget what was indexed for stale files: the next sync sees them as changed and re-reads.
    conn.executemany(
        "UPDATE files SET oid = NULL, mtime_ns = NULL WHERE path = ?", [(p,) for p in diff.stale]
    )
