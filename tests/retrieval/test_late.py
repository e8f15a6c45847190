"""Late interaction with the static model's token vectors (``retrieval.late``).

The scorer is checked against the definition written out by hand (each query token's best cosine
against mean-pooled windows of a block's tokens, averaged), with the shipped model; score fusion
is checked to only reorder: every block a search returned keeps a positive similarity.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.adapters.mock import MockEmbedder
from elfmem.adapters.static import StaticEmbedder
from elfmem.errors import InvalidInput
from elfmem.index.tokenrows import window_norms
from elfmem.retrieval.fusion import score_fusion
from elfmem.retrieval.late import STRIDE, WINDOW, LateScorer, late_fn, remembered

MODEL = StaticEmbedder()
TEXTS = {
    "zoo": "Melanie: The kids were stoked for the dinosaur exhibit at the museum!\n"
    "Caroline: That sounds like a fun day out.",
    "paint": "Caroline: I painted a sunset over the lake last weekend.\n"
    "Melanie: The colours must have been lovely.",
    "tiny": "Fossils",
    "empty": "",
}


def _by_hand(query_ids: list[int], text: str) -> float:
    table = MODEL.token_table()
    _, ids = MODEL.tokens(text)
    starts = range(0, max(1, len(ids) - WINDOW + 1), STRIDE)
    windows = np.array([table[ids[s : s + WINDOW]].mean(axis=0) for s in starts])
    windows /= np.linalg.norm(windows, axis=1, keepdims=True)
    q = table[query_ids] / np.linalg.norm(table[query_ids], axis=1, keepdims=True)
    return float((q @ windows.T).max(axis=1).mean())


def _scores(scorer: LateScorer, query: str, texts: dict[str, str]) -> dict[str, float]:
    q_ids = scorer.query_ids(query)
    if not len(q_ids):
        return {}
    windows = scorer.from_texts(list(texts.values()))
    return scorer.score_windows(q_ids, dict(zip(texts, windows, strict=True)))


def test_scores_are_the_mean_of_each_query_tokens_best_window() -> None:
    scorer = LateScorer(MODEL)
    query = "What did the kids think of the dinosaur fossils?"
    q_ids = scorer.query_ids(query).tolist()
    # stop words ("what", "did", "the", "of") and the question mark are left out
    content = ("kids", "think", "dinosaur", "fossils")
    assert q_ids == [i for w in content for i in MODEL.tokens(w)[1].tolist()]
    got = _scores(scorer, query, TEXTS)
    assert set(got) == set(TEXTS)
    for block_id in ("zoo", "paint", "tiny"):  # "tiny" is shorter than one window
        assert got[block_id] == pytest.approx(_by_hand(q_ids, TEXTS[block_id]), abs=1e-5)
    assert got["empty"] == 0.0
    assert got["zoo"] > got["paint"]  # the block that holds the words


def _windows_by_hand(query_ids: list[int], ids: list[int]) -> float:
    table = MODEL.token_table()
    if not ids:
        return 0.0
    starts = range(0, max(1, len(ids) - WINDOW + 1), STRIDE)
    windows = np.array([table[ids[s : s + WINDOW]].sum(axis=0) for s in starts])
    windows /= np.linalg.norm(windows, axis=1, keepdims=True)
    q = table[query_ids] / np.linalg.norm(table[query_ids], axis=1, keepdims=True)
    return float((q @ windows.T).max(axis=1).mean())


@settings(max_examples=150, deadline=None)
@given(
    blocks=st.lists(st.lists(st.integers(1000, 1400), max_size=14), min_size=1, max_size=6),
    query=st.lists(st.integers(1000, 1400), min_size=1, max_size=4, unique=True),
)
def test_blocks_laid_end_to_end_score_as_each_one_alone(
    blocks: list[list[int]], query: list[int]
) -> None:
    """The scorer lays every candidate's tokens end to end and scores the windows of the whole;
    no window may take a token of the next block, and a block shorter than a window (or empty)
    still scores its one window (or 0). Hunts lengths odd and even, under and over a window."""
    scorer = LateScorer(MODEL)
    table = MODEL.token_table()
    found = {}
    for n, ids in enumerate(blocks):
        arr = np.array(ids, dtype=np.int64)
        found[f"b{n}"] = (arr, window_norms(arr, table))
    got = scorer.score_windows(np.array(query, dtype=np.int64), found)
    assert list(got) == list(found)
    for n, ids in enumerate(blocks):
        assert got[f"b{n}"] == pytest.approx(_windows_by_hand(query, ids), abs=1e-5)


def test_a_query_of_stop_words_scores_nothing() -> None:
    assert _scores(LateScorer(MODEL), "What did they do?", TEXTS) == {}
    assert _scores(LateScorer(MODEL), "dinosaur", {}) == {}


def test_only_a_model_with_tokens_scores_late() -> None:
    assert late_fn(MockEmbedder()) is None
    assert late_fn(MODEL) is not None


def test_remembered_asks_once_per_block_and_query() -> None:
    asked: list[list[str]] = []

    def late(db: object, query: str, ids: Sequence[str]) -> dict[str, float]:
        asked.append(sorted(ids))
        return {b: float(len(b)) for b in ids}

    kept = remembered(late)  # type: ignore[arg-type]
    assert kept(None, "q", ["aa", "b"]) == {"aa": 2.0, "b": 1.0}  # type: ignore[arg-type]
    assert kept(None, "q", ["b", "ccc"]) == {"b": 1.0, "ccc": 3.0}  # type: ignore[arg-type]
    assert asked == [["aa", "b"], ["ccc"]]


def test_late_share_moves_weight_from_the_cosine_only() -> None:
    lexical = {"a": 10.0, "b": 5.0}
    dense = {"b": 0.8, "c": 0.6}
    late = {"a": 0.5, "b": 0.7, "c": 0.9}
    got = score_fusion(lexical, dense, share=0.2, late=late, late_share=0.1)
    # a: 0.2·1 + 0.7·0 + 0.1·0 = 0.2;  b: 0.2·0.5 + 0.7·1 + 0.1·0.5 = 0.85;  c: 0.7·0.75 + 0.1·1
    assert got == pytest.approx({"b": 1.0, "c": 0.625 / 0.85, "a": 0.2 / 0.85})
    assert score_fusion(lexical, dense, 0.2, late, 0.0) == score_fusion(lexical, dense, 0.2)
    # no late score for any fused block: the cosine keeps its whole share
    assert score_fusion(lexical, dense, 0.2, {"x": 1.0}, 0.1) == score_fusion(lexical, dense, 0.2)
    with pytest.raises(InvalidInput, match="late share"):
        score_fusion(lexical, dense, 0.5, late, 0.6)
    # no late scores (another embedder): any lexical share stands, the cosine gets the rest
    assert score_fusion(lexical, dense, 1.0, None, 0.1) == score_fusion(lexical, dense, 1.0)


SCORES = st.dictionaries(
    st.sampled_from("abcdefgh"), st.floats(0.001, 50.0, allow_nan=False), max_size=8
)


@settings(max_examples=300, deadline=None)
@given(
    lexical=SCORES,
    dense=st.dictionaries(st.sampled_from("cdefghij"), st.floats(0.001, 1.0), max_size=8),
    late=st.dictionaries(st.sampled_from("abcdefghij"), st.floats(-1.0, 1.0), max_size=10),
    share=st.sampled_from([0.0, 0.2, 0.3, 0.5]),
    late_share=st.sampled_from([0.05, 0.1, 0.3]),
)
def test_late_interaction_never_drops_a_block_a_search_returned(
    lexical: dict[str, float],
    dense: dict[str, float],
    late: dict[str, float],
    share: float,
    late_share: float,
) -> None:
    """A block the lexical or dense search returned bears on the query whatever its late score:
    it keeps a positive similarity (the relevance gate drops only 0), and nothing else joins."""
    got = score_fusion(lexical, dense, share, late, late_share)
    assert set(got) == set(lexical) | set(dense)
    for block_id in got:
        lex_part = share > 0 and block_id in lexical
        dense_part = block_id in dense
        if lex_part or dense_part:
            assert got[block_id] > 0, block_id
    if any(v > 0 for v in got.values()):
        assert max(got.values()) == pytest.approx(1.0)
