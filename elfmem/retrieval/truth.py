"""Truth over popularity: what outcomes and revisions do to a ranking (docs/ranking.md).

Three rules, each a pure function here and applied in ``pipeline``:

- **Relevance gates.** A block's score is its relevance to the query *times* what else is known
  about it, so a block that does not bear on the query cannot climb on confidence, recency,
  centrality or reinforcement. Secondary signals lift a block by at most ``LIFT_MAX`` (a tenth),
  no more than three confirmations do, so being retrieved never outweighs being right.
- **Outcomes decide.** The evidence factor is 1.0 for a block nobody has judged, up to 1.12 for
  one that keeps being confirmed, towards 0.5 for one that keeps failing; one refutation costs
  a tenth, because it may be a mistake. A refuted block (``is_refuted``: three net
  refutations, or any once five refutations are in) ranks below every relevant block that is
  not refuted, whatever its relevance. A block with five refutations and as many confirmations
  (``is_contested``) ranks below every relevant block that nothing has refuted. A block with
  more refutations than confirmations earns nothing from reinforcement or centrality.
- **Corrections win, unless refuted.** When a newer block is a candidate revision of an older one
  (a learned ``revises`` edge, or a declared ``supersedes``), the newer ranks directly above the
  older and the older is marked with the newer's id. A correction keeps that place while the
  outcomes since it leave it at least as well off as the older block, judged on its record
  since or on its whole record when that is worse (``correction_holds``). A correction that
  outcomes refute (``claim_refuted``) takes nothing from the older block: its whole record
  counts again, as if the correction had never been claimed.

The thresholds were chosen on the tune split of ``bench/adaptivity.py`` (a tenth of outcomes
flipped); docs/ranking.md gives the reasoning and the measurements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from elfmem.retrieval.confidence import JEFFREYS_PRIOR
from elfmem.retrieval.state import PRIOR, BlockState

REFUTED_MARGIN = 3.0
"""Net refutations (β − α, in outcome weights) at which a block counts as refuted at once."""
REFUTED_AFTER = 5.0
"""Refuting weight after which any net refutation (β > α) counts as refuted."""
SHRINK = 1.5
"""Pseudo-observations of each kind added to the posterior for the evidence factor: one
mistaken outcome moves a block's score by a tenth, not a quarter."""
CONFIRMED_MAX = 0.12
"""Most that confirmations multiply a score by (1 + this): confirmed on one question must not
crowd the answer to another question out of the top k."""
LIFT_MAX = 0.10
"""Most that recency, centrality and reinforcement together multiply a score by (1 + this)."""
SECONDARY = ("recency", "centrality", "reinforcement")


def net_refutations(state: BlockState) -> float:
    """β − α: refuting outcomes beyond confirming ones (both start at the prior's 0.5)."""
    return state.beta - state.alpha


def is_refuted(state: BlockState) -> bool:
    """Refuted: ``REFUTED_MARGIN`` more refutations than confirmations, or more refutations
    than confirmations once ``REFUTED_AFTER`` refutations are in.

    With a tenth of outcomes mistaken, each net refutation makes "misleading" nine times likelier
    than "right", but a block taken out of the top k gets no more outcomes and cannot win its
    place back. Three net refutations lose a right block rarely (three mistakes before its
    first confirmation); the count clause takes out a misleading block whose refutations were
    offset by mistaken confirmations within five refutations.
    """
    net = net_refutations(state)
    return net >= REFUTED_MARGIN or (net > 0.0 and state.refuted >= REFUTED_AFTER)


def is_contested(state: BlockState) -> bool:
    """Five refutations or more, offset by confirmations that lead them by less than one outcome:
    not refuted, and not to be ranked as if nothing had been said against it.

    Such a record is as likely for a right block as for a misleading one when a tenth of outcomes
    are mistaken, so it is not taken out. But a block nobody has refuted is the better bet: a
    contested block ranks below every relevant block without refutations (``is_unrefuted``) and
    keeps its place among the rest, where it still draws outcomes that settle it.
    """
    contested = state.refuted >= REFUTED_AFTER and net_refutations(state) > -1.0
    return contested and not is_refuted(state)


def is_unrefuted(state: BlockState) -> bool:
    """No refuting outcome weight at all."""
    return state.refuted <= 0.0


def earns_use(state: BlockState) -> bool:
    """False for a block more often refuted than confirmed: its retrievals earn nothing."""
    return net_refutations(state) <= 0.0


def evidence_factor(state: BlockState) -> float:
    """1.0 for the prior; down towards 0.5 as refutations pile up, up to 1 + CONFIRMED_MAX.

    Downwards the posterior mean is shrunk by ``SHRINK`` pseudo-observations of each kind, so
    that one refutation, which may be a mistake, costs a tenth of the score, not a quarter (a
    right block that fell out of the top k on one mistaken 0.0 could never win its place back).
    Upwards the gain is small and capped: a block confirmed on one question must not crowd the
    right answer to another question out of the top k, while a refuted block should sink
    wherever it appears.
    """
    total = state.alpha + state.beta
    shrunk = (state.alpha + SHRINK) / (total + 2.0 * SHRINK)
    if shrunk <= 0.5:
        return 0.5 + shrunk
    return 1.0 + 2.0 * CONFIRMED_MAX * (state.alpha / total - 0.5)


def lift(normalised: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """1 + LIFT_MAX × the frame-weighted mean of the secondary signals (each in [0, 1])."""
    total = sum(weights.get(name, 0.0) for name in SECONDARY)
    if total <= 0.0:
        return 1.0
    mix = sum(weights.get(name, 0.0) * normalised.get(name, 0.0) for name in SECONDARY) / total
    return 1.0 + LIFT_MAX * min(1.0, max(0.0, mix))


def since_revised(older: BlockState, newer: str) -> BlockState:
    """The evidence that still counts for a block ``newer`` claims to correct.

    Only the outcomes given since the claim: the world may have changed, so the confirmations
    from before it say nothing about which of the two is right now. A declared ``supersedes``
    counts from the end of the second the newer block's ``created`` stamp names; without any
    time for the claim (a stamp with no time zone) the older block's confirmations are dropped
    and its refutations kept.
    """
    since = dict(older.since_revision).get(newer)
    if since is None:
        return replace(older, alpha=JEFFREYS_PRIOR[0])
    confirmed, refuted = since
    return replace(older, alpha=JEFFREYS_PRIOR[0] + confirmed, beta=JEFFREYS_PRIOR[1] + refuted)


def superseded_standing(older: BlockState, newer: str) -> BlockState:
    """The evidence a block stands on once a newer block claims to correct it.

    The outcomes since the correction (``since_revised``), unless its whole record is worse: a
    correction drops the older block's old confirmations, never its old refutations, so a block
    outcomes had refuted before a look-alike claimed to correct it stays refuted.

    This holds whether or not the correction holds, until outcomes refute it
    (``claim_refuted``). Once a newer block claims the world changed, confirmations from before
    the claim say nothing about now, for either answer: a right older block keeps its place on
    the confirmations it draws since, and an obsolete one whose correction drew a mistaken 0.0
    no longer hides behind the confirmations of its past.
    """
    since = since_revised(older, newer)
    worse = is_refuted(older) or net_refutations(older) > net_refutations(since)
    return older if worse else since


def claim_refuted(newer: BlockState, older: BlockState, newer_id: str = "") -> bool:
    """Outcomes refute the correction, and not the block it claimed to correct on the evidence
    that block stands on since the claim (``superseded_standing``).

    Then the claim is void: the older block's confirmations from before it count again and it
    ranks as it would without the link, so a right block a wrong correction tried to replace is
    not left standing on the outcomes since, where a few mistaken 0.0s would refute it for good.
    A correction that merely stops holding (refuted less than three times net) is not refuted:
    an obsolete block must not return on its past confirmations because its right correction
    drew a mistaken 0.0. When both are refuted since the claim, nothing comes back. A claim
    with no time (``since_revised``) has no "since" to judge the older block on: its whole
    record decides.
    """
    if not is_refuted(newer):
        return False
    timed = newer_id in dict(older.since_revision)
    return not is_refuted(superseded_standing(older, newer_id) if timed else older)


def correction_holds(newer: BlockState, older: BlockState, newer_id: str = "") -> bool:
    """Does a candidate revision still outrank what it revises?

    Yes while the outcomes since the correction leave it at least as well off as the evidence
    the older block stands on (``superseded_standing``): ties go to the correction. A wrong
    correction loses at its first net refutation when the block it replaced keeps being
    confirmed; a right one keeps its place through one mistaken 0.0, because the block it
    replaced draws refutations too.

    The older block's refutations from before the claim count against it here as they do in
    its score, never for it: it is judged on the worse of its record since and what it stands
    on. A look-alike refuted twice before a correction claimed to revise it, and shown to no one
    since, has a clean record since the claim; one mistaken 0.0 on the fresh correction must not
    put that look-alike back above it. A block whose record before the claim does not lean
    against it is judged on its record since, as before. A refuted correction never holds over a
    block outcomes have not refuted (``claim_refuted``).
    """
    if claim_refuted(newer, older, newer_id):
        return False
    since = net_refutations(since_revised(older, newer_id))
    standing = net_refutations(superseded_standing(older, newer_id))
    return net_refutations(newer) <= max(since, standing)


def set_aside(block_id: str, states: Mapping[str, BlockState], newer: Sequence[str] = ()) -> bool:
    """Refuted by outcomes, or superseded by a correction that holds (``correction_holds``).

    ``newer`` names the blocks that claim to correct ``block_id`` beyond its learned
    ``revised_by`` (declared ``supersedes``); a block missing from ``states`` is the prior.
    """
    state = states.get(block_id, PRIOR)
    if is_refuted(state):
        return True
    claims = dict.fromkeys([*state.revised_by, *newer])
    return any(correction_holds(states.get(n, PRIOR), state, n) for n in claims if n != block_id)


@dataclass(frozen=True, slots=True)
class Placement:
    """Scores after the revision rule, and a note per block that a reader should see."""

    scores: list[float]
    notes: dict[int, str]
    winners: set[int]
    """Indices of the blocks that won a revision pair."""
    standing: dict[int, BlockState]
    """Older blocks a candidate revision claims to correct, each with the evidence that still
    counts for it (``superseded_standing``), whether or not the correction holds; a block whose
    every claim outcomes refuted (``claim_refuted``) is not here: its whole record counts."""
    above: list[tuple[int, int]]
    """(winner, loser) of each revision pair: the order that diversity must not undo."""


def place_revisions(
    ids: Sequence[str],
    scores: Sequence[float],
    states: Sequence[BlockState],
    pairs: Sequence[tuple[str, str]],
) -> Placement:
    """Move each holding correction just above the block it revises, and the loser's note.

    First every block a correction claims to revise is scored on what still counts for it
    (``superseded_standing``); then the winner of each pair is moved just above the loser. A
    pair whose claim outcomes refuted (``claim_refuted``) moves nothing and only marks the
    correction: the older block ranks as it would without the link, and the refuted correction
    falls to the refuted tier below it.

    ``pairs`` are (newer, older) ids; pairs with an end missing from ``ids`` are ignored. A chain
    (c revises b revises a) settles in as many passes as it is long.
    """
    where = {block_id: i for i, block_id in enumerate(ids)}
    out = [float(s) for s in scores]
    notes: dict[int, str] = {}
    winners: set[int] = set()
    live = [(where[n], where[o]) for n, o in pairs if n in where and o in where and n != o]
    void = [(n, o) for n, o in live if claim_refuted(states[n], states[o], ids[n])]
    for new, old in void:  # as if never linked: the refuted correction has a tier of its own
        notes[new] = f"a correction of [{ids[old]}] that outcomes refuted"
    live = [pair for pair in live if pair not in void]
    standing: dict[int, BlockState] = {}
    for new, old in live:
        since = superseded_standing(states[old], ids[new])
        if old not in standing or net_refutations(since) > net_refutations(standing[old]):
            standing[old] = since
    for i, since in standing.items():  # its confirmations predate the claim: they stop counting
        out[i] *= evidence_factor(since) / evidence_factor(states[i])
    for _ in range(len(live) + 1):
        moved = False
        for new, old in live:
            if correction_holds(states[new], states[old], ids[new]):
                winner, loser = new, old
                notes[old] = f"superseded by [{ids[new]}]"
            else:
                winner, loser = old, new
                notes[new] = f"a correction of [{ids[old]}] that outcomes refuted"
            if out[winner] <= out[loser]:
                out[winner] = _just_above(out[loser])
                moved = True
        if not moved:
            break
    above = [
        (new, old) if correction_holds(states[new], states[old], ids[new]) else (old, new)
        for new, old in live
    ]
    winners.update(w for w, _ in above)
    return Placement(out, notes, winners, standing, above)


def _just_above(value: float) -> float:
    return value + max(abs(value) * 1e-6, 1e-9)
