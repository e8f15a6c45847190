"""The ledger as retrieval sees it: per-block state and the session clock, folded from notes.

State is read from the notes ref plus the unflushed spool, folded per block, and cached per
process until either changes. The numbers retrieval ranks by are also kept in the index
(index/ledgerstate.py), keyed to the notes commit they were folded at and moved along by a
notes-tree diff, so a query in a fresh process reads rows instead of folding notes. They are a
cache of the notes like the rest of the index: deleting it loses no adaptive state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache

import pygit2

from elfmem.block.model import TIER_LAMBDA
from elfmem.clock import WALL, Clock
from elfmem.index import IndexDB, ledgerstate, queries
from elfmem.index.ledgerstate import StoredState
from elfmem.index.queries import BlockRow
from elfmem.retrieval.decay import (
    active_hours,
    active_hours_at,
    effective_lambda,
    merge_intervals,
)
from elfmem.retrieval.state import BlockState
from elfmem.store import Store
from elfmem.store.ledger import BlockState as Folded
from elfmem.store.ledger import fold, fold_clock, outcomes_since, ts_micros
from elfmem.store.notes import anchor_for_block, clock_anchor

CO_RETRIEVAL_SESSIONS = 3
"""Distinct sessions a pair must be returned together in before it becomes an edge."""
CO_RETRIEVAL_WEIGHT = 1.0
DEGREE_CAP = 5
"""Learned edges counted per block; the strongest win."""
EAGER_REFOLD = 256
"""A query refolds at most this many changed notes at once; more are refolded as they are met."""


@lru_cache(maxsize=65536)
def _epoch(iso: str) -> float | None:
    """Seconds since the epoch of a block's ``created`` stamp (parsed once per distinct stamp)."""
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


class LedgerView:
    """Folded ledger state for one open memory, refreshed when the notes tip or spool moves."""

    def __init__(self, store: Store, tip: str | None = None, clock: Clock | None = None) -> None:
        self.store = store
        self.clock: Clock = clock or WALL
        """What "now" is for decay and an open session's end."""
        self.fixed_tip = tip
        """Read the ledger as of this notes commit (time travel; "" = before any), no spool."""
        self._key: tuple[str | None] | None = None
        self._spool: dict[str, list[str]] = {}
        self._spool_offset = 0
        self._folded: dict[str, Folded] = {}
        self._numbers: dict[str, StoredState] = {}
        """Retrieval numbers per folded block, evicted with its fold."""
        self._folded_by_anchor: dict[str, str] = {}
        self._clock: list[tuple[float, float]] | None = None
        self.open_session: tuple[str, float] | None = None
        """(id, wall-clock start) of this process's session, counted up to now."""

    def _refresh(self) -> None:
        """Keep folds whose notes did not change: evict by notes diff and by newly spooled anchors.

        The spool is append-only between flushes, so only its new tail is read. A flush moves the
        notes tip, and a moved tip (or a shorter spool) starts the spool over from its beginning.
        """
        tip = self.fixed_tip if self.fixed_tip is not None else self.store.ledger.tip()
        size = 0 if self.fixed_tip is not None else self.store.spool.size()
        if self._key is not None and tip == self._key[0] and size == self._spool_offset:
            return
        stale: set[str] = set()
        if self._key is None or tip != self._key[0] or size < self._spool_offset:
            old_tip = self._key[0] if self._key is not None else None
            if self._key is not None and old_tip != tip:
                stale |= (
                    self.store.ledger.changed_anchors(str(old_tip), tip)
                    if old_tip and tip
                    else set(self._folded_by_anchor)
                )
            stale |= set(self._spool)
            self._spool, self._spool_offset, self._clock = {}, 0, None
        self._key = (tip,)
        if self.fixed_tip is None:
            tail, self._spool_offset = self.store.spool.read_from(self._spool_offset)
            for anchor, line in tail:
                self._spool.setdefault(anchor, []).append(line)
                stale.add(anchor)
        if clock_anchor() in stale:
            self._clock = None
        for anchor in stale:
            block_id = self._folded_by_anchor.pop(anchor, None)
            if block_id is not None:
                self._folded.pop(block_id, None)
                self._numbers.pop(block_id, None)

    def spooled(self) -> tuple[str | None, frozenset[str]]:
        """The notes commit this view reads ("" = before any) and the anchors with spooled
        events on top of it."""
        self._refresh()
        return (self._key[0] if self._key is not None else None), frozenset(self._spool)

    def lines(self, anchor: str) -> list[str]:
        self._refresh()
        if self.fixed_tip == "":
            return []  # time travel to before the first note
        text = self.store.ledger.read(anchor, self.fixed_tip) or ""
        return [*text.splitlines(), *self._spool.get(anchor, [])]

    def folded(self, block_id: str) -> Folded:
        return self.folded_many([block_id])[block_id]

    def folded_many(self, block_ids: Iterable[str]) -> dict[str, Folded]:
        """Folds for many blocks; the notes of those not cached are read in one tree walk."""
        self._refresh()
        ids = list(dict.fromkeys(block_ids))
        missing = {anchor_for_block(b): b for b in ids if b not in self._folded}
        if missing:
            notes = (
                {} if self.fixed_tip == "" else self.store.ledger.read_many(missing, self.fixed_tip)
            )
            for anchor, block_id in missing.items():
                lines = [*(notes.get(anchor) or "").splitlines(), *self._spool.get(anchor, [])]
                self._folded[block_id] = fold(lines)
                self._folded_by_anchor[anchor] = block_id
        return {b: self._folded[b] for b in ids}

    def intervals(self) -> list[tuple[float, float]]:
        self._refresh()
        if self._clock is None:
            self._clock = fold_clock(self.lines(clock_anchor()))
        out = list(self._clock)
        if self.open_session is not None:
            out.append((self.open_session[1], self.clock.time()))
        return merge_intervals(out)

    def now_hours(self, at: float | None = None) -> float:
        """Active (session) hours on the memory's clock at wall time ``at`` (default now)."""
        when = self.clock.time() if at is None else at
        return active_hours(self.intervals(), when)

    def states(
        self, rows: Sequence[BlockRow], declared: Mapping[str, int], db: IndexDB | None = None
    ) -> dict[str, BlockState]:
        """Retrieval state per block: Beta, reinforcement, hours since use, λ, weighted degree.

        With ``db`` the folded numbers come from (and are saved to) the index's rows, and a
        declared ``supersedes`` counts the older block's outcomes from the newer block's
        ``created`` time (``declared_claims``).
        """
        intervals = self.intervals()
        now = float(active_hours_at(intervals, [self.clock.time()])[0])
        born = active_hours_at(intervals, [(_epoch(r.created) or 0.0) for r in rows])
        out: dict[str, BlockState] = {}
        folds = self.stored_many([r.id for r in rows], db)
        claims = declared_claims(db, [r.id for r in rows]) if db is not None else {}
        revised = self.folded_many([r.id for r in rows if folds[r.id].revised_by or r.id in claims])
        for row, born_h in zip(rows, born, strict=True):
            f = folds[row.id]
            last = max(float(born_h), f.last_use if f.last_use is not None else float("-inf"))
            out[row.id] = BlockState(
                alpha=f.alpha,
                beta=f.beta,
                reinforcements=f.reinforcements,
                hours_since_use=max(0.0, now - last),
                lam=effective_lambda(
                    TIER_LAMBDA.get(row.tier, TIER_LAMBDA["standard"]), f.penalties
                ),
                degree=f.degree + declared.get(row.id, 0),
                revises=f.revises,
                revised_by=f.revised_by,
                since_revision=claims_since(revised[row.id], claims.get(row.id, {}))
                if row.id in revised
                else (),
            )
        return out

    def stored_many(self, block_ids: Sequence[str], db: IndexDB | None) -> dict[str, StoredState]:
        """The folded numbers of each block: index rows where they hold, a fold where they don't.

        Blocks with spooled events are always folded here (the rows hold notes only). Folds of
        blocks the rows lacked are saved for the next query and the next process.
        """
        self._refresh()
        tip = self._key[0] if self._key is not None else None
        anchors = {anchor_for_block(b): b for b in block_ids}
        rows: dict[str, StoredState] | None = None
        if db is not None and self.fixed_tip is None:
            rows = self._stored_rows(db, tip or "", [a for a in anchors if a not in self._spool])
        found = {b: rows[a] for a, b in anchors.items() if rows is not None and a in rows}
        missing = [b for b in anchors.values() if b not in found]
        folded = {b: self._numbers_of(b, f) for b, f in self.folded_many(missing).items()}
        if rows is not None and db is not None:
            ledgerstate.keep(
                db,
                tip or "",
                {a: folded[b] for a, b in anchors.items() if b in folded and a not in self._spool},
            )
        return {b: found.get(b) or folded[b] for b in block_ids}

    def _numbers_of(self, block_id: str, folded: Folded) -> StoredState:
        numbers = self._numbers.get(block_id)
        if numbers is None:
            numbers = self._numbers[block_id] = retrieval_numbers(folded)
        return numbers

    def _stored_rows(
        self, db: IndexDB, tip: str, anchors: list[str]
    ) -> dict[str, StoredState] | None:
        """The index's rows for ``anchors`` at ``tip``, after moving the rows there if needed."""
        rows = ledgerstate.read(db, tip, anchors)
        if rows is None:
            self.move_stored(db, tip, EAGER_REFOLD)
            rows = ledgerstate.read(db, tip, anchors)
        return rows

    def refresh_stored(self, db: IndexDB, block_ids: Iterable[str] = ()) -> None:
        """Bring the rows up to the current notes commit now (dream's batch pass).

        If the rows were never keyed to a commit, only ``block_ids`` are folded: folding every
        note of a large memory at once would cost minutes (11.5 s at 10k here).
        """
        self._refresh()
        if self.fixed_tip is None and self._key is not None:
            touched = {anchor_for_block(b) for b in block_ids}
            self.move_stored(db, self._key[0] or "", None, touched)

    def move_stored(
        self, db: IndexDB, tip: str, limit: int | None = None, touched: set[str] | None = None
    ) -> None:
        """Key the index's rows to notes commit ``tip``: refold what changed since their commit.

        Up to ``limit`` changed notes are refolded now (all with no limit); beyond it they are
        dropped, to be folded when a query meets them. Rows never keyed, or keyed to a commit
        this repository no longer has, are all dropped, and only ``touched`` anchors refolded.
        """
        before = ledgerstate.stored_tip(db)
        if before == tip:
            return
        changed: set[str] | None = None
        if before is not None:
            try:
                changed = self.store.ledger.changed_anchors(before or None, tip or None)
            except (KeyError, ValueError, pygit2.GitError):
                changed = None
        if changed is not None and limit is not None and len(changed) > limit:
            ledgerstate.advance(db, before, tip, {}, changed)
            return
        targets = (touched or set()) if changed is None else changed
        targets.discard(clock_anchor())
        notes = self.store.ledger.read_many(targets, tip) if tip and targets else {}
        refolded = {a: retrieval_numbers(fold((notes.get(a) or "").splitlines())) for a in targets}
        ledgerstate.advance(db, before, tip, refolded, clear=changed is None)


REVISES = "revises"
"""Ledger edge on the newer block's note, written by dream: a candidate revision of ``target``."""
REVISED_BY = "revised_by"
"""The same edge seen from the older block's note."""
REVISION_EDGES = frozenset((REVISES, REVISED_BY))
"""Not graph edges: they say which of two look-alikes is newer, and count toward no cap."""
NOT_CENTRALITY = frozenset(("similar", *REVISION_EDGES))


def centrality_degree(edges: Mapping[tuple[str, str], float]) -> float:
    """Weighted degree for the centrality signal: edges that carry evidence, not look-alikes.

    Dream's ``similar`` edges only say two texts are close, which the similarity signal already
    measures; counted as centrality they lift generic, much-repeated text. On the LoCoMo dev file
    they cost R@10 0.626 → 0.609. Declared relations, co-retrieval and outcome edges count.
    Dream's ``revises`` edges (candidate revisions) say which of two look-alikes is newer, not
    that either is central, so they do not count either.
    """
    return sum(w for (_, relation), w in edges.items() if relation not in NOT_CENTRALITY)


def revision_edges(ledger: LedgerView, ids: Iterable[str]) -> list[tuple[str, str]]:
    """Candidate revisions among ``ids`` as ``(newer, older)``: live ``revises`` ledger edges.

    The edge is written on the newer block's note (docs/ledger.md, "Candidate revisions"), so a
    pair is found when its newer block is in ``ids``; the older one may be anywhere. An ``undo``
    of the dream that wrote it, or an ``edge_remove``, takes it away.
    """
    return [
        (block_id, older)
        for block_id, folded in ledger.folded_many(ids).items()
        for older in _revision_targets(folded, REVISES)
    ]


def all_learned_edges(folded: Folded) -> dict[tuple[str, str], float]:
    """Every live learned edge of a block, uncapped: what dream counts against the degree cap."""
    edges = {k: w for k, w in folded.edges.items() if w > 0 and k[1] not in REVISION_EDGES}
    for other, sessions in folded.cooccur_sessions.items():
        if len(sessions) >= CO_RETRIEVAL_SESSIONS:
            key = (other, "co_retrieval")
            edges[key] = max(edges.get(key, 0.0), CO_RETRIEVAL_WEIGHT)
    return edges


def learned_edges(folded: Folded) -> dict[tuple[str, str], float]:
    """Ledger edges plus co-retrieval pairs that have graduated, capped at the strongest few."""
    strongest = sorted(all_learned_edges(folded).items(), key=lambda kv: (-kv[1], kv[0]))
    return dict(strongest[:DEGREE_CAP])


def retrieval_numbers(folded: Folded) -> StoredState:
    """What retrieval ranks by, from one block's fold (``ledgerstate`` keeps these)."""
    return StoredState(
        alpha=folded.alpha,
        beta=folded.beta,
        reinforcements=folded.reinforcements,
        last_use=folded.last_use,
        penalties=folded.penalties,
        degree=centrality_degree(learned_edges(folded)),
        revises=_revision_targets(folded, REVISES),
        revised_by=_revision_targets(folded, REVISED_BY),
    )


def _revision_targets(folded: Folded, relation: str) -> tuple[str, ...]:
    return tuple(sorted(t for (t, r), w in folded.edges.items() if r == relation and w > 0))


CREATED_RESOLUTION = 1_000_000
"""A ``created`` stamp's precision in microseconds: an outcome stamped within the second a
correction was captured in may have come before it, and is counted as said before the claim."""


def declared_claims(db: IndexDB, ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per block among ``ids`` that a declared ``supersedes`` names: each newer block with the
    time its claim starts, the end of the second its ``created`` stamp names, in microseconds.

    The relation lives in the newer block's file and carries no time of its own; the newer
    block's birth is when it claimed the world had changed (exact for ``remember --supersedes``).
    A ``created`` stamp without a time zone gives no time, and the claim falls back to
    ``truth.since_revised``'s rule for a claim without one.
    """
    wanted = set(ids)
    pairs = [(n, o) for n, o in queries.supersedes_pairs(db, ids) if o in wanted]
    born = queries.get_blocks(db, sorted({n for n, _ in pairs}))
    out: dict[str, dict[str, int]] = {}
    for newer, older in pairs:
        micros = ts_micros(born[newer].created) if newer in born else None
        if micros is not None:  # the stamp is cut to the second: that second is before it
            out.setdefault(older, {})[newer] = micros + CREATED_RESOLUTION
    return out


def claims_since(
    folded: Folded, claims: Mapping[str, int]
) -> tuple[tuple[str, tuple[float, float]], ...]:
    """The outcomes since each claim to correct a block: learned ``revises`` edges from the
    ledger, declared ``supersedes`` from ``claims`` (a learned edge's own time wins)."""
    since = dict(folded.since_revision)
    for newer, micros in claims.items():
        since.setdefault(newer, outcomes_since(folded, micros))
    return tuple(sorted(since.items()))


def declared_degree(db: IndexDB, ids: Iterable[str]) -> dict[str, int]:
    return {i: len(n) for i, n in queries.neighbours(db, ids).items()}
