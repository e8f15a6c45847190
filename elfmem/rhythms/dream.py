"""Breathing: consolidate the inbox. Embed, drop true duplicates, link look-alikes, promote.

Duplicates must never cost a fact. Without an LLM only a true duplicate is dropped (archived with
``duplicate-of``): the same normalised text, or a near-identical vector whose numbers, names and
negations all match. A look-alike that differs in any of those is promoted and linked to its twin
with a ``similar`` edge in the ledger, so a person (or a later LLM pass) can review the pair; the
newer block is never discarded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from elfmem.block.facts import differences
from elfmem.block.layout import month_of
from elfmem.block.model import Block, Relation
from elfmem.index import queries, vector_store
from elfmem.rhythms.capture import locate
from elfmem.rhythms.core import Core
from elfmem.rhythms.results import Result
from elfmem.store import FileEdit, MemoryView, Plan

DUPLICATE_COSINE = 0.95
LOOKALIKE_COSINE = 0.90


@dataclass(frozen=True)
class Judgement:
    """What an LLM (or the host agent) says about one inbox block."""

    alignment: float = 0.5
    tags: tuple[str, ...] = ()
    summary: str = ""
    revision_of: str | None = None
    malformed: bool = False


Judge = Callable[[Block, list[tuple[str, str]]], Judgement]
"""(block, older look-alikes as (id, content)) → judgement; one LLM call per block."""


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
    superseded: list[dict[str, str]] = field(default_factory=list)
    malformed: int = 0
    """LLM replies that could not be parsed (neutral scoring was used instead)."""
    analyses: dict[str, dict[str, object]] = field(default_factory=dict)

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
    superseded: dict[str, str] = field(default_factory=dict)
    """older block id → the newer block that revises it."""
    judgements: dict[str, Judgement] = field(default_factory=dict)


def _apply_judgement(
    core: Core, decision: _Decision, block: Block, judge: Judge, near: list[tuple[Block, float]]
) -> Block:
    """One LLM call: tags join the block's; a revision of an older look-alike supersedes it."""
    offered = [(o.id, o.content) for o, c in near if c >= LOOKALIKE_COSINE and o.id != block.id]
    verdict = judge(block, offered)
    decision.judgements[block.id] = verdict
    tags = tuple(dict.fromkeys([*block.tags, *verdict.tags]))
    block = block.with_changes(tags=tags)
    old = verdict.revision_of
    if old and old in dict(offered):
        row = queries.get_blocks(core.db(), [old]).get(old)
        if row is not None and row.status == "active" and "self/constitutional" not in row.tags:
            decision.superseded[old] = block.id
            block = block.with_changes(relations=(*block.relations, Relation("supersedes", old)))
    return block


def _judge(core: Core, batch: list[Block], judge: Judge | None = None) -> _Decision:
    db = core.db()
    vecs = vector_store(db).vectors_for(b.id for b in batch)
    near_active = _batch_nearest(core, batch, vecs)
    decision = _Decision()
    accepted: list[Block] = []
    for block, active_near in zip(batch, near_active, strict=True):
        twin = _exact_twin(core, block, accepted)
        if twin is not None:
            decision.duplicates.append((block, twin))
            continue
        near = _with_accepted(block, active_near, vecs, accepted)
        dup = next(
            (
                o
                for o, c in near
                if c >= DUPLICATE_COSINE and not differences(block.content, o.content)
            ),
            None,
        )
        if dup is not None:
            decision.duplicates.append((block, dup.id))
            continue
        if judge is not None:
            block = _apply_judgement(core, decision, block, judge, near)
        for other, cos in near:
            if cos >= LOOKALIKE_COSINE and other.id not in decision.superseded:
                decision.lookalikes.append(
                    {
                        "id": block.id,
                        "other": other.id,
                        "cosine": round(cos, 4),
                        "differs": differences(block.content, other.content),
                    }
                )
        decision.promoted.append(block)
        accepted.append(block)
    return decision


def _batch_nearest(
    core: Core, batch: list[Block], vecs: dict[str, np.ndarray], k: int = 3, chunk: int = 256
) -> list[list[tuple[Block, float]]]:
    """The k most similar active blocks for every block of the batch: one matrix product a chunk."""
    vs = vector_store(core.db())
    out: list[list[tuple[Block, float]]] = [[] for _ in batch]
    if not vs.ids:
        return out
    active = np.isin(vs.statuses, ["active"])
    if not active.any():
        return out
    wanted = [(i, vecs[b.id]) for i, b in enumerate(batch) if b.id in vecs]
    hits: dict[int, list[tuple[str, float]]] = {}
    for start in range(0, len(wanted), chunk):
        part = wanted[start : start + chunk]
        scores = np.stack([v for _, v in part]) @ vs.matrix.T
        scores[:, ~active] = -np.inf
        top = np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]
        for row, (i, _) in enumerate(part):
            hits[i] = [
                (vs.ids[j], float(scores[row, j])) for j in top[row] if np.isfinite(scores[row, j])
            ]
    rows = queries.get_blocks(core.db(), {bid for h in hits.values() for bid, _ in h})
    for i, h in hits.items():
        out[i] = sorted(
            ((rows[bid].to_block(), c) for bid, c in h if bid in rows), key=lambda p: -p[1]
        )
    return out


def _with_accepted(
    block: Block,
    near: list[tuple[Block, float]],
    vecs: dict[str, np.ndarray],
    accepted: list[Block],
) -> list[tuple[Block, float]]:
    """Add the blocks promoted earlier in this same run (not yet in the index as active)."""
    vec = vecs.get(block.id)
    if vec is None or not accepted:
        return near
    extra = [(o, float(np.dot(vec, vecs[o.id]))) for o in accepted[-2000:] if o.id in vecs]
    return sorted([*near, *extra], key=lambda p: -p[1])[:5]


def _exact_twin(core: Core, block: Block, accepted: list[Block]) -> str | None:
    for other in accepted:
        if other.content_hash == block.content_hash:
            return other.id
    for other_id in queries.find_by_hash(core.db(), block.content_hash):
        row = queries.get_blocks(core.db(), [other_id]).get(other_id)
        if row is not None and row.status == "active" and other_id != block.id:
            return other_id
    return None


def dream(
    core: Core, max_blocks: int | None = None, judge: Judge | None = None, note: str = ""
) -> DreamResult:
    """Consolidate up to ``max_blocks`` inbox blocks (default consolidation.max_inbox_per_run).

    Without ``judge`` this is the deterministic path; with one, each block gets one judgement
    (alignment, tags, summary, and whether it revises an older look-alike).
    """
    limit = max_blocks or core.config.consolidation.max_inbox_per_run
    core.sync(vectors=True)
    inbox = queries.list_blocks(core.db(), status="inbox")
    batch = [r.to_block() for r in inbox[:limit]]
    if judge is None and not note:
        note = (
            "deterministic path: no LLM used (alignment, tags and summaries are left for a "
            "dream with an LLM)"
        )
    if not batch:
        return DreamResult(
            0, inbox_remaining=0, note=note, mode="deterministic" if judge is None else "llm"
        )
    decision = _judge(core, batch, judge)

    def build(view: MemoryView) -> Plan:
        plan = Plan(
            op="dream",
            subject=f"dream: consolidate {len(batch)} blocks",
            block_ids=[b.id for b in batch],
        )
        edits: dict[str, list[Block]] = {}

        def file(relpath: str) -> list[Block]:
            if relpath not in edits:
                edits[relpath] = list(view.read(relpath))
            return edits[relpath]

        def move(block_id: str, status: str, new: Block | None = None) -> None:
            relpath, current = locate(core, view, block_id)
            file(relpath)[:] = [b for b in file(relpath) if b.id != block_id]
            target = view.append_target(status, current.cls, month_of(current.created))
            if new is not None:  # the judged version: tags and relations added, content untouched
                current = current.with_changes(tags=new.tags, relations=new.relations)
            if block_id in twin_of:
                current = current.with_changes(
                    extra=(*current.extra, ("duplicate-of", twin_of[block_id]))
                )
            if block_id in decision.superseded:
                current = current.with_changes(
                    extra=(*current.extra, ("superseded-by", decision.superseded[block_id]))
                )
            file(target).append(current)

        twin_of = {b.id: twin for b, twin in decision.duplicates}
        for block in decision.promoted:
            move(block.id, "active", block)
        for block, _ in decision.duplicates:
            move(block.id, "archived")
        for old in decision.superseded:
            move(old, "archived")
            plan.block_ids.append(old)
        plan.files = {p: FileEdit(tuple(bs)) for p, bs in edits.items()}
        plan.body = (
            f"Promoted {len(decision.promoted)}, archived {len(decision.duplicates)} "
            f"duplicates, linked {len(decision.lookalikes)} look-alikes."
        )
        return plan

    result = core.store.write(build, core.after_write)
    commit_id = result.commit_id if result else None
    lines: dict[str, list[str]] = {}
    for block in decision.promoted:
        lines.setdefault(block.id, []).append(core.event("promote", block.id, commit=commit_id))
    for block, twin in decision.duplicates:
        lines.setdefault(block.id, []).append(
            core.event("duplicate", block.id, of=twin, commit=commit_id)
        )
    for old, new in decision.superseded.items():
        lines.setdefault(old, []).append(
            core.event("forget", old, commit=commit_id, superseded_by=new)
        )
    for block_id, j in decision.judgements.items():
        lines.setdefault(block_id, []).append(
            core.event(
                "analysis",
                block_id,
                alignment=j.alignment,
                summary=j.summary,
                malformed=j.malformed,
            )
        )
    for pair in decision.lookalikes:
        lines.setdefault(str(pair["id"]), []).append(
            core.event(
                "edge",
                str(pair["id"]),
                target=pair["other"],
                relation="similar",
                weight=pair["cosine"],
                source="similar",
            )
        )
    core.record(lines, "elfmem: dream")
    return DreamResult(
        processed=len(batch),
        promoted=[b.id for b in decision.promoted],
        duplicates=[{"id": b.id, "of": t} for b, t in decision.duplicates],
        lookalikes=decision.lookalikes,
        inbox_remaining=max(0, len(inbox) - len(batch)),
        commit_id=commit_id,
        mode="deterministic" if judge is None else "llm",
        note=note,
        superseded=[{"id": old, "by": new} for old, new in decision.superseded.items()],
        malformed=sum(1 for j in decision.judgements.values() if j.malformed),
        analyses={
            b: {
                "alignment": j.alignment,
                "tags": list(j.tags),
                "summary": j.summary,
                "malformed": j.malformed,
            }
            for b, j in decision.judgements.items()
        },
    )


def host_judge(core: Core, analyses: Mapping[str, Mapping[str, object]]) -> Judge:
    """Judgements supplied by the host agent (``dream --host-analyses FILE``), validated."""
    from elfmem.block.model import is_valid_tag
    from elfmem.errors import InvalidInput

    checked: dict[str, Judgement] = {}
    for block_id, entry in analyses.items():
        if not isinstance(entry, Mapping):
            raise InvalidInput(
                f"host analysis for {block_id} is not an object.",
                'Give {"<id>": {"alignment": 0.8, "tags": ["a/b"], "summary": "…"}}.',
            )
        alignment = entry.get("alignment", 0.5)
        if not isinstance(alignment, int | float) or not 0 <= float(alignment) <= 1:
            raise InvalidInput(
                f"host analysis for {block_id}: alignment must be a number in [0, 1].",
                "Fix the alignment value.",
            )
        tags = entry.get("tags", [])
        if not isinstance(tags, list) or not all(
            isinstance(t, str) and is_valid_tag(t) for t in tags
        ):
            raise InvalidInput(
                f"host analysis for {block_id}: tags must be a list of valid tags.",
                "Tags use letters, digits and _ . / % : + - (no spaces).",
            )
        revision = entry.get("revision_of")
        checked[block_id] = Judgement(
            float(alignment),
            tuple(tags),
            str(entry.get("summary", "")),
            str(revision) if revision else None,
        )

    def judge(block: Block, lookalikes: list[tuple[str, str]]) -> Judgement:
        return checked.get(block.id, Judgement())

    return judge


def should_dream(core: Core) -> bool:
    core.sync()
    return queries.counts(core.db()).get("inbox", 0) >= core.config.memory.inbox_threshold
