"""The derived index: SQLite in the git dir, keyed to the memory subtree oid, rebuilt from git.

Deleting it loses nothing. ``open_index`` heals a missing or corrupt file, ``sync`` brings it up to
date (tree diff plus working-tree overlay plus vectors), and ``lexical`` / ``VectorStore`` /
``queries`` read it. This is the only package that imports sqlite3.

Attributes load their module at first use (PEP 562): ``from elfmem.index import queries`` runs
the queries module alone, not the vector search, the full-text pool and the writers with it,
which a command that never touches them (``status``, ``remember``) paid for at every start.
``sync`` is the exception: importing the ``elfmem.index.sync`` module binds its name here to the
module, so the function is bound once, now (every command syncs the index anyway).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from elfmem.index.sync import sync
from elfmem.lazyload import lazy_exports

if TYPE_CHECKING:
    from elfmem.index.db import IndexDB, index_path, open_index, open_memory_index
    from elfmem.index.embcache import EmbeddingCache, VectorModel, default_cache_path
    from elfmem.index.fulltext import FieldWeights, lexical, match_expression
    from elfmem.index.queries import (
        BlockRow,
        block_ids_with_tag,
        counts,
        file_errors,
        find_by_hash,
        get_blocks,
        list_blocks,
        neighbours,
        status,
    )
    from elfmem.index.search import VectorStore, vector_store
    from elfmem.index.source import DictSource, MemorySource, git_blob_oid
    from elfmem.index.sync import SyncReport, default_embed_text, rebuild
    from elfmem.index.writes import WrittenFile, apply_files

_HOMES: dict[str, str] = {
    "BlockRow": "queries",
    "DictSource": "source",
    "EmbeddingCache": "embcache",
    "FieldWeights": "fulltext",
    "IndexDB": "db",
    "MemorySource": "source",
    "SyncReport": "sync",
    "VectorModel": "embcache",
    "VectorStore": "search",
    "WrittenFile": "writes",
    "apply_files": "writes",
    "block_ids_with_tag": "queries",
    "counts": "queries",
    "default_cache_path": "embcache",
    "default_embed_text": "sync",
    "file_errors": "queries",
    "find_by_hash": "queries",
    "get_blocks": "queries",
    "git_blob_oid": "source",
    "index_path": "db",
    "lexical": "fulltext",
    "list_blocks": "queries",
    "match_expression": "fulltext",
    "neighbours": "queries",
    "open_index": "db",
    "open_memory_index": "db",
    "rebuild": "sync",
    "status": "queries",
    "vector_store": "search",
}
"""Each name this package exports, and the module of the package that defines it."""

__all__ = [
    "BlockRow",
    "DictSource",
    "EmbeddingCache",
    "FieldWeights",
    "IndexDB",
    "MemorySource",
    "SyncReport",
    "VectorModel",
    "VectorStore",
    "WrittenFile",
    "apply_files",
    "block_ids_with_tag",
    "counts",
    "default_cache_path",
    "default_embed_text",
    "file_errors",
    "find_by_hash",
    "get_blocks",
    "git_blob_oid",
    "index_path",
    "lexical",
    "list_blocks",
    "match_expression",
    "neighbours",
    "open_index",
    "open_memory_index",
    "rebuild",
    "status",
    "sync",
    "vector_store",
]


__getattr__ = lazy_exports(__name__, _HOMES, globals())
