"""Breathing: consolidate the inbox. Embed, drop true duplicates, link look-alikes, promote.

Duplicates must never cost a fact. A block is dropped (archived with ``duplicate-of``) only when
it carries the same information as its twin: the same words in the same order up to case,
spacing, punctuation and articles (``block/facts.py``), or an LLM judgement that says so. A
cosine alone never decides: "restart the vesper router" and "restart the serac loader" have
cosine 0.976 with the embedded model. Any other look-alike (at or above the model's calibrated
look-alike cut: 0.90 on the reference scale, 0.970 for the embedded model) is promoted and linked
to its twin with a ``similar`` edge naming the differences, for review (``elfmem review
lookalikes``), and, when the newer states the older's subject with another value, a ``revises``
edge (``lookalike_edges.py``, ``revisions.py``).

Every block promoted is also linked to its nearest active neighbours by semantic edges (``edges``),
and ``rescore`` adds deep sleep: aged active blocks judged again (``rescore``). One content commit
and one notes commit per run, whatever it did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from elfmem.block.facts import same_information
from elfmem.block.layout import month_of
from elfmem.block.model import Block, Relation
from elfmem.block.render import block_bytes
from elfmem.index import queries, vector_store
from elfmem.index.calibration import DEFAULT_CUTS, Cuts
from elfmem.progress import Progress, Stop, silent
from elfmem.rhythms.batchnear import NEAR, BatchNear
from elfmem.rhythms.capture import locate
from elfmem.rhythms.core import Core
from elfmem.rhythms.cyclegc import cycle_collection_paused
from elfmem.rhythms.edges import Edge, edge_lines, propose_edges
from elfmem.rhythms.judgement import (
    HostJudge,
    Judge,
    Judgement,
    analysis_line,
    describe,
    host_judge,
)
from elfmem.rhythms.lookalike_edges import lookalike_cuts, lookalike_lines, lookalike_pair
from elfmem.rhythms.rescore import Rescore, rescore
from elfmem.rhythms.results import DreamResult
from elfmem.rhythms.revisions import Birth, ledger_birth, revision_of
from elfmem.store import FileEdit, MemoryView, Plan
from elfmem.store.notes import anchor_for_block

__all__ = ["DreamResult", "Judge", "Judgement", "dream", "host_judge", "should_dream"]


@dataclass
class _Decision:
    promoted: list[Block] = field(default_factory=list)
    duplicates: list[tuple[Block, str]] = field(default_factory=list)
    lookalikes: list[dict[str, object]] = field(default_factory=list)
    superseded: dict[str, str] = field(default_factory=dict)
    """older block id → the newer block that revises it."""
    judgements: dict[str, Judgement] = field(default_factory=dict)
    by_hash: dict[str, str] = field(default_factory=dict)
    """content hash → the id of the block promoted with it in this run."""
    cuts: Cuts = DEFAULT_CUTS
    """The configured model's look-alike cuts (``index/calibration.py``)."""
    birth: Birth | None = None
    """Each block's capturing commit and birth stamp, for two created in the same second."""
    done: int = 0
    """Blocks considered; fewer than the batch when the run was stopped."""
    stopped: bool = False


def _apply_judgement(
    core: Core, decision: _Decision, block: Block, judge: Judge, near: list[tuple[Block, float]]
) -> Block | None:
    """One LLM call: tags join the block's; a revision of an older look-alike supersedes it.

    None when the judge says the block repeats an offered look-alike (``duplicate_of``): it is
    recorded as a duplicate of that block. The judge is offered the neighbours down to the
    revision cut: a paraphrase ("may go out" for "are allowed") sits below a one-word change, and
    the judge, not the cosine, decides what it is.
    """
    cut = decision.cuts.revision
    offered = [(o.id, o.content) for o, c in near if c >= cut and o.id != block.id]
    verdict = judge(block, offered)
    decision.judgements[block.id] = verdict
    if verdict.duplicate_of and verdict.duplicate_of in dict(offered):
        decision.duplicates.append((block, verdict.duplicate_of))
        return None
    tags = tuple(dict.fromkeys([*block.tags, *verdict.tags]))
    block = block.with_changes(tags=tags)
    old = verdict.revision_of
    if old and old in dict(offered):
        row = queries.get_blocks(core.db(), [old]).get(old)
        if row is not None and row.status == "active" and "self/constitutional" not in row.tags:
            decision.superseded[old] = block.id
            block = block.with_changes(relations=(*block.relations, Relation("supersedes", old)))
    return block


def _judge(
    core: Core,
    batch: list[Block],
    vecs: dict[str, np.ndarray],
    judge: Judge | None = None,
    progress: Progress | None = None,
) -> tuple[_Decision, BatchNear]:
    decision = _Decision(cuts=lookalike_cuts(core))
    decision.birth = ledger_birth(lambda block_id: core.ledger.lines(anchor_for_block(block_id)))
    tell = progress or silent
    cap = core.config.memory.edge_degree_cap
    found = BatchNear(core, batch, vecs, k=max(16, 2 * cap + 1))
    accepted: dict[str, Block] = {}
    try:  # Stop from the callback ends the run between blocks; the blocks done are kept
        tell("dream", 0, len(batch))
        for done, block in enumerate(batch, 1):
            before = len(decision.promoted)
            near = found.near(block.id, accepted, limit=None)
            _consider(core, decision, block, near, judge)
            if len(decision.promoted) > before:
                accepted[block.id] = decision.promoted[-1]
            decision.done = done
            tell("dream", done, len(batch))
    except Stop:
        decision.stopped = True
    return decision, found


def _consider(
    core: Core,
    decision: _Decision,
    block: Block,
    near: list[tuple[Block, float]],
    judge: Judge | None,
) -> None:
    """Drop a true duplicate, or judge the block, link its look-alikes and promote it."""
    closest = near[:NEAR]
    twin = _exact_twin(core, block, decision) or next(
        (
            o.id
            for o, _ in closest
            if o.id != block.id and same_information(block.content, o.content)
        ),
        None,
    )
    if twin is not None:
        decision.duplicates.append((block, twin))
        return
    if judge is not None:
        judged = _apply_judgement(core, decision, block, judge, closest)
        if judged is None:
            return
        block = judged
    for other, cos in near:  # revisions among all candidates: plain words sit far apart
        if other.id in decision.superseded:
            continue
        found = None
        if judge is None:
            found = revision_of(block, other, cos, decision.cuts, decision.birth or _unborn)
        if found is not None or (
            cos >= decision.cuts.lookalike and any(o is other for o, _ in closest)
        ):
            revises = (found[0].id, found[1].id) if found else None
            pair = lookalike_pair(block, other, cos, revises=revises)
            pair["similar"] = cos >= decision.cuts.revision  # far pairs: the revision only
            decision.lookalikes.append(pair)
    decision.promoted.append(block)
    decision.by_hash.setdefault(block.content_hash, block.id)


def _unborn(_: str) -> tuple[str, str]:
    return ("", "")


def _exact_twin(core: Core, block: Block, decision: _Decision) -> str | None:
    twin = decision.by_hash.get(block.content_hash)
    if twin is not None:
        return twin
    active = queries.find_by_hash(core.db(), block.content_hash, ("active",))
    return next((other_id for other_id in active if other_id != block.id), None)


@cycle_collection_paused()
def dream(
    core: Core,
    max_blocks: int | None = None,
    judge: Judge | None = None,
    note: str = "",
    *,
    rescore: bool = False,
    progress: Progress | None = None,
) -> DreamResult:
    """Consolidate up to ``max_blocks`` inbox blocks, Python's cycle collector paused meanwhile.

    Without a judge the whole inbox is drained by default: the deterministic path costs no LLM
    call, so there is nothing to ration. With one, the default is
    consolidation.max_inbox_per_run (seed: 5), which caps LLM calls per run.
    Without ``judge`` this is the deterministic path; with one, each block gets one judgement
    (alignment, tags, summary, and whether it revises an older look-alike). Every block promoted
    (or rescored) is linked to its nearest active neighbours by semantic edges. ``rescore`` adds
    deep sleep: aged active blocks are judged again (see ``rescore.py``).
    """
    heard, core.progress = core.progress, progress or core.progress
    try:  # a change of local model re-embeds here, and the caller's progress hears it
        core.sync(vectors=True)
    finally:
        core.progress = heard
    inbox = queries.list_blocks(core.db(), status="inbox")
    per_run = len(inbox) if judge is None else core.config.consolidation.max_inbox_per_run
    limit = max_blocks or per_run
    batch = [r.to_block() for r in inbox[:limit]]
    mode = "deterministic" if judge is None else "llm"
    if judge is None and not note:
        note = (
            "deterministic path: no LLM used (alignment, tags and summaries are left for a "
            "dream with an LLM)"
        )
    if not batch and not rescore:
        return DreamResult(0, inbox_remaining=0, note=note, mode=mode)
    vs = vector_store(core.db())
    vecs = vs.vectors_for(b.id for b in batch)
    decision, found = _judge(core, batch, vecs, judge, progress)
    batch = batch[: decision.done]  # a stopped run commits the blocks it decided, no more
    deep = Rescore()
    if rescore and not decision.stopped:
        try:
            deep = _deep_sleep(core, judge, max_blocks, limit, decision, progress)
        except Stop:  # deep sleep is dropped whole; the inbox decisions are still committed
            decision.stopped = True
        vecs.update(vs.vectors_for(b.id for b in deep.blocks))
    edges = propose_edges(
        core,
        [*decision.promoted, *deep.blocks],
        vecs,
        fresh=decision.promoted,
        exclude=set(decision.superseded),
        pending=[(str(p["id"]), str(p["other"])) for p in decision.lookalikes],
        near=found.edge_candidates({b.id for b in decision.promoted}, set(decision.superseded)),
    )
    commit_id = _write(core, batch, decision, deep, edges) if batch or deep.retag else None
    lines = _ledger_lines(core, decision, deep, edges, commit_id)
    if lines:
        core.record(lines, "elfmem: dream")
        # Fold the notes this run wrote now, in the batch pass, not in the next few queries.
        core.ledger.refresh_stored(core.db(), lines)
    judged = {**decision.judgements, **deep.judgements}
    return DreamResult(
        processed=len(batch),
        promoted=[b.id for b in decision.promoted],
        duplicates=[{"id": b.id, "of": t} for b, t in decision.duplicates],
        lookalikes=[{k: v for k, v in p.items() if k != "similar"} for p in decision.lookalikes],
        inbox_remaining=max(0, len(inbox) - len(batch)),
        commit_id=commit_id,
        mode=mode,
        note=note,
        superseded=[{"id": old, "by": new} for old, new in decision.superseded.items()],
        malformed=sum(1 for j in judged.values() if j.malformed),
        analyses=describe(judged),
        edges_added=len(edges),
        rescored=[b.id for b in deep.blocks],
        rescore_note=deep.note,
        retagged=list(deep.retag),
        interrupted=decision.stopped,
    )


def _deep_sleep(
    core: Core,
    judge: Judge | None,
    max_blocks: int | None,
    limit: int,
    decision: _Decision,
    progress: Progress | None,
) -> Rescore:
    """Host analyses rescore exactly the active blocks they name; a model takes the oldest
    ``limit``; with neither, every aged block's edges are refreshed unless ``max_blocks`` is given
    (no model calls to bound, and a fixed bound would refresh the same blocks every time)."""
    only = judge.ids if isinstance(judge, HostJudge) else None
    bound = max_blocks if judge is None else limit
    return rescore(
        core, judge, limit=bound, only=only, skip=set(decision.superseded), progress=progress
    )


class _Files:
    """The files one dream run rewrites, each read from the tree once and edited in memory."""

    def __init__(self, core: Core, view: MemoryView, decision: _Decision) -> None:
        self.core, self.view, self.decision = core, view, decision
        self.twin_of = {b.id: twin for b, twin in decision.duplicates}
        self.edits: dict[str, list[Block]] = {}

    def file(self, relpath: str) -> list[Block]:
        if relpath not in self.edits:
            self.edits[relpath] = list(self.view.read(relpath))
        return self.edits[relpath]

    def move(self, block_id: str, status: str, new: Block | None = None) -> None:
        relpath, current = locate(self.core, self.view, block_id)
        self.file(relpath)[:] = [b for b in self.file(relpath) if b.id != block_id]
        if new is not None:  # the judged version: tags and relations added, content untouched
            current = current.with_changes(tags=new.tags, relations=new.relations)
        extra = list(current.extra)
        if block_id in self.twin_of:
            extra.append(("duplicate-of", self.twin_of[block_id]))
        if block_id in self.decision.superseded:
            extra.append(("superseded-by", self.decision.superseded[block_id]))
        moved = current.with_changes(extra=tuple(extra))
        target = self.view.append_target(
            status, moved.cls, month_of(moved.created), block_bytes(moved)
        )
        self.file(target).append(moved)

    def retag(self, block_id: str, tags: tuple[str, ...]) -> None:
        """Add tags to a block where it lives; never remove one."""
        relpath, current = locate(self.core, self.view, block_id)
        kept = current.with_changes(tags=tuple(dict.fromkeys([*current.tags, *tags])))
        self.file(relpath)[:] = [kept if b.id == block_id else b for b in self.file(relpath)]


def _write(
    core: Core, batch: list[Block], decision: _Decision, deep: Rescore, edges: list[Edge]
) -> str | None:
    """The run's one content commit: moves out of the inbox, archives, and rescore's new tags.

    It lists every block the run touched, edge ends included, so ``undo`` of it cancels the
    ledger events it stamped on each of them.
    """

    def build(view: MemoryView) -> Plan:
        files = _Files(core, view, decision)
        for block in decision.promoted:
            files.move(block.id, "active", block)
        for block, _ in decision.duplicates:
            files.move(block.id, "archived")
        for old in decision.superseded:
            files.move(old, "archived")
        for block_id, tags in deep.retag.items():
            files.retag(block_id, tags)
        subject = (
            f"dream: consolidate {len(batch)} blocks"
            if batch
            else f"dream: re-tag {len(deep.retag)} rescored blocks"
        )
        return Plan(
            op="dream",
            subject=subject,
            block_ids=[
                *(b.id for b in batch),
                *decision.superseded,
                *deep.retag,
                *(e.source for e in edges),
                *(str(p["other"]) for p in decision.lookalikes if "revises" in p),
            ],
            files={p: FileEdit(tuple(bs)) for p, bs in files.edits.items()},
            body=(
                f"Promoted {len(decision.promoted)}, archived {len(decision.duplicates)} "
                f"duplicates, linked {len(decision.lookalikes)} look-alikes, added {len(edges)} "
                f"semantic edges; re-tagged {len(deep.retag)} rescored blocks."
            ),
        )

    result = core.store.write(build, core.after_write)
    return result.commit_id if result else None


def _ledger_lines(
    core: Core, decision: _Decision, deep: Rescore, edges: list[Edge], commit_id: str | None
) -> dict[str, list[str]]:
    """Everything the run records, for one notes commit."""
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
        lines.setdefault(block_id, []).append(analysis_line(core, block_id, j, rescore=False))
    for block_id, j in deep.judgements.items():
        lines.setdefault(block_id, []).append(analysis_line(core, block_id, j, rescore=True))
    for block_id, more in lookalike_lines(core, decision.lookalikes, commit_id).items():
        lines.setdefault(block_id, []).extend(more)
    for block_id, more in edge_lines(core, edges, commit_id).items():
        lines.setdefault(block_id, []).extend(more)
    return lines


def should_dream(core: Core) -> bool:
    core.sync()
    return queries.counts(core.db()).get("inbox", 0) >= core.config.memory.inbox_threshold
