"""Sleep: archive what has decayed or been refuted, prune weak learned edges, reinforce the top-K.

Refuted means what recall means by it (``truth.is_refuted``: three net refutations, or more
refutations than confirmations once five are in). Pinned and constitutional blocks are never
archived. Borderline cases (unused for long, rarely
reinforced, never confirmed) are reported for review instead of archived. A block archived
because a correction superseded it (``superseded-by``) comes back to the active notes once
outcomes refute that correction (``truth.claim_refuted``). Archival and restoring are one
commit, so ``undo`` reverts both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from elfmem.block.layout import month_of
from elfmem.block.model import BLOCK_ID_RE, Block
from elfmem.block.render import block_bytes
from elfmem.index import IndexDB, queries
from elfmem.retrieval import truth
from elfmem.retrieval.confidence import beta_evidence, beta_mean
from elfmem.rhythms.adaptive import declared_degree
from elfmem.rhythms.capture import locate
from elfmem.rhythms.core import Core
from elfmem.rhythms.recall import check_top_k
from elfmem.rhythms.results import Result
from elfmem.store import FileEdit, MemoryView, Plan
from elfmem.store.notes import anchor_for_block

DECAYED_BELOW = 0.05
"""Recency under which an unpinned block is archived (≈300 active hours for a standard block)."""
WEAK_EDGE = 0.1
STALE_HOURS = 100.0


@dataclass(frozen=True)
class CurateResult(Result):
    archived: list[dict[str, str]] = field(default_factory=list)
    """Blocks archived: ``{id, reason}``, reason ``refuted (…)`` or ``decayed (…)``."""
    pruned_edges: list[dict[str, str]] = field(default_factory=list)
    """Ledger edges removed for weight under 0.1: ``{source, target, relation}``."""
    reinforced: list[str] = field(default_factory=list)
    """Of the top-k blocks by confidence, those with outcome evidence; their decay clocks reset."""
    review: list[dict[str, object]] = field(default_factory=list)
    """Stale blocks left for a person to judge: ``{id, hours_since_use, reason}``."""
    commit_id: str | None = None
    restored: list[dict[str, str]] = field(default_factory=list)
    """Blocks back in the active notes because outcomes refuted the correction that had
    archived them: ``{id, reason}``."""

    @property
    def summary(self) -> str:
        back = f"restored {len(self.restored)}, " if self.restored else ""
        return (
            f"curate: archived {len(self.archived)}, {back}pruned {len(self.pruned_edges)} weak "
            f"edges, reinforced {len(self.reinforced)}, {len(self.review)} stale candidates for "
            "review"
        )


def _protected(row: queries.BlockRow) -> bool:
    return row.pinned or "self/constitutional" in row.tags


def curate(core: Core, top_k: int | None = None) -> CurateResult:
    check_top_k(top_k)
    core.sync()
    db = core.db()
    rows = queries.list_blocks(db, status="active")
    states = core.ledger.states(rows, declared_degree(db, [r.id for r in rows]))
    archive: dict[str, str] = {}
    review: list[dict[str, object]] = []
    for row in rows:
        st = states[row.id]
        conf = beta_mean(st.alpha, st.beta)
        recency = math.exp(-st.lam * st.hours_since_use)
        if _protected(row):
            continue
        if truth.is_refuted(st):  # recall's own rule: two mistaken 0.0s must not archive a fact
            archive[row.id] = f"refuted (confidence {conf:.2f})"
        elif recency < DECAYED_BELOW:
            archive[row.id] = f"decayed (recency {recency:.3f})"
        elif (
            st.hours_since_use > STALE_HOURS
            and st.reinforcements <= 1
            and beta_evidence(st.alpha, st.beta) == 0
        ):
            review.append(
                {
                    "id": row.id,
                    "hours_since_use": round(st.hours_since_use, 1),
                    "reason": "unused for long, rarely reinforced, never confirmed",
                }
            )
    pruned = _prune(core, [r.id for r in rows])
    keep = [r for r in rows if r.id not in archive]
    k = top_k or core.config.memory.top_k
    ranked = sorted(
        keep,
        key=lambda r: (
            -beta_mean(states[r.id].alpha, states[r.id].beta),
            -states[r.id].reinforcements,
            r.id,
        ),
    )
    top = [r.id for r in ranked[:k] if beta_evidence(states[r.id].alpha, states[r.id].beta) > 0]
    if top:
        now = core.ledger.now_hours()
        core.store.spool_events(
            (anchor_for_block(b), core.event("reinforce", b, at=now)) for b in top
        )
    restore = restorable(core, db)
    commit_id = archive_blocks(core, archive, restore=restore) if archive or restore else None
    return CurateResult(
        [{"id": b, "reason": why} for b, why in archive.items()],
        pruned,
        top,
        review,
        commit_id,
        [{"id": b, "reason": why} for b, why in restore.items()],
    )


SUPERSEDED_BY = "superseded-by"
"""Frontmatter key of a block archived because a correction superseded it (dream's judgement)."""


def restorable(core: Core, db: IndexDB) -> dict[str, str]:
    """Archived blocks whose correction outcomes have refuted since: id → reason.

    Only a block archived *because* it was superseded (its ``superseded-by`` key) comes back; one
    archived as refuted or decayed stays, and ``claim_refuted`` keeps a block that outcomes
    refuted too where it is.
    """
    rows = [
        r
        for r in queries.list_blocks(db, status="archived")
        if BLOCK_ID_RE.fullmatch(dict(r.extra).get(SUPERSEDED_BY, ""))
    ]
    if not rows:
        return {}
    marked = {r.id: dict(r.extra)[SUPERSEDED_BY] for r in rows}
    newer = queries.get_blocks(db, sorted(set(marked.values())))
    states = core.ledger.states([*rows, *newer.values()], {}, db)
    out: dict[str, str] = {}
    for old, new in marked.items():
        if new in states and truth.claim_refuted(states[new], states[old], new):
            out[old] = f"its correction {new} was refuted by outcomes"
    return out


def _prune(core: Core, ids: list[str]) -> list[dict[str, str]]:
    lines: dict[str, list[str]] = {}
    pruned = []
    for block_id in ids:
        for (target, relation), weight in core.ledger.folded(block_id).edges.items():
            if 0 < weight < WEAK_EDGE:
                lines.setdefault(block_id, []).append(
                    core.event("edge_remove", block_id, target=target, relation=relation)
                )
                pruned.append({"source": block_id, "target": target, "relation": relation})
    if lines:
        core.record(lines, "elfmem: curate prunes weak edges")
    return pruned


def archive_blocks(
    core: Core,
    archive: dict[str, str],
    op: str = "curate",
    what: str = "curate",
    restore: dict[str, str] | None = None,
) -> str | None:
    """Move each block to the archive in one ``op`` commit, with a ``forget`` event giving why.

    ``archive`` maps block id → reason; ``what`` opens the commit subject. Curate and the corpus
    review both archive this way, so ``undo`` treats them alike. ``restore`` (block id → reason)
    moves archived blocks back to the active notes in the same commit, their ``superseded-by``
    key dropped, each with a ``promote`` event giving why.
    """
    back = restore or {}

    def build(view: MemoryView) -> Plan:
        files: dict[str, list[Block]] = {}
        for block_id in back:
            relpath, block = locate(core, view, block_id)
            files.setdefault(relpath, list(view.read(relpath)))
            files[relpath] = [b for b in files[relpath] if b.id != block_id]
            block = block.with_changes(
                extra=tuple(kv for kv in block.extra if kv[0] != SUPERSEDED_BY)
            )
            target = view.append_target(
                "active", block.cls, month_of(block.created), block_bytes(block)
            )
            files.setdefault(target, list(view.read(target))).append(block)
        for block_id in archive:
            relpath, block = locate(core, view, block_id)
            files.setdefault(relpath, list(view.read(relpath)))
            files[relpath] = [b for b in files[relpath] if b.id != block_id]
            target = view.append_target(
                "archived",
                block.cls,
                month_of(block.created),
                block_bytes(block),
            )
            files.setdefault(target, list(view.read(target))).append(block)
        restored = f", restore {len(back)}" if back else ""
        return Plan(
            op=op,
            subject=f"{what}: archive {len(archive)} blocks{restored}",
            block_ids=[*archive, *back],
            files={p: FileEdit(tuple(bs)) for p, bs in files.items()},
            body="\n".join(
                [f"- {b}: {why}" for b, why in archive.items()]
                + [f"- {b} restored: {why}" for b, why in back.items()]
            ),
        )

    result = core.store.write(build, core.after_write)
    if result is None:
        return None
    lines = {
        b: [core.event("forget", b, commit=result.commit_id, reason=why)]
        for b, why in archive.items()
    }
    for b, why in back.items():
        lines.setdefault(b, []).append(
            core.event("promote", b, commit=result.commit_id, reason=why)
        )
    core.record(lines, f"elfmem: {what}")
    return result.commit_id
