"""Which blocks need a vector, and storing them, keyed by text hash so unchanged text is reused.

Planning runs before the write lock (embedding is the slow part) on the block diff; ``write_plan``
runs inside the lock and stores exactly what was planned.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from elfmem.block.model import Block
from elfmem.errors import ModelMismatch
from elfmem.index import passagevecs
from elfmem.index.blockdiff import BlockDiff
from elfmem.index.db import IndexDB
from elfmem.index.embcache import (
    EmbeddingCache,
    VectorModel,
    default_cache_path,
    embed_cached,
    text_hash,
)
from elfmem.index.passagevecs import (
    PassagePlan,
    delete_passages,
    passages_ready,
    plan_passages,
    write_passages,
)
from elfmem.index.queries import (
    count_unvectored,
    counts,
    list_blocks,
    long_blocks,
    unvectored_blocks,
)
from elfmem.index.rows import CHUNK, pairs_among
from elfmem.progress import Progress, silent

if TYPE_CHECKING:
    from elfmem.index.embcache import Vector

TextFor = Callable[[Block], str]


@dataclass(slots=True)
class VectorPlan:
    """Vectors computed ahead of the write, and which block rows get which one."""

    model: VectorModel | None
    by_hash: dict[str, Vector] = field(default_factory=dict)
    rows: list[tuple[str, str]] = field(default_factory=list)
    reset: bool = False
    pending: bool = False
    embedded: int = 0
    stale: list[str] = field(default_factory=list)
    """Blocks whose text changed while vectors were off: their old vector rows are dropped."""
    passages: PassagePlan = field(default_factory=PassagePlan)
    blocks: dict[str, Block] = field(default_factory=dict)
    """Every block this plan looked at: written by the diff, or embedded as pending."""


LOCAL_MODELS = ("onnx:", "static:", "mock:")
"""Identity prefixes of models that run in this process: re-embedding with them costs seconds
and no money, so a change to one (an upgrade of the embedded model, a new ``embeddings.path``)
re-embeds the memory by itself. An endpoint model waits for ``elfmem migrate-embeddings``."""


def reembeds_itself(model: VectorModel | None) -> bool:
    """True when a change to ``model`` is applied at the next sync without asking."""
    return model is not None and model.identity.startswith(LOCAL_MODELS)


def backlog(db: IndexDB, model: VectorModel) -> tuple[int, bool]:
    """(blocks without a vector from ``model``, whether the stored vectors are another model's).

    Read from the meta flags first, so a memory with nothing pending pays no count: the
    ``vectors_pending`` flag is set by every sync that indexed blocks without embedding them.
    """
    meta = db.meta()
    known = meta.get("model_identity")
    if known is not None and known != model.identity:
        return sum(counts(db).values()), True
    if meta.get("vectors_pending") != "1":
        return 0, False
    return count_unvectored(db), False


def check_model(meta: dict[str, str], model: VectorModel | None, allow_change: bool) -> None:
    """Refuse to mix vectors from two models: rankings would silently be wrong."""
    known = meta.get("model_identity")
    if model is None or known is None or known == model.identity or allow_change:
        return
    raise ModelMismatch(
        f"the index was embedded with model {known!r}, not the configured {model.identity!r}",
        "Run `elfmem migrate-embeddings` to re-embed every block with the configured model, or "
        "set the previous model back in .elfmem/config.yaml.",
    )


def plan_vectors(
    db: IndexDB,
    meta: dict[str, str],
    diff: BlockDiff,
    model: VectorModel | None,
    text_for: TextFor,
    cache: EmbeddingCache | None,
    progress: Progress = silent,
) -> VectorPlan:
    """Embed (through the cache) every text a written or unvectored block now needs."""
    plan = VectorPlan(model, blocks=diff.inserted)
    if model is None:
        # Drop the vectors whose text changed, so that "pending" means exactly the blocks
        # without a vector row and the next sync with vectors embeds only those.
        if diff.inserted:
            stored = _stored_hashes(db.conn, list(diff.inserted))
            plan.stale = [
                i
                for i, block in diff.inserted.items()
                if i in stored and stored[i] != text_hash(text_for(block))
            ]
        return plan
    known = meta.get("model_identity")
    plan.reset = known is not None and known != model.identity
    plan.pending = plan.reset or meta.get("vectors_pending") == "1"
    reshape = meta.get("passage_shape") != passagevecs.SHAPE and passages_ready(db.conn)
    blocks = diff.inserted
    if (plan.pending or reshape) and not diff.full:
        gone = set(diff.delete)
        rows = list_blocks(db) if plan.reset else unvectored_blocks(db)
        if reshape and not plan.reset:
            rows += long_blocks(db, max(passagevecs.LONG_BLOCK_CHARS, passagevecs.PASSAGE_CHARS))
        kept = {r.id: r.to_block() for r in rows if r.id not in gone}
        blocks = {**kept, **blocks}
    plan.pending = plan.pending or reshape
    plan.blocks = blocks
    current: dict[str, str] = {}
    if not plan.reset:
        everything = diff.full and len(blocks) > CHUNK
        current = _stored_hashes(db.conn, None if everything else list(blocks))
    texts: dict[str, str] = {}
    for block_id, block in blocks.items():
        text = text_for(block)
        key = text_hash(text)
        if current.get(block_id) != key:
            texts[key] = text
            plan.rows.append((block_id, key))
    plan.passages = plan_passages(db.conn, blocks, text_for, texts, plan.reset, reshape)
    if texts:
        plan.by_hash, plan.embedded = _embed(model, texts, cache, progress)
    return plan


def _embed(
    model: VectorModel, texts: dict[str, str], cache: EmbeddingCache | None, progress: Progress
) -> tuple[dict[str, Vector], int]:
    store = EmbeddingCache(default_cache_path()) if cache is None else cache
    try:
        return embed_cached(model, texts, store, progress)
    finally:
        if cache is None:
            store.close()


def _stored_hashes(conn: sqlite3.Connection, ids: list[str] | None) -> dict[str, str]:
    if ids is None:
        return dict(conn.execute("SELECT block_id, text_hash FROM vectors").fetchall())
    return pairs_among(conn, "SELECT block_id, text_hash FROM vectors WHERE block_id IN", ids)


def write_plan(conn: sqlite3.Connection, plan: VectorPlan, diff: BlockDiff) -> bool:
    """Store the planned vectors and drop orphans; True when any vector changed."""
    if diff.full:
        conn.execute("DELETE FROM vectors WHERE block_id NOT IN (SELECT id FROM blocks)")
    else:
        conn.executemany("DELETE FROM vectors WHERE block_id = ?", [(i,) for i in diff.removed])
        delete_passages(conn, diff.removed)
    if diff.full and passages_ready(conn):
        conn.execute("DELETE FROM passages WHERE block_id NOT IN (SELECT id FROM blocks)")
    if plan.model is None:
        conn.executemany("DELETE FROM vectors WHERE block_id = ?", [(i,) for i in plan.stale])
        delete_passages(conn, plan.stale)
        if diff.insert:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('vectors_pending', '1')")
        return bool(diff.removed) or bool(plan.stale)
    if plan.reset:
        conn.execute("DELETE FROM vectors")
        conn.execute("DELETE FROM passages")
    conn.executemany(
        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
        [(i, key, plan.by_hash[key].astype("<f4").tobytes()) for i, key in plan.rows],
    )
    write_passages(conn, plan.passages, plan.by_hash)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('model_identity', ?)", (plan.model.identity,))
    conn.execute("DELETE FROM meta WHERE key = 'vectors_pending'")
    changed = bool(plan.passages.rows) or bool(plan.passages.dropped)
    return bool(plan.rows) or plan.reset or bool(diff.removed) or changed
