"""Truth over popularity: what outcomes and revisions do to a ranking (DESIGN §6).

Three rules, each a pure function here and applied in ``pipeline``:

- **Relevance gates.** A block's score is its relevance to the query *times* what else is known
  about it, so a block that does not bear on the query cannot climb on confidence, recency,
  centrality or reinforcement. Secondary signals lift a block by at most ``LIFT_MAX`` (a quarter),
  less than one confirming outcome moves it, so being retrieved never outweighs being right.
- **Outcomes decide.** The evidence factor is 1.0 for a block nobody has judged, towards 1.25 for
  one that keeps being confirmed, towards 0.5 for one that keeps failing.
  A block whose refutations outnumber its confirmations by ``REFUTED_MARGIN`` ranks below every
  relevant block that is not refuted, whatever its relevance; with fewer, its score shrinks.
  A block with more refutations than confirmations earns nothing from reinforcement or centrality.
- **Corrections win, unless refuted.** When a newer block is a candidate revision of an older one
  (a learned ``revises`` edge, or a declared ``supersedes``), the newer ranks directly above the
  older and the older is marked with the newer's id. A correction loses that place as soon as its
  refutations outnumber its confirmations and the older block's (``correction_holds``).

``REFUTED_MARGIN`` = 2 tolerates one mistaken outcome (an agent's feedback is noisy: a right block
hit by one flipped 0.0 is not thrown out of the top k, where it could never win back its place)
and acts within two refutations for a block nobody confirmed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from elfmem.retrieval.state import BlockState

REFUTED_MARGIN = 2.0
"""Net refutations (β − α, in outcome weights) at which a block counts as refuted."""
LIFT_MAX = 0.25
"""Most that recency, centrality and reinforcement together multiply a score by (1 + this)."""
SECONDARY = ("recency", "centrality", "reinforcement")


def net_refutations(state: BlockState) -> float:
    """β − α: refuting outcomes beyond confirming ones (both start at the prior's 0.5)."""
    return state.beta - state.alpha


def is_refuted(state: BlockState) -> bool:
    return net_refutations(state) >= REFUTED_MARGIN


def earns_use(state: BlockState) -> bool:
    """False for a block more often refuted than confirmed: its retrievals earn nothing."""
    return net_refutations(state) <= 0.0


def evidence_factor(state: BlockState) -> float:
    """1.0 for the prior; down to 0.5 as refutations pile up, up to 1.25 as confirmations do.

    Asymmetric on purpose: a block confirmed on one question must not crowd the right answer to
    another question out of the top k, while a refuted block should sink wherever it appears.
    """
    mean = state.alpha / (state.alpha + state.beta)
    return 0.5 + mean if mean <= 0.5 else 1.0 + 0.5 * (mean - 0.5)


def lift(normalised: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """1 + LIFT_MAX × the frame-weighted mean of the secondary signals (each in [0, 1])."""
    total = sum(weights.get(name, 0.0) for name in SECONDARY)
    if total <= 0.0:
        return 1.0
    mix = sum(weights.get(name, 0.0) * normalised.get(name, 0.0) for name in SECONDARY) / total
    return 1.0 + LIFT_MAX * min(1.0, max(0.0, mix))


def correction_holds(newer: BlockState, older: BlockState) -> bool:
    """Does a candidate revision still outrank what it revises?

    Yes until outcomes say otherwise: the correction has drawn at least one net refutation and
    more than the older block has. The older block's confirmations from before the correction
    do not count against it: the world may have changed since they were given.
    """
    against = net_refutations(newer)
    return not (against >= 1.0 and against > net_refutations(older))


@dataclass(frozen=True, slots=True)
class Placement:
    """Scores after the revision rule, and a note per block that a reader should see."""

    scores: list[float]
    notes: dict[int, str]
    winners: set[int]
    """Indices of the blocks that won a revision pair."""
    losers: set[int]
    """Older blocks a holding correction supersedes (not those that beat a refuted one)."""


def place_revisions(
    ids: Sequence[str],
    scores: Sequence[float],
    states: Sequence[BlockState],
    pairs: Sequence[tuple[str, str]],
) -> Placement:
    """Move each holding correction just above the block it revises, and the loser's note.

    ``pairs`` are (newer, older) ids; pairs with an end missing from ``ids`` are ignored. A chain
    (c revises b revises a) settles in as many passes as it is long.
    """
    where = {block_id: i for i, block_id in enumerate(ids)}
    out = [float(s) for s in scores]
    notes: dict[int, str] = {}
    winners: set[int] = set()
    live = [(where[n], where[o]) for n, o in pairs if n in where and o in where and n != o]
    for _ in range(len(live) + 1):
        moved = False
        for new, old in live:
            if correction_holds(states[new], states[old]):
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
    losers: set[int] = set()
    for new, old in live:
        if correction_holds(states[new], states[old]):
            winners.add(new)
            losers.add(old)
        else:
            winners.add(old)
    return Placement(out, notes, winners, losers)


def _just_above(value: float) -> float:
    return value + max(abs(value) * 1e-6, 1e-9)
