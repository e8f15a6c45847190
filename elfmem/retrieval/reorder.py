"""The step that reorders a query's candidates after fusion: temporal contiguity.

It runs only where rank fusion does (short blocks: turns, facts), and it never adds a candidate:
it changes the relevance of blocks the lexical or dense search already returned (``contiguity``),
so the relevance gate stays where fusion put it. Lexical feedback over the same candidates was
measured too and is not shipped (docs/decisions/0016-short-block-fusion.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from elfmem.index import IndexDB, queries
from elfmem.retrieval import contiguity, fusechoice

if TYPE_CHECKING:
    from elfmem.retrieval.settings import SearchSettings


def by_rank(db: IndexDB, lexical: Sequence[str], fuse_by: str) -> bool:
    """Whether fusion ranked by rank for this lexical ranking (``fusechoice.chosen``): short
    blocks, not long documents. With no lexical hit there is nothing to reorder by."""
    return bool(lexical) and fusechoice.chosen(db, lexical, fuse_by) == "rrf"


def reorder(
    db: IndexDB, lexical: Sequence[str], sims: dict[str, float], s: SearchSettings
) -> dict[str, float]:
    """``sims`` after temporal contiguity, when its knob is on."""
    if s.contiguity <= 0 or s.contiguity_from <= 0 or not by_rank(db, lexical, s.fuse_by):
        return sims
    shape = (s.contiguity_from, s.contiguity_span)
    contiguity.lift(sims, queries.places(db, list(sims)), s.contiguity, shape)
    return sims
