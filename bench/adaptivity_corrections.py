"""Corrections in ``bench/adaptivity.py``: right ones shown first, wrong ones falling back, and
the block a wrong correction tried to replace winning back the top place."""

from __future__ import annotations

import truthgen
from adaptivity_report import CorpusResult


def corrections_seen(
    s: truthgen.Subject,
    ids: list[str],
    corrections: dict[str, tuple[str, str, bool]],
    first_after: set[str],
    later: dict[str, list[bool]],
    out: CorpusResult,
) -> None:
    if s.name not in corrections or not corrections[s.name][2]:
        return
    new, old, _ = corrections[s.name]
    top1 = bool(ids) and ids[0] == new and (old not in ids or ids.index(old) > 0)
    out.correction_rounds.append((s.kind, s.family, top1))
    if s.name not in first_after:
        first_after.add(s.name)
        out.correction_first.append(top1)
    else:
        later.setdefault(s.name, []).append(top1)


def fell_back(
    s: truthgen.Subject,
    ids: list[str],
    corrections: dict[str, tuple[str, str, bool]],
    negatives: dict[str, int],
    back: set[str],
    out: CorpusResult,
    at_bound: dict[str, int],
) -> bool:
    """Record a wrong correction's fall below the block it tried to replace; True when it took
    more than 3 negatives (a case to trace)."""
    if s.name not in corrections or corrections[s.name][2]:
        return False
    new, old, _ = corrections[s.name]
    negatives.setdefault(new, 0)
    if new in back:
        return False
    below = new not in ids or (old in ids and ids.index(old) < ids.index(new))
    if below:
        back.add(new)
        out.wrong_correction_negatives.append(negatives[new])
        if negatives[new] > 3 and at_bound.get(new, 0) >= 3:
            out.record_at_bound["wrong"] = out.record_at_bound.get("wrong", 0) + 1
        return negatives[new] > 3
    return False


def older_top1(
    s: truthgen.Subject,
    ids: list[str],
    r: int,
    corrections: dict[str, tuple[str, str, bool]],
    back: set[str],
    fell_at: dict[str, int],
    out: CorpusResult,
) -> None:
    """Rounds from a wrong correction's fall below the older block until that block (still the
    right answer) is first again: counted once, in the first round it is."""
    if s.name not in corrections or corrections[s.name][2]:
        return
    new, old, _ = corrections[s.name]
    if new in back:
        fell_at.setdefault(new, r)
    if new not in fell_at or new in out.older_top1_rounds:
        return
    if ids and ids[0] == old:
        out.older_top1_rounds[new] = r - fell_at[new]


async def older_final_rank(
    system: object, s: truthgen.Subject, old: str, out: CorpusResult
) -> None:
    """Where the older block of a wrong correction ranks after the last round (0: not in the
    first ``WIDE``)."""
    wide = await system.recall(s.question, top_k=WIDE, reinforce=False)  # type: ignore[attr-defined]
    ids = [b.id for b in wide.blocks]
    out.older_final_rank.append(ids.index(old) + 1 if old in ids else 0)


WIDE = 50
