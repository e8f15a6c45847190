"""Long blocks' token ids and window norms are stored at sync (``index.tokenrows``) and kept in
step with edits, forgets, captures without vectors, rebuilds and a change of model, so late
interaction reads them instead of tokenising; a block without a row is tokenised at recall."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from index_support import HashModel, bid, block_text, memory_file, source_with

from elfmem.adapters.static import StaticEmbedder
from elfmem.index import EmbeddingCache, IndexDB, open_index, rebuild, sync
from elfmem.index.passagevecs import LONG_BLOCK_CHARS
from elfmem.index.tokenrows import shape_of, stored_tokens, window_norms
from elfmem.retrieval.late import LateScorer

BUCKET = "notes/knowledge/2026-01.md"
OTHER = "notes/knowledge/2026-02.md"
MODEL = StaticEmbedder()


def _long(topic: str, n: int = 30) -> str:
    text = " ".join(
        f"The {topic} entry {k} keeps going about the {topic} by the shore." for k in range(n)
    )
    assert len(text) > LONG_BLOCK_CHARS
    return text


def _rows(db: IndexDB) -> dict[str, str]:
    return dict(db.conn.execute("SELECT block_id, text_hash FROM tokens").fetchall())


def test_a_sync_with_vectors_stores_each_long_blocks_tokens_and_window_norms(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with(
        {
            BUCKET: memory_file(
                block_text(bid(1), _long("lighthouse")), block_text(bid(2), "a short note")
            )
        }
    )
    sync(db, source, MODEL, cache=cache)
    assert set(_rows(db)) == {bid(1)}  # a short block tokenises at recall in microseconds
    stored = stored_tokens(db.conn, [bid(1), bid(2)], shape_of(MODEL))
    ids, norms = stored[bid(1)]
    expected = MODEL.token_ids([_long("lighthouse")])[0]
    assert ids.tolist() == expected.tolist()
    assert np.array_equal(norms, window_norms(expected, MODEL.token_table()))
    assert stored_tokens(db.conn, [bid(1)], "another model w5/2 <u2") == {}


def test_rows_follow_edits_forgets_and_captures_without_vectors(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    files = {
        BUCKET: memory_file(
            block_text(bid(1), _long("harbour")), block_text(bid(2), _long("mill"))
        ),
        OTHER: memory_file(block_text(bid(3), _long("orchard"))),
    }
    source = source_with(files)
    sync(db, source, MODEL, cache=cache)
    before = _rows(db)
    assert set(before) == {bid(1), bid(2), bid(3)}
    # a capture indexes text only: the edited block's row goes, its neighbour's stays
    source.commit(
        {
            BUCKET: memory_file(
                block_text(bid(1), _long("harbour", 31)), block_text(bid(2), _long("mill"))
            )
        }
    )
    sync(db, source, None, cache=cache)
    assert _rows(db) == {bid(2): before[bid(2)], bid(3): before[bid(3)]}
    # the next sync with vectors makes it again, from the new text
    sync(db, source, MODEL, cache=cache)
    after = _rows(db)
    assert set(after) == {bid(1), bid(2), bid(3)} and after[bid(1)] != before[bid(1)]
    ids, _ = stored_tokens(db.conn, [bid(1)], shape_of(MODEL))[bid(1)]
    assert ids.tolist() == MODEL.token_ids([_long("harbour", 31)])[0].tolist()
    # shortened, and forgotten: no row for either
    shortened = memory_file(block_text(bid(1), "short now"), block_text(bid(2), _long("mill")))
    source.commit({BUCKET: shortened, OTHER: None})
    sync(db, source, MODEL, cache=cache)
    assert set(_rows(db)) == {bid(2)}


def test_a_new_model_or_an_index_without_rows_fills_every_long_block(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with(
        {
            BUCKET: memory_file(
                block_text(bid(1), _long("canyon")), block_text(bid(2), _long("quarry"))
            )
        }
    )
    sync(db, source, HashModel(), cache=cache)  # an embedder with no tokens: no rows
    assert _rows(db) == {}
    # the embedded model comes in (a change of model re-embeds by itself): every row is made
    report = sync(db, source, MODEL, cache=cache, allow_model_change=True)
    assert set(_rows(db)) == {bid(1), bid(2)}
    # an index that predates the rows (or another window) fills them at the next sync with
    # vectors, even when nothing else changed
    db.conn.execute("DELETE FROM tokens")
    db.conn.execute("DELETE FROM meta WHERE key = 'token_shape'")
    report = sync(db, source, MODEL, cache=cache)
    assert report.mode == "none"
    assert set(_rows(db)) == {bid(1), bid(2)}
    shapes = {r[0] for r in db.conn.execute("SELECT shape FROM tokens")}
    assert shapes == {shape_of(MODEL)}


def test_a_rebuild_and_an_incremental_sync_end_with_the_same_rows(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    source = source_with(
        {
            BUCKET: memory_file(
                block_text(bid(1), _long("violin")), block_text(bid(2), _long("oboe"))
            )
        }
    )
    sync(db, source, MODEL, cache=cache)
    source.commit({BUCKET: memory_file(block_text(bid(2), _long("oboe", 33)))})
    sync(db, source, MODEL, cache=cache)
    sql = "SELECT block_id, text_hash, shape, ids, norms FROM tokens ORDER BY block_id"
    incremental = db.conn.execute(sql).fetchall()
    assert [r[0] for r in incremental] == [bid(2)]
    rebuild(db, source, MODEL, cache=cache)
    assert db.conn.execute(sql).fetchall() == incremental


@pytest.mark.parametrize("stored", [True, False])
def test_late_scores_are_the_same_from_stored_rows_and_from_the_text(
    db: IndexDB, cache: EmbeddingCache, stored: bool
) -> None:
    texts = {bid(1): _long("lighthouse"), bid(2): _long("meadow"), bid(3): "lighthouse keeper"}
    source = source_with({BUCKET: memory_file(*(block_text(i, t) for i, t in texts.items()))})
    sync(db, source, MODEL if stored else None, cache=cache)
    assert bool(_rows(db)) == stored
    query = "who keeps the lighthouse by the shore?"
    scorer = LateScorer(MODEL)
    got = scorer.scores(db, query, [bid(3), bid(1), bid(2), bid(9)])
    assert list(got) == [bid(3), bid(1), bid(2)]  # an id the index lacks is left out
    by_text = scorer.score_windows(
        scorer.query_ids(query),
        dict(zip(texts, LateScorer(MODEL).from_texts(list(texts.values())), strict=True)),
    )
    assert got == pytest.approx(by_text, abs=1e-6)
    assert got[bid(1)] > got[bid(2)]


class _Counting(StaticEmbedder):
    """The embedded model, counting the texts it tokenises for late interaction."""

    tokenised = 0

    def token_ids(self, texts: Sequence[str]) -> list[npt.NDArray[np.int64]]:
        type(self).tokenised += len(texts)
        return super().token_ids(texts)


def test_a_rebuilt_index_takes_its_rows_from_the_embedding_cache(
    db: IndexDB, cache: EmbeddingCache, tmp_path: Path
) -> None:
    files = {
        BUCKET: memory_file(block_text(bid(1), _long("harbour")), block_text(bid(2), _long("mill")))
    }
    model = _Counting()
    sync(db, source_with(files), model, cache=cache)
    assert _Counting.tokenised == 2
    sql = "SELECT block_id, text_hash, shape, ids, norms FROM tokens ORDER BY block_id"
    first = db.conn.execute(sql).fetchall()
    fresh = open_index(tmp_path / "other" / "index.db")
    try:
        sync(fresh, source_with(files), model, cache=cache)
        assert _Counting.tokenised == 2  # nothing tokenised again
        assert fresh.conn.execute(sql).fetchall() == first
        # a cached row that does not hold together is a miss, made again
        kind = f"tokens {shape_of(model)}"
        key = first[0][1]
        cache.put_blobs(kind, {key: cache.get_blobs(kind, [key])[key][:-3]})
        fresh.conn.execute("DELETE FROM tokens")
        fresh.conn.execute("DELETE FROM meta WHERE key = 'token_shape'")
        sync(fresh, source_with(files), model, cache=cache)
        assert _Counting.tokenised == 3
        assert fresh.conn.execute(sql).fetchall() == first
    finally:
        fresh.close()
