"""The derived index: SQLite in the git dir, keyed to the memory subtree oid, rebuilt from git.

Deleting it loses nothing. ``open_index`` heals a missing or corrupt file, ``sync`` brings it up to
date (tree diff plus working-tree overlay plus vectors), and ``lexical`` / ``VectorStore`` /
``queries`` read it. This is the only package that imports sqlite3.
"""

from __future__ import annotations

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
from elfmem.index.sync import SyncReport, default_embed_text, rebuild, sync
from elfmem.index.writes import WrittenFile, apply_files

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
