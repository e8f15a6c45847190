"""Rival answers ordered by outcomes: of two blocks that state one subject with different values
and no order in time between them, the one outcomes back clearly ranks above the other.

"The cache of the X is disabled" and "The cache of the X is running", captured in one batch,
answer "what mode is the cache of the X in" with different values. Relevance ranks them by how
closely each matches the question's words, which says nothing about which value is right, and
the evidence factor moves a score by a tenth or so, less than the gap between two look-alikes'
relevance. Once outcomes have spoken, they decide: when the two records differ by
``RIVAL_MARGIN`` net confirmations or more, the better one moves just above the other.

- Rivals are what the correction test (``block/correction.py``) finds between the two texts,
  either way round, with **no order in time** (the same ``created`` second and no ``when:`` on
  both): a newer block that corrects an older one is a revision, whose own rule applies
  (``truth.place_revisions``); a pair that rule already ordered is left alone.
- Outcomes have judged both: a rival nobody has judged may be news nobody has seen yet, and
  keeps its place (a confirmed block never passes it, as with ``confirmed.py``'s notes).
- One mistaken outcome (a tenth of them are) never reorders two rivals: the margin is two.
- A refuted block never moves up; the refuted tier below stays where it is.

Pure: ``ranking.order`` applies the pairs this returns as it applies revisions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from elfmem.index.queries import BlockRow
from elfmem.retrieval.state import BlockState
from elfmem.retrieval.truth import is_refuted

RIVAL_MARGIN = 2.0
"""Net confirmations (α − β, in outcome weights) by which one rival's record must lead the
other's for outcomes to order them: more than one outcome, which may be mistaken."""


def _net(state: BlockState) -> float:
    return state.alpha - state.beta


def _tied(a: BlockRow, b: BlockRow) -> bool:
    """No order in time: the same ``created`` second, and not both dated by ``when:``."""
    return a.created == b.created and not (a.said and b.said)


def rivals(a: BlockRow, b: BlockRow) -> bool:
    """Two statements of one subject with different values, neither newer than the other."""
    if not _tied(a, b):
        return False
    # The correction test loads only here: most queries compare no two judged blocks.
    from elfmem.block.correction import corrects

    return corrects(a.content, b.content) or corrects(b.content, a.content)


def over_rivals(
    rows: Sequence[BlockRow],
    states: Sequence[BlockState],
    standing: Mapping[int, BlockState],
    taken: Sequence[tuple[int, int]] = (),
    scores: Sequence[float] = (),
    depth: int = 0,
) -> list[tuple[int, int]]:
    """(better, worse) index pairs of rivals whose records differ by ``RIVAL_MARGIN`` or more.

    ``standing`` holds the evidence that still counts for a block a correction claims to revise
    (``truth.Placement.standing``); pairs a revision ordered (``taken``) are left alone. With
    ``scores`` and ``depth``, only the ``depth`` best-scored candidates are compared: an order
    below them is never shown, and a memory where most blocks have outcomes has many."""
    judged = {i for i, st in enumerate(states) if st.confirmed > 0 or st.refuted > 0}
    if depth and len(judged) > depth:
        judged = set(sorted(judged, key=lambda i: -scores[i])[:depth])
    if len(judged) < 2:
        return []
    claimed = {frozenset(p) for p in taken}
    record = {i: standing.get(i, states[i]) for i in judged}
    out = []
    for a, b in combinations(sorted(judged), 2):
        gap = _net(record[a]) - _net(record[b])
        if abs(gap) < RIVAL_MARGIN or frozenset((a, b)) in claimed:
            continue
        better, worse = (a, b) if gap > 0 else (b, a)
        if is_refuted(record[better]) or not rivals(rows[a], rows[b]):
            continue
        out.append((better, worse))
    return out


def placed(
    scores: Sequence[float], pairs: Sequence[tuple[int, int]]
) -> tuple[list[float], list[tuple[int, int]]]:
    """``scores`` with the better rival of each pair just above the worse where it was below,
    and the pairs that order now holds (in as many passes as a chain is long)."""
    out = [float(s) for s in scores]
    for _ in range(len(pairs) + 1):
        moved = False
        for better, worse in pairs:
            if out[better] <= out[worse]:
                out[better] = out[worse] + max(abs(out[worse]) * 1e-6, 1e-9)
                moved = True
        if not moved:
            break
    return out, list(pairs)
