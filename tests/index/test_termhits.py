"""Per-word bm25 parts (``index/termhits.py``) and the smoothed IDF that score fusion weighs them
with (``retrieval/fusechoice.py``): FTS5 gives a word held by more than half of the blocks no
weight, and among long documents that is most of a question's words."""

from __future__ import annotations

import math
import multiprocessing
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from index_support import HashModel, bid, block_text, memory_file, source_with

from elfmem.errors import InvalidInput
from elfmem.index import EmbeddingCache, FieldWeights, IndexDB, lexical, sync, termhits
from elfmem.index.db import open_memory_index
from elfmem.index.termhits import FTS_IDF_FLOOR, TermHits, fts_idf, query_terms, term_hits
from elfmem.retrieval.fusechoice import similarity, smooth_idf, smoothed_lexical

NOTES = "notes/knowledge/2026-01.md"
TEXTS = [
    "The kids love the dinosaur exhibit and the kids want to go back to the museum",
    "We took the kids to the beach and the kids built a castle",
    "The kids painted pots at the pottery class, then the kids took their pots home to dry",
    "The harbour ferry runs late in winter, and the tide tables change",
    "Pottery class meets on Tuesdays",
]


@pytest.fixture
def indexed(db: IndexDB, cache: EmbeddingCache) -> IndexDB:
    blocks = [block_text(bid(n), text, cue="a note") for n, text in enumerate(TEXTS)]
    sync(db, source_with({NOTES: memory_file(*blocks)}), HashModel(), cache=cache)
    return db


def test_the_parts_of_a_block_sum_to_its_bm25(indexed: IndexDB) -> None:
    query = "kids dinosaur pottery museum"
    weights = FieldWeights(content=1.0, cue=2.0, tags=0.5)
    scores = dict(lexical(indexed, query, 10, weights=weights))
    hits = term_hits(indexed, query, sorted(scores), weights)
    assert hits.rows == len(TEXTS)
    assert hits.holding == {"kids": 3, "dinosaur": 1, "pottery": 2, "museum": 1}
    for block_id, score in scores.items():
        summed = sum(parts.get(block_id, 0.0) for parts in hits.parts.values())
        assert summed == pytest.approx(score, rel=1e-9)
    # only the asked-for blocks get parts; the row counts are the whole index's
    one = term_hits(indexed, query, [bid(3)], weights)
    assert one.holding == hits.holding and all(not p for p in one.parts.values())


def test_a_word_in_most_blocks_counts_again(indexed: IndexDB) -> None:
    # "kids" is in 3 of 5 blocks: FTS5's IDF for it is floored to 1e-6, so by bm25 alone the
    # pottery class block (one rare word) beats the block that is all about the kids and pottery
    query = "kids pottery"
    fts = [i for i, _ in lexical(indexed, query, 10)]
    assert fts[0] == bid(4)
    smoothed = list(smoothed_lexical(term_hits(indexed, query, fts)))
    assert smoothed[0] == bid(2)
    assert set(smoothed) == set(fts)


def test_similarity_takes_the_idf_it_is_told(indexed: IndexDB) -> None:
    query = "kids pottery"
    hits = dict(lexical(indexed, query, 10))
    args = (indexed, "score", list(hits), hits, {}, (10.0, (1.0, 0.7)), 1.0)
    smooth = similarity(*args, query=query)
    fts = similarity(*args, query=query, idf="fts")
    assert max(smooth, key=lambda i: smooth[i]) == bid(2)
    assert max(fts, key=lambda i: fts[i]) == bid(4)
    # rank fusion is left exactly as it was
    rrf = (indexed, "rrf", list(hits), hits, {}, (10.0, (1.0, 0.7)), 1.0)
    assert similarity(*rrf, query=query) == similarity(*rrf, query=query, idf="fts")
    with pytest.raises(InvalidInput, match="unknown IDF"):
        similarity(*args, query=query, idf="lucene")


def test_query_terms_are_the_words_lexical_searches_for() -> None:
    assert query_terms('What do "Melanie\'s" kids like?') == ["melanie", "kids", "like"]
    assert query_terms("the and of") == []


def test_fts_idf_is_floored_past_half_and_smooth_idf_never_is() -> None:
    assert fts_idf(3, 5) == FTS_IDF_FLOOR
    assert fts_idf(1, 5) == pytest.approx(math.log(4.5 / 1.5))
    values = [smooth_idf(n, 100) for n in range(1, 101)]
    assert all(v > 0 for v in values)
    assert values == sorted(values, reverse=True)


@st.composite
def term_hit_sets(draw: st.DrawFn) -> TermHits:
    rows = draw(st.integers(min_value=1, max_value=200))
    blocks = [bid(n) for n in range(min(rows, 12))]
    hits = TermHits(rows)
    for t in range(draw(st.integers(min_value=1, max_value=5))):
        holders = draw(st.lists(st.sampled_from(blocks), unique=True, max_size=len(blocks)))
        n = draw(st.integers(min_value=max(1, len(holders)), max_value=rows))
        hits.holding[f"w{t}"] = n
        idf = fts_idf(n, rows)
        hits.parts[f"w{t}"] = {
            b: idf * draw(st.floats(min_value=0.05, max_value=3.0)) for b in holders
        }
    return hits


@settings(max_examples=300, deadline=None)
@given(term_hit_sets())
def test_no_lexical_hit_is_lost_and_only_word_weights_change(hits: TermHits) -> None:
    scores = smoothed_lexical(hits)
    holders = {b for parts in hits.parts.values() for b in parts}
    # every block that holds a query word keeps a positive lexical score: the rule re-weighs
    # words, it never drops a block from the lexical hits (nor adds one that holds none)
    assert set(scores) == holders
    assert all(s > 0 for s in scores.values())
    # a block's score is its FTS5 parts, each scaled by its word's IDF ratio: nothing else moves
    for block_id, score in scores.items():
        expected = sum(
            parts[block_id]
            / fts_idf(hits.holding[t], hits.rows)
            * smooth_idf(hits.holding[t], hits.rows)
            for t, parts in hits.parts.items()
            if block_id in parts
        )
        assert score == pytest.approx(expected, rel=1e-9)
    assert list(scores.values()) == sorted(scores.values(), reverse=True)


# Words that FTS5's tokenizer folds together or splits: stems ("run", "running", "runs"), case
# and accents ("Café", "cafe"), a word that is two tokens ("pool_size"), and numbers.
_VOCAB = "run running runs Café cafe pool_size pool size deploy deploys 42 v2 kids the".split()


def _bm25_by_fts5(db: IndexDB, term: str, ids: list[str], w: FieldWeights) -> dict[str, float]:
    """The part the slow way: FTS5's own bm25() for the one phrase."""
    sql = (
        "SELECT b.id, bm25(fts, ?, ?, ?) FROM fts JOIN blocks b ON b.num = fts.rowid"
        f" WHERE fts MATCH ? AND b.id IN ({','.join('?' * len(ids))})"
    )
    rows = db.conn.execute(sql, [w.content, w.cue, w.tags, f'"{term}"', *ids])
    return {block_id: -score for block_id, score in rows}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=12),
            st.lists(st.sampled_from(_VOCAB), max_size=4),
            st.lists(st.sampled_from(["ops", "run", "pool_size"]), max_size=2, unique=True),
        ),
        min_size=1,
        max_size=9,
    ),
    st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=5),
    st.tuples(*[st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5])] * 3),
    st.data(),
)
def test_parts_equal_fts5s_own_bm25(
    texts: list[tuple[list[str], list[str], list[str]]],
    words: list[str],
    weights: tuple[float, float, float],
    data: st.DataObject,
) -> None:
    blocks = [
        block_text(bid(n), " ".join(content), cue=" ".join(cue), tags=tags)
        for n, (content, cue, tags) in enumerate(texts)
    ]
    db = open_memory_index()
    try:
        sync(db, source_with({NOTES: memory_file(*blocks)}), HashModel())
        w = FieldWeights(*weights)
        ids = data.draw(st.lists(st.sampled_from([bid(n) for n in range(len(texts))]), min_size=1))
        query = " ".join(words)
        hits = term_hits(db, query, ids, w)
        assert list(hits.parts) == query_terms(query)
        for term, parts in hits.parts.items():
            expected = _bm25_by_fts5(db, term, sorted(set(ids)), w)
            assert parts.keys() == expected.keys()
            for block_id, part in parts.items():
                assert part == pytest.approx(expected[block_id], rel=1e-12, abs=1e-15)
    finally:
        db.close()


def test_a_block_edited_after_it_was_tokenized_is_scored_by_its_new_text(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    # tokenized blocks are kept between calls: the edit must not be scored by the old tokens
    old = block_text(bid(0), "The ferry leaves the harbour at noon", cue="ferry times")
    other = block_text(bid(1), "Ferry tickets are sold on board", cue="ferry tickets")
    sync(db, source_with({NOTES: memory_file(old, other)}), HashModel(), cache=cache)
    query = "ferry noon dusk"
    before = term_hits(db, query, [bid(0), bid(1)])
    assert bid(0) in before.parts["noon"] and bid(0) not in before.parts["dusk"]
    new = block_text(bid(0), "The ferry leaves the harbour at dusk", cue="ferry times")
    sync(db, source_with({NOTES: memory_file(new, other)}), HashModel(), cache=cache)
    after = term_hits(db, query, [bid(0), bid(1)])
    assert bid(0) not in after.parts["noon"] and bid(0) in after.parts["dusk"]
    for term, parts in after.parts.items():
        assert parts == pytest.approx(_bm25_by_fts5(db, term, [bid(0), bid(1)], FieldWeights()))


def test_a_small_store_of_tokenized_blocks_gives_the_same_parts(
    indexed: IndexDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the store holds at most a few tokens here, so nearly every block is tokenized anew
    query = "kids pottery museum tide"
    ids = [bid(n) for n in range(len(TEXTS))]
    kept = term_hits(indexed, query, ids)
    small = termhits._DocStore(limit=8)
    monkeypatch.setattr(termhits, "_stores", {os.getpid(): small})
    for _ in range(2):
        assert term_hits(indexed, query, ids) == kept
    assert small.tokens <= 8 or len(small.docs) == 1


def _store_is_free() -> bool:
    return termhits._store().lock.acquire(timeout=2)


def test_a_forked_child_tokenizes_into_a_store_of_its_own() -> None:
    # a thread of the parent may hold the store's lock when another forks: the child must not wait
    parent = termhits._store()
    with parent.lock, multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_store_is_free)
    assert termhits._store() is parent
