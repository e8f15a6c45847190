"""Session-aware decay: recency as exp(-λ·h), where h counts only hours the memory was in use.

A fortnight away must not cost the agent what it learned, so the clock that drives decay
is the union of recorded session intervals, not the wall clock. The clock belongs to the memory, not
to one agent: clones merge their intervals by union and their clocks stay comparable.
Intervals are wall-clock seconds (POSIX time); an open session is passed with ``now`` as its end.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from elfmem.errors import InvalidInput
from elfmem.lazyload import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
else:
    np = lazy_module("numpy")

SECONDS_PER_HOUR = 3600.0
PENALTY_LAMBDA_CAP = 0.05
"""The fastest decay a penalised block can reach: the ephemeral tier's λ."""

_MAX_DOUBLINGS = 64  # 2**64 times any positive λ worth storing is far past the cap

Interval = tuple[float, float]


def recency(hours_since_use: npt.ArrayLike, lam: npt.ArrayLike) -> FloatArray:
    """exp(-λ·h) per block, h in active hours since the block was last used.

    A negative h (a last use stamped after ``now`` by a clone's skewed clock) counts as "just
    used" rather than as a freshness above 1.
    """
    hours = np.asarray(hours_since_use, dtype=np.float64)
    lams = np.asarray(lam, dtype=np.float64)
    if not (np.all(np.isfinite(hours)) and np.all(np.isfinite(lams))):
        raise InvalidInput(
            "recency needs finite hours and decay rates",
            "Check the session intervals and block tiers that produced them.",
        )
    if np.any(lams < 0):
        raise InvalidInput(
            "a decay rate λ cannot be negative",
            "Use a tier λ from elfmem.block.model.TIER_LAMBDA.",
        )
    return np.asarray(np.exp(-lams * np.maximum(hours, 0.0)), dtype=np.float64)


def effective_lambda(base_lambda: float, penalties: int, cap: float = PENALTY_LAMBDA_CAP) -> float:
    """λ after ``penalties`` outcomes below the penalise threshold: doubled each time, capped.

    The result is never below the tier's own λ, so a cap smaller than a tier's λ cannot slow
    that block down. No tier is exempt here: keeping constitutional blocks out of outcome scoring
    (and so out of penalties) is the outcome rhythm's rule, and a caller who passes
    ``allow_constitutional`` means the penalty to apply.
    """
    if not (math.isfinite(base_lambda) and base_lambda >= 0):
        raise InvalidInput(
            f"base λ must be a finite number ≥ 0, got {base_lambda!r}",
            "Use a tier λ from elfmem.block.model.TIER_LAMBDA.",
        )
    if penalties < 0:
        raise InvalidInput(
            f"a penalty count cannot be negative, got {penalties}",
            "Count only outcome events whose signal fell in the penalise band.",
        )
    if not (math.isfinite(cap) and cap > 0):
        raise InvalidInput(f"the λ cap must be finite and > 0, got {cap!r}", "Pass cap=0.05.")
    scaled = base_lambda * 2.0 ** min(penalties, _MAX_DOUBLINGS)
    return max(base_lambda, min(scaled, cap))


def merge_intervals(intervals: Iterable[Interval]) -> list[Interval]:
    """The union of session intervals as sorted, disjoint ``(start, end)`` pairs.

    Overlapping and touching intervals join; empty ones (start == end) vanish. Two clones that
    recorded the same session therefore add nothing by merging.
    """
    checked: list[Interval] = []
    for start, end in intervals:
        if not (math.isfinite(start) and math.isfinite(end)):
            raise InvalidInput(
                f"session interval ({start!r}, {end!r}) is not finite",
                "Close open sessions with the current time before computing the clock.",
            )
        if end < start:
            raise InvalidInput(
                f"session interval ends before it starts: ({start}, {end})",
                "Record sessions as (start, end) in wall-clock seconds with end ≥ start.",
            )
        if end > start:
            checked.append((float(start), float(end)))
    checked.sort()
    merged: list[Interval] = []
    for start, end in checked:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def active_hours_at(intervals: Iterable[Interval], times: npt.ArrayLike) -> FloatArray:
    """Active hours accumulated from the first session up to each wall-clock time in ``times``.

    Vectorised so that one call gives every block's clock position: the hours between two times
    are the difference of their positions.
    """
    at = np.asarray(times, dtype=np.float64)
    if not np.all(np.isfinite(at)):
        raise InvalidInput("clock times must be finite", "Pass POSIX seconds.")
    merged = merge_intervals(intervals)
    if not merged:
        return np.zeros_like(at)
    starts = np.array([s for s, _ in merged], dtype=np.float64)
    ends = np.array([e for _, e in merged], dtype=np.float64)
    before = np.concatenate(([0.0], np.cumsum(ends - starts)[:-1]))
    idx = np.searchsorted(starts, at, side="right") - 1
    inside = idx >= 0
    safe = np.where(inside, idx, 0)
    partial = np.minimum(at, ends[safe]) - starts[safe]
    seconds = np.where(inside, before[safe] + partial, 0.0)
    return np.asarray(seconds / SECONDS_PER_HOUR, dtype=np.float64)


def active_hours(intervals: Iterable[Interval], until: float) -> float:
    """Total active hours of the memory, counting only time before ``until``.

    ``active_hours_at`` for one time, in plain Python and to the same bit: ``status`` and
    ``remember`` ask for the clock's position and nothing else numpy would compute for them.
    """
    if not math.isfinite(until):
        raise InvalidInput("clock times must be finite", "Pass POSIX seconds.")
    merged = merge_intervals(intervals)
    at = bisect.bisect_right([start for start, _ in merged], until) - 1
    if at < 0:
        return 0.0
    before = 0.0
    for start, end in merged[:at]:
        before += end - start
    start, end = merged[at]
    return (before + (min(until, end) - start)) / SECONDS_PER_HOUR


def active_hours_between(intervals: Iterable[Interval], t0: float, t1: float) -> float:
    """Active hours inside the wall-clock window [t0, t1]; 0.0 when t1 ≤ t0 (clock skew)."""
    pos = active_hours_at(intervals, [t0, t1])
    return max(0.0, float(pos[1] - pos[0]))


def hours_since(intervals: Iterable[Interval], last_used: npt.ArrayLike, now: float) -> FloatArray:
    """Active hours from each block's last use (wall-clock seconds) to ``now``, never negative."""
    used = np.asarray(last_used, dtype=np.float64)
    pos = active_hours_at(intervals, np.append(used.ravel(), now))
    return np.asarray(np.maximum(pos[-1] - pos[:-1], 0.0).reshape(used.shape), dtype=np.float64)
