"""Confirmed truth over neutral notes: a block outcomes confirmed stands above an unjudged note
on its subject that answers nothing.

"The billing service is owned by the payments team", confirmed on every use, and "A review of
the billing service's ownership is planned", never judged, both bear on "who owns the billing
service"; the note may match the words of the question better, and the evidence factor lifts a
confirmed block by at most 12% (``truth.CONFIRMED_MAX``), so the note could sit on top. Here the
confirmed block moves just above such a note when all of this holds:

- it is confirmed: ``CONFIRMED_AT`` more confirming than refuting outcomes, and not refuted;
- the note has no outcomes at all;
- they are about the same subject and the note states no value the block does not
  (``block/answers.py``): a note with an answer of its own keeps its place;
- the block bears on the query: its relevance is at least ``RELEVANCE_SHARE`` of the note's;
- it passes notes only (``lifted``): with any other block scored between the two, it stays
  where it is, so a confirmed block never passes one that says something.

Pure: ``ranking.order`` applies the pairs this returns as it applies revisions.
"""

from __future__ import annotations

from collections.abc import Sequence

from elfmem.index.queries import BlockRow
from elfmem.retrieval.state import BlockState
from elfmem.retrieval.truth import LIFT_MAX, is_refuted

CONFIRMED_AT = 3.0
"""Net confirmations (α − β, in outcome weights) from which a block counts as confirmed."""
RELEVANCE_SHARE = 0.5
"""Least share of the note's relevance the confirmed block must have to move above it."""


BELOW = 1.0 + LIFT_MAX
"""A confirmed block whose relevance is this far above a note's already ranks above it."""


def is_confirmed(state: BlockState) -> bool:
    return state.alpha - state.beta >= CONFIRMED_AT and not is_refuted(state)


def over_notes(
    rows: Sequence[BlockRow],
    relevance: Sequence[float],
    states: Sequence[BlockState],
    taken: Sequence[tuple[int, int]] = (),
) -> list[tuple[int, int]]:
    """(confirmed, note) index pairs: each confirmed block and an unjudged note it should rank
    above. Pairs already ordered by a revision (``taken``, either way round) are left alone."""
    confirmed = [i for i, st in enumerate(states) if is_confirmed(st)]
    if not confirmed:
        return []
    # The text tests load only here: most queries rank no confirmed block (docs/startup.md).
    from elfmem.block.answers import gist, same_subject, states_nothing_more

    claimed = {frozenset(p) for p in taken}
    notes = [i for i, st in enumerate(states) if st.confirmed <= 0 and st.refuted <= 0]
    out = []
    for c in confirmed:
        fact = gist(rows[c].content)
        for n in notes:
            # only a note it could be below: an unjudged block's lift is at most a tenth
            if not RELEVANCE_SHARE * relevance[n] <= relevance[c] < BELOW * relevance[n]:
                continue
            if n == c or frozenset((c, n)) in claimed:
                continue
            note = gist(rows[n].content)
            if same_subject(fact, note) and states_nothing_more(note, fact):
                out.append((c, n))
    return out


def lifted(
    scores: Sequence[float], pairs: Sequence[tuple[int, int]]
) -> tuple[list[float], list[tuple[int, int]]]:
    """``scores`` with each confirmed block of ``pairs`` just above the highest note it may
    pass, and the pairs so ordered. A confirmed block passes notes only: when any other block
    scores between it and a note, it stays where it is, so it never passes a block that says
    something (popularity does not beat relevance)."""
    out = [float(s) for s in scores]
    passable: dict[int, set[int]] = {}
    for c, n in pairs:
        passable.setdefault(c, set()).add(n)
    applied: list[tuple[int, int]] = []
    for c, notes in sorted(passable.items()):
        above = sorted(
            (j for j in range(len(out)) if out[j] >= out[c] and j != c), key=lambda j: out[j]
        )
        passed = []
        for j in above:  # upwards from the confirmed block, through notes only
            if j not in notes:
                break
            passed.append(j)
        if passed:
            top = out[passed[-1]]
            out[c] = top + max(abs(top) * 1e-6, 1e-9)
            applied += [(c, n) for n in passed]
    return out, applied
