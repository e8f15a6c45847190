"""The retrieval pipeline (docs/architecture.md, "The read path"; docs/ranking.md).

Filter, seed, fuse, gate, expand, score, place corrections, diversify, guarantee, pack.

Exclusions are applied before candidates are counted, so an excluded block never takes a seed
slot. Relevance gates everything after it: a lexical hit (a query word that is not a stop word)
or a vector hit at ``DENSE_FLOOR`` or above bears on the query; nothing else becomes a candidate
except a graph neighbour of a relevant block, which inherits ``INHERIT`` of that block's
relevance, and the newer end of a revision, which inherits the relevance of what it revises.
Temporal contiguity only reorders the candidates the searches found.
When fewer than k blocks bear on the query, fewer are returned and the result says so.
The inbox is searched too: a capture is findable at once, ranked by relevance alone and marked
as not yet consolidated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from elfmem.index import IndexDB, lexical, queries, vector_store
from elfmem.index.fulltext import lexical_soon
from elfmem.index.queries import BlockRow
from elfmem.index.termhits import term_hits
from elfmem.retrieval import (
    answer,
    coverage,
    dates,
    decay,
    dense_query,
    fusechoice,
    ranking,
    reorder,
    signals,
    truth,
)
from elfmem.retrieval.frames import FrameSpec, is_guaranteed
from elfmem.retrieval.late import Late, remembered
from elfmem.retrieval.result import FrameResult
from elfmem.retrieval.settings import DENSE_FLOOR, SearchSettings
from elfmem.retrieval.state import PRIOR, BlockState

Embed = Callable[[str], npt.NDArray[np.float32]]
States = Callable[[Sequence[BlockRow]], Mapping[str, BlockState]]
"""Ledger state of candidate blocks, given their index rows (read once, by ``_candidates``)."""

FEEDBACK_SKIP = 4
"""How many refuted or superseded blocks dense feedback looks past for one that stands."""
SEARCHED = ("active", "inbox")


@dataclass
class _Pool:
    """Candidates and how each got there."""

    via: dict[str, str] = field(default_factory=dict)
    lexical: list[str] = field(default_factory=list)
    lexical_scores: dict[str, float] = field(default_factory=dict)
    lexical_scale: dict[str, float] | None = None
    """Each lexical hit's rank-fusion factor (``coverage.weights``); None: all whole."""
    dense: dict[str, float] = field(default_factory=dict)
    query_vec: npt.NDArray[np.float32] | None = None
    dense_vec: npt.NDArray[np.float32] | None = None
    """The vector ``dense`` was scored with (the query, or the feedback search's moved one)."""
    late: Late | None = None
    """Late-interaction scores for score fusion, kept per block for this recall."""

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
    statuses = SEARCHED if s.search_inbox else ("active",)

    def keep(block_id: str) -> bool:
        return block_id not in f.excluded and (f.include is None or block_id in f.include)

    if embed is None:
        hits = lexical(db, query, s.seeds + extra, statuses, s.field_weights)
    else:  # the lexical search runs in a thread while the query is embedded and matched
        lexical_hits = lexical_soon(db, query, s.seeds + extra, statuses, s.field_weights)
        pool.query_vec = pool.dense_vec = embed(query)
        pool.dense = _dense(db, pool.query_vec, f, s)
        hits = lexical_hits()
    pool.lexical_scores = dict([(b, score) for b, score in hits if keep(b)][: s.seeds])
    if pool.lexical_scores and pool.query_vec is not None:
        _cover(db, query, pool, s)
    pool.lexical = list(pool.lexical_scores)
    pool.add(pool.lexical, "search")
    pool.add(pool.dense, "search")
    return pool


def _cover(db: IndexDB, query: str, pool: _Pool, s: SearchSettings) -> None:
    """Keep the lexical hits that cover the question and weigh each by how much of it it holds
    (``retrieval.coverage``). Only with a dense arm: without one the words are all there is."""
    if s.coverage_min <= 0 and s.coverage_power <= 0:
        return
    hits = term_hits(db, query, list(pool.lexical_scores), s.field_weights)
    shares = coverage.coverage(hits, coverage.answer_kinds(query))
    if s.coverage_min > 0:
        pool.lexical_scores = coverage.covered(pool.lexical_scores, shares, s.coverage_min)
    if s.coverage_power > 0:
        pool.lexical_scale = coverage.weights(
            {b: shares.get(b, 0.0) for b in pool.lexical_scores},
            s.coverage_power,
            s.coverage_whole,
        )


def _dense(
    db: IndexDB, vec: npt.NDArray[np.float32], f: _Filters, s: SearchSettings
) -> dict[str, float]:
    """The vector hits that bear on the query (cosine at the floor or above), best first."""
    statuses = SEARCHED if s.search_inbox else ("active",)
    found = vector_store(db).dense(vec, s.seeds + len(f.excluded), f.include, statuses)
    floor = DENSE_FLOOR if s.dense_floor is None else s.dense_floor
    keep = [
        (b, c)
        for b, c in found
        if c >= floor and b not in f.excluded and (f.include is None or b in f.include)
    ]
    return dict(keep[: s.seeds])


def _fuse(db: IndexDB, pool: _Pool, query: str, s: SearchSettings) -> dict[str, float]:
    vec = pool.dense_vec if s.dense_fill else None
    late = pool.late if s.late_share > 0 else None
    return fusechoice.similarity(
        db,
        s.fuse_by,
        list(pool.via),
        pool.lexical_scores,
        pool.dense,
        (s.rrf_k, s.fusion_weights),
        s.score_share,
        query=query,
        field_weights=s.field_weights,
        idf=s.score_idf,
        cosines=None if vec is None else _cosines(db, vec),
        late=late,
        late_share=s.late_share,
        lexical_scale=pool.lexical_scale,
    )


def _cosines(db: IndexDB, vec: npt.NDArray[np.float32]) -> fusechoice.Cosines:
    """Dense scores of any blocks by ``vec``, for score fusion's lexical hits without one."""
    return lambda ids: vector_store(db).scores_for(vec, ids)


def _feedback(
    db: IndexDB,
    pool: _Pool,
    sims: dict[str, float],
    query: str,
    f: _Filters,
    s: SearchSettings,
    states: States,
) -> dict[str, float]:
    """Fused similarity after the dense search ran again, moved toward the first pass's top."""
    if s.dense_feedback <= 0 or pool.query_vec is None or s.dense_feedback_depth <= 0:
        return sims
    moved: list[npt.NDArray[np.float32]] = []

    def search(vec: npt.NDArray[np.float32]) -> dict[str, float]:
        moved.append(vec)
        return _dense(db, vec, f, s)

    found = dense_query.second_search(
        pool.query_vec,
        pool.dense,
        _standing_best(db, sorted(sims, key=lambda b: -sims[b]), states, s.dense_feedback_depth),
        s.dense_feedback,
        vector_store(db).vectors_for,
        search,
    )
    if found is None:
        return sims
    pool.dense = found
    pool.dense_vec = moved[-1] if moved else pool.dense_vec
    pool.add(pool.dense, "search")
    return _fuse(db, pool, query, s)


def _standing_best(db: IndexDB, ranked: Sequence[str], states: States, depth: int) -> list[str]:
    """The first ``depth`` of ``ranked`` that outcomes and corrections leave standing: feedback
    toward a refuted or superseded block would pull its look-alikes up with it."""
    head = list(ranked[: depth + FEEDBACK_SKIP])
    declared: dict[str, list[str]] = {}
    for newer, older in queries.supersedes_pairs(db, head):
        declared.setdefault(older, []).append(newer)
    known = dict(_states_of(db, head, states))
    claims = {n for b in head for n in [*known.get(b, PRIOR).revised_by, *declared.get(b, [])]}
    known.update(_states_of(db, sorted(claims - known.keys()), states))
    return [b for b in head if not truth.set_aside(b, known, declared.get(b, []))][:depth]


def _kept(states: States) -> States:
    """``states`` with each block's answer kept for the rest of one recall: dense feedback
    and the candidates ask about the same top blocks, and nothing writes the ledger while a
    recall ranks."""
    known: dict[str, BlockState] = {}
    asked: set[str] = set()

    def read(rows: Sequence[BlockRow]) -> Mapping[str, BlockState]:
        missing = [r for r in rows if r.id not in asked]
        if missing:
            known.update(states(missing))
            asked.update(r.id for r in missing)
        return {r.id: known[r.id] for r in rows if r.id in known}

    return read


def _states_of(db: IndexDB, ids: Sequence[str], states: States) -> Mapping[str, BlockState]:
    """``states`` of blocks known only by id: their rows are read first."""
    rows = queries.get_blocks(db, ids)
    return states([rows[b] for b in ids if b in rows])


def _expand(
    db: IndexDB, pool: _Pool, sims: dict[str, float], f: _Filters, s: SearchSettings
) -> None:
    """Pull in the declared neighbours of the top seeds, each with inherited relevance."""
    ranked_seeds = list(
        dict.fromkeys([*pool.lexical[: s.expand_from], *list(pool.dense)[: s.expand_from]])
    )
    for seed, neighbours in queries.neighbours(db, ranked_seeds).items():
        for _, other in neighbours:
            if other in f.excluded or (f.include is not None and other not in f.include):
                continue
            inherited = s.inherit * sims.get(seed, 0.0)
            if inherited > sims.get(other, 0.0):
                sims[other] = inherited
            pool.add([other], "expansion")


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
    late: Late | None = None,
) -> FrameResult:
    """Rank ``spec``'s frame for ``query``. ``late`` scores blocks by late interaction
    (``retrieval.late``; the embedded model's ``late_fn``), used by score fusion only."""
    s = settings or SearchSettings()
    k = top_k or spec.top_k
    f = _filters(db, spec)
    states = _kept(states)
    if spec.queryless or not (query or "").strip():
        pool = _Pool()
        scan = (
            f.include
            if f.include is not None
            else {r.id for r in queries.list_blocks(db, status="active")}
        )
        pool.add(sorted(b for b in scan if b not in f.excluded), "scan")
        sims = dict.fromkeys(pool.via, 1.0)
    else:
        pool = _seed(db, spec, query or "", embed, f, s)
        pool.late = None if late is None else remembered(late)
        sims = _feedback(db, pool, _fuse(db, pool, query or "", s), query or "", f, s, states)
        sims = reorder.reorder(db, pool.lexical, sims, s)
        _expand(db, pool, sims, f, s)
    pool.add(sorted(f.guaranteed), "guarantee")
    rows, st = _candidates(db, pool, states)
    pairs = _revisions(db, rows, st)
    pulled = _pull_revisions(db, pool, sims, pairs, f)
    if pulled:
        rows, st = _candidates(db, pool, states)
        pairs = _revisions(db, rows, st)
    guaranteed_at = {
        i for i, r in enumerate(rows) if r.id in f.guaranteed and is_guaranteed(r.tags, spec)
    }
    relevant = [i for i, r in enumerate(rows) if i in guaranteed_at or sims.get(r.id, 0.0) > 0]
    rows = [rows[i] for i in relevant]
    st = [st[i] for i in relevant]
    guaranteed = {n for n, i in enumerate(relevant) if i in guaranteed_at}
    rel = np.array([sims.get(r.id, 0.0) for r in rows], dtype=np.float64)
    searched = not spec.queryless and bool((query or "").strip())
    span = dates.named_span(query or "", s.today or datetime.now(UTC).date()) if searched else None
    if span is not None:
        inside = [_within(r.said, span) for r in rows]
        rel = ranking.lift_in_time(rel, inside, s.time_boost, s.time_lift_max)
    show_said = span is not None or (searched and dates.asks_when(query or ""))
    shown = {} if spec.queryless or not (query or "").strip() else sims  # no search scored them
    raw = _signals(rows, shown, {r.id: x for r, x in zip(rows, st, strict=True)})
    composite = ranking.composite_scores(rows, rel, raw, st, spec.weights)
    vs = vector_store(db)
    final = ranking.order(
        rows,
        composite,
        st,
        guaranteed,
        pairs,
        k,
        lambda ids: vs.vectors_for(ids),
        use_mmr=s.use_mmr,
        lam=s.mmr_lambda,
        twin=ranking.TWIN_COSINE if s.twin_cosine is None else s.twin_cosine,
        relevance=list(rel) if searched else None,
    )
    ranked = [
        answer.scored(rows[r.index], raw, st[r.index], r, pool.via[rows[r.index].id]) for r in final
    ]
    bearing = len(rows) - len(guaranteed)
    said = {r.id: r.said for r in rows if r.said} if show_said else {}
    return answer.packed(
        spec, query, ranked, agent_name, self_text, f.excluded_count, len(rows), bearing, k, said
    )


def _within(said: str, span: dates.Span) -> bool:
    block_span = dates.span_of(said) if said else None
    return block_span is not None and block_span.overlaps(span)


def _candidates(
    db: IndexDB, pool: _Pool, states: States
) -> tuple[list[BlockRow], list[BlockState]]:
    rows_by_id = queries.get_blocks(db, pool.via)
    rows = [rows_by_id[b] for b in pool.via if b in rows_by_id and rows_by_id[b].status in SEARCHED]
    known = states(rows)
    return rows, [known.get(r.id, PRIOR) for r in rows]


def _revisions(
    db: IndexDB, rows: Sequence[BlockRow], st: Sequence[BlockState]
) -> list[tuple[str, str]]:
    """(newer, older) pairs touching the candidates: declared supersedes and ledger revises."""
    pairs = set(queries.supersedes_pairs(db, [r.id for r in rows]))
    for row, state in zip(rows, st, strict=True):
        pairs.update((row.id, older) for older in state.revises)
        pairs.update((newer, row.id) for newer in state.revised_by)
    return sorted(pairs)


def _pull_revisions(
    db: IndexDB, pool: _Pool, sims: dict[str, float], pairs: Sequence[tuple[str, str]], f: _Filters
) -> bool:
    """Add the newer end of each revision whose older end is relevant: it answers the same
    question, so it inherits that relevance."""
    added = False
    for newer, older in pairs:
        if sims.get(older, 0.0) <= 0 or newer in f.excluded:
            continue
        if f.include is not None and newer not in f.include:
            continue
        if sims.get(newer, 0.0) < sims[older]:
            sims[newer] = sims[older]
        if newer not in pool.via:
            pool.add([newer], "revision")
            added = True
    return added
