"""Bringing the index up to date with git: the keyed tree, the working tree and the vectors.

Work is split so the write lock is short: reading, parsing and embedding happen first, then one
transaction writes, after checking nobody else wrote in between (the ``generation`` and tree oid it
planned from). On a conflict the sync simply replans; the last attempt plans under the lock.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from elfmem.block.model import Block
from elfmem.errors import BlockFormatError
from elfmem.index.blockdiff import (
    BlockDiff,
    DuplicateId,
    KnownFile,
    apply_diff,
    diff_updates,
    shadowed_errors,
)
from elfmem.index.changes import FileRow, FileUpdate, Resolver, read_rows, resolve_all
from elfmem.index.db import IndexDB, is_corruption
from elfmem.index.embcache import EmbeddingCache, VectorModel
from elfmem.index.embedding import VectorPlan, check_model, plan_vectors, write_plan
from elfmem.index.passagevecs import LONG_BLOCK_CHARS
from elfmem.index.queries import long_blocks
from elfmem.index.source import MemorySource
from elfmem.index.tokenrows import TokenPlan, plan_tokens, write_tokens
from elfmem.progress import Progress, silent

ATTEMPTS = 4
TextFor = Callable[[Block], str]


def default_embed_text(block: Block) -> str:
    """The text a block is embedded as: its content, and its cue when it has one."""
    return f"{block.content}\n{block.cue}" if block.cue else block.content


@dataclass(slots=True)
class SyncReport:
    """What a sync did. ``mode``: none, overlay (working tree only), incremental, full, apply."""

    mode: str
    files_parsed: int = 0
    blocks_added: int = 0
    blocks_removed: int = 0
    embedded: int = 0
    errors: list[BlockFormatError] = field(default_factory=list)
    healed: str | None = None
    tree_oid: str | None = None
    stale: list[str] = field(default_factory=list)
    """Files to re-read because a duplicate block id's indexed copy went away; ``sync`` does it
    at once, ``apply_files`` leaves it to the next sync."""


@dataclass(slots=True)
class Plan:
    """What one attempt will write, and the (generation, keyed tree) it was planned from."""

    mode: str
    token: tuple[str | None, str | None]
    tree_oid: str | None
    set_tree: bool
    updates: list[FileUpdate]
    full: bool
    files_parsed: int
    errors: list[BlockFormatError]
    meta: dict[str, str]


class _Conflict(Exception):
    pass


def sync(
    db: IndexDB,
    source: MemorySource,
    model: VectorModel | None,
    *,
    text_for: TextFor = default_embed_text,
    cache: EmbeddingCache | None = None,
    allow_model_change: bool = False,
    overlay: bool = True,
    progress: Progress = silent,
) -> SyncReport:
    """Bring ``db`` up to date with ``source``; never raises for a file that does not parse.

    ``model`` None indexes text only and leaves vectors to the next sync that has a model.
    ``overlay`` False follows the committed tree only and leaves the working-tree check (a stat
    of every memory file) to the next sync that wants it; rows already overlaid stay as they are.
    ``progress`` hears ``("embed", done, total)`` per batch of texts the cache lacked (a change of
    model re-embeds every block).
    """
    report = _settle(
        db,
        source,
        run_plan(
            db,
            lambda: _plan_sync(db, source, False, overlay=overlay),
            model,
            text_for,
            cache,
            allow_model_change,
            progress,
        ),
        model,
        text_for,
        cache,
    )
    _add_duplicates(db, source, report)
    return report


def _add_duplicates(db: IndexDB, source: MemorySource, report: SyncReport) -> None:
    """A block id in two files is reported at every sync until it is fixed: reads serve the
    copy in the path that sorts first, and the report names both files and the copy's line."""
    known = {str(e) for e in report.errors}
    try:
        found = shadowed_errors(db.conn)
    except sqlite3.DatabaseError as exc:
        if not is_corruption(exc):
            raise
        return  # the next sync heals the file; nothing to report from a damaged one
    report.errors.extend(e for e in found if str(e) not in known)
    placed = [_placed(db, source, e) for e in report.errors]
    report.errors = list({str(e): e for e in placed}.values())


def _placed(db: IndexDB, source: MemorySource, error: BlockFormatError) -> BlockFormatError:
    """A duplicate id's error at its copy's line, read from the file indexed for its path."""
    if not isinstance(error, DuplicateId) or error.line:
        return error
    row = db.conn.execute("SELECT oid, source FROM files WHERE path = ?", (error.loser,)).fetchone()
    if row is None or row[0] is None:
        return error
    try:
        data = (
            source.read_worktree(error.loser) if row[1] == "worktree" else source.read_blob(row[0])
        )
    except (OSError, KeyError):
        return error  # gone since it was indexed: the next sync reports it afresh
    return error.placed(data)


def _settle(
    db: IndexDB,
    source: MemorySource,
    report: SyncReport,
    model: VectorModel | None,
    text_for: TextFor,
    cache: EmbeddingCache | None,
) -> SyncReport:
    """Re-read files left stale by a duplicate id (converges in a pass or two)."""
    for _ in range(ATTEMPTS):
        if not report.stale:
            break
        more = run_plan(db, lambda: _plan_sync(db, source, False), model, text_for, cache, False)
        report.files_parsed += more.files_parsed
        report.blocks_added += more.blocks_added
        report.blocks_removed += more.blocks_removed
        report.embedded += more.embedded
        report.errors += [e for e in more.errors if str(e) not in {str(x) for x in report.errors}]
        report.stale = more.stale
    return report


def rebuild(
    db: IndexDB,
    source: MemorySource,
    model: VectorModel | None,
    *,
    text_for: TextFor = default_embed_text,
    cache: EmbeddingCache | None = None,
    allow_model_change: bool = False,
    progress: Progress = silent,
) -> SyncReport:
    """Re-read every file of the current tree (vectors still come from the cache).

    ``progress`` hears ``("parse", done, total)`` per file and ``("embed", done, total)`` per
    batch of texts the cache lacked; a retried attempt starts its counts again.
    """
    return run_plan(
        db,
        lambda: _plan_sync(db, source, True, progress),
        model,
        text_for,
        cache,
        allow_model_change,
        progress,
    )


def _plan_sync(
    db: IndexDB,
    source: MemorySource,
    force_full: bool,
    progress: Progress = silent,
    *,
    overlay: bool = True,
) -> Plan:
    meta = db.meta()
    old_tree, new_tree = meta.get("memory_tree_oid"), source.memory_tree_oid()
    token = (meta.get("generation"), old_tree)
    if not overlay and not force_full and old_tree is not None and old_tree == new_tree:
        return Plan("none", token, new_tree, True, [], False, 0, [], meta)
    rows = file_rows(db)
    changes: dict[str, str | None] | None = None
    if not force_full and old_tree == new_tree:
        changes, mode = {}, "none"
    elif not force_full and old_tree is not None and new_tree is not None:
        try:
            changes, mode = source.changed_files(old_tree, new_tree), "incremental"
        except KeyError:
            changes = None
    if changes is None:
        mode = "full"
        changes = dict(source.tree_files(new_tree)) if new_tree is not None else {}
        rows = {}
    if not overlay and mode != "full":
        # Only the changed paths, read from the tree; other rows (overlaid or not) stay as they are.
        rows = {path: row for path, row in rows.items() if path in changes}
    resolver = Resolver(source, source.worktree_stats() if overlay or mode == "full" else None)
    updates = resolve_all(resolver, rows, changes, progress)
    if mode == "none" and any(u.blocks is not None for u in updates):
        mode = "overlay"
    full = mode == "full"
    parsed = resolver.files_parsed
    return Plan(mode, token, new_tree, True, updates, full, parsed, resolver.errors, meta)


def file_rows(db: IndexDB) -> dict[str, FileRow]:
    """The index's ``files`` rows; read once and reused while ``db.change_key()`` stands still.

    Every recall's sync compares each memory file's stat with its row; the rows change only
    when something writes the index, so a run of recalls reads them once. A hand edit shows in
    the stat (a new mtime or size), never in the rows, so keeping them serves nothing stale.
    """
    key = db.change_key()
    kept = db.kept.get("files")
    if kept is not None and kept[0] == key:
        return dict(cast(dict[str, FileRow], kept[1]))
    rows = read_rows(db.conn)
    db.kept["files"] = (key, rows)
    return dict(rows)


def run_plan(
    db: IndexDB,
    make_plan: Callable[[], Plan],
    model: VectorModel | None,
    text_for: TextFor,
    cache: EmbeddingCache | None,
    allow_model_change: bool,
    progress: Progress = silent,
) -> SyncReport:
    try:
        return _attempts(db, make_plan, model, text_for, cache, allow_model_change, progress)
    except sqlite3.DatabaseError as exc:
        if not is_corruption(exc):
            raise
        db.heal(f"index file was damaged ({exc}); rebuilt")
    return _attempts(db, make_plan, model, text_for, cache, allow_model_change, progress)


def _attempts(
    db: IndexDB,
    make_plan: Callable[[], Plan],
    model: VectorModel | None,
    text_for: TextFor,
    cache: EmbeddingCache | None,
    allow_model_change: bool,
    progress: Progress,
) -> SyncReport:
    for attempt in range(ATTEMPTS):
        try:
            if attempt < ATTEMPTS - 1:
                plan = make_plan()
                check_model(plan.meta, model, allow_model_change)
                return _attempt(db, plan, model, text_for, cache, progress, locked=False)
            with db.write():
                plan = make_plan()
                check_model(plan.meta, model, allow_model_change)
                return _attempt(db, plan, model, text_for, cache, progress, locked=True)
        except _Conflict:
            continue
    raise AssertionError("unreachable: the last attempt holds the write lock")  # pragma: no cover


def _attempt(
    db: IndexDB,
    plan: Plan,
    model: VectorModel | None,
    text_for: TextFor,
    cache: EmbeddingCache | None,
    progress: Progress,
    *,
    locked: bool,
) -> SyncReport:
    report = SyncReport(plan.mode, plan.files_parsed, errors=list(plan.errors), healed=db.healed)
    report.tree_oid = plan.tree_oid if plan.set_tree else plan.token[1]
    label = (plan.meta.get("index_uuid", ""), plan.meta.get("generation", ""))
    known = {} if plan.full else _known_rows(db, label, plan.updates)
    diff = diff_updates(db.conn, plan.updates, full=plan.full, known=known)
    vectors = plan_vectors(db, plan.meta, diff, model, text_for, cache, progress)
    tokens = plan_tokens(
        db.conn,
        plan.meta,
        vectors.blocks,
        model,
        long_blocks=lambda: [r.to_block() for r in long_blocks(db, LONG_BLOCK_CHARS)],
        gone=diff.removed,
        cache=cache,
        progress=progress,
    )
    report.embedded = vectors.embedded
    report.errors.extend(diff.errors)
    report.blocks_added, report.blocks_removed = len(diff.added), len(diff.removed)
    report.stale = sorted(diff.stale)
    if plan.mode == "none" and not plan.updates and not vectors.pending and not tokens.due:
        return report
    if locked:
        generation = _write(db, plan, diff, vectors, tokens)
    else:
        with db.write():
            meta = db.meta()
            if (meta.get("generation"), meta.get("memory_tree_oid")) != plan.token:
                raise _Conflict
            generation = _write(db, plan, diff, vectors, tokens)
    _keep_rows(db, (label[0], generation), diff)
    return report


KNOWN_FILES = 8
"""Memory files whose rows each process keeps (the buckets it is appending to)."""


def _known_rows(
    db: IndexDB, label: tuple[str, str], updates: list[FileUpdate]
) -> dict[str, KnownFile]:
    """Rows this process wrote for these files, where the index has not changed since."""
    out = {}
    for update in updates:
        entry = db.known_rows.get(update.path)
        if update.blocks is not None and entry is not None and entry[0] == label:
            out[update.path] = entry[1]
    return out


def _keep_rows(db: IndexDB, label: tuple[str, str], diff: BlockDiff) -> None:
    for path, known in diff.after.items():
        db.known_rows[path] = (label, known)
        db.known_rows.move_to_end(path)
    while len(db.known_rows) > KNOWN_FILES:
        db.known_rows.popitem(last=False)


def _write(db: IndexDB, plan: Plan, diff: BlockDiff, vectors: VectorPlan, tokens: TokenPlan) -> str:
    """Apply ``plan`` inside the caller's write transaction; returns the generation after it."""
    apply_diff(db.conn, diff, plan.updates)
    vectors_changed = write_plan(db.conn, vectors, diff)
    write_tokens(db.conn, tokens, diff.removed, diff.full)
    if plan.set_tree:
        if plan.tree_oid is None:
            db.conn.execute("DELETE FROM meta WHERE key = 'memory_tree_oid'")
        else:
            db.conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('memory_tree_oid', ?)", (plan.tree_oid,)
            )
    if diff.touches_blocks or vectors_changed:
        db.bump_generation()
    row = db.conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    if diff.touches_blocks or vectors_changed:
        from elfmem.index.vecdelta import log_changes  # with the vector files: writes only

        log_changes(db.conn, int(row[0]), _changed_ids(diff, vectors))
    return str(row[0]) if row is not None else ""


def _changed_ids(diff: BlockDiff, vectors: VectorPlan) -> set[str] | None:
    """Blocks whose vector rows (vector, passages, status, presence) this write may change;
    None for a rebuild or a reset of every vector."""
    if diff.full or vectors.reset or vectors.passages.reshape:
        return None
    ids = {*diff.delete, *diff.inserted, *diff.removed, *vectors.stale}
    ids.update(block_id for block_id, _ in vectors.rows)
    ids.update(row[0] for row in vectors.passages.rows)
    ids.update(vectors.passages.dropped)
    return ids
