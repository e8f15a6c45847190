"""The truth rules as pure maths: evidence, refutation, revisions, the diversity exemption."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.retrieval import mmr, truth
from elfmem.retrieval.state import BlockState


def state(confirmed: float = 0.0, refuted: float = 0.0) -> BlockState:
    return BlockState(alpha=0.5 + confirmed, beta=0.5 + refuted)


def test_evidence_factor_is_one_for_the_prior_and_one_outcome_moves_it_a_tenth() -> None:
    assert truth.evidence_factor(state()) == 1.0
    assert truth.evidence_factor(state(refuted=1)) == pytest.approx(0.9)  # shrunk mean 0.4
    assert truth.evidence_factor(state(confirmed=1)) == pytest.approx(1.06)  # mean 0.75
    assert truth.evidence_factor(state(refuted=100)) > 0.5
    assert truth.evidence_factor(state(confirmed=100)) < 1.0 + truth.CONFIRMED_MAX


def test_refuted_needs_three_net_refutations_or_a_losing_balance_after_five() -> None:
    assert not truth.is_refuted(state(refuted=2))  # two mistakes before a confirmation
    assert truth.is_refuted(state(refuted=3))
    assert not truth.is_refuted(state(confirmed=1, refuted=3))
    assert truth.is_refuted(state(confirmed=4, refuted=5))  # mistaken 1.0s cannot keep it
    assert not truth.is_refuted(state(confirmed=5, refuted=5))


def _walk(flips: list[bool], right: bool) -> list[BlockState]:
    """The states a block passes through when each outcome is right unless flipped."""
    out, confirmed, refuted = [], 0, 0
    for flipped in flips:
        if right != flipped:
            confirmed += 1
        else:
            refuted += 1
        out.append(state(confirmed, refuted))
    return out


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.booleans(), min_size=1, max_size=30))
def test_a_block_whose_outcomes_never_lean_against_it_is_never_refuted(flips: list[bool]) -> None:
    """The fact the rule could lose: a right block taken out by mistaken 0.0s. Hunt for a
    history where refutations never outnumber confirmations and the block is refuted anyway."""
    for seen in _walk(flips, right=True):
        if truth.net_refutations(seen) <= 0:
            assert not truth.is_refuted(seen)
    for seen in _walk([True, True], right=True):  # two mistakes before any confirmation
        assert not truth.is_refuted(seen)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.booleans(), min_size=5, max_size=30))
def test_a_misleading_block_is_refuted_by_its_fifth_refutation_unless_confirmed_as_often(
    flips: list[bool],
) -> None:
    for seen in _walk(flips, right=False):
        refuting = seen.beta - 0.5
        if refuting >= 5 and truth.net_refutations(seen) > 0:
            assert truth.is_refuted(seen)
            break


def test_contested_is_five_refutations_that_confirmations_do_not_outweigh() -> None:
    assert truth.is_contested(state(confirmed=5, refuted=5))
    assert truth.is_contested(state(confirmed=9.5, refuted=9))  # a lead of less than one outcome
    assert not truth.is_contested(state(confirmed=4, refuted=4))  # not five refutations yet
    assert not truth.is_contested(state(confirmed=6, refuted=5))  # confirmed more: it leans right
    assert not truth.is_contested(state(confirmed=4, refuted=5))  # refuted, a tier of its own
    assert truth.is_unrefuted(state(confirmed=3)) and truth.is_unrefuted(state())
    assert not truth.is_unrefuted(state(confirmed=3, refuted=0.2))


def test_only_blocks_not_more_often_refuted_earn_from_use() -> None:
    assert truth.earns_use(state()) and truth.earns_use(state(confirmed=1, refuted=1))
    assert not truth.earns_use(state(refuted=1))


def test_lift_is_bounded_and_mixes_by_frame_weight() -> None:
    weights = {"recency": 0.25, "centrality": 0.15, "reinforcement": 0.10}
    assert truth.lift(dict.fromkeys(truth.SECONDARY, 0.0), weights) == 1.0
    assert truth.lift(dict.fromkeys(truth.SECONDARY, 1.0), weights) == 1.0 + truth.LIFT_MAX
    only_recency = {"recency": 1.0, "centrality": 0.0, "reinforcement": 0.0}
    assert truth.lift(only_recency, weights) == pytest.approx(1 + truth.LIFT_MAX * 0.5)


def test_lift_never_outweighs_one_confirming_outcome() -> None:
    weights = {"recency": 0.25, "centrality": 0.15, "reinforcement": 0.10}
    popular = truth.lift(dict.fromkeys(truth.SECONDARY, 1.0), weights) * truth.evidence_factor(
        state()
    )
    confirmed = truth.evidence_factor(state(confirmed=3))
    refuted_popular = truth.evidence_factor(state(refuted=1)) * truth.lift(
        {"recency": 1.0, "centrality": 0.0, "reinforcement": 0.0}, weights
    )
    assert refuted_popular < 1.0 <= popular
    assert popular <= confirmed + 0.1  # at most a tenth above a block confirmed three times


def test_a_correction_holds_until_refuted_more_than_what_it_corrects() -> None:
    old = state(confirmed=5)
    assert truth.correction_holds(state(), old)  # old confirmations are stale evidence
    assert not truth.correction_holds(state(refuted=1), old)
    assert truth.correction_holds(state(refuted=1), state(refuted=3))


def revised(
    confirmed: float, refuted: float, since: tuple[float, float], by: str = "new"
) -> BlockState:
    return BlockState(alpha=0.5 + confirmed, beta=0.5 + refuted, since_revision=((by, since),))


def test_only_outcomes_since_the_correction_count_for_the_block_it_corrects() -> None:
    old = revised(confirmed=8, refuted=1, since=(1.0, 0.0))  # confirmed again since
    assert not truth.correction_holds(state(refuted=1), old, "new")  # a wrong one falls at once
    assert truth.correction_holds(state(confirmed=1), old, "new")  # a tie goes to the correction
    replaced = revised(confirmed=8, refuted=0, since=(0.0, 1.0))  # the world changed
    assert truth.correction_holds(state(refuted=1), replaced, "new")  # one mistaken 0.0 forgiven
    assert truth.since_revised(replaced, "new") == replace(replaced, alpha=0.5, beta=1.5)


def test_each_correction_is_judged_from_its_own_time() -> None:
    """A look-alike linked at the first dream must not make a later correction's clock start
    then: the block's confirmations between the two predate the later correction."""
    old = BlockState(
        alpha=8.5, beta=1.5, since_revision=(("lookalike", (7.0, 1.0)), ("fresh", (0.0, 0.0)))
    )
    assert truth.correction_holds(state(), old, "fresh")
    assert not truth.correction_holds(state(), old, "lookalike")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.integers(0, 6), st.integers(0, 6), st.integers(0, 6), st.integers(0, 6), st.integers(0, 20)
)
def test_a_correction_never_loses_to_a_block_refuted_as_much_since(
    new_ok: int, new_bad: int, old_ok: int, old_bad: int, old_before: int
) -> None:
    """The fact the rule could lose: a right correction put back below the block it replaced.
    Whatever the older block earned before the correction, if it has drawn at least as many net
    refutations since, the correction holds; and it never holds when it is worse off."""
    old = revised(old_before + old_ok, old_bad, since=(float(old_ok), float(old_bad)))
    new = state(new_ok, new_bad)
    holds = truth.correction_holds(new, old, "new")
    void = truth.claim_refuted(new, old, "new")  # refuted, the older block not: it never holds
    assert holds == (new_bad - new_ok <= old_bad - old_ok and not void)
    placed = truth.place_revisions(["old", "new"], [0.9, 0.3], [old, new], [("new", "old")])
    assert (placed.scores[1] > placed.scores[0]) == holds


def test_place_revisions_moves_the_correction_just_above_and_names_it() -> None:
    ids = ["old", "other", "new"]
    placed = truth.place_revisions(
        ids, [0.9, 0.5, 0.4], [state(confirmed=3), state(), state()], [("new", "old")]
    )
    assert placed.scores[2] > placed.scores[0] > placed.scores[1]
    assert placed.notes == {0: "superseded by [new]"}
    assert placed.winners == {2} and set(placed.standing) == {0}
    assert placed.standing[0] == BlockState(alpha=0.5, beta=0.5)  # its confirmations predate it


def test_a_correction_never_rehabilitates_a_block_outcomes_had_refuted() -> None:
    """A misleading look-alike refuted before the correction arrived: the correction restates
    it with a reason added. Its refutations predate the correction and must still count."""
    refuted_before = revised(confirmed=0, refuted=4, since=(0.0, 0.0))
    placed = truth.place_revisions(
        ["old", "new"], [0.9, 0.3], [refuted_before, state()], [("new", "old")]
    )
    assert placed.winners == {1}
    assert truth.is_refuted(placed.standing[0])  # before: the prior, back in the relevant tier
    confirmed_before = revised(confirmed=6, refuted=1, since=(0.0, 1.0))
    standing = truth.superseded_standing(confirmed_before, "new")
    assert standing == truth.since_revised(confirmed_before, "new")  # old confirmations stop


def test_old_confirmations_stop_counting_once_a_correction_is_claimed_even_if_it_falls() -> None:
    """An obsolete block confirmed for five rounds, then refuted twice since a right correction
    that itself drew mistaken 0.0s (so it does not hold, though outcomes have not refuted it):
    the old block is not carried by the confirmations of its past. Its score counts what came
    since as well."""
    obsolete = revised(confirmed=5, refuted=2, since=(0.0, 2.0))
    correction = state(refuted=2.5)  # worse off than the old block since, not refuted
    assert not truth.is_refuted(correction)
    placed = truth.place_revisions(
        ["old", "new"], [0.9, 0.5], [obsolete, correction], [("new", "old")]
    )
    assert placed.winners == {0}  # the claim fell, yet the old block stands on what came since
    assert placed.standing[0] == truth.since_revised(obsolete, "new")
    assert placed.scores[0] == pytest.approx(
        0.9 * truth.evidence_factor(placed.standing[0]) / truth.evidence_factor(obsolete), rel=1e-5
    )


def test_a_refuted_correction_gives_the_older_block_its_whole_record_back() -> None:
    """A right block a wrong correction tried to replace: once outcomes refute the correction,
    the older block's confirmations from before the claim count again, it ranks as it would
    without the link, and the correction is marked."""
    right = revised(confirmed=6, refuted=2, since=(0.0, 2.0))  # two mistaken 0.0s since
    assert truth.evidence_factor(truth.since_revised(right, "new")) < 0.9
    for wrong in (state(refuted=3), state(confirmed=1, refuted=5.5)):
        assert truth.claim_refuted(wrong, right, "new")
        placed = truth.place_revisions(["old", "new"], [0.7, 0.9], [right, wrong], [("new", "old")])
        assert placed.standing == {} and placed.winners == set()  # as if never linked
        assert placed.scores[0] == pytest.approx(0.7)  # its own score, nothing taken away
        assert placed.notes == {1: "a correction of [old] that outcomes refuted"}
        assert not truth.correction_holds(wrong, right, "new")
        assert not truth.set_aside("old", {"old": right, "new": wrong}, newer=["new"])
    declared = BlockState(alpha=6.5, beta=3.5)  # no time for the claim: all confirmations drop
    held = truth.place_revisions(
        ["old", "new"], [0.7, 0.9], [declared, state(refuted=2)], [("new", "old")]
    )
    assert truth.is_refuted(held.standing[0])  # not refuted yet: the claim still takes them
    placed = truth.place_revisions(
        ["old", "new"], [0.7, 0.9], [declared, state(refuted=3)], [("new", "old")]
    )
    assert placed.standing == {} and placed.scores[0] == pytest.approx(0.7)  # judged whole
    since_refuted = revised(confirmed=6, refuted=3, since=(0.0, 3.0))
    assert not truth.claim_refuted(state(refuted=3), since_refuted, "new")  # both refuted since


def test_a_refuted_correction_of_a_refuted_block_gives_nothing_back() -> None:
    """Both ends refuted: the claim changes nothing for the older block, which stays refuted."""
    assert not truth.claim_refuted(state(refuted=3), state(refuted=4), "new")
    assert not truth.claim_refuted(state(refuted=2), state(), "new")  # fallen is not refuted


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.integers(0, 8), st.integers(0, 8), st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)
)
def test_a_superseded_block_is_refuted_only_by_its_record_or_what_came_since(
    ok_before: int, bad_before: int, ok_since: int, bad_since: int, new_bad: int
) -> None:
    """The fact the rule could lose: an older block that is right after all (the correction is
    wrong), taken out because it is superseded. Hunt for an older block refuted as a loser though
    neither its whole record nor the outcomes since the correction refute it."""
    old = revised(
        ok_before + ok_since, bad_before + bad_since, since=(float(ok_since), float(bad_since))
    )
    placed = truth.place_revisions(
        ["old", "new"], [0.9, 0.3], [old, state(0, new_bad)], [("new", "old")]
    )
    if 0 not in placed.standing:
        return
    standing = placed.standing[0]
    whole, since = truth.is_refuted(old), truth.is_refuted(truth.since_revised(old, "new"))
    assert truth.is_refuted(standing) == (whole or since)
    assert truth.net_refutations(standing) >= truth.net_refutations(old) or not whole


def test_a_refuted_correction_falls_back_below_the_block_it_tried_to_replace() -> None:
    ids = ["old", "new"]
    placed = truth.place_revisions(ids, [0.3, 0.9], [state(), state(refuted=1)], [("new", "old")])
    assert placed.scores[0] > placed.scores[1]
    assert "outcomes refuted" in placed.notes[1] and placed.winners == {0}


def test_a_chain_of_corrections_settles_newest_first() -> None:
    ids = ["a", "b", "c"]
    placed = truth.place_revisions(ids, [0.9, 0.5, 0.1], [state()] * 3, [("b", "a"), ("c", "b")])
    assert placed.scores[2] > placed.scores[1] > placed.scores[0]


def test_mmr_never_pushes_an_exempt_newer_twin_out() -> None:
    relevance = [1.0, 0.8, 0.6]
    sim = np.array([[1.0, 0.97, 0.1], [0.97, 1.0, 0.1], [0.1, 0.1, 1.0]])
    assert mmr.mmr_order(relevance, sim, 2, 0.7) == [0, 2]  # the twin is diversified away
    exempt = np.zeros((3, 3), dtype=bool)
    exempt[1, 0] = True  # candidate 1 is the newer twin of candidate 0
    picked = mmr.mmr_ranked(relevance, sim, 2, 0.7, exempt)
    assert [i for i, _ in picked] == [0, 1]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=12), st.integers(1, 12))
def test_mmr_gains_never_increase_down_the_list(relevance: list[float], k: int) -> None:
    rng = np.random.default_rng(len(relevance))
    vecs = rng.normal(size=(len(relevance), 8))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    gains = [g for _, g in mmr.mmr_ranked(relevance, vecs @ vecs.T, k)]
    assert all(a >= b - 1e-12 for a, b in zip(gains, gains[1:], strict=False))
    assert gains[0] > 0


def test_set_aside_is_refuted_or_superseded_by_a_correction_that_holds() -> None:
    """Dense feedback moves toward blocks that stand: not toward a refuted block, nor one a
    holding correction supersedes; a correction that outcomes refuted leaves the older standing."""
    old = BlockState(alpha=5.5, beta=0.5, revised_by=("new",), since_revision=(("new", (0, 0)),))
    assert not truth.set_aside("plain", {"plain": state(confirmed=2)})
    assert not truth.set_aside("missing", {})  # the prior stands
    assert truth.set_aside("bad", {"bad": state(refuted=3)})
    assert truth.set_aside("old", {"old": old, "new": state()})  # the correction holds
    assert not truth.set_aside("old", {"old": old, "new": state(refuted=1)})  # it fell
    declared = {"old": state(confirmed=4), "new": state()}
    assert not truth.set_aside("old", declared)
    assert truth.set_aside("old", declared, newer=["new"])  # a declared supersedes counts too
    assert not truth.set_aside("old", {"old": state()}, newer=["old"])  # never its own correction


def test_a_fresh_correction_with_one_mistaken_refutation_stays_above_a_refuted_look_alike() -> None:
    """A look-alike refuted twice before a correction claimed to revise it, shown to no one
    since, has a clean record since the claim; the correction's one mistaken 0.0 is not worse
    than the record the look-alike stands on, so the look-alike stays below and is marked."""
    look_alike = revised(confirmed=0, refuted=2, since=(0.0, 0.0))
    fresh = state(refuted=1)
    assert truth.correction_holds(fresh, look_alike, "new")
    placed = truth.place_revisions(
        ["look", "new"], [0.9, 0.5], [look_alike, fresh], [("new", "look")]
    )
    assert placed.scores[1] > placed.scores[0]
    assert placed.notes == {0: "superseded by [new]"}
    assert not truth.correction_holds(state(refuted=3), look_alike, "new")  # worse: it falls


@settings(max_examples=500, deadline=None, derandomize=True)
@given(*[st.integers(0, 6) for _ in range(6)])
def test_refutations_before_a_correction_count_against_what_it_corrects_never_for_it(
    new_ok: int, new_bad: int, ok_since: int, bad_since: int, ok_before: int, bad_before: int
) -> None:
    """The rule could push a right block down: hunt for a block whose record before the claim
    does not lean against it that now loses to a correction worse off than its record since.
    Also: a correction never loses where the since-only rule kept it, nor to a block no better
    off over its whole record."""
    old = revised(ok_before + ok_since, bad_before + bad_since, since=(ok_since, bad_since))
    new_net = new_bad - new_ok
    holds = truth.correction_holds(state(new_ok, new_bad), old, "new")
    if truth.claim_refuted(state(new_ok, new_bad), old, "new"):
        assert not holds  # refuted by outcomes, the older block not since: the claim is void
        return
    since_rule = new_net <= bad_since - ok_since
    if since_rule:
        assert holds
    if bad_before <= ok_before:
        assert holds == since_rule
    if new_net <= (bad_before + bad_since) - (ok_before + ok_since):
        assert holds


def test_a_fresh_correction_ends_first_whatever_the_order_of_a_revision_cycle() -> None:
    """Dream links a correction as a revision of the old block and of its look-alikes, and the
    old block as one of the look-alike. A look-alike refuted before the claim used to beat the
    correction's one mistaken 0.0, and the cycle (look-alike > correction > old block >
    look-alike) settled with whichever block the order of scores and pairs left first."""
    look = BlockState(alpha=0.5, beta=2.5, since_revision=(("new", (0, 0)), ("old", (0, 2))))
    old = BlockState(alpha=5.5, beta=1.5, since_revision=(("new", (0, 1)),))
    ids, states = ["old", "look", "new"], [old, look, state(refuted=1)]
    for scores in itertools.permutations([0.6, 0.7, 0.8]):
        for pairs in itertools.permutations([("new", "look"), ("new", "old"), ("old", "look")]):
            placed = truth.place_revisions(ids, list(scores), states, list(pairs))
            assert max(range(3), key=lambda i: placed.scores[i]) == 2, (scores, pairs)
