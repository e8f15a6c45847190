"""``Result``, the base of every operation's typed result, in a module of its own.

Every command opens a memory through modules whose results derive from it (``status``, the
reconciliation check, plain git's notes merge); keeping it apart from the rhythms' own results
(``results.py``, ten dataclasses) spares each of those commands building classes it never uses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Result:
    """Base: ``summary`` is one human line; ``to_dict()`` is the stable JSON shape."""

    @property
    def summary(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["summary"] = self.summary
        return data

    def __str__(self) -> str:
        return self.summary
