"""Fusion: RRF, top-normalisation, the weighted-sum alternative and the similarity regimes."""

from __future__ import annotations

import pytest

from elfmem.errors import InvalidInput
from elfmem.retrieval.fusion import (
    RRF_K,
    min_max,
    normalise_top,
    query_similarity,
    rrf,
    score_fusion,
    weighted_sum_fusion,
)


def test_rrf_sums_reciprocal_ranks_with_k_60() -> None:
    got = rrf([["a", "b", "c"], ["b", "c", "d"]], k=60)
    # a = 1/61 = 0.0163934;  b = 1/62 + 1/61 = 0.0161290 + 0.0163934 = 0.0325225
    # c = 1/63 + 1/62 = 0.0158730 + 0.0161290 = 0.0320020;  d = 1/63 = 0.0158730
    assert list(got) == ["b", "c", "a", "d"]  # found by both beats found by one
    expected = {"a": 0.0163934, "b": 0.0325225, "c": 0.0320020, "d": 0.0158730}
    assert got == pytest.approx(expected, abs=1e-7)


def test_rrf_weights_scale_each_ranking() -> None:
    got = rrf([["a", "b", "c"], ["b", "c", "d"]], k=60, weights=[2.0, 1.0])
    # a = 2/61 = 0.0327869;  b = 2/62 + 1/61 = 0.0322581 + 0.0163934 = 0.0486515
    # c = 2/63 + 1/62 = 0.0317460 + 0.0161290 = 0.0478751;  d = 1/63 = 0.0158730
    expected = {"a": 0.0327869, "b": 0.0486515, "c": 0.0478751, "d": 0.0158730}
    assert got == pytest.approx(expected, abs=1e-7)


def test_rrf_counts_a_repeated_id_once_and_closes_the_gap() -> None:
    # distinct order a, b: a = 1/61, b = 1/62 (not 1/63)
    assert rrf([["a", "a", "b"]], k=60) == {"a": 1 / 61, "b": 1 / 62}


def test_rrf_ties_keep_first_seen_order_and_k_zero_is_allowed() -> None:
    assert list(rrf([["x", "y"], ["y", "x"]], k=60)) == ["x", "y"]  # both 1/61 + 1/62
    assert rrf([["a"]], k=0) == {"a": 1.0}


def test_rrf_rejects_bad_parameters() -> None:
    with pytest.raises(InvalidInput):
        rrf([["a"]], weights=[1.0, 1.0])
    with pytest.raises(InvalidInput):
        rrf([["a"]], weights=[-1.0])
    with pytest.raises(InvalidInput):
        rrf([["a"]], k=-1)


def test_normalise_top_makes_the_best_exactly_one() -> None:
    assert normalise_top({"a": 0.032, "b": 0.016}) == {"a": 1.0, "b": 0.5}
    fused = normalise_top(rrf([["p", "q", "r"], ["r", "p"]], k=60))
    assert max(fused.values()) == 1.0  # exact, not approximately
    # p = 1/61 + 1/62 = 0.0325225, r = 1/63 + 1/61 = 0.0322665: r / p = 0.992128
    assert fused["r"] == pytest.approx(0.992128, abs=1e-6)


def test_normalise_top_leaves_empty_and_all_zero_alone() -> None:
    assert normalise_top({}) == {}
    assert normalise_top({"a": 0.0, "b": 0.0}) == {"a": 0.0, "b": 0.0}


def test_min_max_maps_equal_scores_to_one() -> None:
    assert min_max({"a": 2.0, "b": 4.0, "c": 3.0}) == {"a": 0.0, "b": 1.0, "c": 0.5}
    assert min_max({"a": 7.0, "b": 7.0}) == {"a": 1.0, "b": 1.0}


def test_weighted_sum_fusion_on_min_max_scores() -> None:
    lexical = {"a": 10.0, "b": 5.0, "c": 0.0}  # → a 1, b 0.5, c 0
    dense = {"b": 0.9, "d": 0.5}  # → b 1, d 0
    got = weighted_sum_fusion(lexical, dense, alpha=0.5)
    # a = 0.5·1 + 0.5·0 = 0.5;  b = 0.5·0.5 + 0.5·1 = 0.75;  c = 0;  d = 0
    assert got == {"b": 0.75, "a": 0.5, "c": 0.0, "d": 0.0}
    assert list(got) == ["b", "a", "c", "d"]
    assert weighted_sum_fusion(lexical, dense, alpha=1.0)["a"] == 1.0
    with pytest.raises(InvalidInput):
        weighted_sum_fusion(lexical, dense, alpha=1.5)


def test_similarity_is_normalised_rrf_when_bm25_found_something() -> None:
    got = query_similarity(
        ["a", "b", "c", "x"], lexical=["a", "b"], dense={"b": 0.8, "c": 0.6}, k=60
    )
    # a = 1/61; b = 1/62 + 1/61 (top); c = 1/62
    # a / b = 62/123 = 0.504065;  c / b = 61/123 = 0.495935;  x graph-expanded → 0.0 sentinel
    assert got == pytest.approx({"a": 0.504065, "b": 1.0, "c": 0.495935, "x": 0.0}, abs=1e-6)
    assert got["b"] == 1.0


def test_similarity_is_raw_cosine_when_bm25_is_silent() -> None:
    got = query_similarity(["a", "b", "c"], lexical=[], dense={"b": 0.8, "c": 0.6})
    assert got == {"a": 0.0, "b": 0.8, "c": 0.6}


def test_queryless_similarity_is_all_sentinel() -> None:
    assert query_similarity(["a", "b"], lexical=[], dense={}) == {"a": 0.0, "b": 0.0}


def test_similarity_passes_fusion_weights_through() -> None:
    # lexical only (dense weight 0): a = 1/61 top → 1.0; b = 1/62 → 61/62 = 0.983871; c 0
    got = query_similarity(["a", "b", "c"], ["a", "b"], {"c": 0.9}, k=60, weights=[1.0, 0.0])
    assert got == pytest.approx({"a": 1.0, "b": 0.983871, "c": 0.0}, abs=1e-6)


def test_the_default_k_is_10() -> None:
    assert RRF_K == 10
    assert rrf([["a", "b"]]) == {"a": 1 / 11, "b": 1 / 12}


def test_score_fusion_scales_each_list_by_its_own_top() -> None:
    # a: 0.5·10/10 + 0.5·0.4/0.8 = 0.75; b: 0.5·2/10 + 0.5·0.8/0.8 = 0.6; c: dense only 0.5·0.6/0.8
    got = score_fusion({"a": 10.0, "b": 2.0}, {"b": 0.8, "c": 0.6, "a": 0.4}, share=0.5)
    assert list(got) == ["a", "b", "c"]
    assert got == pytest.approx({"a": 1.0, "b": 0.6 / 0.75, "c": 0.375 / 0.75})
    assert got["a"] == 1.0


def test_score_fusion_keeps_the_gap_that_ranks_lose() -> None:
    # the runner-up's bm25 is a fifth of the leader's: RRF puts it near the top, scores do not
    lexical = {"lead": 50.0, "second": 10.0, "third": 9.0}
    by_rank = query_similarity(list(lexical), list(lexical), {}, weights=[1.0, 0.0])
    by_score = query_similarity(list(lexical), list(lexical), {}, lexical_scores=lexical, share=1)
    assert by_rank["second"] > 0.9
    assert by_score == pytest.approx({"lead": 1.0, "second": 0.2, "third": 0.18})


def test_score_fusion_ignores_negative_scores_and_rejects_a_bad_share() -> None:
    got = score_fusion({"a": 4.0}, {"a": 0.5, "b": -0.2}, share=0.5)
    assert got == {"a": 1.0, "b": 0.0}
    assert score_fusion({}, {}, 0.5) == {}
    for share in (-0.1, 1.5, float("nan")):
        with pytest.raises(InvalidInput):
            score_fusion({"a": 1.0}, {}, share)


def test_similarity_without_a_share_stays_rank_fusion() -> None:
    lexical, dense = ["a", "b"], {"b": 0.8, "c": 0.6}
    scores = {"a": 9.0, "b": 1.0}
    assert query_similarity(["a", "b", "c"], lexical, dense, lexical_scores=scores) == (
        query_similarity(["a", "b", "c"], lexical, dense)
    )


def test_rrf_scales_weigh_each_id_of_one_ranking() -> None:
    got = rrf([["a", "b"], ["c", "b"]], k=10, scales=[{"a": 0.25}, None])
    # a = 0.25/11 = 0.0227273; b = 1/12 + 1/12 = 0.1666667; c = 1/11 = 0.0909091
    assert list(got) == ["b", "c", "a"]
    assert got == pytest.approx({"a": 0.0227273, "b": 0.1666667, "c": 0.0909091}, abs=1e-7)
    with pytest.raises(InvalidInput, match="scales"):
        rrf([["a"], ["b"]], scales=[None])


def test_a_thin_lexical_hit_placed_first_by_bm25_no_longer_outranks_the_dense_top() -> None:
    """Rank fusion drops bm25's magnitudes; the lexical scale puts back how much of the question
    a hit holds, so a hit holding a sliver of it counts for a sliver of its rank."""
    plain = query_similarity(["x", "y"], ["x"], {"y": 0.6, "x": 0.1}, k=10, weights=[1.0, 0.7])
    scaled = query_similarity(
        ["x", "y"],
        ["x"],
        {"y": 0.6, "x": 0.1},
        k=10,
        weights=[1.0, 0.7],
        lexical_scale={"x": 0.3**4},
    )
    assert max(plain, key=plain.__getitem__) == "x"
    assert max(scaled, key=scaled.__getitem__) == "y"
