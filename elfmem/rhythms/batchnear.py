"""The neighbours dream needs for a batch, found in one search before it decides anything.

Each block of the batch is compared with the blocks already active and with the blocks before it
in the batch (which become active as the run promotes them): one search over that pool, each
query limited to pool rows of lower rank (active: −1, a batch block: its position). The decisions
then walk the batch in order and keep, of each block's candidates, those still valid: active, or
promoted earlier in this run. The same candidates give the semantic edges of the promoted blocks.

The search is exact up to ``nearest.EXACT_PAIRS`` products and an inverted file past it, so
the run costs about the same per block at 10k blocks and at 100k (``bench/dream_scale.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from elfmem.block.model import Block
from elfmem.index import queries, vector_store
from elfmem.index.nearest import NeighbourIndex
from elfmem.rhythms.core import Core

NEAR = 5
"""Candidates a block is checked against for duplicates and look-alikes."""


class BatchNear:
    """Candidate neighbours of every block of a batch among active and earlier batch blocks."""

    def __init__(
        self, core: Core, batch: Sequence[Block], vecs: Mapping[str, np.ndarray], k: int = 16
    ) -> None:
        vs = vector_store(core.db())
        # The pool is the index's own matrix, not a copy: rows that are neither active nor in the
        # batch get a rank no query reaches.
        self.ids = vs.ids
        self.rank = np.full(len(vs.ids), np.iinfo(np.int64).max, dtype=np.int64)
        self.rank[vs.statuses == "active"] = -1
        at = vs.row_numbers(b.id for b in batch if b.id in vecs)
        asked = [(i, b.id, at[b.id]) for i, b in enumerate(batch) if b.id in at]
        for position, _, row in asked:
            self.rank[row] = position
        self.kind = "exact"
        self._found: dict[str, list[tuple[int, float]]] = {}
        self._blocks: dict[str, Block] = {}
        if not asked:
            return
        mine = np.stack([vecs[bid] for _, bid, _ in asked]).astype(np.float32)
        positions = np.asarray([i for i, _, _ in asked], dtype=np.int64)
        index = NeighbourIndex.build(vs.matrix, self.rank, queries=len(asked))
        self.kind = index.kind
        found = index.top_k(mine, k, q_rank=positions)
        for (_, bid, _), rows, scores in zip(asked, found.rows, found.scores, strict=True):
            self._found[bid] = [
                (int(r), float(s)) for r, s in zip(rows, scores, strict=True) if r >= 0
            ]
        wanted = {self.ids[r] for hits in self._found.values() for r, _ in hits if self.rank[r] < 0}
        rows_by_id = queries.get_blocks(core.db(), wanted)
        self._blocks = {bid: row.to_block() for bid, row in rows_by_id.items()}

    def near(
        self, block_id: str, accepted: Mapping[str, Block], limit: int | None = NEAR
    ) -> list[tuple[Block, float]]:
        """The ``limit`` closest active blocks and blocks promoted earlier in the run (None:
        every candidate found, closest first)."""
        out: list[tuple[Block, float]] = []
        for row, cos in self._found.get(block_id, ()):
            other_id = self.ids[row]
            known = self._blocks if self.rank[row] < 0 else accepted
            other = known.get(other_id)
            if other is not None and other_id != block_id:
                out.append((other, cos))
                if len(out) == limit:
                    break
        return out

    def edge_candidates(
        self, promoted: Collection[str], exclude: Collection[str]
    ) -> dict[str, list[tuple[str, float]]]:
        """For each promoted block, its candidates that stay active after the run."""
        out: dict[str, list[tuple[str, float]]] = {}
        for block_id in promoted:
            keep = []
            for row, cos in self._found.get(block_id, ()):
                other_id = self.ids[row]
                valid = self.rank[row] < 0 or other_id in promoted
                if valid and other_id not in exclude and other_id != block_id:
                    keep.append((other_id, cos))
            out[block_id] = keep
        return out
