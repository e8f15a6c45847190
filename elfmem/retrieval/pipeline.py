"""The retrieval pipeline (seed §4.1).

Filter, seed, fuse, expand, score, diversify, guarantee, pack.

Exclusions are applied before candidates are counted, so an excluded block never takes a seed
slot. Every signal is normalised over the candidate set with a floor, so a signal that is equal
for every candidate (a young memory's confidence, say) cannot move the ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from elfmem.index import FieldWeights, IndexDB, lexical, queries, vector_store
from elfmem.index.queries import BlockRow
from elfmem.index.search import lexical_soon
from elfmem.retrieval import budget as budget_mod
from elfmem.retrieval import decay, fusion, mmr, signals
from elfmem.retrieval.frames import FrameSpec, is_guaranteed
from elfmem.retrieval.render import RenderItem, render_frame, render_header, render_item
from elfmem.retrieval.result import FrameResult, ScoredBlock
from elfmem.retrieval.state import PRIOR, BlockState

Embed = Callable[[str], npt.NDArray[np.float32]]
States = Callable[[Sequence[str]], Mapping[str, BlockState]]


@dataclass(frozen=True)
class SearchSettings:
    """Knobs of the first stages; the defaults are the ones measured on the dev benchmark."""

    seeds: int = 50
    rrf_k: int = fusion.RRF_K
    fusion_weights: tuple[float, float] = (1.0, 1.0)
    """RRF weights of (lexical, dense) rankings."""
    use_mmr: bool = True
    mmr_lambda: float = mmr.MMR_LAMBDA
    expand_from: int = 10
    """How many top seeds pull their 1-hop neighbours into the pool."""
    field_weights: FieldWeights = field(default_factory=FieldWeights)


@dataclass
class _Pool:
    """Candidates and how each got there."""

    via: dict[str, str] = field(default_factory=dict)
    lexical: list[str] = field(default_factory=list)
    dense: dict[str, float] = field(default_factory=dict)

    def add(self, ids: Iterable[str], how: str) -> None:
        for block_id in ids:
            self.via.setdefault(block_id, how)


def _ids_matching(db: IndexDB, patterns: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for pattern in patterns:
        out |= queries.block_ids_with_tag(db, pattern)
    return out


@dataclass(frozen=True)
class _Filters:
    excluded: set[str]
    include: set[str] | None
    guaranteed: set[str]
    excluded_count: int
    """Active blocks the frame's filters removed (an exclusion, or outside its include list)."""


def _filters(db: IndexDB, spec: FrameSpec) -> _Filters:
    guaranteed = _ids_matching(db, spec.guarantees) - _ids_matching(db, spec.guarantee_except)
    excluded = _ids_matching(db, spec.exclude) - _ids_matching(db, spec.exclude_except)
    include = _ids_matching(db, spec.include) | guaranteed if spec.include else None
    looked_up = guaranteed | excluded | (include or set())
    active = {r.id for r in queries.get_blocks(db, looked_up).values() if r.status == "active"}
    excluded = (excluded & active) - guaranteed
    count = len(excluded)
    if include is not None:
        include &= active
        count += queries.counts(db).get("active", 0) - len(include)
    return _Filters(excluded, include, guaranteed & active, count)


def _seed(
    db: IndexDB, spec: FrameSpec, query: str, embed: Embed | None, f: _Filters, s: SearchSettings
) -> _Pool:
    pool = _Pool()
    extra = len(f.excluded)

    def keep(block_id: str) -> bool:
        return block_id not in f.excluded and (f.include is None or block_id in f.include)

    if embed is None:
        hits = lexical(db, query, s.seeds + extra, ("active",), s.field_weights)
    else:  # the lexical search runs in a thread while the query is embedded and matched
        lexical_hits = lexical_soon(db, query, s.seeds + extra, ("active",), s.field_weights)
        vs = vector_store(db)
        found = vs.dense(embed(query), s.seeds + extra, f.include, ("active",))
        pool.dense = dict([(b, c) for b, c in found if keep(b)][: s.seeds])
        hits = lexical_hits()
    pool.lexical = [b for b, _ in hits if keep(b)][: s.seeds]
    pool.add(pool.lexical, "search")
    pool.add(pool.dense, "search")
    ranked_seeds = list(
        dict.fromkeys([*pool.lexical[: s.expand_from], *list(pool.dense)[: s.expand_from]])
    )
    for neighbours in queries.neighbours(db, ranked_seeds).values():
        pool.add((other for _, other in neighbours if keep(other)), "expansion")
    return pool


def _signals(
    rows: Sequence[BlockRow], sims: Mapping[str, float], states: Mapping[str, BlockState]
) -> dict[str, npt.NDArray[np.float64]]:
    st = [states.get(r.id, PRIOR) for r in rows]
    return {
        "similarity": np.array([sims.get(r.id, 0.0) for r in rows], dtype=np.float64),
        "confidence": signals.confidence_signal([x.alpha for x in st], [x.beta for x in st]),
        "recency": decay.recency([x.hours_since_use for x in st], [x.lam for x in st]),
        "centrality": signals.centrality_signal([x.degree for x in st]),
        "reinforcement": signals.reinforcement_signal([x.reinforcements for x in st]),
    }


def _order(
    db: IndexDB, ids: list[str], score: npt.NDArray[np.float64], k: int, s: SearchSettings
) -> list[int]:
    """Indices of the top-k in final order: MMR over the best few, or plain score order."""
    by_score = sorted(range(len(ids)), key=lambda i: (-score[i], ids[i]))
    if k <= 0 or not s.use_mmr or len(ids) <= 1:  # guarantees may fill every slot (simulate)
        return by_score[:k]
    head = by_score[: max(k * 4, k)]
    vecs = vector_store(db).vectors_for(ids[i] for i in head)
    if len(vecs) < len(head):
        return by_score[:k]
    matrix = np.stack([vecs[ids[i]] for i in head]).astype(np.float64)
    order = mmr.mmr_order(score[head], matrix @ matrix.T, k, s.mmr_lambda)
    return [head[i] for i in order]


def run_frame(
    db: IndexDB,
    spec: FrameSpec,
    query: str | None,
    *,
    embed: Embed | None,
    states: States,
    top_k: int | None = None,
    agent_name: str = "elf",
    self_text: str | None = None,
    settings: SearchSettings | None = None,
) -> FrameResult:
    s = settings or SearchSettings()
    k = top_k or spec.top_k
    f = _filters(db, spec)
    if spec.queryless or not (query or "").strip():
        pool = _Pool()
        scan = (
            f.include
            if f.include is not None
            else {r.id for r in queries.list_blocks(db, status="active")}
        )
        pool.add(sorted(b for b in scan if b not in f.excluded), "scan")
        sims: dict[str, float] = {}
    else:
        pool = _seed(db, spec, query or "", embed, f, s)
        sims = fusion.query_similarity(
            list(pool.via), pool.lexical, pool.dense, s.rrf_k, list(s.fusion_weights)
        )
    pool.add(sorted(f.guaranteed), "guarantee")
    rows_by_id = queries.get_blocks(db, pool.via)
    rows = [rows_by_id[b] for b in pool.via if b in rows_by_id and rows_by_id[b].status == "active"]
    ids = [r.id for r in rows]
    raw = _signals(rows, sims, states(ids))
    score = signals.composite(signals.normalise_signals(raw), spec.weights)
    guaranteed = [
        i for i, r in enumerate(rows) if r.id in f.guaranteed and is_guaranteed(r.tags, spec)
    ]
    others = [i for i in range(len(rows)) if i not in set(guaranteed)]
    picked = [
        others[i]
        for i in _order(db, [ids[j] for j in others], score[others], max(0, k - len(guaranteed)), s)
    ]
    final = sorted(guaranteed, key=lambda i: -score[i]) + picked
    ranked = [
        _scored(rows[i], raw, score, i, i in set(guaranteed), pool.via[rows[i].id]) for i in final
    ]
    return _render(spec, query, ranked, agent_name, self_text, f.excluded_count, len(rows))


def _scored(
    row: BlockRow,
    raw: Mapping[str, npt.NDArray[np.float64]],
    score: npt.NDArray[np.float64],
    i: int,
    guaranteed: bool,
    via: str,
) -> ScoredBlock:
    return ScoredBlock(
        id=row.id,
        content=row.content,
        tags=row.tags,
        cue=row.cue,
        status=row.status,
        score=round(float(score[i]), 6),
        similarity=round(float(raw["similarity"][i]), 6),
        confidence=round(float(raw["confidence"][i]), 6),
        recency=round(float(raw["recency"][i]), 6),
        centrality=round(float(raw["centrality"][i]), 6),
        reinforcement=round(float(raw["reinforcement"][i]), 6),
        guaranteed=guaranteed,
        via=via,
    )


def _render(
    spec: FrameSpec,
    query: str | None,
    ranked: list[ScoredBlock],
    agent_name: str,
    self_text: str | None,
    excluded: int,
    candidates: int,
) -> FrameResult:
    header = render_header(spec, agent_name, self_text)
    header_tokens = budget_mod.count_tokens(header)
    items = {b.id: RenderItem(b.id, b.content, b.tags, b.cue) for b in ranked}
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
    )
