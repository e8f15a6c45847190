"""What a sync must redo: the tree diff since the keyed tree, plus the working-tree overlay.

Each memory file ends up in one of three states: its tree version indexed (``source='tree'``), an
uncommitted hand edit indexed instead (``'worktree'``), or, when a person deleted it on disk,
indexed as absent (``'worktree'`` with no oid). A hand edit that does not parse is never indexed:
the tree version stays searchable and the error is kept on the file's row until it is fixed. A
committed file that does not parse (a conflict committed by plain git) serves the blocks that do,
and its row keeps every problem, so each sync reports them until the file is fixed.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, replace

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.model import Block
from elfmem.block.parse import parse_partial
from elfmem.errors import BlockFormatError
from elfmem.index.source import MemorySource
from elfmem.progress import Progress, silent

RACY_NS = 2_000_000_000
"""A file modified this recently may change again within the same mtime tick without changing
size; its stat is not trusted (recorded as unknown), so the next sync hashes it again."""


@dataclass(frozen=True, slots=True)
class FileRow:
    oid: str | None
    tree_oid: str | None
    source: str
    mtime_ns: int | None = None
    size: int | None = None
    error: BlockFormatError | None = None


@dataclass(slots=True)
class FileUpdate:
    """New state of a path: ``row`` None drops it; ``blocks`` None keeps its indexed blocks."""

    path: str
    row: FileRow | None
    blocks: list[Block] | None


def read_rows(conn: sqlite3.Connection) -> dict[str, FileRow]:
    rows: dict[str, FileRow] = {}
    sql = "SELECT path, oid, tree_oid, source, mtime_ns, size, error, error_line, error_recovery"
    for path, oid, tree_oid, source, mtime, size, msg, line, recovery in conn.execute(
        sql + " FROM files"
    ):
        error = None if msg is None else stored_error(msg, path, line, recovery)
        rows[path] = FileRow(oid, tree_oid, source, mtime, size, error)
    return rows


def stored_error(
    message: str, path: str, line: int | None, recovery: str | None
) -> BlockFormatError:
    error = BlockFormatError(message, recovery=recovery or "")
    error.path, error.line = f"{MEMORY_DIR}/{path}", line or 0
    return error


def candidates(
    rows: dict[str, FileRow],
    tree_changes: dict[str, str | None],
    stats: dict[str, tuple[int, int]] | None,
) -> set[str]:
    """Paths whose indexed state may be wrong: changed in the tree, or on disk since last seen."""
    found = set(tree_changes)
    if stats is None:
        found.update(p for p, r in rows.items() if r.source != "tree" or r.oid != r.tree_oid)
        return found
    for path, stat in stats.items():
        row = rows.get(path)
        if row is None or (row.mtime_ns, row.size) != stat:
            found.add(path)
    found.update(
        p for p, r in rows.items() if p not in stats and (r.oid is not None or r.source == "tree")
    )
    return found


class Resolver:
    """Decides, reads and parses the new state of candidate paths."""

    def __init__(self, source: MemorySource, stats: dict[str, tuple[int, int]] | None) -> None:
        self.source = source
        self.stats = stats
        self.files_parsed = 0
        self.errors: list[BlockFormatError] = []
        self._now = time.time_ns()

    def resolve(self, path: str, tree_oid: str | None, row: FileRow | None) -> FileUpdate | None:
        data: bytes | None = None
        mtime: int | None = None
        size: int | None = None
        if self.stats is None or path not in self.stats:
            oid, origin = (tree_oid, "tree") if self.stats is None else (None, "worktree")
        else:
            mtime, size = self.stats[path]
            try:
                data = self.source.read_worktree(path)
                oid = self.source.blob_oid_of(data)
            except FileNotFoundError:  # deleted between the scan and the read
                data, oid, mtime, size = None, None, None, None
            origin = "tree" if oid == tree_oid else "worktree"
            if mtime is not None and mtime > self._now - RACY_NS:
                mtime = None
        if oid is None and tree_oid is None:
            return FileUpdate(path, None, []) if row is not None else None
        new = FileRow(oid, tree_oid, origin, mtime, size)
        if row is not None and row.oid == oid and row.error is None:
            return FileUpdate(path, new, None)
        if oid is None:
            return FileUpdate(path, new, [])
        blocks, problems = self._parse(path, data, oid)
        if not problems:
            return FileUpdate(path, new, blocks)
        new = replace(new, error=problems[0])
        if origin == "tree":
            return FileUpdate(path, new, blocks)  # what still parses is served
        return self._tree_fallback(path, replace(new, oid=tree_oid, source="tree"), row)

    def _tree_fallback(self, path: str, new: FileRow, row: FileRow | None) -> FileUpdate:
        """A hand edit that does not parse: keep (or restore) the tree version."""
        if new.oid is None:
            return FileUpdate(path, new, [])
        if row is not None and row.oid == new.oid and row.source == "tree":
            return FileUpdate(path, new, None)
        blocks, _ = self._parse(path, None, new.oid)
        return FileUpdate(path, new, blocks)

    def _parse(
        self, path: str, data: bytes | None, oid: str
    ) -> tuple[list[Block], list[BlockFormatError]]:
        """The blocks that parse and every problem (kept in ``errors``): a damaged file serves
        what is readable and hides nothing."""
        raw = data if data is not None else self.source.read_blob(oid)
        self.files_parsed += 1
        parsed = parse_partial(raw, f"{MEMORY_DIR}/{path}")
        if not parsed.problems:
            return parsed.blocks, []
        error = one_error(parsed.problems)
        self.errors.append(error)
        return parsed.blocks, [error]


def one_error(problems: list[BlockFormatError]) -> BlockFormatError:
    """A file's problems as the one error its row keeps: every problem on its own line (each
    with file:line), so a later sync that does not re-read the file still reports them all."""
    first = problems[0]
    if len(problems) == 1:
        return first
    error = BlockFormatError("\n".join(p.message for p in problems), recovery=first.recovery)
    error.path, error.line = first.path, first.line
    return error


def resolve_all(
    resolver: Resolver,
    rows: dict[str, FileRow],
    tree_changes: dict[str, str | None],
    progress: Progress = silent,
) -> list[FileUpdate]:
    """Updates for every candidate path, in path order (the order duplicate ids are settled in).

    ``progress`` hears ``("parse", done, total)`` per candidate path.
    """
    updates: list[FileUpdate] = []
    paths = sorted(candidates(rows, tree_changes, resolver.stats))
    for done, path in enumerate(paths, 1):
        row = rows.get(path)
        tree_oid = tree_changes[path] if path in tree_changes else (row.tree_oid if row else None)
        update = resolver.resolve(path, tree_oid, row)
        if update is not None:
            updates.append(update)
        progress("parse", done, len(paths))
    redone = {u.path for u in updates}
    resolver.errors.extend(
        row.error for path, row in sorted(rows.items()) if row.error and path not in redone
    )
    return updates
