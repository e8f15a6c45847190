"""The dense first-stage search: cosine over the vectors of blocks and of long blocks' passages.

The float32 matrix is kept per process and reloaded only when the index ``generation`` moves, so a
query costs one matrix product; a reload reads only the rows logged as changed since the
generation it holds (``vecdelta.py``) and appends them to the mapped file (``vectorfile.py``).
Lexical search is in ``fulltext.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from elfmem.index.db import IndexDB
from elfmem.index.vecdelta import next_tables
from elfmem.index.vectorfile import (
    FREE,
    VectorTable,
    passage_file_path,
    vector_file_path,
    write_vector_file,
)
from elfmem.lazyload import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
else:
    np = lazy_module("numpy")

PASSAGE_MEAN_SHARE = 0.0
"""A long block's dense score: its best passage (or whole-block) cosine, blended with this share of
its passages' mean cosine. Chosen by leave-one-conversation-out (docs/benchmarks.md)."""


@dataclass(frozen=True, slots=True)
class _Snapshot:
    ids: list[str]
    statuses: npt.NDArray[np.str_]
    matrix: Matrix
    rows: dict[str, int]
    key: tuple[str, str] | None
    passages: Matrix = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    owners: npt.NDArray[np.intp] = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    """Each passage row's block row in ``matrix`` (passages of long blocks only)."""
    masks: dict[frozenset[str], npt.NDArray[np.bool_]] = field(default_factory=dict)
    """Rows per set of statuses, computed once per snapshot (a string compare of every row)."""
    tables: tuple[VectorTable, VectorTable] | None = None
    """The block and passage tables this was made from (the base of the next patch)."""

    @classmethod
    def of(
        cls, table: VectorTable, key: tuple[str, str] | None, passages: VectorTable | None = None
    ) -> _Snapshot:
        rows = {block_id: i for i, block_id in enumerate(table.ids) if block_id != FREE}
        statuses = np.array(table.statuses, dtype=str)
        kept = (table, passages or _no_rows())
        if passages is None or not passages.ids:
            return cls(table.ids, statuses, table.matrix, rows, key, tables=kept)
        owned = [(k, rows[i]) for k, i in enumerate(passages.ids) if i in rows]
        keep = np.array([k for k, _ in owned], dtype=np.intp)
        owners = np.array([r for _, r in owned], dtype=np.intp)
        matrix = np.asarray(passages.matrix[keep]) if len(keep) else passages.matrix[:0]
        return cls(table.ids, statuses, table.matrix, rows, key, matrix, owners, tables=kept)

    def scores(self, query: Matrix) -> Matrix:
        """Every block's dense score: its cosine, or for a long block its best passage's."""
        scores = _product(self.matrix, query)
        if not len(self.owners):
            return scores
        per = _product(self.passages, query)
        best = scores.copy()
        np.maximum.at(best, self.owners, per)
        if PASSAGE_MEAN_SHARE:
            counts = np.bincount(self.owners, minlength=len(scores))
            sums = np.bincount(self.owners, weights=per, minlength=len(scores))
            long = counts > 0
            mean = np.divide(sums, counts, out=np.zeros_like(best), where=long)
            share = PASSAGE_MEAN_SHARE
            best = np.where(long, (1 - share) * best + share * mean, best).astype(np.float32)
        return best

    def status_mask(self, statuses: Iterable[str]) -> npt.NDArray[np.bool_]:
        wanted = frozenset(statuses)
        mask = self.masks.get(wanted)
        if mask is None:
            mask = self.masks[wanted] = np.isin(self.statuses, list(wanted))
        return mask

    def live(self) -> npt.NDArray[np.bool_] | None:
        """Rows holding a block (None: all of them), free slots left out."""
        if len(self.rows) == len(self.ids):
            return None
        mask = self.masks.get(_LIVE)
        if mask is None:
            mask = self.masks[_LIVE] = self.statuses != FREE
        return mask


_LIVE = frozenset({"\0live"})


def _product(matrix: Matrix, query: Matrix) -> Matrix:
    """``matrix @ query`` in numpy's own loop, on one core. BLAS splits a matrix-vector product
    across threads that spin while they wait: at 100k rows on a busy two-core machine that was
    16 ms of CPU and 83 ms of wall per product, against 5 ms and 35 ms here (the product is
    bound by memory, not arithmetic)."""
    if not len(matrix):
        return np.zeros(0, dtype=np.float32)
    return np.asarray(np.einsum("ij,j->i", matrix, query), dtype=np.float32)


@cache
def _no_rows() -> VectorTable:
    """A table of no rows, made at first use: building it at import would load numpy."""
    return VectorTable([], [], np.zeros((0, 0), dtype=np.float32))


class VectorStore:
    """Every block's vector as one matrix, with ids and statuses, cached across queries.

    A reload swaps in a whole new snapshot, so a query running in another thread sees either the
    old state or the new one, never a mix.
    """

    def __init__(self) -> None:
        self._snap = _Snapshot.of(_no_rows(), None)
        self._lock = threading.Lock()

    @property
    def ids(self) -> list[str]:
        """Each row's block id; ``vectorfile.FREE`` for a free slot (its status is FREE too)."""
        return self._snap.ids

    @property
    def matrix(self) -> Matrix:
        return self._snap.matrix

    @property
    def statuses(self) -> npt.NDArray[np.str_]:
        """Each row's block status, aligned with ``ids`` and ``matrix``."""
        return self._snap.statuses

    def load(self, db: IndexDB) -> VectorStore:
        """Refresh from ``db`` if it changed since the last load (one meta read otherwise)."""
        with self._lock:
            if _key(db.meta()) != self._snap.key:
                self._snap = _next_snapshot(db, self._snap)
        return self

    def dense(
        self,
        query_vec: npt.ArrayLike,
        limit: int,
        allowed: set[str] | None = None,
        statuses: Iterable[str] | None = None,
    ) -> list[tuple[str, float]]:
        """(block id, cosine) best first among ``allowed`` ids and ``statuses`` (None = any)."""
        snap = self._snap
        if limit <= 0 or not snap.ids:
            return []
        scores = snap.scores(np.asarray(query_vec, dtype=np.float32).reshape(-1))
        keep = _mask(snap, allowed, statuses)
        if keep is not None:
            scores = np.where(keep, scores, -np.inf)
        count = min(limit, len(snap.ids) if keep is None else int(keep.sum()))
        if count <= 0:
            return []
        top = np.argpartition(-scores, count - 1)[:count]
        # Ties by id, not by row: a patched snapshot and a fresh one hold rows in other orders.
        found = sorted((-float(scores[i]), snap.ids[i]) for i in top)
        return [(block_id, -score) for score, block_id in found]

    def scores_for(self, query_vec: npt.ArrayLike, ids: Iterable[str]) -> dict[str, float]:
        """The dense score ``dense`` would give each known id of ``ids`` (best passage for a long
        block), however far down the ranking it is; unknown ids skipped."""
        snap = self._snap
        known = [i for i in ids if i in snap.rows]
        if not known:
            return {}
        scores = snap.scores(np.asarray(query_vec, dtype=np.float32).reshape(-1))
        return {i: float(scores[snap.rows[i]]) for i in known}

    def row_numbers(self, ids: Iterable[str]) -> dict[str, int]:
        """Each known id's row in ``matrix`` (and ``ids``, ``statuses``); unknown ids skipped."""
        rows = self._snap.rows
        return {i: rows[i] for i in ids if i in rows}

    def vectors_for(self, ids: Iterable[str]) -> dict[str, Matrix]:
        """Stored vectors of ``ids`` (for MMR and near-duplicate checks); unknown ids skipped."""
        snap = self._snap
        known = [i for i in ids if i in snap.rows]
        if not known:
            return {}
        # One gather from the (possibly memory-mapped) matrix, not one slice object per id.
        picked = np.asarray(snap.matrix[[snap.rows[i] for i in known]])
        return dict(zip(known, picked, strict=True))


def _key(meta: dict[str, str]) -> tuple[str, str]:
    return (meta.get("index_uuid", ""), meta.get("generation", ""))


def _next_snapshot(db: IndexDB, held: _Snapshot) -> _Snapshot:
    """The mapped files when they match the index; else the newest of them and ``held`` patched
    with the rows changed since; else every row from SQLite."""
    side = vector_file_path(db.path) if db.path is not None else None
    more = passage_file_path(db.path) if db.path is not None else None
    base = None if held.key is None or held.tables is None else (held.key, *held.tables)
    found = next_tables(db, base, None if side is None or more is None else (side, more))
    if found is None:
        return _fresh_snapshot(db)
    key, table, passages = found
    return _Snapshot.of(table, key, passages)


def _fresh_snapshot(db: IndexDB) -> _Snapshot:
    """Every row from SQLite (then saved to the mapped files)."""
    side = vector_file_path(db.path) if db.path is not None else None
    more = passage_file_path(db.path) if db.path is not None else None
    with db.reading() as conn:
        key = _key(dict(conn.execute("SELECT key, value FROM meta").fetchall()))
        table = _table(
            conn.execute(
                "SELECT v.block_id, b.status, v.vec FROM vectors v"
                " JOIN blocks b ON b.id = v.block_id ORDER BY b.num"
            ).fetchall()
        )
        passages = _table(
            conn.execute(
                "SELECT p.block_id, b.status, p.vec FROM passages p"
                " JOIN blocks b ON b.id = p.block_id ORDER BY b.num, p.ord"
            ).fetchall()
        )
    if side is not None and more is not None:
        passages = write_vector_file(more, key, passages) or passages
        table = write_vector_file(side, key, table) or table
    return _Snapshot.of(table, key, passages)


def _table(rows: list[tuple[str, str, bytes]]) -> VectorTable:
    dims = len(rows[0][2]) // 4 if rows else 0
    flat = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4")
    matrix = flat.reshape(len(rows), dims).astype(np.float32, copy=False)
    return VectorTable([r[0] for r in rows], [r[1] for r in rows], matrix)


def _mask(
    snap: _Snapshot, allowed: set[str] | None, statuses: Iterable[str] | None
) -> npt.NDArray[np.bool_] | None:
    keep: npt.NDArray[np.bool_] | None = None
    if statuses is not None:
        keep = snap.status_mask(set(statuses) - {FREE})
    elif allowed is None:
        keep = snap.live()
    if allowed is not None:
        chosen = np.zeros(len(snap.ids), dtype=bool)
        chosen[[snap.rows[i] for i in allowed if i in snap.rows]] = True
        keep = chosen if keep is None else keep & chosen
    return keep


_STORES: dict[str, VectorStore] = {}
_STORES_KEPT = 8
_STORES_LOCK = threading.Lock()


def vector_store(db: IndexDB) -> VectorStore:
    """This process's cached ``VectorStore`` for ``db``, refreshed if the index changed."""
    uuid = db.meta().get("index_uuid", "")
    with _STORES_LOCK:
        store = _STORES.pop(uuid, None) or VectorStore()
        _STORES[uuid] = store  # most recently used last
        while len(_STORES) > _STORES_KEPT:
            del _STORES[next(iter(_STORES))]
    return store.load(db)
