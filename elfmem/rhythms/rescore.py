"""Deep sleep (``dream --rescore``): judge aged active blocks again against the current SELF.

Identity drifts, so a judgement made months ago may no longer hold. A block is aged when it has
never been judged or its latest judgement is at least ``after_hours`` active hours old (the
session clock, so time away does not age anything). Each re-judgement is a new ``analysis``
event marked ``rescore``; tags the model adds join the block's (none is ever removed). Without a
model nothing can be judged, so deep sleep then only refreshes the blocks' semantic edges.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field

from elfmem.block.model import Block
from elfmem.index import queries
from elfmem.index.queries import is_identity
from elfmem.progress import Progress
from elfmem.retrieval.decay import active_hours_at
from elfmem.rhythms.core import Core
from elfmem.rhythms.judgement import Judge, Judgement

RESCORE_AFTER_HOURS = 40.0
"""A judgement younger than this many active hours (about a working week) is still fresh."""


@dataclass
class Rescore:
    """What one deep-sleep pass decided; dream writes it with the rest of its run."""

    blocks: list[Block] = field(default_factory=list)
    """Every block re-evaluated (the sources of refreshed semantic edges)."""
    judgements: dict[str, Judgement] = field(default_factory=dict)
    retag: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Block id → its tags with the new ones appended, for blocks that gained a tag."""
    note: str = ""


def aged_blocks(
    core: Core,
    *,
    limit: int | None,
    after_hours: float = RESCORE_AFTER_HOURS,
    only: Collection[str] | None = None,
    skip: Collection[str] = (),
) -> list[Block]:
    """Active non-identity blocks due for a new judgement: never judged first, then the oldest.

    ``only`` restricts the choice to blocks someone asked about (host analyses), which are due
    whatever their age; ``skip`` are blocks leaving the active set in this run.
    """
    rows = [
        r
        for r in queries.list_blocks(core.db(), status="active")
        if not is_identity(r) and r.id not in skip and (only is None or r.id in only)
    ]
    folds = core.ledger.folded_many(r.id for r in rows)
    last = [folds[r.id].last_analysis for r in rows]
    positions = iter(active_hours_at(core.ledger.intervals(), [t for t in last if t is not None]))
    now = core.ledger.now_hours()
    ages = [math.inf if t is None else now - float(next(positions)) for t in last]
    due = [
        (age, row)
        for age, row in zip(ages, rows, strict=True)
        if only is not None or age >= after_hours
    ]
    due.sort(key=lambda p: (-p[0], p[1].created, p[1].id))
    chosen = due if limit is None else due[:limit]
    return [row.to_block() for _, row in chosen]


def rescore(
    core: Core,
    judge: Judge | None,
    *,
    limit: int | None,
    after_hours: float = RESCORE_AFTER_HOURS,
    only: Collection[str] | None = None,
    skip: Collection[str] = (),
    progress: Progress | None = None,
) -> Rescore:
    """Re-judge the aged blocks (one call each), or, with no ``judge``, only pick them."""
    blocks = aged_blocks(core, limit=limit, after_hours=after_hours, only=only, skip=skip)
    out = Rescore(blocks=blocks)
    if judge is None:
        if progress is not None:
            progress("rescore", len(blocks), len(blocks))  # nothing to judge, one step
        out.note = (
            f"rescore without an LLM: {len(blocks)} aged blocks kept their judgements; only "
            "their semantic edges were refreshed"
        )
        return out
    if progress is not None:
        progress("rescore", 0, len(blocks))
    for done, block in enumerate(blocks, 1):
        verdict = judge(block, [])
        out.judgements[block.id] = verdict
        new_tags = [t for t in verdict.tags if t not in block.tags]
        if new_tags:
            out.retag[block.id] = (*block.tags, *new_tags)
        if progress is not None:
            progress("rescore", done, len(blocks))
    out.note = f"rescored {len(blocks)} aged blocks against the current SELF"
    return out
