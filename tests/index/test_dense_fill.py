"""Score fusion gives a lexical hit that the dense search did not return its own cosine
(``fusechoice.filled_dense``), not 0: with 0 such a block lost the whole dense share and fell
below every dense seed, however well bm25 ranked it (long documents)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from index_support import HashModel, bid, block_text, memory_file, source_with

from elfmem.index import EmbeddingCache, IndexDB, lexical, sync, vector_store
from elfmem.retrieval.fusechoice import filled_dense, similarity
from elfmem.retrieval.fusion import score_fusion

BUCKET = "notes/knowledge/2026-01.md"


def _long(words: str, filler: str) -> str:
    """A block past the passage cut: ``words`` once, then many lines of ``filler``."""
    return "\n".join([words, *(f"{filler} line {k} about the {filler}." for k in range(40))])


TEXTS = {
    1: _long("the orchard walnut harvest", "harbour"),
    2: _long("walnut", "orchard"),
    3: _long("nothing to see", "violin"),
}


@pytest.fixture
def indexed(db: IndexDB, cache: EmbeddingCache) -> IndexDB:
    blocks = [block_text(bid(n), text, cue="a note") for n, text in TEXTS.items()]
    sync(db, source_with({BUCKET: memory_file(*blocks)}), HashModel(), cache=cache)
    return db


def test_scores_for_are_the_scores_dense_search_gives(indexed: IndexDB) -> None:
    vec = HashModel().embed(["walnut harvest"])[0]
    store = vector_store(indexed)
    searched = dict(store.dense(vec, 10))
    asked = store.scores_for(vec, [bid(1), bid(3), "no-such-block"])
    assert set(asked) == {bid(1), bid(3)}
    for block_id, score in asked.items():
        assert score == pytest.approx(searched[block_id], abs=1e-6)


def test_a_lexical_hit_outside_the_dense_seeds_keeps_its_cosine(indexed: IndexDB) -> None:
    query = "walnut harvest"
    vec = HashModel().embed([query])[0]
    store = vector_store(indexed)
    hits = dict(lexical(indexed, query, 10))
    assert set(hits) == {bid(1), bid(2)}
    # the dense search kept only its best seed (as when a block falls past the seeds or floor)
    best = store.dense(vec, 1)
    dense = dict(best)
    left_out = next(b for b in hits if b not in dense)
    args = (indexed, "score", sorted({*hits, *dense}), hits, dense, (10.0, (1.0, 0.7)), 0.3)
    without = similarity(*args, query=query)
    filled = similarity(*args, query=query, cosines=lambda ids: store.scores_for(vec, ids))
    assert store.scores_for(vec, [left_out])[left_out] > 0
    assert filled[left_out] > without[left_out]
    # the dense seed is scored exactly as before (its own share did not move)
    seed = best[0][0]
    assert filled[seed] == pytest.approx(without[seed]) or filled[left_out] == 1.0
    # rank fusion never looks at cosines
    rrf = (indexed, "rrf", *args[2:])
    assert similarity(*rrf, query=query) == similarity(*rrf, query=query, cosines=lambda ids: {})


def test_filled_dense_only_adds_and_caps_at_the_top() -> None:
    dense = {"a": 0.8, "b": 0.5}
    out = filled_dense(dense, ["c", "a", "d", "e"], lambda ids: {"a": 0.1, "c": 0.6, "d": 0.95})
    assert out == {"a": 0.8, "d": 0.8, "c": 0.6, "b": 0.5}
    assert list(out) == ["a", "d", "c", "b"]  # best first, ties by id
    # no vector hit bore on the query: the fill does not make one up
    assert filled_dense({}, ["x"], lambda ids: {"x": 0.4}) == {}
    assert filled_dense(dense, ["a", "b"], lambda ids: pytest.fail("nothing to ask")) == dense


ids = st.sampled_from([f"b{n}" for n in range(12)])
scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(
    lexical=st.dictionaries(ids, st.floats(min_value=0.01, max_value=30.0), min_size=1),
    dense=st.dictionaries(ids, scores),
    cosines=st.dictionaries(ids, scores),
    share=st.floats(min_value=0.0, max_value=1.0),
    k=st.integers(min_value=1, max_value=6),
)
def test_only_a_filled_block_can_push_another_out_of_the_top(
    lexical: dict[str, float],
    dense: dict[str, float],
    cosines: dict[str, float],
    share: float,
    k: int,
) -> None:
    """Hunting the blocks the fill pushes out of the top k: each is overtaken by a block that was
    filled, and no block that was not filled overtakes one it was strictly below."""
    filled = filled_dense(dense, list(lexical), lambda asked: cosines)
    added = set(filled) - set(dense)
    before = score_fusion(lexical, dense, share)
    after = score_fusion(lexical, filled, share)
    kept = [b for b in before if b not in added]
    for x in kept:
        for y in kept:
            if before[x] > before[y] + 1e-9:
                assert after[x] >= after[y] - 1e-9, (x, y)
    for b in added:  # a filled block never falls below a block it was level with or above
        assert {o for o in kept if after[o] > after[b] + 1e-9} <= {
            o for o in kept if before[o] > before[b] - 1e-9
        }
    # what enters the top k is a filled block, or a block level with the one it displaced
    kth = sorted(before.values(), reverse=True)[:k][-1]
    entered = set(sorted(after, key=lambda b: -after[b])[:k]) - added
    assert all(before[b] >= kth - 1e-9 for b in entered)


def test_the_fill_leaves_a_memory_without_lexical_hits_alone() -> None:
    dense = {"a": 0.7}
    assert filled_dense(dense, [], lambda ids: {"b": 0.9}) == dense
    assert np.isclose(score_fusion({}, dense, 0.3)["a"], 1.0)
