"""What a frame returns: each ranked block with its score parts, packed into the token budget.

The last step of the pipeline (``pipeline.run_frame``): it renders the header and the blocks in
rank order, keeps what fits the frame's budget, says which blocks were dropped and why, and says
so when fewer than k blocks bear on the query rather than padding the answer.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from elfmem.index.queries import BlockRow
from elfmem.retrieval import budget as budget_mod
from elfmem.retrieval.frames import FrameSpec
from elfmem.retrieval.ranking import Ranked
from elfmem.retrieval.render import RenderItem, render_frame, render_header, render_item
from elfmem.retrieval.result import FrameResult, ScoredBlock
from elfmem.retrieval.state import BlockState


def scored(
    row: BlockRow,
    raw: Mapping[str, npt.NDArray[np.float64]],
    state: BlockState,
    r: Ranked,
    via: str,
) -> ScoredBlock:
    i = r.index
    return ScoredBlock(
        id=row.id,
        content=row.content,
        tags=row.tags,
        cue=row.cue,
        status=row.status,
        score=round(r.score, 6),
        similarity=round(float(raw["similarity"][i]), 6),
        confidence=round(float(raw["confidence"][i]), 6),
        recency=round(float(raw["recency"][i]), 6),
        centrality=round(float(raw["centrality"][i]), 6),
        reinforcement=round(float(raw["reinforcement"][i]), 6),
        guaranteed=r.tier == "guaranteed",
        via=via,
        composite=round(r.composite, 6),
        tier=r.tier,
        outcome_balance=round(state.alpha - state.beta, 6),
        note=r.note,
    )


def packed(
    spec: FrameSpec,
    query: str | None,
    ranked: list[ScoredBlock],
    agent_name: str,
    self_text: str | None,
    excluded: int,
    candidates: int,
    bearing: int,
    k: int,
    said: Mapping[str, str],
) -> FrameResult:
    """The ranked blocks packed into the frame's token budget, with its header and the
    shortfall. ``said`` holds the dates to show: those of a question that asks when or names a
    time."""
    header = render_header(spec, agent_name, self_text)
    header_tokens = budget_mod.count_tokens(header)
    items = {
        b.id: RenderItem(b.id, b.content, b.tags, b.cue, b.note, said.get(b.id, "")) for b in ranked
    }
    sized = [
        (b.id, budget_mod.count_tokens(render_item(spec, items[b.id], n)))
        for n, b in enumerate(ranked, 1)
    ]
    packed = budget_mod.pack(sized, max(1, spec.budget - header_tokens)) if sized else None
    kept = set(packed.kept) if packed else set()
    blocks = [b for b in ranked if b.id in kept]
    text = render_frame(spec, agent_name, [items[b.id] for b in blocks], self_text)
    by_id = {b.id: b for b in ranked}
    dropped = [
        {"id": i, "reason": why, "guaranteed": "yes" if by_id[i].guaranteed else "no"}
        for i, why in (packed.dropped if packed else [])
    ]
    return FrameResult(
        frame=spec.name,
        query=query,
        text=text,
        blocks=blocks,
        ranked=ranked,
        dropped=dropped,
        budget_used=header_tokens + (packed.used if packed else 0),
        budget_total=spec.budget,
        excluded_by_filter=excluded,
        candidates=candidates,
        bearing=bearing,
        shortfall=shortfall(spec, query, bearing, k),
    )


def shortfall(spec: FrameSpec, query: str | None, bearing: int, k: int) -> str:
    """Say so when fewer than k blocks bear on the query, rather than padding the answer."""
    if spec.queryless or not (query or "").strip() or bearing >= k:
        return ""
    if bearing == 0:
        return "Nothing in memory bears on this query."
    return f"Only {bearing} of the {k} blocks asked for bear on this query."
