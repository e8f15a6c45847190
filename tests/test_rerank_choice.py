"""bench/rerank_choice.py: the re-ranking blend and its leave-one-conversation-out choice."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import rerank_choice as rc  # noqa: E402


def test_weight_zero_keeps_the_product_order() -> None:
    assert rc.rerank(["a", "b", "c"], [0.1, 0.9, 0.5], 3, 0.0) == [0, 1, 2]


def test_transformer_order_wins_when_it_has_all_the_weight() -> None:
    assert rc.rerank(["a", "b", "c", "d"], [0.1, 0.9, 0.5, 0.99], 3, 1.0) == [1, 2, 0, 3]


def test_only_the_top_n_move_and_a_blend_lifts_a_strong_second() -> None:
    order = rc.rerank(list("abcde"), [0.0, 0.9, 0.1, 0.2, 0.99], 3, 0.5)
    assert order[:3] == [1, 0, 2]  # b: fused 2nd, transformer 1st of the top 3
    assert order[3:] == [3, 4]  # e has the best cosine but was not among the top 3


def test_held_out_scores_each_conversation_with_the_setting_best_on_the_others() -> None:
    def rows(scores: dict[str, float]) -> list[dict[str, object]]:
        return [{"conv": c, "R@10": v, "NDCG@10": v} for c, v in scores.items()]

    settings = {
        "product": rows({"x": 0.5, "y": 0.5, "z": 0.5}),
        "N20 a0.5": rows({"x": 0.9, "y": 0.1, "z": 0.1}),
    }
    held, picks = rc.held_out(settings, "R@10", "NDCG@10")
    # x: on y and z the product is better; y and z: x lifts the re-rank's mean to 0.5, a tie
    # that goes to the product.
    assert [r["R@10"] for r in held] == [0.5, 0.5, 0.5]
    assert picks == ["x: product", "y: product", "z: product"]
    settings["N20 a0.5"] = rows({"x": 0.9, "y": 0.9, "z": 0.3})
    held, picks = rc.held_out(settings, "R@10", "NDCG@10")
    assert picks == ["x: N20 a0.5", "y: N20 a0.5", "z: N20 a0.5"]
    assert [r["R@10"] for r in held] == [0.9, 0.9, 0.3]
