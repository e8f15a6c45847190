"""Corpus review: deterministic staleness over active knowledge, as proposals a person can apply.

Each active block (never a constitutional or pinned one) is checked for six signs of staleness:
superseded by a live block, refuted by outcomes (recall's own rule, ``truth.is_refuted``),
contested by outcomes (``truth.is_contested``: refuted as often as confirmed), contradicted by a
live block, old and never used, or simply low confidence. The first two are proposed for
archiving; the rest for a re-check, since only a person or the agent can say whether they still
hold. ``apply`` archives the archive proposals in one commit that ``undo`` reverts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from elfmem.block.text import preview
from elfmem.index import queries
from elfmem.retrieval import truth
from elfmem.retrieval.confidence import beta_evidence, beta_mean
from elfmem.retrieval.state import BlockState
from elfmem.rhythms.adaptive import declared_degree
from elfmem.rhythms.core import Core
from elfmem.rhythms.curate import archive_blocks
from elfmem.rhythms.results import Result

OLD_HOURS = 200.0
"""Active (session) hours since last use past which a never-reinforced block is old."""
LOW_BELOW = 0.4
MIN_EVIDENCE = 1.0
"""Outcome weight a confidence must rest on before it counts as low (the prior alone is 0.5)."""
CORPUS_OP = "review-corpus"


@dataclass(frozen=True)
class CorpusReview(Result):
    proposals: list[dict[str, Any]] = field(default_factory=list)
    """``{block_id, action, reason, content}``; action ``archive`` or ``recheck``."""
    checked: int = 0
    """Active blocks examined (constitutional and pinned ones are never proposed)."""
    commit_id: str | None = None
    """With ``apply``: the commit that archived the ``archive`` proposals."""

    @property
    def summary(self) -> str:
        archive = sum(p["action"] == "archive" for p in self.proposals)
        done = f"; archived in {self.commit_id[:12]}" if self.commit_id else ""
        head = (
            f"review corpus: {self.checked} active blocks, {archive} to archive, "
            f"{len(self.proposals) - archive} to re-check{done}"
        )
        lines = [
            f"  {p['action']:<8} {p['block_id']}  {p['reason']} - {preview(p['content'])}"
            for p in self.proposals
        ]
        return "\n".join([head, *lines])


def _claim_refuted(core: Core, newer: str, older: BlockState) -> bool:
    """Outcomes refuted the correction: the block it named stands on its own record again."""
    folded = core.ledger.folded(newer)
    return truth.claim_refuted(BlockState(alpha=folded.alpha, beta=folded.beta), older, newer)


def _reasons(core: Core, rows: list[queries.BlockRow]) -> dict[str, tuple[str, str]]:
    live = [r for s in ("inbox", "active") for r in queries.list_blocks(core.db(), status=s)]
    superseded = {t: r.id for r in live for k, t in r.relations if k == "supersedes"}
    contradicted = {t: r.id for r in live for k, t in r.relations if k == "contradicts"}
    contradicted |= {r.id: t for r in live for k, t in r.relations if k == "contradicts"}
    states = core.ledger.states(rows, declared_degree(core.db(), [r.id for r in rows]))
    out: dict[str, tuple[str, str]] = {}
    for row in rows:
        st = states[row.id]
        conf = beta_mean(st.alpha, st.beta)
        evidence = beta_evidence(st.alpha, st.beta)
        if row.id in superseded and not _claim_refuted(core, superseded[row.id], st):
            out[row.id] = ("archive", f"superseded by {superseded[row.id]}")
        elif truth.is_refuted(st):  # as recall and curate: two mistaken 0.0s archive nothing
            out[row.id] = ("archive", f"refuted (confidence {conf:.2f})")
        elif truth.is_contested(st):
            out[row.id] = (
                "recheck",
                f"contested: confirmed {st.confirmed:g} times, refuted {st.refuted:g} times",
            )
        elif row.id in contradicted:
            out[row.id] = ("recheck", f"contradicted by {contradicted[row.id]}")
        elif st.hours_since_use > OLD_HOURS and st.reinforcements == 0:
            out[row.id] = ("recheck", f"unused for {st.hours_since_use:.0f} active hours")
        elif conf < LOW_BELOW and evidence >= MIN_EVIDENCE:
            out[row.id] = ("recheck", f"low confidence ({conf:.2f})")
    return out


def review_corpus(core: Core, apply: bool = False) -> CorpusReview:
    core.sync()
    rows = [
        r
        for r in queries.list_blocks(core.db(), status="active")
        if not r.pinned and "self/constitutional" not in r.tags
    ]
    found = _reasons(core, rows)
    by_id = {r.id: r for r in rows}
    proposals = [
        {"block_id": b, "action": a, "reason": why, "content": by_id[b].content}
        for b, (a, why) in found.items()
    ]
    archive = {p["block_id"]: p["reason"] for p in proposals if p["action"] == "archive"}
    commit_id = (
        archive_blocks(core, archive, CORPUS_OP, "review corpus") if apply and archive else None
    )
    return CorpusReview(proposals, len(rows), commit_id)
