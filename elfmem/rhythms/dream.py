"""Breathing: consolidate the inbox. Embed, drop true duplicates, link look-alikes, promote.

Duplicates must never cost a fact. Without an LLM only a true duplicate is dropped (archived with
``duplicate-of``): the same normalised text, or a near-identical vector whose numbers, names and
negations all match. A look-alike that differs in any of those is promoted and linked to its twin
with a ``similar`` edge in the ledger, so a person (or a later LLM pass) can review the pair; the
newer block is never discarded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from elfmem.block.facts import differences
from elfmem.block.layout import month_of
from elfmem.block.model import Block
from elfmem.index import queries, vector_store
from elfmem.rhythms.capture import locate
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result
from elfmem.store import FileEdit, MemoryView, Plan

DUPLICATE_COSINE = 0.95
LOOKALIKE_COSINE = 0.90


@dataclass(frozen=True)
class DreamResult(Result):
    processed: int
    promoted: list[str] = field(default_factory=list)
    duplicates: list[dict[str, str]] = field(default_factory=list)
    lookalikes: list[dict[str, object]] = field(default_factory=list)
    inbox_remaining: int = 0
    commit_id: str | None = None
    mode: str = "deterministic"
    note: str = ""

    @property
    def summary(self) -> str:
        if not self.processed:
            return "Inbox empty; nothing to consolidate."
        return (
            f"Dreamed over {self.processed} blocks ({self.mode}): {len(self.promoted)} promoted, "
            f"{len(self.duplicates)} duplicates archived, {len(self.lookalikes)} look-alikes linked "
            f"for review; {self.inbox_remaining} still in the inbox."
        )


@dataclass
class _Decision:
    promoted: list[Block] = field(default_factory=list)
    duplicates: list[tuple[Block, str]] = field(default_factory=list)
    lookalikes: list[dict[str, object]] = field(default_factory=list)


def _judge(core: Core, batch: list[Block]) -> _Decision:
    db = core.db()
    vs = vector_store(db)
    vecs = vs.vectors_for(b.id for b in batch)
    decision = _Decision()
    accepted: list[Block] = []
    for block in batch:
        twin = _exact_twin(core, block, accepted)
        if twin is not None:
            decision.duplicates.append((block, twin))
            continue
        near = _nearest(core, block, vecs, accepted)
        dup = next((o for o, c in near if c >= DUPLICATE_COSINE and not differences(block.content, o.content)), None)
        if dup is not None:
            decision.duplicates.append((block, dup.id))
            continue
        for other, cos in near:
            if cos >= LOOKALIKE_COSINE:
                decision.lookalikes.append({"id": block.id, "other": other.id, "cosine": round(cos, 4),
                                            "differs": differences(block.content, other.content)})
        decision.promoted.append(block)
        accepted.append(block)
    return decision


def _exact_twin(core: Core, block: Block, accepted: list[Block]) -> str | None:
    for other in accepted:
        if other.content_hash == block.content_hash:
            return other.id
    for other_id in queries.find_by_hash(core.db(), block.content_hash):
        row = queries.get_blocks(core.db(), [other_id]).get(other_id)
        if row is not None and row.status == "active" and other_id != block.id:
            return other_id
    return None


def _nearest(core: Core, block: Block, vecs: dict[str, np.ndarray], accepted: list[Block]) -> list[tuple[Block, float]]:
    vec = vecs.get(block.id)
    if vec is None:
        return []
    vs = vector_store(core.db())
    out: list[tuple[Block, float]] = []
    for other_id, cos in vs.dense(vec, 3, None, ("active",)):
        row = queries.get_blocks(core.db(), [other_id]).get(other_id)
        if row is not None:
            out.append((row.to_block(), cos))
    for other in accepted:
        ov = vecs.get(other.id)
        if ov is not None:
            out.append((other, float(np.dot(vec, ov))))
    return sorted(out, key=lambda p: -p[1])


def dream(core: Core, max_blocks: int | None = None, no_llm: bool = True) -> DreamResult:
    """Consolidate up to ``max_blocks`` inbox blocks (default consolidation.max_inbox_per_run)."""
    limit = max_blocks or core.config.consolidation.max_inbox_per_run
    core.sync(vectors=True)
    inbox = queries.list_blocks(core.db(), status="inbox")
    batch = [r.to_block() for r in inbox[:limit]]
    note = "" if not no_llm else ("deterministic path: no LLM used (alignment, tags and summaries "
                                  "are left for a dream with an LLM)")
    if not batch:
        return DreamResult(0, inbox_remaining=0, note=note)
    decision = _judge(core, batch)

    def build(view: MemoryView) -> Plan:
        plan = Plan(op="dream", subject=f"dream: consolidate {len(batch)} blocks",
                    block_ids=[b.id for b in batch])
        edits: dict[str, list[Block]] = {}

        def file(relpath: str) -> list[Block]:
            if relpath not in edits:
                edits[relpath] = list(view.read(relpath))
            return edits[relpath]

        def move(block: Block, status: str) -> None:
            relpath, current = locate(core, view, block.id)
            file(relpath)[:] = [b for b in file(relpath) if b.id != block.id]
            target = view.append_target(status, current.cls, month_of(current.created))
            file(target).append(current if status == "active" else current.with_changes(
                extra=(*current.extra, ("duplicate-of", twin_of[block.id]))))

        twin_of = {b.id: twin for b, twin in decision.duplicates}
        for block in decision.promoted:
            move(block, "active")
        for block, _ in decision.duplicates:
            move(block, "archived")
        plan.files = {p: FileEdit(tuple(bs)) for p, bs in edits.items()}
        plan.body = (f"Promoted {len(decision.promoted)}, archived {len(decision.duplicates)} "
                     f"duplicates, linked {len(decision.lookalikes)} look-alikes.")
        return plan

    result = core.store.write(build, core.after_write)
    commit_id = result.commit_id if result else None
    lines: dict[str, list[str]] = {}
    for block in decision.promoted:
        lines.setdefault(block.id, []).append(core.event("promote", block.id, commit=commit_id))
    for block, twin in decision.duplicates:
        lines.setdefault(block.id, []).append(core.event("duplicate", block.id, of=twin, commit=commit_id))
    for pair in decision.lookalikes:
        lines.setdefault(str(pair["id"]), []).append(core.event(
            "edge", str(pair["id"]), target=pair["other"], relation="similar",
            weight=pair["cosine"], source="similar"))
    core.record(lines, "elfmem: dream")
    return DreamResult(
        processed=len(batch),
        promoted=[b.id for b in decision.promoted],
        duplicates=[{"id": b.id, "of": t} for b, t in decision.duplicates],
        lookalikes=decision.lookalikes,
        inbox_remaining=max(0, len(inbox) - len(batch)),
        commit_id=commit_id,
        mode="deterministic" if no_llm else "llm",
        note=note,
    )


def should_dream(core: Core) -> bool:
    core.sync()
    return queries.counts(core.db()).get("inbox", 0) >= core.config.memory.inbox_threshold
