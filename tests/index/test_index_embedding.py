"""Vectors during sync: the model identity guard, the embedding cache, text-only indexing."""

from __future__ import annotations

import pytest
from index_support import HashModel, bid, block_text, corpus, memory_file, source_with

from elfmem.errors import ModelMismatch
from elfmem.index import (
    EmbeddingCache,
    IndexDB,
    rebuild,
    sync,
)

BUCKET = "notes/knowledge/2026-01.md"


def test_model_change_is_refused_unless_allowed(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=2, per_file=2))
    sync(db, source, HashModel(), cache=cache)
    other = HashModel(identity="test/other-32", dimensions=32)
    with pytest.raises(ModelMismatch) as raised:
        sync(db, source, other, cache=cache)
    assert "migrate-embeddings" in raised.value.recovery
    report = sync(db, source, other, cache=cache, allow_model_change=True)
    assert (report.mode, report.embedded) == ("none", 4)
    assert db.meta()["model_identity"] == "test/other-32"
    sizes = {len(r[0]) for r in db.conn.execute("SELECT vec FROM vectors")}
    assert sizes == {32 * 4}


def test_cache_means_a_second_rebuild_embeds_nothing(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with(corpus(files=3, per_file=3))
    model = HashModel()
    assert sync(db, source, model, cache=cache).embedded == 9
    db.conn.execute("DELETE FROM vectors")
    report = rebuild(db, source, model, cache=cache)
    assert (report.mode, report.files_parsed, report.embedded) == ("full", 3, 0)
    assert model.texts_embedded == 9
    assert db.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 9


def test_cue_edit_reembeds_only_that_block(db: IndexDB, cache: EmbeddingCache) -> None:
    source = source_with({BUCKET: memory_file(block_text(bid(1), "a"), block_text(bid(2), "b"))})
    sync(db, source, HashModel(), cache=cache)
    edited = memory_file(block_text(bid(1), "a", cue="when choosing"), block_text(bid(2), "b"))
    source.commit({BUCKET: edited})
    assert sync(db, source, HashModel(), cache=cache).embedded == 1


def test_text_only_sync_fills_vectors_on_the_next_sync_with_a_model(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with(corpus(files=2, per_file=2))
    report = sync(db, source, None, cache=cache)
    assert (report.blocks_added, report.embedded) == (4, 0)
    assert db.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    filled = sync(db, source, HashModel(), cache=cache)
    assert (filled.mode, filled.embedded) == ("none", 4)
    assert db.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 4
    assert sync(db, source, HashModel(), cache=cache).embedded == 0


def test_after_text_only_syncs_only_new_or_changed_blocks_are_embedded(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    blocks = [block_text(bid(i), f"text {i}") for i in range(1, 6)]
    source = source_with({BUCKET: memory_file(*blocks)})
    model = HashModel()
    assert sync(db, source, model, cache=cache).embedded == 5
    blocks[0] = block_text(bid(1), "text 1 rewritten")  # changed while vectors were off
    source.commit({BUCKET: memory_file(*blocks, block_text(bid(6), "text 6"))})
    sync(db, source, None, cache=cache)
    stored = {r[0] for r in db.conn.execute("SELECT block_id FROM vectors")}
    assert stored == {bid(i) for i in range(2, 6)}  # the stale vector was dropped, not kept
    before = model.texts_embedded
    filled = sync(db, source, model, cache=cache)
    assert filled.embedded == 2 and model.texts_embedded - before == 2
    assert db.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 6


def test_default_cache_lives_in_the_user_cache_dir(db: IndexDB) -> None:
    from elfmem.index import default_cache_path

    source = source_with(corpus(files=1, per_file=2))
    assert sync(db, source, HashModel()).embedded == 2
    assert default_cache_path().exists()
    db.conn.execute("DELETE FROM vectors")
    assert rebuild(db, source, HashModel()).embedded == 0
