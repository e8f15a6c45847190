"""Temporal contiguity among candidates: a block captured right next to a strong hit may rise.

Episodic memory recalls by neighbourhood in time as well as by content: the turn that answers a
question often sits next to the turn that names its subject ("did you go to the workshop?" / "yes,
we made bowls"). After fusion, each of the ``CONTIGUITY_FROM`` best-ranked blocks passes
``CONTIGUITY`` of its relevance to the blocks within ``CONTIGUITY_SPAN`` places of it in its bucket
file (the order they were written in), when the two were created within ``CONTIGUITY_SECONDS`` of
each other.

A neighbour rises only if it already bears on the query by itself: it must be a candidate of the
first pass, with a relevance of its own above zero. Contiguity never makes a block a candidate,
so a memory of unrelated facts captured in one batch never pads a one-fact answer with the facts
written next to it (the relevance gate, tests/api/test_truth.py). A version that let neighbours
in as new candidates was measured and not merged for that reason
(docs/decisions/0016-short-block-fusion.md).

It is bounded: a neighbour's relevance only ever rises to the inherited value, never above the
share of the hit it sits next to, and no block's relevance falls. Only among short blocks (the
pipeline applies it where rank fusion runs): the neighbour of a long document is another whole
session, not the next turn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime

from elfmem.errors import InvalidInput

CONTIGUITY = 0.5
"""Share of a top hit's relevance its neighbours in capture order inherit; 0: off.
Leave-one-conversation-out on the LoCoMo dev file, one setting for both forms (with and without the
date in the cue), chose 0.5 at span 2 in all five folds, from {0, 0.5} × spans {2, 3} (with lexical
feedback {0, 0.4} in the grid it chose 0.5 at span 2 too, beside lexical feedback 0.4, which is
not shipped: docs/decisions/0016-short-block-fusion.md)."""
CONTIGUITY_FROM = 3
"""How many of the best-ranked blocks pass relevance to their neighbours (3: the earlier pass
measured it ahead of 1 and 5)."""
CONTIGUITY_SPAN = 2
"""How many places either side of a hit in its file count as next to it (2 chosen over 3; 1 was
probed lower)."""
CONTIGUITY_SECONDS = 3600.0
"""Two blocks created further apart than this are not neighbours in time, whatever their places
(a bucket file collects a month of captures). Not tuned: every turn of a benchmark memory is
captured in the same second."""

Place = tuple[str, int, str]
"""Where a block sits: (file path, ordinal in the file, created stamp)."""


def _stamp(created: str) -> float | None:
    try:
        return datetime.fromisoformat(created).timestamp()
    except ValueError:
        return None


def close_in_time(a: str, b: str, seconds: float) -> bool:
    """The two ``created`` stamps are at most ``seconds`` apart (False if either is unreadable)."""
    ta, tb = _stamp(a), _stamp(b)
    return ta is not None and tb is not None and abs(ta - tb) <= seconds


def lift(
    sims: dict[str, float],
    places: Mapping[str, Place],
    share: float,
    shape: tuple[int, int],
    seconds: float = CONTIGUITY_SECONDS,
) -> list[str]:
    """Raise each candidate next to one of the ``shape[0]`` best blocks of ``sims`` (within
    ``shape[1]`` places in the same file, created within ``seconds``) to ``share`` × that block's
    relevance where that is higher than its own; return the blocks raised, in order.

    Only blocks that are keys of ``sims`` with a relevance above zero and a known place can rise:
    nothing becomes a candidate here. Relevance is inherited from the values before any lift, so
    a raised block passes nothing on.
    """
    if not (math.isfinite(share) and 0.0 <= share <= 1.0):
        raise InvalidInput(f"contiguity share must be in [0, 1], got {share!r}", "Use 0.5.")
    top, span = shape
    if share == 0 or top <= 0 or span <= 0:
        return []
    before = dict(sims)
    hits = [b for b in sorted(before, key=lambda b: -before[b])[:top] if before[b] > 0]
    by_file: dict[str, dict[int, str]] = {}
    for block_id, (path, ordinal, _) in places.items():
        if before.get(block_id, 0.0) > 0:
            by_file.setdefault(path, {})[ordinal] = block_id
    raised: list[str] = []
    for hit in (h for h in hits if h in places):
        inherited = share * before[hit]
        for other in _beside(hit, places, by_file, span, seconds):
            if inherited > sims[other]:
                sims[other] = inherited
                if other not in raised:
                    raised.append(other)
    return raised


def _beside(
    hit: str,
    places: Mapping[str, Place],
    by_file: Mapping[str, Mapping[int, str]],
    span: int,
    seconds: float,
) -> list[str]:
    """The blocks of ``by_file`` within ``span`` places of ``hit`` in its file and within
    ``seconds`` of it in time, nearest first (the earlier one first at equal distance)."""
    path, ordinal, created = places[hit]
    in_file = by_file.get(path, {})
    out = []
    for offset in (d for step in range(1, span + 1) for d in (-step, step)):
        other = in_file.get(ordinal + offset)
        if other is not None and close_in_time(created, places[other][2], seconds):
            out.append(other)
    return out
