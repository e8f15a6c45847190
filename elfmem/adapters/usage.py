"""Token accounting: what the model calls of one run cost, read from the SDKs' usage fields.

Providers bill by tokens, so every result that called a model says how many it used. Each
adapter keeps a running total (a ``Meter``); a run reads it before and after (``tokens_since``)
instead of threading counters through every layer. A model that reports nothing (a scripted fake,
a local server without usage) counts calls only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class Usage:
    """Tokens in and out, Anthropic's prompt-cache reads and writes, and the number of calls."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def __sub__(self, other: Usage) -> Usage:
        return Usage(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, int]:
        """The ``tokens`` object of results and ``--json`` (keys: ``results.TOKEN_KEYS``)."""
        return asdict(self)


class Meter:
    """The running total an adapter adds each call's usage to."""

    def __init__(self) -> None:
        self.total = Usage()

    def add(
        self,
        input: int | None,
        output: int | None,
        cache_read: int | None = 0,
        cache_creation: int | None = 0,
    ) -> None:
        """Count one call; ``None`` fields from a server that omits them count as zero."""
        self.total = self.total + Usage(
            int(input or 0), int(output or 0), int(cache_read or 0), int(cache_creation or 0), 1
        )


def usage_of(llm: object) -> Usage:
    """What ``llm`` has used so far; zero for a model without a ``usage`` meter."""
    meter = getattr(llm, "usage", None)
    return meter.total if isinstance(meter, Meter) else Usage()


def tokens_since(llm: object, before: Usage) -> dict[str, int]:
    """The ``tokens`` object of a run that began when ``llm`` had used ``before``."""
    return (usage_of(llm) - before).as_dict()
