"""The one clock an open memory reads: wall time by default, a driven one for simulations.

Decay, reinforcement, sessions, block ``created`` stamps and ledger event times all come from
``Core.clock``. A product run never sets it and reads the wall clock. A benchmark or a test
passes a ``SimulatedClock`` (``MemorySystem.init(..., clock=...)``) so that a run's scores do
not depend on how fast the machine was: two runs of the same code then rank the same way.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime
from typing import Protocol


class Clock(Protocol):
    def time(self) -> float:
        """Seconds since the epoch, like ``time.time()``."""
        ...


class WallClock:
    """The real clock."""

    def time(self) -> float:
        return time.time()


WALL = WallClock()


class SimulatedClock:
    """A clock that moves only when told to, plus ``tick`` seconds per read.

    The tick keeps stamps strictly increasing, as the wall clock's are between two writes, so
    "the later event" stays well defined (the ledger orders events by time, then id). The
    caller moves time with ``advance``: a simulated agent's step, a night between sessions.
    """

    def __init__(self, start: float, tick: float = 0.001) -> None:
        if tick <= 0:
            raise ValueError("tick must be positive: stamps must keep increasing")
        self._now = float(start)
        self.tick = tick

    def time(self) -> float:
        self._now += self.tick
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock does not run backwards")
        self._now += seconds


def iso_seconds(clock: Clock) -> str:
    """A block's ``created`` stamp: UTC, to the second."""
    return datetime.fromtimestamp(clock.time(), UTC).replace(microsecond=0).isoformat()


def iso_micros(clock: Clock) -> str:
    """A ledger event's ``ts``: UTC, to the microsecond."""
    return datetime.fromtimestamp(clock.time(), UTC).isoformat(timespec="microseconds")


def today(clock: Clock) -> date:
    return datetime.fromtimestamp(clock.time(), UTC).date()
