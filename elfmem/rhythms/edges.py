"""Semantic edges: dream links each block it touches to its nearest active neighbours.

A pair whose cosine reaches ``memory.edge_score_threshold`` (stated for the embedded
model, moved to the configured model's scale: ``index/calibration.py``) becomes a ``similar`` edge
in the ledger, written on both blocks' notes so both ends gain centrality. No block ever holds more
than ``memory.edge_degree_cap`` learned edges: pairs are taken strongest first and a pair is
refused once either end is full, so a hub never swallows the graph and what is kept is the
strongest. An edge already present is never written again, so dreaming twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from elfmem.block.model import Block
from elfmem.index import queries, vector_store
from elfmem.index.calibration import model_cuts
from elfmem.rhythms.adaptive import all_learned_edges
from elfmem.rhythms.core import Core

RELATION = "similar"


@dataclass(frozen=True)
class Edge:
    """One direction of a semantic link: written on ``source``'s note, pointing at ``target``."""

    source: str
    target: str
    weight: float


def nearest_active(
    core: Core, batch: Sequence[Block], vecs: Mapping[str, np.ndarray], k: int = 3, chunk: int = 256
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


def _candidates(
    core: Core,
    sources: Sequence[Block],
    vecs: Mapping[str, np.ndarray],
    fresh: Sequence[Block],
    exclude: Collection[str],
    threshold: float,
    cap: int,
    near: Mapping[str, Sequence[tuple[str, float]]],
) -> dict[tuple[str, str], float]:
    """The closest pairs (sorted ids) at or above the threshold, with their cosines.

    Each source offers only its ``2 × cap + 1`` nearest blocks of each kind, so the pairs grow with
    the sources, never with the square of the memory. Sources in ``near`` offer those candidates
    instead of being searched again.
    """
    k = cap * 2 + 1  # room for refusals at full ends, and one more: an active source finds itself
    pairs: dict[tuple[str, str], float] = {}

    def offer(a: str, b: str, cos: float) -> None:
        if a != b and cos >= threshold and a not in exclude and b not in exclude:
            pairs[(min(a, b), max(a, b))] = round(cos, 4)

    for block_id, found in near.items():
        for other_id, cos in found[:k]:
            offer(block_id, other_id, cos)
    sources = [b for b in sources if b.id not in near]
    _search(core, sources, vecs, fresh, k, offer)
    return pairs


def _search(
    core: Core,
    sources: Sequence[Block],
    vecs: Mapping[str, np.ndarray],
    fresh: Sequence[Block],
    k: int,
    offer: Callable[[str, str, float], None],
) -> None:
    """Offer each source's k nearest active blocks and k nearest ``fresh`` blocks."""
    for block, hits in zip(sources, nearest_active(core, sources, vecs, k=k), strict=True):
        for other, cos in hits:
            offer(block.id, other.id, cos)
    src = [b for b in sources if b.id in vecs]
    new = [b for b in fresh if b.id in vecs]
    if not (src and new):
        return
    # Blocks promoted in this run are not active in the index yet: one product per chunk.
    targets = np.stack([vecs[b.id] for b in new])
    for start in range(0, len(src), 256):
        part = src[start : start + 256]
        scores = np.stack([vecs[b.id] for b in part]) @ targets.T
        top = np.argpartition(-scores, min(k, scores.shape[1] - 1), axis=1)[:, :k]
        for row, block in enumerate(part):
            for j in top[row]:
                offer(block.id, new[j].id, float(scores[row, j]))


def propose_edges(
    core: Core,
    sources: Sequence[Block],
    vecs: Mapping[str, np.ndarray],
    *,
    fresh: Sequence[Block] = (),
    exclude: Collection[str] = (),
    pending: Iterable[tuple[str, str]] = (),
    near: Mapping[str, Sequence[tuple[str, float]]] | None = None,
) -> list[Edge]:
    """The new semantic edges for ``sources``: strongest first, within the degree cap at both ends.

    ``fresh`` are blocks promoted in this run (valid targets the index does not show as active
    yet); ``exclude`` are blocks leaving the active set; ``pending`` are (source, target) links
    this run writes anyway (look-alikes): they count against the cap and are not duplicated.
    ``near`` holds candidates already found for some sources (dream's batch search: valid
    targets only, best first); the others are searched here.
    """
    threshold = model_cuts(core.embedder).scaled(core.config.memory.edge_score_threshold)
    cap = core.config.memory.edge_degree_cap
    if cap <= 0 or not sources:
        return []
    pairs = _candidates(core, sources, vecs, fresh, exclude, threshold, cap, near or {})
    if not pairs:
        return []
    folds = core.ledger.folded_many({b for pair in pairs for b in pair})
    linked: dict[str, set[str]] = {}
    degree: dict[str, int] = {}
    for block_id, folded in folds.items():
        learned = all_learned_edges(folded)
        linked[block_id] = {t for t, rel in learned if rel == RELATION}
        degree[block_id] = len(learned)
    for a, b in pending:
        if a in linked and b not in linked[a]:
            linked[a].add(b)
            degree[a] += 1
    edges: list[Edge] = []
    for (a, b), cos in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])):
        needed = [(x, y) for x, y in ((a, b), (b, a)) if y not in linked[x]]
        if not needed or any(degree[x] >= cap for x, _ in needed):
            continue
        for x, y in needed:
            linked[x].add(y)
            degree[x] += 1
            edges.append(Edge(x, y, cos))
    return edges


def edge_lines(core: Core, edges: Iterable[Edge], commit: str | None) -> dict[str, list[str]]:
    """Ledger lines per block; stamped with the run's commit so ``undo`` of it cancels them."""
    extra = {"commit": commit} if commit else {}
    lines: dict[str, list[str]] = {}
    for e in edges:
        lines.setdefault(e.source, []).append(
            core.event(
                "edge",
                e.source,
                target=e.target,
                relation=RELATION,
                weight=e.weight,
                source="similar",
                **extra,
            )
        )
    return lines
