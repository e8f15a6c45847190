"""Coverage: the share of a question's word weight a lexical hit holds, and what it weighs."""

from __future__ import annotations

import pytest

from elfmem.index.termhits import TermHits
from elfmem.retrieval.coverage import answer_kinds, counted, coverage, covered, weights
from elfmem.retrieval.fusechoice import smooth_idf


def _hits(holding: dict[str, int], parts: dict[str, dict[str, float]], rows: int) -> TermHits:
    return TermHits(parts=parts, holding=holding, rows=rows)


def test_a_hit_covers_the_idf_share_of_the_words_it_holds() -> None:
    hits = _hits(
        {"pgbouncer": 1, "database": 40, "nowhere": 0},
        {"pgbouncer": {"a": 1.0}, "database": {"a": 0.5, "b": 0.5}},
        rows=100,
    )
    shares = coverage(hits)
    rare, common, unheld = (smooth_idf(n, 100) for n in (1, 40, 0))
    total = rare + common + unheld
    assert shares["a"] == pytest.approx((rare + common) / total)
    assert shares["b"] == pytest.approx(common / total)
    assert shares["a"] < 1.0  # a question word no block holds keeps every hit short of whole


def test_named_times_and_light_words_do_not_count() -> None:
    assert not counted("june") and not counted("2023") and not counted("yesterday")
    assert not counted("about") and counted("pgbouncer")


def test_the_noun_a_question_asks_by_is_the_answers_kind() -> None:
    assert answer_kinds("what mode is the cache of the billing service in") == {"mode"}
    assert answer_kinds("Which Python version does the web app pin?") == {"version"}
    assert answer_kinds("whose dog was it") == {"dog"}
    assert answer_kinds("what is the timeout of the billing api") == set()  # a verb: no noun
    assert answer_kinds("what kind of art does Melanie make") == set()  # "of" before the verb
    assert answer_kinds("what did Caroline research") == set()
    assert answer_kinds("how many replicas does the api run") == set()
    assert answer_kinds("what Caroline said about her trip to the lake") == set()  # no verb
    # a yes-or-no question asks for the state it ends on
    assert answer_kinds("is the public endpoint of the ingest service open") == {"open"}
    assert answer_kinds("Is the cache of the billing service enabled?") == {"enabled"}
    assert answer_kinds("is the billing service on call for payments") == set()  # not a state
    assert answer_kinds("the endpoint is open") == set()  # not a question


def test_the_answers_kind_leaves_coverage_and_the_subject_covers_the_rest() -> None:
    """For "what state is the firewall of kestrel in", the block that states kestrel's firewall's
    state covers the question whole; a note naming the state of another's firewall does not."""
    hits = _hits(
        {"state": 2, "firewall": 10, "kestrel": 6},
        {
            "state": {"note": 1.0},
            "firewall": {"note": 0.5, "fact": 0.5},
            "kestrel": {"fact": 1.0},
        },
        rows=60,
    )
    assert coverage(hits)["note"] > coverage(hits)["fact"]  # the rare noun outweighs the name
    shares = coverage(hits, frozenset({"state"}))
    assert shares["fact"] == pytest.approx(1.0)
    assert shares["note"] < 0.5


def test_the_floor_drops_thin_hits_and_keeps_the_order() -> None:
    kept = covered({"a": 3.0, "b": 2.0, "c": 1.0}, {"a": 0.1, "b": 0.9, "c": 0.5}, 0.2)
    assert list(kept) == ["b", "c"]


def test_weights_are_coverage_to_the_power_and_power_zero_is_whole() -> None:
    got = weights({"a": 0.5, "b": 1.0, "c": 1.2}, 4.0)
    assert got == pytest.approx({"a": 0.0625, "b": 1.0, "c": 1.0})
    assert weights({"a": 0.5}, 0.0) == {"a": 1.0}
