from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from index_support import HashModel, bid, block_text, memory_file, source_with

from elfmem.index import (
    EmbeddingCache,
    FieldWeights,
    IndexDB,
    VectorStore,
    fulltext,
    lexical,
    match_expression,
    open_memory_index,
    sync,
    vector_store,
)
from elfmem.index.fulltext import lexical_soon

NOTES = "notes/knowledge/2026-01.md"
INBOX = "log/knowledge/2026-01.md"


@pytest.fixture
def indexed(db: IndexDB, cache: EmbeddingCache) -> IndexDB:
    notes = memory_file(
        block_text(
            bid(1),
            "pgbouncer is required above 100 concurrent Postgres clients",
            cue="choosing a connection pooling strategy",
        ),
        block_text(bid(2), "Use a pool of workers for CPU-bound jobs", tags=("perf/cpu",)),
        block_text(bid(3), "Café menus list crème brûlée", cue="dessert"),
        block_text(bid(4), "The deploy script lives in ops/deploy.sh", tags=("ops/deploy",)),
    )
    inbox = memory_file(block_text(bid(5), "an unreviewed pgbouncer capture"))
    sync(db, source_with({NOTES: notes, INBOX: inbox}), HashModel(), cache=cache)
    return db


def found(db: IndexDB, query: str, **kwargs: object) -> list[str]:
    return [i for i, _ in lexical(db, query, 10, **kwargs)]  # type: ignore[arg-type]


def test_match_expression_quotes_words_and_drops_syntax() -> None:
    assert match_expression('What is "pooling" AND (pgbouncer*)?') == '"pooling" OR "pgbouncer"'
    assert match_expression("the and of") == ""
    assert match_expression("x - 7 y:z") == '"7"'
    assert match_expression("pg'bouncer's PG") == '"pg" OR "bouncer"'


def test_cue_words_find_a_block_whose_content_lacks_them(indexed: IndexDB) -> None:
    assert found(indexed, "connection strategy") == [bid(1)]


def test_stemming_matches_word_forms(indexed: IndexDB) -> None:
    assert set(found(indexed, "pooling")) == {bid(1), bid(2)}
    assert found(indexed, "workers") == [bid(2)]


def test_diacritics_are_folded(indexed: IndexDB) -> None:
    assert found(indexed, "creme brulee cafe") == [bid(3)]


def test_tags_are_searchable(indexed: IndexDB) -> None:
    assert found(indexed, "cpu") == [bid(2)]


def test_lexical_on_the_side_connection_sees_what_the_main_one_committed(
    indexed: IndexDB, cache: EmbeddingCache
) -> None:
    side = indexed.side_reader()
    assert side is not None and side is not indexed.conn and side is indexed.side_reader()
    query = "pgbouncer pooling workers deploy"
    assert lexical_soon(indexed, query, 10)() == lexical(indexed, query, 10)
    extra = memory_file(block_text(bid(9), "pgbouncer pgbouncer pgbouncer pooling"))
    sync(indexed, source_with({"notes/knowledge/2026-02.md": extra}), HashModel(), cache=cache)
    assert lexical_soon(indexed, "pgbouncer", 10)()[0][0] == bid(9)
    with pytest.raises(sqlite3.OperationalError):  # read-only: it can never write the index
        side.execute("DELETE FROM meta")


SPLIT_WORDS = "pool shard queue worker deploy rollback latency index".split()


@pytest.fixture
def many_ties(db: IndexDB, cache: EmbeddingCache) -> IndexDB:
    """80 blocks over eight words, so that many rows tie on bm25 across both halves; ids in no
    order of their rows, so that the id tie-break is tested too."""
    rng = random.Random(3)
    numbers = list(range(1, 81))
    rng.shuffle(numbers)
    blocks = [
        block_text(
            bid(n),
            " ".join(rng.choice(SPLIT_WORDS) for _ in range(6)),
            cue=" ".join(rng.sample(SPLIT_WORDS, 2)),
        )
        for n in numbers
    ]
    sync(db, source_with({NOTES: memory_file(*blocks)}), HashModel(), cache=cache)
    return db


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(st.sampled_from(SPLIT_WORDS), min_size=1, max_size=4),
    limit=st.integers(min_value=1, max_value=90),
)
def test_a_search_split_in_halves_returns_exactly_what_one_search_does(
    many_ties: IndexDB, monkeypatch: pytest.MonkeyPatch, words: list[str], limit: int
) -> None:
    monkeypatch.setattr(fulltext, "SPLIT_ROWS", 2)
    assert fulltext._halves(many_ties) is not None
    query = " ".join(words)
    assert lexical_soon(many_ties, query, limit)() == lexical(many_ties, query, limit)


def test_lexical_soon_on_an_in_memory_index_runs_in_place(cache: EmbeddingCache) -> None:
    db = open_memory_index()
    notes = memory_file(block_text(bid(1), "pgbouncer above 100 clients"))
    sync(db, source_with({NOTES: notes}), HashModel(), cache=cache)
    assert db.side_reader() is None
    assert [i for i, _ in lexical_soon(db, "pgbouncer", 5)()] == [bid(1)]
    db.close()


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote pgbouncer',
        "pgbouncer AND OR NOT",
        "pgbouncer*",
        "-pgbouncer",
        "content:pgbouncer",
        "(pgbouncer",
        "pgbouncer) NEAR(",
        "^pgbouncer + {x} [y]",
        "pgbouncer's; DROP TABLE blocks; --",
    ],
)
def test_fts_syntax_in_queries_is_just_text(indexed: IndexDB, query: str) -> None:
    assert found(indexed, query) == [bid(1)]


def test_empty_or_stopword_queries_return_nothing(indexed: IndexDB) -> None:
    assert lexical(indexed, "", 10) == []
    assert lexical(indexed, "  what is the  ", 10) == []
    assert lexical(indexed, "***", 10) == []


def test_status_filter_defaults_to_active(indexed: IndexDB) -> None:
    assert found(indexed, "pgbouncer") == [bid(1)]
    assert set(found(indexed, "pgbouncer", statuses=None)) == {bid(1), bid(5)}
    assert found(indexed, "pgbouncer", statuses=("inbox",)) == [bid(5)]


def test_scores_are_positive_and_best_first(indexed: IndexDB) -> None:
    results = lexical(indexed, "pool pgbouncer postgres", 10)
    assert results[0][0] == bid(1)
    scores = [s for _, s in results]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_field_weights_change_the_ranking(db: IndexDB, cache: EmbeddingCache) -> None:
    data = memory_file(
        block_text(bid(1), "ferries cross the bay", cue="nothing here"),
        block_text(bid(2), "nothing here either", cue="ferries"),
    )
    sync(db, source_with({NOTES: data}), HashModel(), cache=cache)
    by_cue = lexical(db, "ferries", 2, weights=FieldWeights(content=0.1, cue=10.0))
    by_content = lexical(db, "ferries", 2, weights=FieldWeights(content=10.0, cue=0.1))
    assert [i for i, _ in by_cue] == [bid(2), bid(1)]
    assert [i for i, _ in by_content] == [bid(1), bid(2)]


def test_by_default_a_word_in_the_cue_outweighs_the_same_word_in_the_content(
    db: IndexDB, cache: EmbeddingCache
) -> None:
    # mirror images: each column holds the same texts, so equal weights tie them exactly
    data = memory_file(
        block_text(bid(1), "ferries to the islands", cue="harbour timetable"),
        block_text(bid(2), "harbour timetable", cue="ferries to the islands"),
    )
    sync(db, source_with({NOTES: data}), HashModel(), cache=cache)
    default = lexical(db, "ferries", 2)
    even = lexical(db, "ferries", 2, weights=FieldWeights(cue=1.0))
    assert [i for i, _ in default] == [bid(2), bid(1)]
    assert default[0][1] > default[1][1]
    assert even[0][1] == pytest.approx(even[1][1])


def test_dense_returns_the_nearest_first(indexed: IndexDB) -> None:
    store = VectorStore().load(indexed)
    query = HashModel().embed(["Use a pool of workers for CPU-bound jobs"])[0]
    results = store.dense(query, 2)
    assert results[0][0] == bid(2)
    assert results[0][1] == pytest.approx(1.0, abs=1e-5)
    assert results[1][1] < results[0][1]


def test_dense_respects_allowed_ids_and_statuses(indexed: IndexDB) -> None:
    store = VectorStore().load(indexed)
    query = HashModel().embed(["pgbouncer capture"])[0]
    assert store.dense(query, 1)[0][0] == bid(5)
    assert store.dense(query, 1, statuses=("active",))[0][0] == bid(1)
    limited = store.dense(query, 5, allowed={bid(3), bid(4)})
    assert sorted(i for i, _ in limited) == [bid(3), bid(4)]
    assert store.dense(query, 5, allowed=set()) == []
    assert set(store.vectors_for([bid(1), "unknown"])) == {bid(1)}


def test_vector_store_reloads_only_when_the_index_changes(
    indexed: IndexDB, cache: EmbeddingCache
) -> None:
    store = vector_store(indexed)
    assert vector_store(indexed) is store
    matrix = store.matrix
    assert vector_store(indexed).matrix is matrix
    source = source_with({NOTES: memory_file(block_text(bid(9), "only one block now"))})
    sync(indexed, source, HashModel(), cache=cache)
    reloaded = vector_store(indexed)
    assert reloaded.ids == [bid(9)]
    assert np.allclose(np.linalg.norm(reloaded.matrix, axis=1), 1.0)
