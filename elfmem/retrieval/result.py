"""What a frame returns: the rendered text and everything needed to see why it says what it says."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ScoredBlock:
    """One ranked block, the score it was ranked by and the five components behind it.

    ``score`` is what placed the block (for relevant blocks the diversity-adjusted gain, so it
    falls down the list within a tier). ``similarity`` is the block's relevance to the query:
    rank-shaped (RRF normalised so the top is 1.0) when the lexical search found anything, raw
    cosine when it found nothing, inherited along an edge for graph neighbours and revisions, and
    1.0 in queryless frames. Use rank order, not these numbers, as a weight.
    """

    id: str
    content: str
    tags: tuple[str, ...]
    cue: str
    status: str
    score: float
    similarity: float
    confidence: float
    recency: float
    centrality: float
    reinforcement: float
    guaranteed: bool = False
    via: str = "search"
    """How it became a candidate: search, expansion (1-hop neighbour), revision (the newer end
    of a revision of a candidate), guarantee or scan."""
    composite: float = 0.0
    """Relevance × evidence × lift after the revision rule: the score before diversity."""
    tier: str = "relevant"
    """guaranteed, relevant, or refuted (shown only when fewer than k others bear on the
    query)."""
    outcome_balance: float = 0.0
    """Confirming minus refuting outcomes (α − β); below −2 the block counts as refuted."""
    note: str = ""
    """What a reader must know: "superseded by [id]", "refuted by outcomes", "in the inbox…"."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tags"] = list(self.tags)
        return data


@dataclass(frozen=True)
class FrameResult:
    frame: str
    """The frame's name, e.g. ``self``, ``attention`` or ``task``."""
    query: str | None
    text: str
    """The rendered frame the agent reads: the header, then the blocks that fit the budget."""
    blocks: list[ScoredBlock]
    """The blocks rendered into ``text``, in rank order."""
    ranked: list[ScoredBlock]
    """The top-k before the token budget cut anything."""
    dropped: list[dict[str, str]] = field(default_factory=list)
    """Ranked blocks left out of ``text``: ``{"id", "reason", "guaranteed"}``."""
    budget_used: int = 0
    """Estimated tokens of the header and blocks kept; a too-big top block is kept and overruns."""
    budget_total: int = 0
    """The frame's token budget."""
    excluded_by_filter: int = 0
    """Active blocks the frame's tag filters kept out (excluded, or not in its include list)."""
    candidates: int = 0
    """Blocks considered and scored before the top-k cut (those that bear on the query)."""
    at: str | None = None
    bearing: int = 0
    """Candidates that bear on the query, guaranteed blocks aside."""
    shortfall: str = ""
    """Set when fewer blocks bear on the query than the top-k asked for, or none at all: recall
    returns fewer, never pads (empty when k was the frame's default and some bear)."""
    filtered: bool = False
    """True when the frame's tag filters are the caller's, not a built-in frame's own."""

    @property
    def overrun(self) -> bool:
        return self.budget_used > self.budget_total

    @property
    def guaranteed_dropped(self) -> list[str]:
        return [d["id"] for d in self.dropped if d.get("guaranteed") == "yes"]

    @property
    def summary(self) -> str:
        excluded = self.excluded_by_filter if self.filtered else 0
        return (
            f"{self.frame}: {len(self.blocks)} blocks, "
            f"{self.budget_used}/{self.budget_total} tokens, {len(self.dropped)} dropped"
            + (f", {excluded} excluded by filter" if excluded else "")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "frame": self.frame,
            "query": self.query,
            "text": self.text,
            "blocks": [b.to_dict() for b in self.blocks],
            "ranked_ids": [b.id for b in self.ranked],
            "dropped": list(self.dropped),
            "budget_used": self.budget_used,
            "budget_total": self.budget_total,
            "excluded_by_filter": self.excluded_by_filter,
            "candidates": self.candidates,
            "at": self.at,
            "bearing": self.bearing,
            "shortfall": self.shortfall,
            "summary": self.summary,
        }

    def __str__(self) -> str:
        return self.text
