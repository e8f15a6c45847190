"""Indexing the tool's own writes: exactly the files it committed, keyed to the new tree at once.

The writer already holds what it wrote, so nothing is diffed or re-read later; when it also passes
the parsed blocks and blob oids (``WrittenFile``), nothing is parsed or hashed either, and only
the blocks that changed are rewritten.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from elfmem.block.layout import MEMORY_DIR
from elfmem.block.model import Block
from elfmem.block.parse import parse_bytes
from elfmem.errors import BlockFormatError
from elfmem.index.changes import FileRow, FileUpdate
from elfmem.index.db import IndexDB
from elfmem.index.embcache import EmbeddingCache, VectorModel
from elfmem.index.source import git_blob_oid
from elfmem.index.sync import Plan, SyncReport, TextFor, default_embed_text, run_plan


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """A memory file as the writer committed it: its blob oid and its blocks, in file order."""

    oid: str
    blocks: Sequence[Block]


def apply_files(
    db: IndexDB,
    files: Mapping[str, bytes | WrittenFile | None],
    model: VectorModel | None,
    tree_oid: str | None,
    *,
    parent_tree_oid: str | None = None,
    text_for: TextFor = default_embed_text,
    cache: EmbeddingCache | None = None,
    blob_oid: Callable[[bytes], str] = git_blob_oid,
    allow_model_change: bool = False,
    only_from_parent: bool = False,
) -> SyncReport:
    """Index exactly ``files`` (memory-relative path → bytes, ``WrittenFile`` or None = deleted)
    and key the index to ``tree_oid``.

    The key only moves when the index was keyed to ``parent_tree_oid`` (or no parent is given):
    otherwise the files are still applied and the next sync diffs in whatever else changed. An
    index keyed to nothing (new or just healed) is never keyed here: it needs a full sync.

    ``only_from_parent`` applies nothing unless the index is keyed to ``parent_tree_oid``: for
    files written a while ago, which may be older than what the index already holds.
    """

    def plan() -> Plan:
        meta = db.meta()
        known = meta.get("memory_tree_oid")
        set_tree = known is not None and parent_tree_oid in (None, known)
        token = (meta.get("generation"), known)
        if only_from_parent and not set_tree:
            return Plan("none", token, None, False, [], False, 0, [], meta)
        errors: list[BlockFormatError] = []
        updates = [_update(path, data, blob_oid, errors) for path, data in sorted(files.items())]
        parsed = sum(isinstance(data, bytes) for data in files.values())
        return Plan("apply", token, tree_oid, set_tree, updates, False, parsed, errors, meta)

    return run_plan(db, plan, model, text_for, cache, allow_model_change)


def _update(
    path: str,
    data: bytes | WrittenFile | None,
    blob_oid: Callable[[bytes], str],
    errors: list[BlockFormatError],
) -> FileUpdate:
    if data is None:
        return FileUpdate(path, None, [])
    if isinstance(data, WrittenFile):
        return FileUpdate(path, FileRow(data.oid, data.oid, "tree"), list(data.blocks))
    oid = blob_oid(data)
    try:
        blocks = parse_bytes(data, f"{MEMORY_DIR}/{path}")
    except BlockFormatError as exc:
        errors.append(exc)
        return FileUpdate(path, FileRow(oid, oid, "tree", error=exc), [])
    return FileUpdate(path, FileRow(oid, oid, "tree"), blocks)
