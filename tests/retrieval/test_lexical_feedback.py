"""Lexical feedback's parts: words chosen from the top blocks, scored over the candidates only."""

from __future__ import annotations

import pytest

from elfmem.errors import InvalidInput
from elfmem.retrieval import fusion
from elfmem.retrieval.lexical_feedback import feedback_words, fused, ranking, stem, tokens

POOL_TEXTS = {
    "top": "Caroline: I'm researching adoption agencies, I want to give a child a home.",
    "agency": "Melanie: Which adoption agency did you call about the child?",
    "home": "Caroline: The agency said a home visit comes first.",
    "swim": "Melanie: I'm off to go swimming with the kids, talk soon!",
    "run": "Melanie: I've been running farther to de-stress, it clears my head.",
    "paint": "Melanie: I painted a sunset over the lake.",
    "camp": "Melanie: We camped at the beach last summer.",
    "violin": "Melanie: Playing the violin in the evening keeps me calm.",
}


def _pool() -> dict[str, list[str]]:
    return {b: tokens(t) for b, t in POOL_TEXTS.items()}


def test_tokens_drop_stop_words_and_meet_plurals() -> None:
    assert tokens("The agencies and an Agency, 2 bowls!") == ("agency", "agency", "2", "bowl")
    assert stem("class") == "class" and stem("bus") == "bus" and stem("cats") == "cat"


def test_words_of_the_top_block_that_the_question_lacks_and_other_candidates_hold() -> None:
    words = feedback_words(["top"], "What did Caroline research?", _pool(), 5)
    assert {"adoption", "agency", "child", "home"} <= set(words)
    assert "caroline" not in words  # the question holds it
    assert "researching" not in words  # no other candidate holds it: it reorders nothing
    assert set(words) <= set(tokens(POOL_TEXTS["top"]))


def test_a_word_half_the_candidates_hold_has_no_weight() -> None:
    pool = _pool()
    assert "melanie" not in feedback_words(["swim"], "swimming", pool, 5)  # in 6 of 8


def test_ranking_scores_only_the_candidates_given() -> None:
    order = ranking(_pool(), ["adoption", "agency"])
    assert order[0] in {"top", "agency"}
    assert set(order) == {"top", "agency", "home"}
    assert ranking(_pool(), []) == [] and ranking({}, ["adoption"]) == []


def test_fusion_without_the_third_list_is_the_two_list_rrf() -> None:
    lexical, dense = ["a", "b"], {"c": 0.9, "a": 0.8}
    plain = fusion.query_similarity(["a", "b", "c", "d"], lexical, dense, 10, [1.0, 0.7])
    assert fused(["a", "b", "c", "d"], lexical, dense, [], (10, (1.0, 0.7)), 0.4) == plain
    moved = fused(["a", "b", "c", "d"], lexical, dense, ["b"], (10, (1.0, 0.7)), 0.4)
    assert moved["b"] > plain["b"] and moved["d"] == 0.0 and max(moved.values()) == 1.0


def test_a_negative_word_count_is_refused() -> None:
    with pytest.raises(InvalidInput):
        feedback_words(["top"], "q", _pool(), -1)
