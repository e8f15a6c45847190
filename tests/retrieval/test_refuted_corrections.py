"""Refutation is symmetric: a wrong correction that outcomes refute takes nothing from the block
it tried to replace. A hunt over random outcome sequences on an (older, newer) pair, with the
link learned (a time for the claim) and declared without one, checking the order after every
outcome."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from elfmem.retrieval import truth
from elfmem.retrieval.state import BlockState

OLDER, NEWER, OTHER = 0, 1, 2
IDS = ["older", "newer", "other"]


class Pair:
    """Outcome weights of the older block before and since the claim, and of the correction."""

    def __init__(self, before: tuple[int, int], timed: bool) -> None:
        self.before = before
        self.since = (0, 0)
        self.newer = (0, 0)
        self.timed = timed

    def older_state(self) -> BlockState:
        ok, bad = self.before[0] + self.since[0], self.before[1] + self.since[1]
        since = (("newer", (float(self.since[0]), float(self.since[1]))),)
        return BlockState(
            alpha=0.5 + ok, beta=0.5 + bad, since_revision=since if self.timed else ()
        )

    def newer_state(self) -> BlockState:
        return BlockState(alpha=0.5 + self.newer[0], beta=0.5 + self.newer[1])


def _placed(pair: Pair, other: float) -> truth.Placement:
    """The pair plus an unlinked block scored ``other``: the older block, relevance 0.8, is the
    best answer unless the claim takes its standing; the correction, 0.9, looks better."""
    older, newer = pair.older_state(), pair.newer_state()
    scores = [0.8 * truth.evidence_factor(older), 0.9 * truth.evidence_factor(newer), other]
    states = [older, newer, BlockState()]
    return truth.place_revisions(IDS, scores, states, [("newer", "older")])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.booleans(),
    st.tuples(st.integers(0, 6), st.integers(0, 2)),
    st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=14),
)
def test_a_refuted_correction_never_keeps_the_older_block_down(
    timed: bool, before: tuple[int, int], rounds: list[tuple[bool, bool]]
) -> None:
    """Each round the older (right) block draws 1.0, or a mistaken 0.0, and the wrong correction
    draws 0.0, or a mistaken 1.0. After every round:

    - once outcomes refute the correction and not the older block, the older block ranks as if
      there were no link: its own score, above the correction and above an unlinked block that
      it beats on its own record;
    - a correction that has drawn three more negatives than mistaken positives is below the
      older block, learned or declared, whatever the older block's record since;
    - a correction that holds keeps the older block's earlier confirmations from counting.
    """
    pair = Pair(before, timed)
    for older_flipped, newer_flipped in rounds:
        ok, bad = pair.since
        pair.since = (ok, bad + 1) if older_flipped else (ok + 1, bad)
        ok, bad = pair.newer
        pair.newer = (ok + 1, bad) if newer_flipped else (ok, bad + 1)
        older, newer = pair.older_state(), pair.newer_state()
        alone = 0.8 * truth.evidence_factor(older)
        placed = _placed(pair, other=alone * 0.99)
        scores = placed.scores
        if truth.claim_refuted(newer, older, "newer"):
            assert scores[OLDER] == alone  # ranks as it would without the link
            assert scores[OLDER] > scores[OTHER]
            assert truth.is_refuted(newer)  # the refuted tier: below every relevant block
            assert OLDER not in placed.standing and placed.winners == set()
        if pair.newer[1] - pair.newer[0] >= truth.REFUTED_MARGIN and not truth.is_refuted(older):
            below = truth.is_refuted(newer) or scores[OLDER] > scores[NEWER]
            assert below or truth.is_refuted(truth.superseded_standing(older, "newer"))
        if truth.correction_holds(newer, older, "newer"):  # earlier confirmations stop counting
            assert placed.standing[OLDER] == truth.superseded_standing(older, "newer")
            since = truth.since_revised(older, "newer")  # never better off than on this
            standing = placed.standing[OLDER]
            assert truth.is_refuted(older) or (
                truth.net_refutations(standing) >= truth.net_refutations(since)
            )


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.integers(0, 8), st.integers(0, 3), st.integers(0, 2))
def test_a_right_older_block_is_back_on_top_by_the_third_negative_on_its_correction(
    confirmed_before: int, mistaken_before: int, mistaken_since: int
) -> None:
    """A wrong correction falls back after three 0.0s, seen from the older block's side: a
    right block (more confirmed than refuted before the claim), a wrong correction that drew
    three 0.0s and no mistaken 1.0, and up to two mistaken 0.0s on the right block since (three
    would refute any block). Learned or declared, it is first again."""
    if confirmed_before <= mistaken_before:
        return
    for timed in (True, False):
        pair = Pair((confirmed_before, mistaken_before), timed)
        pair.since = (3 - min(3, mistaken_since), mistaken_since)
        pair.newer = (0, 3)
        older = pair.older_state()
        if truth.is_refuted(older):
            continue
        placed = _placed(pair, other=0.8 * truth.evidence_factor(older) * 0.99)
        assert max(range(3), key=lambda i: placed.scores[i]) == OLDER, (timed, pair.since)
