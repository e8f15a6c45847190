"""Long blocks are indexed as passages: rows kept in step with edits and forgets, searched by the
best passage, and short blocks left exactly as they were (no passage rows)."""

from __future__ import annotations

import numpy as np
from index_support import HashModel, bid, block_text, memory_file, source_with

from elfmem.block.passages import PASSAGE_CHARS, passages
from elfmem.index import EmbeddingCache, IndexDB, rebuild, sync, vector_store
from elfmem.index.passagevecs import LONG_BLOCK_CHARS

BUCKET = "notes/knowledge/2026-01.md"
TOPICS = [
    "glacier", "harbour", "violin", "orchard", "telescope", "bakery", "lighthouse", "canyon",
    "saddle", "compass", "lantern", "meadow", "quarry", "ribbon", "tundra", "walnut",
]  # fmt: skip


def _long(topics: list[str]) -> str:
    """One paragraph per topic, each a few sentences that name only that topic."""
    paragraphs = [
        " ".join(f"The {t} story, part {k}, goes on for a while about the {t}." for k in range(6))
        for t in topics
    ]
    return "\n\n".join(paragraphs)


def _passage_rows(db: IndexDB, block_id: str) -> list[tuple[int, str]]:
    sql = "SELECT ord, text_hash FROM passages WHERE block_id = ? ORDER BY ord"
    return db.conn.execute(sql, (block_id,)).fetchall()


def test_a_long_block_gets_one_row_per_passage_and_a_short_one_none(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    content = _long(TOPICS)
    assert len(content) > 3 * PASSAGE_CHARS
    turn = "A turn of a conversation that runs on for a while, as some do. " * 14  # ~900 chars
    assert PASSAGE_CHARS < len(turn) <= LONG_BLOCK_CHARS
    source = source_with(
        {
            BUCKET: memory_file(
                block_text(bid(1), content),
                block_text(bid(2), "a short note"),
                block_text(bid(3), turn.strip()),
            )
        }
    )
    model = HashModel()
    report = sync(db, source, model, cache=cache)
    assert len(_passage_rows(db, bid(1))) == len(passages(content))
    assert _passage_rows(db, bid(2)) == [] and _passage_rows(db, bid(3)) == []
    assert report.embedded == 3 + len(passages(content))
    # The short block's vector is its text's, as before passages existed.
    stored = vector_store(db).vectors_for([bid(2)])[bid(2)]
    assert np.allclose(stored, model.embed(["a short note"])[0])


def test_editing_one_paragraph_re_embeds_only_the_passages_that_changed(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    content = _long(TOPICS)
    source = source_with({BUCKET: memory_file(block_text(bid(1), content))})
    model = HashModel()
    sync(db, source, model, cache=cache)
    before = dict(_passage_rows(db, bid(1)))
    edited = content.replace("The walnut story, part 5", "The walnut tale, part 5")
    source.commit({BUCKET: memory_file(block_text(bid(1), edited))})
    model.texts_embedded = 0
    report = sync(db, source, model, cache=cache)
    after = dict(_passage_rows(db, bid(1)))
    changed = {k for k in after if before.get(k) != after[k]}
    assert report.mode == "incremental"
    assert len(changed) == 1 and max(after) in changed  # the last paragraph's passage
    assert model.texts_embedded == 2  # the block's text and that one passage


def test_shortening_or_forgetting_a_long_block_drops_its_passages(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with(
        {BUCKET: memory_file(block_text(bid(1), _long(TOPICS)), block_text(bid(2), _long(TOPICS)))}
    )
    sync(db, source, HashModel(), cache=cache)
    assert _passage_rows(db, bid(1)) and _passage_rows(db, bid(2))
    source.commit({BUCKET: memory_file(block_text(bid(1), "now short"))})
    sync(db, source, HashModel(), cache=cache)
    assert _passage_rows(db, bid(1)) == [] and _passage_rows(db, bid(2)) == []
    assert db.conn.execute("SELECT count(*) FROM passages").fetchone()[0] == 0


def test_a_rebuild_and_an_incremental_sync_end_with_the_same_passages(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with({BUCKET: memory_file(block_text(bid(1), _long(TOPICS[:8])))})
    sync(db, source, HashModel(), cache=cache)
    source.commit({BUCKET: memory_file(block_text(bid(1), _long(TOPICS[4:])))})
    sync(db, source, HashModel(), cache=cache)
    incremental = db.conn.execute("SELECT * FROM passages ORDER BY block_id, ord").fetchall()
    rebuild(db, source, HashModel(), cache=cache)
    assert (
        db.conn.execute("SELECT * FROM passages ORDER BY block_id, ord").fetchall() == incremental
    )


def test_an_index_from_before_passages_cuts_its_long_blocks_at_the_next_sync(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with({BUCKET: memory_file(block_text(bid(1), _long(TOPICS)))})
    sync(db, source, HashModel(), cache=cache)
    db.conn.execute("DELETE FROM passages")
    db.conn.execute("DELETE FROM meta WHERE key = 'passage_shape'")
    report = sync(db, source, HashModel(), cache=cache)
    assert report.mode == "none"
    assert len(_passage_rows(db, bid(1))) == len(passages(_long(TOPICS)))


def test_a_query_matching_one_passage_finds_the_long_block_first(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    # One mention among fifty other words: weaker than the lighthouse passage, stronger than the
    # long block's whole-text vector, where the word is a sixteenth of everything.
    distractor = "lighthouse " + " ".join(f"word{i}" for i in range(50))
    source = source_with(
        {BUCKET: memory_file(block_text(bid(1), _long(TOPICS)), block_text(bid(2), distractor))}
    )
    model = HashModel()
    sync(db, source, model, cache=cache)
    query = model.embed(["lighthouse"])[0]
    store = vector_store(db)
    assert store.dense(query, 2)[0][0] == bid(1)
    # Whole-block vectors alone rank the distractor first: the passage is what finds it.
    whole = {i: float(v @ query) for i, v in store.vectors_for([bid(1), bid(2)]).items()}
    assert whole[bid(2)] > whole[bid(1)]


def test_a_text_only_sync_leaves_passages_to_the_next_sync_with_a_model(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with({BUCKET: memory_file(block_text(bid(1), _long(TOPICS[:8])))})
    sync(db, source, HashModel(), cache=cache)
    source.commit({BUCKET: memory_file(block_text(bid(1), _long(TOPICS[8:])))})
    sync(db, source, None, cache=cache)  # the text changed with vectors off: old passages go
    assert _passage_rows(db, bid(1)) == []
    sync(db, source, HashModel(), cache=cache)
    assert len(_passage_rows(db, bid(1))) == len(passages(_long(TOPICS[8:])))
