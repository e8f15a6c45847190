"""Issue 12's definition of a misleading block's way out, counted for ``bench/adaptivity.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from truthgen import Subject

from elfmem.api import MemorySystem

WIDE = 50
"""How far down the issue's count looks for relevant blocks without negative evidence."""


@dataclass
class IssueCount:
    """Issue 12's own definition of a misleading block's way out: it ranks below every relevant
    block without negative evidence (so it leaves the top 5 when five such blocks exist).

    "Relevant" is recall's relevant tier (what bears on the question; the refuted tier ranks
    below all of it); "without negative evidence" is a block that never drew a 0.0, flipped or
    not. A right block that drew a mistaken 0.0 is not one, and a distractor that bears on the
    question is. A block is counted once it was out of place (in the top 5 above such a block),
    at the first measurement where it no longer is.
    """

    obsolete: set[str]
    before_correction: dict[str, int]
    out_of_place: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)


async def issue_count(
    system: MemorySystem,
    s: Subject,
    top: list[Any],
    wrong: list[str],
    negatives: dict[str, int],
    issue: IssueCount,
    counts: dict[str, list[int]],
) -> None:
    """One measurement of one subject: mark what is out of place, count what just stopped being
    (into ``counts`` by kind)."""
    shown = [b.id for b in top if b.tier != "refuted"]
    clean_below = {
        w: any(negatives.get(b, 0) == 0 for b in shown[shown.index(w) + 1 :])
        for w in wrong
        if w in shown
    }
    for w, known in clean_below.items():
        if known and w not in issue.done:
            issue.out_of_place.add(w)
    pending = [w for w in wrong if w not in issue.done and not clean_below.get(w, False)]
    pending = [w for w in pending if w in issue.out_of_place or w in shown]
    if not pending:
        return
    wide = await system.recall(s.question, top_k=WIDE, reinforce=False)
    order = [b.id for b in wide.blocks if b.tier != "refuted"]
    last_clean = max((i for i, b in enumerate(order) if negatives.get(b, 0) == 0), default=-1)
    for w in pending:
        below = w not in order or order.index(w) > last_clean
        if not below:
            issue.out_of_place.add(w)
        elif w in issue.out_of_place:
            issue.done.add(w)
            kind = "obsolete" if w in issue.obsolete else "misleading"
            n = negatives.get(w, 0) - issue.before_correction.get(w, 0)
            counts.setdefault(kind, []).append(n)
